//! A custom command typed in the TUI becomes the turn `cairn -p` would send
//! (`cairn_core::assembly`), with what only the input box adds placed around it.

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

#[test]
fn a_command_goes_after_pending_bang_output_and_before_the_session_start_context() {
    let h = Harness::new();
    h.settings(json!({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo 'The build uses make.'"}]}]
    }}));
    let commands = h.path(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("greet.md"),
        "---\nmodel: haiku\n---\nSay hello to $ARGUMENTS\n",
    )
    .unwrap();
    h.server.push(Reply::text("Hello, Ada!"));

    let term = Terminal::start(&h);
    term.send_line("!echo hi | tr a-z A-Z");
    term.wait_for("HI");
    term.send_line("/greet Ada");
    term.wait_for("Hello, Ada!");

    let request = &h.server.wait_for_requests(1, WAIT)[0];
    assert_eq!(request.body["model"], json!("claude-haiku-4-5"));
    let texts: Vec<&str> = request.body["messages"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        [
            "<bash-input>echo hi | tr a-z A-Z</bash-input>\n<bash-stdout>HI</bash-stdout>\n<bash-stderr></bash-stderr>",
            "<command-name>/greet</command-name>\n<command-args>Ada</command-args>",
            "Say hello to Ada",
            "<system-reminder>\nThe build uses make.\n</system-reminder>",
        ]
    );
}
