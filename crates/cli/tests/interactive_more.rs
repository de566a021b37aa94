//! More of the interactive app end to end: resizing the terminal, saved permission rules and
//! the conversation commands (`/clear`, `/permissions`, `/config`, `/init`). The real binary
//! runs in a pseudo-terminal against the scripted model server; each test waits on what the
//! terminal shows (woken by its output, with a deadline).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use serde_json::{Value, json};

mod support;
use support::terminal::{Terminal, last_user_text};
use support::{Harness, WAIT};

#[test]
fn the_app_keeps_running_after_the_terminal_is_resized() {
    let h = Harness::new();
    h.server.push(Reply::text("Still here after the resize."));
    let term = Terminal::start(&h);
    term.resize(60, 25);
    // Typed as soon as a 60-wide row shows: that is about when cairn wakes to the resize, and
    // keys that came in the same wake-up used to be lost (2 runs in 10, before cairn read
    // keys with crossterm's /dev/tty reader).
    term.wait_until("a row 60 wide", |_| {
        term.visible_rows().iter().any(|row| *row == "─".repeat(60))
    });
    term.send_line("Are you there?");
    let screen = term.wait_for("Still here after the resize.");
    assert_eq!(term.exit_status(), None, "{screen}");
    // The input box is drawn again, at the new width, under the answer.
    term.wait_until("the input box under the answer", |_| {
        let rows = term.visible_rows();
        rows.iter()
            .position(|row| row.contains("Still here"))
            .is_some_and(|answer| rows[answer..].iter().any(|row| row.starts_with('>')))
    });
    let rows = term.visible_rows();
    assert!(
        rows.iter().all(|row| row.trim_end().chars().count() <= 60),
        "{}",
        rows.join("\n")
    );
}

#[test]
fn dont_ask_again_saves_the_rule_in_the_local_settings() {
    let h = Harness::new();
    h.settings(json!({"model": "claude-sonnet-4-5"}));
    h.server.push(Reply::tool_use(
        "b1",
        "Bash",
        json!({"command": "touch made-by-bash.txt"}),
    ));
    h.server.push(Reply::text("Ran it."));
    let term = Terminal::start(&h);
    term.send_line("run echo");
    term.wait_for("don't ask again");
    term.press("2");
    term.wait_for("Ran it.");
    let text = std::fs::read_to_string(h.path(".claude/settings.local.json")).unwrap();
    let settings: Value = serde_json::from_str(&text).unwrap();
    let allow = settings["permissions"]["allow"].as_array().unwrap();
    assert_eq!(allow.len(), 1, "{text}");
    assert!(allow[0].as_str().unwrap().starts_with("Bash("), "{text}");
    // The project's shared settings are untouched.
    let shared = std::fs::read_to_string(h.path(".claude/settings.json")).unwrap();
    assert!(!shared.contains("permissions"), "{shared}");
    // `/permissions` names the file the rule is kept in, in this session already.
    let rule = allow[0].as_str().unwrap();
    term.send_line("/permissions");
    let screen = term.wait_for("Change them with /permissions");
    let line = screen
        .lines()
        .rfind(|line| line.trim_start().starts_with(rule) && line.contains("  ("))
        .unwrap_or_else(|| panic!("{rule} is listed: {screen}"));
    assert!(line.contains("settings.local.json)"), "{line}");
    assert!(!line.contains("(this session)"), "{line}");
}

#[test]
fn clear_starts_a_fresh_conversation() {
    let h = Harness::new();
    h.server.push(Reply::text("First answer."));
    h.server.push(Reply::text("Second answer."));
    let term = Terminal::start(&h);
    term.send_line("The first question");
    term.wait_for("First answer.");
    term.send_line("/clear");
    term.wait_for_count("Welcome to cairn", 2);
    term.send_line("The second question");
    term.wait_for("Second answer.");
    let requests = h.server.wait_for_requests(2, WAIT);
    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(last_user_text(&requests[1].body), "The second question");
}

#[test]
fn permissions_lists_the_rules_with_their_origin() {
    let h = Harness::new();
    h.settings(json!({
        "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./secrets/**)"]}
    }));
    let term = Terminal::start(&h);
    term.send_line("/permissions");
    let screen = term.wait_for("Read(./secrets/**)");
    let deny = screen.find("Deny:").expect(&screen);
    let allow = screen.find("Allow:").expect(&screen);
    assert!(deny < allow, "{screen}");
    let rule = screen.find("Bash(npm test:*)").expect(&screen);
    assert!(allow < rule, "{screen}");
    assert!(screen.contains("settings.json"), "{screen}");
}

#[test]
fn config_lists_the_merged_settings() {
    let h = Harness::new();
    h.settings(json!({"includeCoAuthoredBy": false}));
    let term = Terminal::start(&h);
    term.send_line("/config");
    let screen = term.wait_for("includeCoAuthoredBy");
    assert!(screen.contains("Settings:"), "{screen}");
}

#[test]
fn init_asks_the_model_to_write_claude_md() {
    let h = Harness::new();
    h.server.push(Reply::text("I will write CLAUDE.md."));
    let term = Terminal::start(&h);
    term.send_line("/init");
    term.wait_for("I will write CLAUDE.md.");
    let requests = h.server.wait_for_requests(1, WAIT);
    let prompt = last_user_text(&requests[0].body);
    // After the command's tag, as for a custom command: the transcript shows `/init`.
    assert!(
        prompt.starts_with(
            "<command-name>/init</command-name>\n<command-args></command-args>\nPlease analyse \
             this repository and write a CLAUDE.md"
        ),
        "{prompt}"
    );
    assert!(prompt.contains("build, lint and test"), "{prompt}");
}
