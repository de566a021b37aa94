//! What hooks answered: one hook's exit code and output read with Claude Code's contract, and
//! the answers of all the hooks of an event folded into one [`HookOutcome`].

use serde::Deserialize;
use serde_json::Value;

use super::config::CommandHook;
use super::event::{HookEvent, PlainStdout};
use super::process::{CAPTURE_LIMIT, Captured, Finished};

/// A hook's answer to whether a tool call may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookPermission {
    /// Run it without asking the user (permission rules that deny or ask still apply).
    Allow,
    /// Refuse it; the reason goes to the model.
    Deny,
    /// Ask the user, whatever the rules say; the reason is shown in the prompt.
    Ask,
}

impl HookPermission {
    /// Precedence when several hooks answer: deny over ask over allow.
    fn rank(self) -> u8 {
        match self {
            HookPermission::Allow => 0,
            HookPermission::Ask => 1,
            HookPermission::Deny => 2,
        }
    }
}

/// What the hooks of one event decided, together.
///
/// When several hooks answer: any block blocks (their messages joined, one per line, in
/// configuration order); for permissions deny beats ask beats allow (the reasons of the
/// hooks that gave the winning answer are joined); contexts, messages and warnings are all
/// kept; the last `updatedInput` in configuration order wins.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookOutcome {
    /// The hooks block: exit code 2 (with its stderr), `decision: "block"` (with its
    /// `reason`), or a permission denied (with its reason). What is blocked depends on the
    /// event ([`HookEvent::can_block`]); the text is for the model, except at
    /// `UserPromptSubmit` where it is for the user. At `PreToolUse` and `PermissionRequest`,
    /// a block always comes with [`HookPermission::Deny`] in [`HookOutcome::permission`].
    pub block: Option<String>,
    /// A permission decision for the tool call (`PreToolUse`, `PermissionRequest`), with the
    /// hooks' reason.
    pub permission: Option<(HookPermission, Option<String>)>,
    /// A replacement for the tool call's input (`PreToolUse`, `PermissionRequest`).
    pub updated_input: Option<Value>,
    /// Text to add to the model's context (`additionalContext`, or plain stdout at
    /// `UserPromptSubmit` and `SessionStart`).
    pub additional_context: Vec<String>,
    /// Messages for the user (`systemMessage`; stderr of an exit code 2 at events that
    /// cannot block).
    pub system_messages: Vec<String>,
    /// What went wrong running hooks: other non-zero exits (with their stderr), timeouts,
    /// commands that could not start, unreadable JSON output. Never fatal.
    pub warnings: Vec<String>,
    /// `continue: false`: the session should stop after this step, with `stopReason` for
    /// the user (not the model).
    pub stop: Option<String>,
    /// `suppressOutput: true`: keep the hooks' output out of the transcript view.
    pub suppress_output: bool,
}

impl HookOutcome {
    /// Folds one hook's result into the outcome.
    pub(super) fn absorb(&mut self, event: HookEvent, hook: &CommandHook, finished: Finished) {
        let name = HookName(&hook.command);
        match finished {
            Finished::Exited {
                status,
                stdout,
                stderr,
            } => match status.code() {
                Some(0) => self.absorb_success(event, name, &stdout),
                Some(2) => self.absorb_exit_two(event, name, &stderr),
                Some(code) => self.warnings.push(with_stderr(
                    format!("hook {name} ({event}) failed with exit code {code}"),
                    &stderr,
                )),
                None => self.warnings.push(with_stderr(
                    format!("hook {name} ({event}) was killed by a signal"),
                    &stderr,
                )),
            },
            Finished::TimedOut(timeout) => self.warnings.push(format!(
                "hook {name} ({event}) timed out after {} s and was stopped",
                timeout.as_secs_f64()
            )),
            Finished::Cancelled => self
                .warnings
                .push(format!("hook {name} ({event}) was cancelled")),
            Finished::Failed(error) => self
                .warnings
                .push(format!("hook {name} ({event}) could not run: {error}")),
        }
    }

    /// Folds a callback hook's answer into the outcome: its JSON read as a command hook's
    /// stdout is, or a warning when it could not be had.
    pub(super) fn absorb_callback(
        &mut self,
        event: HookEvent,
        callback_id: &str,
        answer: Result<Value, String>,
    ) {
        let name = HookName(callback_id);
        match answer.and_then(|value| {
            serde_json::from_value::<JsonReply>(value).map_err(|error| error.to_string())
        }) {
            Ok(reply) => self.absorb_reply(event, name, reply),
            Err(error) => self
                .warnings
                .push(format!("hook callback {name} ({event}) failed: {error}")),
        }
    }

    fn absorb_exit_two(&mut self, event: HookEvent, name: HookName<'_>, stderr: &Captured) {
        let text = stderr.text().trim().to_owned();
        if event.can_block() {
            let message = if text.is_empty() {
                format!("blocked by hook {name}")
            } else {
                text
            };
            self.add_block(event, message);
        } else if !text.is_empty() {
            self.system_messages.push(text);
        }
    }

    fn absorb_success(&mut self, event: HookEvent, name: HookName<'_>, stdout: &Captured) {
        let text = stdout.text();
        let trimmed = text.trim();
        if !trimmed.starts_with('{') {
            match event.plain_stdout() {
                PlainStdout::Context if !trimmed.is_empty() => {
                    self.additional_context.push(trimmed.to_owned());
                }
                PlainStdout::Context | PlainStdout::Ignored => {}
            }
            return;
        }
        if stdout.truncated {
            self.warnings.push(format!(
                "hook {name} ({event}) printed more than {} MiB of JSON; ignored it",
                CAPTURE_LIMIT / (1024 * 1024)
            ));
            return;
        }
        match serde_json::from_str::<JsonReply>(trimmed) {
            Ok(reply) => self.absorb_reply(event, name, reply),
            Err(error) => self.warnings.push(format!(
                "hook {name} ({event}) printed malformed JSON, ignored: {error}"
            )),
        }
    }

    fn absorb_reply(&mut self, event: HookEvent, name: HookName<'_>, reply: JsonReply) {
        if reply.keep_going == Some(false) {
            let reason = reply
                .stop_reason
                .unwrap_or_else(|| format!("stopped by hook {name}"));
            join_into(&mut self.stop, reason);
        }
        self.suppress_output |= reply.suppress_output.unwrap_or(false);
        if let Some(message) = reply.system_message {
            self.system_messages.push(message);
        }
        match reply.decision.as_deref() {
            None => {}
            Some("block") if event.can_block() => {
                let reason = reply
                    .reason
                    .clone()
                    .unwrap_or_else(|| format!("blocked by hook {name}"));
                self.add_block(event, reason);
            }
            Some("block") => self.warnings.push(format!(
                "hook {name} ({event}): \"decision\": \"block\" has no effect at {event}"
            )),
            // The legacy spelling of `permissionDecision: "allow"`; elsewhere it changes nothing.
            Some("approve") if event.decides_permission() => {
                self.add_permission(HookPermission::Allow, reply.reason.clone());
            }
            Some("approve") => {}
            Some(other) => self.warnings.push(format!(
                "hook {name} ({event}): unknown \"decision\" {other:?} (expected \"block\"), ignored"
            )),
        }
        if let Some(specific) = reply.hook_specific_output {
            self.absorb_specific(event, name, specific);
        }
    }

    fn absorb_specific(&mut self, event: HookEvent, name: HookName<'_>, specific: SpecificOutput) {
        if let Some(named) = specific.hook_event_name.as_deref()
            && named != event.as_str()
        {
            self.warnings.push(format!(
                "hook {name} ({event}): hookSpecificOutput.hookEventName is {named:?}, \
                 expected \"{event}\"; ignored"
            ));
            return;
        }
        if let Some(context) = specific.additional_context {
            self.additional_context.push(context);
        }
        let wants_permission = specific.permission_decision.is_some()
            || specific.decision.is_some()
            || specific.updated_input.is_some();
        if wants_permission && !event.decides_permission() {
            self.warnings.push(format!(
                "hook {name} ({event}): permission decisions and updatedInput have no effect at {event}, ignored"
            ));
            return;
        }
        if let Some(decision) = specific.permission_decision.as_deref() {
            let reason = specific.permission_decision_reason;
            match decision {
                "allow" => self.add_permission(HookPermission::Allow, reason),
                "ask" => self.add_permission(HookPermission::Ask, reason),
                "deny" => {
                    let message = reason.unwrap_or_else(|| format!("denied by hook {name}"));
                    self.add_block(event, message);
                }
                other => self.warnings.push(format!(
                    "hook {name} ({event}): unknown permissionDecision {other:?} \
                     (expected \"allow\", \"deny\" or \"ask\"), ignored"
                )),
            }
        }
        // `PermissionRequest` answers in its own shape: `decision: {behavior, message, …}`.
        if let Some(decision) = specific.decision {
            match decision.behavior.as_str() {
                "allow" => self.add_permission(HookPermission::Allow, decision.message),
                "deny" => {
                    let message = decision
                        .message
                        .unwrap_or_else(|| format!("denied by hook {name}"));
                    if decision.interrupt == Some(true) {
                        join_into(&mut self.stop, message.clone());
                    }
                    self.add_block(event, message);
                }
                other => self.warnings.push(format!(
                    "hook {name} ({event}): unknown decision.behavior {other:?} \
                     (expected \"allow\" or \"deny\"), ignored"
                )),
            }
            if let Some(input) = decision.updated_input {
                self.set_updated_input(event, name, input);
            }
        }
        if let Some(input) = specific.updated_input {
            self.set_updated_input(event, name, input);
        }
    }

    fn set_updated_input(&mut self, event: HookEvent, name: HookName<'_>, input: Value) {
        if input.is_object() {
            self.updated_input = Some(input);
        } else {
            self.warnings.push(format!(
                "hook {name} ({event}): updatedInput must be an object of tool arguments, ignored"
            ));
        }
    }

    /// A block; at the permission events it is also a denial, and vice versa.
    fn add_block(&mut self, event: HookEvent, message: String) {
        if event.decides_permission() {
            self.add_permission(HookPermission::Deny, Some(message.clone()));
        }
        join_into(&mut self.block, message);
    }

    fn add_permission(&mut self, permission: HookPermission, reason: Option<String>) {
        match &mut self.permission {
            Some((current, _)) if current.rank() > permission.rank() => {}
            Some((current, current_reason)) if *current == permission => {
                if let Some(reason) = reason {
                    join_into(current_reason, reason);
                }
            }
            _ => self.permission = Some((permission, reason)),
        }
    }
}

/// Appends `text` to `slot` on a line of its own.
fn join_into(slot: &mut Option<String>, text: String) {
    match slot {
        Some(existing) => {
            existing.push('\n');
            existing.push_str(&text);
        }
        None => *slot = Some(text),
    }
}

/// `message`, then the hook's stderr (trimmed, clipped) after a colon when it has any.
fn with_stderr(message: String, stderr: &Captured) -> String {
    const SHOWN: usize = 4000;
    let text = stderr.text();
    let text = text.trim();
    if text.is_empty() {
        return message;
    }
    match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{message}: {}…", &text[..cut]),
        None => format!("{message}: {text}"),
    }
}

/// A hook's command as messages name it: its first line, in backticks, clipped.
#[derive(Debug, Clone, Copy)]
struct HookName<'a>(&'a str);

impl std::fmt::Display for HookName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const SHOWN: usize = 80;
        let first_line = self.0.lines().next().unwrap_or_default();
        let cut = first_line.char_indices().nth(SHOWN).map(|(at, _)| at);
        match cut {
            Some(cut) => write!(f, "`{}…`", &first_line[..cut]),
            None if first_line.len() < self.0.len() => write!(f, "`{first_line}…`"),
            None => write!(f, "`{first_line}`"),
        }
    }
}

/// A hook's JSON answer on stdout. Fields cairn does not know are ignored, as Claude Code
/// keeps adding some.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsonReply {
    #[serde(rename = "continue")]
    keep_going: Option<bool>,
    stop_reason: Option<String>,
    suppress_output: Option<bool>,
    decision: Option<String>,
    reason: Option<String>,
    system_message: Option<String>,
    hook_specific_output: Option<SpecificOutput>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpecificOutput {
    hook_event_name: Option<String>,
    permission_decision: Option<String>,
    permission_decision_reason: Option<String>,
    updated_input: Option<Value>,
    additional_context: Option<String>,
    /// `PermissionRequest`'s answer.
    decision: Option<PermissionRequestDecision>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PermissionRequestDecision {
    behavior: String,
    message: Option<String>,
    updated_input: Option<Value>,
    interrupt: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_names_are_one_clipped_line() {
        assert_eq!(HookName("./check.sh").to_string(), "`./check.sh`");
        assert_eq!(HookName("a\nb").to_string(), "`a…`");
        let long = "x".repeat(100);
        assert_eq!(
            HookName(&long).to_string(),
            format!("`{}…`", "x".repeat(80))
        );
    }

    #[test]
    fn deny_beats_ask_beats_allow() {
        let mut outcome = HookOutcome::default();
        outcome.add_permission(HookPermission::Allow, Some("fine".into()));
        outcome.add_permission(HookPermission::Ask, Some("check".into()));
        outcome.add_permission(HookPermission::Allow, Some("fine again".into()));
        outcome.add_permission(HookPermission::Ask, Some("check twice".into()));
        assert_eq!(
            outcome.permission,
            Some((HookPermission::Ask, Some("check\ncheck twice".into())))
        );
        outcome.add_permission(HookPermission::Deny, None);
        assert_eq!(outcome.permission, Some((HookPermission::Deny, None)));
    }
}
