//! "Yes, and don't ask again": the rule the user approved is kept in the project's
//! `.claude/settings.local.json` (`permissions.allow`), so later sessions allow it too.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Adds `rule` to `permissions.allow` in `<cwd>/.claude/settings.local.json`, creating the
/// file and its directory when needed and keeping every other key. The file is replaced
/// atomically (a temp file renamed over it), so a crash never leaves half a file.
///
/// Returns the file's path; the error names the file and what went wrong.
pub fn save_allow_rule(cwd: &Path, rule: &str) -> Result<PathBuf, String> {
    let dir = cwd.join(".claude");
    let path = dir.join("settings.local.json");
    let fail = |what: &str, err: &dyn std::fmt::Display| {
        format!(
            "Could not save the rule {rule} to {}: {what}: {err}",
            path.display()
        )
    };
    let mut settings = match std::fs::read_to_string(&path) {
        Ok(text) if text.trim().is_empty() => Map::new(),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(fail("it is not a JSON object", &"fix or remove it")),
            Err(err) => return Err(fail("it is not valid JSON", &err)),
        },
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(err) => return Err(fail("cannot read it", &err)),
    };
    let permissions = settings
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(permissions) = permissions else {
        return Err(fail("`permissions` is not an object", &"fix it by hand"));
    };
    let allow = permissions
        .entry("allow")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(allow) = allow else {
        return Err(fail("`permissions.allow` is not a list", &"fix it by hand"));
    };
    if allow.iter().any(|existing| existing.as_str() == Some(rule)) {
        return Ok(path);
    }
    allow.push(Value::String(rule.to_string()));
    let mut text = serde_json::to_string_pretty(&Value::Object(settings))
        .map_err(|err| fail("cannot encode it", &err))?;
    text.push('\n');
    std::fs::create_dir_all(&dir).map_err(|err| fail("cannot create .claude", &err))?;
    let temp = dir.join(format!(".settings.local.json.{}.tmp", std::process::id()));
    if let Err(err) = std::fs::write(&temp, text) {
        let _ = std::fs::remove_file(&temp);
        return Err(fail("cannot write", &err));
    }
    if let Err(err) = std::fs::rename(&temp, &path) {
        let _ = std::fs::remove_file(&temp);
        return Err(fail("cannot replace it", &err));
    }
    Ok(path)
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
        save_allow_rule(cwd.path(), "Edit").unwrap();
        assert_eq!(
            read(cwd.path()),
            json!({"model": "opus", "permissions": {"allow": ["Read", "Edit"], "deny": ["Bash(rm:*)"]}})
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
    }
}
