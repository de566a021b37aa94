//! Permission rules the user adds while cairn runs ("Yes, and don't ask again", `/permissions
//! allow|ask|deny`) are kept in the project's `.claude/settings.local.json`, so later sessions
//! apply them too; `/permissions remove` takes a rule out of the settings file it came from.
//!
//! Every face saves rules through here: the engine when the user answers "don't ask again",
//! the TUI's `/permissions` view when the user adds or removes one.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::regular_file::{MAX_SETTINGS_BYTES, RegularFileError, read_regular_file};

/// Why a rule was not saved to, or removed from, a settings file. The message names the rule,
/// the file and what went wrong, ready to show as a warning:
///
/// ```text
/// Could not save the rule Edit to /proj/.claude/settings.local.json: it is not valid JSON: key must be a string at line 1 column 2
/// ```
#[derive(Debug, thiserror::Error)]
pub enum RulesFileError {
    #[error("Could not save the rule {rule} to {}: {problem}", path.display())]
    Save {
        /// The rule, or the rules saved together, joined by commas.
        rule: String,
        path: PathBuf,
        problem: RulesFileProblem,
    },
    #[error("Could not remove the rule {rule} from {}: {problem}", path.display())]
    Remove {
        rule: String,
        path: PathBuf,
        problem: RulesFileProblem,
    },
}

/// What is wrong with a settings file that a rule could not be written to. The file itself is
/// left as it was.
#[derive(Debug, thiserror::Error)]
pub enum RulesFileProblem {
    #[error("cannot read it: {0}")]
    Unreadable(#[from] RegularFileError),
    #[error("it is not valid JSON: {0}")]
    InvalidJson(serde_json::Error),
    #[error("it is not a JSON object; fix or remove it")]
    NotAnObject,
    #[error("`permissions` is not an object; fix it by hand")]
    PermissionsNotAnObject,
    #[error("`permissions.{list}` is not a list; fix it by hand")]
    NotAList { list: String },
    #[error("cannot encode it: {0}")]
    Encode(serde_json::Error),
    #[error("cannot create {}: {source}", dir.display())]
    CreateDir { dir: PathBuf, source: io::Error },
    #[error("cannot write: {0}")]
    Write(io::Error),
    #[error("cannot replace it: {0}")]
    Replace(io::Error),
}

/// The project's local settings file, where rules the user adds from the UI are kept.
pub fn local_settings_path(cwd: &Path) -> PathBuf {
    cwd.join(".claude").join("settings.local.json")
}

/// Adds each of `rules` to `permissions.allow` in `<cwd>/.claude/settings.local.json`: what
/// "Yes, and don't ask again" keeps. See [`save_rules`].
///
/// A compound command's suggestion is a list of rules in one string; split it first
/// (`cairn_policy::rules::split_rule_list`), so that each rule is its own entry:
///
/// ```
/// use cairn_config::rules_file::{local_settings_path, save_allow_rules};
///
/// let project = tempfile::tempdir()?;
/// let path = save_allow_rules(project.path(), ["Bash(npm test:*)", "Read"])?;
/// assert_eq!(path, local_settings_path(project.path()));
/// let settings: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
/// assert_eq!(
///     settings,
///     serde_json::json!({"permissions": {"allow": ["Bash(npm test:*)", "Read"]}})
/// );
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// ```
pub fn save_allow_rules(
    cwd: &Path,
    rules: impl IntoIterator<Item = impl AsRef<str>>,
) -> Result<PathBuf, RulesFileError> {
    save_rules(cwd, "allow", rules)
}

/// Adds each of `rules` to `permissions.<list>` (`allow`, `ask` or `deny`) in
/// `<cwd>/.claude/settings.local.json`, creating the file and its directory when needed and
/// keeping every other key; a rule the list has already is not added twice. The file is
/// replaced atomically (a temp file renamed over it), so a crash never leaves half a file,
/// and several rules are saved all or none.
///
/// Returns the file's path.
pub fn save_rules(
    cwd: &Path,
    list: &str,
    rules: impl IntoIterator<Item = impl AsRef<str>>,
) -> Result<PathBuf, RulesFileError> {
    let rules: Vec<String> = rules
        .into_iter()
        .map(|rule| rule.as_ref().to_string())
        .collect();
    let path = local_settings_path(cwd);
    edit_rule_lists(&path, IfMissing::Create, |permissions| {
        let entries = permissions
            .entry(list)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(entries) = entries else {
            return Err(RulesFileProblem::NotAList {
                list: list.to_string(),
            });
        };
        for rule in &rules {
            if !entries
                .iter()
                .any(|existing| existing.as_str() == Some(rule.as_str()))
            {
                entries.push(Value::String(rule.clone()));
            }
        }
        Ok(())
    })
    .map_err(|problem| RulesFileError::Save {
        rule: rules.join(", "),
        path: path.clone(),
        problem,
    })?;
    Ok(path)
}

/// Removes `rule` from every permission list (`allow`, `ask`, `deny`) of the settings file at
/// `path`, keeping everything else. Returns whether the file had it; a missing file has
/// nothing to remove.
pub fn remove_rule(path: &Path, rule: &str) -> Result<bool, RulesFileError> {
    let mut found = false;
    let edited = edit_rule_lists(path, IfMissing::Skip, |permissions| {
        for list in ["allow", "ask", "deny"] {
            if let Some(Value::Array(entries)) = permissions.get_mut(list) {
                let before = entries.len();
                entries.retain(|entry| entry.as_str().map(str::trim) != Some(rule.trim()));
                found |= entries.len() < before;
            }
        }
        Ok(())
    })
    .map_err(|problem| RulesFileError::Remove {
        rule: rule.to_string(),
        path: path.to_path_buf(),
        problem,
    })?;
    Ok(edited == Edited::Written && found)
}

/// What [`edit_rule_lists`] does when the settings file does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IfMissing {
    /// Start from an empty object and write the file.
    Create,
    /// Leave it absent: there is nothing to edit.
    Skip,
}

/// Whether [`edit_rule_lists`] wrote the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edited {
    Written,
    Absent,
}

/// Reads the settings file at `path`, lets `edit` change its `permissions` object, and writes
/// it back atomically (a temp file renamed over it). A file that is not a JSON object, or
/// that is not a regular file at all, is left alone.
fn edit_rule_lists(
    path: &Path,
    if_missing: IfMissing,
    edit: impl FnOnce(&mut Map<String, Value>) -> Result<(), RulesFileProblem>,
) -> Result<Edited, RulesFileProblem> {
    let mut settings = match read_regular_file(path, MAX_SETTINGS_BYTES)? {
        Some(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Map::new(),
        Some(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(RulesFileProblem::NotAnObject),
            Err(err) => return Err(RulesFileProblem::InvalidJson(err)),
        },
        None => match if_missing {
            IfMissing::Create => Map::new(),
            IfMissing::Skip => return Ok(Edited::Absent),
        },
    };
    let permissions = settings
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(permissions) = permissions else {
        return Err(RulesFileProblem::PermissionsNotAnObject);
    };
    edit(permissions)?;
    let mut text =
        serde_json::to_string_pretty(&Value::Object(settings)).map_err(RulesFileProblem::Encode)?;
    text.push('\n');
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|source| RulesFileProblem::CreateDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let name = path
        .file_name()
        .map_or_else(|| "settings".into(), |name| name.to_string_lossy());
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    if let Err(err) = std::fs::write(&temp, text) {
        let _ = std::fs::remove_file(&temp);
        return Err(RulesFileProblem::Write(err));
    }
    if let Err(err) = std::fs::rename(&temp, path) {
        let _ = std::fs::remove_file(&temp);
        return Err(RulesFileProblem::Replace(err));
    }
    Ok(Edited::Written)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::FileTypeExt;

    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn read(cwd: &Path) -> Value {
        let text = std::fs::read_to_string(cwd.join(".claude/settings.local.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn creates_the_file_and_keeps_other_keys_on_the_next_save() {
        let cwd = tempfile::tempdir().unwrap();
        save_allow_rules(cwd.path(), ["Bash(npm test:*)"]).unwrap();
        assert_eq!(
            read(cwd.path()),
            json!({"permissions": {"allow": ["Bash(npm test:*)"]}})
        );
        let path = cwd.path().join(".claude/settings.local.json");
        std::fs::write(
            &path,
            json!({"model": "opus", "permissions": {"allow": ["Read"], "deny": ["Bash(rm:*)"]}})
                .to_string(),
        )
        .unwrap();
        save_allow_rules(cwd.path(), ["Edit"]).unwrap();
        save_allow_rules(cwd.path(), ["Edit", "Bash(touch:*)"]).unwrap();
        assert_eq!(
            read(cwd.path()),
            json!({"model": "opus", "permissions": {"allow": ["Read", "Edit", "Bash(touch:*)"], "deny": ["Bash(rm:*)"]}})
        );
    }

    #[test]
    fn a_broken_file_is_left_alone_and_named() {
        let cwd = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(cwd.path().join(".claude")).unwrap();
        let path = cwd.path().join(".claude/settings.local.json");
        std::fs::write(&path, "{not json").unwrap();
        let error = save_allow_rules(cwd.path(), ["Edit", "Bash(touch:*)"]).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "Could not save the rule Edit, Bash(touch:*) to {}: it is not valid JSON: key must be a string at line 1 column 2",
                path.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
        let error = remove_rule(&path, "Edit").unwrap_err();
        assert!(
            matches!(
                error,
                RulesFileError::Remove {
                    problem: RulesFileProblem::InvalidJson(_),
                    ..
                }
            ),
            "{error}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
    }

    #[test]
    fn a_fifo_in_place_of_the_file_is_refused_without_waiting_for_a_writer() {
        let cwd = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(cwd.path().join(".claude")).unwrap();
        let path = cwd.path().join(".claude/settings.local.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let error = save_allow_rules(cwd.path(), ["Edit"]).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "Could not save the rule Edit to {}: cannot read it: it is a FIFO, not a regular file",
                path.display()
            )
        );
        assert!(
            std::fs::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_fifo()
        );
    }

    #[test]
    fn rules_of_every_kind_are_saved_and_removed() {
        let cwd = tempfile::tempdir().unwrap();
        save_rules(cwd.path(), "deny", ["Bash(rm:*)"]).unwrap();
        save_rules(cwd.path(), "ask", ["WebFetch"]).unwrap();
        let path = save_allow_rules(cwd.path(), ["Read"]).unwrap();
        assert_eq!(
            read(cwd.path()),
            json!({"permissions": {"deny": ["Bash(rm:*)"], "ask": ["WebFetch"], "allow": ["Read"]}})
        );
        assert!(remove_rule(&path, "Bash(rm:*)").unwrap());
        assert!(!remove_rule(&path, "Bash(rm:*)").unwrap(), "already gone");
        assert_eq!(
            read(cwd.path()),
            json!({"permissions": {"deny": [], "ask": ["WebFetch"], "allow": ["Read"]}})
        );
        assert!(!remove_rule(&cwd.path().join("absent.json"), "Read").unwrap());
        assert!(!cwd.path().join("absent.json").exists());
    }

    #[test]
    fn a_list_that_is_not_a_list_is_named_and_nothing_is_saved() {
        let cwd = tempfile::tempdir().unwrap();
        let path = local_settings_path(cwd.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let before = json!({"permissions": {"allow": "Read"}}).to_string();
        std::fs::write(&path, &before).unwrap();
        let error = save_allow_rules(cwd.path(), ["Edit"]).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "Could not save the rule Edit to {}: `permissions.allow` is not a list; fix it by hand",
                path.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    }
}
