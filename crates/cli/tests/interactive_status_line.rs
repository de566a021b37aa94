//! The `statusLine` setting in the interactive UI: the real binary in a pseudo-terminal
//! against the scripted model server. The command's first line of output shows instead of
//! cairn's own status line, made from the session JSON it reads, and follows the session as
//! its cost changes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use serde_json::json;

mod support;
use support::Harness;
use support::terminal::Terminal;

/// Prints `STATUS <display name> in <project dir's name> cost=<total>` from the JSON on its
/// input, then a second line that must never show.
const STATUS_SCRIPT: &str = r#"json=$(cat)
field() { printf '%s' "$json" | sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p"; }
echo "STATUS $(field display_name) in $(basename "$(field project_dir)") cost=$(field total_cost_usd) session=$(field session_id)"
echo "second line"
"#;

fn status_row(term: &Terminal) -> Option<String> {
    term.visible_rows()
        .into_iter()
        .find(|row| row.starts_with("STATUS "))
}

#[test]
fn the_status_line_commands_output_replaces_the_status_line_and_follows_the_cost() {
    let h = Harness::new();
    std::fs::write(h.path("status.sh"), STATUS_SCRIPT).unwrap();
    h.settings(json!({"statusLine": {"type": "command", "command": "sh status.sh"}}));
    let project = h
        .work
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let term = Terminal::start(&h);
    term.wait_until("the status command's line", |_| status_row(&term).is_some());
    let first = status_row(&term).unwrap();
    let expected_start = format!("STATUS Sonnet 4.5 in {project} cost=0.0 session=");
    assert!(first.starts_with(&expected_start), "{first}");
    let session = first
        .trim_end()
        .rsplit("session=")
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(session.len(), 36, "a session id: {first}");
    let screen = term.screen();
    assert!(!screen.contains("second line"), "{screen}");
    assert!(
        !screen.contains("claude-sonnet-4-5 · default"),
        "cairn's own line is replaced: {screen}"
    );

    // A million tokens in and out at sonnet's prices: the session has cost $18.
    h.server
        .push(Reply::text("Done.").with_usage(1_000_000, 1_000_000));
    term.send_line("hello");
    term.wait_until("the status line to show the new cost", |_| {
        status_row(&term).is_some_and(|row| row.contains("cost=18"))
    });
    let row = status_row(&term).unwrap();
    assert_eq!(
        row.trim_end(),
        format!("STATUS Sonnet 4.5 in {project} cost=18.0 session={session}")
    );
}
