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
use cairn_tools::{CommandSandbox, ToolContext, ToolRegistry};
use serde_json::json;

fn guarded_registry(dir: &Path) -> ToolRegistry {
    let mut context = ToolContext::new(dir.to_path_buf());
    context.sandbox = Some(Arc::new(CommandSandbox {
        program: "env".into(),
        prefix: Vec::new(),
        explain: Box::new(|_, _| None),
        guarded_files: vec![dir.join(".mcp.json"), dir.join(".claude.json")],
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
