//! `isolation: worktree` through the real binary and real `git`: an isolated agent works in
//! a new worktree under `~/.cairn/worktrees/<project>/`, which is removed with its branch when
//! the agent changed nothing and kept, its branch named in the result, when it changed
//! something; the project itself is never touched.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cairn_test_support::{Reply, ScriptedBlock};
use serde_json::json;

mod subagents_support;
mod support;
use subagents_support::result_of;
use support::{Harness, WAIT};

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A harness whose working directory is a git repository with one commit, and a project
/// agent `isolated` whose file asks for a worktree.
fn repository() -> Harness {
    let harness = Harness::new();
    git(harness.work.path(), &["init", "-q"]);
    std::fs::write(harness.path("README.md"), "hello\n").unwrap();
    git(harness.work.path(), &["add", "README.md"]);
    git(harness.work.path(), &["commit", "-q", "-m", "first"]);
    let agents = harness.path(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("isolated.md"),
        "---\nname: isolated\ndescription: Works apart.\nisolation: worktree\n---\nYou work apart.\n",
    )
    .unwrap();
    harness
}

fn agent_call() -> Reply {
    Reply::blocks(vec![ScriptedBlock::ToolUse {
        id: "toolu_agent".into(),
        name: "Agent".into(),
        input: json!({"description": "apart", "prompt": "Do it.", "subagent_type": "isolated"}),
    }])
}

/// The worktrees left under cairn's home for this project.
fn worktrees_left(harness: &Harness) -> Vec<PathBuf> {
    let project = harness.work.path().canonicalize().unwrap();
    let dir = harness
        .cairn_home()
        .join("worktrees")
        .join(project.file_name().unwrap());
    match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|entry| entry.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    }
}

/// Runs `-p` under acceptEdits and waits for `requests` requests.
fn run(harness: &Harness, requests: usize) -> Vec<cairn_test_support::RecordedRequest> {
    let output = harness
        .command()
        .args(["-p", "go", "--permission-mode", "acceptEdits"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    harness.server.wait_for_requests(requests, WAIT)
}

#[test]
fn an_isolated_agent_that_changed_nothing_leaves_no_worktree_or_branch() {
    let harness = repository();
    harness.server.push(agent_call());
    harness.server.push(Reply::text("Nothing needed changing."));
    harness.server.push(Reply::text("Done."));
    let requests = run(&harness, 3);
    let (result, is_error) = result_of(&requests[2], "toolu_agent");
    assert!(!is_error, "{result}");
    assert!(
        result.contains("(It changed nothing in its git worktree, which was removed.)"),
        "{result}"
    );
    assert_eq!(worktrees_left(&harness), Vec::<PathBuf>::new());
    assert_eq!(
        git(harness.work.path(), &["branch", "--list", "cairn/*"]),
        ""
    );
}

#[test]
fn an_isolated_agents_changes_stay_in_its_worktree_and_its_branch_is_reported() {
    let harness = repository();
    harness.server.push(agent_call());
    harness.server.push(Reply::tool_use(
        "toolu_write",
        "Write",
        json!({"file_path": "made.txt", "content": "made apart\n"}),
    ));
    harness.server.push(Reply::text("Made it."));
    harness.server.push(Reply::text("Done."));
    let requests = run(&harness, 4);
    let (written, failed) = result_of(&requests[2], "toolu_write");
    assert!(!failed, "{written}");
    let (result, _) = result_of(&requests[3], "toolu_agent");

    let left = worktrees_left(&harness);
    assert_eq!(left.len(), 1, "{left:?}");
    let worktree = &left[0];
    assert_eq!(
        std::fs::read_to_string(worktree.join("made.txt")).unwrap(),
        "made apart\n"
    );
    assert!(!harness.path("made.txt").exists());
    let branches = git(harness.work.path(), &["branch", "--list", "cairn/*"]);
    let branch = branches.trim_start_matches(['*', '+', ' ']).trim();
    assert!(branch.starts_with("cairn/agent_1-"), "{branches}");
    assert!(
        result.contains(&format!(
            "Its changes are in the git worktree {} on branch {branch}",
            worktree.display()
        )),
        "{result}"
    );
}
