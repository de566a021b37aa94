//! Folder trust: the folders whose own files the user has agreed may act.
//!
//! A cloned repository's `.claude/settings.json` can hold hooks that run commands,
//! permission rules, a permission mode; `.mcp.json` starts servers; custom commands run their
//! `!` lines. None of that may act before the user says they trust the folder: a folder's
//! own settings act only once it is trusted. The interactive UI asks once per folder and
//! keeps the answer here, in
//! `~/.cairn/trusted-folders.json`; `cairn -p` and the SDK face assume trust, as Claude Code
//! does, since their caller chose the folder.
//!
//! - Trusting a folder covers the folders under it (paths are compared canonicalised, so a
//!   symbolic link leads to the folder it names).
//! - The home directory is never trusted implicitly, as in Claude Code: a folder under it is
//!   covered only by an answer for itself or a parent below the home directory, never by one
//!   for the home directory or above it. A yes for the home directory itself holds for that
//!   run only and is not kept, so it is asked each time.
//! - A project settings file that sets `permissions.defaultMode: bypassPermissions` needs a
//!   second yes before that mode holds; that answer is kept per folder too. So are the
//!   credential settings of the folder's files the user approved
//!   ([`TrustedFolders::approve_setting`]; the rule is [`crate::project_level`]), as digests
//!   of key and value.
//! - A damaged file is read as "nothing trusted", with a [`TrustWarning`], never a failure:
//!   the worst it can do is ask again.
//!
//! ```
//! use cairn_config::trust::{FolderTrust, TrustedFolders};
//!
//! let cairn_home = tempfile::tempdir()?;
//! let home = tempfile::tempdir()?;
//! let project = tempfile::tempdir()?;
//! std::fs::create_dir(project.path().join("src"))?;
//!
//! let (mut folders, warning) = TrustedFolders::load(cairn_home.path(), home.path());
//! assert!(warning.is_none());
//! assert_eq!(folders.trust_of(project.path()), FolderTrust::Unknown);
//! folders.trust(project.path())?;
//!
//! // Kept: the next run, in the folder or under it, asks nothing.
//! let (folders, _) = TrustedFolders::load(cairn_home.path(), home.path());
//! assert!(folders.trust_of(&project.path().join("src")).is_trusted());
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::regular_file::read_regular_file;

/// The file under cairn's home (`~/.cairn`, or `$CAIRN_HOME`) that keeps the answers.
pub const TRUST_FILE_NAME: &str = "trusted-folders.json";

/// The file's format version, for a later change to recognise.
const FORMAT_VERSION: u32 = 1;

/// A trust file larger than this is not one cairn wrote.
const MAX_TRUST_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Whether a folder's own files may act.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderTrust {
    /// The user trusted this folder, or `by`, a parent of it.
    Trusted {
        /// The folder whose answer covers it: itself or a parent.
        by: PathBuf,
    },
    /// No answer covers it: ask.
    Unknown,
}

impl FolderTrust {
    /// Whether an answer trusts the folder.
    pub fn is_trusted(&self) -> bool {
        match self {
            FolderTrust::Trusted { .. } => true,
            FolderTrust::Unknown => false,
        }
    }
}

/// How long an answer is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// In the trust file, for every later run.
    Saved,
    /// For this run only: the home directory's answers are never kept.
    ThisRun,
}

/// The answers, as read from the trust file, with those given in this run.
#[derive(Debug, Clone)]
pub struct TrustedFolders {
    file: PathBuf,
    /// The home directory, canonicalised.
    home: PathBuf,
    saved: Vec<TrustedFolder>,
    /// Canonical folders trusted for this run only (the home directory).
    this_run: Vec<TrustedFolder>,
}

/// One trusted folder, as the file keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TrustedFolder {
    path: PathBuf,
    /// The user confirmed that this folder's settings may turn on `bypassPermissions`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    bypass_permissions_accepted: bool,
    /// Credential settings of this folder's own files the user approved, each kept as the
    /// digest of its key and value ([`setting_digest`]): a value that changes is asked
    /// about again, and a key the folder ships is never written here in clear.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    approved_settings: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    folders: Vec<TrustedFolder>,
}

/// The trust file could not be read; nothing in it counts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}: cannot read the trusted folders ({problem}); no folder counts as trusted until you \
     answer again, and the next answer replaces the file",
    path.display()
)]
pub struct TrustWarning {
    /// The trust file.
    pub path: PathBuf,
    /// What is wrong with it, in words for the user.
    pub problem: String,
}

/// An answer that could not be kept.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The directory of the trust file could not be created.
    #[error("cannot create {}: {source}", dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The trust file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The trust file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
}

impl TrustedFolders {
    /// The answers kept under `cairn_home` for the user whose home directory is `home`. A
    /// missing file means nothing is trusted yet; a damaged one the same, with a warning.
    pub fn load(cairn_home: &Path, home: &Path) -> (TrustedFolders, Option<TrustWarning>) {
        let file = cairn_home.join(TRUST_FILE_NAME);
        let (saved, warning) = match read_trust_file(&file) {
            Ok(saved) => (saved, None),
            Err(problem) => (
                Vec::new(),
                Some(TrustWarning {
                    path: file.clone(),
                    problem,
                }),
            ),
        };
        let folders = TrustedFolders {
            file,
            home: canonical(home),
            saved,
            this_run: Vec::new(),
        };
        (folders, warning)
    }

    /// Whether `folder`'s files may act, and which answer says so.
    pub fn trust_of(&self, folder: &Path) -> FolderTrust {
        let folder = canonical(folder);
        if let Some(entry) = self.this_run.iter().find(|entry| entry.path == folder) {
            return FolderTrust::Trusted {
                by: entry.path.clone(),
            };
        }
        self.covering(&folder)
            .map_or(FolderTrust::Unknown, |entry| FolderTrust::Trusted {
                by: entry.path.clone(),
            })
    }

    /// Trusts `folder` (and the folders under it), keeping the answer unless it is the home
    /// directory.
    pub fn trust(&mut self, folder: &Path) -> Result<Kept, TrustError> {
        let folder = canonical(folder);
        if folder == self.home {
            if !self.this_run.iter().any(|entry| entry.path == folder) {
                self.this_run.push(TrustedFolder::new(folder));
            }
            return Ok(Kept::ThisRun);
        }
        if !self.saved.iter().any(|entry| entry.path == folder) {
            self.saved.push(TrustedFolder::new(folder));
        }
        self.save()?;
        Ok(Kept::Saved)
    }

    /// Whether the user confirmed that `folder`'s own settings may turn on
    /// `bypassPermissions` (an answer for that folder itself, not a parent).
    pub fn bypass_permissions_accepted(&self, folder: &Path) -> bool {
        let folder = canonical(folder);
        self.saved
            .iter()
            .chain(&self.this_run)
            .any(|entry| entry.path == folder && entry.bypass_permissions_accepted)
    }

    /// Keeps the user's confirmation that `folder`'s settings may turn on
    /// `bypassPermissions`; for the home directory, for this run only.
    pub fn accept_bypass_permissions(&mut self, folder: &Path) -> Result<Kept, TrustError> {
        let folder = canonical(folder);
        let (list, kept) = if folder == self.home {
            (&mut self.this_run, Kept::ThisRun)
        } else {
            (&mut self.saved, Kept::Saved)
        };
        list_entry(list, folder).bypass_permissions_accepted = true;
        if kept == Kept::Saved {
            self.save()?;
        }
        Ok(kept)
    }

    /// Whether the user approved that `folder`'s own settings set `key` (a dotted key such as
    /// `env.ANTHROPIC_BASE_URL`) to `value`: an answer for that folder itself and that very
    /// value ([`crate::project_level`] asks).
    pub fn setting_approved(&self, folder: &Path, key: &str, value: &serde_json::Value) -> bool {
        let folder = canonical(folder);
        let digest = setting_digest(key, value);
        self.saved
            .iter()
            .chain(&self.this_run)
            .any(|entry| entry.path == folder && entry.approved_settings.contains(&digest))
    }

    /// Keeps the user's approval that `folder`'s settings set `key` to `value`; for the home
    /// directory, for this run only.
    pub fn approve_setting(
        &mut self,
        folder: &Path,
        key: &str,
        value: &serde_json::Value,
    ) -> Result<Kept, TrustError> {
        let folder = canonical(folder);
        let (list, kept) = if folder == self.home {
            (&mut self.this_run, Kept::ThisRun)
        } else {
            (&mut self.saved, Kept::Saved)
        };
        let digest = setting_digest(key, value);
        let entry = list_entry(list, folder);
        if !entry.approved_settings.contains(&digest) {
            entry.approved_settings.push(digest);
        }
        if kept == Kept::Saved {
            self.save()?;
        }
        Ok(kept)
    }

    /// The file the answers are kept in.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The saved answer that covers the canonical `folder`: its own or a parent's, looking no
    /// higher than just below the home directory when the folder is in it.
    fn covering(&self, folder: &Path) -> Option<&TrustedFolder> {
        for candidate in folder.ancestors() {
            if candidate == self.home {
                return None;
            }
            if let Some(entry) = self.saved.iter().find(|entry| entry.path == candidate) {
                return Some(entry);
            }
        }
        None
    }

    /// Writes the saved answers: a private temp file (0600, in a 0700 directory) renamed over
    /// the old one, so a crash never leaves half a file.
    fn save(&self) -> Result<(), TrustError> {
        let dir = self.file.parent().unwrap_or(Path::new("."));
        cairn_protocol::private_dir_builder()
            .create(dir)
            .map_err(|source| TrustError::CreateDir {
                dir: dir.to_path_buf(),
                source,
            })?;
        let contents = TrustFile {
            version: FORMAT_VERSION,
            folders: self.saved.clone(),
        };
        let write_error = |source| TrustError::Write {
            path: self.file.clone(),
            source,
        };
        let mut text = serde_json::to_string_pretty(&contents)
            .map_err(|err| write_error(std::io::Error::other(err)))?;
        text.push('\n');
        let temp = dir.join(format!(".{TRUST_FILE_NAME}.{}.tmp", std::process::id()));
        let written = cairn_protocol::private_file_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)
            .and_then(|mut file| {
                file.write_all(text.as_bytes())?;
                file.sync_all()
            })
            .and_then(|()| std::fs::rename(&temp, &self.file));
        if let Err(err) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(write_error(err));
        }
        Ok(())
    }
}

impl TrustedFolder {
    fn new(path: PathBuf) -> TrustedFolder {
        TrustedFolder {
            path,
            bypass_permissions_accepted: false,
            approved_settings: Vec::new(),
        }
    }
}

/// The entry of `list` for `folder`, added if there is none.
fn list_entry(list: &mut Vec<TrustedFolder>, folder: PathBuf) -> &mut TrustedFolder {
    let index = match list.iter().position(|entry| entry.path == folder) {
        Some(index) => index,
        None => {
            list.push(TrustedFolder::new(folder));
            list.len() - 1
        }
    };
    &mut list[index]
}

/// The SHA-256 of a setting's key and value, in hex: what the trust file keeps of an approved
/// setting.
fn setting_digest(key: &str, value: &serde_json::Value) -> String {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    hasher.update(key.as_bytes());
    hasher.update([0]);
    hasher.update(value.to_string().as_bytes());
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The saved answers, or what is wrong with the file.
fn read_trust_file(path: &Path) -> Result<Vec<TrustedFolder>, String> {
    let Some(bytes) = read_regular_file(path, MAX_TRUST_FILE_BYTES).map_err(|e| e.to_string())?
    else {
        return Ok(Vec::new());
    };
    let file: TrustFile = serde_json::from_slice(&bytes).map_err(|err| err.to_string())?;
    if file.version != FORMAT_VERSION {
        return Err(format!(
            "version {} is not one this cairn reads (expected {FORMAT_VERSION})",
            file.version
        ));
    }
    // Only absolute paths can name a folder; anything else was not written by cairn.
    if let Some(entry) = file.folders.iter().find(|entry| !entry.path.is_absolute()) {
        return Err(format!("{} is not an absolute path", entry.path.display()));
    }
    Ok(file.folders)
}

/// `path` with symbolic links and `..` resolved, or as given when it cannot be (a folder
/// that no longer exists).
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The files in `folder` through which it can act once trusted (settings with hooks and
/// rules, MCP servers, custom commands), named relative to it, for the question to show.
pub fn files_that_act(folder: &Path) -> Vec<&'static str> {
    [
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".claude.json",
        ".mcp.json",
        ".claude/commands",
    ]
    .into_iter()
    .filter(|name| folder.join(name).exists())
    .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use pretty_assertions::assert_eq;

    use super::*;

    /// A cairn home, a home directory with a project in it, and a folder outside it.
    struct Dirs {
        cairn_home: tempfile::TempDir,
        home: tempfile::TempDir,
        outside: tempfile::TempDir,
    }

    impl Dirs {
        fn new() -> Dirs {
            let dirs = Dirs {
                cairn_home: tempfile::tempdir().unwrap(),
                home: tempfile::tempdir().unwrap(),
                outside: tempfile::tempdir().unwrap(),
            };
            std::fs::create_dir_all(dirs.home().join("code/app/src")).unwrap();
            std::fs::create_dir_all(dirs.outside().join("repo/sub")).unwrap();
            dirs
        }

        /// `<temp>/users/me`, so that a parent of it is not a parent of `outside` too.
        fn home(&self) -> PathBuf {
            canonical(self.home.path()).join("users/me")
        }

        fn outside(&self) -> PathBuf {
            canonical(self.outside.path())
        }

        fn load(&self) -> TrustedFolders {
            let (folders, warning) = TrustedFolders::load(self.cairn_home.path(), &self.home());
            assert_eq!(warning, None);
            folders
        }

        fn file(&self) -> PathBuf {
            self.cairn_home.path().join(TRUST_FILE_NAME)
        }
    }

    #[test]
    fn a_trusted_parent_covers_its_children_across_runs() {
        let dirs = Dirs::new();
        let repo = dirs.outside().join("repo");
        let mut folders = dirs.load();
        assert_eq!(folders.trust_of(&repo), FolderTrust::Unknown);
        assert_eq!(folders.trust(&repo).unwrap(), Kept::Saved);

        let folders = dirs.load();
        let by_repo = FolderTrust::Trusted { by: repo.clone() };
        assert_eq!(folders.trust_of(&repo), by_repo);
        assert_eq!(folders.trust_of(&repo.join("sub")), by_repo);
        // Through `..` too: paths are compared canonicalised.
        assert_eq!(folders.trust_of(&repo.join("sub/..")), by_repo);
        // A sibling, and the parent, are not covered.
        assert_eq!(folders.trust_of(&dirs.outside()), FolderTrust::Unknown);
        let sibling = dirs.outside().join("repo-other");
        std::fs::create_dir(&sibling).unwrap();
        assert_eq!(folders.trust_of(&sibling), FolderTrust::Unknown);
    }

    #[test]
    fn a_link_to_a_trusted_folder_is_trusted() {
        let dirs = Dirs::new();
        let repo = dirs.outside().join("repo");
        dirs.load().trust(&repo).unwrap();
        let link = dirs.outside().join("link");
        std::os::unix::fs::symlink(&repo, &link).unwrap();
        assert_eq!(
            dirs.load().trust_of(&link.join("sub")),
            FolderTrust::Trusted { by: repo }
        );
    }

    #[test]
    fn the_home_directory_is_trusted_for_one_run_and_never_covers_its_children() {
        let dirs = Dirs::new();
        let home = dirs.home();
        let app = home.join("code/app");
        let mut folders = dirs.load();
        assert_eq!(folders.trust(&home).unwrap(), Kept::ThisRun);
        assert_eq!(
            folders.trust_of(&home),
            FolderTrust::Trusted { by: home.clone() }
        );
        assert_eq!(folders.trust_of(&app), FolderTrust::Unknown);
        // Not kept: the next run asks again.
        assert!(!dirs.file().exists());
        assert_eq!(dirs.load().trust_of(&home), FolderTrust::Unknown);
    }

    #[test]
    fn answers_above_the_home_directory_do_not_reach_into_it() {
        let dirs = Dirs::new();
        let home = dirs.home();
        let app = home.join("code/app");
        // As if written by hand: the root, the home directory itself, and a parent of it.
        let text = serde_json::json!({
            "version": 1,
            "folders": [
                {"path": "/"},
                {"path": home},
                {"path": home.parent().unwrap()},
            ],
        });
        std::fs::write(dirs.file(), text.to_string()).unwrap();
        let mut folders = dirs.load();
        assert_eq!(folders.trust_of(&home), FolderTrust::Unknown);
        assert_eq!(folders.trust_of(&app), FolderTrust::Unknown);
        // Outside the home directory the root's answer holds.
        assert_eq!(
            folders.trust_of(&dirs.outside().join("repo")),
            FolderTrust::Trusted { by: "/".into() }
        );
        // A folder in the home directory, trusted itself, covers its children.
        let code = home.join("code");
        folders.trust(&code).unwrap();
        assert_eq!(
            dirs.load().trust_of(&app.join("src")),
            FolderTrust::Trusted { by: code }
        );
    }

    #[test]
    fn a_damaged_file_trusts_nothing_and_says_so() {
        let dirs = Dirs::new();
        let repo = dirs.outside().join("repo");
        let cases = [
            (
                "{\"version\": 1, \"folders\": [",
                "EOF while parsing a list at line 1 column 27",
            ),
            (
                "[]",
                "invalid length 0, expected struct TrustFile with 2 elements at line 1 column 2",
            ),
            (
                "{\"version\": 7, \"folders\": []}",
                "version 7 is not one this cairn reads (expected 1)",
            ),
            (
                "{\"version\": 1, \"folders\": [{\"path\": \"relative\"}]}",
                "relative is not an absolute path",
            ),
        ];
        for (text, problem) in cases {
            std::fs::write(dirs.file(), text).unwrap();
            let (folders, warning) = TrustedFolders::load(dirs.cairn_home.path(), &dirs.home());
            assert_eq!(
                warning,
                Some(TrustWarning {
                    path: dirs.file(),
                    problem: problem.to_string(),
                }),
                "{text}"
            );
            assert_eq!(folders.trust_of(&repo), FolderTrust::Unknown, "{text}");
        }

        // A directory in the file's place is damage too, not a failure.
        std::fs::remove_file(dirs.file()).unwrap();
        std::fs::create_dir(dirs.file()).unwrap();
        let (folders, warning) = TrustedFolders::load(dirs.cairn_home.path(), &dirs.home());
        assert_eq!(folders.trust_of(&repo), FolderTrust::Unknown);
        assert!(warning.is_some());
    }

    #[test]
    fn the_next_answer_replaces_a_damaged_file() {
        let dirs = Dirs::new();
        let repo = dirs.outside().join("repo");
        std::fs::write(dirs.file(), "not json").unwrap();
        let (mut folders, warning) = TrustedFolders::load(dirs.cairn_home.path(), &dirs.home());
        assert!(warning.is_some());
        folders.trust(&repo).unwrap();
        assert_eq!(
            dirs.load().trust_of(&repo),
            FolderTrust::Trusted { by: repo.clone() }
        );
    }

    #[test]
    fn the_file_is_private_and_readable() {
        let dirs = Dirs::new();
        let cairn_home = dirs.cairn_home.path().join("nested/.cairn");
        let repo = dirs.outside().join("repo");
        let (mut folders, _) = TrustedFolders::load(&cairn_home, &dirs.home());
        folders.trust(&repo).unwrap();
        folders.trust(&repo).unwrap();
        let file = cairn_home.join(TRUST_FILE_NAME);
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&cairn_home), mode(&file)), (0o700, 0o600));
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            saved,
            serde_json::json!({"version": 1, "folders": [{"path": repo}]})
        );
        // No temp file left beside it.
        let names: Vec<_> = std::fs::read_dir(&cairn_home)
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(TRUST_FILE_NAME)]);
    }

    #[test]
    fn bypass_permissions_is_accepted_per_folder() {
        let dirs = Dirs::new();
        let repo = dirs.outside().join("repo");
        let mut folders = dirs.load();
        folders.trust(&repo).unwrap();
        assert!(!folders.bypass_permissions_accepted(&repo));
        assert_eq!(
            folders.accept_bypass_permissions(&repo).unwrap(),
            Kept::Saved
        );
        let folders = dirs.load();
        assert!(folders.bypass_permissions_accepted(&repo));
        // A child's settings are its own: the parent's yes does not cover them.
        assert!(!folders.bypass_permissions_accepted(&repo.join("sub")));

        let mut folders = dirs.load();
        assert_eq!(
            folders.accept_bypass_permissions(&dirs.home()).unwrap(),
            Kept::ThisRun
        );
        assert!(folders.bypass_permissions_accepted(&dirs.home()));
        assert!(!dirs.load().bypass_permissions_accepted(&dirs.home()));
    }

    #[test]
    fn settings_are_approved_per_folder_and_value_and_kept_as_digests() {
        let dirs = Dirs::new();
        let repo = dirs.outside().join("repo");
        let url = serde_json::json!("http://proxy.example");
        let mut folders = dirs.load();
        folders.trust(&repo).unwrap();
        assert!(!folders.setting_approved(&repo, "env.ANTHROPIC_BASE_URL", &url));
        assert_eq!(
            folders
                .approve_setting(&repo, "env.ANTHROPIC_BASE_URL", &url)
                .unwrap(),
            Kept::Saved
        );
        let folders = dirs.load();
        assert!(folders.setting_approved(&repo, "env.ANTHROPIC_BASE_URL", &url));
        // Another value, another key, a child folder: not approved.
        let other = serde_json::json!("http://elsewhere.example");
        assert!(!folders.setting_approved(&repo, "env.ANTHROPIC_BASE_URL", &other));
        assert!(!folders.setting_approved(&repo, "env.OPENAI_BASE_URL", &url));
        assert!(!folders.setting_approved(&repo.join("sub"), "env.ANTHROPIC_BASE_URL", &url));
        // The file keeps no value in clear, and the folder stays trusted.
        let text = std::fs::read_to_string(dirs.file()).unwrap();
        assert!(!text.contains("proxy.example"), "{text}");
        assert!(folders.trust_of(&repo).is_trusted());

        let mut folders = dirs.load();
        let home = dirs.home();
        assert_eq!(
            folders
                .approve_setting(&home, "apiKeyHelper", &url)
                .unwrap(),
            Kept::ThisRun
        );
        assert!(folders.setting_approved(&home, "apiKeyHelper", &url));
        assert!(!dirs.load().setting_approved(&home, "apiKeyHelper", &url));
    }

    #[test]
    fn files_that_act_are_named() {
        let dirs = Dirs::new();
        let repo = dirs.outside().join("repo");
        assert_eq!(files_that_act(&repo), Vec::<&str>::new());
        std::fs::create_dir_all(repo.join(".claude/commands")).unwrap();
        std::fs::write(repo.join(".claude/settings.json"), "{}").unwrap();
        std::fs::write(repo.join(".mcp.json"), "{}").unwrap();
        assert_eq!(
            files_that_act(&repo),
            vec![".claude/settings.json", ".mcp.json", ".claude/commands"]
        );
    }
}
