//! Instruction-file imports from outside the project, through the real binary: in `cairn -p`
//! they are left out of every request with one warning naming each and how to allow it; with
//! the user's approval (cairn's approvals file, Claude Code's record, or the variable for one
//! run) they go in; nothing in the project can approve them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::{Path, PathBuf};
use std::process::Output;

use cairn_test_support::Reply;
use serde_json::json;

mod support;
use support::Harness;

const SECRET: &str = "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn symlink(target: &Path, link: &Path) {
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, link).unwrap();
}

fn real(path: &Path) -> PathBuf {
    path.canonicalize().unwrap()
}

/// Runs `cairn -p` once with `extra_env`, the model answering "ok".
fn ask(h: &Harness, extra_env: &[(&str, &str)], args: &[&str]) -> Output {
    h.server.push(Reply::text("ok"));
    let mut command = h.command();
    command.env_remove("CAIRN_ALLOW_EXTERNAL_IMPORTS");
    for (name, value) in extra_env {
        command.env(name, value);
    }
    let output = command.args(["-p", "hello"]).args(args).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    output
}

/// Whether any request the model server received holds `text`.
fn sent(h: &Harness, text: &str) -> bool {
    h.server
        .requests()
        .iter()
        .any(|request| request.body.to_string().contains(text))
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// The warning line about skipped imports, which must be the only one.
fn import_warning(output: &Output) -> String {
    let stderr = stderr(output);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("outside this project"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    lines[0].to_string()
}

/// One way a project's instruction files reach a secret outside it: lays out the files and
/// returns what the warning must name, `(secret's real path, "imported by"/"linked from", file)`.
struct Escape {
    name: &'static str,
    lay_out: fn(&Harness) -> (PathBuf, &'static str, PathBuf),
}

const ESCAPES: &[Escape] = &[
    Escape {
        name: "a home path",
        lay_out: |h| {
            let key = h.home.path().join(".ssh/id_ed25519");
            write(&key, SECRET);
            write(&h.path("CLAUDE.md"), "Deploy keys: @~/.ssh/id_ed25519");
            (real(&key), "imported by", real(&h.path("CLAUDE.md")))
        },
    },
    Escape {
        name: "an absolute path",
        lay_out: |h| {
            let token = h.home.path().join(".config/gh/hosts.yml");
            write(&token, SECRET);
            write(
                &h.path("AGENTS.md"),
                &format!("Read @{} first.", token.display()),
            );
            (real(&token), "imported by", real(&h.path("AGENTS.md")))
        },
    },
    Escape {
        name: "a symlink in the project",
        lay_out: |h| {
            let key = h.home.path().join(".aws/credentials");
            write(&key, SECRET);
            symlink(&key, &h.path("docs/setup.md"));
            write(&h.path(".claude/CLAUDE.md"), "@../docs/setup.md");
            (
                real(&key),
                "imported by",
                real(&h.path(".claude")).join("CLAUDE.md"),
            )
        },
    },
    Escape {
        name: "an instruction file that is a symlink",
        lay_out: |h| {
            let key = h.home.path().join(".ssh/id_rsa");
            write(&key, SECRET);
            symlink(&key, &h.path("CLAUDE.local.md"));
            (
                real(&key),
                "linked from",
                real(h.work.path()).join("CLAUDE.local.md"),
            )
        },
    },
    Escape {
        name: "an import of an import",
        lay_out: |h| {
            let netrc = h.home.path().join(".netrc.md");
            write(&netrc, SECRET);
            write(&h.path("CLAUDE.md"), "@docs/style.md");
            write(&h.path("docs/style.md"), "Style, and @~/.netrc.md");
            (
                real(&netrc),
                "imported by",
                real(h.work.path()).join("docs/style.md"),
            )
        },
    },
];

#[test]
fn print_mode_leaves_every_outside_import_out_and_names_it_once() {
    for escape in ESCAPES {
        let h = Harness::new();
        let (secret, how, by) = (escape.lay_out)(&h);
        let output = ask(&h, &[], &[]);
        assert_eq!(h.server.requests().len(), 1, "{}", escape.name);
        assert!(!sent(&h, SECRET), "{}: the secret was sent", escape.name);
        let warning = import_warning(&output);
        assert!(
            warning.starts_with("warning: ")
                && warning.contains(&format!("{} ({how} {})", secret.display(), by.display()))
                && warning.contains("CAIRN_ALLOW_EXTERNAL_IMPORTS=1"),
            "{}: {warning}",
            escape.name
        );
    }
}

#[test]
fn the_projects_own_imports_go_in_without_a_warning() {
    let h = Harness::new();
    write(&h.path("CLAUDE.md"), "@docs/conventions.md");
    write(&h.path("docs/conventions.md"), "Use tabs, never spaces.");
    write(&h.home.path().join(".claude/CLAUDE.md"), "@~/.claude/me.md");
    write(&h.home.path().join(".claude/me.md"), "Call me Sam.");
    let output = ask(&h, &[], &[]);
    assert!(sent(&h, "Use tabs, never spaces."));
    assert!(sent(&h, "Call me Sam."));
    assert!(
        !stderr(&output).contains("outside this project"),
        "{output:?}"
    );
}

#[test]
fn the_variable_includes_them_for_one_run() {
    let h = Harness::new();
    (ESCAPES[0].lay_out)(&h);
    let output = ask(&h, &[("CAIRN_ALLOW_EXTERNAL_IMPORTS", "1")], &[]);
    assert!(sent(&h, SECRET));
    assert!(
        !stderr(&output).contains("outside this project"),
        "{output:?}"
    );
    // The next run, without it, leaves them out again.
    ask(&h, &[], &[]);
    let last = h.server.requests().pop().unwrap();
    assert!(!last.body.to_string().contains(SECRET));
}

#[test]
fn an_approval_in_cairns_state_includes_exactly_the_approved_file() {
    let h = Harness::new();
    let (secret, _, _) = (ESCAPES[0].lay_out)(&h);
    let other = h.home.path().join("notes/other.md");
    write(&other, "OTHER NOTES");
    write(
        &h.path("CLAUDE.md"),
        "Deploy keys: @~/.ssh/id_ed25519 and @~/notes/other.md",
    );
    let approvals = json!({"projects": {
        real(h.work.path()).display().to_string(): {
            "approvedExternalImports": [secret.display().to_string()]
        }
    }});
    write(
        &h.cairn_home().join("approvals.json"),
        &approvals.to_string(),
    );
    let output = ask(&h, &[], &[]);
    assert!(sent(&h, SECRET));
    assert!(!sent(&h, "OTHER NOTES"));
    let warning = import_warning(&output);
    assert!(
        warning.contains(&real(&other).display().to_string()),
        "{warning}"
    );
    assert!(
        !warning.contains(&secret.display().to_string()),
        "{warning}"
    );
}

#[test]
fn claude_codes_record_in_the_users_claude_json_includes_them() {
    let h = Harness::new();
    (ESCAPES[0].lay_out)(&h);
    let record = json!({"projects": {
        real(h.work.path()).display().to_string(): {"hasClaudeMdExternalIncludesApproved": true}
    }});
    write(&h.home.path().join(".claude.json"), &record.to_string());
    ask(&h, &[], &[]);
    assert!(sent(&h, SECRET));
}

#[test]
fn nothing_in_the_project_can_approve_its_own_imports() {
    let h = Harness::new();
    let (secret, _, _) = (ESCAPES[0].lay_out)(&h);
    let work = real(h.work.path()).display().to_string();
    // The settings' env, a project-level .claude.json with Claude Code's record, and an
    // approvals file of cairn's shape inside the project.
    h.settings(json!({"env": {"CAIRN_ALLOW_EXTERNAL_IMPORTS": "1"}}));
    write(
        &h.path(".claude.json"),
        &json!({"projects": {work.clone(): {"hasClaudeMdExternalIncludesApproved": true}}})
            .to_string(),
    );
    write(
        &h.path(".cairn/approvals.json"),
        &json!({"projects": {work: {"approvedExternalImports": [secret.display().to_string()]}}})
            .to_string(),
    );
    let output = ask(&h, &[], &[]);
    assert!(!sent(&h, SECRET));
    import_warning(&output);
}

#[test]
fn stream_json_keeps_stdout_clean_and_warns_on_stderr() {
    let h = Harness::new();
    (ESCAPES[0].lay_out)(&h);
    let output = ask(&h, &[], &["--output-format", "stream-json", "--verbose"]);
    assert!(!sent(&h, SECRET));
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    for line in stdout.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(!line.contains(SECRET), "{line}");
        assert!(value.get("type").is_some(), "{line}");
    }
    import_warning(&output);
}

#[test]
fn debug_prompt_shows_the_skipped_import_as_skipped() {
    let h = Harness::new();
    let (secret, how, by) = (ESCAPES[0].lay_out)(&h);
    let output = h
        .command()
        .env_remove("CAIRN_ALLOW_EXTERNAL_IMPORTS")
        .args(["debug", "prompt"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(!stdout.contains(SECRET), "{stdout}");
    let expected = format!(
        "=== skipped imports: outside this project and not approved ===\n{} ({how} {})\n",
        secret.display(),
        by.display()
    );
    assert!(stdout.contains(&expected), "{stdout}");
    assert!(
        stdout.contains("Deploy keys: @~/.ssh/id_ed25519"),
        "{stdout}"
    );
}
