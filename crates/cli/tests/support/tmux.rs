//! cairn's interactive UI in a real terminal: tmux, with a server of its own per test.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Harness, WAIT};

/// How often the screen is looked at while waiting for something to appear.
const POLL: Duration = Duration::from_millis(50);

/// cairn running in a tmux session of its own (its own tmux server, its socket in the test's
/// temp HOME); the server is killed when this is dropped, panics included.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `cairn` and waits for its input box.
    pub fn start(h: &Harness) -> Tmux {
        let tmux = Tmux::launch(h, &[]);
        tmux.wait_for("> ");
        tmux
    }

    /// Starts `cairn ARGS…` in a 100×30 window without waiting for anything.
    pub fn launch(h: &Harness, args: &[&str]) -> Tmux {
        Tmux::launch_with_env(h, &[], args)
    }

    /// As [`Tmux::launch`], with `NAME=value` pairs added to cairn's environment.
    pub fn launch_with_env(h: &Harness, extra_env: &[(&str, &str)], args: &[&str]) -> Tmux {
        Tmux::new_session(h, &cairn_argv(h, extra_env, args))
    }

    /// Starts a shell script around cairn: `script` gets the command line that starts
    /// cairn (as [`Tmux::launch`] would) and returns what `sh` runs.
    pub fn launch_in_shell(h: &Harness, script: impl FnOnce(&str) -> String) -> Tmux {
        let cairn: Vec<String> = cairn_argv(h, &[], &[])
            .iter()
            .map(|word| format!("'{}'", word.replace('\'', "'\\''")))
            .collect();
        let script = script(&cairn.join(" "));
        Tmux::new_session(h, &["sh".to_string(), "-c".to_string(), script])
    }

    /// A 100×30 tmux session running `argv`, on a server of its own.
    fn new_session(h: &Harness, argv: &[String]) -> Tmux {
        // A socket of its own per launch: a test that starts cairn twice must not reach the
        // first tmux server while it is still shutting down ("server exited unexpectedly").
        static LAUNCHES: AtomicUsize = AtomicUsize::new(0);
        let launch = LAUNCHES.fetch_add(1, Ordering::Relaxed);
        let socket = h
            .home
            .path()
            .join(format!("tmux-{launch}.sock"))
            .display()
            .to_string();
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
            .args(argv)
            .args([";", "set-option", "-t", "cairn", "remain-on-exit", "on"])
            .status()
            .expect("tmux must be installed to run the interactive tests");
        assert!(status.success(), "tmux new-session failed");
        tmux
    }

    /// Pastes `text` into the pane as a terminal paste (bracketed, as a user's paste is).
    pub fn paste(&self, text: &str) {
        assert!(
            self.command()
                .args(["set-buffer", text])
                .status()
                .unwrap()
                .success()
        );
        assert!(
            self.command()
                .args(["paste-buffer", "-p", "-t", "cairn"])
                .status()
                .unwrap()
                .success()
        );
    }

    /// Closes the terminal: the tmux server and its pane go, as when a window is closed.
    pub fn kill_server(&self) {
        let _ = self.command().arg("kill-server").status();
    }

    pub fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command.env_remove("TMUX").args(["-S", &self.socket]);
        command
    }

    /// The pane's text, with 200 lines of its history.
    pub fn screen(&self) -> String {
        let output = self
            .command()
            .args(["capture-pane", "-p", "-J", "-S", "-200", "-t", "cairn"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The rows on screen now, without the history above them.
    pub fn visible(&self) -> String {
        let output = self
            .command()
            .args(["capture-pane", "-p", "-J", "-t", "cairn"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// A tmux format string (`#{pane_dead}`) evaluated for the pane.
    pub fn pane_format(&self, format: &str) -> String {
        let output = self
            .command()
            .args(["display-message", "-p", "-t", "cairn", format])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    }

    /// Waits until the pane shows `text`; fails with the screen after the deadline.
    pub fn wait_for(&self, text: &str) -> String {
        self.wait_until(text, |screen| screen.contains(text))
    }

    /// Waits until the pane's history shows `text` at least `count` times.
    pub fn wait_for_count(&self, text: &str, count: usize) -> String {
        self.wait_until(&format!("{count} × {text}"), |screen| {
            screen.matches(text).count() >= count
        })
    }

    pub fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
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
            std::thread::sleep(POLL);
        }
    }

    /// Types `text` literally.
    pub fn type_text(&self, text: &str) {
        self.send(true, text);
    }

    /// Presses keys by tmux name (`Enter`, `Escape`, `C-d`).
    pub fn press(&self, key: &str) {
        self.send(false, key);
    }

    /// Presses keys by tmux name, or types text with `literal`.
    pub fn send(&self, literal: bool, keys: &str) {
        let mut command = self.command();
        command.args(["send-keys", "-t", "cairn"]);
        if literal {
            command.arg("-l");
        }
        assert!(command.arg(keys).status().unwrap().success());
    }

    /// Types a line, waits for it to show, and sends it.
    pub fn send_line(&self, text: &str) {
        self.type_text(text);
        self.wait_for(text);
        self.press("Enter");
    }

    /// Waits for cairn to exit and returns its exit status.
    pub fn wait_for_exit(&self) -> i32 {
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
            std::thread::sleep(POLL);
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self
            .command()
            .arg("kill-server")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// `env -u … NAME=value … cairn ARGS…`: cairn against the test's server and home, without
/// the caller's credentials or settings from the environment.
fn cairn_argv(h: &Harness, extra_env: &[(&str, &str)], args: &[&str]) -> Vec<String> {
    let home = h.home.path();
    let mut env = vec!["env".to_string()];
    for unset in [
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_MODEL",
        "CAIRN_MAX_RETRIES",
        "DISABLE_PROMPT_CACHING",
        "NO_COLOR",
    ] {
        env.extend(["-u".to_string(), unset.to_string()]);
    }
    env.extend([
        "TERM=xterm-256color".to_string(),
        "ANTHROPIC_API_KEY=sk-test-key".to_string(),
        format!("ANTHROPIC_BASE_URL={}", h.server.url()),
        format!("HOME={}", home.display()),
        format!("CAIRN_HOME={}", home.join(".cairn").display()),
    ]);
    env.extend(
        extra_env
            .iter()
            .map(|(name, value)| format!("{name}={value}")),
    );
    env.push(env!("CARGO_BIN_EXE_cairn").to_string());
    env.extend(args.iter().map(|arg| (*arg).to_string()));
    env
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

/// The text of the last user message of a request body, all its text blocks joined.
pub fn last_user_text(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
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
