//! `explain_failure` on what real tools print when the sandbox refuses them, and on failures
//! that are not the sandbox's. Runs nothing.

use std::path::PathBuf;

use cairn_policy::sandbox::{NetworkAccess, SandboxPolicy, explain_failure};
use pretty_assertions::assert_eq;

fn policy(network: NetworkAccess) -> SandboxPolicy {
    SandboxPolicy {
        writable: vec![PathBuf::from("/work/project"), PathBuf::from("/tmp")],
        deny_read: vec![PathBuf::from("/home/me/.ssh")],
        network,
        protected_roots: vec![],
    }
}

fn write_sentence(path: &str) -> String {
    format!(
        "The sandbox probably blocked this: `{path}` is outside the directories sandboxed \
         commands may write. Do not try to work around it; ask the user to run the command \
         without the sandbox, or to make that directory writable."
    )
}

const NETWORK_SENTENCE: &str = "The sandbox probably blocked this: sandboxed commands have no \
                                network access. Do not try to work around it; ask the user to \
                                run the command without the sandbox.";

#[test]
fn writes_outside_the_writable_set_are_explained_whatever_the_tool() {
    let cases = [
        (
            "sh: 1: cannot create /etc/motd: Permission denied\n",
            "/etc/motd",
        ),
        (
            "touch: cannot touch '/opt/my dir/f': Permission denied\n",
            "/opt/my dir/f",
        ),
        (
            "mkdir: cannot create directory ‘/var/lib/x’: Permission denied\n",
            "/var/lib/x",
        ),
        (
            "npm ERR! Error: EACCES: permission denied, mkdir '/home/me/.npm/_cacache'\n",
            "/home/me/.npm/_cacache",
        ),
        (
            "Traceback (most recent call last):\nPermissionError: [Errno 13] Permission \
             denied: '/usr/local/lib/python3/site-packages/x'\n",
            "/usr/local/lib/python3/site-packages/x",
        ),
        (
            "error: failed to open: /home/me/.cargo/.package-cache\n\nCaused by:\n  \
             Permission denied (os error 13)\n",
            "/home/me/.cargo/.package-cache",
        ),
    ];
    for (stderr, path) in cases {
        assert_eq!(
            explain_failure(&policy(NetworkAccess::Allowed), Some(1), stderr),
            Some(write_sentence(path)),
            "stderr: {stderr}"
        );
    }
}

#[test]
fn reads_of_hidden_paths_are_explained() {
    assert_eq!(
        explain_failure(
            &policy(NetworkAccess::Allowed),
            Some(1),
            "cat: /home/me/.ssh/id_ed25519: Permission denied\n"
        ),
        Some(
            "The sandbox blocked this: `/home/me/.ssh/id_ed25519` is hidden from sandboxed \
             commands (/home/me/.ssh is in the sandbox's deny-read list). Do not try to work \
             around it; ask the user to run the command without the sandbox."
                .to_owned()
        )
    );
}

#[test]
fn refused_connections_are_explained_only_when_the_network_is_denied() {
    let cases = [
        "bash: connect: Permission denied\nbash: /dev/tcp/10.0.0.1/80: Permission denied\n",
        "ssh: connect to host github.com port 22: Permission denied\n",
        "curl: (7) Failed to connect to example.com port 443 after 0 ms: Couldn't connect to \
         server\n",
        "npm ERR! Error: connect EACCES 104.16.0.35:443\n",
        "pip: Failed to establish a new connection: [Errno 13] Permission denied\n",
    ];
    for stderr in cases {
        assert_eq!(
            explain_failure(&policy(NetworkAccess::Denied), Some(1), stderr),
            Some(NETWORK_SENTENCE.to_owned()),
            "stderr: {stderr}"
        );
        assert_eq!(
            explain_failure(&policy(NetworkAccess::Allowed), Some(1), stderr),
            None,
            "stderr: {stderr}"
        );
    }
}

#[test]
fn failures_that_are_not_the_sandbox_are_left_alone() {
    let policy = policy(NetworkAccess::Denied);
    let cases = [
        // Inside the writable set: the user's own permissions, not Landlock.
        "sh: 1: cannot create /work/project/locked: Permission denied\n",
        "rm: cannot remove '/tmp/x/y': Permission denied\n",
        // A relative path is relative to the working directory, inside the workspace.
        "fatal: could not create work tree dir 'repo': Permission denied\n",
        // Landlock never answers "read-only file system".
        "touch: cannot touch '/mnt/ro/f': Read-only file system\n",
        "error[E0425]: cannot find value `x` in this scope\n",
        "fatal: unable to access 'https://example.com/r.git/': Could not resolve host\n",
    ];
    for stderr in cases {
        assert_eq!(
            explain_failure(&policy, Some(1), stderr),
            None,
            "stderr: {stderr}"
        );
    }
}

#[test]
fn a_successful_command_needs_no_explanation() {
    assert_eq!(
        explain_failure(
            &policy(NetworkAccess::Allowed),
            Some(0),
            "sh: 1: cannot create /etc/motd: Permission denied\n"
        ),
        None
    );
}
