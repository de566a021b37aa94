//! A sandboxed command may not create the protected files the sandbox cannot mount because
//! they do not exist yet (a project's `.mcp.json`, `.claude.json`): the one it created is
//! removed when it ends, in the foreground and in the background, and the output says so.
//! The sandbox here is a stand-in (`env`) so that only the guard is under test.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod bash_common;

use std::path::Path;
use std::sync::Arc;

use bash_common::{call, text, wait_for};
use cairn_tools::{CommandSandbox, GuardedFiles, ToolContext, ToolRegistry};
use serde_json::json;

fn guarded_registry(dir: &Path) -> ToolRegistry {
    let mut context = ToolContext::new(dir.to_path_buf());
    context.sandbox = Some(Arc::new(CommandSandbox {
        program: "env".into(),
        prefix: Vec::new(),
        explain: Box::new(|_, _| None),
        guarded_files: GuardedFiles::fixed(vec![dir.join(".mcp.json"), dir.join(".claude.json")]),
    }));
    ToolRegistry::with_builtins(context)
}

#[tokio::test]
async fn a_guarded_file_a_command_creates_is_removed_when_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let registry = guarded_registry(dir.path());
    let output = call(
        &registry,
        "Bash",
        json!({"command": "echo '{\"mcpServers\":{}}' > .mcp.json; echo made > other.txt"}),
    )
    .await;
    let text = text(&output);
    assert!(text.contains("The sandbox removed"), "{text}");
    assert!(text.contains(".mcp.json"), "{text}");
    assert!(!dir.path().join(".mcp.json").exists());
    assert!(
        dir.path().join("other.txt").exists(),
        "other files are left"
    );
}

#[tokio::test]
async fn a_guarded_file_that_existed_before_is_left_to_the_sandbox_mounts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".mcp.json"), "{}").unwrap();
    let registry = guarded_registry(dir.path());
    let output = call(&registry, "Bash", json!({"command": "cat .mcp.json"})).await;
    assert!(!text(&output).contains("The sandbox removed"));
    assert!(dir.path().join(".mcp.json").exists());
}

#[tokio::test]
async fn a_background_command_that_creates_one_has_it_removed_when_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let registry = guarded_registry(dir.path());
    let started = call(
        &registry,
        "Bash",
        json!({"command": "printf '{}' > .claude.json", "run_in_background": true}),
    )
    .await;
    assert!(text(&started).contains("bash_1"), "{}", text(&started));
    let finished = wait_for("the background command to end", || async {
        let read = text(&call(&registry, "BashOutput", json!({"bash_id": "bash_1"})).await);
        let running = read
            .lines()
            .next()
            .unwrap_or_default()
            .ends_with(": running");
        (!running).then_some(read)
    })
    .await;
    assert!(finished.contains("The sandbox removed"), "{finished}");
    assert!(!dir.path().join(".claude.json").exists());
}

fn registry_guarding(dir: &Path, relative: &[&str]) -> ToolRegistry {
    let mut context = ToolContext::new(dir.to_path_buf());
    let paths = relative.iter().map(|path| dir.join(path)).collect();
    context.sandbox = Some(Arc::new(CommandSandbox {
        program: "env".into(),
        prefix: Vec::new(),
        explain: Box::new(|_, _| None),
        guarded_files: GuardedFiles::fixed(paths),
    }));
    ToolRegistry::with_builtins(context)
}

/// git's control files: a new one is removed, a changed one gets its old content back, a
/// new `.git` directory is moved aside, a new `gitdir:` file removed; data is left alone.
#[tokio::test]
async fn changes_to_git_control_files_are_undone_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git/objects/info")).unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    let registry = registry_guarding(
        root,
        &[
            ".git/config",
            ".git/commondir",
            ".git/objects/info/alternates",
            "sub/.git",
            "lib/.git",
            ".git/info",
            ".git/hooks",
            ".git/hooks/post-checkout",
            "sub/.git/config",
            "sub/.git/hooks",
            "sub/.git/hooks/pre-commit",
        ],
    );
    let output = call(
        &registry,
        "Bash",
        json!({"command": "echo /tmp/x > .git/commondir; echo '[core] fsmonitor = x' >> .git/config; \
                           echo /tmp/o > .git/objects/info/alternates; mkdir -p sub/.git/hooks lib; echo x > sub/.git/config; echo x > sub/.git/hooks/pre-commit; \
                           printf 'gitdir: /tmp/x' > lib/.git; echo data > .git/index; \
                           mkdir .git/info .git/hooks; echo x > .git/hooks/post-checkout"}),
    )
    .await;
    let text = text(&output);
    for said in [
        "removed",
        ".git/commondir",
        "restored",
        ".git/config",
        "alternates",
        "moved",
        "sub/.git.removed-by-cairn",
        "lib/.git",
    ] {
        assert!(text.contains(said), "{said}: {text}");
    }
    assert!(!root.join(".git/commondir").exists());
    assert!(!root.join(".git/objects/info/alternates").exists());
    assert!(!root.join("lib/.git").exists());
    assert!(!root.join("sub/.git").exists());
    assert!(root.join("sub/.git.removed-by-cairn").is_dir());
    assert!(
        root.join("sub/.git.removed-by-cairn/hooks/pre-commit")
            .is_file(),
        "a new repository is moved aside whole"
    );
    assert!(!text.contains("sub/.git/config"), "{text}");
    assert!(!root.join(".git/hooks/post-checkout").exists());
    assert!(
        !text.contains(".git/info"),
        "an empty new directory is left alone: {text}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".git/index")).unwrap(),
        "data\n"
    );
}

/// A command that leaves the guarded files alone gets no note, and a changed file replaced by
/// a link is put back as a file, the link's target untouched.
#[tokio::test]
async fn a_link_in_place_of_a_control_file_is_replaced_by_the_old_content() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("target"), "theirs").unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    let registry = registry_guarding(root, &[".git/config"]);
    let quiet = call(&registry, "Bash", json!({"command": "cat .git/config"})).await;
    assert!(!text(&quiet).contains("The sandbox"), "{}", text(&quiet));
    let command = format!(
        "ln -sf {} .git/config",
        outside.path().join("target").display()
    );
    let output = call(&registry, "Bash", json!({ "command": command })).await;
    assert!(text(&output).contains("restored"), "{}", text(&output));
    let meta = std::fs::symlink_metadata(root.join(".git/config")).unwrap();
    assert!(meta.is_file());
    assert_eq!(
        std::fs::read_to_string(root.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(
        std::fs::read_to_string(outside.path().join("target")).unwrap(),
        "theirs"
    );
}

#[tokio::test]
async fn a_background_command_that_writes_commondir_has_it_removed_when_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    let registry = registry_guarding(dir.path(), &[".git/commondir"]);
    call(
        &registry,
        "Bash",
        json!({"command": "echo /tmp/x > .git/commondir", "run_in_background": true}),
    )
    .await;
    let finished = wait_for("the background command to end", || async {
        let read = text(&call(&registry, "BashOutput", json!({"bash_id": "bash_1"})).await);
        let running = read
            .lines()
            .next()
            .unwrap_or_default()
            .ends_with(": running");
        (!running).then_some(read)
    })
    .await;
    assert!(finished.contains("removed"), "{finished}");
    assert!(finished.contains("commondir"), "{finished}");
    assert!(!dir.path().join(".git/commondir").exists());
}
