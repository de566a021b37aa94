//! Sessions that are sessions, end to end: the real binary in a pseudo-terminal. A session
//! in which nothing was sent leaves no file, prints no resume hint and is not what `-c`
//! continues; one in which something was said prints the hint, and the session list shows
//! its prompt as typed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;

mod support;
use support::Harness;
use support::terminal::Terminal;

#[test]
fn help_then_ctrl_d_leaves_no_session_and_nothing_to_continue() {
    let h = Harness::new();
    let term = Terminal::start(&h);
    term.send_line("/help");
    term.wait_for("/status");
    term.press("C-d");
    assert_eq!(term.wait_for_exit(), 0);
    let screen = term.screen();
    assert!(!screen.contains("Resume this session"), "{screen}");
    assert!(
        !h.cairn_home().join("projects").exists(),
        "no session file or directory: {:?}",
        std::fs::read_dir(h.cairn_home().join("projects"))
            .map(|dir| dir.flatten().map(|entry| entry.path()).collect::<Vec<_>>())
    );

    let listing = h.command().arg("sessions").output().unwrap();
    assert_eq!(
        String::from_utf8(listing.stdout).unwrap(),
        format!("No sessions in {} yet.\n", h.work.path().display())
    );
    let output = h.command().args(["-p", "-c", "go on"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!(
            "error: no session to continue in {}\n",
            h.work.path().display()
        )
    );
    assert!(h.server.requests().is_empty());
}

#[test]
fn a_session_with_a_message_prints_the_hint_and_lists_the_prompt_as_typed() {
    let h = Harness::new();
    std::fs::write(h.path("notes.txt"), "a long file the list must not show\n").unwrap();
    h.server.push(Reply::text("Read them."));
    let term = Terminal::start(&h);
    // The mention is not the last word, so no completion menu is open when Enter goes.
    term.send_line("summarize @notes.txt briefly");
    term.wait_for("Read them.");
    term.press("C-d");
    assert_eq!(term.wait_for_exit(), 0);
    let screen = term.screen();
    let hint = screen
        .lines()
        .find(|line| line.contains("Resume this session with: cairn --resume "))
        .unwrap_or_else(|| panic!("no resume hint: {screen}"));
    let id = hint.trim_end().rsplit(' ').next().unwrap().to_owned();

    let requests = h.server.wait_for_requests(1, support::WAIT);
    assert!(
        requests[0]
            .body
            .to_string()
            .contains("a long file the list must not show"),
        "the model got the file"
    );
    let listing = h.command().arg("sessions").output().unwrap();
    let listing = String::from_utf8(listing.stdout).unwrap();
    let line = listing.lines().next().unwrap();
    assert!(line.starts_with(&id), "{listing}");
    assert!(
        line.contains("  2 messages  $") && line.ends_with("  summarize @notes.txt briefly"),
        "{listing}"
    );
}
