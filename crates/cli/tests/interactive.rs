//! The interactive UI end to end: the real binary in a tmux pane, talking to the scripted
//! model server. Each test waits on what the pane shows (polling with a deadline), never on
//! fixed sleeps.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::process::Command;
use std::time::{Duration, Instant};

use cairn_test_support::{RecordedRequest, Reply};
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT};

/// cairn running in a tmux session of its own (its own tmux server); the server is killed
/// when this is dropped, panics included.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(h: &Harness) -> Tmux {
        // A server of its own, its socket in the test's temp HOME (removed with it).
        let socket = h.home.path().join("tmux.sock").display().to_string();
        let home = h.home.path();
        let mut env = vec![
            "env".to_string(),
            "-u".into(),
            "ANTHROPIC_AUTH_TOKEN".into(),
            "-u".into(),
            "ANTHROPIC_MODEL".into(),
            "-u".into(),
            "CAIRN_MAX_RETRIES".into(),
            "-u".into(),
            "DISABLE_PROMPT_CACHING".into(),
            "-u".into(),
            "NO_COLOR".into(),
            "TERM=xterm-256color".into(),
            "ANTHROPIC_API_KEY=sk-test-key".into(),
            format!("ANTHROPIC_BASE_URL={}", h.server.url()),
            format!("HOME={}", home.display()),
            format!("CAIRN_HOME={}", home.join(".cairn").display()),
        ];
        env.push(env!("CARGO_BIN_EXE_cairn").to_string());
        let tmux = Tmux { socket };
        let status = tmux
            .command()
            .args([
                "new-session",
                "-d",
                "-x",
                "100",
                "-y",
                "30",
                "-s",
                "cairn",
                "-c",
            ])
            .arg(h.work.path())
            .args(&env)
            .args([";", "set-option", "-t", "cairn", "remain-on-exit", "on"])
            .status()
            .expect("tmux must be installed to run the interactive tests");
        assert!(status.success(), "tmux new-session failed");
        tmux.wait_for("> ");
        tmux
    }

    fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command.env_remove("TMUX").args(["-S", &self.socket]);
        command
    }

    fn screen(&self) -> String {
        let output = self
            .command()
            .args(["capture-pane", "-p", "-J", "-S", "-200", "-t", "cairn"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Waits until the pane shows `text`; fails with the screen after the deadline.
    fn wait_for(&self, text: &str) -> String {
        self.wait_until(text, |screen| screen.contains(text))
    }

    fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what:?}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `text` literally.
    fn type_text(&self, text: &str) {
        let status = self
            .command()
            .args(["send-keys", "-t", "cairn", "-l", text])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Presses keys by tmux name (`Enter`, `Escape`, `C-d`).
    fn press(&self, key: &str) {
        let status = self
            .command()
            .args(["send-keys", "-t", "cairn", key])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Types a line and sends it.
    fn send_line(&self, text: &str) {
        self.type_text(text);
        self.wait_for(text);
        self.press("Enter");
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self
            .command()
            .arg("kill-server")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}

/// The text of the last user message of a request, all its text blocks joined.
fn last_user_text(request: &RecordedRequest) -> String {
    let messages = request.body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => panic!("unexpected content {other}"),
    }
}

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
    let tmux = Tmux::start(&h);
    tmux.wait_for("Welcome to cairn");
    tmux.send_line("What is the answer?");
    tmux.wait_for("The answer is forty-two.");
    let requests = h.server.wait_for_requests(1, WAIT);
    assert_eq!(last_user_text(&requests[0]), "What is the answer?");
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
    let tmux = Tmux::start(&h);
    tmux.send_line("write the notes");
    tmux.wait_for("Yes");
    tmux.press("1");
    tmux.wait_for("Wrote the notes.");
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
    let tmux = Tmux::start(&h);
    tmux.send_line("write b");
    tmux.wait_for("Yes");
    tmux.press("3");
    tmux.type_text("use a.txt instead");
    tmux.wait_for("use a.txt instead");
    tmux.press("Enter");
    tmux.wait_for("I will use a.txt.");
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
    let tmux = Tmux::start(&h);
    tmux.send_line("count for me");
    tmux.wait_for("esc to interrupt");
    h.server.wait_for_requests(1, WAIT);
    tmux.press("Escape");
    tmux.wait_until("the turn to end", |screen| {
        !screen.contains("esc to interrupt")
    });
    tmux.send_line("and now?");
    tmux.wait_for("Here is the follow-up answer.");
    let requests = h.server.wait_for_requests(2, WAIT);
    assert_eq!(last_user_text(&requests[1]), "and now?");
}

#[test]
fn a_custom_command_sends_its_expanded_prompt() {
    let h = Harness::new();
    let commands = h.path(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(commands.join("greet.md"), "Say hello to $ARGUMENTS\n").unwrap();
    h.server.push(Reply::text("Hello, Ada!"));
    let tmux = Tmux::start(&h);
    tmux.send_line("/greet Ada");
    tmux.wait_for("Hello, Ada!");
    let requests = h.server.wait_for_requests(1, WAIT);
    assert_eq!(last_user_text(&requests[0]).trim(), "Say hello to Ada");
}

#[test]
fn unknown_commands_say_so() {
    let h = Harness::new();
    let tmux = Tmux::start(&h);
    tmux.send_line("/frobnicate");
    tmux.wait_for("Unknown command: /frobnicate");
    tmux.send_line("/help");
    tmux.wait_for("/status");
    assert!(h.server.requests().is_empty());
}

#[test]
fn ctrl_d_on_an_empty_line_exits_with_the_resume_hint() {
    let h = Harness::new();
    let tmux = Tmux::start(&h);
    tmux.press("C-d");
    let screen = tmux.wait_for("Resume this session with: cairn --resume ");
    let line = screen
        .lines()
        .find(|line| line.contains("cairn --resume "))
        .unwrap()
        .trim_end();
    let id = line.rsplit(' ').next().unwrap();
    assert_eq!(id.len(), 36, "{line}");
    assert!(uuid_like(id), "{line}");
}

fn uuid_like(id: &str) -> bool {
    id.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}
