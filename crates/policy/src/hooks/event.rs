//! The events hooks attach to, under Claude Code's names, and what each lets a hook do.

use std::fmt;

/// A point in a session where hooks run.
///
/// The names ([`HookEvent::as_str`]) are Claude Code's, used both as keys in settings and as
/// `hook_event_name` in a hook's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookEvent {
    /// Before a tool runs; may allow, ask about, deny or rewrite the call.
    PreToolUse,
    /// After a tool succeeded; may feed a complaint back to the model.
    PostToolUse,
    /// After a tool failed; may feed context back to the model.
    PostToolUseFailure,
    /// When the user is about to be asked for a permission; may answer in their place.
    PermissionRequest,
    /// When the user submits a prompt, before the model sees it; may block it or add context.
    UserPromptSubmit,
    /// When the main agent is about to stop; may make it carry on.
    Stop,
    /// When a sub-agent is about to stop; may make it carry on.
    SubagentStop,
    /// When a sub-agent starts, before its first request; informational only.
    SubagentStart,
    /// When a session starts, resumes, is cleared or compacted; may add context.
    SessionStart,
    /// When a session ends; informational only.
    SessionEnd,
    /// Before the conversation is compacted; may prevent it.
    PreCompact,
    /// After the conversation was compacted, with the summary; informational only.
    PostCompact,
    /// When cairn notifies the user (a permission prompt, an idle wait); informational only.
    Notification,
}

impl HookEvent {
    /// Every event, in the order Claude Code's documentation lists them.
    pub const ALL: [HookEvent; 13] = [
        HookEvent::PreToolUse,
        HookEvent::PermissionRequest,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::Notification,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SubagentStart,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::PostCompact,
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
    ];

    /// Claude Code's name of the event, as written in settings and sent as `hook_event_name`.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::SubagentStart => "SubagentStart",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::PostCompact => "PostCompact",
            HookEvent::Notification => "Notification",
        }
    }

    /// The event called `name` (case-sensitive, as in Claude Code's settings).
    pub fn from_name(name: &str) -> Option<HookEvent> {
        HookEvent::ALL
            .into_iter()
            .find(|event| event.as_str() == name)
    }

    /// Whether a hook can block at this event (exit code 2, `decision: "block"`, a deny).
    ///
    /// What a block means depends on the event: the tool call does not run (`PreToolUse`,
    /// `PermissionRequest`), the model is told (`PostToolUse`, `PostToolUseFailure`: the tool
    /// already ran), the prompt is dropped (`UserPromptSubmit`), the agent carries on (`Stop`,
    /// `SubagentStop`), compaction does not happen (`PreCompact`). At `SessionStart`,
    /// `SubagentStart`, `SessionEnd` and `Notification` nothing can be blocked: as in Claude Code, the stderr
    /// of an exit code 2 is only shown to the user ([`HookOutcome::system_messages`]).
    ///
    /// [`HookOutcome::system_messages`]: super::HookOutcome::system_messages
    pub fn can_block(self) -> bool {
        match self {
            HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::PostToolUseFailure
            | HookEvent::PermissionRequest
            | HookEvent::UserPromptSubmit
            | HookEvent::Stop
            | HookEvent::SubagentStop
            | HookEvent::PreCompact => true,
            HookEvent::SessionStart
            | HookEvent::SubagentStart
            | HookEvent::SessionEnd
            | HookEvent::PostCompact
            | HookEvent::Notification => false,
        }
    }

    /// Whether hooks at this event decide a tool call's permission, and may rewrite its input.
    pub fn decides_permission(self) -> bool {
        match self {
            HookEvent::PreToolUse | HookEvent::PermissionRequest => true,
            HookEvent::PostToolUse
            | HookEvent::PostToolUseFailure
            | HookEvent::UserPromptSubmit
            | HookEvent::Stop
            | HookEvent::SubagentStop
            | HookEvent::SubagentStart
            | HookEvent::SessionStart
            | HookEvent::SessionEnd
            | HookEvent::PreCompact
            | HookEvent::PostCompact
            | HookEvent::Notification => false,
        }
    }

    /// What becomes of plain (non-JSON) stdout of a hook that exited 0.
    pub(super) fn plain_stdout(self) -> PlainStdout {
        match self {
            HookEvent::UserPromptSubmit | HookEvent::SessionStart => PlainStdout::Context,
            HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::PostToolUseFailure
            | HookEvent::PermissionRequest
            | HookEvent::Stop
            | HookEvent::SubagentStop
            | HookEvent::SubagentStart
            | HookEvent::SessionEnd
            | HookEvent::PreCompact
            | HookEvent::PostCompact
            | HookEvent::Notification => PlainStdout::Ignored,
        }
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What plain stdout of a successful hook is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PlainStdout {
    /// Added to the model's context (Claude Code does this for prompts and session starts).
    Context,
    /// Not shown to anyone (Claude Code keeps it for its transcript view).
    Ignored,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for event in HookEvent::ALL {
            assert_eq!(HookEvent::from_name(event.as_str()), Some(event));
        }
        assert_eq!(HookEvent::from_name("pretooluse"), None);
    }
}
