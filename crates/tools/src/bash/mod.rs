//! The shell tools: `Bash` runs a command and waits for it; with `run_in_background` it
//! returns at once, and `BashOutput` and `TaskStop` (once `KillShell`) read and stop the command later.
//!
//! Every command runs in a process group of its own, so a timeout, a cancellation, TaskStop
//! or the end of the session kills it with everything it started. The working directory
//! carries over from one command to the next, kept with the background shells in the
//! session's [`ShellRegistry`]: the shell's real directory as the kernel knows it, which no
//! definition in a command can disguise, and only while it is inside the [`WorkspaceRoots`].
//!
//! Commands get cairn's environment without its credentials
//! ([`cairn_protocol::child_environment`]), plus the settings' `env`.

mod background;
mod capture;
mod exit_dir;
mod foreground;
mod guarded;
mod process;
mod reaper;
mod shells;
mod workspace;

pub use background::{BashOutputTool, KillShellTool, TaskOutputTool, TaskStopTool};
pub use foreground::BashTool;
pub use process::hide_own_process_from_commands;
pub use reaper::{Reaped, forget_recorded_process_groups, reap_orphaned_process_groups};
pub use shells::{BackgroundTask, ShellRegistry, wait_until};
pub use workspace::WorkspaceRoots;
