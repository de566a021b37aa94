//! What this session has read, so that edits of unread or since-changed files are refused.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// A file's identity at one moment: enough to notice that someone else changed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    /// The file's modification time.
    pub modified: SystemTime,
    /// The file's size in bytes; a change of size with the same time still counts.
    pub len: u64,
}

impl FileStamp {
    /// The file's stamp now; `None` when it does not exist or cannot be read.
    pub fn of(path: &Path) -> Option<FileStamp> {
        let metadata = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            modified: metadata.modified().ok()?,
            len: metadata.len(),
        })
    }
}

/// Why a file may not be changed yet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StaleRead {
    /// The session never read the file (it may exist and hold anything).
    #[error("{0} has not been read in this session. Read it first, then change it.")]
    NotRead(PathBuf),
    /// The file's stamp differs from the one recorded when the session last read or wrote it.
    #[error(
        "{0} has changed on disk since it was last read (by the user, a formatter or another \
         tool). Read it again before changing it."
    )]
    ChangedSince(PathBuf),
}

/// The stamps of the files this session has read or written, by real path: a file read as
/// `CLAUDE.md` and written through the link's target `AGENTS.md` is the same file.
#[derive(Debug, Default)]
pub struct FileTracker {
    stamps: Mutex<HashMap<PathBuf, FileStamp>>,
}

impl FileTracker {
    /// Remembers that `path` was read (or written) as it is now.
    pub fn record(&self, path: &Path) {
        if let Some(stamp) = FileStamp::of(path) {
            self.stamps
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .insert(real_path(path), stamp);
        }
    }

    /// Whether `path` was read in this session and has not changed since.
    pub fn check_fresh(&self, path: &Path) -> Result<(), StaleRead> {
        let stamps = self
            .stamps
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match stamps.get(&real_path(path)) {
            None => Err(StaleRead::NotRead(path.to_path_buf())),
            Some(seen) if FileStamp::of(path) != Some(*seen) => {
                Err(StaleRead::ChangedSince(path.to_path_buf()))
            }
            Some(_) => Ok(()),
        }
    }
}

/// `path` with its symbolic links resolved; `path` itself when it does not exist.
fn real_path(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn unread_then_fresh_then_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "one").unwrap();
        let tracker = FileTracker::default();
        assert_eq!(
            tracker.check_fresh(&path),
            Err(StaleRead::NotRead(path.clone()))
        );
        tracker.record(&path);
        assert_eq!(tracker.check_fresh(&path), Ok(()));
        std::fs::write(&path, "changed by someone else").unwrap();
        assert_eq!(
            tracker.check_fresh(&path),
            Err(StaleRead::ChangedSince(path.clone()))
        );
    }
}
