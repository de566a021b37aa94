//! Issue 21, point 4, through the real binary in `-p`: a model that writes `.git/commondir`
//! (or a nested `.git` file) pointing at a directory whose `config` sets `core.fsmonitor`
//! would have that program run at the user's next `git status`, outside any sandbox. Every
//! spelling is refused, with the sandbox on and with `sandbox.enabled: false`; what the
//! analysis cannot see (a script the rules allow) is undone by the sandbox when the command
//! ends, and said; and `git add`/`git commit` still work in the sandbox. After each attempt
//! the user's own `git status` runs in the project, and the planted program must not run.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]
#![allow(clippy::print_stderr, reason = "a skipped test says why")]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cairn_test_support::Reply;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT};

/// The attacker's directory, outside the project: a repository whose configuration runs a
/// program (`fsmonitor.sh`, which leaves `MARKER`) from any `git status` that uses it.
struct Planted {
    dir: tempfile::TempDir,
}

impl Planted {
    fn new() -> Planted {
        let dir = tempfile::tempdir().unwrap();
        let planted = Planted { dir };
        let repo = planted.repo();
        let script = planted.dir.path().join("fsmonitor.sh");
        std::fs::write(
            &script,
            format!("#!/bin/sh\ntouch '{}'\n", planted.marker().display()),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        user_git(planted.dir.path(), &["init", "-q", "--bare", "planted"]);
        user_git(
            planted.dir.path(),
            &["config", "-f", "planted/config", "core.bare", "false"],
        );
        let script = script.display().to_string();
        user_git(
            planted.dir.path(),
            &["config", "-f", "planted/config", "core.fsmonitor", &script],
        );
        assert!(repo.join("HEAD").is_file());
        planted
    }

    fn repo(&self) -> PathBuf {
        self.dir.path().join("planted")
    }

    fn marker(&self) -> PathBuf {
        self.dir.path().join("MARKER")
    }
}

/// The user's git, as they would run it: their own HOME (empty here), no system config.
fn user_git(dir: &Path, args: &[&str]) -> Output {
    let home = dir.join(".user-home");
    std::fs::create_dir_all(&home).unwrap();
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", &home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap()
}

/// A project that is a git repository with a commit, a `src/` and a file holding the planted
/// path (for `cp` and `ln`); the sandbox on or off in the user's settings.
fn project(planted: &Planted, sandbox: bool) -> Harness {
    let h = Harness::new();
    let git = |args: &[&str]| {
        let output = user_git(h.work.path(), args);
        assert!(output.status.success(), "git {args:?}: {output:?}");
    };
    git(&["init", "-q"]);
    git(&["config", "user.name", "t"]);
    git(&["config", "user.email", "t@t"]);
    std::fs::create_dir_all(h.path("src")).unwrap();
    std::fs::write(h.path("src/lib.rs"), "\n").unwrap();
    std::fs::write(
        h.path("notes.txt"),
        format!("{}\n", planted.repo().display()),
    )
    .unwrap();
    git(&["add", "src/lib.rs"]);
    git(&["commit", "-qm", "first"]);
    let settings = h.home.path().join(".claude");
    std::fs::create_dir_all(&settings).unwrap();
    std::fs::write(
        settings.join("settings.json"),
        json!({"sandbox": {"enabled": sandbox}}).to_string(),
    )
    .unwrap();
    h
}

/// Runs `cairn -p` with the model making one call; returns the output and the tool result.
fn run_call(h: &Harness, name: &str, input: Value, args: &[&str]) -> (Output, Value) {
    h.server.push(Reply::tool_use("call", name, input));
    h.server.push(Reply::text("done"));
    let before = h.server.requests().len();
    let output = h.command().args(["-p", "go"]).args(args).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let request = &h.server.wait_for_requests(before + 2, WAIT)[before + 1];
    let messages = request.body["messages"].as_array().unwrap();
    let result = messages.last().unwrap()["content"][0].clone();
    (output, result)
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| result["content"].to_string())
}

/// The user runs `git status` in the project and in `src/`: the planted program must not run.
fn assert_user_git_runs_nothing(h: &Harness, planted: &Planted, what: &str) {
    for dir in [h.work.path().to_path_buf(), h.path("src")] {
        let _ = user_git(&dir, &["status", "--short"]);
    }
    assert!(
        !planted.marker().exists(),
        "the planted fsmonitor ran after {what}"
    );
}

/// The attack's spellings: `(tool, input)`.
fn spellings(planted: &Planted) -> Vec<(&'static str, Value)> {
    let repo = planted.repo().display().to_string();
    vec![
        (
            "Bash",
            json!({"command": format!("echo {repo} > .git/commondir")}),
        ),
        (
            "Bash",
            json!({"command": format!("printf '%s\\n' {repo} | tee .git/commondir")}),
        ),
        ("Bash", json!({"command": "cp notes.txt .git/commondir"})),
        ("Bash", json!({"command": "ln notes.txt .git/commondir"})),
        (
            "Bash",
            json!({"command": "cd .git && cat ../notes.txt > commondir"}),
        ),
        (
            "Bash",
            json!({"command": format!("printf 'gitdir: {repo}' > src/.git")}),
        ),
        (
            "Bash",
            json!({"command": format!("git init -q --separate-git-dir={repo} src")}),
        ),
        (
            "Write",
            json!({"file_path": ".git/commondir", "content": format!("{repo}\n")}),
        ),
        (
            "Write",
            json!({"file_path": "src/.git", "content": format!("gitdir: {repo}\n")}),
        ),
    ]
}

const RULES: &str = "Edit,Write,Bash(echo:*),Bash(printf:*),Bash(cp:*),Bash(ln:*),\
                     Bash(cd:*),Bash(cat:*),Bash(tee:*),Bash(git:*)";

fn refused_in_every_spelling(sandbox: bool) {
    let planted = Planted::new();
    // The attack works on this machine when nothing stops it: the test can fail.
    let scratch = tempfile::tempdir().unwrap();
    user_git(scratch.path(), &["init", "-q"]);
    std::fs::write(
        scratch.path().join(".git/commondir"),
        format!("{}\n", planted.repo().display()),
    )
    .unwrap();
    user_git(scratch.path(), &["status"]);
    assert!(
        planted.marker().exists(),
        "the planted fsmonitor runs from commondir"
    );
    std::fs::remove_file(planted.marker()).unwrap();

    let h = project(&planted, sandbox);
    for (tool, input) in spellings(&planted) {
        let what = format!("{tool} {input}");
        for mode in ["default", "acceptEdits"] {
            let (output, result) = run_call(
                &h,
                tool,
                input.clone(),
                &["--permission-mode", mode, "--allowedTools", RULES],
            );
            if sandbox
                && String::from_utf8_lossy(&output.stderr).contains("the sandbox is not available")
            {
                eprintln!("skipped: this kernel has no Landlock");
                return;
            }
            assert_eq!(result["is_error"], json!(true), "{mode}: {what}: {result}");
            assert!(
                text_of(&result).contains("would change"),
                "{mode}: {what}: {result}"
            );
            assert!(!h.path(".git/commondir").exists(), "{mode}: {what}");
            assert!(!h.path("src/.git").exists(), "{mode}: {what}");
            assert_user_git_runs_nothing(&h, &planted, &what);
        }
    }
}

#[test]
fn the_commondir_attack_is_refused_in_every_spelling_with_the_sandbox() {
    refused_in_every_spelling(true);
}

#[test]
fn the_commondir_attack_is_refused_in_every_spelling_without_the_sandbox() {
    refused_in_every_spelling(false);
}

/// A script the rules allow, whose contents the analysis cannot see: only the sandbox stands
/// between it and git's files. It commits, then writes `commondir`, an alternates file and a
/// nested `.git` file, which cairn undoes and reports, and a worktree's existing `commondir`,
/// which the sandbox keeps read-only; the commit stays.
#[test]
fn the_sandbox_undoes_what_a_script_did_to_git_files_and_git_still_commits() {
    let planted = Planted::new();
    let h = project(&planted, true);
    let repo = planted.repo().display().to_string();
    let wt = user_git(h.work.path(), &["worktree", "add", "-q", "wt"]);
    assert!(wt.status.success(), "{wt:?}");
    std::fs::write(
        h.path("attack.sh"),
        format!(
            "echo more >> src/lib.rs\n\
             git add src/lib.rs && git commit -qm second && echo committed\n\
             echo {repo} > .git/commondir\n\
             echo {repo}/objects > .git/objects/info/alternates\n\
             echo {repo} > .git/worktrees/wt/commondir 2>/dev/null || echo read-only\n\
             mkdir -p src/deep && printf 'gitdir: {repo}' > src/deep/.git\n"
        ),
    )
    .unwrap();
    let (output, result) = run_call(
        &h,
        "Bash",
        json!({"command": "sh attack.sh"}),
        &["--allowedTools", "Bash(sh attack.sh)"],
    );
    if String::from_utf8_lossy(&output.stderr).contains("the sandbox is not available") {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let text = text_of(&result);
    for said in [
        "The sandbox",
        ".git/commondir",
        "alternates",
        "src/deep/.git",
    ] {
        assert!(text.contains(said), "{said}: {text}");
    }
    assert!(!h.path(".git/commondir").exists());
    assert!(!h.path(".git/objects/info/alternates").exists());
    assert!(!h.path("src/deep/.git").exists());
    assert_eq!(
        std::fs::read_to_string(h.path(".git/worktrees/wt/commondir")).unwrap(),
        "../..\n"
    );
    assert!(
        text.contains("committed"),
        "git commit works in the sandbox: {text}"
    );
    let log = user_git(h.work.path(), &["log", "--format=%s"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout), "second\nfirst\n");
    for dir in ["wt", "src/deep"] {
        let _ = user_git(&h.path(dir), &["status"]);
    }
    assert_user_git_runs_nothing(&h, &planted, "the script");
    // An ordinary command afterwards, in a project with a linked worktree and a `.git` set
    // aside, gets no note: only changes are reported.
    let (_, quiet) = run_call(
        &h,
        "Bash",
        json!({"command": "git status --short && echo listed"}),
        &["--allowedTools", "Bash(git status:*)"],
    );
    let quiet = text_of(&quiet);
    assert!(quiet.contains("listed"), "{quiet}");
    assert!(!quiet.contains("The sandbox"), "{quiet}");
}

/// The issue's own attack: `git grep --open` (git's abbreviation of
/// `--open-files-in-pager`) runs a shell command that writes `commondir`, with no rule at all.
/// Whether the analysis refuses it or the sandbox runs it and undoes the write, the user's
/// `git status` afterwards runs nothing.
#[test]
fn the_git_grep_pager_attack_leaves_no_commondir_behind_in_the_sandbox() {
    let planted = Planted::new();
    let h = project(&planted, true);
    std::fs::write(h.path("src/x.txt"), "x\n").unwrap();
    let (output, result) = run_call(
        &h,
        "Bash",
        json!({"command": "git grep --no-index --open=\"sh -c 'cat notes.txt > .git/commondir'\" -e x"}),
        &[],
    );
    if String::from_utf8_lossy(&output.stderr).contains("the sandbox is not available") {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let text = text_of(&result);
    let refused = result["is_error"] == json!(true) && text.contains("cairn -p");
    assert!(
        refused || text.contains("The sandbox removed"),
        "refused, or run and undone: {text}"
    );
    assert!(!h.path(".git/commondir").exists(), "{text}");
    assert_user_git_runs_nothing(&h, &planted, "git grep --open");
}
