//! The input box's aids end to end, in a tmux pane against the scripted model server:
//! prompt history across sessions (Up and Ctrl+R), `@file` completion and attachment, and `!command`s.
//! Each test waits on what the pane shows (polling with a deadline), never on fixed sleeps.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::process::Command;
use std::time::{Duration, Instant};

use cairn_test_support::{RecordedRequest, Reply};
use serde_json::Value;

mod support;
use support::{Harness, WAIT};

/// cairn running in a tmux server of its own; the server is killed when this is dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(h: &Harness) -> Tmux {
        let socket = h.home.path().join("tmux.sock").display().to_string();
        let home = h.home.path();
        let env = vec![
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
            env!("CARGO_BIN_EXE_cairn").to_string(),
        ];
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

    /// Presses a key by tmux name (`Enter`, `Up`, `Tab`, `C-d`).
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
    tmux.wait_for("I read the notes.");
    let requests = h.server.wait_for_requests(1, WAIT);
    let text = last_user_text(&requests[0]);
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
    let text = last_user_text(&requests[0]);
    assert!(
        text.contains("<bash-input>echo hi | tr a-z A-Z</bash-input>"),
        "{text}"
    );
    assert!(text.contains("<bash-stdout>HI</bash-stdout>"), "{text}");
    assert!(text.contains("what did it print?"), "{text}");
}
