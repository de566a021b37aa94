//! Step 3, microcompact: old results of tools whose output can be fetched again are cleared.
//!
//! The model can run `Read`, `Grep` or `Bash` again if it needs an old result; what it needs
//! to keep is that it made the call. The newest such results stay, at most
//! [`KEEP_RECENT_RESULTS`] and as many as fit a tenth of the window ([`MIN_KEPT_TOKENS`] in a
//! small one: [`recent_to_keep`]); the older ones become [`CLEARED`]. Clearing changes the
//! middle of every later request, which the prompt cache pays for once, so the pipeline
//! clears when its cost model says it pays (see `StandardPipeline` and `cost`).
//!
//! A result that says the call failed or was refused is never cleared: running the call again
//! would not fetch it, it is short, and it is what tells the model not to try the same call
//! again.

use cairn_protocol::Message;

use super::accounting::result_tokens;
use super::view::{Call, ViewDecisions, calls};

/// What a cleared result says, as Claude Code says it.
pub const CLEARED: &str = "[Old tool result content cleared]";

/// How many of the newest re-fetchable results stay, at most.
pub const KEEP_RECENT_RESULTS: usize = 5;

/// The newest results kept together may always hold this many tokens, however small the
/// window (the pipeline keeps up to a tenth of a larger one).
pub const MIN_KEPT_TOKENS: u64 = 8_000;

/// Tools whose results can be fetched again (or, for edits, only confirm what the call said).
const REFETCHABLE_TOOLS: &[&str] = &[
    "Read",
    "Bash",
    "BashOutput",
    "Grep",
    "Glob",
    "LS",
    "WebFetch",
    "WebSearch",
    "Edit",
    "MultiEdit",
    "Write",
];

/// A result this small costs less to keep than the cache write clearing it would cause.
const WORTH_CLEARING_TOKENS: u64 = 25;

/// Whether `call`'s result is one the model can fetch again by making the call again: a
/// refetchable tool's, and not a failure or a refusal.
fn refetchable(call: &Call<'_>) -> bool {
    REFETCHABLE_TOOLS.contains(&call.name) && !call.failed
}

/// How many of the newest re-fetchable results to keep: as many as fit `budget` tokens
/// together, at least one and at most [`KEEP_RECENT_RESULTS`]. In a small window five large
/// results would fill a third of it, and each clear would rewrite them all again.
pub fn recent_to_keep(conversation: &[Message], decisions: &ViewDecisions, budget: u64) -> usize {
    let mut used = 0;
    let mut keep = 0;
    for call in calls(conversation).iter().rev() {
        let Some(result) = call.result else { continue };
        if !refetchable(call) || decisions.dropped.contains(call.id) {
            continue;
        }
        used += result_tokens(result);
        if keep == KEEP_RECENT_RESULTS || (keep > 0 && used > budget) {
            break;
        }
        keep += 1;
    }
    keep.max(1)
}

/// Adds to `decisions` the re-fetchable results of `conversation` older than the newest
/// `keep`; returns how many it added.
pub fn microcompact(conversation: &[Message], decisions: &mut ViewDecisions, keep: usize) -> usize {
    let refetchable: Vec<_> = calls(conversation)
        .into_iter()
        .filter(|call| refetchable(call) && !decisions.dropped.contains(call.id))
        .filter_map(|call| call.result.map(|result| (call.id, result)))
        .collect();
    let older = refetchable.len().saturating_sub(keep.max(1));
    let mut added = 0;
    for (id, result) in &refetchable[..older] {
        if decisions.covers(id) || result_tokens(result) <= WORTH_CLEARING_TOKENS {
            continue;
        }
        decisions
            .replaced
            .insert(id.to_string(), CLEARED.to_string());
        added += 1;
    }
    added
}

/// The frontier of `view`: how many leading messages the next clear leaves as they are, the
/// messages before the oldest result that `decisions` has not cleared and microcompact may
/// clear. A prompt cache marked there lets that clear read them instead of writing them
/// again. `None` when no such result is left.
pub fn frontier(view: &[Message], decisions: &ViewDecisions) -> Option<usize> {
    calls(view)
        .into_iter()
        .find(|call| {
            refetchable(call)
                && !decisions.covers(call.id)
                && call
                    .result
                    .is_some_and(|result| result_tokens(result) > WORTH_CLEARING_TOKENS)
        })
        .map(|call| call.index + 1)
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{ContentBlock, Role};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    /// Reads of `tokens` each, oldest first.
    fn reads(tokens: &[usize]) -> Vec<Message> {
        let mut conversation = vec![Message::user_text("read them")];
        for (index, &size) in tokens.iter().enumerate() {
            let id = format!("read-{index}");
            conversation.push(Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: id.clone(),
                    name: "Read".into(),
                    input: json!({"file_path": format!("/f{index}.rs")}),
                }],
            });
            conversation.push(Message {
                role: Role::User,
                content: vec![ContentBlock::tool_result(id, "r".repeat(size * 4), false)],
            });
        }
        conversation
    }

    #[test]
    fn a_failed_or_refused_result_is_never_cleared() {
        let mut conversation = reads(&[3_500, 3_500, 3_500]);
        if let ContentBlock::ToolResult { is_error, .. } = &mut conversation[2].content[0] {
            *is_error = true;
        }
        let mut decisions = ViewDecisions::default();
        assert_eq!(microcompact(&conversation, &mut decisions, 1), 1);
        assert!(!decisions.covers("read-0"), "the refusal stays");
        assert!(decisions.covers("read-1"));
        // Nor does it hold the frontier back.
        assert_eq!(frontier(&conversation, &decisions), Some(6));
    }

    #[test]
    fn the_frontier_is_the_call_of_the_oldest_result_not_cleared_yet() {
        let conversation = reads(&[3_500, 3_500, 3_500, 10]);
        let mut decisions = ViewDecisions::default();
        // Nothing cleared: the prompt and the first call stay as they are.
        assert_eq!(frontier(&conversation, &decisions), Some(2));
        microcompact(&conversation, &mut decisions, 2);
        // The first two reads are cleared: the next clear starts at the third one's result.
        assert_eq!(frontier(&conversation, &decisions), Some(6));
        microcompact(&conversation, &mut decisions, 1);
        // Only a result too small to clear is left after the cleared ones.
        assert_eq!(frontier(&conversation, &decisions), None);
    }

    #[test]
    fn the_newest_results_kept_fit_the_budget_one_at_least_five_at_most() {
        let none = ViewDecisions::default();
        let keep = |sizes: &[usize], budget| recent_to_keep(&reads(sizes), &none, budget);
        // Three 3,500-token reads do not fit 8,000 tokens; two do.
        assert_eq!(keep(&[3_500; 8], 8_000), 2);
        assert_eq!(keep(&[3_500; 8], 20_000), 5);
        assert_eq!(keep(&[100; 8], 20_000), 5);
        assert_eq!(keep(&[30_000, 30_000], 8_000), 1, "the newest always stays");
    }
}
