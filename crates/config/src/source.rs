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
