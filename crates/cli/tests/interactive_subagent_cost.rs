//! A sub-agent's cost is seen in the interactive UI: `/cost` counts its requests in the
//! totals and lists it on a line of its own, by its role and task.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::{Reply, ScriptedBlock};
use serde_json::json;

mod support;
use support::Harness;
use support::terminal::Terminal;

#[test]
fn cost_counts_and_lists_each_sub_agent() {
    let h = Harness::new();
    h.server.push(
        Reply::blocks(vec![ScriptedBlock::ToolUse {
            id: "toolu_agent".into(),
            name: "Agent".into(),
            input: json!({
                "description": "find the loader",
                "prompt": "Where is the loader?",
                "subagent_type": "Explore"
            }),
        }])
        .with_usage(1_000, 10),
    );
    h.server
        .push(Reply::text("It is in src/load.rs.").with_usage(20_000, 300));
    h.server
        .push(Reply::text("The loader is in src/load.rs.").with_usage(2_000, 20));
    let term = Terminal::launch(&h)
        .env("ANTHROPIC_SMALL_FAST_MODEL", "claude-3-5-haiku-20241022")
        .start();
    term.send_line("where is the loader?");
    term.wait_for("The loader is in src/load.rs.");
    term.send_line("/cost");
    let screen = term.wait_for("Sub-agents (in the totals):");
    // The parent's two requests and the sub-agent's one.
    assert!(
        screen.contains("Tokens: 23000 input, 330 output"),
        "{screen}"
    );
    let line = screen
        .lines()
        .find(|line| line.contains("Explore: find the loader:"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        line.contains("1 request, 20000 input, 300 output tokens"),
        "{line}"
    );
}
