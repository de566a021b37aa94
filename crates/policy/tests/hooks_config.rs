//! Reading the `hooks` section of settings: what is malformed is reported and skipped, and
//! the rest still runs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::fs;

use cairn_policy::hooks::{HookCommon, HookConfig, HookEvent, HookOutcome, HookRunner};
use pretty_assertions::assert_eq;
use serde_json::{Map, json};
use tokio_util::sync::CancellationToken;

#[test]
fn absent_hooks_are_an_empty_configuration() {
    let (config, problems) = HookConfig::from_settings(&serde_json::Value::Null);
    assert!(config.is_empty());
    assert_eq!(problems, Vec::<String>::new());

    let (config, problems) = HookConfig::from_settings(&json!({}));
    assert!(config.is_empty());
    assert_eq!(problems, Vec::<String>::new());
}

#[test]
fn hooks_that_are_not_an_object_are_reported() {
    let (config, problems) = HookConfig::from_settings(&json!(["echo hi"]));
    assert!(config.is_empty());
    assert_eq!(
        problems,
        vec!["hooks: expected an object of event names, found an array".to_owned()]
    );
}

#[tokio::test]
async fn malformed_entries_are_reported_and_the_rest_still_runs() {
    let project = tempfile::tempdir().unwrap();
    let settings = json!({
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    { "type": "command", "command": "echo valid >> ran.log" },
                    { "type": "script", "command": "echo never >> ran.log" },
                    { "type": "prompt", "prompt": "Is this safe?" },
                    { "command": "echo no type" },
                    { "type": "command" },
                    { "type": "command", "command": "   " },
                    { "type": "command", "command": "echo slow-timeout >> ran.log", "timeout": "5" },
                    "echo a bare string"
                ]
            },
            { "matcher": "(unclosed", "hooks": [{ "type": "command", "command": "echo bad regex >> ran.log" }] },
            { "matcher": 3, "hooks": [] },
            { "matcher": "Bash" },
            { "matcher": "Bash", "hooks": { "type": "command" } },
            "Bash"
        ],
        "PostToolUse": { "matcher": "Bash" },
        "BeforeEverything": []
    });
    let (config, problems) = HookConfig::from_settings(&settings);

    let mut problems = problems;
    problems.sort();
    let mut expected = vec![
        "hooks.BeforeEverything: unknown or unsupported hook event (cairn supports PreToolUse, \
         PermissionRequest, PostToolUse, PostToolUseFailure, Notification, UserPromptSubmit, Stop, \
         SubagentStart, SubagentStop, PreCompact, PostCompact, SessionStart, SessionEnd)",
        "hooks.PostToolUse: expected an array of matcher groups, found an object",
        "hooks.PreToolUse[0].hooks[1]: unknown type \"script\" (expected \"command\")",
        "hooks.PreToolUse[0].hooks[2]: hooks of type \"prompt\" are not supported by cairn (expected \"command\")",
        "hooks.PreToolUse[0].hooks[3]: missing \"type\" (expected \"command\")",
        "hooks.PreToolUse[0].hooks[4]: missing \"command\"",
        "hooks.PreToolUse[0].hooks[5].command: is empty",
        "hooks.PreToolUse[0].hooks[6].timeout: expected a positive number of seconds, found \"5\"; \
         using the default of 60 s",
        "hooks.PreToolUse[0].hooks[7]: expected an object with \"type\" and \"command\", found a string",
        "hooks.PreToolUse[1].matcher: invalid regular expression \"(unclosed\": unclosed group",
        "hooks.PreToolUse[2].matcher: expected a string, found a number",
        "hooks.PreToolUse[3]: missing \"hooks\" (an array of commands)",
        "hooks.PreToolUse[4].hooks: expected an array of commands, found an object",
        "hooks.PreToolUse[5]: expected an object with \"matcher\" and \"hooks\", found a string",
    ];
    expected.sort_unstable();
    assert_eq!(problems, expected);

    assert!(config.has_hooks(HookEvent::PreToolUse));
    assert!(!config.has_hooks(HookEvent::PostToolUse));

    let runner = HookRunner::new(config, project.path().to_path_buf());
    let outcome = runner
        .run(
            HookEvent::PreToolUse,
            Some("Bash"),
            &HookCommon::default(),
            Map::new(),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome, HookOutcome::default());
    let mut ran: Vec<String> = fs::read_to_string(project.path().join("ran.log"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    ran.sort();
    assert_eq!(ran, vec!["slow-timeout", "valid"]);
}

#[test]
fn timeouts_may_be_fractional_but_not_zero() {
    let (_, problems) = HookConfig::from_settings(&json!({
        "Stop": [{ "hooks": [
            { "type": "command", "command": "true", "timeout": 0.5 },
            { "type": "command", "command": "false", "timeout": 0 }
        ] }]
    }));
    assert_eq!(
        problems,
        vec![
            "hooks.Stop[0].hooks[1].timeout: expected a positive number of seconds, found 0; \
             using the default of 60 s"
                .to_owned()
        ]
    );
}
