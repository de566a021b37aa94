//! The Linux sandbox for shell commands: writes confined to the workspace and temp dirs,
//! optionally no network, with Landlock.
//!
//! cairn runs a sandboxed command through itself: [`wrap_command`] turns `program args` into
//! `cairn __sandbox --write DIR… --deny-read PATH… [--no-network] -- program args`, and that
//! process ([`run_wrapper`]) restricts itself with Landlock, then `exec`s the program. The
//! restriction covers the command and its children, never cairn. No `unsafe` is involved.
//!
//! What a sandboxed command may do:
//! - read and execute everything, except the contents of `deny_read` paths;
//! - create, write, truncate, rename and remove only beneath `writable`, and not the protected
//!   files of `protected_roots`;
//! - under [`NetworkAccess::Denied`], no TCP connect or bind (UDP too where the kernel can).
//!
//! If the kernel enforces nothing, the wrapper refuses to run the command (it fails closed):
//! ask [`detect_support`] first and let the user choose an unsandboxed run. If it enforces part
//! of the policy (an old kernel, a hidden path it cannot hide), the wrapper runs the command
//! and says what is missing in one `cairn sandbox: warning:` line on stderr.
//!
//! After a failure, [`explain_failure`] recognises the sandbox's refusals in stderr and gives
//! the sentence to put in the tool result.
//!
//! # What it does not confine
//!
//! - `deny_read` is enforced by granting read on every sibling along the way instead of on `/`
//!   (Landlock can only allow). A hidden path inside a writable directory cannot be hidden and is
//!   reported instead; names stay listable; entries created next to a hidden path's ancestors
//!   while the command runs are unreadable to it.
//! - Landlock does not govern `chmod`, `chown`, `utime`, extended attributes or `ioctl` on files
//!   the user already owns, nor Unix-domain sockets or signals.
//! - Writes inside the workspace can prepare something that runs later outside the sandbox:
//!   the workspace's own such files (`.claude/`, `.git/config`, `.git/hooks/`, …, see
//!   [`crate::protected`]) are mounted read-only in a mount namespace of the wrapper's own
//!   (`mounts.rs` says what that covers), and tool caches in the home directory are not
//!   writable by default (see [`default_policy`]).
//! - Setuid programs (`sudo`) do not gain privileges inside the sandbox (`no_new_privs`).
//!
//! Elsewhere than Linux, [`detect_support`] returns [`SandboxSupport::Unsupported`] and the
//! wrapper refuses every command.

mod explain;
#[cfg(target_os = "linux")]
mod landlock_rules;
#[cfg(target_os = "linux")]
mod mounts;
mod policy;
#[cfg(target_os = "linux")]
mod read_plan;
mod support;
mod wrapper;
mod wrapper_argv;

pub use explain::explain_failure;
pub use policy::{NetworkAccess, SandboxPolicy, default_policy};
pub use support::{SandboxSupport, detect_support};
pub use wrapper::{SandboxError, run_wrapper};
pub use wrapper_argv::{WRAPPER_SUBCOMMAND, wrap_command};
