//! Permission rules the user sets from the UI ("Yes, and don't ask again", `/permissions
//! allow|ask|deny`) are kept in the project's `.claude/settings.local.json`, so later sessions
//! apply them too; `/permissions remove` takes a rule out of the settings file it came from.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The project's local settings file, where rules the user adds from the UI are kept.
pub fn local_settings_path(cwd: &Path) -> PathBuf {
    cwd.join(".claude").join("settings.local.json")
}

/// Adds `rule` to `permissions.allow` in `<cwd>/.claude/settings.local.json`, creating the
/// file and its directory when needed and keeping every other key. The file is replaced
/// atomically (a temp file renamed over it), so a crash never leaves half a file.
///
/// Returns the file's path; the error names the file and what went wrong.
pub fn save_allow_rule(cwd: &Path, rule: &str) -> Result<PathBuf, String> {
    // A compound command's suggestion is a list: each rule is its own entry.
    let mut path = local_settings_path(cwd);
    for rule in cairn_policy::rules::split_rule_list(rule) {
        path = save_rule(cwd, "allow", &rule)?;
    }
    Ok(path)
}

/// Adds `rule` to `permissions.<list>` (`allow`, `ask` or `deny`) in the project's local
/// settings, as [`save_allow_rule`] does.
pub fn save_rule(cwd: &Path, list: &str, rule: &str) -> Result<PathBuf, String> {
    let path = local_settings_path(cwd);
    edit_rule_lists(&path, true, |permissions| {
        let entries = permissions
            .entry(list)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(entries) = entries else {
            return Err(format!("`permissions.{list}` is not a list"));
        };
        if !entries
            .iter()
            .any(|existing| existing.as_str() == Some(rule))
        {
            entries.push(Value::String(rule.to_string()));
        }
        Ok(())
    })
    .map_err(|err| {
        format!(
            "Could not save the rule {rule} to {}: {err}",
            path.display()
        )
    })?;
    Ok(path)
}

/// Removes `rule` from every permission list (`allow`, `ask`, `deny`) of the settings file at
/// `path`, keeping everything else. Returns whether the file had it; a missing file has
/// nothing to remove.
pub fn remove_rule(path: &Path, rule: &str) -> Result<bool, String> {
    if !path.exists() {
        return Ok(false);
    }
    let mut found = false;
    edit_rule_lists(path, false, |permissions| {
        for list in ["allow", "ask", "deny"] {
            if let Some(Value::Array(entries)) = permissions.get_mut(list) {
                let before = entries.len();
                entries.retain(|entry| entry.as_str().map(str::trim) != Some(rule.trim()));
                found |= entries.len() < before;
            }
        }
        Ok(())
    })
    .map_err(|err| {
        format!(
            "Could not remove the rule {rule} from {}: {err}",
            path.display()
        )
    })?;
    Ok(found)
}

/// Reads the settings file at `path` (an absent one is empty when `create` is set), lets
/// `edit` change its `permissions` object, and writes it back atomically (a temp file renamed
/// over it). A file that is not a JSON object is left alone.
fn edit_rule_lists(
    path: &Path,
    create: bool,
    edit: impl FnOnce(&mut Map<String, Value>) -> Result<(), String>,
) -> Result<(), String> {
    let mut settings = match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Map::new(),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err("it is not a JSON object; fix or remove it".into()),
            Err(err) => return Err(format!("it is not valid JSON: {err}")),
        },
        Err(err) if create && err.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(err) => return Err(format!("cannot read it: {err}")),
    };
    let permissions = settings
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(permissions) = permissions else {
        return Err("`permissions` is not an object; fix it by hand".into());
    };
    edit(permissions)?;
    let mut text = serde_json::to_string_pretty(&Value::Object(settings))
        .map_err(|err| format!("cannot encode it: {err}"))?;
    text.push('\n');
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    let name = path
        .file_name()
        .map_or_else(|| "settings".into(), |name| name.to_string_lossy());
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    if let Err(err) = std::fs::write(&temp, text) {
        let _ = std::fs::remove_file(&temp);
        return Err(format!("cannot write: {err}"));
    }
    if let Err(err) = std::fs::rename(&temp, path) {
        let _ = std::fs::remove_file(&temp);
        return Err(format!("cannot replace it: {err}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
        save_allow_rule(cwd.path(), "Bash(npm test:*)").unwrap();
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
        save_allow_rule(cwd.path(), "Edit").unwrap();
        save_allow_rule(cwd.path(), "Edit, Bash(touch:*)").unwrap();
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
        let error = save_allow_rule(cwd.path(), "Edit").unwrap_err();
        assert!(error.contains("settings.local.json"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
        let error = remove_rule(&path, "Edit").unwrap_err();
        assert!(error.contains("not valid JSON"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
    }

    #[test]
    fn rules_of_every_kind_are_saved_and_removed() {
        let cwd = tempfile::tempdir().unwrap();
        save_rule(cwd.path(), "deny", "Bash(rm:*)").unwrap();
        save_rule(cwd.path(), "ask", "WebFetch").unwrap();
        let path = save_allow_rule(cwd.path(), "Read").unwrap();
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
}
