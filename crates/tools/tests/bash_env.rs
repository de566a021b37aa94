//! What a `Bash` command can see of cairn's environment: everything but cairn's credentials,
//! plus the settings' `env`.
//!
//! The credentials must be in the environment of the process that runs the tools, and a test
//! cannot set variables in its own process without `unsafe`. So each test starts this test
//! binary again with the credentials set, running only its `in_child_` twin (ignored in a
//! normal run), and checks that the twin ran and passed.

// Helpers outside #[test] functions count as library code to clippy; here they are test code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bash_common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use bash_common::{call, text, wait_for};
use cairn_tools::{ToolContext, ToolOutput, ToolRegistry};
use pretty_assertions::assert_eq;
use serde_json::json;

/// Every credential the child is started with, and its value.
const CREDENTIALS: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", "sk-ant-test-secret-api-key"),
    ("ANTHROPIC_AUTH_TOKEN", "test-secret-auth-token"),
    ("ANTHROPIC_FOUNDRY_API_KEY", "test-secret-foundry-key"),
    ("CLAUDE_CODE_OAUTH_TOKEN", "test-secret-oauth-token"),
    ("OPENAI_API_KEY", "sk-test-secret-openai"),
    (
        "CAIRN_TEST_PROVIDER_KEY",
        "test-secret-declared-provider-key",
    ),
];

/// Variables of cairn's environment that are not secrets and stay.
const KEPT: &[(&str, &str)] = &[
    ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/kept"),
    ("ANTHROPIC_MODEL", "claude-kept"),
    ("CAIRN_TEST_ORDINARY", "ordinary-kept"),
];

/// Runs the test `in_child_<name>` in a new process of this binary, with [`CREDENTIALS`] and
/// [`KEPT`] in its environment, and fails unless it ran and passed.
fn run_in_child(name: &str) {
    let test = format!("in_child_{name}");
    let output = Command::new(std::env::current_exe().unwrap())
        .args([test.as_str(), "--exact", "--include-ignored", "--nocapture"])
        .envs(CREDENTIALS.iter().copied())
        .envs(KEPT.iter().copied())
        .output()
        .unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{test} failed:\n{report}");
    assert!(
        report.contains("test result: ok. 1 passed"),
        "{test} did not run:\n{report}"
    );
}

/// A registry in `dir` whose commands get `PROJECT_SETTING` from the settings' `env`, with the
/// provider variable `CAIRN_TEST_PROVIDER_KEY` declared a credential (a provider's
/// `apiKeyEnv`). Checks first that the credentials really are in this process's environment.
fn registry_with_credentials(dir: &Path) -> ToolRegistry {
    for (name, value) in CREDENTIALS {
        assert_eq!(
            std::env::var(name).as_deref(),
            Ok(*value),
            "run through run_in_child"
        );
    }
    cairn_protocol::declare_credential_variables(["CAIRN_TEST_PROVIDER_KEY".to_string()]);
    let mut context = ToolContext::new(dir.to_path_buf());
    context.env = vec![("PROJECT_SETTING".into(), "from-settings".into())];
    ToolRegistry::with_builtins(context)
}

/// Checks a listing of `NAME=value` lines (as `env` prints them): no credential by name or
/// value, and the kept variables and the setting with their values.
fn assert_environment(listing: &str) {
    for (name, value) in CREDENTIALS {
        assert!(
            !listing.contains(value),
            "{name}'s value leaked:\n{listing}"
        );
        assert!(
            !listing
                .lines()
                .any(|line| line.starts_with(&format!("{name}="))),
            "{name} is set:\n{listing}"
        );
    }
    let variables: BTreeMap<&str, &str> = listing
        .lines()
        .filter_map(|line| line.split_once('='))
        .collect();
    for (name, value) in KEPT.iter().chain(&[("PROJECT_SETTING", "from-settings")]) {
        assert_eq!(variables.get(name), Some(value), "{name}");
    }
}

#[test]
fn a_foreground_command_sees_no_credentials() {
    run_in_child("a_foreground_command_sees_no_credentials");
}

#[tokio::test]
#[ignore = "run by a_foreground_command_sees_no_credentials with credentials set"]
async fn in_child_a_foreground_command_sees_no_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with_credentials(dir.path());
    let output = call(&registry, "Bash", json!({"command": "env"})).await;
    assert!(!output.is_error, "{output:?}");
    assert_environment(&text(&output));
}

#[test]
fn printenv_and_proc_environ_find_no_credentials() {
    run_in_child("printenv_and_proc_environ_find_no_credentials");
}

#[tokio::test]
#[ignore = "run by printenv_and_proc_environ_find_no_credentials with credentials set"]
async fn in_child_printenv_and_proc_environ_find_no_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with_credentials(dir.path());

    // printenv prints nothing, and exits 1, for a variable that is not set.
    for name in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "CAIRN_TEST_PROVIDER_KEY",
    ] {
        let command = format!("printenv {name}");
        let output = call(&registry, "Bash", json!({ "command": command })).await;
        assert_eq!(
            output,
            ToolOutput::error("Exit code 1\n(no output)"),
            "{name}"
        );
    }
    let output = call(
        &registry,
        "Bash",
        json!({"command": "echo \"[$ANTHROPIC_AUTH_TOKEN][$CLAUDE_CODE_OAUTH_TOKEN]\""}),
    )
    .await;
    assert_eq!(output, ToolOutput::text("[][]"));

    // The parent's environment (cairn's own) is the binary's business: it makes itself
    // unreadable to its commands, which crates/cli/tests/security_shell.rs checks.
    for reader in [
        "cat /proc/self/environ | tr '\\0' '\\n'",
        "tr '\\0' '\\n' < /proc/$$/environ",
    ] {
        let output = call(&registry, "Bash", json!({ "command": reader })).await;
        assert!(!output.is_error, "{reader}: {output:?}");
        assert_environment(&text(&output));
    }
}

#[test]
fn a_background_command_sees_no_credentials() {
    run_in_child("a_background_command_sees_no_credentials");
}

#[tokio::test]
#[ignore = "run by a_background_command_sees_no_credentials with credentials set"]
async fn in_child_a_background_command_sees_no_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with_credentials(dir.path());
    let started = call(
        &registry,
        "Bash",
        json!({"command": "env > env.tmp && mv env.tmp env.txt", "run_in_background": true}),
    )
    .await;
    assert!(!started.is_error, "{started:?}");
    let listing = wait_for("the background command's env.txt", || async {
        std::fs::read_to_string(dir.path().join("env.txt")).ok()
    })
    .await;
    assert_environment(&listing);
}

#[test]
fn settings_env_may_name_a_variable_the_user_chose_to_pass() {
    run_in_child("settings_env_may_name_a_variable_the_user_chose_to_pass");
}

#[tokio::test]
#[ignore = "run by settings_env_may_name_a_variable_the_user_chose_to_pass with credentials set"]
async fn in_child_settings_env_may_name_a_variable_the_user_chose_to_pass() {
    let dir = tempfile::tempdir().unwrap();
    registry_with_credentials(dir.path());
    // What the user wrote in the settings' `env` is theirs to hand to commands, even under a
    // credential's name; what cairn inherited is not passed on.
    let mut context = ToolContext::new(dir.path().to_path_buf());
    context.env = vec![("OPENAI_API_KEY".into(), "configured-in-settings".into())];
    let registry = ToolRegistry::with_builtins(context);
    let output = call(
        &registry,
        "Bash",
        json!({"command": "printenv OPENAI_API_KEY; printenv ANTHROPIC_API_KEY"}),
    )
    .await;
    assert_eq!(
        output,
        ToolOutput::error("Exit code 1\nconfigured-in-settings")
    );
}
