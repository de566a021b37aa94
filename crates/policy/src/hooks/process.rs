//! Running one hook command: `sh -c` in a process group of its own, input on stdin, output
//! captured, the whole group killed when it runs out of time or is cancelled.

use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

/// The shell Claude Code's hook commands are written for.
const SHELL: &str = "/bin/sh";

/// How much of each output stream is kept; the rest is read and dropped, so that a chatty
/// hook neither fills memory nor stalls on a full pipe.
pub(super) const CAPTURE_LIMIT: usize = 1024 * 1024;

/// How a hook's process ended.
#[derive(Debug)]
pub(super) enum Finished {
    /// It exited (or was killed by a signal) on its own; its output is complete.
    Exited {
        status: ExitStatus,
        stdout: Captured,
        stderr: Captured,
    },
    /// It ran past its timeout and was killed with everything it started.
    TimedOut(Duration),
    /// The caller cancelled the run; it was killed with everything it started.
    Cancelled,
    /// It could not be started, or not waited for.
    Failed(io::Error),
}

/// Output of one stream, up to [`CAPTURE_LIMIT`].
#[derive(Debug, Default)]
pub(super) struct Captured {
    pub(super) bytes: Vec<u8>,
    pub(super) truncated: bool,
}

impl Captured {
    pub(super) fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// Runs `command` with `sh -c` in `dir`, `CLAUDE_PROJECT_DIR` set to `dir`, `input` written
/// to its stdin and stdin then closed. Waits for it to exit and for its output to close, at
/// most `timeout`.
pub(super) async fn run_command(
    command: &str,
    dir: &Path,
    input: &[u8],
    timeout: Duration,
    cancel: &CancellationToken,
) -> Finished {
    if cancel.is_cancelled() {
        return Finished::Cancelled;
    }
    let mut child = match spawn(command, dir) {
        Ok(child) => child,
        // Otherwise "No such file or directory" would suggest the command is missing.
        Err(error) if !dir.is_dir() => {
            let message = format!("its directory {} does not exist ({error})", dir.display());
            return Finished::Failed(io::Error::new(error.kind(), message));
        }
        Err(error) => return Finished::Failed(error),
    };
    let mut guard = KillOnDrop(ProcessGroup::led_by(&child));
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let write_input = async move {
        if let Some(mut stdin) = stdin {
            // A hook that does not read its input may exit before taking it all: a broken
            // pipe here is its business, not an error.
            let _ = stdin.write_all(input).await;
            let _ = stdin.shutdown().await;
        }
    };
    let ended = tokio::select! {
        biased;
        (_, stdout, stderr, status) = async {
            tokio::join!(write_input, capture(stdout), capture(stderr), child.wait())
        } => Some(status.map(|status| Finished::Exited { status, stdout, stderr })),
        () = tokio::time::sleep(timeout) => Some(Ok(Finished::TimedOut(timeout))),
        () = cancel.cancelled() => None,
    };
    match ended {
        Some(Ok(finished @ Finished::Exited { .. })) => {
            // Everything it started has closed its output too; leave any daemon it started.
            guard.disarm();
            finished
        }
        Some(Ok(finished)) => {
            guard.kill_now();
            let _ = child.wait().await;
            finished
        }
        Some(Err(error)) => {
            guard.kill_now();
            Finished::Failed(error)
        }
        None => {
            guard.kill_now();
            let _ = child.wait().await;
            Finished::Cancelled
        }
    }
}

fn spawn(command: &str, dir: &Path) -> io::Result<Child> {
    Command::new(SHELL)
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        // cairn's environment, as Claude Code gives hooks its own, but without its credentials.
        .env_clear()
        .envs(cairn_protocol::child_environment())
        .env("CLAUDE_PROJECT_DIR", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so a timeout ends what it started too, and a Ctrl-C meant for
        // cairn's terminal does not reach it.
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
}

/// Reads `reader` to its end, keeping the first [`CAPTURE_LIMIT`] bytes. A read error ends
/// the stream like its end would: there is nothing better to do with a broken pipe.
async fn capture<R: AsyncRead + Unpin>(reader: Option<R>) -> Captured {
    let mut captured = Captured::default();
    let Some(mut reader) = reader else {
        return captured;
    };
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => return captured,
            Ok(read) => {
                let room = CAPTURE_LIMIT.saturating_sub(captured.bytes.len());
                captured.bytes.extend_from_slice(&chunk[..read.min(room)]);
                captured.truncated |= read > room;
            }
        }
    }
}

/// The process group a hook's shell leads.
#[derive(Debug, Clone, Copy)]
struct ProcessGroup {
    leader: Pid,
}

impl ProcessGroup {
    fn led_by(child: &Child) -> Option<ProcessGroup> {
        let id = i32::try_from(child.id()?).ok()?;
        Pid::from_raw(id).map(|leader| ProcessGroup { leader })
    }

    /// SIGKILL to every process of the group: the hook ran out of time or was cancelled,
    /// and whatever it started must go now, including what ignores SIGTERM.
    fn kill(self) {
        // ESRCH means the whole group has already exited: nothing to do.
        let _ = kill_process_group(self.leader, Signal::KILL);
    }
}

/// Kills a process group when dropped unless disarmed, so that a hook whose caller stops
/// waiting (its future dropped) does not run on unobserved.
#[derive(Debug)]
struct KillOnDrop(Option<ProcessGroup>);

impl KillOnDrop {
    fn disarm(&mut self) {
        self.0 = None;
    }

    fn kill_now(&mut self) {
        if let Some(group) = self.0.take() {
            group.kill();
        }
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.kill_now();
    }
}
