//! Plan mode and the model's questions in the interactive UI: the real binary in a
//! pseudo-terminal against the scripted model server. `ExitPlanMode` shows the plan for
//! approval; approving goes on in the mode chosen, and the plan is carried through `-c` and a
//! compaction; "keep planning" sends the user's words to the model. `AskUserQuestion` shows
//! its questions, and the answers picked with the keys reach the model.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use serde_json::json;

mod support;
use support::terminal::Terminal;
use support::{Harness, WAIT, tool_result};

const PLAN: &str = "# Plan\n\n1. Fix the off-by-one in `count`.\n2. Add a test.";

/// The status line (model · mode · …) as the screen shows it now.
fn status_line(term: &Terminal) -> String {
    term.visible_rows()
        .into_iter()
        .rev()
        .find(|row| row.starts_with("claude-"))
        .unwrap_or_default()
}

fn quit(term: &Terminal) {
    term.send_line("/exit");
    assert_eq!(term.wait_for_exit(), 0);
}

#[test]
fn an_answer_picked_in_the_question_dialog_reaches_the_model() {
    let h = Harness::new();
    h.trust_folder(h.work.path());
    h.server.push(Reply::tool_use(
        "q1",
        "AskUserQuestion",
        json!({"questions": [{
            "question": "Which database should the service use?",
            "header": "Database",
            "options": [
                {"label": "SQLite", "description": "One file, no server"},
                {"label": "Postgres", "description": "A server to run"}
            ],
            "multiSelect": false
        }]}),
    ));
    h.server.push(Reply::text("Postgres it is."));
    let term = Terminal::start(&h);
    term.send_line("set up the database");
    term.wait_for("Which database should the service use?");
    term.wait_for("Other");
    term.press("Down");
    term.press("Enter");
    term.wait_for("Postgres it is.");
    let (is_error, text) = tool_result(&h.server.wait_for_requests(2, WAIT), 1);
    assert!(!is_error, "{text}");
    assert!(
        text.contains("\"Which database should the service use?\"=\"Postgres\""),
        "{text}"
    );
    quit(&term);
}

#[test]
fn an_approved_plan_goes_on_in_accept_edits_and_survives_continue_and_compaction() {
    let h = Harness::new();
    h.trust_folder(h.work.path());
    h.server
        .push(Reply::tool_use("x1", "ExitPlanMode", json!({"plan": PLAN})));
    h.server.push(Reply::text("Starting on the plan."));
    let term = Terminal::launch(&h)
        .args(&["--permission-mode", "plan"])
        .start();
    term.send_line("plan the fix");
    term.wait_for("Ready to code?");
    term.wait_for("Fix the off-by-one");
    // The first choice: approve, and let edits run unasked.
    term.press("Enter");
    term.wait_for("Starting on the plan.");
    term.wait_until("the status line to show acceptEdits", |_| {
        status_line(&term).contains(" · acceptEdits · ")
    });
    let (is_error, text) = tool_result(&h.server.wait_for_requests(2, WAIT), 1);
    assert!(!is_error, "{text}");
    assert!(
        text.ends_with(&format!("## Approved Plan:\n{PLAN}")),
        "{text}"
    );
    quit(&term);

    // Compacting the continued session keeps the plan in the new conversation's opening.
    h.server
        .reply_to_side_requests(vec![Reply::text("SUMMARY: planning the fix of count.")]);
    let output = h.command().args(["-p", "-c", "/compact"]).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    h.server.push(Reply::text("Going on."));
    let output = h.command().args(["-p", "-c", "and now?"]).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let last = h.server.requests().pop().unwrap();
    let opening = last.body["messages"][0].to_string();
    assert!(opening.contains("SUMMARY: planning the fix"), "{opening}");
    assert!(
        opening.contains("[The plan the user approved, carried over from before compaction"),
        "{opening}"
    );
    assert!(opening.contains("Fix the off-by-one"), "{opening}");
}

#[test]
fn keep_planning_sends_the_users_words_and_plan_mode_stays() {
    let h = Harness::new();
    h.trust_folder(h.work.path());
    h.server
        .push(Reply::tool_use("x1", "ExitPlanMode", json!({"plan": PLAN})));
    h.server.push(Reply::text("I will revise the plan."));
    let term = Terminal::launch(&h)
        .args(&["--permission-mode", "plan"])
        .start();
    term.send_line("plan the fix");
    term.wait_for("Ready to code?");
    term.press("3");
    term.wait_for("tell the model what to change");
    term.type_text("also update the docs");
    term.wait_for("also update the docs");
    term.press("Enter");
    term.wait_for("I will revise the plan.");
    let (is_error, text) = tool_result(&h.server.wait_for_requests(2, WAIT), 1);
    assert!(is_error);
    assert!(
        text.contains(
            "Keep planning: the user wants changes to the plan. They said: also update the docs"
        ),
        "{text}"
    );
    // The status line is redrawn once the turn ends; wait for it rather than read it at once.
    term.wait_until("the status line to show plan", |_| {
        status_line(&term).contains(" · plan · ")
    });
    quit(&term);
}

#[test]
fn the_model_may_ask_to_enter_plan_mode_and_the_user_agrees() {
    let h = Harness::new();
    h.trust_folder(h.work.path());
    h.server
        .push(Reply::tool_use("e1", "EnterPlanMode", json!({})));
    h.server.push(Reply::text("Exploring first."));
    let term = Terminal::start(&h);
    term.send_line("redesign the parser");
    term.wait_for("Enter plan mode?");
    term.press("Enter");
    term.wait_for("Exploring first.");
    term.wait_until("the status line to show plan", |_| {
        status_line(&term).contains(" · plan · ")
    });
    quit(&term);
}
