//! Which settings keys cairn acts on, and which of those present it does not: read but not
//! supported is said once (in `/doctor`), never silently ignored.

use std::fmt;

use serde_json::Value;

use crate::{LoadedSettings, Source};

/// Every top-level settings key cairn acts on, wherever in cairn it is read. Any other key
/// is one of Claude Code's that cairn does not support (or a typo).
pub const SUPPORTED_KEYS: &[&str] = &[
    // Documentation for editors; nothing to act on.
    "$schema",
    "alwaysThinkingEnabled",
    "apiKeyHelper",
    "autoCompactEnabled",
    "autoMemoryDirectory",
    "autoMemoryEnabled",
    "cleanupPeriodDays",
    "disabledMcpjsonServers",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "env",
    "hooks",
    "includeCoAuthoredBy",
    "model",
    "outputStyle",
    "permissions",
    // Custom OpenAI-compatible providers for `--model <name>/<model>` (cairn's own key).
    "providers",
    "sandbox",
    "statusLine",
];

/// The keys cairn acts on inside the objects it reads key by key. (`env` and `hooks` take any
/// name; the hook runner checks its own.)
const SUPPORTED_INSIDE: &[(&str, &[&str])] = &[
    (
        "permissions",
        &[
            "allow",
            "ask",
            "deny",
            "defaultMode",
            "additionalDirectories",
        ],
    ),
    ("sandbox", &["enabled", "network"]),
    ("statusLine", &["type", "command"]),
];

/// A key the settings set that cairn does not act on, and the file that sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedKey {
    /// Dotted: `spinnerTipsEnabled`, `permissions.disableBypassPermissionsMode`.
    pub key: String,
    /// Where it is set (the highest-precedence file, when several set it).
    pub source: Option<Source>,
}

impl fmt::Display for UnsupportedKey {
    /// `spinnerTipsEnabled (in /home/me/.claude/settings.json)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(source) => write!(f, "{} (in {source})", self.key),
            None => f.write_str(&self.key),
        }
    }
}

impl LoadedSettings {
    /// The keys present in the settings that cairn reads but does not act on, sorted, each
    /// once with the file that sets it.
    ///
    /// ```
    /// use cairn_config::SettingsLoader;
    ///
    /// let home = tempfile::tempdir().unwrap();
    /// let project = tempfile::tempdir().unwrap();
    /// std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    /// std::fs::write(
    ///     project.path().join(".claude/settings.json"),
    ///     r#"{"model": "opus", "spinnerTipsEnabled": false}"#,
    /// ).unwrap();
    /// let loaded = SettingsLoader::new(home.path(), project.path()).load().unwrap();
    /// let keys: Vec<String> = loaded.unsupported_keys().iter().map(|k| k.key.clone()).collect();
    /// assert_eq!(keys, ["spinnerTipsEnabled"]);
    /// ```
    pub fn unsupported_keys(&self) -> Vec<UnsupportedKey> {
        let mut unsupported = Vec::new();
        for (key, value) in self.raw() {
            if !SUPPORTED_KEYS.contains(&key.as_str()) {
                unsupported.push(key.clone());
                continue;
            }
            let inside = SUPPORTED_INSIDE
                .iter()
                .find(|(object, _)| object == key)
                .map(|(_, keys)| *keys);
            if let (Some(supported), Value::Object(fields)) = (inside, value) {
                unsupported.extend(
                    fields
                        .keys()
                        .filter(|field| !supported.contains(&field.as_str()))
                        .map(|field| format!("{key}.{field}")),
                );
            }
        }
        unsupported.sort();
        unsupported
            .into_iter()
            .map(|key| UnsupportedKey {
                source: self.origin(&key).cloned(),
                key,
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use pretty_assertions::assert_eq;

    use crate::SettingsLoader;

    #[test]
    fn unknown_keys_are_listed_with_their_file_nested_ones_too() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".claude")).unwrap();
        std::fs::create_dir_all(project.path().join(".claude")).unwrap();
        std::fs::write(
            home.path().join(".claude/settings.json"),
            r#"{"spinnerTipsEnabled": false, "outputStyle": "Explanatory"}"#,
        )
        .unwrap();
        std::fs::write(
            project.path().join(".claude/settings.json"),
            r#"{
                "permissions": {"allow": ["Read"], "disableBypassPermissionsMode": "disable"},
                "statusLine": {"type": "command", "command": "echo hi", "padding": 0},
                "env": {"ANYTHING": "1"},
                "autoCompactEnabled": true,
                "forceLoginMethod": "console"
            }"#,
        )
        .unwrap();
        let loaded = SettingsLoader::new(home.path(), project.path())
            .load()
            .unwrap();
        let listed: Vec<String> = loaded
            .unsupported_keys()
            .iter()
            .map(ToString::to_string)
            .collect();
        let project_file = project.path().join(".claude/settings.json");
        let user_file = home.path().join(".claude/settings.json");
        assert_eq!(
            listed,
            [
                format!("forceLoginMethod (in {})", project_file.display()),
                format!(
                    "permissions.disableBypassPermissionsMode (in {})",
                    project_file.display()
                ),
                format!("spinnerTipsEnabled (in {})", user_file.display()),
                format!("statusLine.padding (in {})", project_file.display()),
            ]
        );
    }
}
