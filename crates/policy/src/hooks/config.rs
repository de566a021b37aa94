//! The `hooks` section of settings: events, matchers and commands, read leniently.

use cairn_protocol::json_kind;
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use regex::Regex;
use serde_json::Value;

use super::event::HookEvent;

/// How long a hook may run when its settings give no `timeout`.
pub(super) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The hooks that settings attach to each event.
///
/// Built with [`HookConfig::from_settings`] from the merged settings' `hooks` value, in which
/// the caller has already concatenated the lists of every settings level.
///
/// ```
/// use cairn_policy::hooks::HookConfig;
///
/// let (config, problems) = HookConfig::from_settings(&serde_json::json!({
///     "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "./check.sh" }] }]
/// }));
/// assert!(problems.is_empty());
/// assert!(!config.is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct HookConfig {
    events: BTreeMap<HookEvent, Vec<MatcherGroup>>,
}

/// Commands that run when the matcher accepts the event's subject.
#[derive(Debug, Clone)]
struct MatcherGroup {
    matcher: Matcher,
    hooks: Vec<CommandHook>,
}

/// One command to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CommandHook {
    /// The command as configured, trimmed; given to `sh -c`.
    pub(super) command: String,
    pub(super) timeout: Duration,
}

/// Which subjects (tool names for tool events, `source`, `trigger` and the like for the
/// others) a group of hooks applies to, with Claude Code's rules.
#[derive(Debug, Clone)]
pub(super) enum Matcher {
    /// `*`, an empty string, or no matcher at all.
    Any,
    /// Only letters, digits, `_` and `|`: exact names, separated by `|`. Spaces around the
    /// names are tolerated (Claude Code would take `Edit | Write` for a regex matching
    /// neither tool, which no one means).
    Names(Vec<String>),
    /// Anything else: a regular expression searched for anywhere in the subject, as
    /// JavaScript's `RegExp.test` does in Claude Code, so `Edit.*` also matches
    /// `NotebookEdit`; anchor it (`^Edit`) to prevent that.
    Pattern(Regex),
}

impl Matcher {
    pub(super) fn parse(raw: &str) -> Result<Matcher, regex::Error> {
        let raw = raw.trim();
        if raw.is_empty() || raw == "*" {
            return Ok(Matcher::Any);
        }
        let is_name_list = raw
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|' || c == ' ');
        if is_name_list {
            let names = raw
                .split('|')
                .map(str::trim)
                .filter(|name| !name.is_empty())
                .map(str::to_owned)
                .collect();
            return Ok(Matcher::Names(names));
        }
        Regex::new(raw).map(Matcher::Pattern)
    }

    /// Whether the group applies; events without a subject (a prompt, a stop) match always,
    /// as Claude Code ignores matchers there.
    pub(super) fn matches(&self, subject: Option<&str>) -> bool {
        let Some(subject) = subject else {
            return true;
        };
        // A tool known by two names (`TaskStop`, `KillShell`) matches a matcher of either.
        crate::rules::names_of(subject).any(|subject| match self {
            Matcher::Any => true,
            Matcher::Names(names) => names.iter().any(|name| name == subject),
            Matcher::Pattern(pattern) => pattern.is_match(subject),
        })
    }
}

impl HookConfig {
    /// Parses the merged settings' `hooks` value (`null` when settings have none).
    ///
    /// Malformed entries are skipped and reported, one message each, naming where they are
    /// and what is wrong (`hooks.PreToolUse[0].hooks[1]: unknown type "script" (expected
    /// "command")`); the rest of the configuration still works. A bad `timeout` alone does
    /// not drop its hook: it runs with the default of 60 s, since a guard that silently
    /// stopped running over a typo would be worse.
    pub fn from_settings(hooks: &Value) -> (HookConfig, Vec<String>) {
        let mut config = HookConfig::default();
        let mut problems = Vec::new();
        let events = match hooks {
            Value::Null => return (config, problems),
            Value::Object(events) => events,
            other => {
                problems.push(format!(
                    "hooks: expected an object of event names, found {}",
                    json_kind(other)
                ));
                return (config, problems);
            }
        };
        for (name, groups) in events {
            let Some(event) = HookEvent::from_name(name) else {
                let known: Vec<&str> = HookEvent::ALL.iter().map(|e| e.as_str()).collect();
                problems.push(format!(
                    "hooks.{name}: unknown or unsupported hook event (cairn supports {})",
                    known.join(", ")
                ));
                continue;
            };
            let Value::Array(groups) = groups else {
                problems.push(format!(
                    "hooks.{name}: expected an array of matcher groups, found {}",
                    json_kind(groups)
                ));
                continue;
            };
            for (index, group) in groups.iter().enumerate() {
                let place = format!("hooks.{name}[{index}]");
                if let Some(group) = parse_group(&place, group, &mut problems) {
                    config.events.entry(event).or_default().push(group);
                }
            }
        }
        (config, problems)
    }

    /// Whether no event has any hook.
    pub fn is_empty(&self) -> bool {
        self.events.values().all(|groups| groups.is_empty())
    }

    /// Whether `event` has any hook at all, whatever its matcher: lets a caller skip
    /// building an event's input when nothing would read it.
    pub fn has_hooks(&self, event: HookEvent) -> bool {
        self.events
            .get(&event)
            .is_some_and(|groups| !groups.is_empty())
    }

    /// The commands to run for `event` and `subject`, in configuration order, each command
    /// string once (the first occurrence, with its timeout).
    pub(super) fn matching(&self, event: HookEvent, subject: Option<&str>) -> Vec<&CommandHook> {
        let mut seen = HashSet::new();
        self.events
            .get(&event)
            .into_iter()
            .flatten()
            .filter(|group| group.matcher.matches(subject))
            .flat_map(|group| &group.hooks)
            .filter(|hook| seen.insert(hook.command.as_str()))
            .collect()
    }
}

fn parse_group(place: &str, group: &Value, problems: &mut Vec<String>) -> Option<MatcherGroup> {
    let Value::Object(group) = group else {
        problems.push(format!(
            "{place}: expected an object with \"matcher\" and \"hooks\", found {}",
            json_kind(group)
        ));
        return None;
    };
    let matcher = match group.get("matcher") {
        None | Some(Value::Null) => Matcher::Any,
        Some(Value::String(raw)) => match Matcher::parse(raw) {
            Ok(matcher) => matcher,
            Err(error) => {
                problems.push(format!(
                    "{place}.matcher: invalid regular expression {raw:?}: {}",
                    regex_problem(&error)
                ));
                return None;
            }
        },
        Some(other) => {
            problems.push(format!(
                "{place}.matcher: expected a string, found {}",
                json_kind(other)
            ));
            return None;
        }
    };
    let entries = match group.get("hooks") {
        Some(Value::Array(entries)) => entries,
        None => {
            problems.push(format!("{place}: missing \"hooks\" (an array of commands)"));
            return None;
        }
        Some(other) => {
            problems.push(format!(
                "{place}.hooks: expected an array of commands, found {}",
                json_kind(other)
            ));
            return None;
        }
    };
    let hooks: Vec<CommandHook> = entries
        .iter()
        .enumerate()
        .filter_map(|(index, entry)| {
            parse_hook(&format!("{place}.hooks[{index}]"), entry, problems)
        })
        .collect();
    (!hooks.is_empty()).then_some(MatcherGroup { matcher, hooks })
}

fn parse_hook(place: &str, entry: &Value, problems: &mut Vec<String>) -> Option<CommandHook> {
    let Value::Object(entry) = entry else {
        problems.push(format!(
            "{place}: expected an object with \"type\" and \"command\", found {}",
            json_kind(entry)
        ));
        return None;
    };
    match entry.get("type") {
        Some(Value::String(kind)) if kind == "command" => {}
        // Claude Code's other kinds of hook; cairn has no way to run them yet.
        Some(Value::String(kind))
            if ["prompt", "agent", "http", "mcp_tool"].contains(&kind.as_str()) =>
        {
            problems.push(format!(
                "{place}: hooks of type {kind:?} are not supported by cairn (expected \"command\")"
            ));
            return None;
        }
        Some(Value::String(kind)) => {
            problems.push(format!(
                "{place}: unknown type {kind:?} (expected \"command\")"
            ));
            return None;
        }
        None => {
            problems.push(format!("{place}: missing \"type\" (expected \"command\")"));
            return None;
        }
        Some(other) => {
            problems.push(format!(
                "{place}.type: expected the string \"command\", found {}",
                json_kind(other)
            ));
            return None;
        }
    }
    let command = match entry.get("command") {
        Some(Value::String(command)) if !command.trim().is_empty() => command.trim().to_owned(),
        Some(Value::String(_)) => {
            problems.push(format!("{place}.command: is empty"));
            return None;
        }
        None => {
            problems.push(format!("{place}: missing \"command\""));
            return None;
        }
        Some(other) => {
            problems.push(format!(
                "{place}.command: expected a string, found {}",
                json_kind(other)
            ));
            return None;
        }
    };
    let timeout = match entry.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT,
        Some(value) => match value.as_f64().and_then(positive_seconds) {
            Some(timeout) => timeout,
            None => {
                problems.push(format!(
                    "{place}.timeout: expected a positive number of seconds, found {value}; \
                     using the default of {} s",
                    DEFAULT_TIMEOUT.as_secs()
                ));
                DEFAULT_TIMEOUT
            }
        },
    };
    Some(CommandHook { command, timeout })
}

fn positive_seconds(seconds: f64) -> Option<Duration> {
    if seconds > 0.0 {
        Duration::try_from_secs_f64(seconds).ok()
    } else {
        None
    }
}

/// The one line of a regex error that says what is wrong (its `Display` draws a caret
/// diagram over several lines).
pub(super) fn regex_problem(error: &regex::Error) -> String {
    let text = error.to_string();
    text.lines()
        .find_map(|line| line.trim().strip_prefix("error: "))
        .map_or_else(
            || text.split_whitespace().collect::<Vec<_>>().join(" "),
            str::to_owned,
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(matcher: &str, subject: &str) -> bool {
        Matcher::parse(matcher).is_ok_and(|m| m.matches(Some(subject)))
    }

    #[test]
    fn matcher_forms_follow_claude_code() {
        assert!(matches("Edit|Write", "Write"));
        assert!(matches("Edit | Write", "Edit"));
        assert!(!matches("Edit|Write", "NotebookEdit"));
        assert!(!matches("Bash", "BashOutput"));
        assert!(matches("mcp__.*", "mcp__github__create_issue"));
        assert!(!matches("mcp__.*", "Read"));
        assert!(matches("Notebook.*", "NotebookEdit"));
        assert!(matches("*", "Anything"));
        assert!(matches("", "Anything"));
        assert!(matches("^Edit$", "Edit"));
        assert!(!matches("^Edit$", "NotebookEdit"));
        assert!(matches("mcp__my-server__tool", "mcp__my-server__tool"));
        assert!(matches("KillShell", "TaskStop"));
        assert!(matches("TaskStop", "KillShell"));
        assert!(matches("^Kill", "TaskStop"));
        assert!(!matches("Task", "TaskStop"));
    }

    #[test]
    fn no_subject_matches_every_group() {
        assert!(Matcher::Names(vec!["Bash".into()]).matches(None));
    }

    #[test]
    fn regex_problem_is_one_line() {
        let Err(error) = Matcher::parse("(unclosed") else {
            panic!("\"(unclosed\" should not compile");
        };
        assert_eq!(regex_problem(&error), "unclosed group");
    }
}
