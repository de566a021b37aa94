//! The user's approvals of external instruction-file imports, kept in cairn's own state.
//!
//! One file, `<cairn_home>/approvals.json` (`~/.cairn`, or `$CAIRN_HOME`), keyed by the
//! project's real path (symlinks resolved):
//!
//! ```json
//! {"projects": {"/work/app": {"approvedExternalImports": ["/home/me/shared/style.md"]}}}
//! ```
//!
//! It never lives in the project's own files, since a repository must not approve its own
//! imports, and it is not kept beside the sessions under the project's slug either: two
//! projects can share a slug (`/work/a-b` and `/work/a/b`), and one must not approve the
//! other's imports. An approval names files, not the whole project, so an import the
//! repository adds later is asked about again. The file is written whole (a temp file, then a
//! rename), readable by its owner only (0600, in a 0700 directory when cairn creates it).
//!
//! Claude Code's own record is honoured too, read-only: `~/.claude.json` →
//! `projects.<path>.hasClaudeMdExternalIncludesApproved` ([`claude_code_approves`]).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// The file's name under cairn's home.
pub const APPROVALS_FILE: &str = "approvals.json";

/// What can go wrong reading or writing the approvals.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    /// The approvals file exists but could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The approvals file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The approvals file is not valid JSON.
    #[error("{path} is not valid JSON ({source}); fix or delete it to approve imports again")]
    Parse {
        /// The approvals file.
        path: PathBuf,
        /// Where the JSON is broken.
        source: serde_json::Error,
    },
    /// A new approval could not be saved.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The approvals file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// The approvals file under one cairn home.
///
/// ```
/// use std::collections::BTreeSet;
/// use cairn_context::approvals::ImportApprovals;
///
/// let cairn_home = tempfile::tempdir().unwrap();
/// let project = tempfile::tempdir().unwrap();
/// let store = ImportApprovals::new(cairn_home.path());
/// assert_eq!(store.approved(project.path()).unwrap(), BTreeSet::new());
///
/// store.approve(project.path(), &["/home/me/style.md".into()]).unwrap();
/// assert_eq!(
///     store.approved(project.path()).unwrap(),
///     BTreeSet::from(["/home/me/style.md".into()])
/// );
/// ```
#[derive(Debug, Clone)]
pub struct ImportApprovals {
    path: PathBuf,
}

impl ImportApprovals {
    /// The approvals kept under `cairn_home` (`~/.cairn`); nothing is read until asked.
    pub fn new(cairn_home: &Path) -> Self {
        ImportApprovals {
            path: cairn_home.join(APPROVALS_FILE),
        }
    }

    /// Where the approvals are kept.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The external imports approved for `project`, by real path; none when the file does
    /// not exist.
    pub fn approved(&self, project: &Path) -> Result<BTreeSet<PathBuf>, ApprovalError> {
        Ok(approved_in(&self.read()?, &project_key(project)))
    }

    /// Adds `imports` (real paths) to what `project` has approved, keeping everything else
    /// in the file.
    pub fn approve(&self, project: &Path, imports: &[PathBuf]) -> Result<(), ApprovalError> {
        let key = project_key(project);
        let document = self.read()?;
        let mut approved = approved_in(&document, &key);
        approved.extend(imports.iter().cloned());
        let list = approved
            .iter()
            .map(|path| Value::String(path.display().to_string()))
            .collect();
        let mut document = into_object(document);
        let mut projects = into_object(document.remove("projects").unwrap_or_default());
        let mut entry = into_object(projects.remove(&key).unwrap_or_default());
        entry.insert("approvedExternalImports".into(), Value::Array(list));
        projects.insert(key, Value::Object(entry));
        document.insert("projects".into(), Value::Object(projects));
        self.write(&Value::Object(document))
    }

    fn read(&self) -> Result<Value, ApprovalError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(json!({})),
            Err(source) => {
                return Err(ApprovalError::Read {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        serde_json::from_str(&text).map_err(|source| ApprovalError::Parse {
            path: self.path.clone(),
            source,
        })
    }

    /// Writes `document` whole: a private temp file beside the real one, then a rename, so a
    /// crash leaves the old file or the new one, never half of one.
    fn write(&self, document: &Value) -> Result<(), ApprovalError> {
        let failed = |source| ApprovalError::Write {
            path: self.path.clone(),
            source,
        };
        let directory = self.path.parent().unwrap_or(Path::new("."));
        cairn_protocol::private_dir_builder()
            .create(directory)
            .map_err(failed)?;
        let temp = directory.join(format!(".{APPROVALS_FILE}.{}.tmp", std::process::id()));
        let text = format!("{document:#}\n");
        let written = create_private_file(&temp).and_then(|mut file| {
            file.write_all(text.as_bytes())?;
            file.sync_all()
        });
        let renamed = written.and_then(|()| std::fs::rename(&temp, &self.path));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        renamed.map_err(failed)
    }
}

/// Whether Claude Code's own record approves external includes for `project`:
/// `home/.claude.json` → `projects.<project>.hasClaudeMdExternalIncludesApproved: true`.
/// A missing or unreadable file approves nothing. cairn never writes it.
pub fn claude_code_approves(home: &Path, project: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(home.join(".claude.json")) else {
        return false;
    };
    let Ok(document) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    let keys = [project.display().to_string(), project_key(project)];
    keys.iter().any(|key| {
        document
            .get("projects")
            .and_then(|projects| projects.get(key))
            .and_then(|entry| entry.get("hasClaudeMdExternalIncludesApproved"))
            == Some(&Value::Bool(true))
    })
}

/// The key a project is filed under: its real path.
fn project_key(project: &Path) -> String {
    project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf())
        .display()
        .to_string()
}

/// The paths `document` approves for the project filed under `key`.
fn approved_in(document: &Value, key: &str) -> BTreeSet<PathBuf> {
    document
        .get("projects")
        .and_then(|projects| projects.get(key))
        .and_then(|entry| entry.get("approvedExternalImports"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(PathBuf::from)
        .collect()
}

/// `value`'s fields; none when it is not an object.
fn into_object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn create_private_file(path: &Path) -> std::io::Result<std::fs::File> {
    // A leftover from a crash is replaced, not reused with whatever mode it had.
    let _ = std::fs::remove_file(path);
    cairn_protocol::private_file_options()
        .write(true)
        .create_new(true)
        .open(path)
}
