//! Where session files live, and the operations on them as a set: create, resume, load, list,
//! fork and clean up.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::load::{read_file, scan_lines};
use crate::summary::summarize;
use crate::{
    FORMAT_VERSION, LoadedSession, SessionError, SessionHeader, SessionId, SessionSummary,
    SessionWriter, load_file, now_ms,
};

/// The cairn version written into new headers (the workspace shares one version).
const CAIRN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Slugs longer than this are cut and given a hash, to stay under file-name limits.
const MAX_SLUG_LEN: usize = 200;

/// The session files of every project, under `<cairn_home>/projects/<project-slug>/`.
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
/// assert!(store.path(cwd, &id).starts_with(home.path().join("projects/-work-my-app")));
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
    pub model: String,
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

    /// The directory holding the sessions of the project in `cwd`.
    pub fn project_dir(&self, cwd: &Path) -> PathBuf {
        self.projects_dir().join(project_slug(cwd))
    }

    /// The file of session `id` of the project in `cwd` (whether it exists or not).
    pub fn path(&self, cwd: &Path, id: &SessionId) -> PathBuf {
        self.project_dir(cwd).join(format!("{id}.jsonl"))
    }

    /// Starts a new session file, header written, directories created as needed.
    pub fn create(
        &self,
        cwd: &Path,
        id: &SessionId,
        new: NewSession,
    ) -> Result<SessionWriter, SessionError> {
        let header = SessionHeader {
            format_version: FORMAT_VERSION,
            cairn_version: CAIRN_VERSION.to_owned(),
            session_id: *id,
            cwd: cwd.to_string_lossy().into_owned(),
            git_branch: new.git_branch,
            model: new.model,
            started_at: now_ms(),
            forked_from: None,
        };
        SessionWriter::create(self.path(cwd, id), &header)
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

    /// The project's most recently modified session.
    pub fn latest(&self, cwd: &Path) -> Result<Option<SessionId>, SessionError> {
        let files = session_files(&self.project_dir(cwd))?;
        Ok(files
            .into_iter()
            .max_by(|a, b| a.modified.cmp(&b.modified).then(a.id.cmp(&b.id)))
            .map(|file| file.id))
    }

    /// The project's sessions, newest (last modified) first. Files whose header cannot be
    /// read (empty, damaged, or of a newer format) are left out.
    pub fn list(&self, cwd: &Path) -> Result<Vec<SessionSummary>, SessionError> {
        let mut summaries = Vec::new();
        for file in session_files(&self.project_dir(cwd))? {
            let Ok(bytes) = read_file(&file.path) else {
                continue;
            };
            if let Some(summary) = summarize(&file.path, &bytes, file.id, file.modified) {
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
        let source = self.path(cwd, from);
        let bytes = read_file(&source).map_err(|error| not_found(error, from, source.clone()))?;
        let mut copied = Vec::with_capacity(bytes.len());
        let (header, _skipped) = scan_lines(&source, &bytes, |line| {
            copied.extend_from_slice(line.current);
            copied.push(b'\n');
        })?;
        let header = SessionHeader {
            format_version: FORMAT_VERSION,
            cairn_version: CAIRN_VERSION.to_owned(),
            session_id: *new_id,
            started_at: now_ms(),
            forked_from: Some(*from),
            ..header
        };
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
        let project_dirs = match scope {
            CleanupScope::Project(cwd) => vec![self.project_dir(cwd)],
            CleanupScope::AllProjects => project_dirs(&self.projects_dir())?,
        };
        let mut removed = 0;
        for dir in project_dirs {
            for file in session_files(&dir)? {
                if file.id == *keep || file.modified >= cutoff {
                    continue;
                }
                remove(&file.path, |path| fs::remove_file(path))?;
                let spilled = dir.join(file.id.to_string());
                if spilled.is_dir() {
                    remove(&spilled, |path| fs::remove_dir_all(path))?;
                }
                removed += 1;
            }
        }
        Ok(removed)
    }

    fn projects_dir(&self) -> PathBuf {
        self.home.join("projects")
    }
}

/// The directory name for a working directory: every character that is not an ASCII letter
/// or digit becomes `-` (`/work/my app` → `-work-my-app`). Different paths can share a slug;
/// each header records its real `cwd`. A slug over 200 characters is cut, and a hash of the
/// whole path (FNV-1a, stable across Rust versions) keeps it distinct.
pub fn project_slug(cwd: &Path) -> String {
    let path = cwd.to_string_lossy();
    let slug: String = path
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if slug.len() <= MAX_SLUG_LEN {
        return slug;
    }
    // The slug is ASCII, so any byte index is a character boundary.
    format!("{}-{:016x}", &slug[..MAX_SLUG_LEN], fnv1a(path.as_bytes()))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn slug_replaces_everything_but_ascii_letters_and_digits() {
        assert_eq!(project_slug(Path::new("/work/my app")), "-work-my-app");
        assert_eq!(
            project_slug(Path::new("/home/zoë/src_1.x")),
            "-home-zo--src-1-x"
        );
    }

    #[test]
    fn long_slugs_are_cut_and_hashed() {
        let deep = format!("/{}", "a".repeat(300));
        let slug = project_slug(Path::new(&deep));
        assert_eq!(slug.len(), MAX_SLUG_LEN + 17);
        assert_eq!(&slug[..MAX_SLUG_LEN], project_slug(Path::new(&deep[..200])));
        assert_ne!(slug, project_slug(Path::new(&format!("{deep}b"))));
    }
}
