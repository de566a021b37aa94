//! A session writer that never fails: the first error becomes one warning, and the session
//! carries on in memory only. A new session's file is created with its first message.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::{Entry, SessionError, SessionHeader, SessionWriter, SubAgentEntry, now_ms};

/// Where a [`SessionLog`]'s entries go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persistence {
    /// A new session in which nothing has been said yet: no file exists, and entries that
    /// are not part of the conversation (a model switch) wait in memory for the first
    /// message, which creates the file (see [`crate::SessionStore::start`]).
    NotStarted,
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
/// let mut log = store.start("/work".as_ref(), &SessionId::new(), new);
/// assert_eq!(log.persistence(), Persistence::NotStarted);
/// log.append(&Entry::user(Message::user_text("hi")));
/// assert_eq!(log.persistence(), Persistence::MemoryOnly);
/// assert!(log.take_warning().is_some());
/// assert!(log.take_warning().is_none());
/// ```
#[derive(Debug)]
pub struct SessionLog {
    target: Target,
    warning: Option<LogWarning>,
}

/// Where the next entry goes.
#[derive(Debug)]
enum Target {
    /// Nothing said yet: the file is created, header first, at the first conversation entry;
    /// the lines of a forked session's history (`copied`, already serialised) and the entries
    /// since (`held`) come before it.
    NotStarted {
        path: PathBuf,
        header: SessionHeader,
        copied: Vec<u8>,
        held: Vec<Entry>,
    },
    File(SessionWriter),
    Memory,
}

impl SessionLog {
    /// Wraps the result of creating or opening the session file; an error puts the log in
    /// memory-only mode at once, with the error as its warning.
    pub fn new(opened: Result<SessionWriter, SessionError>) -> Self {
        match opened {
            Ok(writer) => SessionLog {
                target: Target::File(writer),
                warning: None,
            },
            Err(error) => SessionLog {
                target: Target::Memory,
                warning: Some(LogWarning { error }),
            },
        }
    }

    /// A log for a new session whose file at `path` does not exist yet; `copied` holds the
    /// lines of a forked session's history (each ending with a newline), or nothing.
    pub(crate) fn not_started(path: PathBuf, header: SessionHeader, copied: Vec<u8>) -> Self {
        SessionLog {
            target: Target::NotStarted {
                path,
                header,
                copied,
                held: Vec::new(),
            },
            warning: None,
        }
    }

    /// Appends an entry that continues the history without being said in this session (the
    /// repair of a resumed conversation's cut tool calls): in a session not started yet it
    /// waits for the first message like a model switch; otherwise it is appended.
    pub fn append_to_history(&mut self, entry: &Entry) {
        match &mut self.target {
            Target::NotStarted { held, .. } => held.push(entry.clone()),
            Target::File(_) | Target::Memory => self.append(entry),
        }
    }

    /// Appends an entry; on the first failure, switches to memory-only mode. In a session
    /// not started yet, the first conversation entry ([`Entry::is_conversation`]) creates
    /// the file; the entries before it are held until then.
    pub fn append(&mut self, entry: &Entry) {
        if matches!(self.target, Target::NotStarted { .. }) && entry.is_conversation() {
            self.start_file();
        }
        let written = match &mut self.target {
            Target::File(writer) => writer.append(entry),
            Target::NotStarted { held, .. } => {
                held.push(entry.clone());
                Ok(())
            }
            Target::Memory => Ok(()),
        };
        if let Err(error) = written {
            self.fail(error);
        }
    }

    /// Creates the file of a session not started yet, with the entries held so far.
    fn start_file(&mut self) {
        let Target::NotStarted {
            path,
            header,
            copied,
            held,
        } = std::mem::replace(&mut self.target, Target::Memory)
        else {
            return;
        };
        let mut writer = match SessionWriter::create(path, &header) {
            Ok(writer) => writer,
            Err(error) => return self.fail(error),
        };
        let written = writer
            .append_raw_lines(&copied)
            .and_then(|()| held.iter().try_for_each(|entry| writer.append(entry)));
        match written {
            Ok(()) => self.target = Target::File(writer),
            Err(error) => {
                // A half-written copy is worth nothing; the original is intact.
                if !copied.is_empty() {
                    let _ = std::fs::remove_file(writer.path());
                }
                self.fail(error);
            }
        }
    }

    /// Flushes to the disk (end of a turn); on failure, switches to memory-only mode.
    pub fn sync(&mut self) {
        if let Target::File(writer) = &mut self.target
            && let Err(error) = writer.sync()
        {
            self.fail(error);
        }
    }

    /// The warning to show, once: later calls return `None`.
    pub fn take_warning(&mut self) -> Option<LogWarning> {
        self.warning.take()
    }

    /// Where entries go now: not yet written, to the file, or (after a failure) nowhere.
    pub fn persistence(&self) -> Persistence {
        match self.target {
            Target::NotStarted { .. } => Persistence::NotStarted,
            Target::File(_) => Persistence::OnDisk,
            Target::Memory => Persistence::MemoryOnly,
        }
    }

    /// The session file, while entries still go to it.
    pub fn path(&self) -> Option<&Path> {
        match &self.target {
            Target::File(writer) => Some(writer.path()),
            Target::NotStarted { .. } | Target::Memory => None,
        }
    }

    /// Starts the transcript of a sub-agent beside this session's file, under
    /// `<session-id>/subagents/`, and links it from this file with a `sub_agent` entry. The
    /// sub-agent's log is a [`SessionLog`] like this one (0600, append-only, one line per
    /// entry, a failure one warning); its header is this session's, started now. An agent id
    /// whose file exists already (a resumed session's earlier sub-agent of the same id) gets
    /// a numbered name. While this session has no file (nothing said yet, or memory only),
    /// the sub-agent's log keeps nothing either.
    pub fn start_sub_agent(&mut self, start: SubAgentStart) -> SessionLog {
        let Target::File(writer) = &self.target else {
            return SessionLog {
                target: Target::Memory,
                warning: None,
            };
        };
        let parent = writer.path();
        let (Some(dir), Some(stem)) = (parent.parent(), parent.file_stem()) else {
            return SessionLog {
                target: Target::Memory,
                warning: None,
            };
        };
        let stem = stem.to_string_lossy().into_owned();
        let header = SessionHeader {
            started_at: now_ms(),
            forked_from: None,
            ..writer.header().clone()
        };
        let id: String = start
            .agent_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut opened = Err(SessionError::AlreadyExists {
            path: dir.to_owned(),
        });
        let mut file = String::new();
        for attempt in 1..=100 {
            let name = match attempt {
                1 => format!("agent-{id}.jsonl"),
                n => format!("agent-{id}-{n}.jsonl"),
            };
            file = format!("{stem}/subagents/{name}");
            opened = SessionWriter::create(dir.join(&file), &header);
            if !matches!(opened, Err(SessionError::AlreadyExists { .. })) {
                break;
            }
        }
        if opened.is_ok() {
            self.append(&Entry::SubAgent(SubAgentEntry {
                timestamp: now_ms(),
                agent_id: start.agent_id,
                agent_type: start.agent_type,
                description: start.description,
                tool_use_id: start.tool_use_id,
                file,
            }));
        }
        SessionLog::new(opened)
    }

    fn fail(&mut self, error: SessionError) {
        self.target = Target::Memory;
        self.warning = Some(LogWarning { error });
    }
}

/// What [`SessionLog::start_sub_agent`] records of a sub-agent as it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubAgentStart {
    /// The sub-agent's id.
    pub agent_id: String,
    /// Its role or custom agent, as the `Agent` call named it.
    pub agent_type: Option<String>,
    /// The task in a few words, as the `Agent` call gave it.
    pub description: Option<String>,
    /// The `Agent` call's `tool_use` id.
    pub tool_use_id: String,
}

/// Why a session stopped being saved.
#[derive(Debug)]
pub struct LogWarning {
    /// The failure that stopped the writing; the session goes on in memory.
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
