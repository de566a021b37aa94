//! The interactive UI end to end: the real binary in a pseudo-terminal, talking to the
//! scripted model server. Each test waits on what the terminal shows (woken by its output,
//! with a deadline), never on fixed sleeps.

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

/// The first tool result in the last message of request `n` (0-based).
fn tool_result(h: &Harness, n: usize) -> Value {
    let request = &h.server.wait_for_requests(n + 1, WAIT)[n];
    let messages = request.body["messages"].as_array().unwrap();
    messages.last().unwrap()["content"][0].clone()
}

fn result_text(result: &Value) -> String {
    result["content"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| result["content"].to_string())
}

#[test]
fn a_question_is_answered() {
    let h = Harness::new();
    h.server.push(Reply::text("The answer is forty-two."));
    let term = Terminal::start(&h);
    term.wait_for("Welcome to cairn");
    term.send_line("What is the answer?");
    term.wait_for("The answer is forty-two.");
    let requests = h.server.wait_for_requests(1, WAIT);
    assert_eq!(last_user_text(&requests[0].body), "What is the answer?");
}

#[test]
fn a_tool_call_approved_in_the_dialog_runs() {
    let h = Harness::new();
    h.server.push(Reply::tool_use(
        "w1",
        "Write",
        json!({"file_path": "notes.txt", "content": "hello\n"}),
    ));
    h.server.push(Reply::text("Wrote the notes."));
    let term = Terminal::start(&h);
    term.send_line("write the notes");
    term.wait_for("Yes");
    term.press("1");
    term.wait_for("Wrote the notes.");
    assert_eq!(
        std::fs::read_to_string(h.path("notes.txt")).unwrap(),
        "hello\n"
    );
    let result = tool_result(&h, 1);
    assert_eq!(result["tool_use_id"], json!("w1"));
    assert_ne!(result["is_error"], json!(true), "{result}");
}

#[test]
fn a_denial_with_feedback_reaches_the_model() {
    let h = Harness::new();
    h.server.push(Reply::tool_use(
        "w1",
        "Write",
        json!({"file_path": "b.txt", "content": "x"}),
    ));
    h.server.push(Reply::text("I will use a.txt."));
    let term = Terminal::start(&h);
    term.send_line("write b");
    term.wait_for("Yes");
    // An edit's options: yes, for the session, always, no.
    term.press("4");
    term.type_text("use a.txt instead");
    term.wait_for("use a.txt instead");
    term.press("Enter");
    term.wait_for("I will use a.txt.");
    let result = tool_result(&h, 1);
    assert_eq!(result["is_error"], json!(true), "{result}");
    let text = result_text(&result);
    assert!(text.contains("use a.txt instead"), "{text}");
    assert!(!h.path("b.txt").exists());
}

#[test]
fn escape_interrupts_a_long_stream_and_the_next_question_is_answered() {
    let h = Harness::new();
    h.server
        .push(Reply::text("Counting slowly: one two three four five").stall_after(400));
    h.server.push(Reply::text("Here is the follow-up answer."));
    let term = Terminal::start(&h);
    term.send_line("count for me");
    term.wait_for("esc to interrupt");
    h.server.wait_for_requests(1, WAIT);
    term.press("Escape");
    term.wait_until("the turn to end", |screen| {
        !screen.contains("esc to interrupt")
    });
    term.send_line("and now?");
    term.wait_for("Here is the follow-up answer.");
    let requests = h.server.wait_for_requests(2, WAIT);
    assert_eq!(last_user_text(&requests[1].body), "and now?");
}

#[test]
fn a_custom_command_sends_its_expanded_prompt() {
    let h = Harness::new();
    let commands = h.path(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(commands.join("greet.md"), "Say hello to $ARGUMENTS\n").unwrap();
    h.server.push(Reply::text("Hello, Ada!"));
    let term = Terminal::start(&h);
    term.send_line("/greet Ada");
    let screen = term.wait_for("Hello, Ada!");
    // The transcript shows the command as typed; the model gets it and its expansion.
    assert!(screen.contains("> /greet Ada"), "{screen}");
    assert!(!screen.contains("Say hello to Ada"), "{screen}");
    let requests = h.server.wait_for_requests(1, WAIT);
    assert_eq!(
        last_user_text(&requests[0].body).trim(),
        "<command-name>/greet</command-name>\n<command-args>Ada</command-args>\nSay hello to Ada"
    );
}

#[test]
fn unknown_commands_say_so() {
    let h = Harness::new();
    let term = Terminal::start(&h);
    term.send_line("/frobnicate");
    term.wait_for("Unknown command: /frobnicate");
    term.send_line("/help");
    term.wait_for("/status");
    assert!(h.server.requests().is_empty());
}

#[test]
fn ctrl_d_on_an_empty_line_exits_with_the_resume_hint() {
    let h = Harness::new();
    h.server.push(Reply::text("Noted."));
    let term = Terminal::start(&h);
    // Only a session in which something was said has anything to resume.
    term.send_line("remember this");
    term.wait_for("Noted.");
    term.press("C-d");
    let screen = term.wait_for("Resume this session with: cairn --resume ");
    let line = screen
        .lines()
        .find(|line| line.contains("cairn --resume "))
        .unwrap()
        .trim_end();
    let id = line.rsplit(' ').next().unwrap();
    assert_eq!(id.len(), 36, "{line}");
    assert!(uuid_like(id), "{line}");
    assert_eq!(term.wait_for_exit(), 0);
}

fn uuid_like(id: &str) -> bool {
    id.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}
