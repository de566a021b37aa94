//! cairn's own git calls run no program a repository names.
//!
//! Each test builds a real repository whose configuration points every key git could run a
//! program through at a script that leaves a marker file, shows that plain git does run them
//! (so the trap is armed), then reads the git context the system prompt is built from and
//! checks that no marker appeared and the context is still right.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cairn_context::environment::GitContext;
use cairn_context::git::git_command;
use pretty_assertions::assert_eq;

/// Scripts that leave a marker when run, and the directory the markers land in.
struct Trap {
    _dir: tempfile::TempDir,
    bin: PathBuf,
    markers: PathBuf,
}

impl Trap {
    fn new() -> Trap {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        let markers = dir.path().join("markers");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&markers).unwrap();
        Trap {
            _dir: dir,
            bin,
            markers,
        }
    }

    /// A script named `name` that leaves the marker `name` and succeeds. It reads nothing, so
    /// it never waits on git (as a transport or a long-running filter would).
    fn script(&self, name: &str) -> PathBuf {
        let path = self.bin.join(name);
        let marker = self.markers.join(name);
        std::fs::write(
            &path,
            format!("#!/bin/sh\n: > '{}'\nexit 0\n", marker.display()),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// The markers left so far.
    fn markers(&self) -> BTreeSet<String> {
        std::fs::read_dir(&self.markers)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    fn clear(&self) {
        for entry in std::fs::read_dir(&self.markers).unwrap() {
            std::fs::remove_file(entry.unwrap().path()).unwrap();
        }
    }
}

/// Plain git, as a user would run it (no index writes, so the control leaves the stat data
/// stale for the run under test).
fn plain_git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_AUTHOR_DATE", "1700000000 +0000")
        .env("GIT_COMMITTER_DATE", "1700000000 +0000")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Plain git that must succeed; its stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = plain_git(dir, args);
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

fn set(dir: &Path, key: &str, value: &str) {
    git(dir, &["config", key, value]);
}

/// Sets the file's modification time back to the epoch, so git must read it again.
fn make_stat_stale(path: &Path) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(std::time::SystemTime::UNIX_EPOCH)
        .unwrap();
}

/// A commit on HEAD carrying a (bogus) PGP signature, for `log.showSignature` to verify.
fn commit_signed(dir: &Path, message: &str) {
    let tree = git(dir, &["rev-parse", "HEAD^{tree}"]);
    let parent = git(dir, &["rev-parse", "HEAD"]);
    let object = format!(
        "tree {}\nparent {}\nauthor t <t@example.invalid> 1700000000 +0000\n\
         committer t <t@example.invalid> 1700000000 +0000\n\
         gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\n\
         {message}\n",
        tree.trim(),
        parent.trim()
    );
    let file = dir.join(".git/signed-commit");
    std::fs::write(&file, object).unwrap();
    let id = git(
        dir,
        &["hash-object", "-t", "commit", "-w", file.to_str().unwrap()],
    );
    std::fs::remove_file(&file).unwrap();
    git(dir, &["update-ref", "refs/heads/main", id.trim()]);
}

#[test]
fn a_hostile_repository_configuration_runs_nothing_and_the_context_stays_right() {
    let trap = Trap::new();
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    std::fs::write(dir.join("b.txt"), "same\n").unwrap();
    std::fs::write(dir.join(".gitattributes"), "* filter=x diff=y\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "first commit"]);
    commit_signed(dir, "signed commit");
    std::fs::write(dir.join("a.txt"), "two\n").unwrap();
    std::fs::write(dir.join("new.txt"), "untracked\n").unwrap();

    let expected = GitContext::read(dir).unwrap();
    assert_eq!(expected.branch, "main");
    assert_eq!(expected.main_branch, "main");
    assert_eq!(expected.status, " M a.txt\n?? new.txt");
    let commits: Vec<&str> = expected
        .recent_commits
        .lines()
        .map(|line| line.split_once(' ').unwrap().1)
        .collect();
    assert_eq!(commits, ["signed commit", "first commit"]);
    assert!(
        expected.diff.ends_with("@@ -1 +1 @@\n-one\n+two"),
        "{}",
        expected.diff
    );

    // Every key through which git could start a program, each pointing at its own script.
    let programs = [
        ("core.fsmonitor", "fsmonitor"),
        ("core.pager", "pager"),
        ("pager.status", "pager-status"),
        ("pager.diff", "pager-diff"),
        ("pager.log", "pager-log"),
        ("diff.external", "diff-external"),
        ("diff.y.command", "diff-command"),
        ("diff.y.textconv", "textconv"),
        ("filter.x.clean", "filter-clean"),
        ("filter.x.smudge", "filter-smudge"),
        ("filter.info-driver.process", "filter-process"),
        ("gpg.program", "gpg"),
        ("credential.helper", "credential-helper"),
        ("core.sshCommand", "ssh-command"),
    ];
    for (key, name) in programs {
        set(dir, key, trap.script(name).to_str().unwrap());
    }
    set(dir, "filter.x.required", "true");
    set(dir, "log.showSignature", "true");
    for command in ["status", "diff", "log", "branch", "rev-parse", "config"] {
        let alias = format!("!{}", trap.script(&format!("alias-{command}")).display());
        set(dir, &format!("alias.{command}"), &alias);
    }
    let hooks = trap.bin.join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in ["post-index-change", "reference-transaction", "pre-auto-gc"] {
        let script = trap.script(&format!("hook-{hook}"));
        std::fs::rename(script, hooks.join(hook)).unwrap();
    }
    set(dir, "core.hooksPath", hooks.to_str().unwrap());
    // `.git/info/attributes` outranks `.gitattributes`: b.txt goes through another driver.
    std::fs::write(
        dir.join(".git/info/attributes"),
        "b.txt filter=info-driver\n",
    )
    .unwrap();
    make_stat_stale(&dir.join("a.txt"));
    make_stat_stale(&dir.join("b.txt"));

    // The control: plain git runs the repository's programs.
    // The script fails the process filter's handshake, which stops git: the diff is tried
    // once more without that filter, to reach the diff programs.
    let control: Vec<String> = [
        &["status", "--short"][..],
        &["diff", "HEAD"],
        &["-c", "filter.info-driver.process=", "diff", "HEAD"],
        &["log", "--oneline", "-n", "5"],
    ]
    .iter()
    .map(|args| String::from_utf8_lossy(&plain_git(dir, args).stderr).into_owned())
    .collect();
    let ran = trap.markers();
    for name in [
        "fsmonitor",
        "filter-clean",
        "filter-process",
        "diff-command",
        "gpg",
    ] {
        assert!(
            ran.contains(name),
            "plain git did not run {name}: {ran:?}; {control:?}"
        );
    }
    trap.clear();

    let read = GitContext::read(dir).unwrap();
    assert_eq!(trap.markers(), BTreeSet::new(), "programs cairn's git ran");
    assert_eq!(read, expected);
}

#[test]
fn the_branch_cairn_records_comes_from_git_command_and_runs_nothing() {
    let trap = Trap::new();
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    git(dir, &["init", "-q", "-b", "topic"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", "empty"]);
    set(
        dir,
        "core.fsmonitor",
        trap.script("fsmonitor").to_str().unwrap(),
    );
    set(dir, "core.pager", trap.script("pager").to_str().unwrap());
    let output = git_command(dir)
        .args(["branch", "--show-current"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "topic\n");
    assert_eq!(trap.markers(), BTreeSet::new());
}

#[test]
fn a_filter_driver_named_with_an_equals_sign_is_emptied_too() {
    let trap = Trap::new();
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    git(dir, &["add", "a.txt"]);
    git(dir, &["commit", "-q", "-m", "first"]);
    std::fs::write(dir.join(".git/info/attributes"), "a.txt filter=a=b\n").unwrap();
    set(
        dir,
        "filter.a=b.clean",
        trap.script("odd-filter").to_str().unwrap(),
    );
    std::fs::write(dir.join("a.txt"), "two\n").unwrap();

    plain_git(dir, &["diff", "HEAD"]);
    assert_eq!(trap.markers(), BTreeSet::from(["odd-filter".to_owned()]));
    trap.clear();

    let read = GitContext::read(dir).unwrap();
    assert_eq!(trap.markers(), BTreeSet::new());
    assert_eq!(read.status, " M a.txt");
    assert!(read.diff.ends_with("-one\n+two"), "{}", read.diff);
}

#[test]
fn a_partial_clone_does_not_fetch_missing_objects_through_its_remote() {
    let trap = Trap::new();
    let root = tempfile::tempdir().unwrap();
    let source = root.path().join("source");
    std::fs::create_dir(&source).unwrap();
    git(&source, &["init", "-q", "-b", "main"]);
    set(&source, "uploadpack.allowFilter", "true");
    std::fs::write(source.join("f.txt"), "content\n").unwrap();
    git(&source, &["add", "f.txt"]);
    git(&source, &["commit", "-q", "-m", "only commit"]);
    let clone = root.path().join("clone");
    let url = format!("file://{}", source.display());
    git(
        root.path(),
        &[
            "clone",
            "-q",
            "--filter=blob:none",
            "--no-checkout",
            &url,
            clone.to_str().unwrap(),
        ],
    );
    // The index names f.txt, whose blob was never fetched; the remote now runs a program.
    git(&clone, &["reset", "-q"]);
    let transport = format!("ext::{}", trap.script("ext-transport").display());
    set(&clone, "remote.origin.url", &transport);
    set(&clone, "protocol.ext.allow", "always");

    plain_git(&clone, &["diff", "HEAD"]);
    assert_eq!(trap.markers(), BTreeSet::from(["ext-transport".to_owned()]));
    trap.clear();

    let read = GitContext::read(&clone).unwrap();
    assert_eq!(trap.markers(), BTreeSet::new());
    assert_eq!(read.branch, "main");
    assert_eq!(read.status, " D f.txt");
    // Without the blob there is no diff to show.
    assert_eq!(read.diff, "");
}

#[test]
fn a_submodule_is_not_looked_into_so_its_own_filters_do_not_run() {
    let trap = Trap::new();
    let root = tempfile::tempdir().unwrap();
    let library = root.path().join("library");
    std::fs::create_dir(&library).unwrap();
    git(&library, &["init", "-q", "-b", "main"]);
    std::fs::write(library.join("lib.txt"), "library\n").unwrap();
    git(&library, &["add", "lib.txt"]);
    git(&library, &["commit", "-q", "-m", "library"]);
    let project = root.path().join("project");
    std::fs::create_dir(&project).unwrap();
    git(&project, &["init", "-q", "-b", "main"]);
    git(
        &project,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            library.to_str().unwrap(),
            "library",
        ],
    );
    git(&project, &["commit", "-q", "-m", "add the library"]);
    // The submodule's own configuration names a filter the project's does not.
    let checkout = project.join("library");
    set(
        &checkout,
        "filter.sub.clean",
        trap.script("submodule-filter").to_str().unwrap(),
    );
    let attributes = git(&checkout, &["rev-parse", "--git-path", "info/attributes"]);
    let attributes = checkout.join(attributes.trim());
    std::fs::create_dir_all(attributes.parent().unwrap()).unwrap();
    std::fs::write(attributes, "* filter=sub\n").unwrap();
    make_stat_stale(&checkout.join("lib.txt"));

    plain_git(&project, &["status", "--short"]);
    assert_eq!(
        trap.markers(),
        BTreeSet::from(["submodule-filter".to_owned()])
    );
    trap.clear();

    let read = GitContext::read(&project).unwrap();
    assert_eq!(trap.markers(), BTreeSet::new());
    assert_eq!(read.status, "");
    assert_eq!(
        read.recent_commits.split_once(' ').unwrap().1,
        "add the library"
    );
}

/// The configuration need not be the repository's own: a `.git/commondir` naming a directory
/// whose `config` sets `core.fsmonitor` and a pager makes plain git run them (issue 21). cairn's
/// overrides are command-line configuration, which outranks that file too.
#[test]
fn a_commondir_pointing_at_a_planted_configuration_runs_nothing() {
    let trap = Trap::new();
    let planted = tempfile::tempdir().unwrap();
    git(planted.path(), &["init", "-q", "--bare", "common"]);
    let common = planted.path().join("common");
    let config = common.join("config");
    let config = config.to_str().unwrap();
    git(
        planted.path(),
        &["config", "-f", config, "core.bare", "false"],
    );
    let fsmonitor = trap.script("fsmonitor");
    git(
        planted.path(),
        &[
            "config",
            "-f",
            config,
            "core.fsmonitor",
            fsmonitor.to_str().unwrap(),
        ],
    );
    let pager = trap.script("pager");
    git(
        planted.path(),
        &[
            "config",
            "-f",
            config,
            "core.pager",
            pager.to_str().unwrap(),
        ],
    );
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    std::fs::write(
        dir.join(".git/commondir"),
        format!("{}\n", common.display()),
    )
    .unwrap();
    git(dir, &["add", "a.txt"]);
    trap.clear();
    // Armed: plain git runs the planted fsmonitor.
    plain_git(dir, &["status", "--short"]);
    assert!(trap.markers().contains("fsmonitor"), "{:?}", trap.markers());
    trap.clear();
    let read = GitContext::read(dir).unwrap();
    assert_eq!(read.status, "A  a.txt");
    let branch = git_command(dir)
        .args(["branch", "--show-current"])
        .output()
        .unwrap();
    assert!(branch.status.success(), "{branch:?}");
    assert_eq!(trap.markers(), BTreeSet::new());
}
