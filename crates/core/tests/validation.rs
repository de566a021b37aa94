//! A call bound to fail fails at once: the engine validates each call (the real tools, a
//! real permission gate) before its hooks run and before the user is asked.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod support;

use cairn_policy::rules::{RuleKind, RuleOrigin, RuleSet};
use cairn_protocol::{ContentBlock, StopReason};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::gated::{gated_engine, run_answering_yes, tool_use};
use support::{ScriptedClient, Step, response};

#[tokio::test]
async fn an_edit_bound_to_fail_fails_at_once_unasked_and_unhooked_and_a_valid_one_still_asks() {
    let workspace = tempfile::tempdir().unwrap();
    let readme = workspace.path().join("README.md");
    let items = "- item\n".repeat(39);
    std::fs::write(&readme, format!("# Title\n{items}")).unwrap();
    let notes = workspace.path().join("notes.txt");
    std::fs::write(&notes, "never read\n").unwrap();
    let hook_log = workspace.path().join("pre-tool-use.log");
    let hooks = json!({"PreToolUse": [{"matcher": "Edit", "hooks": [
        {"type": "command", "command": format!("cat >> '{}'; echo >> '{}'", hook_log.display(), hook_log.display())}
    ]}]});
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![tool_use("read", "Read", json!({"file_path": readme}))],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![
                tool_use(
                    "many",
                    "Edit",
                    json!({"file_path": readme, "old_string": "- item", "new_string": "- thing"}),
                ),
                tool_use(
                    "unread",
                    "Edit",
                    json!({"file_path": notes, "old_string": "never", "new_string": "once"}),
                ),
                tool_use(
                    "valid",
                    "Edit",
                    json!({"file_path": readme, "old_string": "# Title", "new_string": "# Cairn"}),
                ),
            ],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![ContentBlock::text("done")],
            StopReason::EndTurn,
        )),
    ]);
    let engine = gated_engine(client, workspace.path(), RuleSet::default(), hooks);

    let turn = run_answering_yes(engine, "retitle the readme").await;

    assert_eq!(
        turn.asked(),
        vec!["valid"],
        "only the valid edit is asked about"
    );
    assert_eq!(turn.decided(), vec!["read", "valid"]);
    let hooked: Vec<String> = std::fs::read_to_string(&hook_log)
        .unwrap()
        .lines()
        .map(|line| {
            let input: Value = serde_json::from_str(line).unwrap();
            input["tool_use_id"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(hooked, vec!["valid"], "only the valid edit meets the hooks");

    let results = turn.results();
    assert_eq!(results.len(), 4, "{results:?}");
    assert_eq!(
        results[1],
        (
            "many".to_string(),
            true,
            format!(
                "Found 39 matches of old_string in {} (at lines 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, \
                 …), but replace_all is not set. Add surrounding lines to old_string so that it \
                 matches exactly one place, or set replace_all to true to replace every match.",
                readme.display()
            )
        )
    );
    assert_eq!(
        results[2],
        (
            "unread".to_string(),
            true,
            format!(
                "{} has not been read in this session. Read it first, then change it.",
                notes.display()
            )
        )
    );
    let (id, is_error, text) = &results[3];
    assert_eq!((id.as_str(), *is_error), ("valid", false), "{text}");
    assert!(text.starts_with("Edited "), "{text}");
    assert_eq!(
        std::fs::read_to_string(&readme).unwrap(),
        format!("# Cairn\n{items}")
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "never read\n");
}

#[tokio::test]
async fn each_call_is_checked_in_the_state_the_calls_before_it_left() {
    let workspace = tempfile::tempdir().unwrap();
    let new_file = workspace.path().join("new.txt");
    // The Edit would be refused if it were checked before the Write created the file.
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![
                tool_use(
                    "write",
                    "Write",
                    json!({"file_path": new_file, "content": "one\n"}),
                ),
                tool_use(
                    "edit",
                    "Edit",
                    json!({"file_path": new_file, "old_string": "one", "new_string": "two"}),
                ),
            ],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![ContentBlock::text("done")],
            StopReason::EndTurn,
        )),
    ]);
    let engine = gated_engine(client, workspace.path(), RuleSet::default(), Value::Null);

    let turn = run_answering_yes(engine, "make a file").await;

    assert_eq!(turn.asked(), vec!["write", "edit"]);
    let outcomes: Vec<(String, bool)> = turn
        .results()
        .into_iter()
        .map(|(id, is_error, _)| (id, is_error))
        .collect();
    assert_eq!(
        outcomes,
        vec![("write".to_string(), false), ("edit".to_string(), false)],
        "{:?}",
        turn.results()
    );
    assert_eq!(std::fs::read_to_string(&new_file).unwrap(), "two\n");
}

#[tokio::test]
async fn a_call_a_deny_rule_refuses_gets_the_refusal_not_its_validation_error() {
    let workspace = tempfile::tempdir().unwrap();
    let secret = workspace.path().join("secret.txt");
    std::fs::write(&secret, "hidden\n").unwrap();
    let (rules, errors) = RuleSet::new([(
        RuleKind::Deny,
        "Edit".to_string(),
        RuleOrigin::new("the test", workspace.path()),
    )]);
    assert_eq!(errors, Vec::new());
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![tool_use(
                "edit",
                "Edit",
                json!({"file_path": secret, "old_string": "hidden", "new_string": "shown"}),
            )],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![ContentBlock::text("done")],
            StopReason::EndTurn,
        )),
    ]);
    let engine = gated_engine(client, workspace.path(), rules, Value::Null);

    let turn = run_answering_yes(engine, "edit the secret").await;

    // Not "has not been read in this session", which would say the file exists.
    assert_eq!(
        turn.results(),
        vec![(
            "edit".to_string(),
            true,
            "The permission rule Edit denies this call.".to_string()
        )]
    );
    assert_eq!(turn.asked(), Vec::<String>::new());
}
