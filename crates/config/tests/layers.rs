//! The five file levels together: precedence, merge, accumulation, provenance, raw view.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod common;

use std::collections::BTreeMap;

use cairn_config::{
    LoadedSettings, PermissionMode, Permissions, SandboxSettings, Settings, SettingsLoader, Source,
    StatusLineCommand,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use common::Dirs;

struct FiveLevels {
    dirs: Dirs,
    user_legacy: Source,
    user: Source,
    project_legacy: Source,
    project: Source,
    local: Source,
}

fn hook(matcher: &str, command: &str) -> Value {
    json!({"matcher": matcher, "hooks": [{"type": "command", "command": command}]})
}

/// Every level sets `model`; the others each set or extend some keys.
fn five_levels() -> FiveLevels {
    let dirs = Dirs::new();
    let user_legacy = dirs.user_legacy(
        &json!({
            "numStartups": 12,
            "oauthAccount": {"emailAddress": "someone@example.com"},
            "model": "legacy-user",
            "permissions": {"allow": ["Read"]},
            "env": {"A": "1", "B": "1"}
        })
        .to_string(),
    );
    let user = dirs.user(
        &json!({
            "$schema": "https://json.schemastore.org/claude-code-settings.json",
            "model": "user",
            "permissions": {
                "allow": ["Bash(ls)", "Read"],
                "deny": ["Read(./.env)"],
                "defaultMode": "acceptEdits"
            },
            "env": {"B": "2", "C": "2"},
            "hooks": {"PreToolUse": [hook("Bash", "user-hook")]},
            "statusLine": {"type": "command", "command": "user-status", "padding": 1},
            "enabledMcpjsonServers": ["a", "b"],
            "sandbox": {"enabled": true, "network": false}
        })
        .to_string(),
    );
    let project_legacy = dirs.project_legacy(
        &json!({
            "model": "legacy-project",
            "permissions": {"ask": ["Bash(git push:*)"]},
            "allowedTools": ["Edit"]
        })
        .to_string(),
    );
    let project = dirs.project(
        &json!({
            "model": "project",
            "permissions": {
                "allow": ["Bash(npm test)", "Bash(ls)"],
                "additionalDirectories": ["../shared"]
            },
            "hooks": {
                "PreToolUse": [hook("Edit", "project-hook")],
                "Stop": [hook("", "project-stop")]
            },
            "statusLine": {"command": "project-status"},
            "enabledMcpjsonServers": ["c"],
            "includeCoAuthoredBy": false,
            "cleanupPeriodDays": 10
        })
        .to_string(),
    );
    let local = dirs.local(
        &json!({
            "model": "local",
            "permissions": {"defaultMode": "plan", "deny": ["Read(./.env)", "Bash(rm:*)"]},
            "env": {"C": "5"},
            "hooks": {"PreToolUse": [hook("Bash", "user-hook")]},
            "apiKeyHelper": "~/bin/api-key"
        })
        .to_string(),
    );
    FiveLevels {
        dirs,
        user_legacy,
        user,
        project_legacy,
        project,
        local,
    }
}

fn load(levels: &FiveLevels) -> LoadedSettings {
    levels.dirs.loader().load().unwrap()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

#[test]
fn five_levels_merge_into_one_raw_view() {
    let levels = five_levels();
    let loaded = load(&levels);

    assert_eq!(
        Value::Object(loaded.raw().clone()),
        json!({
            "$schema": "https://json.schemastore.org/claude-code-settings.json",
            "model": "local",
            "permissions": {
                "allow": ["Read", "Bash(ls)", "Bash(npm test)"],
                "ask": ["Bash(git push:*)"],
                "deny": ["Read(./.env)", "Bash(rm:*)"],
                "defaultMode": "plan",
                "additionalDirectories": ["../shared"]
            },
            "env": {"A": "1", "B": "2", "C": "5"},
            "hooks": {
                "PreToolUse": [
                    hook("Bash", "user-hook"),
                    hook("Edit", "project-hook"),
                    hook("Bash", "user-hook")
                ],
                "Stop": [hook("", "project-stop")]
            },
            "statusLine": {"type": "command", "command": "project-status", "padding": 1},
            "enabledMcpjsonServers": ["c"],
            "sandbox": {"enabled": true, "network": false},
            "includeCoAuthoredBy": false,
            "cleanupPeriodDays": 10,
            "apiKeyHelper": "~/bin/api-key"
        })
    );
    assert_eq!(
        loaded.sources(),
        [
            levels.user_legacy.clone(),
            levels.user.clone(),
            levels.project_legacy.clone(),
            levels.project.clone(),
            levels.local.clone(),
        ]
    );
    assert_eq!(loaded.warnings(), []);
}

#[test]
fn five_levels_give_one_typed_view() {
    let loaded = load(&five_levels());
    let env: BTreeMap<String, String> = [("A", "1"), ("B", "2"), ("C", "5")]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();

    assert_eq!(
        loaded.settings(),
        &Settings {
            model: Some("local".to_owned()),
            permissions: Permissions {
                allow: strings(&["Read", "Bash(ls)", "Bash(npm test)"]),
                ask: strings(&["Bash(git push:*)"]),
                deny: strings(&["Read(./.env)", "Bash(rm:*)"]),
                default_mode: Some(PermissionMode::Plan),
                additional_directories: strings(&["../shared"]),
            },
            env: env.clone(),
            hooks: json!({
                "PreToolUse": [
                    hook("Bash", "user-hook"),
                    hook("Edit", "project-hook"),
                    hook("Bash", "user-hook")
                ],
                "Stop": [hook("", "project-stop")]
            }),
            cleanup_period_days: Some(10),
            sandbox: Some(SandboxSettings {
                enabled: Some(true),
                network: Some(false),
            }),
            include_co_authored_by: Some(false),
            api_key_helper: Some("~/bin/api-key".to_owned()),
            output_style: None,
            // The user's type and padding, the project's command: merged key by key.
            status_line: Some(StatusLineCommand {
                kind: "command".to_owned(),
                command: "project-status".to_owned(),
                padding: Some(1),
            }),
            providers: Default::default(),
        }
    );
    assert_eq!(loaded.env(), &env);
}

#[test]
fn provenance_names_the_level_that_supplied_each_value() {
    let levels = five_levels();
    let loaded = load(&levels);
    let origin = |key: &str| loaded.origin(key).cloned();
    let origins = |key: &str| -> Vec<Source> { loaded.origins(key).into_iter().cloned().collect() };

    // Scalars: the highest level that sets them.
    assert_eq!(origin("model"), Some(levels.local.clone()));
    assert_eq!(
        origin("permissions.defaultMode"),
        Some(levels.local.clone())
    );
    assert_eq!(origin("cleanupPeriodDays"), Some(levels.project.clone()));
    assert_eq!(origin("env.A"), Some(levels.user_legacy.clone()));
    assert_eq!(origin("env.B"), Some(levels.user.clone()));
    // Merged objects: each member from its own level; the object from all of them.
    assert_eq!(origin("statusLine.padding"), Some(levels.user.clone()));
    assert_eq!(origin("statusLine.command"), Some(levels.project.clone()));
    assert_eq!(
        origins("statusLine"),
        [levels.user.clone(), levels.project.clone()]
    );
    // A replaced array, and an index into it.
    assert_eq!(
        origins("enabledMcpjsonServers"),
        vec![levels.project.clone()]
    );
    assert_eq!(
        origin("enabledMcpjsonServers.0"),
        Some(levels.project.clone())
    );
    // Accumulated lists: every contributor; an item, the level that first brought it.
    assert_eq!(
        origins("permissions.allow"),
        [
            levels.user_legacy.clone(),
            levels.user.clone(),
            levels.project.clone()
        ]
    );
    assert_eq!(
        origin("permissions.allow.0"),
        Some(levels.user_legacy.clone())
    );
    assert_eq!(origin("permissions.allow.1"), Some(levels.user.clone()));
    assert_eq!(origin("permissions.allow.2"), Some(levels.project.clone()));
    assert_eq!(
        origins("hooks.PreToolUse"),
        [
            levels.user.clone(),
            levels.project.clone(),
            levels.local.clone()
        ]
    );
    assert_eq!(
        origin("hooks.PreToolUse.1.hooks.0.command"),
        Some(levels.project.clone())
    );
    // Unknown keys are kept and traced like any other; absent keys have no origin.
    assert_eq!(origin("$schema"), Some(levels.user.clone()));
    assert_eq!(origin("numStartups"), None);
    assert_eq!(origin("permissions.allow.3"), None);
    assert_eq!(origins("no.such.key"), Vec::<Source>::new());
}

#[test]
fn get_reads_any_key_by_dotted_path() {
    let loaded = load(&five_levels());

    assert_eq!(loaded.get("permissions.defaultMode"), Some(&json!("plan")));
    assert_eq!(loaded.get("statusLine.padding"), Some(&json!(1)));
    assert_eq!(
        loaded.get("statusLine"),
        Some(&json!({"type": "command", "command": "project-status", "padding": 1}))
    );
    assert_eq!(
        loaded.get("hooks.Stop.0.hooks.0.command"),
        Some(&json!("project-stop"))
    );
    // The legacy files' state keys are not settings.
    assert_eq!(loaded.get("oauthAccount"), None);
    assert_eq!(loaded.get("allowedTools"), None);
    assert_eq!(loaded.get("model.name"), None);
}

#[test]
fn list_yields_every_leaf_with_its_sources() {
    let dirs = Dirs::new();
    let user = dirs.user(
        r#"{"model": "user", "permissions": {"allow": ["Read"]}, "statusLine": {"type": "command"}}"#,
    );
    let project = dirs.project(
        r#"{"permissions": {"allow": ["Edit"], "defaultMode": "acceptEdits"}, "feedbackSurveyState": {}}"#,
    );
    let loaded = dirs.loader().load().unwrap();

    let listed: Vec<(String, Value, Vec<Source>)> = loaded
        .list()
        .into_iter()
        .map(|entry| {
            (
                entry.key,
                entry.value.clone(),
                entry.sources.into_iter().cloned().collect(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        vec![
            (
                "feedbackSurveyState".to_owned(),
                json!({}),
                vec![project.clone()]
            ),
            ("model".to_owned(), json!("user"), vec![user.clone()]),
            (
                "permissions.allow".to_owned(),
                json!(["Read", "Edit"]),
                vec![user.clone(), project.clone()]
            ),
            (
                "permissions.defaultMode".to_owned(),
                json!("acceptEdits"),
                vec![project.clone()]
            ),
            (
                "statusLine.type".to_owned(),
                json!("command"),
                vec![user.clone()]
            ),
        ]
    );

    let shown: Vec<String> = loaded.list().iter().map(ToString::to_string).collect();
    assert_eq!(
        shown[2],
        format!("permissions.allow = [\"Read\",\"Edit\"]  ({user}, {project})")
    );
}

#[test]
fn no_files_is_an_empty_load() {
    let dirs = Dirs::new();
    let loaded = dirs.loader().load().unwrap();

    assert_eq!(loaded.settings(), &Settings::default());
    assert_eq!(loaded.raw(), &serde_json::Map::new());
    assert_eq!(loaded.sources(), []);
    assert_eq!(loaded.warnings(), []);
    assert_eq!(loaded.list(), vec![]);
}

#[test]
fn a_project_that_is_the_home_directory_reads_each_file_once() {
    let home = tempfile::tempdir().unwrap();
    let settings = common::write(
        home.path(),
        ".claude/settings.json",
        &json!({"hooks": {"Stop": [hook("", "once")]}}).to_string(),
    );
    let loaded = SettingsLoader::new(home.path(), home.path())
        .load()
        .unwrap();

    assert_eq!(loaded.sources(), [Source::User(settings)]);
    assert_eq!(loaded.get("hooks.Stop"), Some(&json!([hook("", "once")])));
}

#[test]
fn the_five_file_paths_are_listed_whether_or_not_they_exist() {
    let loader = SettingsLoader::new("/home/u", "/work/p");
    assert_eq!(
        loader.files(),
        [
            Source::UserLegacy("/home/u/.claude.json".into()),
            Source::User("/home/u/.claude/settings.json".into()),
            Source::ProjectLegacy("/work/p/.claude.json".into()),
            Source::Project("/work/p/.claude/settings.json".into()),
            Source::ProjectLocal("/work/p/.claude/settings.local.json".into()),
        ]
    );
}
