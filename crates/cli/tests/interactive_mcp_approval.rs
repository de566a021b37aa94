//! The approval of a project's `.mcp.json` servers in the interactive UI, on a pseudo-terminal
//! against the test MCP server: after the trust dialog, each server no setting approves is
//! asked about with what it would run; the answer goes to `.claude/settings.local.json`
//! (other keys kept) and an approved server starts with the session.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::mcp::server_binary;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::Harness;
use support::terminal::Terminal;

const QUESTION: &str = "New MCP server found in .mcp.json";

/// A project whose `.mcp.json` has the test server as `notes`, and whose
/// `settings.local.json` holds a key of its own.
fn project(h: &Harness) {
    std::fs::write(
        h.path(".mcp.json"),
        json!({"mcpServers": {"notes": {"command": server_binary(), "args": ["--resources"]}}})
            .to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(h.path(".claude")).unwrap();
    std::fs::write(
        h.path(".claude/settings.local.json"),
        r#"{"permissions": {"allow": ["Read"]}}"#,
    )
    .unwrap();
}

fn local_settings(h: &Harness) -> Value {
    serde_json::from_str(&std::fs::read_to_string(h.path(".claude/settings.local.json")).unwrap())
        .unwrap()
}

#[test]
fn after_the_trust_dialog_use_this_server_approves_it_and_it_starts() {
    let h = Harness::new();
    project(&h);
    let term = Terminal::launch(&h).untrusted().spawn();
    term.wait_for("Do you trust the files in this folder?");
    term.press("1");
    let screen = term.wait_for(QUESTION);
    assert!(
        screen.contains("MCP server \"notes\", which would run:"),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("{} --resources", server_binary().display())),
        "{screen}"
    );
    // The cursor starts on "Use this MCP server".
    term.press("Enter");
    term.wait_for("> ");
    assert_eq!(
        local_settings(&h),
        json!({"permissions": {"allow": ["Read"]}, "enabledMcpjsonServers": ["notes"]})
    );
    its_prompt_runs(&h, &term);
    term.send_line("/mcp");
    term.wait_for("notes (project, ");
    term.wait_for("connected");
}

/// cairn started in a trusted project of the test server, its question answered with `key`;
/// the app is up when this returns.
fn answered(h: &Harness, key: &str) -> Terminal {
    project(h);
    let term = Terminal::launch(h).spawn();
    term.wait_for(QUESTION);
    term.press(key);
    term.wait_for("> ");
    term
}

/// The approved server is the session's: its prompt runs (the line waits for it to connect).
fn its_prompt_runs(h: &Harness, term: &Terminal) -> String {
    h.server.push(cairn_test_support::Reply::text("Noted."));
    term.send_line("/mcp__notes__plain");
    term.wait_for("Noted.")
}

#[test]
fn continue_without_disables_it() {
    let h = Harness::new();
    let term = answered(&h, "3");
    assert_eq!(
        local_settings(&h)["disabledMcpjsonServers"],
        json!(["notes"])
    );
    term.send_line("/mcp");
    term.wait_for("No MCP servers are configured here.");
}

#[test]
fn all_future_servers_enables_every_one_of_the_project() {
    let h = Harness::new();
    let term = answered(&h, "1");
    assert_eq!(
        local_settings(&h)["enableAllProjectMcpServers"],
        json!(true)
    );
    let screen = its_prompt_runs(&h, &term);
    // Settings that cairn acts on are not listed as ones it does not.
    assert!(!screen.contains("does not act on yet"), "{screen}");
}
