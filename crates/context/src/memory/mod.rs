//! Memory that survives sessions (DESIGN.md §5): one small Markdown file per fact, an index
//! (`MEMORY.md`) in the system prompt, and recall: a small model picks which files the user's
//! message needs, beside the main request, and the engine adds them at the next request.
//!
//! The engine sees memory only through [`Recall`]: it starts recall when the user submits and
//! takes the result at the next request boundary, without waiting for it.

use cairn_protocol::BoxFuture;

/// Picks the memories a message needs. `start` returns at once with a future the engine
/// polls at request boundaries; it never delays the main request.
pub trait Recall: Send + Sync + std::fmt::Debug {
    /// Starts recall for the user's `message`; the future resolves to the reminders to add
    /// (each the text of one `<system-reminder>`, without the tags), empty when nothing is
    /// relevant or recall failed (failures are reported through `on_failure`, never to the
    /// model).
    fn start(&self, message: String) -> BoxFuture<'static, RecallOutcome>;
}

/// What one recall found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecallOutcome {
    /// The reminders to inject, one per memory file, in the order chosen.
    pub reminders: Vec<String>,
    /// Why recall failed, for `--verbose`; `None` when it worked (or found nothing).
    pub failure: Option<String>,
}
