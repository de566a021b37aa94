//! `@path` mentions: completing a file name after `@` from the project's files, and attaching
//! the files a sent prompt names.

use std::path::Path;
use std::sync::{Arc, Mutex};

use cairn_protocol::ContentBlock;

/// The most files the walk lists; a bigger tree is cut short.
const MAX_FILES: usize = 20_000;
/// How many completions are shown.
pub const MAX_COMPLETIONS: usize = 8;
/// An attached file is cut at this many bytes.
const MAX_ATTACHMENT_BYTES: usize = 100 * 1024;

/// The project's files (relative, `/`-separated), listed once in the background.
#[derive(Debug, Clone, Default)]
pub struct FileIndex {
    files: Arc<Mutex<Option<Vec<String>>>>,
    started: bool,
}

impl FileIndex {
    /// Starts listing `root` off the UI thread, once; until that finishes there are no
    /// completions. Needs a tokio runtime.
    pub fn ensure_started(&mut self, root: &Path) {
        if self.started {
            return;
        }
        self.started = true;
        let files = Arc::clone(&self.files);
        let root = root.to_path_buf();
        tokio::task::spawn_blocking(move || {
            let listed = list_files(&root, MAX_FILES);
            if let Ok(mut slot) = files.lock() {
                *slot = Some(listed);
            }
        });
    }

    /// An index that is already listed (for tests).
    #[cfg(test)]
    pub fn with_files(files: Vec<String>) -> FileIndex {
        FileIndex {
            files: Arc::new(Mutex::new(Some(files))),
            started: true,
        }
    }

    /// Up to `limit` files matching `query`, best first.
    pub fn complete(&self, query: &str, limit: usize) -> Vec<String> {
        match self.files.lock() {
            Ok(files) => files
                .as_deref()
                .map(|files| fuzzy_matches(files, query, limit))
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }
}

/// The files under `root`, honouring `.gitignore` and skipping hidden ones, at most `limit`.
pub fn list_files(root: &Path, limit: usize) -> Vec<String> {
    let mut files = Vec::new();
    for entry in ignore::WalkBuilder::new(root).build().flatten() {
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        if let Ok(relative) = entry.path().strip_prefix(root) {
            files.push(relative.to_string_lossy().replace('\\', "/"));
        }
        if files.len() >= limit {
            break;
        }
    }
    files.sort();
    files
}

/// Files in which `query`'s characters appear in order (case-insensitive), best first: the
/// query inside the file name, then inside the path, then spread out; shorter paths first.
pub fn fuzzy_matches(files: &[String], query: &str, limit: usize) -> Vec<String> {
    let query = query.to_lowercase();
    let mut scored: Vec<(u8, usize, &String)> = files
        .iter()
        .filter_map(|file| {
            let lower = file.to_lowercase();
            let name = lower.rsplit('/').next().unwrap_or(&lower);
            let rank = if name.contains(&query) {
                0
            } else if lower.contains(&query) {
                1
            } else if is_subsequence(&query, &lower) {
                2
            } else {
                return None;
            };
            Some((rank, file.len(), file))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(limit)
        .map(|(_, _, file)| file.clone())
        .collect()
}

fn is_subsequence(needle: &str, haystack: &str) -> bool {
    let mut rest = haystack.chars();
    needle.chars().all(|c| rest.any(|h| h == c))
}

/// The mention being typed at `cursor`: the byte offset of its `@` and the text after it.
/// An `@` counts only at the start or after whitespace (not in `a@b.com`).
pub fn mention_at(text: &str, cursor: usize) -> Option<(usize, &str)> {
    let before = text.get(..cursor)?;
    let at = before.rfind('@')?;
    let query = &before[at + 1..];
    if query.chars().any(char::is_whitespace) {
        return None;
    }
    let starts_word = before[..at]
        .chars()
        .next_back()
        .is_none_or(char::is_whitespace);
    starts_word.then_some((at, query))
}

/// A text block for each `@path` in `text` that names a file under `cwd` (each file once).
pub fn attachments(text: &str, cwd: &Path) -> Vec<ContentBlock> {
    let mut seen = Vec::new();
    let mut blocks = Vec::new();
    for word in text.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else {
            continue;
        };
        // A mention at the end of a sentence: `look at @src/main.rs.`
        let path = path.trim_end_matches([',', '.', ';', ':', '!', '?', ')']);
        if path.is_empty() || seen.contains(&path) {
            continue;
        }
        let full = cwd.join(path);
        if !full.is_file() {
            continue;
        }
        let Ok(bytes) = std::fs::read(&full) else {
            continue;
        };
        seen.push(path);
        blocks.push(ContentBlock::text(attachment_text(path, &bytes)));
    }
    blocks
}

/// The transcript tells an attachment by this shape and shows a line for it instead
/// (`transcript/user_prompt.rs`); a change here needs one there.
fn attachment_text(path: &str, bytes: &[u8]) -> String {
    let cut = bytes.len() > MAX_ATTACHMENT_BYTES;
    let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_ATTACHMENT_BYTES)]);
    let mut text = format!("Contents of {path}:\n```\n{shown}");
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("```");
    if cut {
        text.push_str(&format!(
            "\n(Only the first {} KB of {} bytes are shown.)",
            MAX_ATTACHMENT_BYTES / 1024,
            bytes.len()
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test should fail loudly")]
    use super::*;
    use pretty_assertions::assert_eq;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn matches_in_the_file_name_come_first() {
        let files = names(&["notes/a.rs", "src/notes.txt", "src/main.rs", "n/o/t/e/s.md"]);
        assert_eq!(
            fuzzy_matches(&files, "notes", 8),
            names(&["src/notes.txt", "notes/a.rs", "n/o/t/e/s.md"])
        );
        assert_eq!(fuzzy_matches(&files, "MAIN", 8), names(&["src/main.rs"]));
        assert_eq!(fuzzy_matches(&files, "", 2).len(), 2);
    }

    #[test]
    fn a_mention_starts_at_a_word_boundary() {
        assert_eq!(mention_at("read @no", 8), Some((5, "no")));
        assert_eq!(mention_at("@", 1), Some((0, "")));
        assert_eq!(mention_at("mail a@b", 8), None);
        assert_eq!(mention_at("read @no more", 13), None);
    }

    #[test]
    fn the_walk_honours_gitignore_and_skips_hidden_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join("src/lib.rs"), "").unwrap();
        std::fs::write(root.join("target/out"), "").unwrap();
        std::fs::write(root.join("README"), "").unwrap();
        assert_eq!(list_files(root, 100), names(&["README", "src/lib.rs"]));
        assert_eq!(list_files(root, 1).len(), 1);
    }

    #[test]
    fn existing_mentioned_files_are_attached_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/notes.txt"), "remember").unwrap();
        let blocks = attachments(
            "read @src/notes.txt, then @src/notes.txt and @missing.txt",
            dir.path(),
        );
        assert_eq!(
            blocks,
            vec![ContentBlock::text(
                "Contents of src/notes.txt:\n```\nremember\n```"
            )]
        );
    }

    #[test]
    fn the_transcript_shows_an_attachment_as_one_line() {
        use crate::transcript::user_prompt::{Attachment, Extent};
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "one\ntwo\nthree").unwrap();
        let typed = "read @notes.txt";
        let mut content = vec![ContentBlock::text(typed)];
        content.extend(attachments(typed, dir.path()));
        let prompt = crate::transcript::user_prompt::UserPrompt::of(&cairn_protocol::Message {
            role: cairn_protocol::Role::User,
            content,
        });
        assert_eq!(prompt.text, typed);
        let summaries: Vec<String> = prompt.attachments.iter().map(|a| a.summary()).collect();
        assert_eq!(summaries, ["Attached notes.txt (3 lines)"]);

        let big = attachment_text("big", &vec![b'x'; MAX_ATTACHMENT_BYTES + 10]);
        assert_eq!(
            Attachment::parse(&big).map(|attachment| attachment.extent),
            Some(Extent::Cut {
                shown_kb: 100,
                total_bytes: MAX_ATTACHMENT_BYTES + 10
            })
        );
    }

    #[test]
    fn a_big_file_is_cut_with_a_note() {
        let bytes = vec![b'x'; MAX_ATTACHMENT_BYTES + 10];
        let text = attachment_text("big", &bytes);
        assert!(text.ends_with(&format!(
            "```\n(Only the first 100 KB of {} bytes are shown.)",
            bytes.len()
        )));
    }
}
