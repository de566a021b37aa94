//! Step 2, snip: tool calls a later call superseded leave the requests.
//!
//! A `Read` of a file the session later read again the same way (or overwrote with `Write`)
//! shows content that is no longer the file's; a call repeated later with the same input and
//! the same result says nothing the later one does not. Such a call goes whole, with its
//! result, when its two messages hold nothing else; otherwise its result becomes a one-line
//! marker. Nothing else is touched: user prompts, the todo list, answers and recent messages
//! stay as they are.

use std::collections::BTreeSet;

use cairn_protocol::{ContentBlock, Message, Role};

use super::view::{Call, ViewDecisions, calls, protected_from};

/// The most recent messages snip leaves alone (the call being worked on, its neighbours).
pub const KEEP_RECENT_MESSAGES: usize = 6;

/// What a superseded read's result becomes when its call cannot go whole.
fn superseded_read(path: &str) -> String {
    format!("[Superseded: {path} was read again later in the conversation]")
}

/// What a repeated call's earlier result becomes when its call cannot go whole.
const REPEATED_RESULT: &str = "[Superseded: the same call returned the same result later]";

/// Adds to `decisions` the calls of `conversation` that a later call supersedes; returns how
/// many it added.
pub fn snip(conversation: &[Message], decisions: &mut ViewDecisions) -> usize {
    let calls = calls(conversation);
    let protected = protected_from(conversation, KEEP_RECENT_MESSAGES);
    // Walk newest first, remembering what later calls established.
    let mut later: BTreeSet<String> = BTreeSet::new();
    let mut added = 0;
    for call in calls.iter().rev() {
        let read = read_key(call);
        let repeat = repeat_key(call);
        let superseded = match &read {
            Some((key, path)) => later.contains(key) || later.contains(&write_key(path)),
            None => false,
        } || repeat.as_ref().is_some_and(|key| later.contains(key));
        if superseded && call.index < protected && !decisions.covers(call.id) {
            if whole_call(conversation, call) {
                decisions.dropped.insert(call.id.to_string());
            } else {
                let marker = match &read {
                    Some((_, path)) => superseded_read(path),
                    None => REPEATED_RESULT.to_string(),
                };
                decisions.replaced.insert(call.id.to_string(), marker);
            }
            added += 1;
        }
        if let Some((key, _)) = read {
            later.insert(key);
        }
        if call.name == "Write"
            && let Some(path) = call.input.get("file_path").and_then(|path| path.as_str())
        {
            later.insert(write_key(path));
        }
        if let Some(key) = repeat {
            later.insert(key);
        }
    }
    added
}

/// A `Read`'s identity (path and the range it asked for) and its path.
fn read_key(call: &Call<'_>) -> Option<(String, String)> {
    if call.name != "Read" {
        return None;
    }
    let path = call.input.get("file_path")?.as_str()?;
    let offset = call.input.get("offset").map(ToString::to_string);
    let limit = call.input.get("limit").map(ToString::to_string);
    Some((
        format!("read\u{0}{path}\u{0}{offset:?}\u{0}{limit:?}"),
        path.to_string(),
    ))
}

fn write_key(path: &str) -> String {
    format!("write\u{0}{path}")
}

/// A call's identity with its result: the same tool, input and result later make it a repeat.
fn repeat_key(call: &Call<'_>) -> Option<String> {
    let result = call.result?;
    Some(format!(
        "call\u{0}{}\u{0}{}\u{0}{}",
        call.name,
        call.input,
        result.text()
    ))
}

/// Whether dropping the call's two messages leaves a valid conversation: the assistant
/// message makes only this call, the next message is the user's carrying only its result,
/// and a user message comes before and an assistant message after, so roles still alternate.
fn whole_call(conversation: &[Message], call: &Call<'_>) -> bool {
    let index = call.index;
    if index == 0 || index + 2 >= conversation.len() {
        return false;
    }
    let made = &conversation[index];
    let carried = &conversation[index + 1];
    made.tool_uses().count() == 1
        && carried.role == Role::User
        && matches!(
            carried.content.as_slice(),
            [ContentBlock::ToolResult { tool_use_id, .. }] if tool_use_id == call.id
        )
        && conversation[index - 1].role == Role::User
        && conversation[index + 2].role == Role::Assistant
}
