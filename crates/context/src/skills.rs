//! Skills, Claude Code's way: a directory holding a `SKILL.md` under `.claude/skills/`
//! (project) or `~/.claude/skills/` (user). The file's front matter names the skill and says
//! when to use it (`name`, `description`, `when_to_use`), what it may do unasked
//! (`allowed-tools`) and how it is called (`argument-hint`, `model`,
//! `disable-model-invocation`); its body is what the model reads once the skill is used, with
//! the files beside it in the same directory.
//!
//! Only the names and descriptions go to the model up front (in the `Skill` tool's
//! description); the body arrives when the skill is used ([`Skill::expand`]). A file that
//! cannot make a skill (front matter that never ends, a name that is not a name) is a problem
//! naming the file and the field, and the other skills load; a field with a bad value is a
//! problem too, and the skill loads without it.
//!
//! ```
//! use cairn_context::skills::load_skills;
//!
//! let project = tempfile::tempdir()?;
//! let dir = project.path().join(".claude/skills/changelog");
//! std::fs::create_dir_all(&dir)?;
//! std::fs::write(
//!     dir.join("SKILL.md"),
//!     "---\nname: changelog\ndescription: Writes the changelog entry.\n---\nSummarize $ARGUMENTS.",
//! )?;
//! let set = load_skills(project.path(), None);
//! let skill = &set.skills[0];
//! assert_eq!(skill.description, "Writes the changelog entry.");
//! assert_eq!(
//!     skill.expand("the parser fix"),
//!     format!("Base directory for this skill: {}\n\nSummarize the parser fix.", dir.display())
//! );
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents::front_matter;
use crate::project_file::read_text;

/// The largest `SKILL.md` read: far above any real skill.
pub const MAX_SKILL_BYTES: u64 = 1024 * 1024;

/// How a skill's text opens when the model gets it (Claude Code's words), followed by the
/// skill's directory; also how a compaction recognises a skill that was loaded.
pub const SKILL_BASE_PREFIX: &str = "Base directory for this skill: ";

/// How the notes the `Skill` tool adds after a skill's text for its turn begin (what its
/// `allowed-tools` pre-approved); a compaction leaves them out, since they held for that turn.
pub const SKILL_NOTE_PREFIX: &str = "\n\n[allowed-tools";

/// The longest name a skill may have.
const MAX_NAME_CHARS: usize = 64;

/// Where a skill was defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SkillScope {
    /// The project's `.claude/skills/`.
    Project,
    /// The user's `~/.claude/skills/`: it wins over a project skill of the same name, as in
    /// Claude Code (the user's own word over a checkout's).
    User,
}

impl SkillScope {
    /// How `/skills` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillScope::Project => "project",
            SkillScope::User => "user",
        }
    }
}

/// Whether the model may use a skill on its own, or only the user by its slash command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invocation {
    /// Listed in the `Skill` tool and usable by the model.
    ModelAndUser,
    /// `disable-model-invocation: true`: only `/<name>` uses it.
    UserOnly,
}

/// One skill, as its `SKILL.md` defines it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// The front matter's `name`, else the directory's name.
    pub name: String,
    /// What it does and when to use it: the front matter's `description` (with
    /// `when_to_use` after it), else the body's first paragraph.
    pub description: String,
    /// Whose directory it was found in.
    pub scope: SkillScope,
    /// The directory holding `SKILL.md` and the files it refers to.
    pub dir: PathBuf,
    /// Permission rules that hold, unasked, from its use to the end of that turn; empty when
    /// not given.
    pub allowed_tools: Vec<String>,
    /// What follows the slash command's name (`<version>`).
    pub argument_hint: Option<String>,
    /// The model for the turn of its slash command; `None` keeps the session's.
    pub model: Option<String>,
    /// Whether the model may use it.
    pub invocation: Invocation,
    /// The body, after the front matter.
    pub body: String,
}

impl Skill {
    /// Its `SKILL.md`.
    pub fn path(&self) -> PathBuf {
        self.dir.join("SKILL.md")
    }

    /// What the model gets when the skill is used with `arguments`: its base directory, then
    /// the body with `$ARGUMENTS` (and `$1`…`$9`, each word) substituted and
    /// `${CLAUDE_SKILL_DIR}` replaced by the directory. Arguments given to a body that names
    /// none are added after it, so that they are not lost.
    ///
    /// Unlike a custom command's, a skill's `` !`command` `` lines are not run: the model can
    /// use a skill without the user, and a checkout's skill must not run commands the
    /// permission gate never saw.
    pub fn expand(&self, arguments: &str) -> String {
        let arguments = arguments.trim();
        let dir = self.dir.display().to_string();
        let words: Vec<&str> = arguments.split_whitespace().collect();
        let names_arguments = self.body.contains("$ARGUMENTS")
            || (1..=9).any(|index| self.body.contains(&format!("${index}")));
        let mut body = self
            .body
            .replace("${CLAUDE_SKILL_DIR}", &dir)
            .replace("$ARGUMENTS", arguments);
        for index in (1..=9).rev() {
            let value = words.get(index - 1).copied().unwrap_or("");
            body = body.replace(&format!("${index}"), value);
        }
        let mut text = format!("{SKILL_BASE_PREFIX}{dir}\n\n{}", body.trim_end());
        if !names_arguments && !arguments.is_empty() {
            text.push_str(&format!("\n\nARGUMENTS: {arguments}"));
        }
        text
    }
}

/// What kept a skill (or one of its fields) from loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillProblem {
    /// The `SKILL.md` at fault.
    pub path: PathBuf,
    /// The field at fault (`name`, `allowed-tools`); `None` for the file as a whole.
    pub field: Option<String>,
    /// What is wrong, and what became of the skill.
    pub message: String,
}

impl fmt::Display for SkillProblem {
    /// `/p/.claude/skills/x/SKILL.md: name: "Bad Name" is not a skill name …; skipped`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{}: {field}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

/// The skills of a project, and the problems met loading them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillSet {
    /// By name; a user's skill wins over a project's of the same name.
    pub skills: Vec<Skill>,
    /// Warnings for the user, never a reason to stop.
    pub problems: Vec<SkillProblem>,
}

impl SkillSet {
    /// The skill named `name`.
    pub fn find(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.name == name)
    }

    /// The skills the model may use on its own, in name order.
    pub fn model_invocable(&self) -> impl Iterator<Item = &Skill> {
        self.skills
            .iter()
            .filter(|skill| skill.invocation == Invocation::ModelAndUser)
    }
}

/// The skills of the project's `.claude/skills/` and the user's `~/.claude/skills/`, in name
/// order; a user's skill wins over a project's with the same name.
pub fn load_skills(project: &Path, home: Option<&Path>) -> SkillSet {
    let mut found: BTreeMap<String, Skill> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut roots = vec![(project.join(".claude/skills"), SkillScope::Project)];
    if let Some(home) = home {
        roots.push((home.join(".claude/skills"), SkillScope::User));
    }
    for (root, scope) in roots {
        // A home directory that is the project would list the same skills twice.
        if scope == SkillScope::User && same_dir(&root, &project.join(".claude/skills")) {
            continue;
        }
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            if let Some(skill) = load_one(&dir, scope, &mut problems) {
                found.insert(skill.name.clone(), skill);
            }
        }
    }
    SkillSet {
        skills: found.into_values().collect(),
        problems,
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The skill of `dir`'s `SKILL.md`; `None` when there is none or it defines none (with a
/// problem saying why).
fn load_one(dir: &Path, scope: SkillScope, problems: &mut Vec<SkillProblem>) -> Option<Skill> {
    let path = dir.join("SKILL.md");
    let mut problem = |field: Option<&str>, message: String| {
        problems.push(SkillProblem {
            path: path.clone(),
            field: field.map(String::from),
            message,
        })
    };
    let text = match read_text(&path, MAX_SKILL_BYTES) {
        Ok(Some(text)) => text,
        Ok(None) => return None,
        Err(unread) => {
            problem(None, format!("{}; skipped", unread.reason));
            return None;
        }
    };
    let opens_front_matter = text.starts_with("---\n") || text.starts_with("---\r\n");
    let (fields, body) = match front_matter(&text) {
        Some(parsed) => parsed,
        None if opens_front_matter => {
            problem(
                Some("front matter"),
                "it opens with `---` but no `---` line ends it; the skill is skipped".into(),
            );
            return None;
        }
        None => (BTreeMap::new(), text.as_str()),
    };
    let text_field = |key: &str| match fields.get(key) {
        Some(Value::String(text)) if !text.trim().is_empty() => Some(text.trim().to_string()),
        _ => None,
    };
    let dir_name = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = text_field("name").unwrap_or(dir_name);
    if !is_skill_name(&name) {
        problem(
            Some("name"),
            format!(
                "{name:?} is not a skill name (lowercase letters, digits and hyphens, at most \
                 {MAX_NAME_CHARS}); the skill is skipped"
            ),
        );
        return None;
    }
    for key in ["name", "description", "when_to_use", "when-to-use", "model"] {
        if let Some(value @ Value::Array(_)) = fields.get(key) {
            problem(
                Some(key),
                format!("expected text, found the list {value}; ignored"),
            );
        }
    }
    let body = body.trim().to_string();
    let when_to_use = text_field("when_to_use").or_else(|| text_field("when-to-use"));
    let description = match (text_field("description"), when_to_use) {
        (Some(description), Some(when)) => format!("{description} {when}"),
        (Some(description), None) => description,
        (None, Some(when)) => when,
        (None, None) => first_paragraph(&body),
    };
    if description.is_empty() {
        problem(
            Some("description"),
            format!(
                "missing, and the body is empty: skill {name:?} needs a description saying when \
                 to use it; skipped"
            ),
        );
        return None;
    }
    let allowed_tools = match fields.get("allowed-tools") {
        None => Vec::new(),
        Some(Value::String(list)) => split_tool_list(list),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .flat_map(split_tool_list)
            .collect(),
        Some(other) => {
            problem(
                Some("allowed-tools"),
                format!("expected a list of permission rules, found {other}; ignored"),
            );
            Vec::new()
        }
    };
    let invocation = match fields.get("disable-model-invocation") {
        None => Invocation::ModelAndUser,
        Some(Value::String(flag)) if flag == "true" => Invocation::UserOnly,
        Some(Value::String(flag)) if flag == "false" => Invocation::ModelAndUser,
        Some(other) => {
            problem(
                Some("disable-model-invocation"),
                format!("expected true or false, found {other}; ignored"),
            );
            Invocation::ModelAndUser
        }
    };
    Some(Skill {
        name,
        description,
        scope,
        dir: dir.to_path_buf(),
        allowed_tools,
        argument_hint: text_field("argument-hint"),
        model: text_field("model").filter(|model| model != "inherit"),
        invocation,
        body,
    })
}

/// Lowercase letters, digits and hyphens, as Claude Code names skills.
fn is_skill_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The body's first paragraph on one line, headings' `#` taken off.
fn first_paragraph(body: &str) -> String {
    body.split("\n\n")
        .map(|paragraph| {
            paragraph
                .lines()
                .map(|line| line.trim().trim_start_matches('#').trim())
                .filter(|line| !line.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .find(|paragraph| !paragraph.is_empty())
        .unwrap_or_default()
}

/// `Read, Grep Bash(git log:*)`: rules separated by commas or spaces outside parentheses, as
/// `--allowedTools` takes them.
fn split_tool_list(list: &str) -> Vec<String> {
    let mut rules = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in list.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' | ' ' if depth == 0 => {
                if !current.trim().is_empty() {
                    rules.push(current.trim().to_string());
                }
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        rules.push(current.trim().to_string());
    }
    rules
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn write(root: &Path, name: &str, text: &str) -> PathBuf {
        let dir = root.join(".claude/skills").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), text).unwrap();
        dir
    }

    #[test]
    fn skills_load_from_both_places_and_the_users_wins() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let changelog = write(
            project.path(),
            "changelog",
            "---\nname: changelog\ndescription: Writes the changelog entry.\n\
             allowed-tools: Bash(git log:*), Read\nargument-hint: <version>\nmodel: haiku\n\
             when_to_use: After a release.\n---\n# Changelog\n\nRun git log.\n",
        );
        write(
            project.path(),
            "review",
            "---\nname: review\ndescription: The project's.\n---\nProject body.",
        );
        let review = write(
            home.path(),
            "review",
            "---\ndescription: The user's.\ndisable-model-invocation: true\n\
             allowed-tools:\n  - Grep\n  - Bash(cargo test:*)\n---\nUser body.",
        );
        let set = load_skills(project.path(), Some(home.path()));
        assert_eq!(set.problems, vec![]);
        assert_eq!(
            set.skills,
            vec![
                Skill {
                    name: "changelog".into(),
                    description: "Writes the changelog entry. After a release.".into(),
                    scope: SkillScope::Project,
                    dir: changelog,
                    allowed_tools: vec!["Bash(git log:*)".into(), "Read".into()],
                    argument_hint: Some("<version>".into()),
                    model: Some("haiku".into()),
                    invocation: Invocation::ModelAndUser,
                    body: "# Changelog\n\nRun git log.".into(),
                },
                Skill {
                    name: "review".into(),
                    description: "The user's.".into(),
                    scope: SkillScope::User,
                    dir: review,
                    allowed_tools: vec!["Grep".into(), "Bash(cargo test:*)".into()],
                    argument_hint: None,
                    model: None,
                    invocation: Invocation::UserOnly,
                    body: "User body.".into(),
                },
            ]
        );
        assert_eq!(
            set.model_invocable().map(|s| &s.name).collect::<Vec<_>>(),
            ["changelog"]
        );
    }

    #[test]
    fn a_malformed_file_is_a_problem_naming_file_and_field_and_the_others_load() {
        let project = tempfile::tempdir().unwrap();
        let open = write(project.path(), "a-open", "---\nname: open\n");
        let named = write(
            project.path(),
            "b-named",
            "---\nname: Bad Name\ndescription: x\n---\n",
        );
        let flagged = write(
            project.path(),
            "c-flagged",
            "---\ndescription: Fine otherwise.\ndisable-model-invocation: maybe\n---\nBody",
        );
        let empty = write(project.path(), "d-empty", "---\nname: d-empty\n---\n");
        // No front matter at all: the directory names it, the first paragraph describes it.
        write(
            project.path(),
            "e-plain",
            "# Tidy imports\nSorts them.\n\nMore.",
        );
        let set = load_skills(project.path(), None);
        assert_eq!(
            set.skills
                .iter()
                .map(|s| (s.name.as_str(), s.description.as_str()))
                .collect::<Vec<_>>(),
            [
                ("c-flagged", "Fine otherwise."),
                ("e-plain", "Tidy imports Sorts them.")
            ]
        );
        let at = |dir: &Path| dir.join("SKILL.md").display().to_string();
        assert_eq!(
            set.problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            [
                format!(
                    "{}: front matter: it opens with `---` but no `---` line ends it; the skill \
                     is skipped",
                    at(&open)
                ),
                format!(
                    "{}: name: \"Bad Name\" is not a skill name (lowercase letters, digits and \
                     hyphens, at most 64); the skill is skipped",
                    at(&named)
                ),
                format!(
                    "{}: disable-model-invocation: expected true or false, found \"maybe\"; \
                     ignored",
                    at(&flagged)
                ),
                format!(
                    "{}: description: missing, and the body is empty: skill \"d-empty\" needs a \
                     description saying when to use it; skipped",
                    at(&empty)
                ),
            ]
        );
    }

    #[test]
    fn expanding_substitutes_arguments_or_adds_them() {
        let skill = |body: &str| Skill {
            name: "s".into(),
            description: "d".into(),
            scope: SkillScope::Project,
            dir: PathBuf::from("/p/.claude/skills/s"),
            allowed_tools: vec![],
            argument_hint: None,
            model: None,
            invocation: Invocation::ModelAndUser,
            body: body.into(),
        };
        assert_eq!(
            skill("Release $1 from ${CLAUDE_SKILL_DIR}/notes.md ($ARGUMENTS)").expand(" 1.2 now "),
            "Base directory for this skill: /p/.claude/skills/s\n\n\
             Release 1.2 from /p/.claude/skills/s/notes.md (1.2 now)"
        );
        assert_eq!(
            skill("Tidy up.\n").expand("src/lib.rs"),
            "Base directory for this skill: /p/.claude/skills/s\n\nTidy up.\n\n\
             ARGUMENTS: src/lib.rs"
        );
        assert_eq!(
            skill("Tidy up.").expand(""),
            "Base directory for this skill: /p/.claude/skills/s\n\nTidy up."
        );
    }
}
