//! Plan mode in `cairn -p` against the scripted model server: the model is offered
//! `ExitPlanMode`, a write is refused with plan mode's reason before any other check, and the
//! plan `ExitPlanMode` hands back is the run's result, in text and in json. The tools that
//! need someone to answer (`EnterPlanMode`, `AskUserQuestion`) are not offered where nobody
//! can.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{Harness, tool_result};

const PLAN: &str = "# Plan\n\n1. Fix the off-by-one in `count`.\n2. Add a test.";

/// The names of the tools request `n` offered.
fn offered(h: &Harness, n: usize) -> Vec<String> {
    h.server.requests()[n].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect()
}

/// A plan-mode run in which the model tries to edit a file it never read, then hands back
/// its plan.
fn planning_run(h: &Harness, extra: &[&str]) -> std::process::Output {
    std::fs::write(h.path("count.rs"), "fn count() {}\n").unwrap();
    h.server.push(Reply::tool_use(
        "e1",
        "Edit",
        json!({"file_path": h.path("count.rs"), "old_string": "fn", "new_string": "pub fn"}),
    ));
    h.server
        .push(Reply::tool_use("x1", "ExitPlanMode", json!({"plan": PLAN})));
    // Never asked for: the plan ends the turn.
    h.server.push(Reply::text("This must not be reached."));
    let mut args = vec!["-p", "fix count", "--permission-mode", "plan"];
    args.extend_from_slice(extra);
    h.command().args(&args).output().unwrap()
}

#[test]
fn plan_mode_refuses_an_unread_edit_with_its_reason_and_the_plan_is_the_result() {
    let h = Harness::new();
    let output = planning_run(&h, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), format!("{PLAN}\n"));

    let tools = offered(&h, 0);
    assert!(tools.contains(&"ExitPlanMode".to_string()), "{tools:?}");
    for absent in ["EnterPlanMode", "AskUserQuestion"] {
        assert!(
            !tools.contains(&absent.to_string()),
            "{absent} in -p: {tools:?}"
        );
    }
    // Plan mode answers first: not "read it first", which would invite a retry.
    assert_eq!(
        tool_result(&h.server.requests(), 1),
        (true, cairn_policy::PLAN_MODE_REFUSAL.to_string())
    );
    assert_eq!(h.server.requests().len(), 2, "the plan ended the turn");
    assert_eq!(
        std::fs::read_to_string(h.path("count.rs")).unwrap(),
        "fn count() {}\n"
    );
}

#[test]
fn in_json_the_plan_is_the_result() {
    let h = Harness::new();
    let output = planning_run(&h, &["--output-format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["result"], json!(PLAN));
    assert_eq!(result["is_error"], json!(false));
    assert_eq!(result["num_turns"], json!(2));
}

#[test]
fn outside_plan_mode_exit_plan_mode_is_refused_with_its_reason() {
    let h = Harness::new();
    h.server
        .push(Reply::tool_use("x1", "ExitPlanMode", json!({"plan": PLAN})));
    h.server.push(Reply::text("Then I will just do it."));
    let output = h.command().args(["-p", "fix count"]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Then I will just do it.\n"
    );
    let (is_error, text) = tool_result(&h.server.requests(), 1);
    assert!(is_error);
    assert!(text.starts_with("Plan mode is not on"), "{text}");
}

#[test]
fn a_plan_left_out_of_the_call_is_read_from_the_plan_file_the_model_wrote() {
    let h = Harness::new();
    let project = cairn_session::SessionStore::new(h.cairn_home())
        .project_dir(&h.work.path().canonicalize().unwrap());
    let plan_file = project.join("plan.md");
    h.server.push(Reply::tool_use(
        "w1",
        "Write",
        json!({"file_path": plan_file, "content": PLAN}),
    ));
    h.server
        .push(Reply::tool_use("x1", "ExitPlanMode", json!({})));
    let output = h
        .command()
        .args(["-p", "fix count", "--permission-mode", "plan"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        tool_result(&h.server.requests(), 1).0,
        false,
        "plan mode writes the plan file"
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), format!("{PLAN}\n"));
}
