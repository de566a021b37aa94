//! `!command`: the user runs a shell command themselves. It runs with `sh -c` in the working
//! directory, outside the model and the permission gate, and its output becomes context for
//! the next message.
//!
//! The command leads a process group of its own, so that stopping it (Esc, the timeout, cairn
//! exiting while it runs) stops everything it started, as the Bash tool does. It is over when
//! `sh` exits, even if a job it left in the background still holds its output open. Each output
//! stream is kept in bounded memory, its start and its end, however much the command prints.

use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use rustix::io::Errno;
use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Child;
use tokio::sync::oneshot;
use tokio::time::Instant;

/// A command still running after this long is stopped.
pub const SHELL_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a stopped command has to end after SIGTERM before SIGKILL follows.
const KILL_GRACE: Duration = Duration::from_secs(1);
/// How long output is still read after `sh` exits: what is already in the pipes, while a job
/// it left in the background keeps them open.
const LINGER_AFTER_EXIT: Duration = Duration::from_millis(200);
/// How long output is still read after SIGKILL. Only a process that left the group
/// (`setsid`) can keep the output open past it.
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(1);
/// The most of each of stdout and stderr that is kept, and so sent to the model.
const MAX_OUTPUT_BYTES: usize = 30 * 1024;
/// A longer stream keeps this many bytes of its start and as many of its end.
const KEPT_BYTES_EACH_END: usize = MAX_OUTPUT_BYTES / 2;
/// The transcript shows at most this many of the output's last lines.
const NOTICE_LINES: usize = 20;
/// A line of the transcript notice is cut at this many characters.
const NOTICE_LINE_CHARS: usize = 400;

/// How a `!command` ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellOutput {
    pub command: String,
    pub stdout: StreamOutput,
    pub stderr: StreamOutput,
    pub ending: ShellEnding,
    /// A process the command started still held its output open when reading stopped: a
    /// background job that runs on, and whose later output nobody sees.
    pub output_left_open: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellEnding {
    /// The exit code, `None` when a signal ended it.
    Exited(Option<i32>),
    TimedOut,
    Cancelled,
    /// `sh` could not be started.
    FailedToStart,
    /// Waiting for `sh` to exit failed.
    WaitFailed,
}

/// One output stream as kept: all of it, or, past [`MAX_OUTPUT_BYTES`], its start and its
/// end with what was dropped between them counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamOutput {
    /// All of the stream, or its start when the middle was dropped.
    pub head: String,
    /// What was dropped after `head`; nothing unless the stream was too long.
    pub dropped: Dropped,
    /// The end of the stream, after what was dropped; empty when nothing was.
    pub tail: String,
}

/// Output left out of the middle of a stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dropped {
    pub bytes: usize,
    pub line_breaks: usize,
}

/// Runs `command` with `sh -c` in `cwd` until `sh` exits, `timeout` passes, or `cancel`
/// fires (or is dropped). In the last two cases, and when this future is dropped, the whole
/// process group is stopped: SIGTERM, then SIGKILL after [`KILL_GRACE`]. What a command that
/// exited by itself left in the background runs on.
pub async fn run_shell(
    command: String,
    cwd: &Path,
    timeout: Duration,
    mut cancel: oneshot::Receiver<()>,
) -> ShellOutput {
    let spawned = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(cwd)
        // Its output goes to the model: cairn's credentials must not be in reach of `env`.
        .env_clear()
        .envs(cairn_protocol::child_environment())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let Ok(mut child) = spawned else {
        return ShellOutput {
            command,
            stdout: StreamOutput::default(),
            stderr: StreamOutput::default(),
            ending: ShellEnding::FailedToStart,
            output_left_open: false,
        };
    };
    let mut stopper = GroupStopper::new(ProcessGroup::led_by(&child));
    let (stdout_pipe, stderr_pipe) = (child.stdout.take(), child.stderr.take());
    let mut stdout = CappedStream::default();
    let mut stderr = CappedStream::default();
    let deadline = Instant::now() + timeout;
    let mut stopped: Option<ShellEnding> = None;
    let mut status: Option<io::Result<ExitStatus>> = None;
    let mut pumps_done = false;
    let mut kill_at: Option<Instant> = None;
    // Set once the end is near: reading stops then even if the output is still open.
    let mut give_up_at: Option<Instant> = None;
    {
        let pumps = async {
            tokio::join!(
                pump(stdout_pipe, &mut stdout),
                pump(stderr_pipe, &mut stderr)
            )
        };
        tokio::pin!(pumps);
        while !(pumps_done && status.is_some()) {
            let running = stopped.is_none() && status.is_none();
            let (kill_due, give_up_due) =
                (kill_at.unwrap_or(deadline), give_up_at.unwrap_or(deadline));
            tokio::select! {
                _ = &mut cancel, if running => {
                    stopped = Some(ShellEnding::Cancelled);
                    kill_at = Some(stopper.terminate());
                }
                () = tokio::time::sleep_until(deadline), if running => {
                    stopped = Some(ShellEnding::TimedOut);
                    kill_at = Some(stopper.terminate());
                }
                _ = &mut pumps, if !pumps_done => pumps_done = true,
                waited = child.wait(), if status.is_none() => {
                    status = Some(waited);
                    if stopped.is_none() {
                        give_up_at = Some(Instant::now() + LINGER_AFTER_EXIT);
                    }
                }
                () = tokio::time::sleep_until(kill_due), if kill_at.is_some() => {
                    stopper.kill();
                    kill_at = None;
                    give_up_at = Some(Instant::now() + DRAIN_AFTER_KILL);
                }
                () = tokio::time::sleep_until(give_up_due), if give_up_at.is_some() => break,
            }
        }
    }
    let ending = match (stopped, status) {
        (Some(stopped), _) => stopped,
        (None, Some(Ok(status))) => {
            stopper.release();
            ShellEnding::Exited(status.code())
        }
        // No status without a stop cannot happen: reading only gives up after one or the other.
        (None, Some(Err(_)) | None) => ShellEnding::WaitFailed,
    };
    ShellOutput {
        command,
        stdout: stdout.finish(),
        stderr: stderr.finish(),
        ending,
        output_left_open: !pumps_done,
    }
}

impl ShellOutput {
    /// What the transcript shows: the command, the last [`NOTICE_LINES`] lines of its output,
    /// and how it ended.
    pub fn notice(&self) -> String {
        let mut lines = vec![format!("! {}", self.command)];
        let shown = self.last_lines();
        let hidden =
            (self.stdout.line_count() + self.stderr.line_count()).saturating_sub(shown.len());
        if hidden > 0 {
            lines.push(format!("… +{hidden} {}", plural(hidden, "line")));
        }
        lines.extend(shown.into_iter().map(clipped));
        let cut: Vec<String> = [("stdout", &self.stdout), ("stderr", &self.stderr)]
            .into_iter()
            .filter(|(_, stream)| stream.is_cut())
            .map(|(name, stream)| format!("{} bytes of {name}", stream.dropped.bytes))
            .collect();
        if !cut.is_empty() {
            lines.push(format!(
                "(the model gets the first and last {} KB of long output: {} left out)",
                KEPT_BYTES_EACH_END / 1024,
                cut.join(" and ")
            ));
        }
        if self.output_left_open {
            lines.push(
                "(something it started runs on in the background; its later output is not shown)"
                    .to_string(),
            );
        }
        match self.ending {
            ShellEnding::Exited(Some(0)) => {}
            ShellEnding::Exited(Some(code)) => lines.push(format!("(exit code {code})")),
            ShellEnding::Exited(None) => lines.push("(ended by a signal)".to_string()),
            ShellEnding::TimedOut => {
                lines.push(format!("(killed after {}s)", SHELL_TIMEOUT.as_secs()))
            }
            ShellEnding::Cancelled => lines.push("(interrupted)".to_string()),
            ShellEnding::FailedToStart => lines.push("(could not start sh)".to_string()),
            ShellEnding::WaitFailed => lines.push("(could not wait for sh to exit)".to_string()),
        }
        lines.join("\n")
    }

    /// The block added to the next user message. The transcript leaves a block of this shape
    /// out of the user's prompt (`transcript/user_prompt.rs`); a change here needs one there.
    pub fn context(&self) -> String {
        cairn_protocol::shell_context_text(
            &self.command,
            &self.stdout.for_model(),
            &self.stderr.for_model(),
        )
    }

    /// The last lines of output kept, stdout's then stderr's, no further back than where
    /// something was dropped.
    fn last_lines(&self) -> Vec<&str> {
        let mut shown = Vec::new();
        'streams: for stream in [&self.stderr, &self.stdout] {
            for line in stream.end_lines().into_iter().rev() {
                if shown.len() == NOTICE_LINES {
                    break 'streams;
                }
                shown.push(line);
            }
            if stream.is_cut() {
                break;
            }
        }
        shown.reverse();
        shown
    }
}

impl StreamOutput {
    /// A stream kept whole.
    pub fn whole(text: impl Into<String>) -> Self {
        StreamOutput {
            head: text.into(),
            ..StreamOutput::default()
        }
    }

    fn is_cut(&self) -> bool {
        self.dropped.bytes > 0
    }

    /// The stream as the model gets it: whole, or its two ends around a note.
    fn for_model(&self) -> String {
        if !self.is_cut() {
            return self.head.trim_end().to_string();
        }
        format!(
            "{}\n[… {} bytes ({} lines) left out of the middle …]\n{}",
            self.head.strip_suffix('\n').unwrap_or(&self.head),
            self.dropped.bytes,
            self.dropped.line_breaks,
            self.tail.trim_end()
        )
    }

    /// How many lines the whole stream had, blank ones at its end not counted.
    fn line_count(&self) -> usize {
        if !self.is_cut() {
            let text = self.head.trim_end();
            return if text.is_empty() {
                0
            } else {
                text.matches('\n').count() + 1
            };
        }
        self.head.matches('\n').count()
            + self.dropped.line_breaks
            + self.tail.trim_end().matches('\n').count()
            + 1
    }

    /// The lines at the end of what is kept, back to where something was dropped; the line
    /// cut in two there only when it is all there is.
    fn end_lines(&self) -> Vec<&str> {
        if !self.is_cut() {
            return self.head.trim_end().lines().collect();
        }
        let tail = self.tail.trim_end();
        match tail.split_once('\n') {
            Some((_, whole_lines)) => whole_lines.lines().collect(),
            None if tail.is_empty() => Vec::new(),
            None => vec![tail],
        }
    }
}

/// `line`, cut at [`NOTICE_LINE_CHARS`] characters.
fn clipped(line: &str) -> String {
    match line.char_indices().nth(NOTICE_LINE_CHARS) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        noun.to_string()
    } else {
        format!("{noun}s")
    }
}

/// One output stream while it is read, in bounded memory: its first and last
/// [`KEPT_BYTES_EACH_END`] bytes, and how much there was in all.
#[derive(Debug, Default)]
struct CappedStream {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    bytes: usize,
    line_breaks: usize,
}

impl CappedStream {
    fn push(&mut self, bytes: &[u8]) {
        self.bytes += bytes.len();
        self.line_breaks += line_breaks(bytes);
        let room = KEPT_BYTES_EACH_END - self.head.len();
        let (to_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        self.tail
            .extend(&rest[rest.len().saturating_sub(KEPT_BYTES_EACH_END)..]);
        let excess = self.tail.len().saturating_sub(KEPT_BYTES_EACH_END);
        self.tail.drain(..excess);
    }

    fn finish(self) -> StreamOutput {
        let CappedStream {
            mut head,
            tail,
            bytes,
            line_breaks: all_line_breaks,
        } = self;
        let mut tail = Vec::from(tail);
        if head.len() + tail.len() == bytes {
            head.append(&mut tail);
            return StreamOutput::whole(String::from_utf8_lossy(&head));
        }
        // A character cut in two on either side of the gap is part of what was dropped.
        head.truncate(head.len() - incomplete_char_at_end(&head));
        let split = tail
            .iter()
            .take(3)
            .take_while(|&&byte| is_continuation(byte))
            .count();
        tail.drain(..split);
        StreamOutput {
            dropped: Dropped {
                bytes: bytes - head.len() - tail.len(),
                line_breaks: all_line_breaks - line_breaks(&head) - line_breaks(&tail),
            },
            head: String::from_utf8_lossy(&head).into_owned(),
            tail: String::from_utf8_lossy(&tail).into_owned(),
        }
    }
}

fn line_breaks(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&byte| byte == b'\n').count()
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// How many bytes at the end of `bytes` start a character whose other bytes are missing.
fn incomplete_char_at_end(bytes: &[u8]) -> usize {
    // Only the last three bytes can hold such a start; the standard decoder says whether
    // what follows the first character start among them stops short.
    let tail = &bytes[bytes.len().saturating_sub(3)..];
    let Some(lead) = tail.iter().position(|&byte| !is_continuation(byte)) else {
        return 0;
    };
    match std::str::from_utf8(&tail[lead..]) {
        Err(err) if err.error_len().is_none() => tail.len() - lead - err.valid_up_to(),
        _ => 0,
    }
}

/// Reads `pipe` to its end into `stream`. A read error ends it as the end would: there is
/// nothing better to do with a broken pipe.
async fn pump(pipe: Option<impl AsyncRead + Unpin>, stream: &mut CappedStream) {
    let Some(mut pipe) = pipe else { return };
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(read) => stream.push(&chunk[..read]),
        }
    }
}

/// The process group a command leads: `sh` and everything it starts, bar what leaves the
/// group on purpose (`setsid`).
#[derive(Debug, Clone, Copy)]
struct ProcessGroup(Pid);

impl ProcessGroup {
    fn led_by(child: &Child) -> Option<ProcessGroup> {
        Pid::from_raw(i32::try_from(child.id()?).ok()?).map(ProcessGroup)
    }

    fn signal(self, signal: Signal) {
        // ESRCH means every process of the group has exited already: nothing to do.
        let _ = kill_process_group(self.0, signal);
    }

    fn is_gone(self) -> bool {
        test_kill_process_group(self.0) == Err(Errno::SRCH)
    }
}

/// Stops a command's process group unless released: SIGTERM (and SIGCONT, so that a stopped
/// process gets it), then SIGKILL once [`KILL_GRACE`] has passed. Dropped while the group
/// runs: SIGKILL at once if SIGTERM was already sent (cairn exiting after SIGTERM, SIGHUP or
/// `/exit`), else SIGTERM at once and SIGKILL from a thread of its own, which ends with cairn.
#[derive(Debug)]
struct GroupStopper {
    group: Option<ProcessGroup>,
    kill_at: Option<Instant>,
}

impl GroupStopper {
    fn new(group: Option<ProcessGroup>) -> Self {
        GroupStopper {
            group,
            kill_at: None,
        }
    }

    /// Sends SIGTERM (once); returns when SIGKILL is due.
    fn terminate(&mut self) -> Instant {
        let group = self.group;
        *self.kill_at.get_or_insert_with(|| {
            if let Some(group) = group {
                group.signal(Signal::TERM);
                group.signal(Signal::CONT);
            }
            Instant::now() + KILL_GRACE
        })
    }

    fn kill(&mut self) {
        if let Some(group) = self.group.take() {
            group.signal(Signal::KILL);
        }
    }

    /// Leaves the group be: what a command that exited by itself left in the background is
    /// meant to run on.
    fn release(&mut self) {
        self.group = None;
    }
}

impl Drop for GroupStopper {
    fn drop(&mut self) {
        let Some(group) = self.group else { return };
        if group.is_gone() {
            return;
        }
        // SIGTERM went out earlier (cairn leaving stops the command first, then drops its
        // runner on the way out): the grace is over, since a thread left to send SIGKILL
        // later would end with cairn.
        if self.kill_at.is_some() {
            group.signal(Signal::KILL);
            return;
        }
        let wait = self.terminate().saturating_duration_since(Instant::now());
        let killer = std::thread::Builder::new()
            .name("cairn-shell-kill".to_string())
            .spawn(move || {
                std::thread::sleep(wait);
                group.signal(Signal::KILL);
            });
        if killer.is_err() {
            group.signal(Signal::KILL);
        }
    }
}

#[cfg(test)]
#[path = "shell_escape_tests.rs"]
mod tests;
