//! Background sub-agents through the real binary: `run_in_background: true` answers the
//! `Agent` call at once while the agent runs on, its final answer reaches the parent as a
//! `<task-notification>` in a later request, `-p` waits for it before its own answer, and
//! `TaskStop` stops one (with `KillShell`, the older name, still matching rules).
//!
//! The background agent here offers no tools, so the scripted server answers its requests
//! from the side-request queue and the parent's from the main one, whatever their order.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::process::Stdio;

use cairn_test_support::{RecordedRequest, Reply, ScriptedBlock};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT};

/// An agent that offers no tools: its requests are "side requests" to the scripted server.
fn quiet_agent() -> String {
    json!({"quiet": {"description": "Thinks quietly.", "prompt": "You think.", "tools": []}})
        .to_string()
}

fn background_call(id: &str, description: &str) -> ScriptedBlock {
    ScriptedBlock::ToolUse {
        id: id.into(),
        name: "Agent".into(),
        input: json!({
            "description": description,
            "prompt": "Think it over.",
            "subagent_type": "quiet",
            "run_in_background": true,
        }),
    }
}

/// Every text in the user messages of `request`, joined.
fn user_texts(request: &RecordedRequest) -> String {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == json!("user"))
        .flat_map(|message| match &message["content"] {
            Value::String(text) => vec![text.clone()],
            Value::Array(blocks) => blocks
                .iter()
                .map(|block| match &block["content"] {
                    Value::String(text) => text.clone(),
                    Value::Array(inner) => inner
                        .iter()
                        .filter_map(|b| b["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => block["text"].as_str().unwrap_or_default().to_string(),
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_parents(request: &RecordedRequest) -> bool {
    request.body.get("tools").is_some()
}

#[test]
fn a_background_agent_answers_at_once_and_its_result_reaches_the_next_request_in_p() {
    let harness = Harness::new();
    harness.server.push(Reply::blocks(vec![background_call(
        "toolu_bg",
        "think apart",
    )]));
    // The parent's next request and the agent's first are answered only once both wait: the
    // Agent call must have answered while the agent still ran.
    harness
        .server
        .push(Reply::text("Going on meanwhile.").held_until_waiting(2));
    harness
        .server
        .reply_to_side_requests(vec![Reply::text("BG-RESULT-7").held_until_waiting(2)]);
    harness.server.push(Reply::text("Done with BG-RESULT-7."));
    let output = harness
        .command()
        .args([
            "-p",
            "start it",
            "--agents",
            &quiet_agent(),
            "--output-format",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        result["result"],
        json!("Done with BG-RESULT-7."),
        "{result}"
    );

    let requests = harness.server.wait_for_requests(4, WAIT);
    let parents: Vec<&RecordedRequest> = requests.iter().filter(|r| is_parents(r)).collect();
    assert_eq!(parents.len(), 3, "{requests:?}");
    let second = user_texts(parents[1]);
    assert!(
        second.contains("in the background as task agent_1")
            && second.contains("TaskStop (task_id \"agent_1\")"),
        "{second}"
    );
    assert!(!second.contains("BG-RESULT-7"), "{second}");
    let third = user_texts(parents[2]);
    assert!(
        third.contains(
            "<task-notification>\n<task-id>agent_1</task-id>\n<status>completed</status>\n\
             <summary>Agent \"think apart\" completed</summary>\n<result>BG-RESULT-7"
        ),
        "{third}"
    );
}

#[test]
fn task_stop_stops_a_background_agent_and_its_notification_says_so() {
    let harness = Harness::new();
    harness.server.push(Reply::blocks(vec![background_call(
        "toolu_bg",
        "never ends",
    )]));
    // The agent's request streams for ever; the parent stops it meanwhile.
    harness
        .server
        .reply_to_side_requests(vec![Reply::endless_pings()]);
    harness.server.push(Reply::tool_use(
        "toolu_stop",
        "KillShell",
        json!({"task_id": "agent_1"}),
    ));
    harness.server.push(Reply::text("Stopped it."));
    harness.server.push(Reply::text("Done."));
    let output = harness
        .command()
        .args(["-p", "start and stop", "--agents", &quiet_agent()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    // The notification comes with the TaskStop result or, when the agent ends a moment
    // later, in the request `-p` makes after waiting for it.
    let answer = String::from_utf8_lossy(&output.stdout).trim().to_string();
    assert!(answer == "Stopped it." || answer == "Done.", "{answer}");

    let requests = harness.server.requests();
    let parents: Vec<&RecordedRequest> = requests.iter().filter(|r| is_parents(r)).collect();
    let stopped = user_texts(parents[2]);
    assert!(
        stopped.contains("Stopped background agent agent_1 (quiet sub-agent: never ends)"),
        "{stopped}"
    );
    let notified = user_texts(parents.last().unwrap());
    assert!(
        notified.contains("<task-id>agent_1</task-id>\n<status>killed</status>"),
        "{notified}"
    );
    // TaskStop is what the model is offered; KillShell only an alias.
    let offered: Vec<&str> = parents[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert!(offered.contains(&"TaskStop") && !offered.contains(&"KillShell"));
}

#[test]
fn a_deny_rule_written_for_kill_shell_refuses_task_stop() {
    let harness = Harness::new();
    harness.settings(json!({"permissions": {"deny": ["KillShell"]}}));
    harness.server.push(Reply::tool_use(
        "toolu_stop",
        "TaskStop",
        json!({"task_id": "bash_1"}),
    ));
    harness.server.push(Reply::text("Done."));
    let output = harness
        .command()
        .args(["-p", "stop"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let requests = harness.server.wait_for_requests(2, WAIT);
    let (is_error, text) = support::tool_result(&requests, 1);
    assert!(is_error, "{text}");
    assert!(text.contains("KillShell"), "{text}");
}

#[test]
fn task_output_waits_for_a_background_agents_answer() {
    let harness = Harness::new();
    harness.server.push(Reply::blocks(vec![background_call(
        "toolu_bg",
        "read later",
    )]));
    harness
        .server
        .reply_to_side_requests(vec![Reply::text("BG-OUT-3")]);
    harness.server.push(Reply::tool_use(
        "toolu_output",
        "TaskOutput",
        json!({"task_id": "agent_1"}),
    ));
    harness.server.push(Reply::text("Done."));
    let output = harness
        .command()
        .args(["-p", "read it", "--agents", &quiet_agent()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let requests = harness.server.requests();
    let parents: Vec<&RecordedRequest> = requests.iter().filter(|r| is_parents(r)).collect();
    let (is_error, text) =
        support::tool_result(&parents.iter().map(|r| (*r).clone()).collect::<Vec<_>>(), 2);
    assert!(!is_error, "{text}");
    assert!(
        text.contains("<task-id>agent_1</task-id>\n<status>completed</status>")
            && text.contains("BG-OUT-3"),
        "{text}"
    );
}
