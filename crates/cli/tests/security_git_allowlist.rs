//! Issue 21, git by allowlist, through the real binary: in `cairn -p`, a git command whose
//! options run a program (an abbreviation of `--open-files-in-pager`, `-O`, `difftool -x`),
//! write a file git refuses to read as an option (`log --auth --output=`) or lead git to a
//! repository whose configuration cairn has not checked (`--git-dir`) is refused, in the
//! default mode and with `Bash(git:*)` allowed, with the sandbox on and off, and the file the
//! command would have made is never made. A control run in `bypassPermissions` shows that
//! the same commands do make it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cairn_test_support::{RecordedRequest, Reply};
use serde_json::json;

mod support;
use support::{Harness, WAIT, tool_result};

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
}

/// Each attack and the file it makes in the project when it runs.
fn attacks(work: &Path, outside: &Path) -> Vec<(String, PathBuf)> {
    let marker = |name: &str| work.join(name).display().to_string();
    vec![
        (
            format!(
                "git grep --no-index --open='touch {}' -e x",
                marker("m-open")
            ),
            work.join("m-open"),
        ),
        (
            format!(
                "git grep --open-files-in-p='touch {}' -e x",
                marker("m-pager")
            ),
            work.join("m-pager"),
        ),
        (
            format!("git grep -n -O'touch {}' x", marker("m-short")),
            work.join("m-short"),
        ),
        // git writes the file, then refuses `--auth`.
        (
            format!(
                "git log --auth --output={}",
                outside.join("m-log").display()
            ),
            outside.join("m-log"),
        ),
        (
            format!("git difftool -y -x 'touch {}'", marker("m-difftool")),
            work.join("m-difftool"),
        ),
        (
            format!("git difftool -y --extcmd='touch {}'", marker("m-extcmd")),
            work.join("m-extcmd"),
        ),
        (
            "git --git-dir=evil/.git status".to_owned(),
            work.join("m-fsmonitor"),
        ),
    ]
}

/// A project that is a git repository with a change to diff, and a second repository inside
/// it whose configuration runs a program at `git status`.
fn project(h: &Harness, sandbox: bool) {
    let work = h.work.path();
    if !sandbox {
        h.user_settings(json!({"sandbox": {"enabled": false}}));
    }
    git(work, &["init", "-q", "-b", "main"]);
    std::fs::write(h.path("a.txt"), "x marks the spot\n").unwrap();
    git(work, &["add", "a.txt"]);
    git(work, &["commit", "-q", "-m", "first"]);
    std::fs::write(h.path("a.txt"), "x moved\n").unwrap();
    let evil = h.path("evil");
    std::fs::create_dir_all(&evil).unwrap();
    git(&evil, &["init", "-q"]);
    let fsmonitor = format!("touch {}", h.path("m-fsmonitor").display());
    git(&evil, &["config", "core.fsmonitor", &fsmonitor]);
}

/// Runs `cairn -p` with `args`, the model calling Bash once per command.
fn run(h: &Harness, args: &[&str], commands: &[String]) -> Vec<RecordedRequest> {
    for (n, command) in commands.iter().enumerate() {
        h.server.push(Reply::tool_use(
            &format!("t{n}"),
            "Bash",
            json!({ "command": command }),
        ));
    }
    h.server.push(Reply::text("done"));
    let output = h
        .command()
        .args([&["-p", "go"][..], args].concat())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    h.server.wait_for_requests(commands.len() + 1, WAIT)
}

fn refused_everywhere(args: &[&str], sandbox: bool) {
    let h = Harness::new();
    project(&h, sandbox);
    let attacks = attacks(h.work.path(), h.home.path());
    let commands: Vec<String> = attacks.iter().map(|(command, _)| command.clone()).collect();
    let requests = run(&h, args, &commands);
    let mut failures = Vec::new();
    for (n, (command, marker)) in attacks.iter().enumerate() {
        let (is_error, text) = tool_result(&requests, n + 1);
        let refused = text.contains("nobody can be asked in cairn -p")
            || text.contains("it was refused without asking");
        if !(is_error && refused) {
            failures.push(format!("{command}: not refused: {text}"));
        }
        if marker.exists() {
            failures.push(format!("{command}: made {}", marker.display()));
        }
    }
    assert_eq!(
        failures,
        Vec::<String>::new(),
        "{args:?}, sandbox {sandbox}"
    );
}

#[test]
fn refused_in_the_default_mode_with_the_sandbox_on() {
    refused_everywhere(&[], true);
}

#[test]
fn refused_in_the_default_mode_with_the_sandbox_off() {
    refused_everywhere(&[], false);
}

#[test]
fn refused_with_git_allowed_and_the_sandbox_on() {
    refused_everywhere(&["--allowedTools", "Bash(git:*)"], true);
}

#[test]
fn refused_with_git_allowed_and_the_sandbox_off() {
    refused_everywhere(&["--allowedTools", "Bash(git:*)"], false);
}

/// The control: where nothing is asked, the same commands make their files.
#[test]
fn the_same_commands_make_their_files_when_nothing_is_checked() {
    let h = Harness::new();
    project(&h, false);
    let attacks = attacks(h.work.path(), h.home.path());
    let commands: Vec<String> = attacks.iter().map(|(command, _)| command.clone()).collect();
    run(&h, &["--permission-mode", "bypassPermissions"], &commands);
    let missing: Vec<&PathBuf> = attacks
        .iter()
        .map(|(_, marker)| marker)
        .filter(|marker| !marker.exists())
        .collect();
    assert_eq!(missing, Vec::<&PathBuf>::new());
}
