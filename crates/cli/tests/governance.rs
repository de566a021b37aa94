//! The governance layer through the real binary: permissions in -p mode, rules from
//! settings and flags, hooks with real shell scripts, and the sandbox.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::PathBuf;
use std::process::Output;

use cairn_test_support::Reply;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT};

/// What these tests do with a harness: run with arguments, read tool results back.
trait GovernanceHarness {
    fn run(&self, args: &[&str]) -> Output;
    fn tool_result(&self, n: usize) -> Value;
}

impl GovernanceHarness for Harness {
    fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    /// The first tool result the model received in request `n` (0-based).
    fn tool_result(&self, n: usize) -> Value {
        let request = &self.server.wait_for_requests(n + 1, WAIT)[n];
        let messages = request.body["messages"].as_array().unwrap();
        messages.last().unwrap()["content"][0].clone()
    }
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| result["content"].to_string())
}

#[test]
fn print_mode_refuses_what_it_would_ask_and_names_the_rule_that_allows_it() {
    let h = Harness::new();
    std::fs::write(h.path("a.txt"), "hello\n").unwrap();
    h.server.push(Reply::tool_use(
        "w",
        "Write",
        json!({"file_path": "new.txt", "content": "x"}),
    ));
    h.server.push(Reply::text("Could not write."));
    let output = h.run(&["-p", "write it", "--output-format", "json"]);
    assert!(output.status.success(), "{output:?}");
    let result = h.tool_result(1);
    assert_eq!(result["is_error"], json!(true));
    let text = text_of(&result);
    assert!(text.contains("nobody can be asked in cairn -p"), "{text}");
    assert!(text.contains("--allowedTools"), "{text}");
    assert!(!h.path("new.txt").exists());

    // The same call with the rule it named runs.
    h.server.push(Reply::tool_use(
        "w",
        "Write",
        json!({"file_path": "new.txt", "content": "x"}),
    ));
    h.server.push(Reply::text("Written."));
    let output = h.run(&["-p", "write it", "--allowedTools", "Write,Edit"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(std::fs::read_to_string(h.path("new.txt")).unwrap(), "x");
}

#[test]
fn accept_edits_mode_from_settings_lets_edits_run_but_not_commands() {
    let h = Harness::new();
    h.settings(json!({"permissions": {"defaultMode": "acceptEdits"}}));
    h.server.push(Reply::tool_use(
        "w",
        "Write",
        json!({"file_path": "new.txt", "content": "x"}),
    ));
    h.server.push(Reply::tool_use(
        "b",
        "Bash",
        json!({"command": "touch made-by-bash"}),
    ));
    h.server.push(Reply::text("ok"));
    let output = h.run(&["-p", "go"]);
    assert!(output.status.success(), "{output:?}");
    assert!(h.path("new.txt").exists());
    assert!(!h.path("made-by-bash").exists());
    assert_eq!(h.tool_result(2)["is_error"], json!(true));
}

#[test]
fn a_malformed_rule_is_reported_with_its_file_and_never_widens_access() {
    let h = Harness::new();
    h.settings(json!({"permissions": {"allow": ["Bash(", "Read"]}}));
    h.server.push(Reply::tool_use(
        "b",
        "Bash",
        json!({"command": "touch made"}),
    ));
    h.server.push(Reply::text("ok"));
    let output = h.run(&["-p", "go"]);
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(".claude/settings.json") && stderr.contains("\"Bash(\""),
        "{stderr}"
    );
    assert!(!h.path("made").exists());
}

#[test]
fn a_pre_tool_use_hook_exiting_2_blocks_the_call_and_the_model_reads_its_stderr() {
    let h = Harness::new();
    h.settings(
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "echo 'no shell today' >&2; exit 2"}
        ]}]}}),
    );
    h.server.push(Reply::tool_use(
        "b",
        "Bash",
        json!({"command": "touch made"}),
    ));
    h.server.push(Reply::text("ok"));
    let output = h.run(&["-p", "go", "--dangerously-skip-permissions"]);
    assert!(output.status.success(), "{output:?}");
    let result = h.tool_result(1);
    assert_eq!(result["is_error"], json!(true));
    assert!(text_of(&result).contains("no shell today"), "{result}");
    assert!(!h.path("made").exists());
}

#[test]
fn a_hook_can_rewrite_the_input_and_allow_but_a_deny_rule_still_wins() {
    let h = Harness::new();
    let script = h.path("rewrite.sh");
    std::fs::write(
        &script,
        r#"#!/bin/sh
cat > /dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "echo rewritten"}}}'
"#,
    )
    .unwrap();
    h.settings(
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": format!("sh {}", script.display())}
        ]}]}}),
    );
    h.server.push(Reply::tool_use(
        "b",
        "Bash",
        json!({"command": "echo original"}),
    ));
    h.server.push(Reply::text("ok"));
    let output = h.run(&["-p", "go"]);
    assert!(output.status.success(), "{output:?}");
    let result = h.tool_result(1);
    assert_eq!(
        text_of(&result),
        "rewritten",
        "the hook's allow skips the question: {result}"
    );

    h.server.push(Reply::tool_use(
        "b",
        "Bash",
        json!({"command": "echo original"}),
    ));
    h.server.push(Reply::text("ok"));
    let output = h.run(&["-p", "go", "--disallowedTools", "Bash(echo:*)"]);
    assert!(output.status.success(), "{output:?}");
    let result = h.tool_result(3);
    assert_eq!(result["is_error"], json!(true), "{result}");
    assert!(text_of(&result).contains("Bash(echo:*)"), "{result}");
}

#[test]
fn a_stop_hook_can_send_the_model_back_to_work_once() {
    let h = Harness::new();
    let marker = h.path("stopped-once");
    h.settings(
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": format!(
            "if [ -e {m} ]; then exit 0; fi; touch {m}; echo 'run the tests first' >&2; exit 2",
            m = marker.display()
        )}]}]}}),
    );
    h.server.push(Reply::text("Done, I think."));
    h.server.push(Reply::text("Tests pass now."));
    let output = h.run(&["-p", "fix it"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "Tests pass now.\n"
    );
    let second = &h.server.wait_for_requests(2, WAIT)[1];
    let last = second.body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        last["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("run the tests first"),
        "{last}"
    );
}

#[test]
fn a_user_prompt_submit_hook_can_block_the_prompt() {
    let h = Harness::new();
    h.settings(json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo 'no secrets in prompts' >&2; exit 2"}
    ]}]}}));
    let output = h.run(&["-p", "my password is hunter2"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("no secrets in prompts"), "{stderr}");
    assert!(
        h.server.requests().is_empty(),
        "nothing was sent to the model"
    );
}

#[test]
fn under_the_sandbox_writes_outside_the_workspace_fail_and_inside_succeed() {
    let h = Harness::new();
    // Temp dirs are writable under the sandbox, so "outside" must be somewhere else.
    let Some(outside) = scratch_dir_outside_temp() else {
        eprintln!("skipped: no writable directory outside the temp directories");
        return;
    };
    let outside_file = outside.path().join("escaped.txt");
    h.server.push(Reply::tool_use(
        "out",
        "Bash",
        json!({"command": format!("echo x > {}", outside_file.display())}),
    ));
    h.server.push(Reply::tool_use(
        "in",
        "Bash",
        json!({"command": "echo x > inside.txt"}),
    ));
    h.server.push(Reply::text("ok"));
    let output = h.run(&["-p", "go", "--dangerously-skip-permissions"]);
    assert!(output.status.success(), "{output:?}");
    if String::from_utf8_lossy(&output.stderr).contains("the sandbox is not available") {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    assert!(
        !outside_file.exists(),
        "the sandbox let a write outside the workspace through"
    );
    let blocked = h.tool_result(1);
    assert_eq!(blocked["is_error"], json!(true));
    assert!(text_of(&blocked).contains("sandbox"), "{blocked}");
    assert!(h.path("inside.txt").exists());
    assert_eq!(
        h.tool_result(2).get("is_error"),
        None,
        "no error flag on success"
    );
}

#[test]
fn session_start_adds_context_session_end_runs_and_permission_request_can_allow_in_print_mode() {
    let h = Harness::new();
    let ended = h.path("ended.json");
    h.settings(json!({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo 'The build uses make.'"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": format!("cat > {}", ended.display())}]}],
        "PermissionRequest": [{"matcher": "Write", "hooks": [{"type": "command", "command":
            "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PermissionRequest\", \"decision\": {\"behavior\": \"allow\"}}}'"
        }]}]
    }}));
    h.server.push(Reply::tool_use(
        "w",
        "Write",
        json!({"file_path": "new.txt", "content": "x"}),
    ));
    h.server.push(Reply::text("ok"));
    let output = h.run(&["-p", "go"]);
    assert!(output.status.success(), "{output:?}");
    let first = &h.server.wait_for_requests(1, WAIT)[0];
    let prompt = first.body["messages"][0]["content"].to_string();
    assert!(prompt.contains("The build uses make."), "{prompt}");
    assert!(
        h.path("new.txt").exists(),
        "the PermissionRequest hook allowed the write"
    );
    let end: Value = serde_json::from_str(&std::fs::read_to_string(&ended).unwrap()).unwrap();
    assert_eq!(end["hook_event_name"], json!("SessionEnd"));
    assert!(end["transcript_path"].as_str().unwrap().ends_with(".jsonl"));
}

/// A new directory in cargo's scratch space, the user's home or the current directory,
/// whichever first lies outside every directory the sandbox leaves writable as temp space.
fn scratch_dir_outside_temp() -> Option<tempfile::TempDir> {
    let temp_roots: Vec<PathBuf> = [
        Some(std::env::temp_dir()),
        Some(PathBuf::from("/tmp")),
        Some(PathBuf::from("/var/tmp")),
        Some(PathBuf::from("/dev/shm")),
    ]
    .into_iter()
    .flatten()
    .filter_map(|path| path.canonicalize().ok())
    .collect();
    let candidates = [
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        std::env::var_os("HOME").map(PathBuf::from),
        std::env::current_dir().ok(),
    ];
    candidates
        .into_iter()
        .flatten()
        .filter_map(|path| path.canonicalize().ok())
        .find(|path| !temp_roots.iter().any(|root| path.starts_with(root)))
        .and_then(|path| tempfile::tempdir_in(path).ok())
}

#[test]
fn a_malformed_hook_is_reported_with_its_file_and_the_valid_ones_still_run() {
    let h = Harness::new();
    let ran = h.path("ran");
    h.settings(json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "script", "command": "true"},
        {"type": "command", "command": format!("touch {}", ran.display())}
    ]}]}}));
    h.server
        .push(Reply::tool_use("r", "Read", json!({"file_path": "a.txt"})));
    h.server.push(Reply::text("ok"));
    std::fs::write(h.path("a.txt"), "a\n").unwrap();
    let output = h.run(&["-p", "go"]);
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(".claude/settings.json: hooks.PreToolUse[0].hooks[0]"),
        "{stderr}"
    );
    assert!(ran.exists(), "the valid hook still ran");
}

#[test]
fn a_hook_that_asks_in_print_mode_gets_a_refusal_instead_of_waiting_for_nobody() {
    let h = Harness::new();
    // `ls` alone would run unasked; the hook turns it into a question nobody can answer.
    h.settings(json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
        "type": "command",
        "command": "cat > /dev/null; echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"ask\", \"permissionDecisionReason\": \"check listings\"}}'"
    }]}]}}));
    h.server
        .push(Reply::tool_use("b", "Bash", json!({"command": "ls"})));
    h.server.push(Reply::text("ok"));
    let started = std::time::Instant::now();
    let output = h.run(&["-p", "go"]);
    assert!(output.status.success(), "{output:?}");
    assert!(started.elapsed() < WAIT, "it did not wait for an answer");
    let result = h.tool_result(1);
    assert_eq!(result["is_error"], json!(true), "{result}");
    assert!(
        text_of(&result).contains("nobody could be asked"),
        "{result}"
    );
}
