//! Commands started with `run_in_background`, and the tools that read them (`BashOutput`) and
//! stop them (`TaskStop`, once `KillShell`).

use std::fmt;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use regex::Regex;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::process::Child;
use tokio_util::sync::CancellationToken;

use super::capture::{CappedBuffer, Captured, cut_middle, incomplete_utf8_suffix, join_streams};
use super::guarded::{GuardSnapshot, snapshot, undo_changes};
use super::process::{ProcessGroup, pump, spawn_shell};
use crate::{Access, Concurrency, Destructiveness, Safety, Tool, ToolContext, ToolOutput};

/// One command running (or done running) in the background, and the output nobody has read
/// yet.
#[derive(Debug)]
pub(crate) struct BackgroundShell {
    id: String,
    /// What the model called it: its description, else the command.
    label: String,
    group: Option<ProcessGroup>,
    state: Mutex<ShellState>,
    /// Told when the command has ended and its output is all in.
    ended: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct ShellState {
    stdout: CappedBuffer,
    stderr: CappedBuffer,
    status: ShellStatus,
}

/// Where a background command is in its life.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) enum ShellStatus {
    /// It, or something it started, still has its output open.
    #[default]
    Running,
    /// It ended by itself.
    Finished(ExitStatus),
    /// TaskStop, or the end of the session, killed it.
    Killed,
    /// Waiting for it failed, so how it ended is unknown.
    Lost(String),
}

impl fmt::Display for ShellStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShellStatus::Running => f.write_str("running"),
            ShellStatus::Finished(status) => match status.code() {
                Some(code) => write!(f, "exited with code {code}"),
                None => write!(f, "ended by signal {}", status.signal().unwrap_or_default()),
            },
            ShellStatus::Killed => f.write_str("killed"),
            ShellStatus::Lost(error) => write!(f, "status unknown ({error})"),
        }
    }
}

impl BackgroundShell {
    /// Starts `command` in `cwd` and collects its output until it ends. Needs a tokio runtime.
    pub(super) fn start(
        id: String,
        command: &str,
        label: String,
        cwd: &Path,
        env: &[(String, String)],
        sandbox: Option<&crate::CommandSandbox>,
    ) -> io::Result<Arc<Self>> {
        let guarded = snapshot(sandbox);
        let child = spawn_shell(command, &[], cwd, env, sandbox)?;
        let shell = Arc::new(BackgroundShell {
            id,
            label,
            group: ProcessGroup::led_by(&child),
            state: Mutex::default(),
            ended: tokio::sync::Notify::new(),
        });
        tokio::spawn(collect(Arc::clone(&shell), child, guarded));
        Ok(shell)
    }

    pub(super) fn id(&self) -> &str {
        &self.id
    }

    /// Waits until the command is no longer running, or `timeout` has passed.
    async fn wait_end(&self, timeout: std::time::Duration) {
        super::shells::wait_until(&self.ended, timeout, || {
            self.state().status != ShellStatus::Running
        })
        .await;
    }

    fn state(&self) -> MutexGuard<'_, ShellState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Kills the command and everything it started, if it is still running. Returns the
    /// status it had before.
    pub(super) fn kill(&self) -> ShellStatus {
        let mut state = self.state();
        let before = state.status.clone();
        if before == ShellStatus::Running {
            if let Some(group) = self.group {
                group.kill();
            }
            state.status = ShellStatus::Killed;
        }
        drop(state);
        self.ended.notify_waiters();
        before
    }

    /// The status and the output produced since the last read; with `filter`, only the lines
    /// matching it (the rest are discarded).
    fn read_new(&self, filter: Option<&Regex>) -> (ShellStatus, String) {
        let mut state = self.state();
        let still_writing = state.status == ShellStatus::Running;
        let stdout = take_unread(&mut state.stdout, still_writing, filter.is_some());
        let stderr = take_unread(&mut state.stderr, still_writing, filter.is_some());
        let status = state.status.clone();
        drop(state);
        let (stdout_text, stderr_text) = match filter {
            Some(filter) => (
                keep_matching(&stdout.text(), filter),
                keep_matching(&stderr.text(), filter),
            ),
            None => (stdout.text(), stderr.text()),
        };
        let body = cut_middle(
            &join_streams(&stdout_text, &stderr_text),
            stdout.dropped.add(stderr.dropped),
        );
        (status, body)
    }
}

/// The unread output of one stream. While the command may still write, what could be
/// continued is left for the next read: a character cut in two, and (when filtering, which
/// works on lines) a line without its end.
fn take_unread(buffer: &mut CappedBuffer, still_writing: bool, whole_lines: bool) -> Captured {
    let mut captured = buffer.take();
    if still_writing {
        let keep = if whole_lines {
            captured
                .bytes
                .iter()
                .rposition(|&byte| byte == b'\n')
                .map_or(0, |newline| newline + 1)
        } else {
            captured.bytes.len() - incomplete_utf8_suffix(&captured.bytes)
        };
        buffer.put_back(&captured.bytes[keep..]);
        captured.bytes.truncate(keep);
    }
    captured
}

fn keep_matching(text: &str, filter: &Regex) -> String {
    text.lines()
        .filter(|line| filter.is_match(line))
        .fold(String::new(), |mut kept, line| {
            kept.push_str(line);
            kept.push('\n');
            kept
        })
}

/// Collects the command's output into the shell until both streams close and it has exited.
async fn collect(shell: Arc<BackgroundShell>, mut child: Child, guarded: Option<GuardSnapshot>) {
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let (_, _, waited) = tokio::join!(
        pump(stdout, |bytes| shell.state().stdout.push(bytes)),
        pump(stderr, |bytes| shell.state().stderr.push(bytes)),
        child.wait(),
    );
    let removed = undo_changes(guarded).await;
    let mut state = shell.state();
    if let Some(note) = removed {
        state.stderr.push(format!("\n{note}\n").as_bytes());
    }
    if state.status == ShellStatus::Running {
        state.status = match waited {
            Ok(status) => ShellStatus::Finished(status),
            Err(err) => ShellStatus::Lost(format!("waiting for it failed: {err}")),
        };
    }
    drop(state);
    shell.ended.notify_waiters();
}

/// Reads what a background command printed since the last read.
#[derive(Debug, Clone, Copy)]
pub struct BashOutputTool;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashOutputInput {
    /// The id of the background shell, as Bash returned it (e.g. "bash_1").
    bash_id: String,
    /// A regular expression: only output lines matching it are returned. Lines that do not
    /// match are discarded and cannot be read later.
    filter: Option<String>,
}

#[async_trait]
impl Tool for BashOutputTool {
    type Input = BashOutputInput;

    fn name(&self) -> &'static str {
        "BashOutput"
    }

    fn description(&self) -> String {
        "Reads the output of a command started with Bash and run_in_background: true. Returns \
         its status (running, exited with its code, or killed) and what it printed on stdout and \
         stderr since the last BashOutput call for that shell, so output is never returned \
         twice. Give filter (a regular expression) to keep only the lines that match; the \
         other lines of that output are discarded. Returns at once; call again later for more."
            .into()
    }

    fn safety(&self, _input: &BashOutputInput, _ctx: &ToolContext) -> Safety {
        // Reading only moves cairn's own read position in the shell's buffer.
        Safety::READ_ONLY
    }

    fn touched_paths(&self, _input: &BashOutputInput, _ctx: &ToolContext) -> Vec<PathBuf> {
        Vec::new()
    }

    async fn run(
        &self,
        input: BashOutputInput,
        ctx: &ToolContext,
        _cancel: &CancellationToken,
    ) -> ToolOutput {
        let filter = match input.filter.as_deref().map(Regex::new).transpose() {
            Ok(filter) => filter,
            Err(err) => {
                return ToolOutput::error(format!(
                    "Invalid input for BashOutput: field `filter`: {:?} is not a valid regular \
                     expression: {err}",
                    input.filter.unwrap_or_default()
                ));
            }
        };
        let shell = match ctx.session.shells.find(&input.bash_id) {
            Ok(shell) => shell,
            Err(message) => return ToolOutput::error(message),
        };
        let (status, body) = shell.read_new(filter.as_ref());
        let mut text = format!("Shell {} ({}): {status}\n", shell.id, shell.label);
        if body.is_empty() {
            text.push_str(match filter {
                Some(_) => "(no new output matching the filter)",
                None => "(no new output)",
            });
        } else {
            text.push_str(&body);
        }
        ToolOutput::text(text)
    }
}

/// `TaskStop` (Claude Code's name; `KillShell`, its older one, is accepted for it): stops a
/// background command, or a background sub-agent (see [`crate::ShellRegistry::add_task`]).
#[derive(Debug, Clone, Copy)]
pub struct TaskStopTool;

/// The tool's older name.
pub type KillShellTool = TaskStopTool;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskStopInput {
    /// The id of the background task to stop: a shell's as Bash returned it (e.g. "bash_1"),
    /// or a background agent's as Agent returned it.
    task_id: Option<String>,
    /// The same id under KillShell's older field name.
    shell_id: Option<String>,
}

impl TaskStopInput {
    fn id(&self) -> Result<&str, String> {
        match (self.task_id.as_deref(), self.shell_id.as_deref()) {
            (Some(id), _) | (None, Some(id)) if !id.trim().is_empty() => Ok(id.trim()),
            _ => Err(
                "Invalid input for TaskStop: field `task_id`: the id of the task to stop \
                      is required (a background shell's, e.g. \"bash_1\", or a background \
                      agent's)."
                    .to_string(),
            ),
        }
    }
}

#[async_trait]
impl Tool for TaskStopTool {
    type Input = TaskStopInput;

    fn name(&self) -> &'static str {
        "TaskStop"
    }

    fn description(&self) -> String {
        "Stops a background task by its id: a command started with Bash and \
         run_in_background: true, together with every process it started (its remaining \
         output can still be read with BashOutput), or a sub-agent started with Agent and \
         run_in_background: true."
            .into()
    }

    fn safety(&self, _input: &TaskStopInput, _ctx: &ToolContext) -> Safety {
        // It ends processes outside cairn (Writes), but only ones this session started itself,
        // and a stopped command can be started again: whatever it could destroy was weighed
        // when the command was allowed to run (Harmless). Exclusive: it changes a shell's state
        // under a concurrent BashOutput.
        Safety {
            access: Access::Writes,
            destructive: Destructiveness::Harmless,
            concurrency: Concurrency::Exclusive,
        }
    }

    fn touched_paths(&self, _input: &TaskStopInput, _ctx: &ToolContext) -> Vec<PathBuf> {
        Vec::new()
    }

    async fn validate(&self, input: &TaskStopInput, _ctx: &ToolContext) -> Result<(), String> {
        input.id().map(drop)
    }

    async fn run(
        &self,
        input: TaskStopInput,
        ctx: &ToolContext,
        _cancel: &CancellationToken,
    ) -> ToolOutput {
        let stopped = input.id().and_then(|id| ctx.session.shells.stop(id));
        match stopped {
            Ok(said) => ToolOutput::text(said),
            Err(message) => ToolOutput::error(message),
        }
    }
}

impl super::ShellRegistry {
    /// Stops the background task `id`, a shell (with every process it started) or another
    /// task such as a background agent: what `TaskStop` and an Agent SDK host's `stop_task`
    /// answer, or why there is no such task.
    pub fn stop(&self, id: &str) -> Result<String, String> {
        if let Some(stopped) = self.stop_task(id) {
            return Ok(stopped);
        }
        let shell = self.find(id)?;
        Ok(match shell.kill() {
            ShellStatus::Running => format!(
                "Killed shell {} ({}) and every process it started.",
                shell.id, shell.label
            ),
            status @ (ShellStatus::Finished(_) | ShellStatus::Killed | ShellStatus::Lost(_)) => {
                format!(
                    "Shell {} ({}) was no longer running ({status}); nothing to kill.",
                    shell.id, shell.label
                )
            }
        })
    }
}

/// `TaskOutput` (Claude Code's name): the output of a background task by its id, waiting
/// for it to end unless `block` is false: a shell's status and what it printed since the
/// last read, or a background agent's answer once it has one.
#[derive(Debug, Clone, Copy)]
pub struct TaskOutputTool;

/// How long TaskOutput waits when the call gives no `timeout`.
const DEFAULT_OUTPUT_WAIT_MS: u64 = 30_000;
/// The longest TaskOutput waits.
const MAX_OUTPUT_WAIT_MS: u64 = 600_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskOutputInput {
    /// The id of the background task: a shell's as Bash returned it (e.g. "bash_1"), or a
    /// background agent's as Agent returned it.
    task_id: String,
    /// Whether to wait for the task to end (true unless given).
    block: Option<bool>,
    /// How long to wait at most, in milliseconds (30000 unless given, at most 600000).
    timeout: Option<u64>,
}

#[async_trait]
impl Tool for TaskOutputTool {
    type Input = TaskOutputInput;

    fn name(&self) -> &'static str {
        "TaskOutput"
    }

    fn description(&self) -> String {
        "Reads the output of a background task by its id: a command started with Bash and \
         run_in_background: true (its status and what it printed since the last read), or a \
         sub-agent started with Agent and run_in_background: true (its answer once it has \
         one). Waits for the task to end first, up to timeout milliseconds, unless block is \
         false."
            .into()
    }

    fn safety(&self, _input: &TaskOutputInput, _ctx: &ToolContext) -> Safety {
        // Reading only moves cairn's own read position in the shell's buffer.
        Safety::READ_ONLY
    }

    fn touched_paths(&self, _input: &TaskOutputInput, _ctx: &ToolContext) -> Vec<PathBuf> {
        Vec::new()
    }

    async fn run(
        &self,
        input: TaskOutputInput,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        let id = input.task_id.trim();
        let wait = std::time::Duration::from_millis(
            input
                .timeout
                .unwrap_or(DEFAULT_OUTPUT_WAIT_MS)
                .min(MAX_OUTPUT_WAIT_MS),
        );
        let block = input.block.unwrap_or(true);
        if let Some(task) = ctx.session.shells.find_task(id) {
            if block {
                tokio::select! {
                    () = task.wait_end(wait) => {}
                    () = cancel.cancelled() => {}
                }
            }
            return ToolOutput::text(task.output());
        }
        let shell = match ctx.session.shells.find(id) {
            Ok(shell) => shell,
            Err(message) => return ToolOutput::error(message),
        };
        if block {
            tokio::select! {
                () = shell.wait_end(wait) => {}
                () = cancel.cancelled() => {}
            }
        }
        let (status, body) = shell.read_new(None);
        let mut text = format!("Task {} ({}): {status}\n", shell.id, shell.label);
        text.push_str(if body.is_empty() {
            "(no new output)"
        } else {
            &body
        });
        ToolOutput::text(text)
    }
}
