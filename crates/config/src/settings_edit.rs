//! `cairn config set|add|remove`: one setting changed in one settings file, by its dotted key,
//! keeping every other key of the file.
//!
//! The file is written only when the result is settings that load: a value of the wrong type
//! (`model` as a number, an unknown `permissions.defaultMode`) is refused with the key and
//! what was expected, and the file stays as it was. The new content replaces the old in one
//! rename, so a crash never leaves half a file.
//!
//! ```
//! use cairn_config::settings_edit::{SettingEdit, edit_setting, parse_value};
//!
//! let project = tempfile::tempdir()?;
//! let path = project.path().join(".claude/settings.local.json");
//! edit_setting(&path, "permissions.defaultMode", SettingEdit::Set(parse_value("plan")))?;
//! edit_setting(&path, "permissions.allow", SettingEdit::Add(vec![parse_value("Read")]))?;
//! let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
//! assert_eq!(
//!     written,
//!     serde_json::json!({"permissions": {"defaultMode": "plan", "allow": ["Read"]}})
//! );
//!
//! let refused = edit_setting(&path, "permissions.defaultMode", SettingEdit::Set(parse_value("nope")));
//! assert!(refused.unwrap_err().to_string().contains("permissions.defaultMode: unknown mode"));
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! ```

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::Problem;
use crate::load::parse_layer;
use crate::regular_file::{MAX_SETTINGS_BYTES, RegularFileError, read_regular_file};
use crate::rules_file::{RulesFileProblem, replace_file};
use crate::source::Source;

/// What to do to the setting a key names.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingEdit {
    /// Give it this value, replacing what it had.
    Set(Value),
    /// Append these values to the list it holds (creating the list), each once.
    Add(Vec<Value>),
    /// Take these values out of the list it holds; with none, remove the key itself.
    Remove(Vec<Value>),
}

/// What an edit changed.
#[derive(Debug, Clone, PartialEq)]
pub enum Edited {
    /// The key now holds this value.
    Now(Value),
    /// The key was removed.
    Removed,
    /// Nothing to do: the file does not have the key, or the list lacks the values. The file
    /// was not written.
    Unchanged,
}

/// Why a setting was not changed. The file is as it was.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct SettingEditError {
    /// The settings file.
    pub path: PathBuf,
    /// What went wrong.
    pub problem: EditProblem,
}

/// What stopped an edit.
#[derive(Debug, thiserror::Error)]
pub enum EditProblem {
    /// The key is empty or has an empty part (`permissions..allow`).
    #[error("`{0}` is not a setting's key: use dotted names, such as permissions.defaultMode")]
    BadKey(String),
    /// The existing file could not be read (or is not a regular file).
    #[error("cannot read it: {0}")]
    Unreadable(#[from] RegularFileError),
    /// The existing file is not settings that load; cairn does not overwrite it.
    #[error("it does not load, fix it first: {0}")]
    Broken(Problem),
    /// A part of the key's path holds something other than an object.
    #[error("`{0}` is not an object, so it has no keys to set")]
    NotAnObject(String),
    /// `add` or `remove` with values on a key that holds something other than a list.
    #[error("`{0}` is not a list; use `set` to replace it")]
    NotAList(String),
    /// The file with the change would not load: the value is of the wrong type.
    #[error("the new value is refused: {0}")]
    Refused(Problem),
    /// Writing the file failed; the old one is unchanged.
    #[error("{0}")]
    Write(RulesFileProblem),
}

/// A value given on the command line: JSON when it is JSON (`true`, `3`, `["a"]`, `"quoted"`),
/// else the text itself, so `cairn config set model opus` needs no quotes.
pub fn parse_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// Applies `edit` to the setting `key` (dotted: `permissions.defaultMode`) of the settings file
/// at `path`, creating the file and its directory when needed. See the module's example.
pub fn edit_setting(path: &Path, key: &str, edit: SettingEdit) -> Result<Edited, SettingEditError> {
    apply(path, key, edit).map_err(|problem| SettingEditError {
        path: path.to_path_buf(),
        problem,
    })
}

fn apply(path: &Path, key: &str, edit: SettingEdit) -> Result<Edited, EditProblem> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|part| part.trim().is_empty()) {
        return Err(EditProblem::BadKey(key.to_string()));
    }
    // Any level's checks will do: only a legacy file is read differently.
    let origin = Source::ProjectLocal(path.to_path_buf());
    let mut settings = match read_regular_file(path, MAX_SETTINGS_BYTES)? {
        Some(bytes) => parse_layer(&bytes, &origin).map_err(EditProblem::Broken)?,
        None => Map::new(),
    };
    let (last, parents) = parts
        .split_last()
        .ok_or(EditProblem::BadKey(key.to_string()))?;
    let creating = matches!(edit, SettingEdit::Set(_) | SettingEdit::Add(_));
    let Some(object) = parent_object(&mut settings, parents, creating)? else {
        return Ok(Edited::Unchanged);
    };
    let edited = match edit {
        SettingEdit::Set(value) => {
            object.insert((*last).to_string(), value.clone());
            Edited::Now(value)
        }
        SettingEdit::Add(values) => {
            let list = object
                .entry(*last)
                .or_insert_with(|| Value::Array(Vec::new()));
            let Value::Array(list) = list else {
                return Err(EditProblem::NotAList(key.to_string()));
            };
            let before = list.len();
            for value in values {
                if !list.contains(&value) {
                    list.push(value);
                }
            }
            if list.len() == before && before > 0 {
                return Ok(Edited::Unchanged);
            }
            Edited::Now(Value::Array(list.clone()))
        }
        SettingEdit::Remove(values) if values.is_empty() => match object.remove(*last) {
            Some(_) => Edited::Removed,
            None => return Ok(Edited::Unchanged),
        },
        SettingEdit::Remove(values) => match object.get_mut(*last) {
            None => return Ok(Edited::Unchanged),
            Some(Value::Array(list)) => {
                let before = list.len();
                list.retain(|entry| !values.contains(entry));
                if list.len() == before {
                    return Ok(Edited::Unchanged);
                }
                Edited::Now(Value::Array(list.clone()))
            }
            Some(_) => return Err(EditProblem::NotAList(key.to_string())),
        },
    };
    let mut text = serde_json::to_string_pretty(&Value::Object(settings))
        .map_err(|err| EditProblem::Write(RulesFileProblem::Encode(err)))?;
    parse_layer(text.as_bytes(), &origin).map_err(EditProblem::Refused)?;
    text.push('\n');
    replace_file(path, &text).map_err(EditProblem::Write)?;
    Ok(edited)
}

/// The object that holds the key's last part, walking (and, when `create`, making) the
/// objects on the way. `None`: a part is missing and nothing is to be created.
fn parent_object<'a>(
    settings: &'a mut Map<String, Value>,
    parents: &[&str],
    create: bool,
) -> Result<Option<&'a mut Map<String, Value>>, EditProblem> {
    let mut object = settings;
    let mut walked = String::new();
    for part in parents {
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(part);
        if !object.contains_key(*part) {
            if !create {
                return Ok(None);
            }
            object.insert((*part).to_string(), Value::Object(Map::new()));
        }
        match object.get_mut(*part) {
            Some(Value::Object(inner)) => object = inner,
            _ => return Err(EditProblem::NotAnObject(walked)),
        }
    }
    Ok(Some(object))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a test should fail loudly")]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn read(path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn set_keeps_the_other_keys_and_replaces_the_value() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, r#"{"model": "opus", "env": {"A": "1"}}"#).unwrap();
        edit_setting(&path, "env.B", SettingEdit::Set(parse_value("\"2\""))).unwrap();
        assert_eq!(read(&path)["env"], json!({"A": "1", "B": "2"}));
        edit_setting(&path, "model", SettingEdit::Set(parse_value("sonnet"))).unwrap();
        assert_eq!(read(&path)["model"], json!("sonnet"));
        assert_eq!(read(&path)["env"]["A"], json!("1"));
    }

    #[test]
    fn a_value_of_the_wrong_type_is_refused_and_the_file_is_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{\"model\": \"opus\"}\n").unwrap();
        let error = edit_setting(&path, "model", SettingEdit::Set(json!(3))).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("settings.json"), "{message}");
        assert!(message.contains("model"), "{message}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"model\": \"opus\"}\n"
        );
    }

    #[test]
    fn a_broken_file_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{ nope").unwrap();
        let error = edit_setting(&path, "model", SettingEdit::Set(json!("opus"))).unwrap_err();
        assert!(matches!(error.problem, EditProblem::Broken(_)), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ nope");
    }

    #[test]
    fn add_appends_once_and_remove_takes_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".claude/settings.local.json");
        let add = |values: &[&str]| SettingEdit::Add(values.iter().map(|v| json!(v)).collect());
        edit_setting(&path, "permissions.allow", add(&["Read", "Bash(ls)"])).unwrap();
        assert_eq!(
            edit_setting(&path, "permissions.allow", add(&["Read"])).unwrap(),
            Edited::Unchanged
        );
        let removed = SettingEdit::Remove(vec![json!("Read")]);
        assert_eq!(
            edit_setting(&path, "permissions.allow", removed).unwrap(),
            Edited::Now(json!(["Bash(ls)"]))
        );
        assert_eq!(
            edit_setting(&path, "permissions", SettingEdit::Remove(Vec::new())).unwrap(),
            Edited::Removed
        );
        assert_eq!(read(&path), json!({}));
    }

    #[test]
    fn a_key_through_a_scalar_or_an_empty_part_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, r#"{"model": "opus"}"#).unwrap();
        let through = edit_setting(&path, "model.name", SettingEdit::Set(json!("x"))).unwrap_err();
        assert!(
            matches!(through.problem, EditProblem::NotAnObject(_)),
            "{through}"
        );
        let empty = edit_setting(&path, "env..A", SettingEdit::Set(json!("x"))).unwrap_err();
        assert!(matches!(empty.problem, EditProblem::BadKey(_)), "{empty}");
        let not_list =
            edit_setting(&path, "model", SettingEdit::Add(vec![json!("x")])).unwrap_err();
        assert!(
            matches!(not_list.problem, EditProblem::NotAList(_)),
            "{not_list}"
        );
    }

    #[test]
    fn removing_what_is_not_there_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        assert_eq!(
            edit_setting(&path, "env.A", SettingEdit::Remove(Vec::new())).unwrap(),
            Edited::Unchanged
        );
        assert!(!path.exists());
    }
}
