//! Reading the settings files and the `--settings` flag into validated layers.

use cairn_protocol::json_kind;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::merge;
use crate::regular_file::{
    MAX_LEGACY_SETTINGS_BYTES, MAX_SETTINGS_BYTES, RegularFileError, read_regular_file,
};
use crate::settings::KNOWN_KEYS;
use crate::{
    ConfigError, ConfigWarning, LoadedSettings, Problem, SettingSources, Settings, Source,
};

/// Finds and reads the settings of one session: the five file levels under a home and a
/// project directory, then the `--settings` flag if given.
///
/// Both directories are parameters so that tests and callers decide; the caller passes the
/// user's home and the working directory (or, later, the repository root).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use cairn_config::{PermissionMode, SettingsLoader, Source};
/// use serde_json::json;
///
/// let home = tempfile::tempdir()?;
/// let project = tempfile::tempdir()?;
/// std::fs::create_dir(project.path().join(".claude"))?;
/// let file = project.path().join(".claude/settings.json");
/// std::fs::write(&file, r#"{"permissions": {"defaultMode": "plan"}}"#)?;
///
/// let mut loaded = SettingsLoader::new(home.path(), project.path()).load()?;
/// loaded.apply_override("model", json!("opus"), "--model")?;
///
/// assert_eq!(loaded.settings().permissions.default_mode, Some(PermissionMode::Plan));
/// assert_eq!(loaded.origin("permissions.defaultMode"), Some(&Source::Project(file)));
/// assert_eq!(loaded.get("model"), Some(&json!("opus")));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SettingsLoader {
    home: PathBuf,
    project: PathBuf,
    settings_flag: Option<String>,
    /// Which of the five files are read at all (`--setting-sources`).
    setting_sources: SettingSources,
    /// Files of the five levels the user chose to run without (a broken one, in the TUI).
    left_out: Vec<PathBuf>,
}

impl SettingsLoader {
    /// A loader for the user whose home is `home`, working in `project`.
    pub fn new(home: impl Into<PathBuf>, project: impl Into<PathBuf>) -> Self {
        SettingsLoader {
            home: home.into(),
            project: project.into(),
            settings_flag: None,
            setting_sources: SettingSources::ALL,
            left_out: Vec::new(),
        }
    }

    /// Reads the settings without the file at `path` (one of [`SettingsLoader::files`]): the
    /// user chose to go on without a file that does not load. The result carries a
    /// [`ConfigWarning::LeftOut`] for it, so what is missing is never silent.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use cairn_config::SettingsLoader;
    ///
    /// let home = tempfile::tempdir()?;
    /// let project = tempfile::tempdir()?;
    /// std::fs::create_dir(project.path().join(".claude"))?;
    /// let broken = project.path().join(".claude/settings.json");
    /// std::fs::write(&broken, "{\"model\": ")?;
    ///
    /// let loader = SettingsLoader::new(home.path(), project.path());
    /// let error = loader.load().unwrap_err();
    /// assert_eq!(loader.file_at_fault(&error), Some(broken.as_path()));
    /// let loaded = loader.leave_out(&broken).load()?;
    /// assert_eq!(loaded.get("model"), None);
    /// assert_eq!(loaded.warnings().len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn leave_out(mut self, path: impl Into<PathBuf>) -> Self {
        self.left_out.push(path.into());
        self
    }

    /// The settings file `error` is about when it is one of the five levels, which a session
    /// could run without ([`SettingsLoader::leave_out`]); `None` for `--settings` (the user
    /// named it: it must load) and for overrides.
    pub fn file_at_fault<'e>(&self, error: &'e ConfigError) -> Option<&'e Path> {
        let path = match error {
            ConfigError::Unreadable { path, .. } | ConfigError::NotASettingsFile { path, .. } => {
                path.as_path()
            }
            ConfigError::Invalid { origin, .. } => origin.path()?,
            ConfigError::SettingsFlagFileMissing { .. }
            | ConfigError::InvalidOverrideKey { .. } => {
                return None;
            }
        };
        self.files()
            .iter()
            .any(|source| source.path() == Some(path))
            .then_some(path)
    }

    /// Reads only the files of `sources` (`--setting-sources`); the others are not read at
    /// all, as if they did not exist. `--settings` is read whatever this says.
    #[must_use]
    pub fn setting_sources(mut self, sources: SettingSources) -> Self {
        self.setting_sources = sources;
        self
    }

    /// The value of `--settings`: a JSON object given inline, or else the path of a settings
    /// file. A relative path is taken from the project directory, so a caller whose working
    /// directory differs from it should pass an absolute path.
    #[must_use]
    pub fn settings_flag(mut self, value: impl Into<String>) -> Self {
        self.settings_flag = Some(value.into());
        self
    }

    /// The five settings files, lowest precedence first, whether or not they exist.
    pub fn files(&self) -> [Source; 5] {
        let home = &self.home;
        let project = &self.project;
        [
            Source::UserLegacy(home.join(".claude.json")),
            Source::User(home.join(".claude").join("settings.json")),
            Source::ProjectLegacy(project.join(".claude.json")),
            Source::Project(project.join(".claude").join("settings.json")),
            Source::ProjectLocal(project.join(".claude").join("settings.local.json")),
        ]
    }

    /// Reads every level and merges them.
    ///
    /// A missing file is skipped. A legacy `.claude.json` that is not valid JSON, not an
    /// object, or has a known key of the wrong type is skipped with a warning in the result.
    /// Anything else wrong is an error naming the file and, for a bad value, its JSON path.
    pub fn load(&self) -> Result<LoadedSettings, ConfigError> {
        let mut layers: Vec<(Source, Map<String, Value>)> = Vec::new();
        let mut warnings = Vec::new();
        // When the project is the home directory, levels 3 and 4 are the files of levels 1
        // and 2; reading them twice would run their hooks twice.
        let mut seen: Vec<PathBuf> = Vec::new();

        for source in self.files() {
            let Some(path) = source.path() else {
                continue;
            };
            if !self.setting_sources.includes(&source) {
                continue;
            }
            if self.left_out.iter().any(|left_out| left_out == path) {
                if path.exists() {
                    warnings.push(ConfigWarning::LeftOut { origin: source });
                }
                continue;
            }
            let Some(bytes) = read_if_present(path, size_limit(&source))? else {
                continue;
            };
            let identity = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            if seen.contains(&identity) {
                continue;
            }
            seen.push(identity);
            match parse_layer(&bytes, &source) {
                Ok(layer) => layers.push((source, layer)),
                Err(problem) if source.is_legacy() => {
                    warnings.push(ConfigWarning::LegacyFileSkipped {
                        origin: source,
                        problem,
                    });
                }
                Err(problem) => {
                    return Err(ConfigError::Invalid {
                        origin: source,
                        problem,
                    });
                }
            }
        }

        if let Some(flag) = &self.settings_flag {
            layers.push(self.flag_layer(flag)?);
        }

        let mut sources = Vec::with_capacity(layers.len());
        let mut kept = Vec::with_capacity(layers.len());
        let mut tree = BTreeMap::new();
        for (source, layer) in layers {
            merge::merge_layer(&mut tree, layer.clone(), sources.len());
            sources.push(source);
            kept.push(layer);
        }
        LoadedSettings::from_parts(sources, kept, tree, warnings)
    }

    fn flag_layer(&self, flag: &str) -> Result<(Source, Map<String, Value>), ConfigError> {
        let looks_inline = flag.trim_start().starts_with('{');
        let parses_as_object = matches!(serde_json::from_str(flag), Ok(Value::Object(_)));
        if looks_inline || parses_as_object {
            let origin = Source::FlagInline;
            return match parse_layer(flag.as_bytes(), &origin) {
                Ok(layer) => Ok((origin, layer)),
                Err(problem) => Err(ConfigError::Invalid { origin, problem }),
            };
        }
        let path = self.project.join(flag);
        let Some(bytes) = read_if_present(&path, MAX_SETTINGS_BYTES)? else {
            return Err(ConfigError::SettingsFlagFileMissing { path });
        };
        let origin = Source::FlagFile(path);
        match parse_layer(&bytes, &origin) {
            Ok(layer) => Ok((origin, layer)),
            Err(problem) => Err(ConfigError::Invalid { origin, problem }),
        }
    }
}

/// The file's bytes, or `None` when there is no file there. Only a regular file (or a link
/// to one) of at most `limit` bytes is read: a FIFO or `/dev/zero` planted by a repository
/// must not hang cairn or fill its memory.
fn read_if_present(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, ConfigError> {
    read_regular_file(path, limit).map_err(|error| match error {
        RegularFileError::Io(source) => ConfigError::Unreadable {
            path: path.to_path_buf(),
            source,
        },
        reason => ConfigError::NotASettingsFile {
            path: path.to_path_buf(),
            reason,
        },
    })
}

/// The most of `source`'s file read.
fn size_limit(source: &Source) -> u64 {
    if source.is_legacy() {
        MAX_LEGACY_SETTINGS_BYTES
    } else {
        MAX_SETTINGS_BYTES
    }
}

/// Parses one source into a layer and checks its known keys.
///
/// An empty file is an empty layer, and a UTF-8 byte-order mark is ignored (both are what
/// editors leave behind). A legacy file keeps only the known keys: the rest of
/// `~/.claude.json` is Claude Code's state (accounts, project history), not settings.
pub(crate) fn parse_layer(bytes: &[u8], origin: &Source) -> Result<Map<String, Value>, Problem> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|error| syntax_problem(&error))?;
    let mut layer = match value {
        Value::Object(layer) => layer,
        other => {
            return Err(Problem::NotAnObject {
                found: json_kind(&other),
            });
        }
    };
    if origin.is_legacy() {
        layer.retain(|key, _| KNOWN_KEYS.contains(&key.as_str()));
    }
    check_known_keys(&layer)?;
    Ok(layer)
}

/// Checks that the known keys of one layer have the types [`Settings`] wants, so that an
/// error names the layer it is in.
pub(crate) fn check_known_keys(layer: &Map<String, Value>) -> Result<(), Problem> {
    let value = Value::Object(layer.clone());
    typed_view(&value).map(|_| ())
}

/// The typed view of merged or single-layer JSON.
pub(crate) fn typed_view(value: &Value) -> Result<Settings, Problem> {
    serde_path_to_error::deserialize(value).map_err(|error| Problem::InvalidValue {
        key: error.path().to_string(),
        message: error.into_inner().to_string(),
    })
}

fn syntax_problem(error: &serde_json::Error) -> Problem {
    let (line, column) = (error.line(), error.column());
    let full = error.to_string();
    let position = format!(" at line {line} column {column}");
    let message = full.strip_suffix(&position).unwrap_or(&full).to_owned();
    Problem::Syntax {
        line,
        column,
        message,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn project_source() -> Source {
        Source::Project(PathBuf::from("/p/.claude/settings.json"))
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        assert_eq!(
            parse_layer(b"{\n  \"model\": \"x\",\n}", &project_source()),
            Err(Problem::Syntax {
                line: 3,
                column: 1,
                message: "trailing comma".to_owned()
            })
        );
    }

    #[test]
    fn empty_files_and_byte_order_marks_are_tolerated() {
        assert_eq!(parse_layer(b" \n", &project_source()), Ok(Map::new()));
        let layer = parse_layer(b"\xEF\xBB\xBF{\"model\": \"m\"}", &project_source()).unwrap();
        assert_eq!(Value::Object(layer), json!({"model": "m"}));
    }

    #[test]
    fn a_level_file_can_be_left_out_but_the_settings_flag_cannot() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".claude")).unwrap();
        std::fs::write(
            home.path().join(".claude/settings.json"),
            r#"{"model": "opus"}"#,
        )
        .unwrap();
        std::fs::create_dir_all(project.path().join(".claude")).unwrap();
        let broken = project.path().join(".claude/settings.local.json");
        std::fs::write(&broken, r#"{"permissions": {"deny": "Bash(rm:*)"}}"#).unwrap();

        let loader = SettingsLoader::new(home.path(), project.path());
        let error = loader.load().unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "{}: permissions.deny: invalid type: string \"Bash(rm:*)\", expected an array of strings",
                broken.display()
            )
        );
        assert_eq!(loader.file_at_fault(&error), Some(broken.as_path()));
        let loaded = loader.clone().leave_out(&broken).load().unwrap();
        assert_eq!(loaded.get("model"), Some(&json!("opus")));
        assert_eq!(
            loaded.warnings(),
            [ConfigWarning::LeftOut {
                origin: Source::ProjectLocal(broken.clone())
            }]
        );

        let flagged = loader.settings_flag("{\"model\": 3}");
        let error = flagged.clone().leave_out(&broken).load().unwrap_err();
        assert_eq!(flagged.file_at_fault(&error), None);
    }

    #[test]
    fn legacy_files_keep_only_settings_keys() {
        let legacy = Source::UserLegacy(PathBuf::from("/h/.claude.json"));
        let layer = parse_layer(
            br#"{"numStartups": 3, "oauthAccount": {"email": "a@b"}, "model": "m"}"#,
            &legacy,
        )
        .unwrap();
        assert_eq!(Value::Object(layer), json!({"model": "m"}));
    }
}
