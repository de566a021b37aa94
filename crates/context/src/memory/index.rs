//! `MEMORY.md` and the memory section of the system prompt: how and when to write memories,
//! where, and the index as it stands.

use std::path::Path;

use cairn_config::Rest;

use super::file::INDEX_FILE;
use crate::UnreadFile;
use crate::project_file::read_text_start;

/// The most lines of `MEMORY.md` the prompt carries.
pub const INDEX_MAX_LINES: usize = 200;

/// The most bytes of `MEMORY.md` the prompt carries.
pub const INDEX_MAX_BYTES: usize = 25 * 1024;

/// `MEMORY.md` as the prompt carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryIndex {
    /// The index, at most [`INDEX_MAX_LINES`] lines and [`INDEX_MAX_BYTES`] bytes.
    pub text: String,
    /// Whether that is all of it.
    pub extent: IndexExtent,
}

/// Whether the whole index made it into the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexExtent {
    /// Every line is there.
    Whole,
    /// Over a cap: only the first lines are there.
    Cut,
}

impl MemoryIndex {
    /// Reads `MEMORY.md` in `directory`: `Ok(None)` when there is none; a file that cannot be
    /// read (a FIFO, not UTF-8) is an [`UnreadFile`] naming it. Past a cap, the first
    /// [`INDEX_MAX_LINES`] lines that fit in [`INDEX_MAX_BYTES`] are kept.
    pub fn read(directory: &Path) -> Result<Option<MemoryIndex>, UnreadFile> {
        let path = directory.join(INDEX_FILE);
        let Some(start) = read_text_start(&path, INDEX_MAX_BYTES as u64)? else {
            return Ok(None);
        };
        Ok(Some(MemoryIndex::cap(&start.text, start.rest)))
    }

    fn cap(text: &str, rest: Rest) -> MemoryIndex {
        let mut kept = text;
        let mut extent = match rest {
            Rest::None => IndexExtent::Whole,
            Rest::More { .. } => {
                // The last line was cut by the byte cap: leave it out whole.
                kept = kept.rfind('\n').map_or("", |end| &kept[..end]);
                IndexExtent::Cut
            }
        };
        if let Some((end, _)) = kept.match_indices('\n').nth(INDEX_MAX_LINES - 1)
            && !kept[end + 1..].trim().is_empty()
        {
            kept = &kept[..end];
            extent = IndexExtent::Cut;
        }
        MemoryIndex {
            text: kept.trim_end().to_owned(),
            extent,
        }
    }
}

/// The memory section of the system prompt, and the index file if it could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryPrompt {
    /// For [`PromptOptions::memory_index`](crate::PromptOptions::memory_index).
    pub text: String,
    /// `MEMORY.md` was there but could not be read: a warning for the user.
    pub unread: Option<UnreadFile>,
}

/// The memory section of the system prompt for the memories in `directory`: what is worth
/// saving and how (one fact per file, front matter, a line in `MEMORY.md`, never a secret),
/// the directory's path, and `MEMORY.md` itself (cut at its caps with a note saying so).
/// It goes in the dynamic half of the prompt, so a changed index leaves the cached prefix
/// alone.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("MEMORY.md"), "- [No mocks](feedback_no_mocks.md) — real database in tests\n")?;
/// let prompt = cairn_context::memory::memory_prompt(dir.path());
/// assert!(prompt.text.contains(&dir.path().display().to_string()));
/// assert!(prompt.text.ends_with("- [No mocks](feedback_no_mocks.md) — real database in tests"));
/// assert_eq!(prompt.unread, None);
/// # Ok::<_, std::io::Error>(())
/// ```
pub fn memory_prompt(directory: &Path) -> MemoryPrompt {
    let (index, unread) = match MemoryIndex::read(directory) {
        Ok(index) => (index, None),
        Err(unread) => (None, Some(unread)),
    };
    let index_text = match &index {
        None => "(empty: no memories saved yet)".to_owned(),
        Some(MemoryIndex { text, .. }) if text.trim().is_empty() => {
            "(empty: no memories saved yet)".to_owned()
        }
        Some(MemoryIndex {
            text,
            extent: IndexExtent::Whole,
        }) => text.clone(),
        Some(MemoryIndex {
            text,
            extent: IndexExtent::Cut,
        }) => format!(
            "{text}\n\n[MEMORY.md is longer than {INDEX_MAX_LINES} lines or {} KB: the rest \
             was cut. Shorten it: one line per memory, details in the memory files.]",
            INDEX_MAX_BYTES / 1024
        ),
    };
    MemoryPrompt {
        text: format!(
            "{}\n\n## {INDEX_FILE}\n\n{index_text}",
            instructions(directory)
        ),
        unread,
    }
}

fn instructions(directory: &Path) -> String {
    let directory = directory.display();
    format!(
        "# Memory

You have a memory that lasts between sessions: Markdown files in `{directory}`. Write them \
with the Write and Edit tools. At each message the memories that look relevant are recalled \
for you as a system reminder; {INDEX_FILE}, below, lists them all.

Save what will help in a later conversation and cannot be found again by reading the code, \
its history or the instruction files:
- user: who the user is (role, expertise, how they like to work);
- feedback: guidance the user gave on how to work, corrections and approaches they confirmed, \
with the reason;
- project: what is going on that the code does not say (goals, decisions and why, dates, who \
does what);
- reference: where to find things outside the repository (dashboards, trackers, documents).
Do not save passing details of the current task, nor what is already written down. Never save \
secrets: no keys, passwords, tokens or credentials, whatever the user says.

One fact per file, named for it (`feedback_real_database.md`), starting with front matter:

---
name: <short name>
description: <one line: what it is and when it matters; recall picks memories by this line>
type: <user | feedback | project | reference>
---
<the fact; for feedback and project, then **Why:** and **How to apply:**>

Then add one line for it to `{directory}/{INDEX_FILE}`: `- [Title](file.md) — what it is`. \
Keep the index under {INDEX_MAX_LINES} lines. When a memory turns out wrong or stale, change \
or delete it (and its index line) rather than adding one that contradicts it. When the user \
asks you to remember something, save it now; to forget something, delete it.

A recalled memory says what was true when it was written: check it against the files before \
acting on it."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn lines(count: usize) -> String {
        (1..=count)
            .map(|n| format!("- [m{n}](m{n}.md) — memory {n}\n"))
            .collect()
    }

    #[test]
    fn a_short_index_is_kept_whole() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(INDEX_FILE), lines(3)).unwrap();
        assert_eq!(
            MemoryIndex::read(dir.path()),
            Ok(Some(MemoryIndex {
                text: lines(3).trim_end().to_owned(),
                extent: IndexExtent::Whole,
            }))
        );
    }

    #[test]
    fn an_index_over_two_hundred_lines_keeps_the_first_two_hundred() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(INDEX_FILE), lines(250)).unwrap();
        let index = MemoryIndex::read(dir.path()).unwrap().unwrap();
        assert_eq!(index.extent, IndexExtent::Cut);
        assert_eq!(index.text, lines(200).trim_end());
    }

    #[test]
    fn exactly_two_hundred_lines_are_whole() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(INDEX_FILE), lines(200)).unwrap();
        assert_eq!(
            MemoryIndex::read(dir.path()).unwrap().unwrap().extent,
            IndexExtent::Whole
        );
    }

    #[test]
    fn an_index_over_25_kb_is_cut_at_a_line_end() {
        let dir = tempfile::tempdir().unwrap();
        let long_line = format!("- {}\n", "x".repeat(1000));
        std::fs::write(dir.path().join(INDEX_FILE), long_line.repeat(30)).unwrap();
        let index = MemoryIndex::read(dir.path()).unwrap().unwrap();
        assert_eq!(index.extent, IndexExtent::Cut);
        // 25 lines of 1003 bytes fit in 25,600 bytes; the 26th was cut and left out.
        assert_eq!(index.text, long_line.repeat(25).trim_end());
    }

    #[test]
    fn the_prompt_names_the_directory_and_notes_a_cut_index() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(INDEX_FILE), lines(201)).unwrap();
        let prompt = memory_prompt(dir.path());
        assert_eq!(prompt.unread, None);
        assert!(prompt.text.starts_with(&format!(
            "# Memory\n\nYou have a memory that lasts between sessions: Markdown files in `{}`.",
            dir.path().display()
        )));
        assert!(prompt.text.contains("Never save secrets"));
        assert!(prompt.text.ends_with(&format!(
            "## MEMORY.md\n\n{}\n\n[MEMORY.md is longer than 200 lines or 25 KB: the rest was \
             cut. Shorten it: one line per memory, details in the memory files.]",
            lines(200).trim_end()
        )));
    }

    #[test]
    fn without_an_index_the_prompt_says_there_are_no_memories_yet() {
        let dir = tempfile::tempdir().unwrap();
        let prompt = memory_prompt(&dir.path().join("memory"));
        assert!(
            prompt
                .text
                .ends_with("## MEMORY.md\n\n(empty: no memories saved yet)")
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_index_that_is_a_fifo_is_named_and_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join(INDEX_FILE);
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let prompt = memory_prompt(dir.path());
        assert_eq!(
            prompt.unread,
            Some(UnreadFile {
                path: fifo,
                reason: "it is a FIFO, not a regular file".into(),
            })
        );
        assert!(
            prompt
                .text
                .ends_with("## MEMORY.md\n\n(empty: no memories saved yet)")
        );
    }
}
