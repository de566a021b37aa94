//! Reading the text files a project keeps for cairn (instruction files, their imports, custom
//! commands), any of which a hostile repository may have made a FIFO, a link to `/dev/zero` or
//! a directory. They go through [`cairn_config::read_regular_file_start`]: never blocking,
//! only regular files, never more than a cap. A file that cannot be read is skipped with an
//! [`UnreadFile`] warning that names it; it never stops cairn.

use std::fmt;
use std::path::{Path, PathBuf};

use cairn_config::{RegularFileError, Rest, read_regular_file_start};

/// A project file that was skipped, and why: shown to the user as a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadFile {
    /// The file skipped.
    pub path: PathBuf,
    /// What was wrong with it: `it is a FIFO, not a regular file`.
    pub reason: String,
}

impl fmt::Display for UnreadFile {
    /// `/work/app/CLAUDE.md was skipped: it is a FIFO, not a regular file`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} was skipped: {}", self.path.display(), self.reason)
    }
}

/// The start of a text file: all of it, or its first bytes when it is longer than the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextStart {
    pub(crate) text: String,
    pub(crate) rest: Rest,
}

/// The text of the file at `path`, at most `limit` bytes of it (a character cut in two at
/// the limit is left out); `Ok(None)` when there is no file there.
pub(crate) fn read_text_start(path: &Path, limit: u64) -> Result<Option<TextStart>, UnreadFile> {
    let unread = |reason: String| UnreadFile {
        path: path.to_path_buf(),
        reason,
    };
    let start = match read_regular_file_start(path, limit) {
        Ok(Some(start)) => start,
        Ok(None) => return Ok(None),
        Err(RegularFileError::Io(error)) => {
            return Err(unread(format!("reading it failed: {error}")));
        }
        Err(error) => return Err(unread(error.to_string())),
    };
    let text = match String::from_utf8(start.bytes) {
        Ok(text) => text,
        // Only a character the limit cut in two may be incomplete.
        Err(error) if start.rest != Rest::None && error.utf8_error().error_len().is_none() => {
            let valid = error.utf8_error().valid_up_to();
            let mut bytes = error.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|_| unread("it is not UTF-8 text".to_owned()))?
        }
        Err(_) => return Err(unread("it is not UTF-8 text".to_owned())),
    };
    Ok(Some(TextStart {
        text,
        rest: start.rest,
    }))
}

/// The whole text of the file at `path`, refused when longer than `limit` bytes; `Ok(None)`
/// when there is no file there.
pub(crate) fn read_text(path: &Path, limit: u64) -> Result<Option<String>, UnreadFile> {
    match read_text_start(path, limit)? {
        None => Ok(None),
        Some(TextStart {
            text,
            rest: Rest::None,
        }) => Ok(Some(text)),
        Some(TextStart {
            rest: Rest::More { .. },
            ..
        }) => Err(UnreadFile {
            path: path.to_path_buf(),
            reason: RegularFileError::TooLarge { limit }.to_string(),
        }),
    }
}
