//! `cairn -p` in a repository whose configuration, and cairn's own environment, name programs
//! for git to run: cairn's own git calls (the prompt's git context, the session's branch) run
//! none of them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;

mod support;
use support::{Harness, WAIT};

/// Writes an executable script `name` under `bin` that leaves the marker `name` in `markers`.
fn marker_script(bin: &Path, markers: &Path, name: &str) -> PathBuf {
    let path = bin.join(name);
    let marker = markers.join(name);
    std::fs::write(
        &path,
        format!("#!/bin/sh\n: > '{}'\nexit 0\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn markers(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Plain git in `dir`, with `env` added; no index writes.
fn plain_git(dir: &Path, args: &[&str], env: &[(&str, String)]) -> Output {
    Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .envs(env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn git(dir: &Path, args: &[&str]) {
    let output = plain_git(dir, args, &[]);
    assert!(output.status.success(), "git {args:?}: {output:?}");
}

#[test]
fn print_mode_in_a_hostile_repository_runs_none_of_its_programs() {
    let h = Harness::new();
    let trap = tempfile::tempdir().unwrap();
    let bin = trap.path().join("bin");
    let marks = trap.path().join("markers");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&marks).unwrap();
    let script = |name: &str| {
        marker_script(&bin, &marks, name)
            .to_str()
            .unwrap()
            .to_owned()
    };

    let work = h.work.path();
    git(work, &["init", "-q", "-b", "main"]);
    std::fs::write(h.path("a.txt"), "one\n").unwrap();
    std::fs::write(h.path(".gitattributes"), "a.txt filter=x\n").unwrap();
    git(work, &["add", "."]);
    git(work, &["commit", "-q", "-m", "first commit"]);
    std::fs::write(h.path("a.txt"), "two\n").unwrap();

    for (key, name) in [
        ("core.fsmonitor", "fsmonitor"),
        ("core.pager", "pager"),
        ("diff.external", "diff-external"),
        ("filter.x.clean", "filter-clean"),
        ("filter.x.smudge", "filter-smudge"),
        ("alias.status", "alias-status"),
    ] {
        git(work, &["config", key, &script(name)]);
    }
    let hooks = bin.join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::rename(script("post-index-change"), hooks.join("post-index-change")).unwrap();
    git(work, &["config", "core.hooksPath", hooks.to_str().unwrap()]);
    // cairn's own environment names programs too.
    let environment = [
        ("GIT_EXTERNAL_DIFF", script("env-external-diff")),
        ("GIT_PAGER", script("env-pager")),
        ("GIT_SSH_COMMAND", script("env-ssh")),
        ("GIT_CONFIG_COUNT", "1".to_owned()),
        ("GIT_CONFIG_KEY_0", "core.fsmonitor".to_owned()),
        ("GIT_CONFIG_VALUE_0", script("env-config-fsmonitor")),
        // Not a program, but the one the command line's overrides cannot undo: git writes
        // its trace to this file.
        (
            "GIT_TRACE",
            marks.join("env-trace").to_str().unwrap().to_owned(),
        ),
    ];

    // The control: plain git with that environment runs them.
    plain_git(work, &["status", "--short"], &environment);
    plain_git(work, &["diff", "HEAD"], &environment);
    let ran = markers(&marks);
    // (The environment's fsmonitor outranks the repository's.)
    for name in [
        "env-config-fsmonitor",
        "filter-clean",
        "env-external-diff",
        "env-trace",
    ] {
        assert!(ran.contains(name), "plain git did not run {name}: {ran:?}");
    }
    for entry in std::fs::read_dir(&marks).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }

    h.server.push(Reply::text("Looked."));
    let output = h
        .command()
        .args(["-p", "what changed?"])
        .envs(environment.iter().map(|(name, value)| (name, value)))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(markers(&marks), BTreeSet::new(), "programs cairn's git ran");

    let request = &h.server.wait_for_requests(1, WAIT)[0];
    let system = request.body["system"].to_string();
    for expected in [
        "Current branch: main",
        "Status:\\n M a.txt",
        "-one\\n+two",
        "first commit",
    ] {
        assert!(system.contains(expected), "{expected:?} not in {system}");
    }
}
