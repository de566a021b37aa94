//! All the rules in force, and the one that decides a call.

use std::path::{Path, PathBuf};

use super::domain_pattern::host_of_url;
use super::path_pattern::{Anchors, normalize};
use super::rule::{Rule, RuleError, RuleKind, RuleOrigin, Specifier};
use super::skill_pattern::skill_of_input;
use super::suggest;

/// What the rules need to know about one tool call.
///
/// The gate fills it in from the tool's input: the paths it touches, and for Bash the simple
/// commands the command line parses into.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    /// The canonical tool name: `Bash`, `Read`, `Edit`, `Write`, `MultiEdit`, `NotebookEdit`,
    /// `Glob`, `Grep`, `LS`, `WebFetch`, `mcp__server__tool`, ...
    pub tool: &'a str,
    /// The tool's input; WebFetch's `url` and Bash's `command` are read from it.
    pub input: &'a serde_json::Value,
    /// The absolute paths the call touches; for Glob, Grep and LS, the directory searched.
    /// Relative ones are taken against `cwd`, and `.`/`..` are resolved by name.
    pub paths: &'a [PathBuf],
    /// For Bash: each simple command of the (already parsed) command line, normalised as its
    /// words joined by single spaces, e.g. `["git status", "rm -rf /tmp/x"]`. A compound
    /// command is allowed by allow rules only if EVERY simple command matches some allow rule;
    /// it is denied if ANY matches a deny rule, and asks if any matches an ask rule.
    ///
    /// When it is `None` (or empty), `input.command` is judged instead: deny and ask rules are
    /// tried on it as a whole, and allow rules with a specifier only if it is one plain command
    /// (no operators, quotes, substitutions or redirections, which could hide a second
    /// command); otherwise only a plain `Bash` rule allows it.
    pub bash_commands: Option<&'a [String]>,
    /// The home directory, for `~/` patterns.
    pub home: &'a Path,
    /// The session's working directory, for relative patterns (`src/**`, `./.env`).
    pub cwd: &'a Path,
}

/// The permission rules from every settings file and flag, ready to judge calls.
///
/// ```
/// use cairn_policy::rules::{CallFacts, RuleKind, RuleOrigin, RuleSet};
/// use std::path::Path;
///
/// let origin = RuleOrigin::new("/p/.claude/settings.json", "/p");
/// let (rules, errors) = RuleSet::new([
///     (RuleKind::Allow, "Bash(git *)".to_owned(), origin.clone()),
///     (RuleKind::Deny, "Bash(git push:*)".to_owned(), origin),
/// ]);
/// assert!(errors.is_empty());
///
/// let commands = ["git push origin main".to_owned()];
/// let input = serde_json::json!({"command": "git push origin main"});
/// let call = CallFacts {
///     tool: "Bash",
///     input: &input,
///     paths: &[],
///     bash_commands: Some(&commands),
///     home: Path::new("/home/u"),
///     cwd: Path::new("/p"),
/// };
/// let decided = rules.evaluate(&call).map(|rule| (rule.kind, rule.text.as_str()));
/// assert_eq!(decided, Some((RuleKind::Deny, "Bash(git push:*)")));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

impl RuleSet {
    /// Parses every rule; malformed ones are returned as errors and ignored (they never widen
    /// access).
    pub fn new(
        rules: impl IntoIterator<Item = (RuleKind, String, RuleOrigin)>,
    ) -> (RuleSet, Vec<RuleError>) {
        let mut parsed = Vec::new();
        let mut errors = Vec::new();
        for (kind, text, origin) in rules {
            match Rule::parse(kind, &text, origin) {
                Ok(rule) => parsed.push(rule),
                Err(error) => errors.push(error),
            }
        }
        (RuleSet { rules: parsed }, errors)
    }

    /// Whether no rule parsed.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rules, in the order they were given.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Adds a rule after the others (order matters only for which allow rule is reported).
    pub fn push(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    /// Removes every rule spelled `text` (surrounding spaces aside), of any kind, and returns
    /// them.
    pub fn remove(&mut self, text: &str) -> Vec<Rule> {
        let text = text.trim();
        let (removed, kept) = std::mem::take(&mut self.rules)
            .into_iter()
            .partition(|rule| rule.text.trim() == text);
        self.rules = kept;
        removed
    }

    /// The deciding rule for a call: any matching deny wins, then ask, then allow. None if no
    /// rule matches.
    ///
    /// A deny or ask rule matches when any part of the call does (one simple command, one
    /// path). An allow rule decides only when every part is covered: every simple command and
    /// every path must match some allow rule. The rule returned then is the first allow rule
    /// that covers the whole call alone, or else the one covering its first part.
    pub fn evaluate(&self, call: &CallFacts<'_>) -> Option<&Rule> {
        let facts = Facts::of(call);
        for kind in [RuleKind::Deny, RuleKind::Ask] {
            let found = self
                .rules
                .iter()
                .find(|rule| rule.kind == kind && facts.any_part_matches(rule));
            if found.is_some() {
                return found;
            }
        }
        self.allowing_rule(&facts)
    }

    /// A rule text that would allow this call if added (for "don't ask again" and for the
    /// message in `-p` mode), e.g. `Bash(npm run test:*)`, `Edit(src/**)` or `Read`.
    ///
    /// For a compound command this covers its first simple command only: no one rule covers
    /// them all; see [`RuleSet::suggest_allow_rules`].
    pub fn suggest_allow_rule(call: &CallFacts<'_>) -> String {
        suggest::allow_rules(call)
            .into_iter()
            .next()
            .unwrap_or_else(|| call.tool.to_owned())
    }

    /// The rule texts that together would allow this call if added: one per distinct simple
    /// command of a compound Bash command, otherwise the one [`RuleSet::suggest_allow_rule`]
    /// gives.
    pub fn suggest_allow_rules(call: &CallFacts<'_>) -> Vec<String> {
        suggest::allow_rules(call)
    }

    fn allowing_rule(&self, facts: &Facts<'_>) -> Option<&Rule> {
        let allow: Vec<&Rule> = self
            .rules
            .iter()
            .filter(|rule| rule.kind == RuleKind::Allow && rule.tools.governs(facts.call.tool))
            .collect();
        if let Some(whole) = allow.iter().find(|rule| facts.covers_whole(rule)) {
            return Some(whole);
        }
        let parts = facts.parts();
        if parts.is_empty() {
            return None;
        }
        let mut first = None;
        for part in parts {
            let rule = allow.iter().find(|rule| facts.covers_part(rule, part))?;
            first.get_or_insert(*rule);
        }
        first
    }
}

/// One piece of a call that an allow rule must cover.
#[derive(Debug, Clone, Copy)]
enum Part<'f> {
    Command(&'f str),
    Path(&'f Path),
}

/// A call's facts, normalised once for all the rules.
struct Facts<'a> {
    call: &'a CallFacts<'a>,
    home: PathBuf,
    cwd: PathBuf,
    paths: Vec<PathBuf>,
    /// The simple commands allow rules must cover: the parsed ones, else `input.command` when
    /// it is plainly a single command, else none.
    commands: Vec<String>,
    /// `input.command` with its whitespace collapsed, for deny and ask rules.
    whole_command: Option<String>,
    host: Option<String>,
    /// The skill a `Skill` call loads.
    skill: Option<String>,
}

impl<'a> Facts<'a> {
    fn of(call: &'a CallFacts<'a>) -> Facts<'a> {
        let cwd = normalize(call.cwd, Path::new("/"));
        let home = normalize(call.home, &cwd);
        let paths = call.paths.iter().map(|p| normalize(p, &cwd)).collect();
        let whole_command = call
            .input
            .get("command")
            .and_then(serde_json::Value::as_str)
            .map(|command| command.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|command| !command.is_empty());
        let host = call
            .input
            .get("url")
            .and_then(serde_json::Value::as_str)
            .and_then(host_of_url);
        let skill = (call.tool == "Skill")
            .then(|| skill_of_input(call.input))
            .flatten();
        let commands = match call.bash_commands {
            Some(commands) if !commands.is_empty() => commands.to_vec(),
            _ => whole_command
                .iter()
                .filter(|command| is_plain_command(command))
                .cloned()
                .collect(),
        };
        Facts {
            call,
            home,
            cwd,
            paths,
            commands,
            whole_command,
            host,
            skill,
        }
    }

    fn anchors<'f>(&'f self, base_dir: &'f Path) -> Anchors<'f> {
        Anchors {
            home: &self.home,
            cwd: &self.cwd,
            base_dir,
        }
    }

    /// Deny and ask: the rule governs the tool and matches some part of the call.
    fn any_part_matches(&self, rule: &Rule) -> bool {
        if !rule.tools.governs(self.call.tool) {
            return false;
        }
        match &rule.specifier {
            Specifier::Every => true,
            Specifier::Command(pattern) => {
                self.commands.iter().any(|c| pattern.matches(c))
                    || self
                        .whole_command
                        .as_deref()
                        .is_some_and(|c| pattern.matches(c))
            }
            Specifier::Path(pattern) => {
                let base_dir = normalize(&rule.origin.base_dir, &self.cwd);
                let anchors = self.anchors(&base_dir);
                self.paths.iter().any(|p| pattern.matches(p, anchors))
            }
            Specifier::Domain(pattern) => self.host.as_deref().is_some_and(|h| pattern.matches(h)),
            Specifier::Skill(pattern) => self.skill.as_deref().is_some_and(|s| pattern.matches(s)),
        }
    }

    /// Allow: the rule alone covers every part of the call (the caller checked the tool).
    fn covers_whole(&self, rule: &Rule) -> bool {
        match &rule.specifier {
            Specifier::Every => true,
            Specifier::Command(pattern) => {
                !self.commands.is_empty() && self.commands.iter().all(|c| pattern.matches(c))
            }
            Specifier::Path(pattern) => {
                let base_dir = normalize(&rule.origin.base_dir, &self.cwd);
                let anchors = self.anchors(&base_dir);
                !self.paths.is_empty() && self.paths.iter().all(|p| pattern.matches(p, anchors))
            }
            Specifier::Domain(pattern) => self.host.as_deref().is_some_and(|h| pattern.matches(h)),
            Specifier::Skill(pattern) => self.skill.as_deref().is_some_and(|s| pattern.matches(s)),
        }
    }

    /// The parts allow rules may cover between them: simple commands for Bash, else paths.
    fn parts(&self) -> Vec<Part<'_>> {
        if self.call.tool == "Bash" {
            self.commands
                .iter()
                .map(|c| Part::Command(c.as_str()))
                .collect()
        } else {
            self.paths.iter().map(|p| Part::Path(p)).collect()
        }
    }

    fn covers_part(&self, rule: &Rule, part: Part<'_>) -> bool {
        match (&rule.specifier, part) {
            (Specifier::Every, _) => true,
            (Specifier::Command(pattern), Part::Command(command)) => pattern.matches(command),
            (Specifier::Path(pattern), Part::Path(path)) => {
                let base_dir = normalize(&rule.origin.base_dir, &self.cwd);
                pattern.matches(path, self.anchors(&base_dir))
            }
            (
                Specifier::Command(_)
                | Specifier::Path(_)
                | Specifier::Domain(_)
                | Specifier::Skill(_),
                _,
            ) => false,
        }
    }
}

/// Whether an unparsed command line is certainly one simple command whose words are its
/// whitespace-separated parts: nothing that joins, substitutes, redirects, quotes or escapes.
fn is_plain_command(command: &str) -> bool {
    !command.contains([
        ';', '&', '|', '<', '>', '$', '`', '(', ')', '{', '}', '\'', '"', '\\', '#', '=', '!', '\n',
    ])
}
