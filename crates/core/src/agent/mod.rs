//! Sub-agents: the `Agent` tool (`Task` is an alias), the built-in roles and custom agents.
//!
//! A sub-agent is not a new system: it is a nested engine ([`Spawner::spawn`]) with its own
//! system prompt, its role's tools and an empty conversation, judged by the parent's
//! governance and asking through the parent's broker. Only its final answer goes back to the
//! parent, as the `Agent` call's result. The session host offers the `Agent` tool to the main
//! engine only (see [`SessionParts::agents`]), so a sub-agent never starts another.
//!
//! [`Spawner::spawn`]: crate::Spawner::spawn
//! [`SessionParts::agents`]: crate::SessionParts::agents

mod background;
mod confined;
mod filter;
mod guide;
mod roles;
mod tool;
mod worktree;

use std::path::{Path, PathBuf};

use cairn_context::agents::{AgentDefinition, AgentOrigin, load_agents, parse_agents_json};

pub use background::{Background, TaskNotifications};
pub use filter::RoleTools;
pub use roles::READ_ONLY_TOOLS;
pub use tool::{AGENT_TOOL, AgentTool};

/// The default number of sub-agents that run at once (`CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS`
/// changes it).
pub const DEFAULT_MAX_CONCURRENT: usize = 10;

/// The tools a sub-agent is offered, from the session's (never `Agent`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// Every tool of the session.
    All,
    /// These tools only (a rule's pattern, `Bash(git:*)`, names its tool).
    Only(Vec<String>),
}

/// The model a sub-agent runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelChoice {
    /// The parent's model.
    Inherit,
    /// The session's small, fast model.
    Small,
    /// This model or alias (`sonnet`, `opus`, `haiku`, an id).
    Named(String),
}

impl ModelChoice {
    /// A custom agent's `model`: `inherit` or nothing inherits, anything else names one.
    fn from_field(model: Option<&str>) -> ModelChoice {
        match model.map(str::trim) {
            None | Some("" | "inherit") => ModelChoice::Inherit,
            Some(model) => ModelChoice::Named(model.to_string()),
        }
    }
}

/// One kind of sub-agent the `Agent` tool can start: a built-in role or a custom agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentProfile {
    /// The `subagent_type` that picks it.
    pub name: String,
    /// When to use it, for the model.
    pub description: String,
    /// Its role's system prompt (a custom agent's body).
    pub system_prompt: String,
    /// The tools it is offered.
    pub tools: ToolChoice,
    /// Tools taken away from those.
    pub disallowed_tools: Vec<String>,
    /// The model it runs on, unless the call names one.
    pub model: ModelChoice,
    /// Model requests allowed per run; `None` for the session's limit.
    pub max_turns: Option<u32>,
    /// The permission mode a custom agent asks for, as written: it narrows the parent's
    /// mode for the agent (`plan`, `default`) and never widens it.
    pub permission_mode: Option<String>,
    /// `isolation: worktree`: it runs in a git worktree of its own.
    pub worktree: bool,
    /// The skills a custom agent starts with, by name.
    pub skills: Vec<String>,
    /// The MCP servers whose tools a custom agent gets (`mcpServers`); `None` for all.
    pub mcp_servers: Option<Vec<String>>,
    /// Those skills' instructions, found when the catalog was loaded: they go with the
    /// agent's prompt, as Claude Code preloads them.
    pub preloaded_skills: Vec<String>,
    /// Where a custom agent was defined; `None` for a built-in role.
    pub origin: Option<AgentOrigin>,
    /// A custom agent's file.
    pub path: Option<PathBuf>,
}

impl AgentProfile {
    fn built_in(
        name: &str,
        description: &str,
        system_prompt: &str,
        tools: ToolChoice,
        model: ModelChoice,
    ) -> AgentProfile {
        AgentProfile {
            name: name.to_string(),
            description: description.to_string(),
            system_prompt: system_prompt.to_string(),
            tools,
            disallowed_tools: Vec::new(),
            model,
            max_turns: None,
            permission_mode: None,
            worktree: false,
            skills: Vec::new(),
            mcp_servers: None,
            preloaded_skills: Vec::new(),
            origin: None,
            path: None,
        }
    }

    /// The profile a custom agent's definition describes.
    pub fn custom(definition: AgentDefinition) -> AgentProfile {
        AgentProfile {
            model: ModelChoice::from_field(definition.model.as_deref()),
            name: definition.name,
            description: definition.description,
            system_prompt: definition.prompt,
            tools: definition.tools.map_or(ToolChoice::All, ToolChoice::Only),
            disallowed_tools: definition.disallowed_tools,
            max_turns: definition.max_turns,
            permission_mode: definition.permission_mode,
            worktree: definition.worktree,
            skills: definition.skills,
            mcp_servers: definition.mcp_servers,
            preloaded_skills: Vec::new(),
            origin: Some(definition.origin),
            path: definition.path,
        }
    }
}

/// The sub-agents a session can start, and how: the roles and custom agents, the small
/// model, how many run at once.
#[derive(Debug, Clone)]
pub struct AgentCatalog {
    profiles: Vec<AgentProfile>,
    small_model: Option<String>,
    max_concurrent: usize,
    spill_dir: PathBuf,
    environment: String,
    /// The user's home, where `statusline-setup` finds the settings it may edit.
    home: Option<PathBuf>,
    /// Where isolated agents' worktrees go, and the project they are made from.
    worktrees: Option<(PathBuf, PathBuf)>,
}

impl Default for AgentCatalog {
    fn default() -> Self {
        AgentCatalog::built_in()
    }
}

impl AgentCatalog {
    /// The built-in roles (`general-purpose`, `Explore`, `Plan`, `Verification`,
    /// `statusline-setup`, `cairn-guide`), at most
    /// [`DEFAULT_MAX_CONCURRENT`] at once, Explore on `haiku`.
    pub fn built_in() -> AgentCatalog {
        AgentCatalog {
            profiles: roles::built_in(),
            small_model: None,
            max_concurrent: DEFAULT_MAX_CONCURRENT,
            spill_dir: std::env::temp_dir().join("cairn-agents"),
            environment: String::new(),
            home: None,
            worktrees: None,
        }
    }

    /// The built-in roles and the custom agents of `~/.claude/agents/`, the project's
    /// `.claude/agents/` and `flag` (`--agents`' JSON), each later one winning over an earlier
    /// one of the same name; with a warning for each file or field that could not be read.
    /// JSON in `flag` that is not an object of agents is an error naming what is wrong.
    pub fn load(
        project: &Path,
        home: Option<&Path>,
        flag: Option<&str>,
    ) -> Result<(AgentCatalog, Vec<String>), String> {
        let mut set = load_agents(project, home);
        if let Some(flag) = flag {
            set = set.merged(parse_agents_json(flag)?);
        }
        let mut warnings: Vec<String> = set
            .problems
            .iter()
            .map(|problem| format!("agent definition {problem}"))
            .collect();
        let mut catalog = AgentCatalog::built_in().with_custom(set.agents);
        catalog.home = home.map(Path::to_path_buf);
        warnings.extend(catalog.preload_skills(project, home));
        Ok((catalog, warnings))
    }

    /// Finds the instructions of the skills each custom agent names (the project's and the
    /// user's skills); a name no skill has is a warning naming the agent and the field.
    fn preload_skills(&mut self, project: &Path, home: Option<&Path>) -> Vec<String> {
        if self
            .profiles
            .iter()
            .all(|profile| profile.skills.is_empty())
        {
            return Vec::new();
        }
        let skills = cairn_context::skills::load_skills(project, home);
        let mut warnings = Vec::new();
        for profile in &mut self.profiles {
            for name in &profile.skills {
                match skills.find(name) {
                    Some(skill) => profile.preloaded_skills.push(format!(
                        "The skill {:?}, preloaded for you:\n\n{}",
                        skill.name,
                        skill.expand("")
                    )),
                    None => {
                        let place = profile.path.as_ref().map_or_else(
                            || "--agents".to_string(),
                            |path| path.display().to_string(),
                        );
                        warnings.push(format!(
                            "agent definition {place}: skills: no skill named {name:?}; skipped"
                        ));
                    }
                }
            }
        }
        warnings
    }

    /// The catalog with `agents` added; a custom agent replaces a role of the same name.
    pub fn with_custom(mut self, agents: Vec<AgentDefinition>) -> AgentCatalog {
        for agent in agents {
            self.profiles
                .retain(|profile| normalized(&profile.name) != normalized(&agent.name));
            self.profiles.push(AgentProfile::custom(agent));
        }
        self
    }

    /// The small model the `Explore` role runs on (the one the session computed for side
    /// requests); `None` keeps `haiku`.
    pub fn with_small_model(mut self, model: Option<String>) -> AgentCatalog {
        self.small_model = model;
        self
    }

    /// How many sub-agents run at once; at least one.
    pub fn with_max_concurrent(mut self, max: usize) -> AgentCatalog {
        self.max_concurrent = max.max(1);
        self
    }

    /// Where sub-agents' large tool results are saved (one directory each under it).
    pub fn with_spill_dir(mut self, dir: PathBuf) -> AgentCatalog {
        self.spill_dir = dir;
        self
    }

    /// What every sub-agent's system prompt says of where it runs (the working directory,
    /// the platform), after its role's prompt.
    pub fn with_environment(mut self, environment: String) -> AgentCatalog {
        self.environment = environment;
        self
    }

    /// Lets agents run in git worktrees of their own (`isolation: worktree`), made from
    /// `project`'s repository under `root` (`~/.cairn/worktrees`); without it such an agent
    /// is an error result.
    pub fn with_worktrees(mut self, root: PathBuf, project: PathBuf) -> AgentCatalog {
        self.worktrees = Some((root, project));
        self
    }

    /// Every profile, roles first.
    pub fn profiles(&self) -> &[AgentProfile] {
        &self.profiles
    }

    /// How many sub-agents run at once.
    pub fn max_concurrent(&self) -> usize {
        self.max_concurrent
    }

    /// The model id the `Small` choice means.
    pub fn small_model(&self) -> String {
        cairn_llm::models::resolve_model(self.small_model.as_deref().unwrap_or("haiku"))
    }

    /// The profile `name` picks, matched loosely since the model writes it: case, `-`, `_`
    /// and spaces do not count, nor an `agent` suffix or an `-er` ending (`explore`,
    /// `Explorer`, `EXPLORE`, `general_purpose`, `planner`).
    pub fn find(&self, name: &str) -> Option<&AgentProfile> {
        let wanted = normalized(name);
        if let Some(exact) = self
            .profiles
            .iter()
            .find(|profile| normalized(&profile.name) == wanted)
        {
            return Some(exact);
        }
        let wanted_stem = stem(&wanted);
        let mut loose = self
            .profiles
            .iter()
            .filter(|profile| stem(&normalized(&profile.name)) == wanted_stem);
        match (loose.next(), loose.next()) {
            (Some(only), None) => Some(only),
            _ => None,
        }
    }

    /// The names a call may give, for an error that lists them.
    pub fn names(&self) -> Vec<&str> {
        self.profiles
            .iter()
            .map(|profile| profile.name.as_str())
            .collect()
    }
}

/// Lower case, letters and digits only, an `agent` suffix dropped.
fn normalized(name: &str) -> String {
    let spelled: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    for suffix in ["subagent", "agent"] {
        if let Some(stem) = spelled.strip_suffix(suffix)
            && !stem.is_empty()
        {
            return stem.to_string();
        }
    }
    spelled
}

/// A normalized name without an agent-noun ending: `explorer` and `explore` are `explor`,
/// `planner` and `plan` are `plan`.
fn stem(name: &str) -> &str {
    for ending in ["ner", "er", "r", "e"] {
        if let Some(stem) = name.strip_suffix(ending)
            && stem.len() >= 3
        {
            return stem;
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn role_names_match_loosely_and_an_unknown_one_matches_nothing() {
        let catalog = AgentCatalog::built_in();
        let found = |name: &str| catalog.find(name).map(|profile| profile.name.as_str());
        for name in [
            "explore",
            "Explorer",
            "EXPLORE",
            "explore-agent",
            "Explore Agent",
        ] {
            assert_eq!(found(name), Some("Explore"), "{name}");
        }
        for name in ["general_purpose", "General Purpose", "generalpurpose"] {
            assert_eq!(found(name), Some("general-purpose"), "{name}");
        }
        assert_eq!(found("planner"), Some("Plan"));
        assert_eq!(found("verifier"), None);
        assert_eq!(found("Verification"), Some("Verification"));
        assert_eq!(found("deploy"), None);
    }

    #[test]
    fn a_custom_agent_replaces_a_role_of_its_name() {
        let catalog = AgentCatalog::built_in().with_custom(vec![AgentDefinition {
            name: "explore".into(),
            description: "Mine.".into(),
            origin: AgentOrigin::Project,
            path: None,
            tools: None,
            disallowed_tools: vec!["Bash".into()],
            model: Some("inherit".into()),
            max_turns: None,
            permission_mode: None,
            worktree: false,
            skills: Vec::new(),
            mcp_servers: None,
            prompt: "Explore my way.".into(),
        }]);
        let explore = catalog.find("Explore").unwrap();
        assert_eq!(
            (&explore.description, &explore.tools, &explore.model),
            (
                &"Mine.".to_string(),
                &ToolChoice::All,
                &ModelChoice::Inherit
            )
        );
        assert_eq!(
            catalog.names(),
            vec![
                "general-purpose",
                "Plan",
                "Verification",
                "statusline-setup",
                "cairn-guide",
                "explore"
            ]
        );
    }
}
