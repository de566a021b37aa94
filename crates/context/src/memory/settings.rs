//! Whether memory is on, and where it lives: `autoMemoryEnabled` and `autoMemoryDirectory`,
//! read as Claude Code reads them.

use std::path::{Path, PathBuf};

use cairn_config::{LoadedSettings, Source};
use serde_json::Value;

/// The setting that turns memory off (`false`); on when absent.
pub const ENABLED_KEY: &str = "autoMemoryEnabled";

/// The setting that moves the memory directory.
pub const DIRECTORY_KEY: &str = "autoMemoryDirectory";

/// Where a session keeps its memories, if anywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemorySettings {
    /// The memory directory; `None` when `autoMemoryEnabled` is `false`.
    pub directory: Option<PathBuf>,
    /// Values that were ignored, each naming the setting, the file and the fix, for a warning
    /// at start.
    pub warnings: Vec<String>,
}

impl MemorySettings {
    /// Reads `autoMemoryEnabled` and `autoMemoryDirectory` from the merged settings.
    ///
    /// `default_directory` is `<cairn_home>/projects/<project-key>/memory` (the caller names
    /// the project's folder); `home` expands a leading `~/` in `autoMemoryDirectory`.
    ///
    /// cairn's own writes into the memory directory are allowed without a question, so the
    /// project's shared settings (`.claude/settings.json`, `.claude.json`), which come with the
    /// repository, may not move it: a repository could point it at `~/.ssh`. As in Claude
    /// Code, only the user's files and flags may (not `.claude/settings.local.json`, which a
    /// repository can carry as well); nor may it hold the home directory; a relative
    /// path is refused too, since it would depend on where cairn was started.
    ///
    /// ```
    /// use std::path::{Path, PathBuf};
    /// use cairn_context::memory::MemorySettings;
    ///
    /// let settings = cairn_config::LoadedSettings::default();
    /// let memory = MemorySettings::from_settings(&settings, PathBuf::from("/h/.cairn/projects/p/memory"), None);
    /// assert_eq!(memory.directory.as_deref(), Some(Path::new("/h/.cairn/projects/p/memory")));
    /// assert!(memory.warnings.is_empty());
    /// ```
    pub fn from_settings(
        settings: &LoadedSettings,
        default_directory: PathBuf,
        home: Option<&Path>,
    ) -> MemorySettings {
        let mut warnings = Vec::new();
        let origin = |key: &str| {
            settings
                .origin(key)
                .map_or_else(|| "the settings".to_owned(), ToString::to_string)
        };
        match settings.get(ENABLED_KEY) {
            None | Some(Value::Bool(true)) => {}
            Some(Value::Bool(false)) => {
                return MemorySettings {
                    directory: None,
                    warnings,
                };
            }
            Some(other) => warnings.push(format!(
                "{ENABLED_KEY} in {} is {other}, not true or false: memory stays on",
                origin(ENABLED_KEY)
            )),
        }
        let directory = match settings.get(DIRECTORY_KEY) {
            None => default_directory,
            Some(value) => match chosen_directory(value, settings.origin(DIRECTORY_KEY), home) {
                Ok(directory) => directory,
                Err(reason) => {
                    warnings.push(format!(
                        "{DIRECTORY_KEY} in {} is ignored: {reason}; memories stay in {}",
                        origin(DIRECTORY_KEY),
                        default_directory.display()
                    ));
                    default_directory
                }
            },
        };
        MemorySettings {
            directory: Some(directory),
            warnings,
        }
    }
}

/// The directory `value` names, or why it may not be used.
fn chosen_directory(
    value: &Value,
    origin: Option<&Source>,
    home: Option<&Path>,
) -> Result<PathBuf, String> {
    match origin {
        // A repository can carry any of the project's files, `.claude/settings.local.json`
        // too (`cairn -p` trusts the folder it is run in).
        Some(Source::Project(_) | Source::ProjectLegacy(_) | Source::ProjectLocal(_)) => {
            return Err(
                "a project's settings may not move memory, which cairn writes without \
                 asking; set it in ~/.claude/settings.json or with --settings"
                    .to_owned(),
            );
        }
        Some(
            Source::UserLegacy(_)
            | Source::User(_)
            | Source::FlagFile(_)
            | Source::FlagInline
            | Source::Override(_),
        )
        | None => {}
    }
    let Value::String(text) = value else {
        return Err(format!("it is {value}, not a path"));
    };
    let path = match (text.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        (Some(_), None) => return Err("`~` cannot be expanded: no home directory".to_owned()),
        (None, _) => PathBuf::from(text),
    };
    if !path.is_absolute() {
        return Err(format!("`{text}` is not an absolute path"));
    }
    if path.parent().is_none() {
        return Err("the filesystem root cannot hold memories".to_owned());
    }
    // Every file below it is written without asking: never the home directory's own files.
    if home.is_some_and(|home| home.starts_with(&path)) {
        return Err(format!(
            "`{text}` holds the home directory; choose a folder of its own"
        ));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn settings_from(files: &[(&str, &str)]) -> (tempfile::TempDir, LoadedSettings) {
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        for (relative, text) in files {
            let path = dir.path().join(relative);
            std::fs::create_dir_all(path.parent().unwrap_or(dir.path()))
                .unwrap_or_else(|error| panic!("{error}"));
            std::fs::write(&path, text).unwrap_or_else(|error| panic!("{error}"));
        }
        std::fs::create_dir_all(&project).unwrap_or_else(|error| panic!("{error}"));
        let loaded = cairn_config::SettingsLoader::new(&home, &project)
            .load()
            .unwrap_or_else(|error| panic!("{error}"));
        (dir, loaded)
    }

    fn default_dir() -> PathBuf {
        PathBuf::from("/h/.cairn/projects/p/memory")
    }

    #[test]
    fn memory_is_on_in_the_default_directory_without_settings() {
        let (_dir, loaded) = settings_from(&[]);
        assert_eq!(
            MemorySettings::from_settings(&loaded, default_dir(), None),
            MemorySettings {
                directory: Some(default_dir()),
                warnings: vec![],
            }
        );
    }

    #[test]
    fn auto_memory_enabled_false_turns_memory_off() {
        let (_dir, loaded) = settings_from(&[(
            "project/.claude/settings.json",
            r#"{"autoMemoryEnabled": false}"#,
        )]);
        assert_eq!(
            MemorySettings::from_settings(&loaded, default_dir(), None),
            MemorySettings {
                directory: None,
                warnings: vec![],
            }
        );
    }

    #[test]
    fn the_users_settings_move_the_directory_with_tilde_expanded() {
        let (dir, loaded) = settings_from(&[(
            "home/.claude/settings.json",
            r#"{"autoMemoryDirectory": "~/notes/memory"}"#,
        )]);
        let home = dir.path().join("home");
        assert_eq!(
            MemorySettings::from_settings(&loaded, default_dir(), Some(&home)),
            MemorySettings {
                directory: Some(home.join("notes/memory")),
                warnings: vec![],
            }
        );
    }

    #[test]
    fn no_settings_file_of_the_project_may_move_the_directory() {
        for file in [".claude/settings.json", ".claude/settings.local.json"] {
            let (dir, loaded) = settings_from(&[(
                &format!("project/{file}"),
                r#"{"autoMemoryDirectory": "/home/me/.ssh"}"#,
            )]);
            let path = dir.path().join("project").join(file);
            assert_eq!(
                MemorySettings::from_settings(&loaded, default_dir(), None),
                MemorySettings {
                    directory: Some(default_dir()),
                    warnings: vec![format!(
                        "autoMemoryDirectory in {} is ignored: a project's settings may not \
                         move memory, which cairn writes without asking; set it in \
                         ~/.claude/settings.json or with --settings; memories stay in \
                         /h/.cairn/projects/p/memory",
                        path.display()
                    )],
                }
            );
        }
    }

    #[test]
    fn the_directory_may_not_hold_the_home_directory() {
        let (dir, loaded) = settings_from(&[(
            "home/.claude/settings.json",
            r#"{"autoMemoryDirectory": "~/"}"#,
        )]);
        let home = dir.path().join("home");
        let memory = MemorySettings::from_settings(&loaded, default_dir(), Some(&home));
        assert_eq!(memory.directory, Some(default_dir()));
        assert_eq!(memory.warnings.len(), 1, "{:?}", memory.warnings);
        assert!(
            memory.warnings[0].contains("holds the home directory"),
            "{:?}",
            memory.warnings
        );
        let (_dir, loaded) = settings_from(&[(
            "home/.claude/settings.json",
            &format!(r#"{{"autoMemoryDirectory": "{}"}}"#, dir.path().display()),
        )]);
        let above = MemorySettings::from_settings(&loaded, default_dir(), Some(&home));
        assert_eq!(above.directory, Some(default_dir()), "an ancestor of home");
    }

    #[test]
    fn a_relative_directory_or_a_non_boolean_switch_is_a_warning() {
        let (dir, loaded) = settings_from(&[(
            "home/.claude/settings.json",
            r#"{"autoMemoryDirectory": "memory", "autoMemoryEnabled": "no"}"#,
        )]);
        let file = dir.path().join("home/.claude/settings.json");
        assert_eq!(
            MemorySettings::from_settings(&loaded, default_dir(), None),
            MemorySettings {
                directory: Some(default_dir()),
                warnings: vec![
                    format!(
                        "autoMemoryEnabled in {} is \"no\", not true or false: memory stays on",
                        file.display()
                    ),
                    format!(
                        "autoMemoryDirectory in {} is ignored: `memory` is not an absolute \
                         path; memories stay in /h/.cairn/projects/p/memory",
                        file.display()
                    ),
                ],
            }
        );
    }
}
