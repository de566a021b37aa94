//! The permission gate: one decision per tool call, before it runs (the order of its checks
//! is in `docs/ARCHITECTURE.md`, "Invariants", and SECURITY.md).
//!
//! Every call needs a level: reading inside the workspace, writing inside it (or reading
//! outside it), or full access (writing outside it, network, anything the analysis cannot
//! vouch for). The permission mode grants a level; a call short of it is asked about when
//! someone can answer (the interactive UI), whatever the distance. Where nobody can be asked
//! (`cairn -p`), a call one level short becomes a refusal that says which rule or flag would
//! allow it, and a call two levels short is refused without asking. Rules come first: deny
//! beats ask beats allow, and a destructive command asks even under an allow rule.
//!
//! A question offers the rule "don't ask again" would add: a prefix rule for a command
//! (`Bash(npm install:*)`, `Bash(curl:*)`), the directory for a file (`Edit(src/**)`), only
//! for the parts of the call that no rule in force allows yet, and none when no rule would
//! lift the question.
//!
//! # Destructive calls
//!
//! A tool declares whether a call destroys something the call itself does not carry
//! ([`CallInfo::destructive`]: Write over an existing file, NotebookEdit replacing or deleting
//! a cell; Edit is not, its `old_string` is in the call). `acceptEdits` runs edits unasked, but
//! grants a destructive one nothing: it is judged as in `default` mode, so it is asked about
//! inside the workspace and refused outside it, unless a rule allows it (`Write`,
//! `Edit(docs/**)`) or the mode is `bypassPermissions`. A rule is the user's word for that
//! call; a mode is a blanket, and a blanket should not cover losing a file's content. A Bash
//! command's destructiveness is the gate's own analysis (`cairn-shell`): a destructive command
//! asks even under an allow rule, in every mode but `bypassPermissions`.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use cairn_protocol::{DecisionSource, PermissionMode};
use cairn_shell::{BashAnalysis, BashContext, BashVerdict, analyze, resolve_existing_prefix};
use serde_json::Value;

use crate::rules::{CallFacts, EDIT_TOOLS, RuleError, RuleKind, RuleOrigin, RuleSet, Specifier};

mod dialog_tools;

pub use dialog_tools::PLAN_MODE_REFUSAL;

/// What a call needs, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Reads only (or touches only the session's own state).
    ReadOnly,
    /// Changes files inside the workspace, or runs a command not known to be read-only.
    WorkspaceWrite,
    /// Reaches outside the workspace: paths beyond its roots, or the network.
    FullAccess,
}

/// Whether someone can answer a question about a call. It follows from the broker of the
/// engine making the call ([`cairn_protocol::PermissionBroker::can_ask`]) and reaches the gate
/// with each call, in [`CallInfo::asking`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asking {
    /// Someone answers permission requests (the interactive UI's dialog, an SDK host).
    Interactive,
    /// Nobody can be asked (`-p`): questions become refusals that say how to allow the call.
    NonInteractive,
}

/// What the gate knows of a call: its tool's own declarations and its input.
#[derive(Debug, Clone, Copy)]
pub struct CallInfo<'a> {
    /// The tool's canonical name, which rules match against.
    pub tool: &'a str,
    /// The call's arguments (a Bash call's `command` is analysed, a file tool's path matched).
    pub input: &'a Value,
    /// Absolute paths the call touches.
    pub paths: &'a [PathBuf],
    /// The tool declares this call read-only.
    pub read_only: bool,
    /// The tool declares that this call can destroy what it does not carry (overwriting a
    /// whole file, deleting): no mode but `bypassPermissions` lets it run unasked.
    pub destructive: bool,
    /// Whether someone can answer a question about this call: it follows from the broker of
    /// the engine that makes the call, so a question nobody can answer is refused with the
    /// way to allow it instead.
    pub asking: Asking,
}

/// The gate's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The call may run without a question.
    Allow {
        /// What allowed it: a rule or the mode.
        source: DecisionSource,
        /// The allow rule that matched, when one did.
        rule: Option<String>,
    },
    /// Ask the user; `suggested_rule` is what "don't ask again" would add, `None` when no rule
    /// would lift the question (a destructive command, a write to a protected file).
    Ask {
        /// Why it needs approval, in words for the user.
        reason: String,
        /// The rule to offer, in Claude Code's syntax.
        suggested_rule: Option<String>,
    },
    /// The call must not run; the reason goes to the model as the call's result.
    Deny {
        /// What refused it: a rule, the mode, or nobody being there to ask.
        source: DecisionSource,
        /// The deny rule that matched, when one did.
        rule: Option<String>,
        /// Why, in words for the user and the model.
        reason: String,
    },
}

/// Decides tool calls for one session.
#[derive(Debug)]
pub struct PermissionGate {
    mode: Mutex<PermissionMode>,
    /// A lock because `/permissions` adds and removes rules while the session runs.
    rules: RwLock<RuleSet>,
    /// Rules the user added with "yes, and don't ask again" during this session.
    session_rules: Mutex<Vec<String>>,
    /// Allow rules for the running turn only: a custom command's or a skill's
    /// `allowed-tools`, each with where it came from (path patterns are relative to it).
    turn_rules: Mutex<Vec<(String, RuleOrigin)>>,
    /// A Mutex because `/add-dir` adds roots while the session runs.
    workspace_roots: Mutex<Vec<PathBuf>>,
    cwd: PathBuf,
    home: PathBuf,
    /// Directories of cairn's own state the file tools may write without a question (the
    /// memory directory): not the user's code.
    own_state: RwLock<Vec<PathBuf>>,
    /// The file the model may write its plan to in plan mode, for `ExitPlanMode` to read.
    plan_file: RwLock<Option<PathBuf>>,
}

/// Tools that only touch the session's own state (its todo list, the shells it started, the
/// tools it loaded): they need no more than reading, whatever they declare.
const SESSION_TOOLS: &[&str] = &[
    "TodoWrite",
    "BashOutput",
    "KillShell",
    "TaskStop",
    "TaskOutput",
    "ToolSearch",
    "ExitPlanMode",
    "EnterPlanMode",
    "AskUserQuestion",
];

/// Tools that reach the network (open-world), whatever they change here: they need full
/// access, so every mode short of `bypassPermissions` asks unless a rule allows them.
const NETWORK_TOOLS: &[&str] = &["WebFetch", "WebSearch"];

impl PermissionGate {
    /// `workspace_roots` are the project directory and every additional directory.
    pub fn new(
        mode: PermissionMode,
        rules: RuleSet,
        workspace_roots: Vec<PathBuf>,
        cwd: PathBuf,
        home: PathBuf,
    ) -> Self {
        PermissionGate {
            mode: Mutex::new(mode),
            rules: RwLock::new(rules),
            session_rules: Mutex::default(),
            turn_rules: Mutex::default(),
            workspace_roots: Mutex::new(workspace_roots),
            cwd,
            home,
            own_state: RwLock::default(),
            plan_file: RwLock::default(),
        }
    }

    /// Lets the file tools write `file` in plan mode too, as Claude Code lets the model write
    /// its plan file; outside plan mode it is judged as any other file. Deny rules still
    /// refuse.
    pub fn allow_plan_file(&self, file: &Path) {
        *self
            .plan_file
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(resolve_existing_prefix(file));
    }

    /// Whether `paths` name the plan file and nothing else.
    fn only_plan_file(&self, paths: &[PathBuf]) -> bool {
        let file = self
            .plan_file
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match file.as_ref() {
            Some(file) => {
                !paths.is_empty()
                    && paths
                        .iter()
                        .all(|path| resolve_existing_prefix(path) == *file)
            }
            None => false,
        }
    }

    /// Plan mode's refusal of `call`, when plan mode refuses it: the answer that comes before
    /// every other check of the call (whether it can work at all, hooks), since in plan mode
    /// the call must not run whatever else holds. `None` when plan mode is off or lets it run.
    pub fn plan_mode_refusal(&self, call: &CallInfo<'_>) -> Option<Verdict> {
        self.plan_mode_refusal_in(call, self.mode())
    }

    /// [`PermissionGate::plan_mode_refusal`] as if `mode` were in force (a sub-agent's
    /// narrower mode).
    pub fn plan_mode_refusal_in(
        &self,
        call: &CallInfo<'_>,
        mode: PermissionMode,
    ) -> Option<Verdict> {
        if mode != PermissionMode::Plan {
            return None;
        }
        match self.check_in(call, mode) {
            refusal @ Verdict::Deny {
                source: DecisionSource::Mode,
                ..
            } => Some(refusal),
            Verdict::Allow { .. } | Verdict::Ask { .. } | Verdict::Deny { .. } => None,
        }
    }

    /// Lets the file tools write in `dir` (cairn's own state, such as the memory directory)
    /// without a question in every mode but `plan`; deny rules still refuse, and the rest of
    /// the file system keeps its rules.
    pub fn allow_own_state(&self, dir: &Path) {
        self.own_state
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(resolve_existing_prefix(dir));
    }

    /// Whether every one of `paths` lies in a directory of cairn's own state.
    fn in_own_state(&self, paths: &[PathBuf]) -> bool {
        let dirs = self
            .own_state
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        !paths.is_empty()
            && paths.iter().all(|path| {
                let path = resolve_existing_prefix(path);
                dirs.iter().any(|dir| path.starts_with(dir) && path != *dir)
            })
    }

    /// The mode calls are judged by now.
    pub fn mode(&self) -> PermissionMode {
        *self
            .mode
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Judges every later call by `mode`.
    pub fn set_mode(&self, mode: PermissionMode) {
        *self
            .mode
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = mode;
    }

    /// Adds `dir` to the workspace for the rest of the session (`/add-dir`): file tools may
    /// then read and, under `acceptEdits`, write there as in the project directory.
    pub fn add_workspace_root(&self, dir: PathBuf) {
        let mut roots = self
            .workspace_roots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !roots.contains(&dir) {
            roots.push(dir);
        }
    }

    /// The project directory and every additional directory, as they stand now.
    pub fn workspace_roots(&self) -> Vec<PathBuf> {
        self.workspace_roots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Allows what `rules` match for the rest of the session: one rule, or a list of them
    /// (see [`crate::rules::split_rule_list`]). If one does not parse, none is added.
    pub fn allow_for_session(&self, rules: &str) -> Result<(), RuleError> {
        let rules = crate::rules::split_rule_list(rules);
        for rule in &rules {
            crate::rules::Rule::parse(RuleKind::Allow, rule, self.session_origin())?;
        }
        self.session_rules
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .extend(rules);
        Ok(())
    }

    /// Allows what `rules` match until [`PermissionGate::clear_turn_rules`] (a custom command's
    /// `allowed-tools`, for its turn). Rules that do not parse are left out and returned.
    pub fn set_turn_rules(&self, rules: &[String]) -> Vec<RuleError> {
        self.clear_turn_rules();
        let origin = RuleOrigin::new("the command's allowed-tools", self.cwd.clone());
        self.add_turn_rules(rules, origin)
    }

    /// Allows what `rules` match, beside the turn's other rules, until
    /// [`PermissionGate::clear_turn_rules`] (a skill's `allowed-tools`, from its use to the
    /// end of the turn). They are allow rules of `origin` like any other: deny and ask rules,
    /// destructive commands, protected files and paths outside the workspace still come
    /// first. Rules that do not parse are left out and returned.
    pub fn add_turn_rules(&self, rules: &[String], origin: RuleOrigin) -> Vec<RuleError> {
        let mut valid = Vec::new();
        let mut errors = Vec::new();
        for rule in rules {
            match crate::rules::Rule::parse(RuleKind::Allow, rule, origin.clone()) {
                Ok(_) => valid.push((rule.clone(), origin.clone())),
                Err(error) => errors.push(error),
            }
        }
        self.turn_rules
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .extend(valid);
        errors
    }

    /// The running turn's allow rules, as written.
    pub fn turn_rules(&self) -> Vec<String> {
        self.turn_rules
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .map(|(rule, _)| rule.clone())
            .collect()
    }

    /// Ends what [`PermissionGate::set_turn_rules`] allowed.
    pub fn clear_turn_rules(&self) {
        self.turn_rules
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clear();
    }

    /// The rules from settings and flags, each with where it came from (for `/permissions`),
    /// as they stand now.
    pub fn rules(&self) -> RuleSet {
        self.rules
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Adds a rule for the rest of the session (`/permissions allow|ask|deny`); `origin` says
    /// where it is kept. A rule that does not parse is refused and changes nothing; one that
    /// is in force already is not added twice. Returns whether it was added.
    pub fn add_rule(
        &self,
        kind: RuleKind,
        text: &str,
        origin: RuleOrigin,
    ) -> Result<bool, RuleError> {
        let rule = crate::rules::Rule::parse(kind, text, origin)?;
        let mut rules = self
            .rules
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let known = rules
            .rules()
            .iter()
            .any(|existing| existing.kind == kind && existing.text.trim() == rule.text.trim());
        if !known {
            rules.push(rule);
        }
        Ok(!known)
    }

    /// Removes every rule spelled `text` (`/permissions remove`), this session's "don't ask
    /// again" rules included; returns what was removed, so the caller can update the files
    /// they came from. Removing a session rule returns it with the origin "this session".
    pub fn remove_rule(&self, text: &str) -> Vec<crate::rules::Rule> {
        let mut removed = self
            .rules
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(text);
        let mut session = self
            .session_rules
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let before = session.len();
        session.retain(|rule| rule.trim() != text.trim());
        if session.len() < before
            && let Ok(rule) =
                crate::rules::Rule::parse(RuleKind::Allow, text, self.session_origin())
        {
            removed.push(rule);
        }
        removed
    }

    /// A rule allowed during this session that is now kept in a settings file ("Yes, and
    /// don't ask again" where the face saves rules): it leaves this session's rules and holds
    /// as a rule of `origin`, so `/permissions` names the file it is in. A rule that does not
    /// parse changes nothing.
    pub fn keep_session_rule(&self, text: &str, origin: RuleOrigin) -> Result<(), RuleError> {
        self.add_rule(RuleKind::Allow, text, origin)?;
        self.session_rules
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .retain(|rule| rule.trim() != text.trim());
        Ok(())
    }

    /// The rules allowed with "yes, and don't ask again" during this session.
    pub fn session_rules(&self) -> Vec<String> {
        self.session_rules
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn session_origin(&self) -> RuleOrigin {
        RuleOrigin::new("this session", self.cwd.clone())
    }

    /// The decision for `call`.
    ///
    /// In order: deny rules (on the paths as given and as resolved, and for Bash on every
    /// path the command reads or writes); `bypassPermissions`; plan mode; then what the
    /// analysis finds that no allow rule outranks (a destructive or unanalysable command, a
    /// write to a protected file); then ask and allow rules, where an allow rule does not
    /// cover a command reaching outside the workspace; then the mode's level.
    pub fn check(&self, call: &CallInfo<'_>) -> Verdict {
        self.check_in(call, self.mode())
    }

    /// [`PermissionGate::check`] as if `mode` were in force (a sub-agent's narrower mode);
    /// the rules and the workspace are the gate's.
    pub fn check_in(&self, call: &CallInfo<'_>, mode: PermissionMode) -> Verdict {
        let workspace_roots = self.workspace_roots();
        let resolved_roots: Vec<PathBuf> = workspace_roots
            .iter()
            .map(|root| resolve_existing_prefix(root))
            .collect();
        let is_bash = call.tool == "Bash";
        // A Bash call's first touched path is the shell's working directory: relative paths
        // in the command are judged from where the shell really is.
        let shell_dir = match (is_bash, call.paths.first()) {
            (true, Some(dir)) => dir.as_path(),
            (true, None) | (false, _) => self.cwd.as_path(),
        };
        let analysis = is_bash.then(|| {
            let command = call
                .input
                .get("command")
                .and_then(Value::as_str)
                .unwrap_or("");
            analyze(
                command,
                &BashContext {
                    cwd: shell_dir,
                    workspace_roots: &workspace_roots,
                    home: &self.home,
                },
            )
        });
        // Path rules match where a path really leads: `src/link -> /elsewhere` is judged as
        // `/elsewhere`.
        let resolved_paths: Vec<PathBuf> = if is_bash {
            call.paths.to_vec()
        } else {
            call.paths
                .iter()
                .map(|path| {
                    spelled_in_workspace(
                        &resolve_existing_prefix(&self.cwd.join(path)),
                        &workspace_roots,
                        &resolved_roots,
                    )
                })
                .collect()
        };
        let bash_commands: Option<Vec<String>> = analysis
            .as_ref()
            .map(|analysis| analysis.commands.iter().map(|c| c.text.clone()).collect());
        let facts = CallFacts {
            tool: call.tool,
            input: call.input,
            paths: &resolved_paths,
            bash_commands: bash_commands.as_deref(),
            home: &self.home,
            cwd: &self.cwd,
        };
        let (level, why) = self.level(call, analysis.as_ref());
        let leaves_sandbox =
            is_bash && call.input.get("dangerouslyDisableSandbox") == Some(&Value::Bool(true));

        let rules = self
            .rules
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone();
        let allowing = self.allow_rules_in_force(&rules);
        let suggested_rule = suggestion(&allowing, &facts, analysis.as_ref());
        if let Some(rule) = self.denying_rule(&rules, call, &facts, analysis.as_ref()) {
            return Verdict::Deny {
                source: DecisionSource::Rule,
                reason: format!("The permission rule {rule} denies this call."),
                rule: Some(rule),
            };
        }
        // Each call of these is a question for the user, which no rule or mode answers.
        if let Some(verdict) = dialog_tools::dialog_tool_verdict(call, mode) {
            return verdict;
        }
        if mode == PermissionMode::BypassPermissions {
            return Verdict::Allow {
                source: DecisionSource::Mode,
                rule: None,
            };
        }
        if mode == PermissionMode::Plan
            && !is_bash
            && EDIT_TOOLS.contains(&call.tool)
            && self.only_plan_file(&resolved_paths)
        {
            return Verdict::Allow {
                source: DecisionSource::Mode,
                rule: None,
            };
        }
        // Reading the web is part of planning, as in Claude Code: it asks instead.
        if mode == PermissionMode::Plan
            && level > Level::ReadOnly
            && !NETWORK_TOOLS.contains(&call.tool)
        {
            return Verdict::Deny {
                source: DecisionSource::Mode,
                rule: None,
                reason: PLAN_MODE_REFUSAL.into(),
            };
        }
        if let Some(finding) =
            self.finding_above_rules(call, &resolved_paths, &resolved_roots, analysis.as_ref())
        {
            return self.question(call.asking, mode, finding, None);
        }
        if !is_bash && EDIT_TOOLS.contains(&call.tool) && self.in_own_state(&resolved_paths) {
            return Verdict::Allow {
                source: DecisionSource::Mode,
                rule: None,
            };
        }
        if leaves_sandbox {
            return self.question(
                call.asking,
                mode,
                format!("The model asks to run this command outside the sandbox. {why}"),
                suggested_rule,
            );
        }
        match rules
            .evaluate(&facts)
            .map(|rule| (rule.kind, rule.text.clone()))
        {
            // An ask rule outranks every allow rule: none would lift the question.
            Some((RuleKind::Ask, rule)) => {
                return self.question(
                    call.asking,
                    mode,
                    format!("The permission rule {rule} asks before this call."),
                    None,
                );
            }
            Some((RuleKind::Allow, rule)) => {
                let finding = program_option_finding(&rule, analysis.as_ref())
                    .or_else(|| self.outside_finding(&allowing, analysis.as_ref()));
                return match finding {
                    Some(finding) => self.question(call.asking, mode, finding, None),
                    None => Verdict::Allow {
                        source: DecisionSource::Rule,
                        rule: Some(rule),
                    },
                };
            }
            Some((RuleKind::Deny, _)) | None => {}
        }
        // The rules from settings alone did not allow the call: with this session's and this
        // turn's beside them, the user's answers did.
        if let Some(rule) = allowing.evaluate(&facts).map(|rule| rule.text.clone()) {
            let finding = program_option_finding(&rule, analysis.as_ref())
                .or_else(|| self.outside_finding(&allowing, analysis.as_ref()));
            return match finding {
                Some(finding) => self.question(call.asking, mode, finding, None),
                None => Verdict::Allow {
                    source: DecisionSource::User,
                    rule: Some(rule),
                },
            };
        }

        // acceptEdits covers edits, not destroying content: see "Destructive calls" above.
        let edit = EDIT_TOOLS.contains(&call.tool);
        let granted = match mode {
            PermissionMode::AcceptEdits if edit && !call.destructive => Level::WorkspaceWrite,
            PermissionMode::Default
            | PermissionMode::AcceptEdits
            | PermissionMode::Plan
            | PermissionMode::DontAsk => Level::ReadOnly,
            PermissionMode::BypassPermissions => Level::FullAccess,
        };
        let why = if mode == PermissionMode::AcceptEdits && edit && call.destructive {
            format!(
                "{why} It would replace or delete content that the call does not carry, and \
                 acceptEdits runs only edits that keep it unasked."
            )
        } else {
            why
        };
        if level <= granted {
            return Verdict::Allow {
                source: DecisionSource::Mode,
                rule: None,
            };
        }
        let one_short = matches!(
            (granted, level),
            (Level::ReadOnly, Level::WorkspaceWrite) | (Level::WorkspaceWrite, Level::FullAccess)
        );
        // A rule for the command does not reach the paths outside the workspace it touches.
        let suggested_rule =
            suggested_rule.filter(|_| self.outside_finding(&allowing, analysis.as_ref()).is_none());
        // Someone who can answer is asked however far the call is beyond the mode.
        if one_short || call.asking == Asking::Interactive {
            return self.question(call.asking, mode, why, suggested_rule);
        }
        let how_to_allow = match &suggested_rule {
            Some(rule) => format!(
                "To allow it, add the rule `{rule}` to permissions.allow in \
                 .claude/settings.json, pass --allowedTools \"{rule}\", or start cairn with \
                 --permission-mode bypassPermissions."
            ),
            None => "To allow it, start cairn with --permission-mode bypassPermissions.".into(),
        };
        Verdict::Deny {
            source: DecisionSource::Mode,
            rule: None,
            reason: format!(
                "{why} That needs full access, two levels beyond what this session allows, so it \
                 was refused without asking. {how_to_allow}"
            ),
        }
    }

    /// The deny rule that refuses the call, if any: on the call as the model wrote it, on the
    /// paths it really leads to, and for Bash on what the command reads (Read rules) and
    /// writes (Edit rules).
    fn denying_rule(
        &self,
        rules: &RuleSet,
        call: &CallInfo<'_>,
        facts: &CallFacts<'_>,
        analysis: Option<&BashAnalysis>,
    ) -> Option<String> {
        let deny = |facts: &CallFacts<'_>| {
            rules
                .evaluate(facts)
                .filter(|rule| rule.kind == RuleKind::Deny)
                .map(|rule| rule.text.clone())
        };
        let as_written = CallFacts {
            paths: call.paths,
            ..*facts
        };
        if let Some(rule) = deny(facts).or_else(|| deny(&as_written)) {
            return Some(rule);
        }
        let analysis = analysis?;
        let unknown_direction: Vec<PathBuf> = analysis
            .outside_paths
            .iter()
            .filter(|path| {
                !analysis.read_paths.contains(path) && !analysis.written_paths.contains(path)
            })
            .cloned()
            .collect();
        let reads: Vec<PathBuf> = analysis
            .read_paths
            .iter()
            .chain(&unknown_direction)
            .cloned()
            .collect();
        let writes: Vec<PathBuf> = analysis
            .written_paths
            .iter()
            .chain(&unknown_direction)
            .cloned()
            .collect();
        [("Read", reads), ("Edit", writes)]
            .into_iter()
            .flat_map(|(tool, paths)| paths.into_iter().map(move |path| (tool, path)))
            .find_map(|(tool, path)| {
                deny(&CallFacts {
                    tool,
                    input: &Value::Null,
                    paths: std::slice::from_ref(&path),
                    bash_commands: None,
                    ..*facts
                })
            })
    }

    /// What the analysis finds that no allow rule lifts, whatever the mode grants: the
    /// question to ask.
    fn finding_above_rules(
        &self,
        call: &CallInfo<'_>,
        resolved_paths: &[PathBuf],
        resolved_roots: &[PathBuf],
        analysis: Option<&BashAnalysis>,
    ) -> Option<String> {
        let reasons = || {
            analysis
                .map(|analysis| analysis.reasons.join("; "))
                .filter(|reasons| !reasons.is_empty())
        };
        match analysis.map(|analysis| analysis.verdict) {
            Some(BashVerdict::Destructive) => {
                let why = reasons().unwrap_or_else(|| "this command is destructive".into());
                return Some(format!("Destructive command: {why}."));
            }
            Some(BashVerdict::Unanalysable) => {
                let why = reasons().unwrap_or_else(|| "it cannot be analysed".into());
                return Some(format!(
                    "cairn cannot tell what this command runs ({why}), so no rule allows it \
                     without asking."
                ));
            }
            Some(BashVerdict::ReadOnly | BashVerdict::NeedsApproval) | None => {}
        }
        let written: Vec<&PathBuf> = match analysis {
            Some(analysis) => analysis.written_paths.iter().collect(),
            None if call.read_only => Vec::new(),
            None => resolved_paths.iter().collect(),
        };
        if let Some((path, protection)) = written.iter().find_map(|path| {
            crate::protected::protection_of(&resolve_existing_prefix(path), resolved_roots)
                .map(|protection| (path, protection))
        }) {
            return Some(format!(
                "{} would change {}, which holds {}.",
                call.tool,
                path.display(),
                protection.what_it_controls()
            ));
        }
        if let Some(command) = analysis
            .into_iter()
            .flat_map(|analysis| &analysis.commands)
            .find_map(|command| crate::protected::git_command_writing_control_files(&command.argv))
        {
            return Some(format!(
                "{} would change git's control files: `{command}` creates a repository or \
                 rewrites where git finds one, and with it the configuration and hooks git \
                 uses there.",
                call.tool
            ));
        }
        None
    }

    /// A path a Bash command reaches outside the workspace that no path rule allows. A rule
    /// such as `Bash(cat *)` speaks of the command, not of where it reaches: a path outside
    /// the workspace needs a rule of its own (`Read(~/notes/**)`), or the user's answer.
    fn outside_finding(&self, rules: &RuleSet, analysis: Option<&BashAnalysis>) -> Option<String> {
        let analysis = analysis?;
        let uncovered: Vec<&PathBuf> = analysis
            .outside_paths
            .iter()
            .filter(|path| {
                let tool = if analysis.read_paths.contains(path) {
                    "Read"
                } else {
                    "Edit"
                };
                !allowed_by_path_rule(rules, tool, path, &self.home, &self.cwd)
            })
            .collect();
        (!uncovered.is_empty()).then(|| {
            format!(
                "This command reaches outside the workspace ({}); a rule allowing the command \
                 does not allow that.",
                list_paths(uncovered.into_iter())
            )
        })
    }

    /// An "ask" as the mode and the asking situation allow it. `suggested_rule` is `None`
    /// when no allow rule would lift the question: then only the user, or
    /// `bypassPermissions`, can let the call run.
    fn question(
        &self,
        asking: Asking,
        mode: PermissionMode,
        reason: String,
        suggested_rule: Option<String>,
    ) -> Verdict {
        let how_to_allow = match &suggested_rule {
            Some(rule) => format!(
                "To allow it, add the rule `{rule}` to permissions.allow in \
                 .claude/settings.json, pass --allowedTools \"{rule}\", or choose a \
                 --permission-mode that allows it (acceptEdits for file edits, \
                 bypassPermissions for everything)."
            ),
            None => "No permission rule allows it without asking: run it in an interactive \
                     session and approve it, or start cairn with --permission-mode \
                     bypassPermissions."
                .to_owned(),
        };
        if mode == PermissionMode::DontAsk {
            return Verdict::Deny {
                source: DecisionSource::Mode,
                rule: None,
                reason: format!(
                    "{reason} The permission mode is dontAsk, so what no rule allows is refused. \
                     {how_to_allow}"
                ),
            };
        }
        match asking {
            Asking::Interactive => Verdict::Ask {
                reason,
                suggested_rule,
            },
            Asking::NonInteractive => Verdict::Deny {
                source: DecisionSource::NonInteractive,
                rule: None,
                reason: format!(
                    "{reason} This call needs approval, and nobody can be asked in cairn -p. \
                     {how_to_allow}"
                ),
            },
        }
    }

    /// Every allow rule in force: those from settings and flags, this session's "don't ask
    /// again" rules and the running turn's. Together, because the parts of a compound command
    /// may be allowed by rules from different places.
    fn allow_rules_in_force(&self, rules: &RuleSet) -> RuleSet {
        let origin = self.session_origin();
        let session: Vec<(RuleKind, String, RuleOrigin)> = self
            .session_rules
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .map(|text| (RuleKind::Allow, text.clone(), origin.clone()))
            .collect();
        let turn: Vec<(RuleKind, String, RuleOrigin)> = self
            .turn_rules
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .map(|(text, origin)| (RuleKind::Allow, text.clone(), origin.clone()))
            .collect();
        let settings = rules
            .rules()
            .iter()
            .filter(|rule| rule.kind == RuleKind::Allow)
            .map(|rule| (rule.kind, rule.text.clone(), rule.origin.clone()));
        let (set, _errors) = RuleSet::new(settings.chain(session).chain(turn));
        set
    }

    /// The level a call needs, and why it needs more than reading.
    fn level(&self, call: &CallInfo<'_>, analysis: Option<&BashAnalysis>) -> (Level, String) {
        if SESSION_TOOLS.contains(&call.tool) {
            return (Level::ReadOnly, String::new());
        }
        if NETWORK_TOOLS.contains(&call.tool) {
            return (
                Level::FullAccess,
                format!("{} reaches the network.", call.tool),
            );
        }
        let outside: Vec<&PathBuf> = call
            .paths
            .iter()
            .filter(|path| !self.inside_workspace(path))
            .collect();
        if let Some(analysis) = analysis {
            // The analysis names the network use and each path outside the workspace in its
            // own reasons; these are for an analysis that found them without saying so.
            let mut reasons = analysis.reasons.clone();
            let unexplained = reasons.is_empty();
            if analysis.network && unexplained {
                reasons.push("it uses the network".into());
            }
            if !analysis.outside_paths.is_empty() && unexplained {
                reasons.push(format!(
                    "it touches {} outside the workspace",
                    list_paths(analysis.outside_paths.iter())
                ));
            }
            let why = if reasons.is_empty() {
                "This command is not in the read-only set.".to_string()
            } else {
                format!("This command needs approval: {}.", reasons.join("; "))
            };
            return match analysis.verdict {
                BashVerdict::ReadOnly if analysis.outside_paths.is_empty() && !analysis.network => {
                    (Level::ReadOnly, why)
                }
                BashVerdict::ReadOnly
                | BashVerdict::NeedsApproval
                | BashVerdict::Unanalysable
                | BashVerdict::Destructive
                    if analysis.network || !analysis.outside_paths.is_empty() =>
                {
                    (Level::FullAccess, why)
                }
                BashVerdict::ReadOnly
                | BashVerdict::NeedsApproval
                | BashVerdict::Unanalysable
                | BashVerdict::Destructive => (Level::WorkspaceWrite, why),
            };
        }
        match (call.read_only, outside.is_empty()) {
            (true, true) => (Level::ReadOnly, String::new()),
            (true, false) => (
                Level::WorkspaceWrite,
                format!(
                    "{} reads {} outside the workspace.",
                    call.tool,
                    list_paths(outside.into_iter())
                ),
            ),
            (false, true) => (
                Level::WorkspaceWrite,
                format!("{} changes files in the workspace.", call.tool),
            ),
            (false, false) => (
                Level::FullAccess,
                format!(
                    "{} writes {} outside the workspace.",
                    call.tool,
                    list_paths(outside.into_iter())
                ),
            ),
        }
    }

    fn inside_workspace(&self, path: &Path) -> bool {
        let resolved = resolve_existing_prefix(path);
        self.workspace_roots().iter().any(|root| {
            let root = resolve_existing_prefix(root);
            resolved.starts_with(&root)
        })
    }
}

/// What "don't ask again" would add for `facts`: a rule for each part of the call (each simple
/// command of a compound command) that no allow rule in force covers yet, so a rule already
/// there is never offered again; `None` when every part is covered, as when the question comes
/// from something no rule lifts.
fn suggestion(
    allowing: &RuleSet,
    facts: &CallFacts<'_>,
    analysis: Option<&BashAnalysis>,
) -> Option<String> {
    let parts: Vec<CallFacts<'_>> = match facts.bash_commands {
        Some(commands) if !commands.is_empty() => commands
            .iter()
            .map(|command| CallFacts {
                bash_commands: Some(std::slice::from_ref(command)),
                ..*facts
            })
            .collect(),
        Some(_) | None => vec![*facts],
    };
    let mut rules: Vec<String> = Vec::new();
    for part in parts {
        if allowing.evaluate(&part).is_some() {
            continue;
        }
        let mut suggested = RuleSet::suggest_allow_rules(&part);
        // A rule that would not lift a program option is no way to allow the call: offer the
        // command as written, which names the option.
        if let (Some([command]), Some(analysis)) = (part.bash_commands, analysis)
            && names_a_program_option(command, analysis)
            && !suggested
                .iter()
                .all(|rule| names_all(rule, command, analysis))
        {
            suggested = vec![format!("Bash({command})")];
        }
        for rule in suggested {
            if !rules.contains(&rule) {
                rules.push(rule);
            }
        }
    }
    (!rules.is_empty()).then(|| rules.join(", "))
}

/// Whether the simple command `command` is given one of the analysis's program options.
fn names_a_program_option(command: &str, analysis: &BashAnalysis) -> bool {
    analysis
        .program_options
        .iter()
        .any(|option| command.contains(option.written.as_str()))
}

/// Whether `rule` names every program option `command` is given.
fn names_all(rule: &str, command: &str, analysis: &BashAnalysis) -> bool {
    analysis
        .program_options
        .iter()
        .filter(|option| command.contains(option.written.as_str()))
        .all(|option| rule.contains(option.written.as_str()))
}

/// An option that makes a command run another program (`sort --compress-program`), when the
/// allow rule that matched does not name it: a rule for the command alone (`Bash(sort:*)`)
/// vouches for the command, not for whatever program an option hands control to.
fn program_option_finding(rule: &str, analysis: Option<&BashAnalysis>) -> Option<String> {
    let unnamed: Vec<String> = analysis?
        .program_options
        .iter()
        .filter(|option| !rule.contains(option.written.as_str()))
        .map(|option| format!("`{} {}`", option.command, option.written))
        .collect();
    (!unnamed.is_empty()).then(|| {
        format!(
            "{} runs another program, and the rule {rule} does not name that option.",
            unnamed.join(", ")
        )
    })
}

/// A resolved path spelled from the workspace root as the session names it (`/home/me/app/x`
/// rather than `/data/app/x` when `~/app` is a link), so that rules written against the
/// session's paths match; a path outside every root stays as resolved.
fn spelled_in_workspace(resolved: &Path, roots: &[PathBuf], resolved_roots: &[PathBuf]) -> PathBuf {
    roots
        .iter()
        .zip(resolved_roots)
        .find_map(|(root, resolved_root)| {
            resolved
                .strip_prefix(resolved_root)
                .ok()
                .map(|rest| root.join(rest))
        })
        .unwrap_or_else(|| resolved.to_path_buf())
}

/// Whether an allow rule with a path pattern on `tool` (`Read(~/notes/**)`, `Edit(/tmp/out/**)`)
/// allows `path`: a rule for the whole tool (`Read`) does not reach outside the workspace.
fn allowed_by_path_rule(rules: &RuleSet, tool: &str, path: &Path, home: &Path, cwd: &Path) -> bool {
    let path = path.to_path_buf();
    let facts = CallFacts {
        tool,
        input: &Value::Null,
        paths: std::slice::from_ref(&path),
        bash_commands: None,
        home,
        cwd,
    };
    rules.evaluate(&facts).is_some_and(|rule| {
        rule.kind == RuleKind::Allow && matches!(rule.specifier, Specifier::Path(_))
    })
}

fn list_paths<'a>(paths: impl Iterator<Item = &'a PathBuf>) -> String {
    let shown: Vec<String> = paths
        .take(3)
        .map(|path| path.display().to_string())
        .collect();
    shown.join(", ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a test should fail loudly")]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn an_added_root_is_inside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let other = dir.path().join("other");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let (rules, _) = RuleSet::new(std::iter::empty());
        let gate = PermissionGate::new(
            PermissionMode::Default,
            rules,
            vec![project.clone()],
            project.clone(),
            dir.path().join("home"),
        );
        assert!(!gate.inside_workspace(&other.join("notes.txt")));
        gate.add_workspace_root(other.clone());
        gate.add_workspace_root(other.clone());
        assert!(gate.inside_workspace(&other.join("notes.txt")));
        assert_eq!(gate.workspace_roots(), vec![project, other]);
    }
}
