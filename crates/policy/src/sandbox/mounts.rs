//! The protected files of the workspace mounted read-only for the sandboxed command.
//!
//! Landlock can only allow, so it cannot carve `.git/hooks` or `.claude/settings.json` out of a
//! workspace the command may write. A mount namespace of the wrapper's own can: each protected
//! path is bind-mounted onto itself and the bind made read-only. The mounts exist only for the
//! wrapper and what it starts; cairn and the user see the files as always.
//!
//! What is mounted is [`mount_plan`]: `.claude`, `.claude.json`, `.mcp.json`, and the control
//! files of every git directory below the root (the root's `.git`, any nested `.git`
//! directory, their submodules' and linked worktrees' git directories) — not git's data, so
//! `git add` and `git commit` work.
//!
//! What makes it hold:
//! - every git directory is bound onto itself first (writable) and `.claude` is a mount point,
//!   so none can be renamed away, with its read-only mounts, and replaced by a fresh copy
//!   (`rename` refuses to move a mount point);
//! - a protected directory that does not exist yet (`.claude`, a git directory's `hooks` and
//!   `info`) is created empty first, so that it can be mounted; an empty directory shows in no
//!   `git status`;
//! - a non-root user gets the namespace inside a user namespace that maps only their own ids,
//!   and loses the namespace's capabilities when the wrapper executes the command.
//!
//! What it does not cover: a protected *file* that does not exist yet (`.mcp.json`,
//! `.claude.json`, `commondir`, `objects/info/alternates`, a new `.git`) cannot be mounted, so
//! creating it is left to the gate, which asks about every write it can see there, and to the
//! check after each command (`guarded_files`), which undoes it; and a kernel that refuses user namespaces (some distributions
//! restrict them) leaves the files writable, with a warning.

use std::path::{Path, PathBuf};

use rustix::fs::{StatVfsMountFlags, statvfs};
use rustix::mount::{MountFlags, MountPropagationFlags, mount_bind, mount_change, mount_remount};
use rustix::process::{geteuid, getgid, getuid};
use rustix::thread::UnshareFlags;

use crate::protected::{GitLayout, MountPlan, mount_plan_of};

/// Mounts the protected files of every root read-only for this process and its children.
/// `Err` says why they stay writable; the caller warns and runs the command anyway (the gate
/// still asks about every write to them it can see).
pub(crate) fn mount_protected_read_only(roots: &[PathBuf]) -> Result<(), String> {
    let roots: Vec<PathBuf> = roots
        .iter()
        .filter_map(|root| std::fs::canonicalize(root).ok())
        .collect();
    let plans: Vec<MountPlan> = roots
        .iter()
        .map(|root| {
            let layout = GitLayout::of(root);
            create_mount_points(root, &layout);
            mount_plan_of(root, &layout)
        })
        .collect();
    if plans.iter().all(|plan| plan.read_only.is_empty()) {
        return Ok(());
    }
    enter_mount_namespace()
        .map_err(|error| format!("the kernel refused a private mount namespace ({error})"))?;
    mount_change(
        "/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )
    .map_err(|error| format!("could not make the mounts private ({error})"))?;
    for git_dir in plans.iter().flat_map(|plan| &plan.pinned) {
        mount_bind(git_dir, git_dir)
            .map_err(|error| format!("could not pin {} ({error})", git_dir.display()))?;
    }
    for target in plans.iter().flat_map(|plan| &plan.read_only) {
        bind_read_only(target)
            .map_err(|error| format!("could not mount {} read-only ({error})", target.display()))?;
    }
    Ok(())
}

/// Creates the protected directories that do not exist yet, so that they can be mounted:
/// `.claude`, and `hooks` and `info` in each git directory but a linked worktree's (git reads
/// those of the repository it belongs to). Failures are left to [`mount_plan_of`], which
/// lists only what exists.
fn create_mount_points(root: &Path, layout: &GitLayout) {
    let _ = std::fs::create_dir(root.join(".claude"));
    for git_dir in &layout.git_dirs {
        let in_worktrees = git_dir
            .parent()
            .is_some_and(|parent| parent.ends_with("worktrees"));
        if git_dir.is_dir() && !in_worktrees {
            for dir in ["hooks", "info"] {
                let _ = std::fs::create_dir(git_dir.join(dir));
            }
        }
    }
}

/// A private mount namespace: directly for root, inside a user namespace mapping only the
/// caller's own ids otherwise.
fn enter_mount_namespace() -> std::io::Result<()> {
    if geteuid().is_root() {
        return unshare(UnshareFlags::NEWNS);
    }
    let (uid, gid) = (getuid().as_raw(), getgid().as_raw());
    unshare(UnshareFlags::NEWUSER | UnshareFlags::NEWNS)?;
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    Ok(())
}

#[allow(
    deprecated,
    reason = "rustix deprecates its safe `unshare` because of `CLONE_FILES`; these namespace \
              flags share no file descriptor table, and the workspace forbids `unsafe`"
)]
fn unshare(flags: UnshareFlags) -> std::io::Result<()> {
    rustix::thread::unshare(flags).map_err(std::io::Error::from)
}

/// Binds `path` onto itself, then makes the bind read-only, keeping the flags the kernel locks
/// in a user namespace (`nosuid`, `nodev`, `noexec`, the atime ones).
fn bind_read_only(path: &Path) -> std::io::Result<()> {
    mount_bind(path, path)?;
    let current = statvfs(path)?.f_flag;
    let kept = [
        (StatVfsMountFlags::NOSUID, MountFlags::NOSUID),
        (StatVfsMountFlags::NODEV, MountFlags::NODEV),
        (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
        (StatVfsMountFlags::NOATIME, MountFlags::NOATIME),
        (StatVfsMountFlags::NODIRATIME, MountFlags::NODIRATIME),
        (StatVfsMountFlags::RELATIME, MountFlags::RELATIME),
    ]
    .into_iter()
    .filter(|(reported, _)| current.contains(*reported))
    .fold(MountFlags::empty(), |flags, (_, flag)| flags | flag);
    mount_remount(path, MountFlags::BIND | MountFlags::RDONLY | kept, "")?;
    Ok(())
}
