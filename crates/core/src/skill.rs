//! The `Skill` tool and `/skills`: the model loads a skill of `.claude/skills/` by name
//! ([`cairn_context::skills`] reads them), and the skill's `allowed-tools` hold unasked from
//! that call to the end of the turn.
//!
//! Only the skills' names and descriptions are in the tool's description; the body arrives as
//! the call's result, after the skill's base directory, so the model can read the files beside
//! `SKILL.md`. The pre-approval goes through the permission gate as turn rules
//! ([`PermissionGate::add_turn_rules`]): deny and ask rules, destructive commands, protected
//! files and paths outside the workspace come first, as for any allow rule of a settings file.
//! A project's skill grants no more than the project's settings could: nothing when the run
//! does not read them (`--setting-sources` without `project`). A skill's `model` holds from
//! the call to the end of the turn too ([`SkillModel`]), as for its slash command's turn.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_context::skills::{
    Invocation, SKILL_NOTE_PREFIX, Skill, SkillScope, SkillSet, load_skills,
};
use cairn_policy::PermissionGate;
use cairn_policy::rules::RuleOrigin;
use cairn_tools::{Safety, Tool, ToolContext, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

/// The tool's name, as Claude Code calls it.
pub const SKILL_TOOL: &str = "Skill";

/// Whether a project's skills may pre-approve tools: as far as the project's settings could.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectGrants {
    /// The run reads the project's settings, so its allow rules hold; so do its skills'.
    Honoured,
    /// The run does not read the project's settings (`--setting-sources`): a project skill's
    /// `allowed-tools` pre-approve nothing.
    Withheld,
}

/// The model a skill the model loaded asks for: the Skill tool sets it, the engine sends the
/// rest of the turn's requests to it and forgets it when the turn ends. Clones share it.
#[derive(Debug, Clone, Default)]
pub struct SkillModel(Arc<Mutex<Option<String>>>);

impl SkillModel {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Sends the rest of this turn to `model` (an id, aliases resolved).
    pub fn set(&self, model: String) {
        *self.lock() = Some(model);
    }

    /// The model a skill asked for in this turn, if one did.
    pub fn current(&self) -> Option<String> {
        self.lock().clone()
    }

    /// The turn is over: the session's model again.
    pub fn clear(&self) {
        *self.lock() = None;
    }
}

/// What a `Skill` call asks for.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SkillInput {
    /// The skill's name, as listed in this tool's description (`changelog`).
    #[serde(alias = "command")]
    pub skill: String,
    /// What the skill is to work on, when it takes arguments.
    #[serde(default)]
    pub args: Option<String>,
}

/// The `Skill` tool over the skills a session found at its start.
#[derive(Debug)]
pub struct SkillTool {
    skills: SkillSet,
    gate: Arc<PermissionGate>,
    project_grants: ProjectGrants,
    project: PathBuf,
    home: PathBuf,
    turn_model: SkillModel,
}

impl SkillTool {
    /// The tool over `skills`, granting their `allowed-tools` through `gate`; `project` and
    /// `home` anchor a project's and a user's path patterns as their settings files' are.
    pub fn new(
        skills: SkillSet,
        gate: Arc<PermissionGate>,
        project_grants: ProjectGrants,
        project: PathBuf,
        home: PathBuf,
    ) -> SkillTool {
        SkillTool {
            skills,
            gate,
            project_grants,
            project,
            home,
            turn_model: SkillModel::default(),
        }
    }

    /// Puts a loaded skill's `model` in force through `turn_model`, which the session's
    /// engine reads ([`crate::Engine::with_skill_model`]).
    pub fn with_turn_model(mut self, turn_model: SkillModel) -> SkillTool {
        self.turn_model = turn_model;
        self
    }

    /// The tool when `skills` has one the model may use; `None` offers no tool.
    pub fn offered(
        skills: SkillSet,
        gate: Arc<PermissionGate>,
        project_grants: ProjectGrants,
        project: PathBuf,
        home: PathBuf,
    ) -> Option<SkillTool> {
        skills.model_invocable().next()?;
        Some(SkillTool::new(skills, gate, project_grants, project, home))
    }

    /// Puts `skill`'s `allowed-tools` in force for the rest of the turn (and the reading of
    /// its directory, where it lies outside the workspace); returns the notes for the model.
    fn grant(&self, skill: &Skill) -> String {
        let mut rules = skill.allowed_tools.clone();
        let outside = !self
            .gate
            .workspace_roots()
            .iter()
            .any(|root| skill.dir.starts_with(root));
        if skill.scope == SkillScope::Project && self.project_grants == ProjectGrants::Withheld {
            let notes = (!rules.is_empty()).then(|| {
                format!(
                    "{SKILL_NOTE_PREFIX} not pre-approved ({}): this run does not read the \
                     project's settings (--setting-sources), and a project's skill grants no \
                     more than they could.]",
                    rules.join(", ")
                )
            });
            return notes.unwrap_or_default();
        }
        let mut notes = String::new();
        if !rules.is_empty() {
            notes.push_str(&format!(
                "{SKILL_NOTE_PREFIX} pre-approved until the end of this turn: {}]",
                rules.join(", ")
            ));
        }
        if outside {
            rules.push(format!("Read(/{}/**)", skill.dir.display()));
        }
        let base = match skill.scope {
            SkillScope::Project => self.project.clone(),
            SkillScope::User => self.home.join(".claude"),
        };
        let origin = RuleOrigin::new(
            format!(
                "the allowed-tools of skill {} ({})",
                skill.name,
                skill.path().display()
            ),
            base,
        );
        for error in self.gate.add_turn_rules(&rules, origin) {
            notes.push_str(&format!("{SKILL_NOTE_PREFIX}: {error}; left out]"));
        }
        notes
    }

    fn description_text(&self) -> String {
        let mut text = String::from(
            "Loads a skill: instructions for one kind of task, kept by the user or the project, \
             with files beside them. When the task at hand matches a skill's description \
             below, call this tool with the skill's name before doing the task, then follow \
             what it returns; put what the skill should work on in `args`. The result starts \
             with the skill's base directory: paths in the skill are relative to it. A skill \
             loaded earlier in this conversation (by this tool, or by the user typing \
             /<name>) is already here: do not load it again.\n\nAvailable skills:\n",
        );
        for skill in self.skills.model_invocable() {
            text.push_str(&format!("- {}: {}\n", skill.name, skill.description));
        }
        text
    }
}

#[async_trait]
impl Tool for SkillTool {
    type Input = SkillInput;

    fn name(&self) -> &'static str {
        SKILL_TOOL
    }

    fn description(&self) -> String {
        self.description_text()
    }

    fn safety(&self, _input: &SkillInput, _ctx: &ToolContext) -> Safety {
        Safety::READ_ONLY
    }

    /// None: the skill files were found when the session started, in the user's and the
    /// project's own directories, and reading one is not reading the user's code.
    fn touched_paths(&self, _input: &SkillInput, _ctx: &ToolContext) -> Vec<PathBuf> {
        Vec::new()
    }

    async fn validate(&self, input: &SkillInput, _ctx: &ToolContext) -> Result<(), String> {
        self.usable(&input.skill).map(drop)
    }

    async fn run(
        &self,
        input: SkillInput,
        _ctx: &ToolContext,
        _cancel: &CancellationToken,
    ) -> ToolOutput {
        let skill = match self.usable(&input.skill) {
            Ok(skill) => skill,
            Err(message) => return ToolOutput::error(message),
        };
        let mut text = skill.expand(input.args.as_deref().unwrap_or(""));
        text.push_str(&self.grant(skill));
        if let Some(model) = &skill.model {
            let model = cairn_llm::models::resolve_model(model);
            text.push_str(&format!(
                "\n\n[model: the rest of this turn runs on {model}, as the skill asks]"
            ));
            self.turn_model.set(model);
        }
        ToolOutput::text(text)
    }
}

impl SkillTool {
    /// The skill `name` names (a leading `/` allowed), when the model may use it.
    fn usable(&self, name: &str) -> Result<&Skill, String> {
        let name = name.trim().trim_start_matches('/');
        let available = || {
            self.skills
                .model_invocable()
                .map(|skill| skill.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self.skills.find(name) {
            Some(skill) if skill.invocation == Invocation::ModelAndUser => Ok(skill),
            Some(_) => Err(format!(
                "Skill {name:?} can only be used by the user, with /{name}; it is not for the \
                 model to load."
            )),
            None => Err(format!(
                "No skill named {name:?}. Available skills: {}.",
                available()
            )),
        }
    }
}

/// `/skills`: the skills of the project and the user, with what each pre-approves, and the
/// files that could not make one.
pub fn skills_report(cwd: &Path, home: &Path) -> String {
    let set = load_skills(cwd, Some(home));
    let mut text = if set.skills.is_empty() {
        "No skills. A skill is a directory with a SKILL.md: .claude/skills/<name>/ in the \
         project, ~/.claude/skills/<name>/ for every project."
            .to_string()
    } else {
        let mut text =
            String::from("Skills (the model loads them with the Skill tool; /<name> uses one):\n");
        for skill in &set.skills {
            text.push_str(&format!(
                "  /{} ({}) — {}",
                skill.name,
                skill.scope.as_str(),
                skill.description
            ));
            if !skill.allowed_tools.is_empty() {
                text.push_str(&format!(
                    " [allowed-tools: {}]",
                    skill.allowed_tools.join(", ")
                ));
            }
            if skill.invocation == Invocation::UserOnly {
                text.push_str(" [only by its slash command]");
            }
            text.push('\n');
        }
        text.trim_end().to_string()
    };
    for problem in &set.problems {
        text.push_str(&format!("\nwarning: {problem}"));
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use cairn_policy::PermissionMode;
    use cairn_policy::rules::RuleSet;
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::assembly::Turn;
    use crate::commands::{CommandTable, CommandTurn, Resolved};

    fn write(root: &Path, relative: &str, text: &str) {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn skill_tool(
        project: &Path,
        home: &Path,
        grants: ProjectGrants,
    ) -> (SkillTool, Arc<PermissionGate>) {
        let gate = Arc::new(PermissionGate::new(
            PermissionMode::Default,
            RuleSet::default(),
            vec![project.to_path_buf()],
            project.to_path_buf(),
            home.to_path_buf(),
        ));
        let skills = load_skills(project, Some(home));
        let tool = SkillTool::offered(
            skills,
            gate.clone(),
            grants,
            project.to_path_buf(),
            home.to_path_buf(),
        )
        .unwrap();
        (tool, gate)
    }

    #[tokio::test]
    async fn a_call_loads_the_body_and_grants_its_rules_for_the_turn() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        write(
            project.path(),
            ".claude/skills/release/SKILL.md",
            "---\ndescription: Releases.\nallowed-tools: Bash(git tag:*)\n---\nTag $ARGUMENTS.",
        );
        write(
            home.path(),
            ".claude/skills/secret/SKILL.md",
            "---\ndescription: Mine.\ndisable-model-invocation: true\n---\nHidden.",
        );
        let (tool, gate) = skill_tool(project.path(), home.path(), ProjectGrants::Honoured);
        assert!(
            tool.description()
                .ends_with("Available skills:\n- release: Releases.\n")
        );
        let ctx = ToolContext::new(project.path().to_path_buf());
        let cancel = CancellationToken::new();
        let call = |skill: &str| SkillInput {
            skill: skill.into(),
            args: Some("v1".into()),
        };
        let output = tool.run(call("/release"), &ctx, &cancel).await;
        assert_eq!(
            output,
            ToolOutput::text(format!(
                "Base directory for this skill: {}\n\nTag v1.\n\n[allowed-tools pre-approved \
                 until the end of this turn: Bash(git tag:*)]",
                project.path().join(".claude/skills/release").display()
            ))
        );
        assert_eq!(gate.turn_rules(), ["Bash(git tag:*)"]);
        gate.clear_turn_rules();

        assert_eq!(
            tool.run(call("secret"), &ctx, &cancel).await,
            ToolOutput::error(
                "Skill \"secret\" can only be used by the user, with /secret; it is not for the \
                 model to load."
            )
        );
        assert_eq!(
            tool.run(call("nope"), &ctx, &cancel).await,
            ToolOutput::error("No skill named \"nope\". Available skills: release.")
        );
        assert_eq!(gate.turn_rules(), Vec::<String>::new());

        let (withheld, gate) = skill_tool(project.path(), home.path(), ProjectGrants::Withheld);
        let output = withheld.run(call("release"), &ctx, &cancel).await;
        assert!(output.content.text().ends_with(
            "[allowed-tools not pre-approved (Bash(git tag:*)): this run does not read the \
             project's settings (--setting-sources), and a project's skill grants no more than \
             they could.]"
        ));
        assert_eq!(gate.turn_rules(), Vec::<String>::new());
    }

    #[test]
    fn a_skill_is_a_command_of_the_table_and_a_custom_command_of_its_name_wins() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        write(
            project.path(),
            ".claude/skills/review/SKILL.md",
            "---\ndescription: Reviews.\n---\nReview the skill way.",
        );
        write(
            project.path(),
            ".claude/commands/review.md",
            "Review the command way.",
        );
        write(
            home.path(),
            ".claude/skills/notes/SKILL.md",
            "---\ndescription: Notes.\nallowed-tools: Read\nmodel: haiku\n---\nTake notes on $1.",
        );
        let table = CommandTable::load(project.path(), home.path());
        let Resolved::Turn(CommandTurn::Prompt { turn, .. }) =
            table.resolve("/review", project.path())
        else {
            panic!("a turn");
        };
        assert_eq!(
            turn.content[1],
            cairn_protocol::ContentBlock::text("Review the command way.")
        );
        let skill = load_skills(project.path(), Some(home.path()));
        let notes = skill.find("notes").unwrap();
        assert_eq!(
            table.resolve("/notes the api", project.path()),
            Resolved::Turn(CommandTurn::Prompt {
                turn: Turn::skill(notes, "the api"),
                shown: "/notes the api".into(),
                source: crate::commands::CommandSource::User,
            })
        );
        let turn = Turn::skill(notes, "the api");
        assert_eq!(turn.model.as_deref(), Some("claude-haiku-4-5"));
        assert_eq!(
            turn.allowed_tools,
            vec![
                "Read".to_string(),
                format!("Read(/{}/**)", notes.dir.display())
            ]
        );
    }
}
