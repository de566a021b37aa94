//! Prompt history across sessions: every prompt sent is appended to `history.jsonl` in
//! cairn's home, and Up/Down in the input box walk back through it.
//!
//! Recall order is most recent first, with this project's prompts ahead of other projects'.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// One line of `history.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub text: String,
    pub cwd: PathBuf,
    /// When it was sent, in Unix milliseconds.
    pub at: u64,
}

/// The history file and where Up/Down currently are in it.
#[derive(Debug, Clone, Default)]
pub struct PromptHistory {
    path: Option<PathBuf>,
    cwd: PathBuf,
    /// Oldest first; the last one is what Up recalls first.
    recall: Vec<String>,
    /// While browsing: the index into `recall` shown in the box.
    position: Option<usize>,
    /// What was being typed before browsing began, given back by the last Down.
    draft: String,
}

impl PromptHistory {
    /// Reads the history at `path` (a missing or unreadable file is an empty history; bad
    /// lines are skipped). `None` keeps history in memory only.
    pub fn load(path: Option<PathBuf>, cwd: &Path) -> PromptHistory {
        let entries: Vec<HistoryEntry> = path
            .as_deref()
            .and_then(|path| std::fs::read_to_string(path).ok())
            .map(|text| {
                text.lines()
                    .filter_map(|line| serde_json::from_str(line).ok())
                    .collect()
            })
            .unwrap_or_default();
        let (here, elsewhere): (Vec<_>, Vec<_>) =
            entries.into_iter().partition(|entry| entry.cwd == cwd);
        let mut recall: Vec<String> = Vec::new();
        for entry in elsewhere.into_iter().chain(here) {
            // A prompt sent again moves to the front instead of showing twice.
            recall.retain(|text| *text != entry.text);
            recall.push(entry.text);
        }
        PromptHistory {
            path,
            cwd: cwd.to_path_buf(),
            recall,
            position: None,
            draft: String::new(),
        }
    }

    /// Remembers a prompt that was sent and appends it to the file. Browsing ends.
    pub fn record(&mut self, text: &str) -> Result<(), HistoryError> {
        self.position = None;
        self.draft.clear();
        if text.trim().is_empty() {
            return Ok(());
        }
        self.recall.retain(|old| old != text);
        self.recall.push(text.to_string());
        let Some(path) = &self.path else {
            return Ok(());
        };
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| {
                u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
            });
        let entry = HistoryEntry {
            text: text.to_string(),
            cwd: self.cwd.clone(),
            at,
        };
        let write = || -> std::io::Result<()> {
            // Prompts are the user's alone: the file 0600, directories made for it 0700.
            if let Some(parent) = path.parent() {
                cairn_protocol::private_dir_builder().create(parent)?;
            }
            let mut line = serde_json::to_string(&entry).map_err(std::io::Error::other)?;
            line.push('\n');
            cairn_protocol::private_file_options()
                .create(true)
                .append(true)
                .open(path)?
                .write_all(line.as_bytes())
        };
        write().map_err(|source| HistoryError {
            path: path.clone(),
            source,
        })
    }

    /// Whether Up/Down are walking the history now.
    pub fn is_browsing(&self) -> bool {
        self.position.is_some()
    }

    /// The entry before the one shown (`current` is what the box holds, kept as the draft
    /// when browsing starts); `None` at the oldest.
    pub fn previous(&mut self, current: &str) -> Option<String> {
        let next = match self.position {
            None => {
                self.draft = current.to_string();
                self.recall.len().checked_sub(1)?
            }
            Some(position) => position.checked_sub(1)?,
        };
        self.position = Some(next);
        self.recall.get(next).cloned()
    }

    /// The entry after the one shown, or the draft after the newest; `None` when not
    /// browsing.
    pub fn next(&mut self) -> Option<String> {
        let position = self.position?;
        if position + 1 < self.recall.len() {
            self.position = Some(position + 1);
            self.recall.get(position + 1).cloned()
        } else {
            self.position = None;
            Some(std::mem::take(&mut self.draft))
        }
    }

    /// Stops browsing (the user edited the recalled text, say).
    pub fn stop_browsing(&mut self) {
        self.position = None;
    }

    /// The newest entry older than index `before` (all entries when `None`) that contains
    /// `query`, case-insensitively, with its index, for Ctrl+R.
    pub fn search(&self, query: &str, before: Option<usize>) -> Option<(usize, &str)> {
        let query = query.to_lowercase();
        let end = before.unwrap_or(self.recall.len()).min(self.recall.len());
        self.recall[..end]
            .iter()
            .enumerate()
            .rev()
            .find(|(_, text)| text.to_lowercase().contains(&query))
            .map(|(index, text)| (index, text.as_str()))
    }
}

/// The history file could not be written.
#[derive(Debug, thiserror::Error)]
#[error("could not save the prompt history to {}: {source}", path.display())]
pub struct HistoryError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test should fail loudly")]
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn up_walks_back_and_down_returns_to_the_draft() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let mut first = PromptHistory::load(Some(path.clone()), Path::new("/p"));
        first.record("one").unwrap();
        first.record("two").unwrap();

        let mut history = PromptHistory::load(Some(path), Path::new("/p"));
        assert_eq!(history.previous("typing"), Some("two".into()));
        assert_eq!(history.previous("two"), Some("one".into()));
        assert_eq!(history.previous("one"), None);
        assert_eq!(history.next(), Some("two".into()));
        assert_eq!(history.next(), Some("typing".into()));
        assert!(!history.is_browsing());
        assert_eq!(history.next(), None);
    }

    #[test]
    fn this_projects_prompts_come_first_and_repeats_show_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let lines = [
            HistoryEntry {
                text: "here old".into(),
                cwd: "/p".into(),
                at: 1,
            },
            HistoryEntry {
                text: "elsewhere".into(),
                cwd: "/q".into(),
                at: 2,
            },
            HistoryEntry {
                text: "here new".into(),
                cwd: "/p".into(),
                at: 3,
            },
            HistoryEntry {
                text: "here old".into(),
                cwd: "/p".into(),
                at: 4,
            },
        ]
        .iter()
        .map(|entry| serde_json::to_string(entry).unwrap())
        .collect::<Vec<_>>()
        .join("\nnot json\n");
        std::fs::write(&path, lines).unwrap();
        let mut history = PromptHistory::load(Some(path), Path::new("/p"));
        let mut seen = Vec::new();
        while let Some(text) = history.previous("") {
            seen.push(text);
        }
        assert_eq!(seen, vec!["here old", "here new", "elsewhere"]);
    }

    #[test]
    fn search_finds_older_matches_one_by_one() {
        let mut history = PromptHistory::load(None, Path::new("/p"));
        for text in ["fix the Build", "run tests", "build again"] {
            history.record(text).unwrap();
        }
        assert_eq!(history.search("build", None), Some((2, "build again")));
        assert_eq!(history.search("build", Some(2)), Some((0, "fix the Build")));
        assert_eq!(history.search("build", Some(0)), None);
        assert_eq!(history.search("nothing", None), None);
    }

    #[test]
    fn a_write_failure_is_reported_and_the_prompt_still_recalled() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the file should be cannot be appended to.
        let path = dir.path().join("history.jsonl");
        std::fs::create_dir(&path).unwrap();
        let mut history = PromptHistory::load(Some(path.clone()), Path::new("/p"));
        let err = history.record("kept").unwrap_err();
        assert_eq!(err.path, path);
        assert_eq!(history.previous(""), Some("kept".into()));
    }

    #[test]
    fn each_line_is_a_json_entry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/history.jsonl");
        let mut history = PromptHistory::load(Some(path.clone()), Path::new("/p"));
        history.record("line one\nline two").unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        let entry: HistoryEntry = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(
            (entry.text.as_str(), entry.cwd.as_path()),
            ("line one\nline two", Path::new("/p"))
        );
        assert!(entry.at > 0);
    }
}
