//! Step 3, microcompact: old results of tools whose output can be fetched again are cleared.
//!
//! The model can run `Read`, `Grep` or `Bash` again if it needs an old result; what it needs
//! to keep is that it made the call. The newest [`KEEP_RECENT_RESULTS`] such results stay; the
//! older ones become [`CLEARED`]. Clearing changes the middle of every later request, which
//! the prompt cache pays for once, so the pipeline prefers to do it when the cache has gone
//! cold anyway (see `StandardPipeline`).

use cairn_protocol::Message;

use super::accounting::result_tokens;
use super::view::{ViewDecisions, calls};

/// What a cleared result says, as Claude Code says it.
pub const CLEARED: &str = "[Old tool result content cleared]";

/// How many of the newest re-fetchable results stay.
pub const KEEP_RECENT_RESULTS: usize = 5;

/// Tools whose results can be fetched again (or, for edits, only confirm what the call said).
const REFETCHABLE: &[&str] = &[
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

/// Adds to `decisions` the re-fetchable results of `conversation` older than the newest
/// `keep`; returns how many it added.
pub fn microcompact(conversation: &[Message], decisions: &mut ViewDecisions, keep: usize) -> usize {
    let refetchable: Vec<_> = calls(conversation)
        .into_iter()
        .filter(|call| REFETCHABLE.contains(&call.name) && !decisions.dropped.contains(call.id))
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
