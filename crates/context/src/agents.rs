//! Custom sub-agents, Claude Code's way: Markdown files under `.claude/agents/` (project) and
//! `~/.claude/agents/` (user), and the `--agents` flag's JSON. A file's front matter names the
//! agent and says what it may do (`name`, `description`, `tools`, `disallowedTools`, `model`,
//! `maxTurns`, `permissionMode`, `isolation`, `skills`); its body is the agent's system prompt.
//!
//! A file that cannot make an agent (no `name`, no `description`, front matter that never
//! ends) is a problem naming the file and the field, and the other agents load; a field with a
//! bad value (`maxTurns: many`) is a problem too, and the agent loads without it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::project_file::read_text;

/// The largest agent file read: far above any real system prompt.
pub const MAX_AGENT_BYTES: u64 = 1024 * 1024;

/// Where a custom agent was defined. A later origin in this order wins over an earlier one
/// with the same name: a user's agent, then the project's, then the command line's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AgentOrigin {
    /// The user's `~/.claude/agents/`.
    User,
    /// The project's `.claude/agents/`.
    Project,
    /// The `--agents` flag.
    Flag,
}

impl AgentOrigin {
    /// How `/agents` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentOrigin::User => "user",
            AgentOrigin::Project => "project",
            AgentOrigin::Flag => "--agents",
        }
    }
}

/// One custom agent, as its file or the flag defined it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    /// The name the `Agent` tool's `subagent_type` picks it by.
    pub name: String,
    /// When to use it: shown to the model in the `Agent` tool's description.
    pub description: String,
    /// Where it was defined.
    pub origin: AgentOrigin,
    /// Its file; `None` for one from `--agents`.
    pub path: Option<PathBuf>,
    /// The tools it may use; `None` for every tool of the session (never `Agent`).
    pub tools: Option<Vec<String>>,
    /// Tools taken away from the ones it would have.
    pub disallowed_tools: Vec<String>,
    /// `sonnet`, `opus`, `haiku`, `inherit` or a model id; `None` inherits.
    pub model: Option<String>,
    /// Model requests allowed per run; `None` for the session's limit.
    pub max_turns: Option<u32>,
    /// The permission mode it asks for (`plan`, `default`, …), as written.
    pub permission_mode: Option<String>,
    /// `isolation: worktree`: it runs in a git worktree of its own.
    pub worktree: bool,
    /// The skills whose instructions it starts with, by name.
    pub skills: Vec<String>,
    /// `mcpServers`: the configured MCP servers whose tools it gets, by name; `None` for
    /// every server of the session.
    pub mcp_servers: Option<Vec<String>>,
    /// Its system prompt.
    pub prompt: String,
}

/// What kept an agent (or one of its fields) from loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentProblem {
    /// The file, or `--agents`.
    pub source: String,
    /// The field at fault (`name`, `maxTurns`); `None` for the file as a whole.
    pub field: Option<String>,
    /// What is wrong, and what became of the agent.
    pub message: String,
}

impl fmt::Display for AgentProblem {
    /// `/p/.claude/agents/x.md: maxTurns: expected a whole number, found "many"; ignored`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{}: {field}: {}", self.source, self.message),
            None => write!(f, "{}: {}", self.source, self.message),
        }
    }
}

/// Custom agents by name, and the problems met loading them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentSet {
    /// By name; see [`AgentOrigin`] for which wins.
    pub agents: Vec<AgentDefinition>,
    /// Warnings for the user, never a reason to stop.
    pub problems: Vec<AgentProblem>,
}

impl AgentSet {
    /// `self` with `other`'s agents added, each replacing one of the same name.
    pub fn merged(mut self, other: AgentSet) -> AgentSet {
        for agent in other.agents {
            self.agents.retain(|kept| kept.name != agent.name);
            self.agents.push(agent);
        }
        self.agents.sort_by(|a, b| a.name.cmp(&b.name));
        self.problems.extend(other.problems);
        self
    }
}

/// The agents of `~/.claude/agents/` and then the project's `.claude/agents/` (a project agent
/// wins over a user agent with the same name).
pub fn load_agents(project: &Path, home: Option<&Path>) -> AgentSet {
    let user = home
        .map(|home| load_dir(&home.join(".claude/agents"), AgentOrigin::User))
        .unwrap_or_default();
    user.merged(load_dir(
        &project.join(".claude/agents"),
        AgentOrigin::Project,
    ))
}

/// The agents of one directory's `*.md` files, in name order.
fn load_dir(dir: &Path, origin: AgentOrigin) -> AgentSet {
    let mut set = AgentSet::default();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md") && !path.is_dir())
        .collect();
    paths.sort();
    for path in paths {
        let source = path.display().to_string();
        let text = match read_text(&path, MAX_AGENT_BYTES) {
            Ok(Some(text)) => text,
            Ok(None) => continue,
            Err(problem) => {
                set.problems.push(AgentProblem {
                    source,
                    field: None,
                    message: problem.reason,
                });
                continue;
            }
        };
        let mut problems = Vec::new();
        if let Some(agent) = parse_agent_file(&text, &source, origin, &mut problems) {
            set = set.merged(AgentSet {
                agents: vec![AgentDefinition {
                    path: Some(path.clone()),
                    ..agent
                }],
                problems: Vec::new(),
            });
        }
        set.problems.extend(problems);
    }
    set
}

/// One agent file's definition; `None` (with a problem) when it defines none.
fn parse_agent_file(
    text: &str,
    source: &str,
    origin: AgentOrigin,
    problems: &mut Vec<AgentProblem>,
) -> Option<AgentDefinition> {
    let problem = |field: Option<&str>, message: String| AgentProblem {
        source: source.to_string(),
        field: field.map(String::from),
        message,
    };
    let Some((front, body)) = front_matter(text) else {
        problems.push(problem(
            Some("front matter"),
            "expected front matter between `---` lines naming the agent; the file is skipped"
                .into(),
        ));
        return None;
    };
    let mut fields = serde_json::Map::new();
    for (key, value) in front {
        fields.insert(key, value);
    }
    fields.insert("prompt".into(), Value::String(body.trim().to_string()));
    let name = fields
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let before = problems.len();
    let agent = definition(name, &fields, origin, true, problems);
    for found in &mut problems[before..] {
        found.source = source.to_string();
    }
    agent
}

/// The agents of `--agents`' JSON: an object of agents by name, each with `description` and
/// `prompt`, and optionally `tools`, `disallowedTools`, `model`, `maxTurns`,
/// `permissionMode`. Text that is not such an object is an error naming what is wrong.
pub fn parse_agents_json(text: &str) -> Result<AgentSet, String> {
    let value: Value = serde_json::from_str(text)
        .map_err(|err| format!("--agents: expected a JSON object of agents by name: {err}"))?;
    let Value::Object(agents) = value else {
        return Err(
            "--agents: expected a JSON object of agents by name, such as \
             {\"reviewer\": {\"description\": \"…\", \"prompt\": \"…\"}}"
                .into(),
        );
    };
    let mut set = AgentSet::default();
    for (name, fields) in agents {
        let Value::Object(fields) = fields else {
            set.problems.push(AgentProblem {
                source: "--agents".into(),
                field: Some(name),
                message: "expected an object with `description` and `prompt`; skipped".into(),
            });
            continue;
        };
        let mut problems = Vec::new();
        if let Some(agent) = definition(name, &fields, AgentOrigin::Flag, false, &mut problems) {
            set = set.merged(AgentSet {
                agents: vec![agent],
                problems: Vec::new(),
            });
        }
        set.problems.extend(problems);
    }
    Ok(set)
}

/// An agent from its fields (front matter as strings or lists, or the flag's JSON).
/// `lenient_lists` reads `Read, Grep` as a list, as front matter writes one.
fn definition(
    name: String,
    fields: &serde_json::Map<String, Value>,
    origin: AgentOrigin,
    lenient_lists: bool,
    problems: &mut Vec<AgentProblem>,
) -> Option<AgentDefinition> {
    let mut problem = |field: &str, message: String| {
        problems.push(AgentProblem {
            source: "--agents".into(),
            field: Some(field.to_string()),
            message,
        })
    };
    if name.trim().is_empty() {
        problem("name", "missing: every agent needs a name; skipped".into());
        return None;
    }
    let text = |field: &str| fields.get(field).and_then(Value::as_str).map(str::trim);
    let Some(description) = text("description").filter(|text| !text.is_empty()) else {
        problem(
            "description",
            format!("missing: agent {name:?} needs a description saying when to use it; skipped"),
        );
        return None;
    };
    let mut list = |field: &str| -> Option<Vec<String>> {
        match fields.get(field)? {
            Value::Array(items) => Some(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|item| item.trim().to_string())
                    .filter(|item| !item.is_empty())
                    .collect(),
            ),
            Value::String(items) if lenient_lists => Some(
                items
                    .split(',')
                    .map(|item| item.trim().to_string())
                    .filter(|item| !item.is_empty())
                    .collect(),
            ),
            other => {
                problem(
                    field,
                    format!("expected a list of names, found {other}; ignored"),
                );
                None
            }
        }
    };
    let tools = list("tools");
    let disallowed_tools = list("disallowedTools").unwrap_or_default();
    let skills = list("skills").unwrap_or_default();
    // Inline server definitions would start servers nobody approved: names only.
    let inline_servers = match fields.get("mcpServers") {
        Some(Value::Object(_)) => true,
        Some(Value::Array(items)) => items.iter().any(|item| !item.is_string()),
        _ => false,
    };
    let mcp_servers = if matches!(fields.get("mcpServers"), Some(Value::Object(_))) {
        None
    } else {
        list("mcpServers")
    };
    if inline_servers {
        problem(
            "mcpServers",
            "inline server definitions are not supported (they would start a server no one \
             approved); name servers configured in .mcp.json or the settings instead; ignored"
                .into(),
        );
    }
    let max_turns = match fields.get("maxTurns") {
        None => None,
        Some(Value::Number(number)) => number.as_u64().and_then(|n| u32::try_from(n).ok()),
        Some(Value::String(text)) => text.trim().parse::<u32>().ok(),
        Some(_) => None,
    };
    if let (Some(value), None | Some(0)) = (fields.get("maxTurns"), max_turns) {
        problem(
            "maxTurns",
            format!("expected a positive whole number, found {value}; ignored"),
        );
    }
    let max_turns = max_turns.filter(|turns| *turns > 0);
    const MODES: [&str; 6] = [
        "default",
        "acceptEdits",
        "plan",
        "bypassPermissions",
        "dontAsk",
        "auto",
    ];
    let permission_mode = match text("permissionMode") {
        Some(mode) if MODES.contains(&mode) => Some(mode.to_string()),
        Some(mode) => {
            problem(
                "permissionMode",
                format!(
                    "unknown mode {mode:?} (expected one of {}); ignored",
                    MODES.join(", ")
                ),
            );
            None
        }
        None => None,
    };
    let worktree = match text("isolation") {
        Some("worktree") => true,
        Some(other) => {
            problem(
                "isolation",
                format!("unknown isolation {other:?} (expected worktree); ignored"),
            );
            false
        }
        None => false,
    };
    Some(AgentDefinition {
        name: name.trim().to_string(),
        description: description.to_string(),
        origin,
        path: None,
        tools,
        disallowed_tools,
        model: text("model")
            .filter(|model| !model.is_empty())
            .map(String::from),
        max_turns,
        permission_mode,
        worktree,
        skills,
        mcp_servers,
        prompt: text("prompt").unwrap_or_default().to_string(),
    })
}

/// The front matter's fields and the body, `None` when the file has no closed front matter.
/// Values are strings (quotes dropped), or lists written `[a, b]` or as `- item` lines.
pub(crate) fn front_matter(text: &str) -> Option<(BTreeMap<String, Value>, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let end = rest.find("\n---")?;
    let mut fields: BTreeMap<String, Value> = BTreeMap::new();
    let mut list_key: Option<String> = None;
    for line in rest[..end].lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let (Some(key), Some(item)) = (&list_key, trimmed.strip_prefix("- ")) {
            if let Some(Value::Array(items)) = fields.get_mut(key) {
                items.push(Value::String(unquote(item).to_string()));
            }
            continue;
        }
        list_key = None;
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().to_string();
        let value = value.trim();
        let parsed = if value.is_empty() {
            list_key = Some(key.clone());
            Value::Array(Vec::new())
        } else if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            Value::Array(
                inner
                    .split(',')
                    .map(|item| Value::String(unquote(item.trim()).to_string()))
                    .filter(|item| item.as_str().is_some_and(|item| !item.is_empty()))
                    .collect(),
            )
        } else {
            Value::String(unquote(value).to_string())
        };
        fields.insert(key, parsed);
    }
    // A key with nothing after it and no list below it said nothing.
    fields.retain(|_, value| !matches!(value, Value::Array(items) if items.is_empty()));
    let body = rest[end + 4..].trim_start_matches(['\r', '\n']);
    Some((fields, body))
}

fn unquote(value: &str) -> &str {
    value.trim().trim_matches('"').trim_matches('\'')
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn a_file_defines_an_agent_and_a_project_agent_wins_over_a_users() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        write(
            &project.path().join(".claude/agents"),
            "reviewer.md",
            "---\nname: reviewer\ndescription: Reviews diffs.\ntools: Read, Grep\n\
             disallowedTools:\n  - Bash\nmodel: haiku\nmaxTurns: 4\npermissionMode: plan\n\
             isolation: worktree\n---\n\
             You review code.\n",
        );
        write(
            &home.path().join(".claude/agents"),
            "reviewer.md",
            "---\nname: reviewer\ndescription: The user's.\n---\nOther.\n",
        );
        write(
            &home.path().join(".claude/agents"),
            "scribe.md",
            "---\nname: scribe\ndescription: \"Writes notes.\"\ntools: [Read, Write]\n---\nNotes.",
        );
        let set = load_agents(project.path(), Some(home.path()));
        assert_eq!(set.problems, vec![]);
        assert_eq!(
            set.agents,
            vec![
                AgentDefinition {
                    name: "reviewer".into(),
                    description: "Reviews diffs.".into(),
                    origin: AgentOrigin::Project,
                    path: Some(project.path().join(".claude/agents/reviewer.md")),
                    tools: Some(vec!["Read".into(), "Grep".into()]),
                    disallowed_tools: vec!["Bash".into()],
                    model: Some("haiku".into()),
                    max_turns: Some(4),
                    permission_mode: Some("plan".into()),
                    worktree: true,
                    skills: Vec::new(),
                    mcp_servers: None,
                    prompt: "You review code.".into(),
                },
                AgentDefinition {
                    name: "scribe".into(),
                    description: "Writes notes.".into(),
                    origin: AgentOrigin::User,
                    path: Some(home.path().join(".claude/agents/scribe.md")),
                    tools: Some(vec!["Read".into(), "Write".into()]),
                    disallowed_tools: vec![],
                    model: None,
                    max_turns: None,
                    permission_mode: None,
                    worktree: false,
                    skills: Vec::new(),
                    mcp_servers: None,
                    prompt: "Notes.".into(),
                },
            ]
        );
    }

    #[test]
    fn a_malformed_file_is_a_problem_naming_file_and_field_and_the_others_load() {
        let project = tempfile::tempdir().unwrap();
        let dir = project.path().join(".claude/agents");
        write(
            &dir,
            "a-nameless.md",
            "---\ndescription: No name.\n---\nBody",
        );
        write(
            &dir,
            "b-open.md",
            "---\nname: open\ndescription: never closed\n",
        );
        write(
            &dir,
            "c-counting.md",
            "---\nname: counter\ndescription: Counts.\nmaxTurns: many\npermissionMode: yolo\n---\nCount.",
        );
        let set = load_agents(project.path(), None);
        assert_eq!(
            set.agents
                .iter()
                .map(|a| (a.name.as_str(), a.max_turns))
                .collect::<Vec<_>>(),
            vec![("counter", None)]
        );
        let lines: Vec<String> = set.problems.iter().map(ToString::to_string).collect();
        let at = |file: &str| dir.join(file).display().to_string();
        assert_eq!(
            lines,
            vec![
                format!(
                    "{}: name: missing: every agent needs a name; skipped",
                    at("a-nameless.md")
                ),
                format!(
                    "{}: front matter: expected front matter between `---` lines naming the \
                     agent; the file is skipped",
                    at("b-open.md")
                ),
                format!(
                    "{}: maxTurns: expected a positive whole number, found \"many\"; ignored",
                    at("c-counting.md")
                ),
                format!(
                    "{}: permissionMode: unknown mode \"yolo\" (expected one of default, \
                     acceptEdits, plan, bypassPermissions, dontAsk, auto); ignored",
                    at("c-counting.md")
                ),
            ]
        );
    }

    #[test]
    fn mcp_servers_are_names_and_an_inline_definition_is_a_problem() {
        let set = parse_agents_json(
            r#"{"linker": {"description": "Links.", "prompt": "You link.",
                "mcpServers": ["github", {"evil": {"command": "rm"}}], "isolation": "vm"}}"#,
        )
        .unwrap();
        assert_eq!(set.agents[0].mcp_servers, Some(vec!["github".to_string()]));
        assert!(!set.agents[0].worktree);
        let lines: Vec<String> = set.problems.iter().map(ToString::to_string).collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[1].contains("isolation: unknown isolation \"vm\" (expected worktree); ignored"),
            "{lines:?}"
        );
        assert!(
            lines[0].contains("mcpServers: inline server definitions are not supported"),
            "{lines:?}"
        );
    }

    #[test]
    fn the_flags_json_defines_agents_and_bad_json_is_an_error() {
        let set = parse_agents_json(
            r#"{"checker": {"description": "Checks.", "prompt": "You check.", "tools": ["Read"], "maxTurns": 2},
                "broken": "no"}"#,
        )
        .unwrap();
        assert_eq!(
            set.agents,
            vec![AgentDefinition {
                name: "checker".into(),
                description: "Checks.".into(),
                origin: AgentOrigin::Flag,
                path: None,
                tools: Some(vec!["Read".into()]),
                disallowed_tools: vec![],
                model: None,
                max_turns: Some(2),
                permission_mode: None,
                worktree: false,
                skills: Vec::new(),
                mcp_servers: None,
                prompt: "You check.".into(),
            }]
        );
        assert_eq!(
            set.problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            vec!["--agents: broken: expected an object with `description` and `prompt`; skipped"]
        );
        assert!(
            parse_agents_json("[1]")
                .unwrap_err()
                .contains("JSON object of agents")
        );
        assert!(parse_agents_json("{").unwrap_err().starts_with("--agents:"));
    }
}
