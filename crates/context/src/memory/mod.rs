//! Memory that survives sessions: one small Markdown file per fact, an index
//! (`MEMORY.md`) in the system prompt, and recall: a small model picks which files the user's
//! message needs, beside the main request, and the engine adds them at the next request.
//!
//! - [`MemorySettings`]: whether memory is on and where its directory is
//!   (`autoMemoryEnabled`, `autoMemoryDirectory`).
//! - [`memory_prompt`]: the section of the system prompt that says how to write memories and
//!   carries `MEMORY.md`, capped at 200 lines / 25 KB ([`MemoryIndex`]).
//! - [`MemoryRecall`]: the [`Recall`] that shows the small model the user's message and the
//!   heads of the memory files ([`scan_heads`]: front matter and the first 30 lines of each),
//!   and reads the files it names whole.
//! - [`save_memory`]: a memory the user dictates (the TUI's `#`), written as the model would
//!   write one: its file, then its line in `MEMORY.md`.
//!
//! The engine sees memory only through [`Recall`]: it starts recall when the user submits and
//! takes the result at the next request boundary, without waiting for it.

mod file;
mod index;
mod recall;
mod settings;
mod write;

use cairn_protocol::BoxFuture;

pub use file::{
    FileStamp, FrontMatter, HEAD_LINES, INDEX_FILE, MemoryHead, MemoryScan, MemoryType, scan_heads,
};
pub use index::{
    INDEX_MAX_BYTES, INDEX_MAX_LINES, IndexExtent, MemoryIndex, MemoryPrompt, memory_prompt,
};
pub use recall::{MAX_CANDIDATES, MAX_HEADS_BYTES, MAX_SELECTED, MemoryRecall};
pub use settings::{DIRECTORY_KEY, ENABLED_KEY, MemorySettings};
pub use write::{MemoryWriteError, SavedMemory, save_memory};

/// Picks the memories a message needs. `start` returns at once with a future the engine
/// polls at request boundaries; it never delays the main request.
pub trait Recall: Send + Sync + std::fmt::Debug {
    /// Starts recall for the user's `message`; the future resolves to the reminders to add
    /// (each the text of one `<system-reminder>`, without the tags), empty when nothing is
    /// relevant or recall failed (failures are reported in [`RecallOutcome::failure`], never
    /// to the model).
    fn start(&self, message: String) -> BoxFuture<'static, RecallOutcome>;

    /// Forgets which memories were injected, so that recall may inject them again: after a
    /// compaction summarised them away. Nothing to forget by default.
    fn forget_injected(&self) {}
}

/// What one recall found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecallOutcome {
    /// The reminders to inject, one per memory file, in the order chosen.
    pub reminders: Vec<String>,
    /// What went wrong, for `--verbose`: recall failed (the model's error, an answer that is
    /// not the expected JSON), the model named files that do not exist, or memory files were
    /// skipped (each named once a session); several joined by `; `. Without a prefix: the
    /// engine says it comes from memory recall. `None` when all went well (or nothing was
    /// found).
    pub failure: Option<String>,
}
