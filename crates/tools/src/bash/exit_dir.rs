//! Where a command left its shell, read from the kernel rather than from anything the command
//! could redefine.
//!
//! The shell's EXIT trap is a bare redirection, `< 'fifo_a' > 'fifo_b'`. With no command word
//! it runs no function, alias or builtin, so whatever the command defined (`pwd`, `builtin`,
//! `command`, `cd`) cannot change what it does, and the FIFO paths are written into the trap
//! text, not read from variables the command could reassign. Opening `fifo_a` for reading
//! blocks the shell until cairn opens it for writing; opening `fifo_b` for writing then blocks
//! it until cairn opens that for reading. In between, the shell is parked inside its own trap
//! (bash performs the redirections in a child it waits for; dash in the shell itself) and
//! cairn reads `/proc/<pid>/cwd` of the shell. A command that removes or replaces the trap,
//! `exec`s another program or is killed never gets there: where it left the shell is unknown.
//!
//! What this does not tell apart: a process the command starts can open the FIFOs itself
//! before the shell ends. cairn then reads the shell's directory at that moment: still a
//! directory the shell really was in, and the one the next command really starts in.
//!
//! Without `/proc` (macOS, or a Linux without it mounted) the trap runs `pwd -P` into a file
//! instead. That does not hold against a command that defines a `pwd` function or replaces
//! the trap: the directory it reports is taken as given, and is then only as trustworthy as
//! the command.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use tempfile::TempDir;
use tokio::sync::oneshot;

/// How one command's final directory will be learnt.
#[derive(Debug)]
pub(super) enum ExitDir {
    /// The kernel's record of the shell's directory, read while the shell is parked in its trap.
    Kernel(Fifos),
    /// What `pwd -P` printed into a file (no `/proc`).
    Printed(tempfile::NamedTempFile),
    /// Nothing could be set up; the directory stays where it was.
    Untracked,
}

/// The two FIFOs of the trap's handshake, in a private temporary directory. cairn opens them
/// through handles taken when they were made (`O_PATH`), so a command that deletes or renames
/// them cannot leave cairn waiting on a name nobody will ever open.
#[derive(Debug)]
pub(super) struct Fifos {
    dir: TempDir,
    a: OwnedFd,
    b: OwnedFd,
}

/// One of the two FIFOs: the shell opens `A` to read, then `B` to write.
#[derive(Debug, Clone, Copy)]
enum Fifo {
    A,
    B,
}

impl Fifos {
    /// Where the shell's trap finds `fifo`.
    fn name(&self, fifo: Fifo) -> PathBuf {
        self.dir.path().join(match fifo {
            Fifo::A => "a",
            Fifo::B => "b",
        })
    }

    /// Where cairn opens `fifo`: through its handle, whatever became of the name.
    fn handle(&self, fifo: Fifo) -> PathBuf {
        let handle = match fifo {
            Fifo::A => &self.a,
            Fifo::B => &self.b,
        };
        PathBuf::from(format!("/proc/self/fd/{}", handle.as_raw_fd()))
    }
}

impl ExitDir {
    /// Sets up what the trap needs: FIFOs where `/proc` can be read, else a file.
    pub(super) fn prepare() -> ExitDir {
        if proc_is_readable()
            && let Ok(fifos) = make_fifos()
        {
            return ExitDir::Kernel(fifos);
        }
        match tempfile::Builder::new().prefix("cairn-cwd-").tempfile() {
            Ok(file) => ExitDir::Printed(file),
            Err(_) => ExitDir::Untracked,
        }
    }

    /// The EXIT trap's text, for `trap -- "$text" EXIT`.
    pub(super) fn trap(&self) -> OsString {
        let mut trap = Vec::new();
        match self {
            ExitDir::Kernel(fifos) => {
                trap.extend_from_slice(b"< ");
                push_quoted(&mut trap, &fifos.name(Fifo::A));
                trap.extend_from_slice(b" > ");
                push_quoted(&mut trap, &fifos.name(Fifo::B));
            }
            ExitDir::Printed(file) => {
                trap.extend_from_slice(b"pwd -P >| ");
                push_quoted(&mut trap, file.path());
                trap.extend_from_slice(b" 2>/dev/null");
            }
            ExitDir::Untracked => trap.push(b':'),
        }
        OsString::from_vec(trap)
    }

    /// Starts waiting for the shell `pid` to reach its trap. Call it at once after spawning,
    /// before anything can reap the shell.
    pub(super) fn watch(self, pid: Option<u32>) -> ExitDirWatch {
        match (self, pid) {
            (ExitDir::Kernel(fifos), Some(pid)) => {
                ExitDirWatch::Kernel(Handshake::start(fifos, pid))
            }
            (ExitDir::Printed(file), _) => ExitDirWatch::Printed(file),
            (ExitDir::Kernel(_) | ExitDir::Untracked, _) => ExitDirWatch::Untracked,
        }
    }
}

/// The wait for one shell's final directory; see [`ExitDirWatch::finish`].
#[derive(Debug)]
pub(super) enum ExitDirWatch {
    Kernel(Handshake),
    Printed(tempfile::NamedTempFile),
    Untracked,
}

impl ExitDirWatch {
    /// The directory the shell was in when it reached its EXIT trap, or `None` if it never
    /// did (or that directory is gone). Call it once the shell has ended.
    pub(super) async fn finish(self) -> Option<PathBuf> {
        let dir = match self {
            ExitDirWatch::Kernel(handshake) => handshake.finish().await,
            ExitDirWatch::Printed(file) => read_printed_dir(file.path()).await,
            ExitDirWatch::Untracked => None,
        }?;
        (dir.is_absolute() && dir.is_dir()).then_some(dir)
    }
}

/// The directory `pwd -P` wrote, if it did.
async fn read_printed_dir(file: &Path) -> Option<PathBuf> {
    let mut bytes = tokio::fs::read(file).await.ok()?;
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    Some(PathBuf::from(OsString::from_vec(bytes)))
}

/// `path` in single quotes for the shell, each `'` in it written `'\''`.
fn push_quoted(out: &mut Vec<u8>, path: &Path) {
    out.push(b'\'');
    for &byte in path.as_os_str().as_bytes() {
        if byte == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(byte);
        }
    }
    out.push(b'\'');
}

fn proc_is_readable() -> bool {
    static READABLE: OnceLock<bool> = OnceLock::new();
    *READABLE.get_or_init(|| std::fs::read_link("/proc/self/cwd").is_ok())
}

#[cfg(target_os = "linux")]
fn make_fifos() -> io::Result<Fifos> {
    use rustix::fs::{CWD, Mode, OFlags, mkfifoat, openat};
    let dir = tempfile::Builder::new().prefix("cairn-cwd-").tempdir()?;
    let make = |name: &str| -> io::Result<OwnedFd> {
        let path = dir.path().join(name);
        mkfifoat(CWD, &path, Mode::RUSR | Mode::WUSR)?;
        Ok(openat(
            CWD,
            &path,
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
        )?)
    };
    let (a, b) = (make("a")?, make("b")?);
    Ok(Fifos { dir, a, b })
}

/// The handshake needs `/proc`, which only Linux has in this form.
#[cfg(not(target_os = "linux"))]
fn make_fifos() -> io::Result<Fifos> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// cairn's side of the trap's handshake, run on a thread of its own because opening a FIFO
/// blocks until the other side opens it.
///
/// One handshake is met. After it, or once the shell has ended, the FIFOs are held open
/// read-write, which never blocks and counts as both sides: from then on no opening of any,
/// by the thread or by anything the command left behind, waits for anyone.
#[derive(Debug)]
pub(super) struct Handshake {
    shared: Arc<Shared>,
    result: Option<oneshot::Receiver<Option<PathBuf>>>,
}

#[derive(Debug)]
struct Shared {
    fifos: Fifos,
    /// The FIFOs opened read-write, once the handshake is over or abandoned.
    held_open: Mutex<Option<Vec<File>>>,
}

impl Shared {
    fn held_open(&self) -> MutexGuard<'_, Option<Vec<File>>> {
        self.held_open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn is_over(&self) -> bool {
        self.held_open().is_some()
    }

    /// Ends the handshake: whatever opening of a FIFO waits now, or comes later, completes.
    fn hold_open(&self) {
        let mut held = self.held_open();
        if held.is_none() {
            let open = |fifo| {
                let handle = self.fifos.handle(fifo);
                OpenOptions::new().read(true).write(true).open(handle).ok()
            };
            *held = Some([Fifo::A, Fifo::B].into_iter().filter_map(open).collect());
        }
    }
}

impl Handshake {
    fn start(fifos: Fifos, pid: u32) -> Handshake {
        // Opened now, while the shell cannot have been reaped: once it has been, reading
        // through this handle fails rather than finding another process that reuses the pid.
        let shell = File::open(format!("/proc/{pid}"));
        let shared = Arc::new(Shared {
            fifos,
            held_open: Mutex::default(),
        });
        let (send, result) = oneshot::channel();
        let thread_shared = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name("cairn-exit-dir".into())
            .spawn(move || {
                let _ = send.send(meet_the_trap(&thread_shared, shell));
            });
        if spawned.is_err() {
            // Nobody will meet the trap: let it through at once rather than leave the shell
            // blocked on a FIFO until its timeout.
            shared.hold_open();
        }
        Handshake {
            shared,
            result: spawned.is_ok().then_some(result),
        }
    }

    async fn finish(mut self) -> Option<PathBuf> {
        self.shared.hold_open();
        self.result.take()?.await.ok().flatten()
    }
}

impl Drop for Handshake {
    fn drop(&mut self) {
        // The shell has ended, or nobody waits for it any more: the thread must not wait on.
        self.shared.hold_open();
    }
}

/// Meets the shell in its trap: once it has opened `fifo_a`, reads its directory while it
/// waits on `fifo_b`, then lets it go. `shell` is the shell's `/proc/<pid>` directory, held
/// open since it started.
fn meet_the_trap(shared: &Shared, shell: io::Result<File>) -> Option<PathBuf> {
    let a = OpenOptions::new()
        .write(true)
        .open(shared.fifos.handle(Fifo::A));
    let dir = match (a, shell) {
        // Not when the opening was the handshake's end: the shell is gone then.
        (Ok(_), Ok(shell)) if !shared.is_over() => {
            std::fs::read_link(format!("/proc/self/fd/{}/cwd", shell.as_raw_fd())).ok()
        }
        _ => None,
    };
    // Opens `fifo_b` for the shell, which then finishes its trap.
    shared.hold_open();
    dir
}
