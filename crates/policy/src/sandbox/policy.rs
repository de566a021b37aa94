//! What a sandboxed command may touch: [`SandboxPolicy`] and the default one for a workspace.

use std::path::PathBuf;

/// Whether sandboxed commands may use the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkAccess {
    /// No network restriction.
    Allowed,
    /// TCP `connect` and `bind` are refused (Landlock ABI 4, Linux 6.7). UDP is refused too where
    /// the kernel can (Landlock ABI 10); on older kernels UDP, and so DNS, stays open. Unix-domain
    /// sockets are never affected.
    Denied,
}

/// What a sandboxed command may do, beyond reading and executing files (allowed everywhere).
///
/// Paths need not exist or be canonical: the wrapper resolves them when it starts and skips the
/// ones that do not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// Directories (and files, such as `/dev/null`) beneath which the command may create, write,
    /// truncate, rename and remove: the workspace roots, additional directories, temp dirs.
    pub writable: Vec<PathBuf>,
    /// Files and directories whose contents the command may not read (names stay visible).
    /// Enforced only outside `writable`: see the module documentation.
    pub deny_read: Vec<PathBuf>,
    /// Whether the command may use the network.
    pub network: NetworkAccess,
    /// Workspace roots whose protected files (`.claude/`, `.mcp.json`, `.git/config`,
    /// `.git/hooks/`, … — see [`crate::protected`]) the command may not change, although they lie
    /// beneath `writable`: the wrapper mounts them read-only in a mount namespace of its own.
    pub protected_roots: Vec<PathBuf>,
}

/// Scratch places every shell command may write besides the workspace.
///
/// Deliberately absent: `~/.cache`, `~/.cargo`, `~/.npm` and other tool caches, because a
/// command that can write a cache can plant code that later runs outside the sandbox; and
/// `/dev/tty` and `/dev/pts`, because writing there would scribble over cairn's own screen.
const SCRATCH_PATHS: &[&str] = &[
    "/tmp",
    "/var/tmp",
    // POSIX shared memory, a tmpfs; Python's multiprocessing and browsers need it.
    "/dev/shm",
    // Sinks that discard what is written to them.
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The default policy for a session: writes allowed beneath the workspace roots, the temp dir
/// (`$TMPDIR`), `/tmp`, `/var/tmp`, `/dev/shm` and the `/dev/null`-like sinks, except the
/// roots' protected files; no path hidden (fill [`SandboxPolicy::deny_read`] from the
/// settings' `Read(…)` deny rules).
///
/// Tool caches in the home directory are not writable: add them to `writable` from the settings
/// if a user wants `cargo` or `npm` to download inside the sandbox.
///
/// ```
/// use std::path::PathBuf;
/// use cairn_policy::sandbox::{NetworkAccess, default_policy};
///
/// let policy = default_policy(&[PathBuf::from("/home/me/project")], NetworkAccess::Denied);
/// assert_eq!(policy.writable[0], PathBuf::from("/home/me/project"));
/// assert!(policy.writable.contains(&PathBuf::from("/dev/null")));
/// ```
pub fn default_policy(workspace_roots: &[PathBuf], network: NetworkAccess) -> SandboxPolicy {
    let mut writable: Vec<PathBuf> = Vec::new();
    // `$TMPDIR=/` would make everything writable; such a temp dir is left out.
    let temp_dir = Some(std::env::temp_dir()).filter(|dir| dir.parent().is_some());
    let candidates = workspace_roots
        .iter()
        .cloned()
        .chain(temp_dir)
        .chain(SCRATCH_PATHS.iter().map(PathBuf::from));
    for path in candidates {
        if !writable.contains(&path) {
            writable.push(path);
        }
    }
    SandboxPolicy {
        writable,
        deny_read: Vec::new(),
        network,
        protected_roots: workspace_roots.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn default_policy_lists_roots_first_then_scratch_without_duplicates() {
        let roots = [
            PathBuf::from("/w/one"),
            PathBuf::from("/w/two"),
            PathBuf::from("/w/one"),
        ];
        let policy = default_policy(&roots, NetworkAccess::Allowed);
        assert_eq!(
            policy.writable[..2],
            [PathBuf::from("/w/one"), PathBuf::from("/w/two")]
        );
        let mut deduped = policy.writable.clone();
        deduped.sort();
        deduped.dedup();
        assert_eq!(deduped.len(), policy.writable.len());
        assert!(policy.writable.contains(&std::env::temp_dir()));
        assert_eq!(policy.deny_read, Vec::<PathBuf>::new());
        assert_eq!(policy.network, NetworkAccess::Allowed);
    }
}
