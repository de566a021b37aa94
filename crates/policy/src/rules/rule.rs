//! One permission rule: its text, where it was written, and its parsed form.

use std::fmt;
use std::path::PathBuf;

use super::command_pattern::CommandPattern;
use super::domain_pattern::DomainPattern;
use super::path_pattern::PathPattern;
use super::skill_pattern::SkillPattern;
use super::tool_selector::{EDIT_TOOLS, READ_TOOLS, ToolSelector};

/// Which list a rule came from: `permissions.allow`, `permissions.ask` or `permissions.deny`.
///
/// Precedence does not depend on the order of rules: any matching deny rule wins, then any
/// matching ask rule, then allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleKind {
    /// A matching call runs without a question.
    Allow,
    /// A matching call is asked about, even where the mode or an allow rule would let it run.
    Ask,
    /// A matching call is refused, whatever else matches.
    Deny,
}

impl RuleKind {
    /// The settings key the rule is listed under: `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Allow => "allow",
            RuleKind::Ask => "ask",
            RuleKind::Deny => "deny",
        }
    }
}

impl fmt::Display for RuleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a rule was written, which decides what a `/path` pattern in it means.
///
/// `source` names the place for messages (a settings file's path, or a flag such as
/// `--allowedTools`). `base_dir` is where a pattern with one leading slash (`Edit(/src/**)`) is
/// anchored. Following Claude Code, that is the directory tied to the settings source:
///
/// | source                                      | `base_dir`                                    |
/// |---------------------------------------------|-----------------------------------------------|
/// | `<project>/.claude/settings.json`           | `<project>`, the directory holding `.claude`  |
/// | `<project>/.claude/settings.local.json`     | the directory cairn was started in            |
/// | `~/.claude/settings.json` (user settings)   | `~/.claude`, *not* `~`: `Read(/secrets/**)` there guards `~/.claude/secrets` |
/// | `--allowedTools`, `--settings`, the session | the working directory                         |
///
/// Relative patterns (`src/**`, `./.env`) do not use `base_dir`: they are anchored at the
/// working directory of the call ([`CallFacts::cwd`](super::CallFacts::cwd)), and `~/` and `//`
/// patterns at the home directory and the filesystem root, wherever the rule was written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RuleOrigin {
    /// Where the rule was written, for messages: a file's path or a flag's name.
    pub source: String,
    /// Where a pattern with one leading slash is anchored (see the table above).
    pub base_dir: PathBuf,
}

impl RuleOrigin {
    /// The origin of rules written in `source`, anchored at `base_dir`.
    pub fn new(source: impl Into<String>, base_dir: impl Into<PathBuf>) -> RuleOrigin {
        RuleOrigin {
            source: source.into(),
            base_dir: base_dir.into(),
        }
    }
}

/// A rule that did not parse. It is left out of the [`RuleSet`](super::RuleSet), so a broken
/// rule never widens (or narrows) what is allowed; it is reported instead.
///
/// Displays as `<source>: permission rule "<text>": <message>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// The rule as written.
    pub text: String,
    /// Where it was written ([`RuleOrigin::source`]).
    pub source: String,
    /// What is wrong with it and, where there is one, the fix.
    pub message: String,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: permission rule \"{}\": {}",
            self.source, self.text, self.message
        )
    }
}

impl std::error::Error for RuleError {}

/// One permission rule, parsed: `Bash`, `Bash(npm run test:*)`, `Edit(src/**)`,
/// `WebFetch(domain:example.com)`, `mcp__github__get_issue`.
///
/// Two rules are equal when their kind, text and origin are: the parsed form follows from
/// those.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The list it came from.
    pub kind: RuleKind,
    /// The rule as written (`Bash(npm run test:*)`), shown in messages and saved as is.
    pub text: String,
    /// Where it was written.
    pub origin: RuleOrigin,
    pub(crate) tools: ToolSelector,
    pub(crate) specifier: Specifier,
}

impl PartialEq for Rule {
    fn eq(&self, other: &Rule) -> bool {
        self.kind == other.kind && self.text == other.text && self.origin == other.origin
    }
}

impl Eq for Rule {}

/// What a rule says inside its parentheses, by the tool's kind of specifier.
#[derive(Debug, Clone)]
pub(crate) enum Specifier {
    /// No parentheses (or `Bash(*)`): every call of the tools.
    Every,
    Command(CommandPattern),
    Path(PathPattern),
    Domain(DomainPattern),
    Skill(SkillPattern),
}

impl Rule {
    /// Parses one rule's text.
    ///
    /// ```
    /// use cairn_policy::rules::{Rule, RuleKind, RuleOrigin};
    ///
    /// let origin = RuleOrigin::new("--allowedTools", "/work");
    /// let error = Rule::parse(RuleKind::Allow, "Bash(", origin).map(|_| ()).unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "--allowedTools: permission rule \"Bash(\": the closing parenthesis is missing",
    /// );
    /// ```
    pub fn parse(kind: RuleKind, text: &str, origin: RuleOrigin) -> Result<Rule, RuleError> {
        match parse_parts(kind, text) {
            Ok((tools, specifier)) => Ok(Rule {
                kind,
                text: text.to_owned(),
                origin,
                tools,
                specifier,
            }),
            Err(message) => Err(RuleError {
                text: text.to_owned(),
                source: origin.source,
                message,
            }),
        }
    }
}

fn parse_parts(kind: RuleKind, text: &str) -> Result<(ToolSelector, Specifier), String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("the rule is empty; write a tool name such as `Bash`".to_owned());
    }
    let (name, spec) = match trimmed.split_once('(') {
        None if trimmed.contains(')') => {
            return Err("there is a `)` without an opening parenthesis".to_owned());
        }
        None => (trimmed, None),
        Some((name, rest)) => match rest.strip_suffix(')') {
            Some(spec) => (name, Some(spec)),
            None if rest.contains(')') => {
                return Err("there is text after the closing parenthesis".to_owned());
            }
            None => return Err("the closing parenthesis is missing".to_owned()),
        },
    };
    let tools = ToolSelector::parse(name)?;
    let Some(spec) = spec else {
        return Ok((tools, Specifier::Every));
    };
    let spec = spec.trim();
    if spec.is_empty() {
        return Err(format!(
            "the parentheses are empty; write `{name}` to match every call of the tool"
        ));
    }
    let specifier = match tools.name() {
        _ if name.starts_with("mcp__") => {
            return Err(format!(
                "MCP rules take no parentheses; write `{name}` for the tools it names"
            ));
        }
        None => return Err(format!("`{name}` takes no specifier")),
        Some("Bash") if spec == "*" => Specifier::Every,
        Some("Bash") => Specifier::Command(CommandPattern::parse(spec)?),
        Some("Read" | "Edit") => Specifier::Path(PathPattern::parse(spec, kind)?),
        Some("WebFetch") => Specifier::Domain(DomainPattern::parse(spec)?),
        Some("Skill") => Specifier::Skill(SkillPattern::parse(spec)?),
        Some(tool) if EDIT_TOOLS.contains(&tool) => {
            return Err(format!(
                "path rules are written on `Edit`, which governs {}; write `Edit({spec})`",
                EDIT_TOOLS.join(", ")
            ));
        }
        Some(tool) if READ_TOOLS.contains(&tool) => {
            return Err(format!(
                "path rules are written on `Read`, which governs {}; write `Read({spec})`",
                READ_TOOLS.join(", ")
            ));
        }
        Some(tool) if spec.starts_with("domain:") => {
            return Err(format!(
                "`domain:` only applies to WebFetch; write `WebFetch({spec})`, or `{tool}` to \
                 match every call of {tool}"
            ));
        }
        Some(tool) => {
            return Err(format!(
                "`{tool}` takes no specifier; write `{tool}` to match every call of it"
            ));
        }
    };
    Ok((tools, specifier))
}
