//! Bad settings: errors that name the file and JSON path, and legacy files that are skipped.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod common;

use std::fs;

use cairn_config::{ConfigError, ConfigWarning, Problem, Source};
use pretty_assertions::assert_eq;
use serde_json::json;

use common::Dirs;

fn load_error(dirs: &Dirs) -> ConfigError {
    dirs.loader().load().unwrap_err()
}

fn invalid(error: ConfigError) -> (Source, Problem) {
    match error {
        ConfigError::Invalid { origin, problem } => (origin, problem),
        other => panic!("expected ConfigError::Invalid, got {other:?}"),
    }
}

#[test]
fn unknown_permission_mode_names_file_key_and_choices() {
    let dirs = Dirs::new();
    dirs.user(r#"{"model": "fine"}"#);
    let project = dirs.project(
        r#"{
  "permissions": {
    "defaultMode": "acceptEdit"
  }
}"#,
    );
    let error = load_error(&dirs);

    assert_eq!(
        error.to_string(),
        format!(
            "{project}: permissions.defaultMode: unknown mode \"acceptEdit\" (expected one of \
             default, acceptEdits, plan, bypassPermissions, dontAsk)"
        )
    );
    assert_eq!(
        invalid(error),
        (
            project,
            Problem::InvalidValue {
                key: "permissions.defaultMode".to_owned(),
                message: "unknown mode \"acceptEdit\" (expected one of default, acceptEdits, \
                          plan, bypassPermissions, dontAsk)"
                    .to_owned(),
            }
        )
    );
}

#[test]
fn a_rule_list_given_as_a_string_says_an_array_was_expected() {
    let dirs = Dirs::new();
    let local = dirs.local(r#"{"permissions": {"allow": "Bash"}}"#);

    assert_eq!(
        load_error(&dirs).to_string(),
        format!(
            "{local}: permissions.allow: invalid type: string \"Bash\", expected an array of strings"
        )
    );
}

#[test]
fn a_bad_item_in_a_list_is_named_by_index() {
    let dirs = Dirs::new();
    let user = dirs.user(r#"{"permissions": {"deny": ["Read(./.env)", 3]}}"#);

    assert_eq!(
        load_error(&dirs).to_string(),
        format!("{user}: permissions.deny[1]: invalid type: integer `3`, expected a string")
    );
}

#[test]
fn other_typed_keys_name_what_they_expect() {
    let cases = [
        (
            json!({"env": {"FOO": null}}),
            "env.FOO: invalid type: null, expected a string (numbers and booleans are turned into strings)",
        ),
        (
            json!({"env": ["FOO=1"]}),
            "env: invalid type: sequence, expected an object of environment variables, such as {\"FOO\": \"bar\"}",
        ),
        (
            json!({"model": 4}),
            "model: invalid type: integer `4`, expected a string",
        ),
        (
            json!({"cleanupPeriodDays": "30"}),
            "cleanupPeriodDays: invalid type: string \"30\", expected a whole number of days, 0 or more",
        ),
        (
            json!({"sandbox": {"enabled": "yes"}}),
            "sandbox.enabled: invalid type: string \"yes\", expected a boolean",
        ),
        (
            json!({"permissions": ["Read"]}),
            "permissions: invalid type: sequence, expected an object with allow, ask, deny, defaultMode or additionalDirectories",
        ),
    ];
    for (settings, expected) in cases {
        let dirs = Dirs::new();
        let project = dirs.project(&settings.to_string());
        assert_eq!(
            load_error(&dirs).to_string(),
            format!("{project}: {expected}")
        );
    }
}

#[test]
fn a_syntax_error_names_file_line_and_column() {
    let dirs = Dirs::new();
    let project = dirs.project("{\n  \"model\": \"opus\"\n  \"env\": {}\n}\n");
    let error = load_error(&dirs);

    assert_eq!(
        error.to_string(),
        format!("{project}: invalid JSON at line 3, column 3: expected `,` or `}}`")
    );
    assert_eq!(
        invalid(error),
        (
            project,
            Problem::Syntax {
                line: 3,
                column: 3,
                message: "expected `,` or `}`".to_owned()
            }
        )
    );
}

#[test]
fn a_top_level_that_is_not_an_object_is_an_error() {
    let dirs = Dirs::new();
    let user = dirs.user(r#"["Bash"]"#);

    assert_eq!(
        load_error(&dirs).to_string(),
        format!("{user}: expected a JSON object at the top level, found an array")
    );
}

#[test]
fn a_directory_in_place_of_the_file_is_an_error_naming_it() {
    let dirs = Dirs::new();
    let path = dirs.project.path().join(".claude/settings.json");
    fs::create_dir_all(&path).unwrap();

    let error = load_error(&dirs);
    assert_eq!(
        error.to_string(),
        format!(
            "{}: not read as a settings file: it is a directory, not a regular file",
            path.display()
        )
    );
    assert!(
        matches!(&error, ConfigError::NotASettingsFile { path: named, .. } if *named == path),
        "{error:?}"
    );
}

#[cfg(unix)]
#[test]
fn a_file_without_read_permission_is_an_error_naming_it() {
    use std::os::unix::fs::PermissionsExt;

    let dirs = Dirs::new();
    let source = dirs.local(r#"{"model": "m"}"#);
    let path = source.path().unwrap().to_path_buf();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(&path).is_ok() {
        // Running as root: permissions do not stop a read, so there is nothing to test.
        return;
    }

    let error = load_error(&dirs);
    assert!(
        error
            .to_string()
            .starts_with(&format!("{}: cannot read settings file: ", path.display())),
        "{error}"
    );
    assert!(matches!(error, ConfigError::Unreadable { path: named, .. } if named == path));
}

#[test]
fn a_broken_user_legacy_file_is_skipped_with_one_warning() {
    let dirs = Dirs::new();
    let legacy = dirs.user_legacy("{\"numStartups\": 3,,}");
    let user = dirs.user(r#"{"model": "user"}"#);
    let project = dirs.project(r#"{"permissions": {"allow": ["Read"]}}"#);
    let loaded = dirs.loader().load().unwrap();

    let warning = ConfigWarning::LegacyFileSkipped {
        origin: legacy.clone(),
        problem: Problem::Syntax {
            line: 1,
            column: 19,
            message: "key must be a string".to_owned(),
        },
    };
    assert_eq!(loaded.warnings(), std::slice::from_ref(&warning));
    assert_eq!(
        warning.to_string(),
        format!(
            "{legacy}: invalid JSON at line 1, column 19: key must be a string; this legacy settings \
             file was skipped, the other settings still apply"
        )
    );
    assert_eq!(
        serde_json::Value::Object(loaded.raw().clone()),
        json!({"model": "user", "permissions": {"allow": ["Read"]}})
    );
    assert_eq!(loaded.sources(), [user, project]);
}

#[test]
fn a_legacy_file_with_a_bad_known_key_is_skipped_whole() {
    let dirs = Dirs::new();
    let legacy = dirs.project_legacy(
        r#"{"model": "legacy", "permissions": {"allow": "Bash"}, "projects": {"x": 1}}"#,
    );
    let loaded = dirs.loader().load().unwrap();

    assert_eq!(
        loaded.warnings(),
        [ConfigWarning::LegacyFileSkipped {
            origin: legacy,
            problem: Problem::InvalidValue {
                key: "permissions.allow".to_owned(),
                message: "invalid type: string \"Bash\", expected an array of strings".to_owned(),
            },
        }]
    );
    assert_eq!(loaded.get("model"), None);
    assert_eq!(loaded.sources(), []);
}

#[test]
fn legacy_files_tolerate_unknown_keys_of_any_type() {
    let dirs = Dirs::new();
    let legacy = dirs.user_legacy(
        r#"{"hasCompletedOnboarding": true, "projects": {"/p": {"allowedTools": []}}, "theme": 3, "model": "m"}"#,
    );
    let loaded = dirs.loader().load().unwrap();

    assert_eq!(loaded.warnings(), []);
    assert_eq!(
        serde_json::Value::Object(loaded.raw().clone()),
        json!({"model": "m"})
    );
    assert_eq!(loaded.origin("model"), Some(&legacy));
}

#[test]
fn a_legacy_file_that_is_not_an_object_is_skipped() {
    let dirs = Dirs::new();
    let legacy = dirs.user_legacy("42");
    let legacy_project = dirs.project_legacy("{");
    let loaded = dirs.loader().load().unwrap();

    assert_eq!(
        loaded.warnings(),
        [
            ConfigWarning::LegacyFileSkipped {
                origin: legacy,
                problem: Problem::NotAnObject { found: "a number" },
            },
            ConfigWarning::LegacyFileSkipped {
                origin: legacy_project,
                problem: Problem::Syntax {
                    line: 1,
                    column: 1,
                    message: "EOF while parsing an object".to_owned(),
                },
            },
        ]
    );
}

#[test]
fn the_same_mistake_in_a_non_legacy_file_is_not_skipped() {
    let dirs = Dirs::new();
    dirs.user_legacy("{ broken");
    let local = dirs.local("{ broken");

    let (origin, problem) = invalid(load_error(&dirs));
    assert_eq!(origin, local);
    assert!(
        matches!(problem, Problem::Syntax { line: 1, .. }),
        "{problem:?}"
    );
}
