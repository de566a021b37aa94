#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

//! Paths outside the workspace: found through `..`, `~`, `$HOME`, `cd`, redirections and
//! symlinks, and not reported for paths that only look far away.

mod bash_support;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use bash_support::Sandbox;
use cairn_shell::BashVerdict;
use pretty_assertions::assert_eq;

/// A sandbox whose workspace holds `link` → `base/outside` and `creds` → `base/outside/secret`.
fn with_symlinks() -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::new();
    let outside = sandbox.base.join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret"), "token").unwrap();
    symlink(&outside, sandbox.workspace.join("link")).unwrap();
    symlink(outside.join("secret"), sandbox.workspace.join("creds")).unwrap();
    (sandbox, outside)
}

fn outside_paths(sandbox: &Sandbox, command: &str) -> Vec<PathBuf> {
    sandbox.analyze(command).outside_paths
}

#[test]
fn a_symlink_out_of_the_workspace_is_followed() {
    let (sandbox, outside) = with_symlinks();
    let analysis = sandbox.analyze("cat link/secret");
    assert_eq!(analysis.outside_paths, [outside.join("secret")]);
    assert_eq!(analysis.verdict, BashVerdict::NeedsApproval);
    assert_eq!(
        analysis.reasons,
        [format!(
            "reads {} outside the workspace",
            outside.join("secret").display()
        )]
    );
    assert_eq!(
        outside_paths(&sandbox, "cat creds"),
        [outside.join("secret")]
    );
    // `..` after a symlink is the parent of the symlink's target, as the kernel resolves it.
    assert_eq!(
        outside_paths(&sandbox, "head -n 1 ./link/../outside/secret"),
        [outside.join("secret")]
    );
    assert_eq!(
        outside_paths(&sandbox, "head -n 1 link/../link/secret"),
        [sandbox.base.join("link/secret")]
    );
}

#[test]
fn files_that_do_not_exist_yet_resolve_through_the_symlinked_directory() {
    let (sandbox, outside) = with_symlinks();
    let analysis = sandbox.analyze("echo x > link/new/file.txt");
    assert_eq!(analysis.outside_paths, [outside.join("new/file.txt")]);
    assert_eq!(
        analysis.reasons,
        [format!(
            "writes to {} outside the workspace",
            outside.join("new/file.txt").display()
        )]
    );
}

#[test]
fn cd_is_followed_within_the_command_line() {
    let (sandbox, outside) = with_symlinks();
    assert_eq!(
        outside_paths(&sandbox, "cd link && cat secret"),
        [outside.clone(), outside.join("secret")]
    );
    assert_eq!(
        outside_paths(&sandbox, "cd src && cat ../Cargo.toml"),
        Vec::<PathBuf>::new()
    );
    // A subshell's cd does not outlive it, and neither does a pipeline stage's.
    assert_eq!(
        outside_paths(&sandbox, "(cd link) && cat secret"),
        vec![outside.clone()]
    );
    assert_eq!(outside_paths(&sandbox, "cd link | cat secret"), [outside]);
    // A path known only at run time may be anywhere: no rule can vouch for it.
    let unknown = sandbox.analyze("cd \"$DIR\" && cat notes");
    assert_eq!(unknown.verdict, BashVerdict::Unanalysable);
    assert_eq!(
        unknown.reasons,
        [
            "reads a path not known until run time ($DIR)",
            "reads a path not known until run time (notes (the directory is not known until run time))",
        ]
    );
}

#[test]
fn dot_dot_tilde_and_home_resolve() {
    let sandbox = Sandbox::new();
    let depth = sandbox.workspace.components().count() - 1;
    let escape = format!("cat {}etc/shadow", "../".repeat(depth));
    assert_eq!(
        outside_paths(&sandbox, &escape),
        [PathBuf::from("/etc/shadow")]
    );
    assert_eq!(
        outside_paths(
            &sandbox,
            "cat ../../../../../../../../../../../../etc/shadow"
        ),
        [PathBuf::from("/etc/shadow")]
    );
    assert_eq!(
        outside_paths(&sandbox, "cat ~/notes"),
        [sandbox.home.join("notes")]
    );
    assert_eq!(
        outside_paths(&sandbox, "cat \"$HOME/notes\""),
        [sandbox.home.join("notes")]
    );
    assert_eq!(
        outside_paths(&sandbox, "cat ${HOME}/notes"),
        [sandbox.home.join("notes")]
    );
    // Quoted, a tilde is just a character.
    assert_eq!(
        outside_paths(&sandbox, "cat '~/notes'"),
        Vec::<PathBuf>::new()
    );
    assert_eq!(
        outside_paths(&sandbox, "cat ../project/src/lib.rs"),
        Vec::<PathBuf>::new()
    );
}

#[test]
fn redirections_are_reads_and_writes() {
    let (sandbox, outside) = with_symlinks();
    let analysis = sandbox.analyze("sort < ../../outside/secret > ../../outside/sorted 2>&1");
    assert_eq!(
        analysis.outside_paths,
        [outside.join("secret"), outside.join("sorted")]
    );
    assert_eq!(
        analysis.reasons,
        [
            format!(
                "reads {} outside the workspace",
                outside.join("secret").display()
            ),
            format!(
                "writes to {} outside the workspace",
                outside.join("sorted").display()
            ),
        ]
    );
    for harmless in [
        "ls > /dev/null",
        "ls 2>/dev/null >&2",
        "cat /dev/null",
        "echo x > /dev/stderr",
        "ls 2>&1 | cat",
    ] {
        assert_eq!(
            sandbox.analyze(harmless).verdict,
            BashVerdict::ReadOnly,
            "{harmless}"
        );
        assert_eq!(
            outside_paths(&sandbox, harmless),
            Vec::<PathBuf>::new(),
            "{harmless}"
        );
    }
}

#[test]
fn every_workspace_root_counts_as_inside() {
    let mut sandbox = Sandbox::new();
    let extra = sandbox.base.join("extra");
    fs::create_dir_all(&extra).unwrap();
    assert_eq!(
        outside_paths(&sandbox, "cat ../../extra/notes"),
        [extra.join("notes")]
    );
    sandbox.roots.push(extra);
    let analysis = sandbox.analyze("cat ../../extra/notes");
    assert_eq!(
        (analysis.verdict, analysis.outside_paths),
        (BashVerdict::ReadOnly, vec![])
    );
}

#[test]
fn a_working_directory_or_root_given_through_a_symlink_is_resolved() {
    let mut sandbox = Sandbox::new();
    let alias = sandbox.base.join("alias");
    symlink(&sandbox.workspace, &alias).unwrap();
    let analysis = sandbox.analyze_in(&alias.join("src"), "cat ../Cargo.toml && rm -rf ..");
    assert_eq!(analysis.verdict, BashVerdict::Destructive);
    assert_eq!(analysis.outside_paths, Vec::<PathBuf>::new());
    sandbox.roots = vec![alias];
    let workspace = sandbox.workspace.clone();
    assert_eq!(
        sandbox.analyze_in(&workspace, "cat src/lib.rs").verdict,
        BashVerdict::ReadOnly
    );
}

#[test]
fn arguments_of_unknown_commands_are_checked_only_when_they_are_plainly_paths() {
    let sandbox = Sandbox::new();
    assert_eq!(
        outside_paths(&sandbox, "make -C /etc --file=/etc/Makefile target"),
        [PathBuf::from("/etc"), PathBuf::from("/etc/Makefile")]
    );
    assert_eq!(
        outside_paths(&sandbox, "cargo test -- --nocapture"),
        Vec::<PathBuf>::new()
    );
    assert_eq!(
        outside_paths(&sandbox, "echo /etc/passwd"),
        Vec::<PathBuf>::new()
    );
}

#[test]
fn destructive_targets_are_judged_after_resolution() {
    let (sandbox, _) = with_symlinks();
    let home_link = sandbox.workspace.join("home-link");
    symlink(&sandbox.home, &home_link).unwrap();
    assert_eq!(
        sandbox.analyze("rm -rf home-link/").verdict,
        BashVerdict::Destructive
    );
    assert_eq!(
        sandbox.analyze("rm -rf src/..").verdict,
        BashVerdict::Destructive
    );
    assert_eq!(
        sandbox.analyze("rm -rf src").verdict,
        BashVerdict::NeedsApproval
    );
    let in_src: &Path = &sandbox.workspace.join("src");
    assert_eq!(
        sandbox.analyze_in(in_src, "rm -rf *").verdict,
        BashVerdict::NeedsApproval
    );
    assert_eq!(
        sandbox.analyze_in(in_src, "rm -rf ../*").verdict,
        BashVerdict::Destructive
    );
}
