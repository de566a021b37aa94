//! The sandbox end to end on the running kernel: real commands run through the wrapper.
//!
//! The wrapper needs a process of its own to confine and then `exec`. This test binary is that
//! process: each test runs the binary again, filtered to the ignored `wrapper_entry_point`, with
//! the wrapper's arguments in an environment variable. That works under any `cargo test` filter
//! or runner, with nothing else to build. The child's stdout starts with the test harness's
//! `running 1 test` line, so outputs are checked with `ends_with`.
//!
//! Every test skips, saying why, when the kernel has no Landlock; the network tests also skip
//! when its Landlock has no network rules (ABI < 4).

#![cfg(target_os = "linux")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]
#![allow(clippy::print_stderr, reason = "a skipped test says why")]

use std::ffi::{OsStr, OsString};
use std::net::TcpListener;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cairn_policy::sandbox::{
    NetworkAccess, SandboxPolicy, SandboxSupport, WRAPPER_SUBCOMMAND, default_policy,
    detect_support, explain_failure, run_wrapper, wrap_command,
};
use pretty_assertions::assert_eq;

const ENTRY_POINT: &str = "wrapper_entry_point";
const WRAPPER_ARGS_VAR: &str = "CAIRN_TEST_SANDBOX_WRAPPER_ARGS";
/// Separates the wrapper's arguments in [`WRAPPER_ARGS_VAR`] (ASCII unit separator).
const SEPARATOR: u8 = 0x1f;

#[test]
#[ignore = "not a test: the sandbox wrapper's process, started by the other tests"]
fn wrapper_entry_point() {
    let Some(encoded) = std::env::var_os(WRAPPER_ARGS_VAR) else {
        return;
    };
    let args = encoded
        .as_bytes()
        .split(|byte| *byte == SEPARATOR)
        .map(|arg| OsString::from_vec(arg.to_vec()))
        .collect();
    let error = run_wrapper(args);
    eprintln!("{error}");
    std::process::exit(error.exit_code());
}

/// The kernel's Landlock ABI, or `None` after printing why the calling test skips.
fn landlock_abi() -> Option<u8> {
    match detect_support() {
        SandboxSupport::Full { abi } | SandboxSupport::Partial { abi, .. } => Some(abi),
        SandboxSupport::Unsupported { reason } => {
            eprintln!("skipped: this kernel cannot sandbox: {reason}");
            None
        }
    }
}

/// Runs `program args` under `policy` through the wrapper, and returns what it did.
fn run_sandboxed(policy: &SandboxPolicy, program: &str, args: &[&OsStr]) -> Output {
    let this_binary = std::env::current_exe().unwrap();
    let args: Vec<OsString> = args.iter().map(|arg| arg.to_os_string()).collect();
    let (wrapper, wrapper_args) = wrap_command(&this_binary, policy, OsStr::new(program), &args);
    assert_eq!(wrapper, this_binary);
    assert_eq!(wrapper_args[0], WRAPPER_SUBCOMMAND);
    let encoded = wrapper_args[1..]
        .iter()
        .map(|arg| arg.as_bytes())
        .collect::<Vec<_>>()
        .join(&SEPARATOR);
    Command::new(&wrapper)
        .args([ENTRY_POINT, "--exact", "--include-ignored", "--nocapture"])
        .args(["--quiet", "--test-threads=1"])
        .env(WRAPPER_ARGS_VAR, OsString::from_vec(encoded))
        .output()
        .unwrap()
}

/// `sh -c script sh args…`, so that paths reach the script as `$1`, `$2`.
fn run_sh(policy: &SandboxPolicy, script: &str, args: &[&Path]) -> Output {
    let mut sh_args: Vec<&OsStr> = vec![OsStr::new("-c"), OsStr::new(script), OsStr::new("sh")];
    sh_args.extend(args.iter().map(|path| path.as_os_str()));
    run_sandboxed(policy, "sh", &sh_args)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Two temp dirs: a workspace and a place outside it. Not under the default policy's `/tmp`
/// grant, because these tests write their own policies.
fn workspace_and_outside() -> (tempfile::TempDir, tempfile::TempDir) {
    (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap())
}

fn writable_only(dir: &Path, network: NetworkAccess) -> SandboxPolicy {
    SandboxPolicy {
        writable: vec![dir.to_path_buf(), PathBuf::from("/dev/null")],
        deny_read: vec![],
        network,
        protected_roots: vec![],
    }
}

#[test]
fn writes_inside_the_workspace_succeed() {
    let Some(_) = landlock_abi() else { return };
    let (workspace, _) = workspace_and_outside();
    let policy = writable_only(workspace.path(), NetworkAccess::Allowed);
    let output = run_sh(
        &policy,
        r#"echo inside > "$1/file" && mkdir "$1/sub" && mv "$1/file" "$1/sub/moved""#,
        &[workspace.path()],
    );
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("sub/moved")).unwrap(),
        "inside\n"
    );
}

#[test]
fn writes_outside_the_workspace_fail_and_are_explained() {
    let Some(_) = landlock_abi() else { return };
    let (workspace, outside) = workspace_and_outside();
    let policy = writable_only(workspace.path(), NetworkAccess::Allowed);
    let target = outside.path().join("file");
    let output = run_sh(&policy, r#"echo outside > "$1""#, &[&target]);
    assert_ne!(output.status.code(), Some(0));
    assert!(!target.exists(), "the sandbox let the write through");
    assert!(
        stderr(&output).contains("Permission denied"),
        "stderr: {}",
        stderr(&output)
    );
    assert_eq!(
        explain_failure(&policy, output.status.code(), &stderr(&output)),
        Some(format!(
            "The sandbox probably blocked this: `{}` is outside the directories sandboxed \
             commands may write. Do not try to work around it; ask the user to run the command \
             without the sandbox, or to make that directory writable.",
            target.display()
        ))
    );
}

#[test]
fn removing_and_truncating_outside_the_workspace_fail() {
    let Some(_) = landlock_abi() else { return };
    let (workspace, outside) = workspace_and_outside();
    let policy = writable_only(workspace.path(), NetworkAccess::Allowed);
    let existing = outside.path().join("existing");
    std::fs::write(&existing, "keep me\n").unwrap();
    let output = run_sh(&policy, r#"rm -f "$1"; truncate -s 0 "$1""#, &[&existing]);
    assert_ne!(output.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep me\n");
}

#[test]
fn reading_and_executing_outside_the_workspace_work() {
    let Some(_) = landlock_abi() else { return };
    let (workspace, outside) = workspace_and_outside();
    std::fs::write(outside.path().join("notes"), "readable\n").unwrap();
    let policy = writable_only(workspace.path(), NetworkAccess::Allowed);
    let output = run_sh(&policy, r#"cat "$1/notes"; ls "$1""#, &[outside.path()]);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    assert!(
        stdout(&output).ends_with("readable\nnotes\n"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn standard_streams_and_dev_null_stay_writable_under_the_default_policy() {
    let Some(_) = landlock_abi() else { return };
    let (workspace, _) = workspace_and_outside();
    let policy = default_policy(&[workspace.path().to_path_buf()], NetworkAccess::Allowed);
    let output = run_sh(
        &policy,
        r#"echo to-null > /dev/null && echo to-stderr > /dev/stderr && echo to-stdout > /dev/stdout"#,
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    assert_eq!(stderr(&output), "to-stderr\n");
    assert!(stdout(&output).ends_with("to-stdout\n"));
}

#[test]
fn deny_read_hides_contents_but_not_names() {
    let Some(_) = landlock_abi() else { return };
    let (workspace, outside) = workspace_and_outside();
    let secret = outside.path().join("secret");
    std::fs::write(&secret, "hunter2\n").unwrap();
    std::fs::write(outside.path().join("public"), "hello\n").unwrap();
    let policy = SandboxPolicy {
        deny_read: vec![secret.clone()],
        ..writable_only(workspace.path(), NetworkAccess::Allowed)
    };

    let output = run_sh(&policy, r#"cat "$1/public"; ls "$1""#, &[outside.path()]);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    assert!(stdout(&output).ends_with("hello\npublic\nsecret\n"));

    let output = run_sh(&policy, r#"cat "$1""#, &[&secret]);
    assert_ne!(output.status.code(), Some(0));
    assert!(!stdout(&output).contains("hunter2"));
    assert_eq!(
        explain_failure(&policy, output.status.code(), &stderr(&output)),
        Some(format!(
            "The sandbox blocked this: `{0}` is hidden from sandboxed commands ({0} is in the \
             sandbox's deny-read list). Do not try to work around it; ask the user to run the \
             command without the sandbox.",
            secret.display()
        ))
    );
}

#[test]
fn deny_read_inside_a_writable_directory_is_reported_not_pretended() {
    let Some(_) = landlock_abi() else { return };
    let (workspace, _) = workspace_and_outside();
    let env_file = workspace.path().join(".env");
    std::fs::write(&env_file, "TOKEN=1\n").unwrap();
    let policy = SandboxPolicy {
        deny_read: vec![env_file.clone()],
        ..writable_only(workspace.path(), NetworkAccess::Allowed)
    };
    let output = run_sh(&policy, r#"cat "$1""#, &[&env_file]);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    let canonical = std::fs::canonicalize(&env_file).unwrap();
    let canonical_workspace = std::fs::canonicalize(workspace.path()).unwrap();
    assert_eq!(
        stderr(&output),
        format!(
            "cairn sandbox: warning: partly confined: not hiding {}: it is inside the writable \
             directory {}, and Landlock cannot take back a right granted on a parent directory\n",
            canonical.display(),
            canonical_workspace.display()
        )
    );
}

#[test]
fn a_missing_program_exits_127_after_confinement() {
    let Some(_) = landlock_abi() else { return };
    let (workspace, _) = workspace_and_outside();
    let policy = writable_only(workspace.path(), NetworkAccess::Allowed);
    // An absolute path: a `PATH` lookup may answer EACCES (126) for an unsearchable entry.
    let missing = workspace.path().join("no-such-program");
    let output = run_sandboxed(&policy, missing.to_str().unwrap(), &[]);
    assert_eq!(
        output.status.code(),
        Some(127),
        "stderr: {}",
        stderr(&output)
    );
    assert_eq!(
        stderr(&output),
        format!(
            "cannot run `{}` in the sandbox: No such file or directory (os error 2)\n",
            missing.display()
        )
    );
}

#[test]
fn detect_support_leaves_the_calling_process_unrestricted() {
    let Some(abi) = landlock_abi() else { return };
    assert!(abi >= 1);
    // Landlock and no_new_privs are per thread: look at this one.
    let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
    assert!(status.contains("NoNewPrivs:\t0"), "{status}");
    let (_, outside) = workspace_and_outside();
    std::fs::write(outside.path().join("still-writable"), "yes").unwrap();
}

/// Connects to a listener of this test through bash's `/dev/tcp`. Loopback only.
fn connect_to_local_listener(network: NetworkAccess) -> Option<(SandboxPolicy, Output)> {
    let abi = landlock_abi()?;
    if abi < 4 {
        eprintln!("skipped: Landlock ABI {abi} has no network rules (needs 4, Linux 6.7)");
        return None;
    }
    if Command::new("bash").arg("-c").arg("true").output().is_err() {
        eprintln!("skipped: no bash for its /dev/tcp");
        return None;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (workspace, _) = workspace_and_outside();
    let policy = writable_only(workspace.path(), network);
    let script = format!("echo hello > /dev/tcp/127.0.0.1/{port}");
    let output = run_sandboxed(&policy, "bash", &[OsStr::new("-c"), OsStr::new(&script)]);
    Some((policy, output))
}

#[test]
fn network_denied_refuses_tcp_connections() {
    let Some((policy, output)) = connect_to_local_listener(NetworkAccess::Denied) else {
        return;
    };
    assert_ne!(output.status.code(), Some(0));
    assert!(
        stderr(&output).contains("Permission denied"),
        "stderr: {}",
        stderr(&output)
    );
    assert_eq!(
        explain_failure(&policy, output.status.code(), &stderr(&output)),
        Some(
            "The sandbox probably blocked this: sandboxed commands have no network access. Do \
             not try to work around it; ask the user to run the command without the sandbox."
                .to_owned()
        )
    );
}

#[test]
fn network_allowed_permits_tcp_connections() {
    let Some((policy, output)) = connect_to_local_listener(NetworkAccess::Allowed) else {
        return;
    };
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    assert_eq!(explain_failure(&policy, Some(0), &stderr(&output)), None);
}

/// A workspace with every kind of protected file, and the policy that protects them.
fn protected_workspace() -> (tempfile::TempDir, SandboxPolicy) {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.join(".git/objects")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(root.join(".mcp.json"), "{}\n").unwrap();
    std::fs::create_dir_all(root.join(".claude/commands")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), "{}\n").unwrap();
    let policy = SandboxPolicy {
        protected_roots: vec![root.to_path_buf()],
        ..writable_only(root, NetworkAccess::Allowed)
    };
    (workspace, policy)
}

/// Every file below `root` with its contents, for "nothing changed" checks.
fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files.push((path.clone(), Vec::new()));
                dirs.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// Whether this process may enter a mount namespace from a test binary, which runs tests on
/// threads: only root can (a user namespace needs a single-threaded process). cairn's own
/// wrapper is single-threaded; the end-to-end tests in crates/cli cover that path.
fn can_test_mounts() -> bool {
    let root = rustix::process::geteuid().is_root();
    if !root {
        eprintln!("skipped: a threaded test binary cannot enter a user namespace as non-root");
    }
    root
}

#[test]
fn protected_files_stay_unchanged_by_every_kind_of_write() {
    if landlock_abi().is_none() || !can_test_mounts() {
        return;
    }
    let (workspace, policy) = protected_workspace();
    let before = snapshot(workspace.path());
    // Each attempt prints its name when it succeeds.
    let attempts = [
        (
            "append to .git/config",
            "echo '[core] fsmonitor = x' >> .git/config",
        ),
        ("hook", "printf '#!/bin/sh\\n' > .git/hooks/pre-commit"),
        ("attributes", "echo '* filter=x' > .git/info/attributes"),
        ("settings", "echo '{\"hooks\":{}}' > .claude/settings.json"),
        ("local settings", "echo '{}' > .claude/settings.local.json"),
        ("command", "echo x > .claude/commands/x.md"),
        ("mcp", "echo '{\"mcpServers\":{}}' > .mcp.json"),
        ("remove mcp", "rm -f .mcp.json"),
        ("rename .claude", "mv .claude claude-old"),
        ("rename .git", "mv .git git-old"),
        ("rename config", "mv .git/config .git/config-old"),
        ("truncate", ": > .git/config"),
    ];
    let script: String = attempts
        .iter()
        .map(|(name, command)| format!("( {command} ) 2>/dev/null && echo 'ESCAPED: {name}'\n"))
        .collect();
    let output = run_sh(
        &policy,
        &format!("cd \"$1\" || exit 9\n{script}touch allowed-file\necho ok > .git/objects/x\n"),
        &[workspace.path()],
    );
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    assert!(!stdout(&output).contains("ESCAPED"), "{}", stdout(&output));
    let mut after = snapshot(workspace.path());
    let allowed = [
        workspace.path().join("allowed-file"),
        workspace.path().join(".git/objects/x"),
    ];
    assert!(
        allowed.iter().all(|path| path.exists()),
        "ordinary writes work"
    );
    after.retain(|(path, _)| !allowed.contains(path) && !path.ends_with(".git/info"));
    let mut before = before;
    before.retain(|(path, _)| !path.ends_with(".git/info"));
    assert_eq!(after, before);
}

#[test]
fn missing_protected_directories_are_created_and_protected() {
    if landlock_abi().is_none() || !can_test_mounts() {
        return;
    }
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    let policy = SandboxPolicy {
        protected_roots: vec![root.to_path_buf()],
        ..writable_only(root, NetworkAccess::Allowed)
    };
    let output = run_sh(
        &policy,
        "cd \"$1\" || exit 9\n\
         (mkdir -p .claude && echo '{}' > .claude/settings.local.json) 2>/dev/null && echo ESCAPED\n\
         (echo x > .git/hooks/post-checkout) 2>/dev/null && echo ESCAPED\n\
         echo done",
        &[root],
    );
    assert_eq!(
        stdout(&output).lines().last(),
        Some("done"),
        "stderr: {}",
        stderr(&output)
    );
    assert!(!stdout(&output).contains("ESCAPED"));
    assert_eq!(
        std::fs::read_dir(root.join(".claude")).unwrap().count(),
        0,
        "the mount point stays empty"
    );
    assert!(!root.join(".git/hooks/post-checkout").exists());
}

/// Runs git in `dir` (outside the sandbox, to build a fixture), with an identity of its own.
fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(["-c", "protocol.file.allow=always"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
}

/// A repository with a commit, a linked worktree inside the workspace (`wt`, a `gitdir:`
/// file), a submodule whose name has a `/` (`libs/json`) and a nested repository
/// (`vendor/dep`).
fn repository_with_everything() -> (tempfile::TempDir, PathBuf) {
    let workspace = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(workspace.path()).unwrap();
    let upstream = root.join("upstream");
    std::fs::create_dir_all(&upstream).unwrap();
    git(&upstream, &["init", "-q"]);
    std::fs::write(upstream.join("u.txt"), "u").unwrap();
    git(&upstream, &["add", "u.txt"]);
    git(&upstream, &["commit", "-qm", "u"]);
    git(&root, &["init", "-q"]);
    std::fs::write(root.join("a.txt"), "a").unwrap();
    git(&root, &["add", "a.txt"]);
    git(&root, &["commit", "-qm", "a"]);
    git(&root, &["worktree", "add", "-q", "wt"]);
    git(
        &root,
        &[
            "submodule",
            "add",
            "-q",
            "--name",
            "libs/json",
            "./upstream",
            "libs/json",
        ],
    );
    git(&root, &["commit", "-qm", "submodule"]);
    std::fs::create_dir_all(root.join("vendor/dep")).unwrap();
    git(&root.join("vendor/dep"), &["init", "-q"]);
    (workspace, root)
}

#[test]
fn git_control_files_everywhere_are_read_only_and_git_still_commits() {
    if landlock_abi().is_none() || !can_test_mounts() {
        return;
    }
    let (_workspace, root) = repository_with_everything();
    let control = [
        ".git/config",
        ".git/worktrees/wt/commondir",
        ".git/worktrees/wt/gitdir",
        ".git/modules/libs/json/config",
        "vendor/dep/.git/config",
        "wt/.git",
        "libs/json/.git",
    ];
    let before: Vec<Vec<u8>> = control
        .iter()
        .map(|path| std::fs::read(root.join(path)).unwrap())
        .collect();
    let policy = SandboxPolicy {
        protected_roots: vec![root.clone()],
        ..writable_only(&root, NetworkAccess::Allowed)
    };
    let attempts = [
        (
            "worktree commondir",
            "echo /tmp/x > .git/worktrees/wt/commondir",
        ),
        ("worktree gitdir", "echo /tmp/x > .git/worktrees/wt/gitdir"),
        (
            "module config",
            "echo '[core] fsmonitor = x' >> .git/modules/libs/json/config",
        ),
        (
            "module hook",
            "echo x > .git/modules/libs/json/hooks/post-checkout",
        ),
        (
            "nested config",
            "echo '[core] fsmonitor = x' >> vendor/dep/.git/config",
        ),
        ("nested hook", "echo x > vendor/dep/.git/hooks/pre-commit"),
        ("move nested .git", "mv vendor/dep/.git vendor/dep/old"),
        ("move module", "mv .git/modules/libs/json .git/modules/old"),
        ("move worktree", "mv .git/worktrees/wt .git/worktrees/old"),
        (
            "remove worktree commondir",
            "rm -f .git/worktrees/wt/commondir",
        ),
    ];
    let script: String = attempts
        .iter()
        .map(|(name, command)| format!("( {command} ) 2>/dev/null && echo 'ESCAPED: {name}'\n"))
        .collect();
    let commit = "git -c user.name=t -c user.email=t@t commit -qm";
    let output = run_sh(
        &policy,
        &format!(
            "cd \"$1\" || exit 9\nexport HOME=\"$1\" GIT_CONFIG_NOSYSTEM=1\n{script}\
             echo b > b.txt && git add b.txt && {commit} b || echo 'FAILED: commit'\n\
             (cd wt && echo w > w.txt && git add w.txt && {commit} w) || echo 'FAILED: worktree'\n\
             (cd libs/json && echo j > j.txt && git add j.txt && {commit} j) || echo 'FAILED: module'\n\
             (cd vendor/dep && echo d > d.txt && git add d.txt && {commit} d) || echo 'FAILED: nested'\n\
             echo /tmp/planted > .git/commondir && echo 'CREATED: commondir'\n"
        ),
        &[&root],
    );
    let out = stdout(&output);
    assert!(!out.contains("ESCAPED"), "{out}\n{}", stderr(&output));
    assert!(!out.contains("FAILED"), "{out}\n{}", stderr(&output));
    let after: Vec<Vec<u8>> = control
        .iter()
        .map(|path| std::fs::read(root.join(path)).unwrap())
        .collect();
    assert_eq!(after, before);
    // A control file that did not exist cannot be mounted: the command creates it, and the
    // guarded list (checked by cairn after every command) names it.
    assert!(out.contains("CREATED: commondir"), "{out}");
    let (guarded, complete) = cairn_policy::protected::guarded_files(&root);
    assert!(complete);
    for path in [
        ".git/commondir",
        "wt/.git",
        "vendor/dep/.git/commondir",
        ".git/worktrees/wt/config",
    ] {
        assert!(guarded.contains(&root.join(path)), "{path}: {guarded:?}");
    }
    std::fs::remove_file(root.join(".git/commondir")).unwrap();
    for (dir, count) in [
        (".", "3"),
        ("wt", "2"),
        ("libs/json", "2"),
        ("vendor/dep", "1"),
    ] {
        let log = Command::new("git")
            .args(["rev-list", "--count", "HEAD"])
            .current_dir(root.join(dir))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&log.stdout).trim(),
            count,
            "{dir}: {log:?}"
        );
    }
}
