//! A running sub-agent's progress is seen under its `Agent` call's cell: the tool it used
//! last, its requests, tokens, cost and time so far; once it ends, one summary line.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::time::Duration;

use cairn_test_support::{Reply, ScriptedBlock};
use serde_json::json;

mod support;
use support::Harness;
use support::terminal::Terminal;

/// Where `needle` first appears among the screen's lines at or after `from`.
fn line_of(screen: &str, from: usize, needle: &str) -> Option<usize> {
    screen
        .lines()
        .enumerate()
        .skip(from)
        .find(|(_, line)| line.contains(needle))
        .map(|(index, _)| index)
}

#[test]
fn the_agent_cell_shows_the_sub_agents_current_tool_and_cost_while_it_runs() {
    let h = Harness::new();
    std::fs::create_dir_all(h.path("src")).unwrap();
    std::fs::write(h.path("src/load.rs"), "pub fn load() {}\n").unwrap();
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
    h.server.push(
        Reply::tool_use(
            "toolu_read",
            "Read",
            json!({"file_path": h.path("src/load.rs").to_str().unwrap()}),
        )
        .with_usage(2_000, 300),
    );
    h.server.push(
        Reply::text("It is in src/load.rs.")
            .with_usage(3_000, 40)
            .held_until_released(),
    );
    h.server
        .push(Reply::text("The loader is in src/load.rs.").with_usage(4_000, 20));
    let term = Terminal::launch(&h)
        .env("ANTHROPIC_SMALL_FAST_MODEL", "claude-3-5-haiku-20241022")
        .start();
    term.send_line("where is the loader?");

    // The sub-agent has read the file and waits for its second answer.
    h.server.wait_held(Duration::from_secs(30));
    let screen = term.wait_until("the sub-agent's progress under its cell", |screen| {
        line_of(screen, 0, "● Agent(find the loader)")
            .and_then(|cell| line_of(screen, cell, "Read(src/load.rs)"))
            .and_then(|tool| line_of(screen, tool, "1 request · 1 tool use · 2.3k tokens · $"))
            .is_some()
    });
    assert!(!screen.contains("Done ("), "{screen}");

    h.server.release_held();
    let screen = term.wait_for("The loader is in src/load.rs.");
    let cell = line_of(&screen, 0, "● Agent(find the loader)").unwrap();
    let summary = line_of(
        &screen,
        cell,
        "Done (2 requests · 1 tool use · 5.3k tokens · $",
    )
    .unwrap_or_else(|| panic!("no summary under the cell:\n{screen}"));
    assert_eq!(summary, cell + 1, "{screen}");
    // The sub-agent's own answer went to the parent, not to the screen.
    assert!(!screen.contains("It is in src/load.rs."), "{screen}");
}
