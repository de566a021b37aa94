//! Claude Code's answer contract, with real hook commands: exit codes, JSON answers, plain
//! stdout, and how the answers of several hooks combine.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod hooks_support;

use cairn_policy::hooks::{HookEvent, HookOutcome, HookPermission};
use hooks_support::{Project, replying};
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test]
async fn exit_code_two_blocks_with_stderr() {
    let project = Project::with_hooks(
        HookEvent::PreToolUse,
        &["echo 'ignored stdout'; echo 'rm -rf is not allowed here' >&2; exit 2"],
    );
    let outcome = project.pre_tool_use("Bash").await;
    assert_eq!(
        outcome,
        HookOutcome {
            block: Some("rm -rf is not allowed here".into()),
            permission: Some((
                HookPermission::Deny,
                Some("rm -rf is not allowed here".into())
            )),
            ..HookOutcome::default()
        }
    );
}

#[tokio::test]
async fn exit_code_two_without_stderr_still_blocks() {
    let project = Project::with_hooks(HookEvent::Stop, &["exit 2"]);
    let outcome = project
        .run(HookEvent::Stop, None, json!({ "stop_hook_active": false }))
        .await;
    assert_eq!(
        outcome,
        HookOutcome {
            block: Some("blocked by hook `exit 2`".into()),
            ..HookOutcome::default()
        }
    );
}

#[tokio::test]
async fn exit_code_two_where_nothing_can_be_blocked_is_shown_to_the_user() {
    let project = Project::with_hooks(HookEvent::SessionStart, &["echo 'no network' >&2; exit 2"]);
    let outcome = project
        .run(
            HookEvent::SessionStart,
            Some("startup"),
            json!({ "source": "startup" }),
        )
        .await;
    assert_eq!(
        outcome,
        HookOutcome {
            system_messages: vec!["no network".into()],
            ..HookOutcome::default()
        }
    );
}

#[tokio::test]
async fn other_exit_codes_are_warnings_with_stderr() {
    let project = Project::with_hooks(HookEvent::PreToolUse, &["echo 'jq: not found' >&2; exit 1"]);
    let outcome = project.pre_tool_use("Bash").await;
    assert_eq!(
        outcome,
        HookOutcome {
            warnings: vec![
                "hook `echo 'jq: not found' >&2; exit 1` (PreToolUse) failed with exit code 1: jq: not found"
                    .into()
            ],
            ..HookOutcome::default()
        }
    );
}

#[tokio::test]
async fn updated_input_rewrites_the_tool_call() {
    let reply = json!({ "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "permissionDecisionReason": "dry run is safe",
        "updatedInput": { "command": "rm -rf build --dry-run" }
    } });
    let project = Project::with_hooks(HookEvent::PreToolUse, &[&replying(&reply)]);
    let outcome = project.pre_tool_use("Bash").await;
    assert_eq!(
        outcome,
        HookOutcome {
            permission: Some((HookPermission::Allow, Some("dry run is safe".into()))),
            updated_input: Some(json!({ "command": "rm -rf build --dry-run" })),
            ..HookOutcome::default()
        }
    );
}

#[tokio::test]
async fn permission_decision_deny_blocks_with_its_reason() {
    let project = Project::new(json!({ "PreToolUse": [{ "matcher": "Bash", "hooks": [
        { "type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/deny.sh" }
    ] }] }));
    project.script(
        "deny.sh",
        r#"cat >/dev/null
cat <<'EOF'
{
  "hookSpecificOutput": {
    "hookEventName": "PreToolUse",
    "permissionDecision": "deny",
    "permissionDecisionReason": "Deleting build/ is reserved for CI"
  },
  "systemMessage": "A hook refused rm -rf"
}
EOF
"#,
    );
    let outcome = project.pre_tool_use("Bash").await;
    assert_eq!(
        outcome,
        HookOutcome {
            block: Some("Deleting build/ is reserved for CI".into()),
            permission: Some((
                HookPermission::Deny,
                Some("Deleting build/ is reserved for CI".into())
            )),
            system_messages: vec!["A hook refused rm -rf".into()],
            ..HookOutcome::default()
        }
    );
}

#[tokio::test]
async fn permission_decision_allow_and_ask() {
    let allow = json!({ "hookSpecificOutput": { "hookEventName": "PreToolUse", "permissionDecision": "allow" } });
    let project = Project::with_hooks(HookEvent::PreToolUse, &[&replying(&allow)]);
    assert_eq!(
        project.pre_tool_use("Read").await,
        HookOutcome {
            permission: Some((HookPermission::Allow, None)),
            ..HookOutcome::default()
        }
    );

    let ask = json!({ "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "ask",
        "permissionDecisionReason": "touches production config"
    } });
    let project = Project::with_hooks(HookEvent::PreToolUse, &[&replying(&ask)]);
    assert_eq!(
        project.pre_tool_use("Edit").await,
        HookOutcome {
            permission: Some((
                HookPermission::Ask,
                Some("touches production config".into())
            )),
            ..HookOutcome::default()
        }
    );
}

#[tokio::test]
async fn several_answers_combine_deny_first_and_last_input_wins() {
    let allow = json!({ "hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "allow",
        "updatedInput": { "command": "first" }, "additionalContext": "from the first hook"
    } });
    let ask = json!({ "hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "ask",
        "updatedInput": { "command": "second" }, "additionalContext": "from the second hook"
    } });
    let deny = json!({ "decision": "block", "reason": "legacy block" });
    // The first hook answers last, so that order of configuration, not of completion, counts.
    let project = Project::with_hooks(
        HookEvent::PreToolUse,
        &[
            &format!("sleep 0.3; {}", replying(&allow)),
            &replying(&ask),
            &replying(&deny),
        ],
    );
    assert_eq!(
        project.pre_tool_use("Bash").await,
        HookOutcome {
            block: Some("legacy block".into()),
            permission: Some((HookPermission::Deny, Some("legacy block".into()))),
            updated_input: Some(json!({ "command": "second" })),
            additional_context: vec!["from the first hook".into(), "from the second hook".into()],
            ..HookOutcome::default()
        }
    );
}

#[tokio::test]
async fn malformed_json_is_a_warning() {
    let project = Project::with_hooks(HookEvent::PreToolUse, &[r#"echo '{"decision": "block",'"#]);
    let mut outcome = project.pre_tool_use("Bash").await;
    let warnings = std::mem::take(&mut outcome.warnings);
    assert_eq!(outcome, HookOutcome::default());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with(
            "hook `echo '{\"decision\": \"block\",'` (PreToolUse) printed malformed JSON, ignored: "
        ),
        "{warnings:?}"
    );

    // Well-formed JSON of the wrong shape is no better.
    let project = Project::with_hooks(HookEvent::PreToolUse, &[r#"echo '{"continue": "yes"}'"#]);
    let outcome = project.pre_tool_use("Bash").await;
    assert_eq!(outcome.warnings.len(), 1, "{outcome:?}");
    assert!(
        outcome.warnings[0].contains("printed malformed JSON"),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn session_start_matches_its_source_and_plain_stdout_is_context() {
    let project = Project::new(json!({ "SessionStart": [
        { "matcher": "startup|resume", "hooks": [{ "type": "command", "command": "echo 'branch: main'" }] },
        { "matcher": "compact", "hooks": [{ "type": "command", "command": "echo 'reread NOTES.md'" }] }
    ] }));
    let outcome = project
        .run(
            HookEvent::SessionStart,
            Some("compact"),
            json!({ "source": "compact" }),
        )
        .await;
    assert_eq!(
        outcome,
        HookOutcome {
            additional_context: vec!["reread NOTES.md".into()],
            ..HookOutcome::default()
        }
    );
}

#[tokio::test]
async fn user_prompt_submit_context_and_block() {
    let project = Project::with_hooks(
        HookEvent::UserPromptSubmit,
        &["date +%Y >/dev/null; echo 'Today is a Tuesday.'"],
    );
    let outcome = project
        .run(
            HookEvent::UserPromptSubmit,
            None,
            json!({ "prompt": "what day is it?" }),
        )
        .await;
    assert_eq!(
        outcome,
        HookOutcome {
            additional_context: vec!["Today is a Tuesday.".into()],
            ..HookOutcome::default()
        }
    );

    let reply = json!({ "decision": "block", "reason": "The prompt contains an API key" });
    let project = Project::with_hooks(HookEvent::UserPromptSubmit, &[&replying(&reply)]);
    let outcome = project
        .run(
            HookEvent::UserPromptSubmit,
            None,
            json!({ "prompt": "key sk-123" }),
        )
        .await;
    assert_eq!(
        outcome,
        HookOutcome {
            block: Some("The prompt contains an API key".into()),
            ..HookOutcome::default()
        }
    );
}

#[tokio::test]
async fn plain_stdout_of_tool_hooks_is_ignored() {
    let project = Project::with_hooks(HookEvent::PostToolUse, &["echo 'formatted 3 files'"]);
    let outcome = project
        .run(
            HookEvent::PostToolUse,
            Some("Edit"),
            json!({ "tool_name": "Edit" }),
        )
        .await;
    assert_eq!(outcome, HookOutcome::default());
}

#[tokio::test]
async fn continue_false_stops_and_the_common_fields_are_honoured() {
    let reply = json!({
        "continue": false,
        "stopReason": "Budget exhausted",
        "suppressOutput": true,
        "decision": "block",
        "reason": "Tests are failing; fix them first",
        "hookSpecificOutput": { "hookEventName": "PostToolUse", "additionalContext": "3 tests failed" }
    });
    let project = Project::with_hooks(HookEvent::PostToolUse, &[&replying(&reply)]);
    let outcome = project
        .run(
            HookEvent::PostToolUse,
            Some("Bash"),
            json!({ "tool_name": "Bash", "tool_response": {} }),
        )
        .await;
    assert_eq!(
        outcome,
        HookOutcome {
            block: Some("Tests are failing; fix them first".into()),
            additional_context: vec!["3 tests failed".into()],
            stop: Some("Budget exhausted".into()),
            suppress_output: true,
            ..HookOutcome::default()
        }
    );
}

#[tokio::test]
async fn answers_for_another_event_or_without_effect_are_warnings() {
    let reply = json!({ "hookSpecificOutput": {
        "hookEventName": "PostToolUse", "permissionDecision": "deny"
    } });
    let project = Project::with_hooks(HookEvent::PreToolUse, &[&replying(&reply)]);
    let outcome = project.pre_tool_use("Bash").await;
    // Messages name a hook by its command, clipped to 80 characters.
    let shown: String = replying(&reply).chars().take(80).collect();
    assert_eq!(
        outcome.warnings,
        vec![format!(
            "hook `{shown}…` (PreToolUse): hookSpecificOutput.hookEventName is \"PostToolUse\", \
             expected \"PreToolUse\"; ignored"
        )]
    );
    assert_eq!(outcome.permission, None);

    let reply = json!({ "hookSpecificOutput": { "permissionDecision": "deny" } });
    let project = Project::with_hooks(HookEvent::Stop, &[&replying(&reply)]);
    let outcome = project.run(HookEvent::Stop, None, json!({})).await;
    assert_eq!(outcome.block, None);
    assert_eq!(outcome.warnings.len(), 1, "{outcome:?}");
}

#[tokio::test]
async fn permission_request_answers_in_its_own_shape() {
    let reply = json!({ "hookSpecificOutput": {
        "hookEventName": "PermissionRequest",
        "decision": { "behavior": "allow", "updatedInput": { "command": "npm test -- --ci" } }
    } });
    let project = Project::with_hooks(HookEvent::PermissionRequest, &[&replying(&reply)]);
    let outcome = project
        .run(
            HookEvent::PermissionRequest,
            Some("Bash"),
            json!({ "tool_name": "Bash" }),
        )
        .await;
    assert_eq!(
        outcome,
        HookOutcome {
            permission: Some((HookPermission::Allow, None)),
            updated_input: Some(json!({ "command": "npm test -- --ci" })),
            ..HookOutcome::default()
        }
    );

    let reply = json!({ "hookSpecificOutput": {
        "hookEventName": "PermissionRequest",
        "decision": { "behavior": "deny", "message": "not on a Friday", "interrupt": true }
    } });
    let project = Project::with_hooks(HookEvent::PermissionRequest, &[&replying(&reply)]);
    let outcome = project
        .run(
            HookEvent::PermissionRequest,
            Some("Bash"),
            json!({ "tool_name": "Bash" }),
        )
        .await;
    assert_eq!(
        outcome,
        HookOutcome {
            block: Some("not on a Friday".into()),
            permission: Some((HookPermission::Deny, Some("not on a Friday".into()))),
            stop: Some("not on a Friday".into()),
            ..HookOutcome::default()
        }
    );
}
