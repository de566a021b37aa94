//! `cairn --resume` without an id, end to end: the real binary in a tmux pane shows the
//! session picker, and the session chosen there is the one the next request continues. Each
//! test waits on what the pane shows (polling with a deadline), never on fixed sleeps.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::process::Command;
use std::time::{Duration, Instant};

use cairn_test_support::Reply;

mod support;
use support::{Harness, WAIT};

/// cairn (with `args`) running in a tmux session of its own (its own tmux server); the
/// server is killed when this is dropped, panics included.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(h: &Harness, args: &[&str]) -> Tmux {
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
        env.extend(args.iter().map(|arg| (*arg).to_string()));
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

    /// A tmux format (`#{pane_dead}`) for the pane.
    fn pane_format(&self, format: &str) -> String {
        let output = self
            .command()
            .args(["display-message", "-p", "-t", "cairn", format])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    }

    /// Waits for cairn to exit and returns its exit status.
    fn wait_for_exit(&self) -> i32 {
        let deadline = Instant::now() + WAIT;
        loop {
            if self.pane_format("#{pane_dead}") == "1" {
                if let Ok(status) = self.pane_format("#{pane_dead_status}").parse() {
                    return status;
                }
                // tmux sometimes marks the pane dead before it reaps the process; the
                // zombie's exit status is in /proc meanwhile.
                if let Some(status) = zombie_exit_status(&self.pane_format("#{pane_pid}")) {
                    return status;
                }
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for cairn to exit; the screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the pane shows `text`; fails with the screen after the deadline.
    fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {text:?}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Presses keys by tmux name (`Enter`, `Down`, `Escape`), or types text with `-l`.
    fn send(&self, literal: bool, keys: &str) {
        let mut command = self.command();
        command.args(["send-keys", "-t", "cairn"]);
        if literal {
            command.arg("-l");
        }
        assert!(command.arg(keys).status().unwrap().success());
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

    let tmux = Tmux::start(&h, &["--resume"]);
    tmux.wait_for("Resume a session");
    tmux.wait_for("the older question");
    let picker = tmux.wait_for("the newer question");
    let newer_row = picker.find("the newer question").unwrap();
    let older_row = picker.find("the older question").unwrap();
    assert!(newer_row < older_row, "newest first:\n{picker}");
    tmux.send(false, "Down");
    tmux.send(false, "Enter");
    tmux.wait_for("Welcome to cairn");
    tmux.send(true, "and then?");
    tmux.wait_for("and then?");
    tmux.send(false, "Enter");
    tmux.wait_for("Continuing the older one.");

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
    let tmux = Tmux::start(&h, &["--resume"]);
    tmux.wait_for("a question");
    // Ctrl+C is one unambiguous byte; a lone Esc can be read as the start of a sequence.
    tmux.send(false, "C-c");
    assert_eq!(tmux.wait_for_exit(), 0);
    assert!(!tmux.screen().contains("Welcome to cairn"));
    assert_eq!(session_files(&h), 1);
    assert_eq!(h.server.requests().len(), 1);
}

#[test]
fn resume_with_no_sessions_says_so_and_fails() {
    let h = Harness::new();
    let tmux = Tmux::start(&h, &["--resume"]);
    assert_eq!(tmux.wait_for_exit(), 1);
    let screen = tmux.screen();
    assert!(screen.contains("No sessions to resume in"), "{screen}");
    assert_eq!(session_files(&h), 0);
}

/// The exit code of process `pid` if it has exited and is waiting to be reaped: field 52 of
/// `/proc/<pid>/stat` holds the status as `waitpid` reports it.
fn zombie_exit_status(pid: &str) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may contain spaces.
    let fields: Vec<&str> = stat.rsplit_once(") ")?.1.split_whitespace().collect();
    if fields.first() != Some(&"Z") {
        return None;
    }
    let wait_status: i32 = fields.get(49)?.parse().ok()?;
    Some((wait_status >> 8) & 0xff)
}
