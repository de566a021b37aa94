//! Asking instead of refusing, and the permission mode changed at runtime, in the interactive
//! UI: the real binary in a pseudo-terminal against the scripted model server. A command that
//! needs full access (the network) gets the permission dialog with a prefix rule to allow;
//! Shift+Tab cycles the mode shown in the status line, and plan mode holds for the model's
//! next calls.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use serde_json::json;

mod support;
use support::terminal::{Terminal, last_user_text};
use support::{Harness, WAIT};

/// What a terminal sends for Shift+Tab.
const SHIFT_TAB: &str = "\x1b[Z";

/// The status line (model · mode · …) as the screen shows it now.
fn status_line(term: &Terminal) -> String {
    term.visible_rows()
        .into_iter()
        .rev()
        .find(|row| row.starts_with("claude-"))
        .unwrap_or_default()
}

/// Presses Shift+Tab and waits until the status line names `mode`.
fn shift_tab_to(term: &Terminal, mode: &str) {
    term.type_text(SHIFT_TAB);
    let shown = format!(" · {mode} · ");
    term.wait_until(&format!("the status line to show {mode}"), |_| {
        status_line(term).contains(&shown)
    });
}

#[test]
fn curl_is_asked_about_with_a_prefix_rule_instead_of_refused() {
    let h = Harness::new();
    h.server.push(Reply::tool_use(
        "c1",
        "Bash",
        json!({"command": "curl https://example.com"}),
    ));
    h.server.push(Reply::text("I will not fetch it."));
    let term = Terminal::start(&h);
    term.send_line("fetch example.com");
    let screen = term.wait_for("don't ask again for Bash(curl:*)");
    assert!(
        screen.contains("This command needs approval: `curl` uses the network."),
        "{screen}"
    );
    assert_eq!(
        screen.matches("uses the network").count(),
        1,
        "the reason says it once: {screen}"
    );
    assert!(!screen.contains("refused without asking"), "{screen}");
    // No: the model hears that the user refused, not that the mode did.
    term.press("3");
    term.press("Enter");
    term.wait_for("I will not fetch it.");
    let requests = h.server.wait_for_requests(2, WAIT);
    let result = requests[1].body["messages"].to_string();
    assert!(
        result.contains("The user denied this tool call."),
        "{result}"
    );
}

#[test]
fn shift_tab_cycles_the_mode_in_the_status_line_and_plan_mode_holds_for_the_model() {
    let h = Harness::new();
    h.server.push(Reply::tool_use(
        "w1",
        "Write",
        json!({"file_path": "plan.txt", "content": "changed\n"}),
    ));
    h.server.push(Reply::text("I will present a plan instead."));
    h.server.push(Reply::text("Back to work."));
    let term = Terminal::start(&h);
    term.wait_until("the status line in default mode", |_| {
        status_line(&term).contains(" · default · ")
    });
    shift_tab_to(&term, "acceptEdits");
    shift_tab_to(&term, "plan");

    term.send_line("change plan.txt");
    term.wait_for("I will present a plan instead.");
    assert!(!h.path("plan.txt").exists(), "plan mode refused the write");
    let requests = h.server.wait_for_requests(2, WAIT);
    let first = last_user_text(&requests[0].body);
    assert!(first.starts_with("change plan.txt\n<system-reminder>\nPlan mode is active"));
    let result = requests[1].body["messages"].to_string();
    assert!(result.contains("Plan mode is on"), "{result}");

    // Not started in bypassPermissions: the cycle goes back to default.
    shift_tab_to(&term, "default");
    term.send_line("go ahead");
    term.wait_for("Back to work.");
    let requests = h.server.wait_for_requests(3, WAIT);
    let next = last_user_text(&requests[2].body);
    assert!(
        next.starts_with("go ahead\n<system-reminder>\nPlan mode has ended"),
        "{next}"
    );
}

#[test]
fn a_session_started_with_bypass_permissions_can_cycle_back_to_it() {
    let h = Harness::new();
    let term = Terminal::launch(&h)
        .args(&["--dangerously-skip-permissions"])
        .start();
    term.wait_until("the status line in bypassPermissions", |_| {
        status_line(&term).contains(" · bypassPermissions · ")
    });
    for mode in ["default", "acceptEdits", "plan", "bypassPermissions"] {
        shift_tab_to(&term, mode);
    }
}
