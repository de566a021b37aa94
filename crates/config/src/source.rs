//! Where a settings value came from.

use std::fmt;
use std::path::{Path, PathBuf};

/// One layer of settings: a file at one of the five levels, the `--settings` flag, or an
/// override the caller applied last (an environment variable or a command-line flag).
///
/// The variants are listed from the lowest precedence to the highest. Provenance answers
/// ([`LoadedSettings::origin`](crate::LoadedSettings::origin)) and error messages name a
/// `Source`; its `Display` is the file's path, `--settings (inline JSON)`, or the override's
/// label.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Source {
    /// `~/.claude.json`, Claude Code's legacy global config (also its state file).
    UserLegacy(PathBuf),
    /// `~/.claude/settings.json`.
    User(PathBuf),
    /// `<project>/.claude.json`, the legacy project config.
    ProjectLegacy(PathBuf),
    /// `<project>/.claude/settings.json`, shared with the team.
    Project(PathBuf),
    /// `<project>/.claude/settings.local.json`, personal and not checked in.
    ProjectLocal(PathBuf),
    /// A settings file named by `--settings <path>`.
    FlagFile(PathBuf),
    /// A JSON object given inline to `--settings '{…}'`.
    FlagInline,
    /// A value applied by the caller, labelled for provenance (`--model`, `ANTHROPIC_MODEL`).
    Override(String),
}

impl Source {
    /// The file this source was read from, if it is a file.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Source::UserLegacy(path)
            | Source::User(path)
            | Source::ProjectLegacy(path)
            | Source::Project(path)
            | Source::ProjectLocal(path)
            | Source::FlagFile(path) => Some(path),
            Source::FlagInline | Source::Override(_) => None,
        }
    }

    /// Whether this is one of the legacy `.claude.json` files, which are read tolerantly: a
    /// broken one is skipped with a warning instead of stopping the load.
    pub fn is_legacy(&self) -> bool {
        match self {
            Source::UserLegacy(_) | Source::ProjectLegacy(_) => true,
            Source::User(_)
            | Source::Project(_)
            | Source::ProjectLocal(_)
            | Source::FlagFile(_)
            | Source::FlagInline
            | Source::Override(_) => false,
        }
    }

    /// Whether this is one of the project's own files (`.claude.json`, `.claude/settings.json`,
    /// `.claude/settings.local.json`): files that come with a checkout, whoever wrote them.
    /// A local file is not checked in, but a cloned repository can ship one all the same.
    pub fn is_project_level(&self) -> bool {
        match self {
            Source::ProjectLegacy(_) | Source::Project(_) | Source::ProjectLocal(_) => true,
            Source::UserLegacy(_)
            | Source::User(_)
            | Source::FlagFile(_)
            | Source::FlagInline
            | Source::Override(_) => false,
        }
    }

    /// A short name for the level, as `cairn config list` may show beside the path.
    pub fn scope(&self) -> &'static str {
        match self {
            Source::UserLegacy(_) => "user (legacy)",
            Source::User(_) => "user",
            Source::ProjectLegacy(_) => "project (legacy)",
            Source::Project(_) => "project",
            Source::ProjectLocal(_) => "local",
            Source::FlagFile(_) | Source::FlagInline => "flag",
            Source::Override(_) => "override",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::UserLegacy(path)
            | Source::User(path)
            | Source::ProjectLegacy(path)
            | Source::Project(path)
            | Source::ProjectLocal(path)
            | Source::FlagFile(path) => write!(f, "{}", path.display()),
            Source::FlagInline => f.write_str("--settings (inline JSON)"),
            Source::Override(label) => f.write_str(label),
        }
    }
}

/// Which of the settings files a run reads: Claude Code's `--setting-sources user,project,local`.
///
/// `user` is `~/.claude/settings.json` (and the legacy `~/.claude.json`), `project` is
/// `.claude/settings.json` (and the legacy `.claude.json`), `local` is
/// `.claude/settings.local.json`. `--settings` and overrides are read whatever this says. An
/// empty list reads none of the files, as the Agent SDKs pass it:
///
/// ```
/// use cairn_config::SettingSources;
///
/// let ci: SettingSources = "user".parse()?;
/// assert!(ci.user && !ci.project && !ci.local);
/// assert_eq!("".parse::<SettingSources>()?, SettingSources::NONE);
/// assert_eq!(
///     "user,projekt".parse::<SettingSources>().unwrap_err().to_string(),
///     "unknown setting source \"projekt\" (expected a comma-separated list of user, project, local)"
/// );
/// # Ok::<_, cairn_config::UnknownSettingSource>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingSources {
    /// The user's own files under the home directory.
    pub user: bool,
    /// The project's shared files.
    pub project: bool,
    /// The project's `.claude/settings.local.json`.
    pub local: bool,
}

impl SettingSources {
    /// Every file, as a run reads them unless told otherwise.
    pub const ALL: SettingSources = SettingSources {
        user: true,
        project: true,
        local: true,
    };

    /// None of the files: `--setting-sources ""`.
    pub const NONE: SettingSources = SettingSources {
        user: false,
        project: false,
        local: false,
    };

    /// Whether a run with these sources reads `source`.
    pub fn includes(&self, source: &Source) -> bool {
        match source {
            Source::UserLegacy(_) | Source::User(_) => self.user,
            Source::ProjectLegacy(_) | Source::Project(_) => self.project,
            Source::ProjectLocal(_) => self.local,
            Source::FlagFile(_) | Source::FlagInline | Source::Override(_) => true,
        }
    }
}

impl Default for SettingSources {
    fn default() -> Self {
        SettingSources::ALL
    }
}

/// A word of `--setting-sources` that names no source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown setting source {0:?} (expected a comma-separated list of user, project, local)")]
pub struct UnknownSettingSource(pub String);

impl std::str::FromStr for SettingSources {
    type Err = UnknownSettingSource;

    /// A comma-separated list; spaces around the words and empty words are ignored.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut sources = SettingSources::NONE;
        for word in text
            .split(',')
            .map(str::trim)
            .filter(|word| !word.is_empty())
        {
            match word {
                "user" => sources.user = true,
                "project" => sources.project = true,
                "local" => sources.local = true,
                other => return Err(UnknownSettingSource(other.to_owned())),
            }
        }
        Ok(sources)
    }
}
