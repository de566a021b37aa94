//! Starting a shell command in a process group of its own, and ending that whole group.
//!
//! Each command leads a new process group, so everything it starts (pipelines, `&` jobs,
//! a test runner's workers) can be killed with one signal, and a Ctrl-C meant for cairn's
//! terminal does not reach it.

use crate::CommandSandbox;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::OnceLock;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};

/// The shell that runs commands: bash where there is one, else the POSIX `sh`.
pub(super) fn shell_program() -> &'static Path {
    static SHELL: OnceLock<PathBuf> = OnceLock::new();
    SHELL.get_or_init(|| {
        std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .map(|dir| dir.join("bash"))
            .find(|candidate| candidate.is_file())
            .unwrap_or_else(|| PathBuf::from("/bin/sh"))
    })
}

/// Starts `shell -c script args…` in `cwd`, leading a new process group, with no input and
/// both output streams piped, inside `sandbox` when one is given. `args` become `$1`, `$2`,
/// … of the script. The command gets cairn's environment without its credentials, with `env`
/// (from the settings' `env`) added.
pub(super) fn spawn_shell(
    script: &str,
    args: &[&std::ffi::OsStr],
    cwd: &Path,
    env: &[(String, String)],
    sandbox: Option<&CommandSandbox>,
) -> io::Result<Child> {
    let mut command = match sandbox {
        Some(sandbox) => {
            let mut command = Command::new(&sandbox.program);
            command.args(&sandbox.prefix).arg(shell_program());
            command
        }
        None => Command::new(shell_program()),
    };
    command
        .arg("-c")
        .arg(script)
        // `$0`, which also prefixes the shell's own error messages.
        .arg("bash")
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(cairn_protocol::child_environment())
        .envs(env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        // Nothing may wait for a person: no pager, no terminal features, no password prompt.
        .env("TERM", "dumb")
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        // Lets scripts and tools know they run under cairn.
        .env("CAIRN", "1");
    let child = command.spawn()?;
    if let Some(leader) = child.id() {
        // As the shell runs, sandboxed or not (the wrapper `exec`s it with these arguments).
        let argv = [
            shell_program().as_os_str(),
            "-c".as_ref(),
            script.as_ref(),
            "bash".as_ref(),
        ]
        .into_iter()
        .chain(args.iter().copied())
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
        super::reaper::record_group(leader, argv);
    }
    Ok(child)
}

/// Makes cairn's own process unreadable to the commands it runs, which run as the same user:
/// no reading `/proc/<cairn's pid>/environ` (where the API key is), `mem` or `fd`, and no
/// attaching a debugger. Call it once, at start; it lasts until cairn exits, and the commands
/// themselves are not affected (an `exec` makes a process readable again).
///
/// Linux only. Elsewhere it does nothing, and a process of the same user may still read
/// cairn's environment (`ps eww` on macOS).
pub fn hide_own_process_from_commands() {
    // Failing leaves cairn as readable as any process: nothing better to do than go on.
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
}

/// The process group a spawned command leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ProcessGroup {
    leader: Pid,
}

impl ProcessGroup {
    /// The group `child` leads; `None` once it has been reaped.
    pub(super) fn led_by(child: &Child) -> Option<ProcessGroup> {
        let id = i32::try_from(child.id()?).ok()?;
        Pid::from_raw(id).map(|leader| ProcessGroup { leader })
    }

    /// Sends SIGKILL to every process in the group. SIGKILL rather than a polite SIGTERM:
    /// these are commands that ran out of time or that someone asked to stop, and the
    /// caller needs them gone now, including children that ignore SIGTERM.
    pub(super) fn kill(self) {
        // ESRCH means every process of the group has already exited: nothing to do.
        let _ = kill_process_group(self.leader, Signal::KILL);
    }
}

/// Kills a process group when dropped unless disarmed, so a command whose caller stops
/// waiting for it (its future dropped) does not run on unobserved.
#[derive(Debug)]
pub(super) struct KillOnDrop(Option<ProcessGroup>);

impl KillOnDrop {
    pub(super) fn new(group: Option<ProcessGroup>) -> Self {
        KillOnDrop(group)
    }

    pub(super) fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(group) = self.0.take() {
            group.kill();
        }
    }
}

/// Reads `reader` to its end, handing each chunk to `sink`. A read error ends the stream
/// like its end would: there is nothing better to do with a broken pipe.
pub(super) async fn pump<R: AsyncRead + Unpin>(reader: Option<R>, mut sink: impl FnMut(&[u8])) {
    let Some(mut reader) = reader else { return };
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(read) => sink(&chunk[..read]),
        }
    }
}

/// How a finished process ended, in words, or `None` for success.
pub(super) fn describe_failure(status: ExitStatus) -> Option<String> {
    if let Some(code) = status.code() {
        return (code != 0).then(|| format!("Exit code {code}"));
    }
    let signal = status.signal().unwrap_or_default();
    Some(format!("Killed by signal {signal}{}", signal_name(signal)))
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        1 => " (SIGHUP)",
        2 => " (SIGINT)",
        6 => " (SIGABRT)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        13 => " (SIGPIPE)",
        15 => " (SIGTERM)",
        _ => "",
    }
}
