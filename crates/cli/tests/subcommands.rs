//! Claude Code's subcommands are commands, not prompts: `cairn doctor`, `cairn agents`,
//! `cairn config set|add|remove`, `cairn update`; a Claude Code word cairn lacks, alone, is
//! refused with how to send it as a prompt. None of them makes a request or records a session.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod support;

use std::process::Output;

use cairn_test_support::Reply;
use serde_json::{Value, json};
use support::Harness;

fn run(h: &Harness, args: &[&str]) -> Output {
    h.command().args(args).output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// What `cairn sessions` says: none of the runs was recorded as a session.
fn no_session_recorded(h: &Harness) -> bool {
    stdout(&run(h, &["sessions"])).starts_with("No sessions in ")
}

#[test]
fn doctor_runs_the_checks_and_exits_1_when_one_fails() {
    let h = Harness::new();
    let passed = run(&h, &["doctor"]);
    let text = stdout(&passed);
    assert!(text.starts_with("Doctor:"), "{text}");
    assert!(
        text.contains("credentials: ANTHROPIC_API_KEY is set"),
        "{text}"
    );
    assert!(
        !text.contains("sk-test-key"),
        "the key's value is never printed: {text}"
    );

    // A settings file that does not load fails its check, and the exit status says so.
    std::fs::create_dir_all(h.path(".claude")).unwrap();
    std::fs::write(h.path(".claude/settings.json"), "{ nope").unwrap();
    let failed = run(&h, &["doctor"]);
    let text = stdout(&failed);
    assert_eq!(failed.status.code(), Some(1), "{text}");
    assert!(text.contains("✗ settings: "), "{text}");
    assert!(text.contains("settings.json"), "{text}");
    assert!(h.server.requests().is_empty(), "doctor asks no model");
    assert!(no_session_recorded(&h));
}

#[test]
fn doctor_without_credentials_fails_naming_the_ways_that_work() {
    let h = Harness::new();
    let output = h
        .command()
        .env_remove("ANTHROPIC_API_KEY")
        .arg("doctor")
        .output()
        .unwrap();
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("✗ credentials: "), "{text}");
    assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
}

#[test]
fn config_set_writes_the_local_file_and_project_and_global_their_own() {
    let h = Harness::new();
    let output = run(&h, &["config", "set", "permissions.defaultMode", "plan"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let local = h.path(".claude/settings.local.json");
    assert!(stdout(&output).contains(&local.display().to_string()));
    let read = |path: &std::path::Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    assert_eq!(
        read(&local),
        json!({"permissions": {"defaultMode": "plan"}})
    );

    assert!(
        run(&h, &["config", "set", "--project", "model", "opus"])
            .status
            .success()
    );
    assert_eq!(
        read(&h.path(".claude/settings.json")),
        json!({"model": "opus"})
    );
    assert!(
        run(&h, &["config", "set", "-g", "autoCompactEnabled", "false"])
            .status
            .success()
    );
    let user = h.home.path().join(".claude/settings.json");
    assert_eq!(read(&user), json!({"autoCompactEnabled": false}));
    assert!(
        !h.home.path().join(".claude.json").exists(),
        "Claude Code's own state file is never written"
    );

    // What cairn then reads is what was set.
    let get = run(&h, &["config", "get", "permissions.defaultMode"]);
    assert!(stdout(&get).starts_with("\"plan\""), "{}", stdout(&get));
}

#[test]
fn config_add_and_remove_edit_a_list_and_a_wrong_value_changes_nothing() {
    let h = Harness::new();
    let add = run(
        &h,
        &["config", "add", "permissions.allow", "Read", "Bash(ls)"],
    );
    assert!(add.status.success(), "{}", stderr(&add));
    let remove = run(&h, &["config", "remove", "permissions.allow", "Read"]);
    assert!(remove.status.success(), "{}", stderr(&remove));
    let local = h.path(".claude/settings.local.json");
    let before = std::fs::read_to_string(&local).unwrap();
    let written: Value = serde_json::from_str(&before).unwrap();
    assert_eq!(written, json!({"permissions": {"allow": ["Bash(ls)"]}}));

    let refused = run(
        &h,
        &["config", "set", "permissions.defaultMode", "acceptEdit"],
    );
    assert_eq!(refused.status.code(), Some(1));
    let message = stderr(&refused);
    assert!(message.contains("settings.local.json"), "{message}");
    assert!(message.contains("permissions.defaultMode"), "{message}");
    assert_eq!(std::fs::read_to_string(&local).unwrap(), before);
}

#[test]
fn update_and_install_say_how_rather_than_pretending() {
    let h = Harness::new();
    for word in ["update", "install"] {
        let output = run(&h, &[word]);
        assert!(output.status.success());
        let text = stdout(&output);
        assert!(text.contains("does not update itself"), "{text}");
        assert!(text.contains("cargo install"), "{text}");
    }
    assert!(h.server.requests().is_empty());
    assert!(no_session_recorded(&h));
}

#[test]
fn agents_lists_the_roles_and_the_custom_agents() {
    let h = Harness::new();
    std::fs::create_dir_all(h.path(".claude/agents")).unwrap();
    std::fs::write(
        h.path(".claude/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: reviews a diff\n---\nReview it.\n",
    )
    .unwrap();
    let output = run(&h, &["agents"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("Explore"), "{text}");
    assert!(text.contains("reviewer"), "{text}");
    assert!(h.server.requests().is_empty());
}

#[test]
fn a_claude_code_word_cairn_lacks_is_refused_alone_and_sent_with_p() {
    let h = Harness::new();
    let refused = run(&h, &["plugin"]);
    assert_eq!(refused.status.code(), Some(2));
    let message = stderr(&refused);
    assert!(message.contains("Claude Code subcommand"), "{message}");
    assert!(message.contains("cairn -p plugin"), "{message}");
    assert!(h.server.requests().is_empty());
    assert!(no_session_recorded(&h));

    // With -p it is a prompt, as the refusal says.
    h.server.push(Reply::text("Plugins are not a thing here."));
    let sent = run(&h, &["-p", "plugin"]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    assert_eq!(h.server.requests().len(), 1);
    assert!(
        !no_session_recorded(&h),
        "a prompt is recorded, as the probe can tell"
    );
    // In a sentence it is a prompt too.
    h.server.push(Reply::text("ok"));
    let sentence = run(&h, &["-p", "plugin support: what would it take?"]);
    assert!(sentence.status.success(), "{}", stderr(&sentence));
}
