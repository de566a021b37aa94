//! The built-in slash commands end to end: the real binary in a pseudo-terminal, talking to
//! the scripted model server. Each test waits on what the terminal shows (woken by its
//! output, with a deadline).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use serde_json::json;

mod support;
use support::terminal::Terminal;
use support::{Harness, WAIT};

#[test]
fn export_writes_the_conversation_as_markdown() {
    let h = Harness::new();
    h.server.push(Reply::text("The answer is forty-two."));
    let term = Terminal::start(&h);
    term.send_line("What is the answer?");
    term.wait_for("The answer is forty-two.");
    term.send_line("/export chat.md");
    term.wait_for("Exported the conversation to");
    let markdown = std::fs::read_to_string(h.path("chat.md")).unwrap();
    assert!(
        markdown.contains("## User\n\nWhat is the answer?"),
        "{markdown}"
    );
    assert!(
        markdown.contains("## Assistant\n\nThe answer is forty-two."),
        "{markdown}"
    );
}

#[test]
fn export_to_an_unwritable_path_says_why() {
    let h = Harness::new();
    let term = Terminal::start(&h);
    term.send_line("/export no-such-dir/chat.md");
    let screen = term.wait_for("Cannot write");
    assert!(screen.contains("no-such-dir/chat.md"), "{screen}");
}

#[test]
fn doctor_names_the_credential_variable_but_not_its_value() {
    let h = Harness::new();
    let term = Terminal::start(&h);
    term.send_line("/doctor");
    let screen = term.wait_for(" git: ");
    assert!(
        screen.contains("✓ credentials: ANTHROPIC_API_KEY is set"),
        "{screen}"
    );
    assert!(screen.contains("sandbox: "), "{screen}");
    assert!(!screen.contains("sk-test-key"), "{screen}");
    // Grep and Glob search in-process: no false alarm about rg.
    assert!(!screen.contains(" rg: "), "{screen}");
}

#[test]
fn context_shows_each_category_and_the_last_request() {
    let h = Harness::new();
    h.server.push(Reply::text("Hello there."));
    let term = Terminal::start(&h);
    term.send_line("Say hello");
    term.wait_for("Hello there.");
    term.send_line("/context");
    let screen = term.wait_for("Last request:");
    for category in [
        "System prompt (static)",
        "System prompt (dynamic)",
        "Tool definitions",
        "User messages",
        "Assistant messages",
        "Tool results",
        "Total",
    ] {
        assert!(screen.contains(category), "{category}: {screen}");
    }
    assert!(!screen.contains("Last request: none yet"), "{screen}");
}

#[test]
fn an_added_directory_is_read_without_asking() {
    let h = Harness::new();
    let lib = h.home.path().join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("notes.txt"), "shared notes\n").unwrap();
    let notes = lib.canonicalize().unwrap().join("notes.txt");
    h.server.push(Reply::tool_use(
        "r1",
        "Read",
        json!({"file_path": notes.display().to_string()}),
    ));
    h.server.push(Reply::text("The notes are shared."));
    let term = Terminal::start(&h);
    term.send_line(&format!("/add-dir {}", lib.display()));
    term.wait_for("to the workspace for this session");
    term.send_line("read the shared notes");
    let screen = term.wait_for("The notes are shared.");
    assert!(!screen.contains("Yes"), "a dialog was shown:\n{screen}");
    let requests = h.server.wait_for_requests(2, WAIT);
    let result = &requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"][0];
    assert!(result.to_string().contains("shared notes"), "{result}");
}

#[test]
fn help_lists_every_built_in_command() {
    let h = Harness::new();
    let term = Terminal::start(&h);
    term.send_line("/help");
    let screen = term.wait_for("Keys:");
    for command in [
        "/help", "/exit", "/model", "/cost", "/status", "/export", "/doctor", "/context",
        "/add-dir",
    ] {
        assert!(
            screen.contains(&format!("  {command}")),
            "{command}: {screen}"
        );
    }
}
