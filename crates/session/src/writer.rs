//! Appending to a session file, one complete line per entry.

use std::fs::{File, OpenOptions};

use cairn_protocol::{private_dir_builder, private_file_options};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::decode::decode_header;
use crate::entry::HeaderLine;
use crate::{Entry, FORMAT_VERSION, SessionError, SessionHeader};

/// The longest header `open_append` reads before giving up on a file (a real one is < 1 KB).
const MAX_HEADER_BYTES: u64 = 64 * 1024;

/// Writes a session's entries to its file as they happen.
///
/// Each entry is serialised to one line and handed to the kernel with a single `write`, so a
/// crash or Ctrl-C loses at most the line being written, and a killed process loses nothing
/// already appended. [`SessionWriter::sync`] (fsync) makes it survive a power loss too; the
/// engine calls it at the end of each turn.
///
/// Get one from [`crate::SessionStore::create`], [`crate::SessionStore::open_append`] or
/// [`crate::SessionStore::fork`]. For a writer that never fails, see [`crate::SessionLog`].
#[derive(Debug)]
pub struct SessionWriter {
    path: PathBuf,
    file: File,
    /// The file may not end with a newline (a torn line, or a failed write): the next entry
    /// starts with one.
    needs_newline: bool,
    /// The directory entry of a new file is fsynced once, at the first `sync`.
    dir_synced: bool,
    /// The file's first line, which a sub-agent's file starts with too.
    header: SessionHeader,
}

impl SessionWriter {
    /// Creates the file (and its directories) and writes the header. Refuses to overwrite.
    ///
    /// The file is created readable by the user alone (0600), and directories made on the
    /// way only the user may enter (0700): a transcript holds whatever the tools read.
    pub(crate) fn create(path: PathBuf, header: &SessionHeader) -> Result<Self, SessionError> {
        if let Some(dir) = path.parent() {
            private_dir_builder()
                .create(dir)
                .map_err(|source| SessionError::CreateDir {
                    path: dir.to_owned(),
                    source,
                })?;
        }
        let file = match private_file_options()
            .append(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                return Err(SessionError::AlreadyExists { path });
            }
            Err(source) => return Err(SessionError::Write { path, source }),
        };
        lock(&file, &path)?;
        let mut writer = SessionWriter {
            path,
            file,
            needs_newline: false,
            dir_synced: false,
            header: header.clone(),
        };
        writer.write_line(&HeaderLine::Header(header))?;
        Ok(writer)
    }

    /// Opens an existing file to append to it (resume). The header must be of the current
    /// format version: entries of this build must not be mixed into a file of another one.
    pub(crate) fn open_append(path: PathBuf) -> Result<Self, SessionError> {
        let read_error = |source| SessionError::Read {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(read_error)?;
        lock(&file, &path)?;
        let mut first_line = Vec::new();
        BufReader::new((&file).take(MAX_HEADER_BYTES))
            .read_until(b'\n', &mut first_line)
            .map_err(read_error)?;
        let header = decode_header(&path, &first_line)?;
        if header.format_version != FORMAT_VERSION {
            return Err(SessionError::OlderFormat {
                path,
                found: header.format_version,
                current: FORMAT_VERSION,
            });
        }
        let needs_newline = !ends_with_newline(&mut file).map_err(read_error)?;
        Ok(SessionWriter {
            path,
            file,
            needs_newline,
            dir_synced: true,
            header,
        })
    }

    /// Appends one entry as one line, handed to the kernel at once.
    pub fn append(&mut self, entry: &Entry) -> Result<(), SessionError> {
        self.write_line(entry)
    }

    /// Flushes the file to the disk (fsync). Call at the end of each turn.
    pub fn sync(&mut self) -> Result<(), SessionError> {
        self.file
            .sync_data()
            .map_err(|source| SessionError::Write {
                path: self.path.clone(),
                source,
            })?;
        if !self.dir_synced {
            if let Some(dir) = self.path.parent() {
                File::open(dir)
                    .and_then(|dir| dir.sync_all())
                    .map_err(|source| SessionError::Write {
                        path: dir.to_owned(),
                        source,
                    })?;
            }
            self.dir_synced = true;
        }
        Ok(())
    }

    /// The session file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's header.
    pub(crate) fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// Appends lines that are already serialised (each ending with a newline), in one write.
    pub(crate) fn append_raw_lines(&mut self, lines: &[u8]) -> Result<(), SessionError> {
        self.write_bytes(lines.to_vec())
    }

    fn write_line(&mut self, value: &impl Serialize) -> Result<(), SessionError> {
        let mut line = Vec::with_capacity(512);
        serde_json::to_writer(&mut line, value).map_err(|error| SessionError::Write {
            path: self.path.clone(),
            source: io::Error::other(error),
        })?;
        line.push(b'\n');
        self.write_bytes(line)
    }

    fn write_bytes(&mut self, mut bytes: Vec<u8>) -> Result<(), SessionError> {
        if self.needs_newline {
            bytes.insert(0, b'\n');
        }
        match self.file.write_all(&bytes) {
            Ok(()) => {
                self.needs_newline = false;
                Ok(())
            }
            Err(source) => {
                // Part of the line may have reached the file; the next one starts afresh.
                self.needs_newline = true;
                Err(SessionError::Write {
                    path: self.path.clone(),
                    source,
                })
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn from_file_for_test(path: PathBuf, file: File) -> Self {
        SessionWriter {
            path,
            file,
            needs_newline: false,
            dir_synced: true,
            header: SessionHeader {
                format_version: FORMAT_VERSION,
                cairn_version: "test".into(),
                session_id: crate::SessionId::new(),
                cwd: "/".into(),
                git_branch: None,
                model: "m".into(),
                started_at: 0,
                forked_from: None,
            },
        }
    }
}

/// Takes the advisory lock that makes this process the file's one writer, held until the
/// file is closed (the writer dropped, or the process gone, however it ended). A file
/// another writer holds is [`SessionError::Locked`]; a file system without locks is written
/// unlocked, as before locks.
///
/// `flock` through rustix rather than std's `File::try_lock`, which needs Rust 1.89 and the
/// workspace supports 1.88; both take the same lock on Linux.
#[cfg(unix)]
fn lock(file: &File, path: &Path) -> Result<(), SessionError> {
    use rustix::fs::{FlockOperation, flock};

    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Err(error) if error == rustix::io::Errno::WOULDBLOCK => Err(SessionError::Locked {
            path: path.to_owned(),
        }),
        Ok(()) | Err(_) => Ok(()),
    }
}

/// Without `flock`, sessions are written unlocked.
#[cfg(not(unix))]
fn lock(_file: &File, _path: &Path) -> Result<(), SessionError> {
    Ok(())
}

/// Whether the file is empty or ends with `\n`.
fn ends_with_newline(file: &mut File) -> io::Result<bool> {
    if file.metadata()?.len() == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}
