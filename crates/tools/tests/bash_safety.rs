//! The safety a `Bash` call declares, from the analysis of its command (`cairn-shell`) in the
//! directory the shell is really in: read-only commands run beside other read-only calls,
//! unless they may move the shell or run in the background; everything else is the worst case.

// Helpers outside #[test] functions count as library code to clippy; here they are test code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bash_common;

use std::path::PathBuf;

use bash_common::{call, text};
use cairn_tools::{
    Access, Concurrency, Destructiveness, Safety, ToolCall, ToolContext, ToolExecutor,
    ToolRegistry, WorkspaceRoots,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// A project with `sub/` and `notes.txt` in it, in a temp directory of its own.
struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    registry: ToolRegistry,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("project");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("notes.txt"), "notes\n").unwrap();
        let mut context = ToolContext::new(root.clone());
        context.workspace_roots = WorkspaceRoots::fixed(Vec::new());
        Project {
            _dir: dir,
            registry: ToolRegistry::with_builtins(context),
            root,
        }
    }

    /// The safety of a Bash call with `input`, as prepared for the engine.
    fn safety_of(&self, input: Value) -> Safety {
        let call = ToolCall {
            id: "toolu_safety".into(),
            name: "Bash".into(),
            input,
        };
        self.registry
            .prepare(&call)
            .unwrap_or_else(|error| panic!("{error:?}"))
            .safety
    }

    fn safety(&self, command: &str) -> Safety {
        self.safety_of(json!({ "command": command }))
    }
}

const READ_ONLY_BESIDE_OTHERS: Safety = Safety::READ_ONLY;

const READ_ONLY_ALONE: Safety = Safety {
    access: Access::ReadOnly,
    destructive: Destructiveness::Harmless,
    concurrency: Concurrency::Exclusive,
};

const WORST_CASE: Safety = Safety {
    access: Access::Writes,
    destructive: Destructiveness::Destructive,
    concurrency: Concurrency::Exclusive,
};

#[test]
fn a_read_only_command_runs_beside_others() {
    let project = Project::new();
    for command in [
        "ls -la",
        "cat notes.txt | wc -l",
        "grep -rn notes . && head -n 1 notes.txt",
        "find . -name '*.txt'",
    ] {
        assert_eq!(
            project.safety(command),
            READ_ONLY_BESIDE_OTHERS,
            "{command}"
        );
    }
}

#[test]
fn a_read_only_command_that_may_move_the_shell_runs_alone() {
    let project = Project::new();
    for command in [
        "cd sub",
        "cd sub && ls",
        "pushd sub",
        "popd",
        "ls; builtin cd sub",
        "command cd sub",
        // A subshell's cd does not carry over, but one rule for every cd is simpler to trust.
        "(cd sub && ls)",
    ] {
        assert_eq!(project.safety(command), READ_ONLY_ALONE, "{command}");
    }
}

#[test]
fn a_read_only_command_in_the_background_runs_alone() {
    let project = Project::new();
    assert_eq!(
        project.safety_of(json!({"command": "ls -la", "run_in_background": true})),
        READ_ONLY_ALONE
    );
    assert_eq!(
        project.safety_of(json!({"command": "ls -la", "run_in_background": false})),
        READ_ONLY_BESIDE_OTHERS
    );
}

#[test]
fn writing_destructive_and_unanalysable_commands_are_the_worst_case() {
    let project = Project::new();
    for command in [
        // Writes.
        "touch made",
        "echo x > notes.txt",
        "npm test",
        // Destructive.
        "rm -rf ~",
        "git reset --hard",
        // Unanalysable: a definition changes what `ls` means.
        "hash -p /bin/rm ls; ls notes.txt",
        // Reaches outside the workspace.
        "cat ../../etc/passwd > copy",
    ] {
        assert_eq!(project.safety(command), WORST_CASE, "{command}");
    }
}

#[tokio::test]
async fn the_command_is_judged_where_the_shell_really_is() {
    let project = Project::new();
    // From the project, `../notes.txt` is outside the workspace: not vouched for.
    assert_eq!(project.safety("cat ../notes.txt"), WORST_CASE);
    let output = call(&project.registry, "Bash", json!({"command": "cd sub"})).await;
    assert!(!output.is_error, "{}", text(&output));
    assert_eq!(
        project
            .registry
            .context()
            .session
            .shells
            .working_dir(&project.root),
        project.root.join("sub")
    );
    // From sub/, it is the project's notes.
    assert_eq!(project.safety("cat ../notes.txt"), READ_ONLY_BESIDE_OTHERS);
}
