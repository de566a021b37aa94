//! Issue 11, classes 5 and 6 through the real binary, with the sandbox off so that the Bash
//! analysis stands alone: in `cairn -p`, default mode, with `--allowedTools` allowing the
//! command itself, writes outside the workspace (redirections, `<>`, a symlinked directory,
//! `~`), destructive actions (`find -delete`, `git -c alias.x='!…'`) and reads through a glob
//! matching a link out are refused, the model is told so, and nothing changes on disk.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::os::unix::fs::symlink;
use std::path::Path;

use cairn_test_support::{RecordedRequest, Reply};
use serde_json::json;

mod support;
use support::{Harness, WAIT, tool_result};

/// A harness whose user turns the sandbox off (a project's file may not, in -p), and a
/// directory outside the project holding `secret.txt`, linked from the project as `out` (a
/// directory) and `kee.txt`.
fn world() -> (Harness, tempfile::TempDir) {
    let h = Harness::new();
    h.user_settings(json!({"sandbox": {"enabled": false}}));
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("secret.txt"),
        "cairn-outside-secret-2718\n",
    )
    .unwrap();
    symlink(outside.path(), h.path("out")).unwrap();
    symlink(outside.path().join("secret.txt"), h.path("kee.txt")).unwrap();
    (h, outside)
}

/// Runs `cairn -p` with `--allowedTools rule`, the model calling Bash once per command.
fn run(h: &Harness, rule: &str, commands: &[String]) -> Vec<RecordedRequest> {
    for (n, command) in commands.iter().enumerate() {
        h.server.push(Reply::tool_use(
            &format!("t{n}"),
            "Bash",
            json!({ "command": command }),
        ));
    }
    h.server.push(Reply::text("done"));
    let output = h
        .command()
        .args(["-p", "go", "--allowedTools", rule])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    h.server.wait_for_requests(commands.len() + 1, WAIT)
}

fn assert_refused(requests: &[RecordedRequest], n: usize, command: &str) {
    let (is_error, text) = tool_result(requests, n);
    assert!(
        is_error && text.contains("nobody can be asked in cairn -p"),
        "{command}: {text}"
    );
}

fn contents(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

#[test]
fn writes_outside_the_workspace_are_refused_although_echo_is_allowed() {
    let (h, outside) = world();
    let home_rc = h.home.path().join(".bashrc");
    let commands = vec![
        "echo planted > out/planted.txt".to_owned(),
        format!(
            "echo overwritten 1<> {}",
            outside.path().join("secret.txt").display()
        ),
        "echo 'alias ls=\"rm -rf ~\"' >> ~/.bashrc".to_owned(),
        "{ echo a; echo b; } &> out/group.txt".to_owned(),
        // The rule still lets echo write inside the workspace: the commands really run.
        "echo fine > inside.txt".to_owned(),
    ];
    let requests = run(&h, "Bash(echo *)", &commands);
    for (n, command) in commands.iter().enumerate().take(4) {
        assert_refused(&requests, n + 1, command);
    }
    let (is_error, text) = tool_result(&requests, 5);
    assert!(!is_error, "{text}");
    assert_eq!(contents(&h.path("inside.txt")).as_deref(), Some("fine\n"));
    assert_eq!(contents(&outside.path().join("planted.txt")), None);
    assert_eq!(contents(&outside.path().join("group.txt")), None);
    assert_eq!(
        contents(&outside.path().join("secret.txt")).as_deref(),
        Some("cairn-outside-secret-2718\n")
    );
    assert_eq!(contents(&home_rc), None);
}

#[test]
fn destructive_actions_are_refused_although_their_command_is_allowed() {
    let (h, _outside) = world();
    std::fs::write(h.path("keep.txt"), "kept\n").unwrap();
    let commands = vec!["find . -name 'keep.*' -delete".to_owned()];
    let requests = run(&h, "Bash(find *)", &commands);
    assert_refused(&requests, 1, &commands[0]);
    assert!(
        tool_result(&requests, 1)
            .1
            .contains("find -delete removes every file it matches under ."),
        "{:?}",
        tool_result(&requests, 1)
    );
    assert_eq!(contents(&h.path("keep.txt")).as_deref(), Some("kept\n"));

    let commands = vec!["git -c alias.st='!touch pwned' st".to_owned()];
    let requests = run(&h, "Bash(git *)", &commands);
    // The server keeps every request: this run's tool result follows the first run's two.
    assert_refused(&requests, 3, &commands[0]);
    assert!(!h.path("pwned").exists());
}

#[test]
fn a_glob_matching_a_link_out_is_refused_and_the_secret_never_reaches_the_model() {
    let (h, _outside) = world();
    let commands = vec!["cat k?e.txt".to_owned(), "grep -R cairn .".to_owned()];
    let requests = run(&h, "Bash(cat *) Bash(grep *)", &commands);
    assert_refused(&requests, 1, &commands[0]);
    assert_refused(&requests, 2, &commands[1]);
    for (n, request) in requests.iter().enumerate() {
        let body = request.body.to_string();
        assert!(
            !body.contains("cairn-outside-secret-2718"),
            "request {n} carries the secret: {body}"
        );
    }
}
