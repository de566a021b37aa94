//! Tab on an empty input turns thinking on and off in the interactive UI, as in Claude Code:
//! the status line says `thinking` while it is on, and the next request carries (or drops)
//! the `thinking` parameter, on the run's one switch every provider reads.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::json;

mod support;
use support::terminal::Terminal;
use support::{Harness, WAIT};

/// The status line's part while thinking is on.
const ON: &str = "default · thinking";

#[test]
fn tab_on_an_empty_input_toggles_thinking_for_the_next_request() {
    let h = Harness::new();
    h.server.push(Reply::text("First answer."));
    h.server.push(Reply::text("Second answer."));
    h.server.push(Reply::text("Third answer."));
    let term = Terminal::start(&h);
    term.wait_for("claude-sonnet-4-5 · default");
    assert!(!term.screen().contains(ON), "{}", term.screen());

    // Off to start with: no `thinking` parameter.
    term.send_line("one");
    term.wait_for("First answer.");
    // On: Claude Code's largest budget, with the interleaved-thinking beta.
    term.press("Tab");
    term.wait_for(ON);
    term.send_line("two");
    term.wait_for("Second answer.");
    // Off again.
    term.press("Tab");
    term.wait_until("the status line to drop `thinking`", |screen| {
        !screen.contains(ON)
    });
    term.send_line("three");
    term.wait_for("Third answer.");

    let requests = h.server.wait_for_requests(3, WAIT);
    let thinking: Vec<_> = requests
        .iter()
        .map(|request| request.body.get("thinking").cloned())
        .collect();
    assert_eq!(
        thinking,
        vec![
            None,
            Some(json!({"type": "enabled", "budget_tokens": 31_999})),
            None
        ]
    );
    assert_eq!(
        requests[1].header("anthropic-beta"),
        Some("interleaved-thinking-2025-05-14")
    );
    assert_eq!(requests[2].header("anthropic-beta"), None);
}

/// With text in the input Tab is no toggle; thinking the settings turned on (here
/// `MAX_THINKING_TOKENS`) shows from the start with its own budget, and Tab turns it off.
#[test]
fn a_configured_budget_starts_on_and_tab_turns_it_off() {
    let h = Harness::new();
    h.server.push(Reply::text("Thought about it."));
    h.server.push(Reply::text("Quick answer."));
    let term = Terminal::launch(&h)
        .env("MAX_THINKING_TOKENS", "4096")
        .start();
    term.wait_for(ON);
    term.send_line("one");
    term.wait_for("Thought about it.");
    term.type_text("tw");
    term.wait_for("> tw");
    term.press("Tab");
    term.type_text("o");
    term.wait_for("> two");
    assert!(term.screen().contains(ON), "{}", term.screen());
    // Clear the input, then Tab on the empty input.
    for _ in 0..3 {
        term.press("BSpace");
    }
    term.wait_until("the input to empty", |screen| !screen.contains("> two"));
    term.press("Tab");
    term.wait_until("the status line to drop `thinking`", |screen| {
        !screen.contains(ON)
    });
    term.send_line("three");
    term.wait_for("Quick answer.");
    let requests = h.server.wait_for_requests(2, WAIT);
    assert_eq!(
        requests[0].body["thinking"],
        json!({"type": "enabled", "budget_tokens": 4096})
    );
    assert_eq!(requests[1].body.get("thinking"), None);
}
