//! The real Python Agent SDK (`claude-agent-sdk`, `ClaudeAgentOptions(cli_path=…)`) driving
//! cairn against the scripted model server: `query()` with `can_use_tool`, a
//! `ClaudeSDKClient` session of two turns with an interrupt, a hook callback, and an
//! in-process SDK MCP tool; and the TypeScript SDK (`@anthropic-ai/claude-agent-sdk`,
//! `pathToClaudeCodeExecutable`): `query()` with `canUseTool`. Behind the `interop` feature:
//! `.ci/run` installs the Python SDK into `target/interop/py-venv` (its python is
//! `$CAIRN_INTEROP_PYTHON`) and the TypeScript one into `target/interop/ts-sdk` (or set
//! `CAIRN_TS_SDK_MODULES`).

#![cfg(feature = "interop")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::PathBuf;

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::Harness;

fn python() -> PathBuf {
    std::env::var_os("CAIRN_INTEROP_PYTHON").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/interop/py-venv/bin/python")
        },
        PathBuf::from,
    )
}

/// Runs one scenario of `sdk_interop/scenarios.py`; returns what it printed.
fn scenario(harness: &Harness, name: &str) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk_interop/scenarios.py");
    let output = std::process::Command::new(python())
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_cairn"))
        .arg(name)
        .arg(harness.work.path())
        .current_dir(harness.work.path())
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("ANTHROPIC_MODEL")
        .env("ANTHROPIC_API_KEY", "sk-test-key")
        .env("ANTHROPIC_BASE_URL", harness.server.url())
        .env("HOME", harness.home.path())
        .env("CAIRN_HOME", harness.home.path().join(".cairn"))
        .output()
        .unwrap_or_else(|err| panic!("cannot run {}: {err}", python().display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{name} failed: {stdout}\n{stderr}");
    // The SDK reads the CLI's version from the init line and warns when it finds none.
    assert!(!stderr.contains("too old"), "{name}: {stderr}");
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|err| panic!("{name} printed no JSON ({err}): {stdout}"))
}

fn success(result: &str) -> Value {
    json!({"subtype": "success", "is_error": false, "result": result})
}

#[test]
fn query_with_can_use_tool_writes_what_the_callback_answered() {
    let harness = Harness::new();
    let file = harness.path("note.txt");
    harness.server.push(Reply::tool_use(
        "toolu_write",
        "Write",
        json!({"file_path": file.display().to_string(), "content": "from the model\n"}),
    ));
    harness.server.push(Reply::text("written"));
    let seen = scenario(&harness, "query_with_can_use_tool");
    assert_eq!(
        seen,
        json!({"asked": [{"tool": "Write", "content": "from the model\n"}],
               "results": [success("written")]})
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "from python\n");
}

/// The TypeScript SDK's `node_modules`, which .ci/run installs (or `CAIRN_TS_SDK_MODULES`).
fn ts_sdk_modules() -> PathBuf {
    std::env::var_os("CAIRN_TS_SDK_MODULES").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/interop/ts-sdk/node_modules")
        },
        PathBuf::from,
    )
}

#[test]
fn the_typescript_sdks_query_with_can_use_tool_writes_what_the_callback_answered() {
    let harness = Harness::new();
    let file = harness.path("note.txt");
    harness.server.push(Reply::tool_use(
        "toolu_write",
        "Write",
        json!({"file_path": file.display().to_string(), "content": "from the model\n"}),
    ));
    harness.server.push(Reply::text("written"));
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk_interop/query_can_use_tool.mjs");
    let output = std::process::Command::new("node")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_cairn"))
        .arg(harness.work.path())
        .current_dir(harness.work.path())
        .env("NODE_PATH", ts_sdk_modules())
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("ANTHROPIC_MODEL")
        .env("ANTHROPIC_API_KEY", "sk-test-key")
        .env("ANTHROPIC_BASE_URL", harness.server.url())
        .env("HOME", harness.home.path())
        .env("CAIRN_HOME", harness.home.path().join(".cairn"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let seen: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|err| panic!("no JSON ({err}): {stdout}\n{stderr}"));
    assert_eq!(
        seen,
        json!({"asked": [{"tool": "Write", "content": "from the model\n"}],
               "results": [success("written")]})
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "from typescript\n");
}

#[test]
fn a_client_session_is_interrupted_and_goes_on() {
    let harness = Harness::new();
    harness.server.push(Reply::endless_text("tick "));
    harness.server.push(Reply::text("after the interrupt"));
    let seen = scenario(&harness, "client_with_interrupt");
    assert_eq!(
        seen["results"],
        json!([{"subtype": "error_during_execution", "is_error": true,
                "result": "Interrupted by the user."},
               success("after the interrupt")])
    );
}

#[test]
fn a_hook_callback_denies_a_bash_call() {
    let harness = Harness::new();
    let marker = harness.path("ran.txt");
    harness.server.push(Reply::tool_use(
        "toolu_bash",
        "Bash",
        json!({"command": format!("touch {}", marker.display())}),
    ));
    harness.server.push(Reply::text("understood"));
    let seen = scenario(&harness, "hook_callback");
    assert_eq!(
        seen,
        json!({"seen": [{"event": "PreToolUse", "tool": "Bash", "tool_use_id": "toolu_bash"}],
               "results": [success("understood")]})
    );
    assert!(!marker.exists());
    let (is_error, text) = support::tool_result(&harness.server.requests(), 1);
    assert!(is_error && text.contains("no shell from python"), "{text}");
}

#[test]
fn an_in_process_sdk_mcp_tool_is_called_through_the_control_channel() {
    let harness = Harness::new();
    harness.server.push(Reply::tool_use(
        "toolu_add",
        "mcp__calc__add",
        json!({"a": 2, "b": 3}),
    ));
    harness.server.push(Reply::text("five"));
    let seen = scenario(&harness, "sdk_mcp_tool");
    assert_eq!(seen["calls"], json!([{"a": 2, "b": 3}]));
    assert_eq!(seen["results"], json!([success("five")]));
    let (is_error, text) = support::tool_result(&harness.server.requests(), 1);
    assert!(!is_error && text.contains("sum is 5"), "{text}");
}
