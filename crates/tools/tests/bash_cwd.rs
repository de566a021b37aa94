//! Where the next `Bash` command runs, against commands that try to make cairn record another
//! directory than the one the shell is really in: redefining `pwd`, `builtin`, `command` or
//! `cd`, replacing or removing the exit trap, `exec`ing another program, deleting what the
//! trap uses, and leaving the workspace.
//!
//! Each case checks the truth twice: what [`cairn_tools::ShellRegistry`] reports (what the
//! permission gate judges relative paths against) and where a fresh command really runs
//! (`pwd -P` in a new shell).

// Helpers outside #[test] functions count as library code to clippy; here they are test code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bash_common;

use std::path::{Path, PathBuf};

use bash_common::{call, text};
use cairn_tools::{ToolContext, ToolOutput, ToolRegistry, WorkspaceRoots};
use pretty_assertions::assert_eq;
use serde_json::json;

/// A project with `sub/` and `decoy/` in it, a directory outside it holding `secret.txt`, and
/// a registry whose workspace is the project plus `added`, a directory added to it.
struct Shell {
    _dirs: [tempfile::TempDir; 3],
    project: PathBuf,
    outside: PathBuf,
    added: PathBuf,
    registry: ToolRegistry,
}

impl Shell {
    fn new() -> Shell {
        let dirs = [(); 3].map(|()| tempfile::tempdir().unwrap());
        let [project, outside, added] = [0, 1, 2].map(|i| dirs[i].path().canonicalize().unwrap());
        std::fs::create_dir(project.join("sub")).unwrap();
        std::fs::create_dir(project.join("decoy")).unwrap();
        std::fs::write(outside.join("secret.txt"), "the secret\n").unwrap();
        let mut context = ToolContext::new(project.clone());
        context.workspace_roots = WorkspaceRoots::fixed(vec![added.clone()]);
        Shell {
            _dirs: dirs,
            registry: ToolRegistry::with_builtins(context),
            project,
            outside,
            added,
        }
    }

    async fn run(&self, command: &str) -> ToolOutput {
        call(&self.registry, "Bash", json!({ "command": command })).await
    }

    /// What the session's shell registry says the next command runs in.
    fn recorded(&self) -> PathBuf {
        let context = self.registry.context();
        context.session.shells.working_dir(&context.cwd)
    }

    /// Where a fresh command really runs, by a `pwd -P` no definition can reach.
    async fn real(&self) -> PathBuf {
        PathBuf::from(text(&self.run("pwd -P").await))
    }

    /// Both truths: the registry's answer and the real one, which must agree.
    async fn next_runs_in(&self) -> PathBuf {
        let recorded = self.recorded();
        assert_eq!(
            self.real().await,
            recorded,
            "the registry and the shell disagree"
        );
        recorded
    }
}

/// The note a result ends with when the command's final directory could not be read.
fn unknown_note(started_in: &Path) -> String {
    format!(
        "Shell cwd was reset to {}, where the command started: where it left the shell could \
         not be read (the command removed or replaced the shell's exit trap, replaced the shell \
         with exec, or killed it).",
        started_in.display()
    )
}

#[tokio::test]
async fn definitions_that_shadow_what_reports_the_directory_change_nothing() {
    // Each command really ends in `sub`, and does its best to make `decoy` look like where it
    // is: a trap running `pwd`, `builtin pwd` or `command pwd` would record `decoy`.
    let cases = [
        ("pwd", "pwd() { echo \"$DECOY\"; }; cd sub"),
        (
            "builtin",
            "builtin() { echo \"$DECOY\"; }; pwd() { builtin pwd \"$@\"; }; cd sub",
        ),
        (
            "command",
            "command() { echo \"$DECOY\"; }; pwd() { command pwd \"$@\"; }; cd sub",
        ),
        (
            "echo and printf",
            "echo() { builtin echo \"$DECOY\"; }; printf() { builtin echo \"$DECOY\"; }; \
             alias pwd='echo'; cd sub",
        ),
    ];
    for (shadowed, command) in cases {
        let shell = Shell::new();
        let command = format!(
            "DECOY='{}'; {command}",
            shell.project.join("decoy").display()
        );
        let output = shell.run(&command).await;
        assert_eq!(output, ToolOutput::text("(no output)"), "{shadowed}");
        assert_eq!(
            shell.next_runs_in().await,
            shell.project.join("sub"),
            "{shadowed}"
        );
    }
}

#[tokio::test]
async fn a_shadowed_cd_is_followed_to_where_it_really_went() {
    let shell = Shell::new();
    // The text says `cd sub`; the function goes to `decoy`.
    let output = shell
        .run("cd() { builtin cd decoy; }; cd sub; echo moved")
        .await;
    assert_eq!(output, ToolOutput::text("moved"));
    assert_eq!(shell.next_runs_in().await, shell.project.join("decoy"));

    // A `cd` function that leaves the workspace is caught like a plain `cd` out of it.
    let output = shell
        .run(&format!(
            "cd() {{ builtin cd '{}'; }}; cd ../sub",
            shell.outside.display()
        ))
        .await;
    assert_eq!(
        output,
        ToolOutput::text(format!(
            "(no output)\n\nShell cwd was reset to {project}: the command left it in \
             {outside}, which is outside the project directory and the added directories.",
            project = shell.project.display(),
            outside = shell.outside.display()
        ))
    );
    assert_eq!(shell.next_runs_in().await, shell.project);
}

#[tokio::test]
async fn a_command_that_never_reaches_the_trap_leaves_the_directory_where_it_was() {
    let cases = [
        ("trap removed", "trap - EXIT; cd ../decoy"),
        ("trap replaced", "trap 'cd /' EXIT; cd ../decoy"),
        ("trap emptied", "trap '' EXIT; cd ../decoy"),
        (
            "shell replaced by exec",
            "cd ../decoy; exec sh -c 'cd /; echo replaced'",
        ),
        ("shell killed by itself", "cd ../decoy; kill -9 $$"),
    ];
    for (how, command) in cases {
        let shell = Shell::new();
        shell.run("cd sub").await;
        let sub = shell.project.join("sub");
        assert_eq!(shell.next_runs_in().await, sub, "{how}");

        let output = shell.run(command).await;
        let body = text(&output);
        assert!(body.ends_with(&unknown_note(&sub)), "{how}: {body}");
        assert_eq!(shell.next_runs_in().await, sub, "{how}");
    }
}

#[tokio::test]
async fn deleting_the_traps_fifos_does_not_hang_and_keeps_the_directory() {
    let shell = Shell::new();
    // The FIFOs' directory is named in the trap, which `trap -p` shows.
    let output = shell
        .run(
            "dir=$(trap -p EXIT | grep -o \"/[^']*cairn-cwd-[^/']*\" | head -n 1); \
             test -n \"$dir\" && rm -r \"$dir\" && echo removed; cd decoy",
        )
        .await;
    let body = text(&output);
    assert!(body.starts_with("removed\n"), "{body}");
    assert!(body.ends_with(&unknown_note(&shell.project)), "{body}");
    assert_eq!(shell.next_runs_in().await, shell.project);
}

#[tokio::test]
async fn a_cd_out_of_the_workspace_is_reset_and_relative_paths_stay_inside() {
    let shell = Shell::new();
    let output = shell
        .run(&format!(
            "cd '{}' && cat secret.txt",
            shell.outside.display()
        ))
        .await;
    // The command itself ran where it went (what it may do there is the gate's business).
    assert_eq!(
        output,
        ToolOutput::text(format!(
            "the secret\n\nShell cwd was reset to {project}: the command left it in {outside}, \
             which is outside the project directory and the added directories.",
            project = shell.project.display(),
            outside = shell.outside.display()
        ))
    );
    assert_eq!(shell.next_runs_in().await, shell.project);

    // The next relative read is made in the project, where there is no secret.txt.
    let output = shell.run("cat secret.txt").await;
    assert_eq!(
        output,
        ToolOutput::error("Exit code 1\n[stderr]\ncat: secret.txt: No such file or directory")
    );
}

#[tokio::test]
async fn added_directories_are_inside_the_workspace() {
    let shell = Shell::new();
    let output = shell.run(&format!("cd '{}'", shell.added.display())).await;
    assert_eq!(output, ToolOutput::text("(no output)"));
    assert_eq!(shell.next_runs_in().await, shell.added);
}

#[tokio::test]
async fn a_project_reached_through_a_symlink_keeps_its_spelling() {
    let real = tempfile::tempdir().unwrap();
    let links = tempfile::tempdir().unwrap();
    std::fs::create_dir(real.path().join("sub")).unwrap();
    let project = links.path().join("project");
    std::os::unix::fs::symlink(real.path(), &project).unwrap();
    let registry = ToolRegistry::with_builtins(ToolContext::new(project.clone()));

    let output = call(&registry, "Bash", json!({"command": "cd sub"})).await;
    assert_eq!(output, ToolOutput::text("(no output)"));
    // The kernel reports the real path; it is spelled from the project as the gate knows it.
    let context = registry.context();
    assert_eq!(
        context.session.shells.working_dir(&context.cwd),
        project.join("sub")
    );
}
