//! The input box's aids end to end, in a tmux pane against the scripted model server:
//! prompt history across sessions (Up and Ctrl+R), `@file` completion and attachment, and `!command`s.
//! Each test waits on what the pane shows (polling with a deadline), never on fixed sleeps.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use serde_json::Value;

mod support;
use support::tmux::{Tmux, last_user_text};
use support::{Harness, WAIT};

#[test]
fn up_recalls_the_last_prompt_of_an_earlier_session() {
    let h = Harness::new();
    h.server.push(Reply::text("First reply."));
    h.server.push(Reply::text("Second reply."));
    {
        let tmux = Tmux::start(&h);
        tmux.send_line("first prompt");
        tmux.wait_for("First reply.");
        tmux.send_line("second prompt");
        tmux.wait_for("Second reply.");
        tmux.press("C-d");
        tmux.wait_for("Resume this session with");
    }
    let history = std::fs::read_to_string(h.cairn_home().join("history.jsonl")).unwrap();
    let texts: Vec<String> = history
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["text"].to_string())
        .collect();
    assert_eq!(texts, vec!["\"first prompt\"", "\"second prompt\""]);

    let tmux = Tmux::start(&h);
    tmux.wait_for("Welcome to cairn");
    tmux.press("C-r");
    tmux.wait_for("search history:");
    tmux.type_text("irst");
    tmux.wait_for("> first prompt");
    tmux.press("Escape");
    tmux.wait_until("the search to close", |screen| {
        !screen.contains("search history:")
    });
    tmux.press("Up");
    tmux.wait_for("> second prompt");
    tmux.press("Up");
    tmux.wait_for("> first prompt");
}

#[test]
fn an_at_mention_completes_and_attaches_the_file() {
    let h = Harness::new();
    std::fs::create_dir_all(h.path("src")).unwrap();
    std::fs::write(h.path("src/notes.txt"), "the secret is 7431\n").unwrap();
    h.server.push(Reply::text("I read the notes."));
    let tmux = Tmux::start(&h);
    tmux.type_text("read @notes");
    tmux.wait_for("src/notes.txt");
    tmux.press("Tab");
    tmux.wait_for("> read @src/notes.txt");
    tmux.press("Enter");
    let screen = tmux.wait_for("I read the notes.");
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
    let tmux = Tmux::start(&h);
    tmux.send_line("!echo hi | tr a-z A-Z");
    tmux.wait_for("HI");
    assert!(h.server.requests().is_empty(), "the model was asked");
    tmux.send_line("what did it print?");
    tmux.wait_for("It printed HI.");
    let requests = h.server.wait_for_requests(1, WAIT);
    let text = last_user_text(&requests[0].body);
    assert!(
        text.contains("<bash-input>echo hi | tr a-z A-Z</bash-input>"),
        "{text}"
    );
    assert!(text.contains("<bash-stdout>HI</bash-stdout>"), "{text}");
    assert!(text.contains("what did it print?"), "{text}");
}
