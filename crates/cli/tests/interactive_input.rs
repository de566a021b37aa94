//! The input box's aids end to end, in a pseudo-terminal against the scripted model server:
//! prompt history across sessions (Up and Ctrl+R), `@file` completion and attachment, and `!command`s.
//! Each test waits on what the terminal shows (woken by its output, with a deadline), never
//! on fixed sleeps.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use serde_json::Value;

mod support;
use support::terminal::{Terminal, last_user_text};
use support::{Harness, WAIT};

#[test]
fn up_recalls_the_last_prompt_of_an_earlier_session() {
    let h = Harness::new();
    h.server.push(Reply::text("First reply."));
    h.server.push(Reply::text("Second reply."));
    {
        let term = Terminal::start(&h);
        term.send_line("first prompt");
        term.wait_for("First reply.");
        term.send_line("second prompt");
        term.wait_for("Second reply.");
        term.press("C-d");
        term.wait_for("Resume this session with");
        assert_eq!(term.wait_for_exit(), 0);
    }
    let history = std::fs::read_to_string(h.cairn_home().join("history.jsonl")).unwrap();
    let texts: Vec<String> = history
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["text"].to_string())
        .collect();
    assert_eq!(texts, vec!["\"first prompt\"", "\"second prompt\""]);

    let term = Terminal::start(&h);
    term.wait_for("Welcome to cairn");
    term.press("C-r");
    term.wait_for("search history:");
    term.type_text("irst");
    term.wait_for("> first prompt");
    term.press("Escape");
    term.wait_until("the search to close", |screen| {
        !screen.contains("search history:")
    });
    term.press("Up");
    term.wait_for("> second prompt");
    term.press("Up");
    term.wait_for("> first prompt");
}

#[test]
fn an_at_mention_completes_and_attaches_the_file() {
    let h = Harness::new();
    std::fs::create_dir_all(h.path("src")).unwrap();
    std::fs::write(h.path("src/notes.txt"), "the secret is 7431\n").unwrap();
    h.server.push(Reply::text("I read the notes."));
    let term = Terminal::start(&h);
    term.type_text("read @notes");
    // The files are listed in the background from the start and matched at each key, so keys
    // typed before the listing is done show no list until the next key: retype the last
    // letter until it shows, as a user would.
    // Each key waits for the screen to show it, so no key is sent twice.
    let typed_all = |screen: &str| screen.contains("> read @notes");
    term.wait_until("the typed text", |screen| typed_all(screen));
    for _ in 0..50 {
        if term.screen().contains("src/notes.txt") {
            break;
        }
        term.press("BSpace");
        term.wait_until("the last letter gone", |screen| !typed_all(screen));
        term.type_text("s");
        term.wait_until("the last letter again", |screen| typed_all(screen));
    }
    term.wait_for("src/notes.txt");
    term.press("Tab");
    term.wait_for("> read @src/notes.txt");
    term.press("Enter");
    let screen = term.wait_for("I read the notes.");
    // The screen names the attachment; the model gets its contents.
    assert!(
        screen.contains("⎿ Attached src/notes.txt (1 line)"),
        "{screen}"
    );
    assert!(!screen.contains("the secret is 7431"), "{screen}");
    let requests = h.server.wait_for_requests(1, WAIT);
    let text = last_user_text(&requests[0].body);
    assert!(text.starts_with("read @src/notes.txt"), "{text}");
    assert!(
        text.contains("Contents of src/notes.txt:\n```\nthe secret is 7431\n```"),
        "{text}"
    );
}

#[test]
fn a_bang_command_runs_and_its_output_goes_with_the_next_message() {
    let h = Harness::new();
    h.server.push(Reply::text("It printed HI."));
    let term = Terminal::start(&h);
    term.send_line("!echo hi | tr a-z A-Z");
    term.wait_for("HI");
    assert!(h.server.requests().is_empty(), "the model was asked");
    term.send_line("what did it print?");
    term.wait_for("It printed HI.");
    let requests = h.server.wait_for_requests(1, WAIT);
    let text = last_user_text(&requests[0].body);
    assert!(
        text.contains("<bash-input>echo hi | tr a-z A-Z</bash-input>"),
        "{text}"
    );
    assert!(text.contains("<bash-stdout>HI</bash-stdout>"), "{text}");
    assert!(text.contains("what did it print?"), "{text}");
}
