//! A session writer that never fails: the first error becomes one warning, and the session
//! carries on in memory only.

use std::fmt;
use std::path::Path;

use crate::{Entry, SessionError, SessionWriter};

/// Where a [`SessionLog`]'s entries go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persistence {
    /// Entries are appended to the session file.
    OnDisk,
    /// Writing failed once (disk full, unwritable directory); nothing more is written, and the
    /// session lives only in the engine's message list.
    MemoryOnly,
}

/// A [`SessionWriter`] for the engine, which must not stop a conversation because the disk
/// is full: the first error is kept as a [`LogWarning`] for the caller to show once (this
/// crate never prints), and the log stops trying.
///
/// ```
/// use cairn_session::{Entry, NewSession, Persistence, SessionId, SessionLog, SessionStore};
/// use cairn_protocol::Message;
///
/// let home = tempfile::tempdir().unwrap();
/// let blocker = home.path().join("not-a-dir");
/// std::fs::write(&blocker, "").unwrap();
/// let store = SessionStore::new(&blocker); // directories cannot be made under a file
///
/// let new = NewSession { model: "m".into(), git_branch: None };
/// let mut log = SessionLog::new(store.create("/work".as_ref(), &SessionId::new(), new));
/// log.append(&Entry::user(Message::user_text("hi")));
/// assert_eq!(log.persistence(), Persistence::MemoryOnly);
/// assert!(log.take_warning().is_some());
/// assert!(log.take_warning().is_none());
/// ```
#[derive(Debug)]
pub struct SessionLog {
    writer: Option<SessionWriter>,
    warning: Option<LogWarning>,
}

impl SessionLog {
    /// Wraps the result of creating or opening the session file; an error puts the log in
    /// memory-only mode at once, with the error as its warning.
    pub fn new(opened: Result<SessionWriter, SessionError>) -> Self {
        match opened {
            Ok(writer) => SessionLog {
                writer: Some(writer),
                warning: None,
            },
            Err(error) => SessionLog {
                writer: None,
                warning: Some(LogWarning { error }),
            },
        }
    }

    /// Appends an entry; on the first failure, switches to memory-only mode.
    pub fn append(&mut self, entry: &Entry) {
        if let Some(writer) = &mut self.writer
            && let Err(error) = writer.append(entry)
        {
            self.fail(error);
        }
    }

    /// Flushes to the disk (end of a turn); on failure, switches to memory-only mode.
    pub fn sync(&mut self) {
        if let Some(writer) = &mut self.writer
            && let Err(error) = writer.sync()
        {
            self.fail(error);
        }
    }

    /// The warning to show, once: later calls return `None`.
    pub fn take_warning(&mut self) -> Option<LogWarning> {
        self.warning.take()
    }

    pub fn persistence(&self) -> Persistence {
        match self.writer {
            Some(_) => Persistence::OnDisk,
            None => Persistence::MemoryOnly,
        }
    }

    /// The session file, while entries still go to it.
    pub fn path(&self) -> Option<&Path> {
        self.writer.as_ref().map(SessionWriter::path)
    }

    fn fail(&mut self, error: SessionError) {
        self.writer = None;
        self.warning = Some(LogWarning { error });
    }
}

/// Why a session stopped being saved.
#[derive(Debug)]
pub struct LogWarning {
    pub error: SessionError,
}

impl fmt::Display for LogWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}; this session continues in memory only and will not be resumable",
            self.error
        )
    }
}

impl std::error::Error for LogWarning {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_protocol::Message;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_failing_append_warns_once_and_stops_writing() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "")?;
        // A read-only handle: every write fails, like a full disk.
        let file = std::fs::File::open(&path)?;
        let mut log = SessionLog::new(Ok(SessionWriter::from_file_for_test(path.clone(), file)));
        assert_eq!(log.persistence(), Persistence::OnDisk);

        log.append(&Entry::user(Message::user_text("one")));
        log.append(&Entry::user(Message::user_text("two")));
        log.sync();

        assert_eq!(log.persistence(), Persistence::MemoryOnly);
        assert_eq!(log.path(), None);
        let warning = log.take_warning().map(|warning| warning.to_string());
        assert_eq!(
            warning.as_deref().map(|text| text.starts_with(&format!(
                "cannot write the session file {}: ",
                path.display()
            ))),
            Some(true)
        );
        assert_eq!(log.take_warning().map(|warning| warning.to_string()), None);
        Ok(())
    }
}
