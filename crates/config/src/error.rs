//! What can go wrong reading settings, and the warnings a load can carry.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::Source;
use crate::regular_file::RegularFileError;

/// A settings load that cannot go on. Every message names the file (or flag, or override)
/// and, for a bad value, the JSON path inside it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read (permissions, a directory in its place, …).
    #[error("{}: cannot read settings file: {source}", path.display())]
    Unreadable {
        /// The settings file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: io::Error,
    },
    /// Something that is not a settings file where one was expected: a FIFO, a device (a
    /// link to `/dev/zero`), or a file far larger than settings ever are.
    #[error("{}: not read as a settings file: {reason}", path.display())]
    NotASettingsFile {
        /// The path where a settings file was expected.
        path: PathBuf,
        /// What is there instead.
        #[source]
        reason: RegularFileError,
    },
    /// `--settings` named a file that does not exist.
    #[error(
        "--settings {}: no such file (give the path of a settings file or an inline JSON object)",
        path.display()
    )]
    SettingsFlagFileMissing {
        /// The path as the flag gave it.
        path: PathBuf,
    },
    /// A source was read but its content is not valid settings.
    #[error("{origin}: {problem}")]
    Invalid {
        /// The file, flag or override the content came from.
        origin: Source,
        /// What is wrong with it, and where.
        problem: Problem,
    },
    /// An override key that does not name a settings key (empty, or with an empty part).
    #[error(
        "{label}: cannot override {key:?}: expected dot-separated key names such as \"permissions.defaultMode\""
    )]
    InvalidOverrideKey {
        /// Where the override came from, for the message (a flag or variable's name).
        label: String,
        /// The key as given.
        key: String,
    },
}

/// What is wrong with the content of one settings source; [`ConfigError::Invalid`] and
/// [`ConfigWarning::LegacyFileSkipped`] pair it with the source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// Not JSON at all.
    #[error("invalid JSON at line {line}, column {column}: {message}")]
    Syntax {
        /// The line of the error, counting from 1.
        line: usize,
        /// The column of the error, counting from 1.
        column: usize,
        /// The JSON parser's description.
        message: String,
    },
    /// JSON, but not an object at the top level.
    #[error("expected a JSON object at the top level, found {found}")]
    NotAnObject {
        /// What the top level is instead (`an array`, `a string`).
        found: &'static str,
    },
    /// A known key with a value of the wrong type or outside its allowed set.
    #[error("{key}: {message}")]
    InvalidValue {
        /// The JSON path of the value (`permissions.defaultMode`).
        key: String,
        /// What is wrong with it and what was expected.
        message: String,
    },
}

/// Something worth telling the user that did not stop the load. The loader never prints;
/// the caller shows these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigWarning {
    /// A legacy `.claude.json` could not be used and was left out; the other levels loaded.
    LegacyFileSkipped {
        /// The legacy file.
        origin: Source,
        /// Why it could not be used.
        problem: Problem,
    },
    /// The user chose to run without this file (it did not load); none of its settings
    /// apply, its permission rules included.
    LeftOut {
        /// The file left out.
        origin: Source,
    },
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigWarning::LegacyFileSkipped { origin, problem } => write!(
                f,
                "{origin}: {problem}; this legacy settings file was skipped, the other settings still apply"
            ),
            ConfigWarning::LeftOut { origin } => write!(
                f,
                "{origin} is left out of this session, as you chose: none of its settings apply, \
                 its permission rules and hooks included"
            ),
        }
    }
}
