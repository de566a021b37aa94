//! The wrapper's command line as the CLI sees it: what `wrap_command` produces, and what
//! `run_wrapper` says about a malformed one. Runs nothing and restricts nothing.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use cairn_policy::sandbox::{
    NetworkAccess, SandboxError, SandboxPolicy, WRAPPER_SUBCOMMAND, default_policy, run_wrapper,
    wrap_command,
};
use pretty_assertions::assert_eq;

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

#[test]
fn wrap_command_puts_the_policy_before_the_command() {
    let policy = SandboxPolicy {
        writable: vec![PathBuf::from("/work"), PathBuf::from("/tmp")],
        deny_read: vec![PathBuf::from("/home/me/.aws")],
        network: NetworkAccess::Denied,
        protected_roots: vec![],
    };
    let (program, args) = wrap_command(
        Path::new("/usr/bin/cairn"),
        &policy,
        OsStr::new("bash"),
        &os(&["-c", "cargo test -- --nocapture"]),
    );
    assert_eq!(program, PathBuf::from("/usr/bin/cairn"));
    assert_eq!(
        args,
        os(&[
            WRAPPER_SUBCOMMAND,
            "--write",
            "/work",
            "--write",
            "/tmp",
            "--deny-read",
            "/home/me/.aws",
            "--no-network",
            "--",
            "bash",
            "-c",
            "cargo test -- --nocapture",
        ])
    );
}

#[test]
fn the_default_policy_writes_to_the_workspace_and_scratch_places_only() {
    let policy = default_policy(&[PathBuf::from("/work")], NetworkAccess::Allowed);
    let mut expected = vec![PathBuf::from("/work"), std::env::temp_dir()];
    for path in [
        "/tmp",
        "/var/tmp",
        "/dev/shm",
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/random",
        "/dev/urandom",
    ] {
        if !expected.contains(&PathBuf::from(path)) {
            expected.push(PathBuf::from(path));
        }
    }
    assert_eq!(
        policy,
        SandboxPolicy {
            writable: expected,
            deny_read: vec![],
            network: NetworkAccess::Allowed,
            protected_roots: vec![PathBuf::from("/work")],
        }
    );
}

#[test]
fn a_malformed_wrapper_command_line_is_refused_before_anything_is_restricted() {
    let error = run_wrapper(os(&["--write", "/work", "bash", "-c", "true"]));
    assert_eq!(error.exit_code(), 125);
    assert!(matches!(error, SandboxError::InvalidArguments { .. }));
    assert_eq!(
        error.to_string(),
        "cairn __sandbox: unexpected argument `bash`; usage: cairn __sandbox [--write PATH]... \
         [--deny-read PATH]... [--protect ROOT]... [--no-network] -- PROGRAM [ARG]..."
    );
}
