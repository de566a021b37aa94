//! Hooks that a program driving cairn registered, answered by that program instead of a
//! command: the Agent SDKs' hook callbacks (`initialize`'s `hooks`, each matcher with its
//! `hookCallbackIds`). They run beside the command hooks of the same event, get the same
//! input, and answer in the same JSON contract.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;

use super::config::{DEFAULT_TIMEOUT, Matcher, regex_problem};
use super::event::HookEvent;

/// What a [`HookCallback`] returns: the hook's JSON answer, or why it could not be had.
pub type CallbackFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, String>> + Send + 'a>>;

/// Who answers callback hooks: the face that registered them (the SDK face sends a
/// `hook_callback` control request and waits for its response).
pub trait HookCallback: Send + Sync + std::fmt::Debug {
    /// Calls the hook `callback_id` with the event's `input` (what a command hook reads on
    /// stdin). Returns its answer in the hook JSON contract (`continue`, `decision`,
    /// `hookSpecificOutput`, …), or why the answer could not be had.
    fn call<'a>(
        &'a self,
        callback_id: &'a str,
        input: &'a Value,
        tool_use_id: Option<&'a str>,
    ) -> CallbackFuture<'a>;
}

/// The callback hooks of a session, by event and matcher.
///
/// ```
/// use cairn_policy::hooks::CallbackHooks;
///
/// let (hooks, problems) = CallbackHooks::from_registration(&serde_json::json!({
///     "PreToolUse": [{ "matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 5 }]
/// }));
/// assert!(problems.is_empty());
/// assert!(!hooks.is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct CallbackHooks {
    events: BTreeMap<HookEvent, Vec<CallbackGroup>>,
}

#[derive(Debug, Clone)]
struct CallbackGroup {
    matcher: Matcher,
    ids: Vec<String>,
    timeout: Duration,
}

impl CallbackHooks {
    /// Reads a registration in the Agent SDKs' shape: `{"PreToolUse": [{"matcher": "Bash",
    /// "hookCallbackIds": ["hook_0"], "timeout": 5}]}` (`null` registers nothing). What is
    /// malformed is skipped and reported, one message each, naming where it is.
    pub fn from_registration(value: &Value) -> (CallbackHooks, Vec<String>) {
        let mut hooks = CallbackHooks::default();
        let mut problems = Vec::new();
        let events = match value {
            Value::Null => return (hooks, problems),
            Value::Object(events) => events,
            _ => {
                problems.push("hooks: expected an object of event names".to_owned());
                return (hooks, problems);
            }
        };
        for (name, groups) in events {
            let Some(event) = HookEvent::from_name(name) else {
                problems.push(format!("hooks.{name}: unknown or unsupported hook event"));
                continue;
            };
            let Some(groups) = groups.as_array() else {
                problems.push(format!("hooks.{name}: expected an array of matchers"));
                continue;
            };
            for (index, group) in groups.iter().enumerate() {
                let place = format!("hooks.{name}[{index}]");
                match parse_group(group) {
                    Ok(group) => hooks.events.entry(event).or_default().push(group),
                    Err(problem) => problems.push(format!("{place}: {problem}")),
                }
            }
        }
        (hooks, problems)
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.events.values().all(Vec::is_empty)
    }

    pub(super) fn has_hooks(&self, event: HookEvent) -> bool {
        self.events
            .get(&event)
            .is_some_and(|groups| !groups.is_empty())
    }

    /// The callbacks to call for `event` and `subject`, each id once, with its timeout.
    pub(super) fn matching(
        &self,
        event: HookEvent,
        subject: Option<&str>,
    ) -> Vec<(&str, Duration)> {
        let mut seen = std::collections::HashSet::new();
        self.events
            .get(&event)
            .into_iter()
            .flatten()
            .filter(|group| group.matcher.matches(subject))
            .flat_map(|group| group.ids.iter().map(|id| (id.as_str(), group.timeout)))
            .filter(|(id, _)| seen.insert(*id))
            .collect()
    }
}

fn parse_group(group: &Value) -> Result<CallbackGroup, String> {
    let matcher = match group.get("matcher") {
        None | Some(Value::Null) => Matcher::Any,
        Some(Value::String(raw)) => Matcher::parse(raw).map_err(|error| {
            format!(
                "matcher: invalid regular expression {raw:?}: {}",
                regex_problem(&error)
            )
        })?,
        Some(_) => return Err("matcher: expected a string".to_owned()),
    };
    let ids = group
        .get("hookCallbackIds")
        .and_then(Value::as_array)
        .ok_or("missing \"hookCallbackIds\" (an array of callback ids)")?
        .iter()
        .map(|id| {
            id.as_str()
                .map(str::to_owned)
                .ok_or("hookCallbackIds: expected strings")
        })
        .collect::<Result<Vec<_>, _>>()?;
    let timeout = match group.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT,
        Some(value) => value
            .as_f64()
            .filter(|seconds| *seconds > 0.0)
            .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
            .ok_or("timeout: expected a positive number of seconds")?,
    };
    Ok(CallbackGroup {
        matcher,
        ids,
        timeout,
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn callbacks_match_as_command_hooks_do_and_bad_groups_are_named() {
        let (hooks, problems) = CallbackHooks::from_registration(&json!({
            "PreToolUse": [
                {"matcher": "Bash", "hookCallbackIds": ["hook_0", "hook_1"], "timeout": 2},
                {"matcher": null, "hookCallbackIds": ["hook_1", "hook_2"]},
                {"matcher": "Bash", "hookCallbackIds": "hook_3"}
            ],
            "Nonsense": []
        }));
        assert_eq!(
            problems,
            vec![
                "hooks.Nonsense: unknown or unsupported hook event".to_owned(),
                "hooks.PreToolUse[2]: missing \"hookCallbackIds\" (an array of callback ids)"
                    .to_owned(),
            ]
        );
        assert_eq!(
            hooks.matching(HookEvent::PreToolUse, Some("Bash")),
            vec![
                ("hook_0", Duration::from_secs(2)),
                ("hook_1", Duration::from_secs(2)),
                ("hook_2", DEFAULT_TIMEOUT),
            ]
        );
        assert_eq!(
            hooks.matching(HookEvent::PreToolUse, Some("Write")),
            vec![("hook_1", DEFAULT_TIMEOUT), ("hook_2", DEFAULT_TIMEOUT)]
        );
        assert!(!hooks.has_hooks(HookEvent::PostToolUse));
    }
}
