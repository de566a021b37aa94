//! Usage is never dropped: an answer interrupted with Esc while it streams still counts what
//! the API reported for it, in the status line and `/cost`. The real binary in a
//! pseudo-terminal against the scripted server; every wait is on what the terminal shows.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;

mod support;
use support::terminal::Terminal;
use support::{Harness, WAIT};

const MODEL: &str = "claude-sonnet-4-5";

/// The byte offset just after the first `text_delta` event of `body`.
fn after_first_delta(body: &[u8]) -> usize {
    let text = String::from_utf8_lossy(body);
    let mut offset = 0;
    for event in text.split_inclusive("\n\n") {
        offset += event.len();
        if event.contains("text_delta") {
            return offset;
        }
    }
    panic!("no text_delta in the reply");
}

#[test]
fn an_answer_interrupted_with_escape_still_counts_in_the_status_line_and_cost() {
    let h = Harness::new();
    // 50,000 input tokens of a 200,000-token window: 25% context.
    let reply = Reply::text("Counting the files: one, two, three, four, five, six, seven.")
        .with_usage(50_000, 40);
    let stall = after_first_delta(&reply.body_bytes(MODEL));
    h.server.push(reply.stall_after(stall));
    let term = Terminal::launch(&h).args(&["--model", MODEL]).start();
    term.send_line("count the files");
    // The first words are on screen: message_start has been read.
    term.wait_for("Counting the files");
    h.server.wait_for_requests(1, WAIT);
    term.press("Escape");
    term.wait_for("Interrupted by user");
    term.wait_for("25% context");
    term.send_line("/cost");
    let screen = term.wait_for("Tokens: 50000 input");
    assert!(!screen.contains("Total cost: $0.0000"), "{screen}");
}
