//! The `statusLine` setting: a command whose first line of output replaces cairn's own status
//! line.
//!
//! The command runs with `sh -c` in the session's directory, given the session as JSON on its
//! standard input (Claude Code's fields: `session_id`, `model` with `id` and `display_name`,
//! `workspace` with `current_dir` and `project_dir`, `cwd`, `version`, `cost` with
//! `total_cost_usd`). It runs in the background, never holding up a key: once at the start,
//! then again when what it is given changes, at most every [`MIN_INTERVAL`]. Until its first
//! line arrives, and whenever it fails or prints nothing, cairn's own line shows.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;

/// The shortest time between two runs of the command.
pub const MIN_INTERVAL: Duration = Duration::from_millis(300);

/// The longest one run may take before it is stopped (its line then stays as it was).
const RUN_TIMEOUT: Duration = Duration::from_secs(5);

/// The most of the command's output read: one status line needs far less.
const MAX_OUTPUT_BYTES: u64 = 16 * 1024;

/// What the command is told about the session that does not change while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFacts {
    /// The session's id (`session_id`).
    pub session_id: String,
    /// cairn's version (`version`).
    pub version: String,
    /// Where the command runs, given as `cwd` and `workspace.current_dir`.
    pub cwd: PathBuf,
    /// The project's root (the directory cairn started in).
    pub project_dir: PathBuf,
}

/// What changes: the model and the cost so far.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionState {
    /// The model's id (`model.id`); its display name is derived from it.
    pub model: String,
    /// The session's cost so far in US dollars (`cost.total_cost_usd`).
    pub cost_usd: f64,
}

/// The session JSON the command reads on its standard input.
///
/// ```
/// use std::path::PathBuf;
/// use cairn_tui::status_command::{SessionFacts, SessionState, session_json};
///
/// let facts = SessionFacts {
///     session_id: "s-1".into(),
///     version: "0.1.0".into(),
///     cwd: PathBuf::from("/work/app"),
///     project_dir: PathBuf::from("/work/app"),
/// };
/// let state = SessionState { model: "claude-opus-4-5".into(), cost_usd: 0.5 };
/// let json = session_json(&facts, &state);
/// assert_eq!(json["model"]["display_name"], "Opus 4.5");
/// assert_eq!(json["workspace"]["current_dir"], "/work/app");
/// assert_eq!(json["cost"]["total_cost_usd"], 0.5);
/// ```
pub fn session_json(facts: &SessionFacts, state: &SessionState) -> Value {
    let cwd = facts.cwd.display().to_string();
    json!({
        "hook_event_name": "Status",
        "session_id": facts.session_id,
        "cwd": cwd,
        "model": {
            "id": state.model,
            "display_name": cairn_llm::models::display_name(&state.model),
        },
        "workspace": {
            "current_dir": cwd,
            "project_dir": facts.project_dir.display().to_string(),
        },
        "version": facts.version,
        "cost": {"total_cost_usd": state.cost_usd},
    })
}

/// The running `statusLine` command: give it the session's state as it changes
/// ([`update`](Self::update)) and read its latest line ([`line`](Self::line)). Clones share
/// one command; it stops when the last clone is dropped.
#[derive(Clone)]
pub struct StatusCommand {
    command: Arc<str>,
    facts: Arc<SessionFacts>,
    input: Arc<watch::Sender<Option<Value>>>,
    output: watch::Receiver<Option<String>>,
}

impl StatusCommand {
    /// Starts the background task that runs `command` for the session `facts` describes.
    /// It needs a tokio runtime; it first runs when the first state arrives.
    pub fn start(command: &str, facts: SessionFacts) -> StatusCommand {
        let (input, mut inputs) = watch::channel(None::<Value>);
        let (lines, output) = watch::channel(None);
        let command: Arc<str> = Arc::from(command);
        let cwd = facts.cwd.clone();
        let task_command = Arc::clone(&command);
        tokio::spawn(async move {
            // Ends when every StatusCommand is gone (the sender with them).
            while inputs.changed().await.is_ok() {
                let Some(json) = inputs.borrow_and_update().clone() else {
                    continue;
                };
                let started = tokio::time::Instant::now();
                if let Some(line) = run_once(&task_command, &cwd, &json).await {
                    lines.send_if_modified(|shown| {
                        let changed = shown.as_deref() != Some(line.as_str());
                        *shown = Some(line);
                        changed
                    });
                }
                tokio::time::sleep_until(started + MIN_INTERVAL).await;
            }
        });
        StatusCommand {
            command,
            facts: Arc::new(facts),
            input: Arc::new(input),
            output,
        }
    }

    /// Tells the command the session's state; it runs again (no sooner than
    /// [`MIN_INTERVAL`] after its last start) only when the JSON it would read changed.
    pub fn update(&self, state: &SessionState) {
        let json = session_json(&self.facts, state);
        self.input.send_if_modified(|current| {
            if current.as_ref() == Some(&json) {
                return false;
            }
            *current = Some(json);
            true
        });
    }

    /// The command's latest line, once it has printed one.
    pub fn line(&self) -> Option<String> {
        self.output.borrow().clone()
    }

    /// A handle that wakes the app's loop when the line changes.
    pub fn updates(&self) -> StatusUpdates {
        StatusUpdates(Some(self.output.clone()))
    }
}

impl std::fmt::Debug for StatusCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatusCommand")
            .field("command", &self.command)
            .finish_non_exhaustive()
    }
}

impl PartialEq for StatusCommand {
    fn eq(&self, other: &StatusCommand) -> bool {
        Arc::ptr_eq(&self.input, &other.input)
    }
}

/// Resolves when the status command printed a new line; never, when there is no command.
#[derive(Debug)]
pub struct StatusUpdates(Option<watch::Receiver<Option<String>>>);

impl StatusUpdates {
    /// No command: never wakes.
    pub fn none() -> StatusUpdates {
        StatusUpdates(None)
    }

    /// Waits for the next new line.
    pub async fn changed(&mut self) {
        match &mut self.0 {
            Some(receiver) => {
                if receiver.changed().await.is_err() {
                    // The command stopped: nothing more will come.
                    self.0 = None;
                    std::future::pending::<()>().await;
                }
            }
            None => std::future::pending::<()>().await,
        }
    }
}

/// Runs the command once with `json` on its input; its first line of output, made safe for
/// the terminal, or `None` when it failed, timed out or printed nothing.
async fn run_once(command: &str, cwd: &std::path::Path, json: &Value) -> Option<String> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(cairn_protocol::child_environment())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let stdout = child.stdout.take()?;
    let input = json.to_string();
    let run = async {
        // A command that does not read its input must not block on a full pipe.
        let write = async {
            let _ = stdin.write_all(input.as_bytes()).await;
            drop(stdin);
        };
        let mut out = Vec::new();
        let mut limited = stdout.take(MAX_OUTPUT_BYTES);
        let read = limited.read_to_end(&mut out);
        let ((), _) = tokio::join!(write, read);
        let status = child.wait().await.ok()?;
        status.success().then_some(out)
    };
    let out = tokio::time::timeout(RUN_TIMEOUT, run).await.ok()??;
    let text = String::from_utf8_lossy(&out);
    let first = text.lines().next().unwrap_or("");
    let line = crate::sanitize(first).trim_end().to_owned();
    (!line.is_empty()).then_some(line)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn facts(dir: &std::path::Path) -> SessionFacts {
        SessionFacts {
            session_id: "s-1".into(),
            version: "9.9.9".into(),
            cwd: dir.to_path_buf(),
            project_dir: dir.to_path_buf(),
        }
    }

    /// The command reads the session JSON and its first line shows; a new state runs it
    /// again, and the same state does not.
    #[tokio::test]
    async fn the_command_reads_the_session_and_its_first_line_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let command = StatusCommand::start(
            "cat > last-input.json; echo run >> runs; \
             printf '\\033[1m%s\\033[0m | %s\\nsecond line\\n' \"$(grep -o 'Opus 4.5\\|Sonnet 4.5' last-input.json)\" \"$(wc -l < runs | tr -d ' ')\"",
            facts(dir.path()),
        );
        let mut updates = command.updates();
        let state = SessionState {
            model: "claude-sonnet-4-5".into(),
            cost_usd: 0.0,
        };
        command.update(&state);
        updates.changed().await;
        assert_eq!(command.line(), Some("Sonnet 4.5 | 1".to_string()));
        let input: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("last-input.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(input, session_json(&facts(dir.path()), &state));

        command.update(&state);
        command.update(&SessionState {
            model: "claude-opus-4-5".into(),
            cost_usd: 0.25,
        });
        updates.changed().await;
        assert_eq!(command.line(), Some("Opus 4.5 | 2".to_string()));
    }
}
