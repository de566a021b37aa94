//! Levels 6 and 7: the `--settings` flag and the caller's overrides.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod common;

use cairn_config::{ConfigError, PermissionMode, Problem, Source};
use pretty_assertions::assert_eq;
use serde_json::json;

use common::Dirs;

#[test]
fn inline_settings_flag_beats_every_file() {
    let dirs = Dirs::new();
    let local = dirs.local(r#"{"model": "local", "permissions": {"allow": ["Read"]}}"#);
    let loaded = dirs
        .loader()
        .settings_flag(r#"{"model": "flag", "permissions": {"allow": ["Bash(make)"]}}"#)
        .load()
        .unwrap();

    assert_eq!(loaded.get("model"), Some(&json!("flag")));
    assert_eq!(loaded.origin("model"), Some(&Source::FlagInline));
    assert_eq!(
        loaded.get("permissions.allow"),
        Some(&json!(["Read", "Bash(make)"]))
    );
    assert_eq!(loaded.sources(), [local, Source::FlagInline]);
}

#[test]
fn settings_flag_path_is_read_from_the_project_directory() {
    let dirs = Dirs::new();
    dirs.local(r#"{"model": "local"}"#);
    let file = common::write(
        dirs.project.path(),
        "ci/settings.json",
        r#"{"model": "ci"}"#,
    );
    let loaded = dirs
        .loader()
        .settings_flag("ci/settings.json")
        .load()
        .unwrap();

    assert_eq!(loaded.settings().model.as_deref(), Some("ci"));
    assert_eq!(loaded.origin("model"), Some(&Source::FlagFile(file)));
}

#[test]
fn settings_flag_absolute_path() {
    let dirs = Dirs::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let file = common::write(elsewhere.path(), "s.json", r#"{"cleanupPeriodDays": 7}"#);
    let loaded = dirs
        .loader()
        .settings_flag(file.to_string_lossy())
        .load()
        .unwrap();

    assert_eq!(loaded.settings().cleanup_period_days, Some(7));
    assert_eq!(
        loaded.origin("cleanupPeriodDays"),
        Some(&Source::FlagFile(file))
    );
}

#[test]
fn missing_settings_flag_file_is_an_error() {
    let dirs = Dirs::new();
    let error = dirs.loader().settings_flag("nope.json").load().unwrap_err();

    let path = dirs.project.path().join("nope.json");
    assert_eq!(
        error.to_string(),
        format!(
            "--settings {}: no such file (give the path of a settings file or an inline JSON object)",
            path.display()
        )
    );
    assert!(matches!(error, ConfigError::SettingsFlagFileMissing { path: p } if p == path));
}

#[test]
fn broken_inline_settings_flag_is_reported_as_json() {
    let dirs = Dirs::new();
    let error = dirs
        .loader()
        .settings_flag(r#"{"model": }"#)
        .load()
        .unwrap_err();

    assert_eq!(
        error.to_string(),
        "--settings (inline JSON): invalid JSON at line 1, column 11: expected value"
    );
}

#[test]
fn overrides_beat_files_and_the_flag() {
    let dirs = Dirs::new();
    let local = dirs
        .local(r#"{"model": "local", "permissions": {"allow": ["Read"], "defaultMode": "plan"}}"#);
    let mut loaded = dirs
        .loader()
        .settings_flag(r#"{"model": "flag"}"#)
        .load()
        .unwrap();

    loaded
        .apply_override("model", json!("opus"), "--model")
        .unwrap();
    loaded
        .apply_override(
            "permissions.defaultMode",
            json!("bypassPermissions"),
            "--permission-mode",
        )
        .unwrap();
    loaded
        .apply_override(
            "permissions.allow",
            json!(["Bash(ls)", "Read"]),
            "--allowedTools",
        )
        .unwrap();

    assert_eq!(loaded.settings().model.as_deref(), Some("opus"));
    assert_eq!(
        loaded.settings().permissions.default_mode,
        Some(PermissionMode::BypassPermissions)
    );
    assert_eq!(
        loaded.settings().permissions.allow,
        vec!["Read".to_owned(), "Bash(ls)".to_owned()]
    );
    assert_eq!(
        loaded.origin("model"),
        Some(&Source::Override("--model".to_owned()))
    );
    assert_eq!(
        loaded.origins("permissions.allow"),
        vec![&local, &Source::Override("--allowedTools".to_owned())]
    );
    assert_eq!(loaded.origin("permissions.allow.0"), Some(&local));
}

#[test]
fn a_bad_override_names_its_label_and_changes_nothing() {
    let dirs = Dirs::new();
    dirs.project(r#"{"permissions": {"defaultMode": "plan"}}"#);
    let mut loaded = dirs.loader().load().unwrap();
    let before = loaded.clone();

    let error = loaded
        .apply_override(
            "permissions.defaultMode",
            json!("yolo"),
            "--permission-mode",
        )
        .unwrap_err();

    assert_eq!(
        error.to_string(),
        "--permission-mode: permissions.defaultMode: unknown mode \"yolo\" (expected one of \
         default, acceptEdits, plan, bypassPermissions, dontAsk)"
    );
    assert!(matches!(
        error,
        ConfigError::Invalid { origin: Source::Override(label), problem: Problem::InvalidValue { .. } }
            if label == "--permission-mode"
    ));
    assert_eq!(loaded.raw(), before.raw());
    assert_eq!(loaded.sources(), before.sources());
}

#[test]
fn an_override_key_must_name_a_key() {
    let mut loaded = Dirs::new().loader().load().unwrap();
    let error = loaded
        .apply_override("permissions..allow", json!([]), "CAIRN_ALLOW")
        .unwrap_err();

    assert_eq!(
        error.to_string(),
        "CAIRN_ALLOW: cannot override \"permissions..allow\": expected dot-separated key names \
         such as \"permissions.defaultMode\""
    );
}

#[test]
fn overrides_of_unknown_keys_are_kept_raw() {
    let mut loaded = Dirs::new().loader().load().unwrap();
    loaded
        .apply_override("statusLine.command", json!("cairn-status"), "--status")
        .unwrap();

    assert_eq!(
        loaded.get("statusLine"),
        Some(&json!({"command": "cairn-status"}))
    );
    assert_eq!(
        loaded.origin("statusLine.command"),
        Some(&Source::Override("--status".to_owned()))
    );
}
