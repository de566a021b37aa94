//! Claude Code's settings files, read and merged into one view: the crate's one job.
//!
//! cairn is drop-in compatible with the settings users already keep for Claude Code.
//! [`SettingsLoader`] reads them, lowest precedence first:
//!
//! 1. `~/.claude.json` (legacy; Claude Code keeps its own state there too)
//! 2. `~/.claude/settings.json`
//! 3. `<project>/.claude.json` (legacy)
//! 4. `<project>/.claude/settings.json`
//! 5. `<project>/.claude/settings.local.json`
//! 6. `--settings <file or inline JSON object>`
//! 7. overrides the caller applies last, for environment variables and command-line flags
//!    ([`LoadedSettings::apply_override`]), so that `--model` beats every file.
//!
//! # Merge
//!
//! Objects merge key by key, recursively. Scalars and arrays are replaced by the higher
//! level, with two exceptions that accumulate across levels, lower levels first:
//!
//! - the permission lists `permissions.allow`, `permissions.ask`, `permissions.deny` and
//!   `permissions.additionalDirectories`, where each value appears once (a rule given at two
//!   levels is kept where it first appeared);
//! - hooks, `hooks.<EventName>`, where every entry is kept: the hook runner decides what to
//!   do with identical commands.
//!
//! # Two views, with provenance
//!
//! [`LoadedSettings`] keeps the merged JSON with every key, known to cairn or not
//! ([`get`](LoadedSettings::get) by dotted key, [`list`](LoadedSettings::list) of every leaf),
//! and the typed [`Settings`] of the keys cairn acts on. For any key,
//! [`origin`](LoadedSettings::origin) names the [`Source`] that supplied the effective value,
//! and [`origins`](LoadedSettings::origins) every layer that contributed to a merged object or
//! an accumulated list.
//!
//! ```
//! use cairn_config::{SettingsLoader, Source};
//!
//! let home = tempfile::tempdir()?;
//! let project = tempfile::tempdir()?;
//! let user_file = home.path().join(".claude/settings.json");
//! let project_file = project.path().join(".claude/settings.json");
//! std::fs::create_dir_all(user_file.parent().unwrap())?;
//! std::fs::create_dir_all(project_file.parent().unwrap())?;
//! std::fs::write(&user_file, r#"{"model": "opus", "permissions": {"allow": ["Read"]}}"#)?;
//! std::fs::write(&project_file, r#"{"permissions": {"allow": ["Bash(npm test)"]}}"#)?;
//!
//! let loaded = SettingsLoader::new(home.path(), project.path()).load()?;
//! // Permission lists accumulate, lower levels first; the model came from the user's file.
//! assert_eq!(loaded.settings().permissions.allow, ["Read", "Bash(npm test)"]);
//! assert_eq!(loaded.settings().model.as_deref(), Some("opus"));
//! assert_eq!(loaded.origin("model"), Some(&Source::User(user_file)));
//!
//! // A wrong value is an error naming the file and the JSON path.
//! std::fs::write(&project_file, r#"{"permissions": {"defaultMode": "acceptEdit"}}"#)?;
//! let error = SettingsLoader::new(home.path(), project.path()).load().unwrap_err();
//! assert!(error.to_string().starts_with(&format!(
//!     "{}: permissions.defaultMode: unknown mode \"acceptEdit\"",
//!     project_file.display()
//! )));
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! ```
//!
//! # Errors and tolerance
//!
//! Each layer's known keys are checked on their own, so a [`ConfigError`] names the file (or
//! flag, or override) and the JSON path in it, and says what was expected:
//!
//! ```text
//! /proj/.claude/settings.json: permissions.defaultMode: unknown mode "acceptEdit" (expected one of default, acceptEdits, plan, bypassPermissions, dontAsk)
//! ```
//!
//! A missing file is not an error. The legacy `.claude.json` files are read tolerantly, so
//! that old formats keep working: only the keys [`Settings`] knows are taken from
//! them, and one that is not JSON, not an object, or has a known key of the wrong type is
//! skipped with one [`ConfigWarning`]. This crate never prints; warnings are returned.
//!
//! # What a project's files may decide
//!
//! A run may read only some of the files ([`SettingsLoader::setting_sources`], the
//! `--setting-sources` flag). Of what the project's own files say, a few keys — turning
//! permission checks or the sandbox off, choosing where the credentials go — take effect only
//! with the user's say: [`project_level`] holds that one rule, for every reader of project
//! files.
//!
//! # Writing rules back
//!
//! The one settings file cairn writes is the project's `.claude/settings.local.json`, when the
//! user adds or removes a permission rule while it runs: [`rules_file`] does that for every
//! face. [`trust`] keeps the folders the user said they trust, in cairn's own state.
//!
//! This crate must not print (warnings are returned) or depend on any cairn crate but
//! `cairn-protocol`.

#![deny(missing_docs)]

mod error;
mod load;
mod loaded;
mod merge;
pub mod project_level;
mod regular_file;
pub mod rules_file;
mod settings;
pub mod settings_edit;
mod source;
mod supported;
pub mod trust;

pub use error::{ConfigError, ConfigWarning, Problem};
pub use load::SettingsLoader;
pub use loaded::{LoadedSettings, SettingEntry};
pub use regular_file::{
    FileStart, MAX_LEGACY_SETTINGS_BYTES, MAX_SETTINGS_BYTES, RegularFileError, Rest,
    read_regular_file, read_regular_file_start,
};
pub use settings::{
    ModelSettings, PermissionMode, Permissions, ProviderSettings, SandboxSettings, Settings,
    StatusLineCommand, UnknownPermissionMode, UsdPerMtok,
};
pub use source::{SettingSources, Source, UnknownSettingSource};
pub use supported::{SUPPORTED_KEYS, UnsupportedKey};
