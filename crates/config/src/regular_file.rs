//! Reading a file a repository may have planted: only a regular file, and only so much of it.
//!
//! Settings, instruction and command files come from the project, which may be hostile. A
//! FIFO there would hang cairn at start-up (opening one for reading waits for a writer), and a
//! link to `/dev/zero` would be read until the memory runs out. [`read_regular_file`] opens
//! without waiting, refuses anything but a regular file (a link to one is followed), and stops
//! reading past a cap.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// The largest settings file read: far above any real one (100,000 permission rules take
/// about 3 MB).
pub const MAX_SETTINGS_BYTES: u64 = 16 * 1024 * 1024;

/// The largest legacy `.claude.json` read: Claude Code keeps its own state there (project
/// history, accounts), which can grow to several megabytes.
pub const MAX_LEGACY_SETTINGS_BYTES: u64 = 32 * 1024 * 1024;

/// Why a file was not read. The caller names the file.
#[derive(Debug, thiserror::Error)]
pub enum RegularFileError {
    /// A FIFO, a device, a socket or a directory where a file was expected.
    #[error("it is {kind}, not a regular file")]
    NotRegular {
        /// What is there instead, with its article (`a directory`, `a FIFO`).
        kind: &'static str,
    },
    /// Larger than the cap for this kind of file.
    #[error("it is larger than {limit} bytes, more than a file of this kind ever needs")]
    TooLarge {
        /// The cap, in bytes.
        limit: u64,
    },
    /// Opening or reading the file failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// The bytes of the regular file at `path` (or the one a link there points to), at most
/// `limit` of them; `Ok(None)` when there is no file there.
///
/// ```
/// use cairn_config::{RegularFileError, read_regular_file};
///
/// let dir = tempfile::tempdir()?;
/// let file = dir.path().join("settings.json");
/// std::fs::write(&file, "{}")?;
/// assert_eq!(read_regular_file(&file, 1024)?, Some(b"{}".to_vec()));
/// assert_eq!(read_regular_file(&dir.path().join("missing.json"), 1024)?, None);
/// assert!(matches!(
///     read_regular_file(dir.path(), 1024),
///     Err(RegularFileError::NotRegular { kind: "a directory" })
/// ));
/// assert!(matches!(
///     read_regular_file(&file, 1),
///     Err(RegularFileError::TooLarge { limit: 1 })
/// ));
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// ```
pub fn read_regular_file(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, RegularFileError> {
    match read_regular_file_start(path, limit)? {
        None => Ok(None),
        Some(FileStart {
            bytes,
            rest: Rest::None,
        }) => Ok(Some(bytes)),
        Some(FileStart {
            rest: Rest::More { .. },
            ..
        }) => Err(RegularFileError::TooLarge { limit }),
    }
}

/// The first bytes of a file, and whether more followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStart {
    /// At most the limit asked for.
    pub bytes: Vec<u8>,
    /// Whether the file goes on past them.
    pub rest: Rest,
}

/// What a [`FileStart`] left unread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rest {
    /// The bytes are the whole file.
    None,
    /// The file goes on: `size` bytes in all, as its metadata said when it was opened.
    More {
        /// The file's whole size in bytes.
        size: u64,
    },
}

/// The first `limit` bytes of the regular file at `path` (or the one a link there points to),
/// for files that are cut rather than refused when they are long (instruction files);
/// `Ok(None)` when there is no file there. Never reads more than `limit + 1` bytes.
///
/// ```
/// use cairn_config::{FileStart, Rest, read_regular_file_start};
///
/// let dir = tempfile::tempdir()?;
/// let file = dir.path().join("CLAUDE.md");
/// std::fs::write(&file, "abcdef")?;
/// assert_eq!(
///     read_regular_file_start(&file, 4)?,
///     Some(FileStart { bytes: b"abcd".to_vec(), rest: Rest::More { size: 6 } })
/// );
/// assert_eq!(
///     read_regular_file_start(&file, 6)?,
///     Some(FileStart { bytes: b"abcdef".to_vec(), rest: Rest::None })
/// );
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// ```
pub fn read_regular_file_start(
    path: &Path,
    limit: u64,
) -> Result<Option<FileStart>, RegularFileError> {
    let file = match open_without_waiting(path) {
        Ok(file) => file,
        Err(error)
            if matches!(
                error.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None);
        }
        Err(error) => return Err(error.into()),
    };
    // Checked on the open file, so it is the file that is read that was checked.
    let metadata = file.metadata()?;
    let kind = metadata.file_type();
    if !kind.is_file() {
        return Err(RegularFileError::NotRegular {
            kind: describe(&kind),
        });
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    let rest = if bytes.len() as u64 > limit {
        bytes.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        Rest::More {
            size: metadata.len().max(limit.saturating_add(1)),
        }
    } else {
        Rest::None
    };
    Ok(Some(FileStart { bytes, rest }))
}

/// Opens for reading without blocking on a FIFO that has no writer.
fn open_without_waiting(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nonblocking = rustix::fs::OFlags::NONBLOCK.bits();
        options.custom_flags(i32::try_from(nonblocking).unwrap_or(0));
    }
    options.open(path)
}

fn describe(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "something else"
    }
}
