//! Where session files live, and the operations on them as a set: create, resume, load, list,
//! fork and clean up.

use std::fs;
use std::io::{self, BufRead};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::decode::{Decoded, entry_type};
use crate::load::{read_file, scan_lines};
use crate::project::{belongs_to, legacy_names, project_key};
use crate::summary::summarize;
use crate::{
    Entry, FORMAT_VERSION, LoadedSession, SessionError, SessionHeader, SessionId, SessionLog,
    SessionSummary, SessionWriter, load_file, now_ms,
};

/// The cairn version written into new headers (the workspace shares one version).
const CAIRN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The session files of every project, under `<cairn_home>/projects/<project-key>/`
/// ([`project_key`]; sessions an older cairn filed under the bare slug are still found).
///
/// All operations are blocking file I/O; call them from `spawn_blocking` in async code.
///
/// ```
/// use cairn_protocol::Message;
/// use cairn_session::{Entry, NewSession, SessionId, SessionStore};
///
/// let home = tempfile::tempdir().unwrap();
/// let store = SessionStore::new(home.path());
/// let cwd = std::path::Path::new("/work/my app");
/// let id = SessionId::new();
///
/// let new = NewSession { model: "claude-sonnet-4-5".into(), git_branch: Some("main".into()) };
/// let mut writer = store.create(cwd, &id, new).unwrap();
/// writer.append(&Entry::user(Message::user_text("hello"))).unwrap();
/// writer.sync().unwrap();
///
/// let dir = store.project_dir(cwd);
/// assert!(dir.to_string_lossy().contains("/projects/-work-my-app-"));
/// assert_eq!(store.path(cwd, &id), dir.join(format!("{id}.jsonl")));
/// assert_eq!(store.load(cwd, &id).unwrap().messages, vec![Message::user_text("hello")]);
/// assert_eq!(store.latest(cwd).unwrap(), Some(id));
/// ```
#[derive(Debug, Clone)]
pub struct SessionStore {
    home: PathBuf,
}

/// What a new session's header records besides its id and directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession {
    /// The model the session starts with.
    pub model: String,
    /// The git branch checked out; `None` outside a repository or on a detached HEAD.
    pub git_branch: Option<String>,
}

/// Which projects [`SessionStore::cleanup`] looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CleanupScope<'a> {
    /// The sessions of the project in this working directory.
    Project(&'a Path),
    /// Every project's sessions.
    AllProjects,
}

impl SessionStore {
    /// A store under `cairn_home` (`~/.cairn`, or `$CAIRN_HOME`; the caller decides).
    pub fn new(cairn_home: impl Into<PathBuf>) -> Self {
        SessionStore {
            home: cairn_home.into(),
        }
    }

    /// The directory holding the sessions of the project in `cwd` (new ones, and those of
    /// cairns since project keys: see [`project_key`]).
    pub fn project_dir(&self, cwd: &Path) -> PathBuf {
        self.projects_dir().join(project_key(cwd))
    }

    /// The file of session `id` of the project in `cwd`: where it is, or where a new one goes.
    /// A session an older cairn filed under the project's bare slug is found there if its
    /// header says it was started in `cwd`.
    pub fn path(&self, cwd: &Path, id: &SessionId) -> PathBuf {
        let name = format!("{id}.jsonl");
        let path = self.project_dir(cwd).join(&name);
        if path.exists() {
            return path;
        }
        self.legacy_dirs(cwd)
            .into_iter()
            .map(|dir| dir.join(&name))
            .find(|legacy| legacy.is_file() && belongs_to(legacy, cwd))
            .unwrap_or(path)
    }

    /// The directory for the files of session `id` besides its transcript (spilled tool
    /// results): `<session-id>/` beside its file.
    pub fn session_dir(&self, cwd: &Path, id: &SessionId) -> PathBuf {
        self.path(cwd, id).with_extension("")
    }

    /// Starts a new session file, header written, directories created as needed.
    pub fn create(
        &self,
        cwd: &Path,
        id: &SessionId,
        new: NewSession,
    ) -> Result<SessionWriter, SessionError> {
        SessionWriter::create(self.path(cwd, id), &new_header(cwd, id, new))
    }

    /// Starts a new session whose file (and directories) are created with its first message
    /// ([`Entry::is_conversation`](crate::Entry::is_conversation)): a session in which
    /// nothing was said leaves nothing behind, so it is never listed, resumed or continued.
    /// An id whose file already exists gives a log in memory only, with the reason as its
    /// warning, at once.
    pub fn start(&self, cwd: &Path, id: &SessionId, new: NewSession) -> SessionLog {
        let path = self.path(cwd, id);
        if path.exists() {
            return SessionLog::new(Err(SessionError::AlreadyExists { path }));
        }
        SessionLog::not_started(path, new_header(cwd, id, new), Vec::new())
    }

    /// Opens a session to append to it (resume). A torn last line stays where it is; the
    /// next entry starts on a fresh line.
    pub fn open_append(&self, cwd: &Path, id: &SessionId) -> Result<SessionWriter, SessionError> {
        let path = self.path(cwd, id);
        SessionWriter::open_append(path.clone()).map_err(|error| not_found(error, id, path))
    }

    /// Reads a session back (see [`load_file`] for what is tolerated).
    pub fn load(&self, cwd: &Path, id: &SessionId) -> Result<LoadedSession, SessionError> {
        let path = self.path(cwd, id);
        load_file(&path).map_err(|error| not_found(error, id, path))
    }

    /// The project's most recently modified session that holds a message (`cairn -c`):
    /// a file an older cairn left with a header alone is nothing to continue.
    pub fn latest(&self, cwd: &Path) -> Result<Option<SessionId>, SessionError> {
        let mut files = self.project_files(cwd)?;
        files.sort_by(|a, b| b.modified.cmp(&a.modified).then(b.id.cmp(&a.id)));
        Ok(files
            .into_iter()
            .find(|file| holds_conversation(&file.path))
            .map(|file| file.id))
    }

    /// The project's sessions that hold messages, newest (last modified) first. Files whose
    /// header cannot be read (empty, damaged, or of a newer format) are left out, and so are
    /// those an older cairn left with nothing said in them.
    pub fn list(&self, cwd: &Path) -> Result<Vec<SessionSummary>, SessionError> {
        let mut summaries = Vec::new();
        for file in self.project_files(cwd)? {
            let Ok(bytes) = read_file(&file.path) else {
                continue;
            };
            if let Some(summary) = summarize(&file.path, &bytes, file.id, file.modified)
                && summary.message_count > 0
            {
                summaries.push(summary);
            }
        }
        summaries.sort_by(|a, b| b.modified.cmp(&a.modified).then(b.id.cmp(&a.id)));
        Ok(summaries)
    }

    /// Copies session `from` into a new session `new_id`, with a new header that records
    /// where it came from, and returns the writer of the copy. The original is only read.
    /// Lines a crash left torn are not copied.
    pub fn fork(
        &self,
        cwd: &Path,
        from: &SessionId,
        new_id: &SessionId,
    ) -> Result<SessionWriter, SessionError> {
        let (header, copied) = self.fork_lines(cwd, from, new_id)?;
        let mut writer = SessionWriter::create(self.path(cwd, new_id), &header)?;
        if let Err(error) = writer
            .append_raw_lines(&copied)
            .and_then(|()| writer.sync())
        {
            // A half-written copy is worth nothing; the original is intact.
            let _ = fs::remove_file(writer.path());
            return Err(error);
        }
        Ok(writer)
    }

    /// Like [`SessionStore::fork`], but the copy is written with the new session's first
    /// message, as [`SessionStore::start`] does: a fork in which nothing was said leaves no
    /// second copy of the conversation behind. The original is read now.
    pub fn start_fork(
        &self,
        cwd: &Path,
        from: &SessionId,
        new_id: &SessionId,
    ) -> Result<SessionLog, SessionError> {
        let (header, copied) = self.fork_lines(cwd, from, new_id)?;
        let path = self.path(cwd, new_id);
        if path.exists() {
            return Err(SessionError::AlreadyExists { path });
        }
        Ok(SessionLog::not_started(path, header, copied))
    }

    /// Like [`SessionStore::start_fork`] of a session another cairn is writing: the copy ends
    /// with the last turn that ended (an answer with no tool call left to run, or a failed
    /// turn), so the other process's prompt still in flight, and what it did for it so far,
    /// stay in that session alone. Returns the copy's log and the conversation as the copy
    /// holds it.
    pub fn start_fork_of_settled(
        &self,
        cwd: &Path,
        from: &SessionId,
        new_id: &SessionId,
    ) -> Result<(SessionLog, LoadedSession), SessionError> {
        let source = self.path(cwd, from);
        let (header, copied) =
            self.fork_lines_through(cwd, from, new_id, Through::LastSettledTurn)?;
        let path = self.path(cwd, new_id);
        if path.exists() {
            return Err(SessionError::AlreadyExists { path });
        }
        // The conversation the copy holds, read as the original is read: its header, then
        // the lines kept.
        let bytes = read_file(&source).map_err(|error| not_found(error, from, source.clone()))?;
        let first_line = bytes
            .split(|&byte| byte == b'\n')
            .next()
            .unwrap_or_default();
        let mut kept = first_line.to_vec();
        kept.push(b'\n');
        kept.extend_from_slice(&copied);
        let loaded = crate::load::load_bytes(&source, &kept)?;
        Ok((SessionLog::not_started(path, header, copied), loaded))
    }

    /// The header of a fork of `from` as `new_id`, and the lines to copy into it (torn lines
    /// left out).
    fn fork_lines(
        &self,
        cwd: &Path,
        from: &SessionId,
        new_id: &SessionId,
    ) -> Result<(SessionHeader, Vec<u8>), SessionError> {
        self.fork_lines_through(cwd, from, new_id, Through::End)
    }

    /// [`SessionStore::fork_lines`], the lines cut as `through` says.
    fn fork_lines_through(
        &self,
        cwd: &Path,
        from: &SessionId,
        new_id: &SessionId,
        through: Through,
    ) -> Result<(SessionHeader, Vec<u8>), SessionError> {
        let source = self.path(cwd, from);
        let bytes = read_file(&source).map_err(|error| not_found(error, from, source.clone()))?;
        let mut copied = Vec::with_capacity(bytes.len());
        // Where the copy may end: after the last line that ends a turn.
        let mut settled = 0;
        let (header, _skipped) = scan_lines(&source, &bytes, |line| {
            copied.extend_from_slice(line.current);
            copied.push(b'\n');
            if let Decoded::Entry(entry) = &line.decoded
                && ends_a_turn(entry)
            {
                settled = copied.len();
            }
        })?;
        if through == Through::LastSettledTurn {
            copied.truncate(settled);
        }
        let header = SessionHeader {
            format_version: FORMAT_VERSION,
            cairn_version: CAIRN_VERSION.to_owned(),
            session_id: *new_id,
            started_at: now_ms(),
            forked_from: Some(*from),
            ..header
        };
        Ok((header, copied))
    }

    /// Removes the session files not modified within `older_than`, with their sibling
    /// directory `<session-id>/` (spilled tool results) if there is one. Never removes
    /// `keep` (the running session). Returns how many sessions were removed.
    pub fn cleanup(
        &self,
        scope: CleanupScope<'_>,
        older_than: Duration,
        keep: &SessionId,
    ) -> Result<usize, SessionError> {
        let Some(cutoff) = SystemTime::now().checked_sub(older_than) else {
            return Ok(0);
        };
        let files = match scope {
            CleanupScope::Project(cwd) => self.project_files(cwd)?,
            CleanupScope::AllProjects => {
                let mut files = Vec::new();
                for dir in project_dirs(&self.projects_dir())? {
                    files.extend(session_files(&dir)?);
                }
                files
            }
        };
        let mut removed = 0;
        for file in files {
            if file.id == *keep || file.modified >= cutoff {
                continue;
            }
            remove(&file.path, |path| fs::remove_file(path))?;
            let spilled = file.path.with_extension("");
            if spilled.is_dir() {
                remove(&spilled, |path| fs::remove_dir_all(path))?;
            }
            removed += 1;
        }
        Ok(removed)
    }

    fn projects_dir(&self) -> PathBuf {
        self.home.join("projects")
    }

    /// The directories older cairns filed this project's sessions in (shared, perhaps, with
    /// other working directories whose slug is the same).
    fn legacy_dirs(&self, cwd: &Path) -> Vec<PathBuf> {
        let projects = self.projects_dir();
        legacy_names(cwd)
            .into_iter()
            .map(|name| projects.join(name))
            .filter(|dir| dir.is_dir())
            .collect()
    }

    /// The session files of the project in `cwd`: those in its directory, and those in the
    /// directories older cairns used whose header names `cwd`.
    fn project_files(&self, cwd: &Path) -> Result<Vec<SessionFile>, SessionError> {
        let mut files = session_files(&self.project_dir(cwd))?;
        for dir in self.legacy_dirs(cwd) {
            for file in session_files(&dir)? {
                if !files.iter().any(|known| known.id == file.id) && belongs_to(&file.path, cwd) {
                    files.push(file);
                }
            }
        }
        Ok(files)
    }
}

/// Whether a session file holds a conversation entry after its header. Reads line by line
/// and stops at the first one, which in a file cairn wrote is line 2 or soon after.
fn holds_conversation(path: &Path) -> bool {
    let Ok(file) = fs::File::open(path) else {
        return false;
    };
    let mut reader = io::BufReader::new(file);
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return false,
            Ok(_) => number += 1,
        }
        if number > 1
            && matches!(
                entry_type(&line),
                Some("user" | "assistant" | "tool_results" | "compaction")
            )
        {
            return true;
        }
    }
}

/// The header of a new session started now.
fn new_header(cwd: &Path, id: &SessionId, new: NewSession) -> SessionHeader {
    SessionHeader {
        format_version: FORMAT_VERSION,
        cairn_version: CAIRN_VERSION.to_owned(),
        session_id: *id,
        cwd: cwd.to_string_lossy().into_owned(),
        git_branch: new.git_branch,
        model: new.model,
        started_at: now_ms(),
        forked_from: None,
    }
}

/// A read error about a missing file becomes [`SessionError::NotFound`] for `id`.
fn not_found(error: SessionError, id: &SessionId, path: PathBuf) -> SessionError {
    match error {
        SessionError::Read { source, .. } if source.kind() == io::ErrorKind::NotFound => {
            SessionError::NotFound { id: *id, path }
        }
        other => other,
    }
}

fn remove(path: &Path, remove: impl FnOnce(&Path) -> io::Result<()>) -> Result<(), SessionError> {
    match remove(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(SessionError::Remove {
            path: path.to_owned(),
            source,
        }),
    }
}

/// A `<session-id>.jsonl` file of a project directory.
struct SessionFile {
    id: SessionId,
    path: PathBuf,
    modified: SystemTime,
}

/// The session files of a project directory (none if it does not exist). Other files are
/// ignored, and so are files that vanish while being looked at.
fn session_files(dir: &Path) -> Result<Vec<SessionFile>, SessionError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(SessionError::Read {
                path: dir.to_owned(),
                source,
            });
        }
    };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|name| name.strip_suffix(".jsonl")) else {
            continue;
        };
        let Ok(id) = SessionId::parse(stem) else {
            continue;
        };
        // Only the canonical spelling: a file named otherwise is not one cairn wrote.
        if id.to_string() != stem {
            continue;
        }
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        let Ok(modified) = metadata.modified() else {
            continue;
        };
        if metadata.is_file() {
            files.push(SessionFile {
                id,
                path: entry.path(),
                modified,
            });
        }
    }
    Ok(files)
}

fn project_dirs(projects: &Path) -> Result<Vec<PathBuf>, SessionError> {
    match fs::read_dir(projects) {
        Ok(entries) => Ok(entries
            .flatten()
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
            .map(|entry| entry.path())
            .collect()),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(source) => Err(SessionError::Read {
            path: projects.to_owned(),
            source,
        }),
    }
}

/// How much of a session a fork copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Through {
    /// Every line.
    End,
    /// Up to the last line that ends a turn ([`ends_a_turn`]).
    LastSettledTurn,
}

/// Whether `entry` is the end of a turn: an answer that left no tool call to run, a turn that
/// failed, or a compaction (whose summary stands for the turns before it).
fn ends_a_turn(entry: &Entry) -> bool {
    match entry {
        Entry::Assistant(answer) => !answer
            .message
            .content
            .iter()
            .any(|block| matches!(block, cairn_protocol::ContentBlock::ToolUse { .. })),
        Entry::TurnFailed(_) | Entry::Compaction(_) => true,
        _ => false,
    }
}
