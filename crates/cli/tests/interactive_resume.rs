//! `cairn --resume` without an id, end to end: the real binary in a pseudo-terminal shows the
//! session picker, and the session chosen there is the one the next request continues. Each
//! test waits on what the terminal shows (woken by its output, with a deadline), never on
//! fixed sleeps.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;

mod support;
use support::terminal::Terminal;
use support::{Harness, WAIT};

/// Runs `cairn -p prompt` to make a session, answered with `answer`.
fn make_session(h: &Harness, prompt: &str, answer: &str) {
    h.server.push(Reply::text(answer));
    let output = h.command().args(["-p", prompt]).output().unwrap();
    assert!(
        output.status.success(),
        "cairn -p failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The session files of the test's working directory.
fn session_files(h: &Harness) -> usize {
    let projects = h.cairn_home().join("projects");
    let Ok(dirs) = std::fs::read_dir(&projects) else {
        return 0;
    };
    dirs.flatten()
        .flat_map(|dir| {
            std::fs::read_dir(dir.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .filter(|file| file.path().extension().is_some_and(|ext| ext == "jsonl"))
        .count()
}

#[test]
fn the_session_chosen_in_the_picker_is_the_one_continued() {
    let h = Harness::new();
    make_session(&h, "the older question", "the older answer");
    make_session(&h, "the newer question", "the newer answer");
    h.server.push(Reply::text("Continuing the older one."));

    let term = Terminal::launch(&h).args(&["--resume"]).spawn();
    term.wait_for("Resume a session");
    term.wait_for("the older question");
    let picker = term.wait_for("the newer question");
    let newer_row = picker.find("the newer question").unwrap();
    let older_row = picker.find("the older question").unwrap();
    assert!(newer_row < older_row, "newest first:\n{picker}");
    term.press("Down");
    term.press("Enter");
    term.wait_for("Welcome to cairn");
    term.type_text("and then?");
    term.wait_for("and then?");
    term.press("Enter");
    term.wait_for("Continuing the older one.");

    let requests = h.server.wait_for_requests(3, WAIT);
    let messages = requests[2].body["messages"].to_string();
    assert!(messages.contains("the older question"), "{messages}");
    assert!(messages.contains("the older answer"), "{messages}");
    assert!(messages.contains("and then?"), "{messages}");
    assert!(!messages.contains("the newer question"), "{messages}");
    // Resumed into the same file, not a new one.
    assert_eq!(session_files(&h), 2);
}

#[test]
fn cancelling_the_picker_exits_without_starting() {
    let h = Harness::new();
    make_session(&h, "a question", "an answer");
    let term = Terminal::launch(&h).args(&["--resume"]).spawn();
    term.wait_for("a question");
    // Ctrl+C is one unambiguous byte; a lone Esc can be read as the start of a sequence.
    term.press("C-c");
    assert_eq!(term.wait_for_exit(), 0);
    assert!(!term.screen().contains("Welcome to cairn"));
    assert_eq!(session_files(&h), 1);
    assert_eq!(h.server.requests().len(), 1);
}

#[test]
fn resume_with_no_sessions_says_so_and_fails() {
    let h = Harness::new();
    let term = Terminal::launch(&h).args(&["--resume"]).spawn();
    assert_eq!(term.wait_for_exit(), 1);
    let screen = term.screen();
    assert!(screen.contains("No sessions to resume in"), "{screen}");
    assert_eq!(session_files(&h), 0);
}

#[test]
fn a_compacted_session_continued_shows_its_boundary_not_a_prompt() {
    let h = Harness::new();
    make_session(
        &h,
        "Summarize the quarter",
        &"The quarter went well, with the figures up. ".repeat(30),
    );
    h.server
        .reply_to_side_requests(vec![Reply::text("SUMMARY-OF-THE-QUARTER: figures up.")]);
    let output = h.command().args(["-p", "-c", "/compact"]).output().unwrap();
    assert!(
        output.status.success(),
        "/compact failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );

    let term = Terminal::launch(&h).args(&["-c"]).spawn();
    let screen = term.wait_for("✻ Conversation compacted · Ctrl+O to read the summary");
    assert!(!screen.contains("being continued"), "{screen}");
    assert!(!screen.contains("SUMMARY-OF-THE-QUARTER"), "{screen}");
    assert!(!screen.contains("No answer"), "{screen}");
    // The transcript view reads it out.
    term.press("C-o");
    term.wait_for("SUMMARY-OF-THE-QUARTER");
}
