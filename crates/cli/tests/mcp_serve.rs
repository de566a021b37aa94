//! `cairn mcp serve` through the real binary, driven by cairn's own MCP client (rmcp's client
//! side) over stdio: the built-in tools are listed, what the rules allow runs, what would ask
//! is refused with the gate's reason as an error result, and bad input is refused by name.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use cairn_mcp::config::{ConfiguredServer, Scope, ServerConfig, StdioConfig};
use cairn_mcp::{Limits, McpTools, Roots, StartOptions, Status};
use cairn_tools::{CallContext, ToolCall, ToolExecutor, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

mod support;
use support::Harness;

/// cairn's client connected to `cairn mcp serve` run in the harness's folder and HOME.
async fn served(h: &Harness) -> Arc<McpTools> {
    let env: BTreeMap<String, String> = [
        ("HOME", h.home.path().display().to_string()),
        ("CAIRN_HOME", h.cairn_home().display().to_string()),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_string(), value))
    .collect();
    let tools = McpTools::start(
        vec![ConfiguredServer {
            name: "cairn".into(),
            scope: Scope::Flag,
            origin: "test".into(),
            config: ServerConfig::Stdio(StdioConfig {
                command: env!("CARGO_BIN_EXE_cairn").into(),
                args: vec!["mcp".into(), "serve".into()],
                env,
                timeout: None,
                startup_timeout: None,
                always_load: false,
            }),
        }],
        StartOptions {
            cairn_home: h.home.path().join("client-cache"),
            project: h.work.path().to_path_buf(),
            inherited_env: Vec::new(),
            limits: Limits {
                startup: Duration::from_secs(20),
                call: Duration::from_secs(20),
                max_output_tokens: 25_000,
            },
            roots: Roots::fixed(Vec::new()),
            elicitation: cairn_mcp::elicitation::Elicitation::decline(),
        },
    );
    tools.wait_all().await;
    assert_eq!(
        tools.reports()[0].status,
        Status::Connected,
        "{:?}",
        tools.reports()
    );
    tools
}

async fn call(tools: &McpTools, name: &str, input: Value) -> ToolOutput {
    let prepared = match tools.try_prepare(&ToolCall {
        id: "t".into(),
        name: name.into(),
        input,
    }) {
        Ok(prepared) => prepared,
        Err(error) => return error.into_output(),
    };
    tools
        .execute(&prepared, &CallContext::detached(CancellationToken::new()))
        .await
}

#[tokio::test]
async fn reads_run_and_what_would_ask_is_refused_with_the_reason() {
    let h = Harness::new();
    std::fs::write(h.path("notes.txt"), "first line\n").unwrap();
    let tools = served(&h).await;
    let names: Vec<String> = tools.specs().into_iter().map(|spec| spec.name).collect();
    for tool in ["mcp__cairn__Read", "mcp__cairn__Write", "mcp__cairn__Bash"] {
        assert!(names.contains(&tool.to_string()), "{tool}: {names:?}");
    }

    let read = call(
        &tools,
        "mcp__cairn__Read",
        json!({"file_path": h.path("notes.txt")}),
    )
    .await;
    assert!(!read.is_error, "{read:?}");
    assert!(read.content.text().contains("first line"), "{read:?}");

    let written = call(
        &tools,
        "mcp__cairn__Write",
        json!({"file_path": h.path("new.txt"), "content": "x"}),
    )
    .await;
    assert!(written.is_error, "{written:?}");
    assert!(
        written.content.text().contains("nobody can be asked"),
        "{written:?}"
    );
    assert!(!h.path("new.txt").exists());

    // Refused by the tool's own check, before the gate, naming the field.
    let bad = call(&tools, "mcp__cairn__Read", json!({})).await;
    assert!(bad.is_error, "{bad:?}");
    assert!(bad.content.text().contains("file_path"), "{bad:?}");
}

#[tokio::test]
async fn what_the_rules_allow_runs() {
    let h = Harness::new();
    h.user_settings(json!({"permissions": {"allow": ["Write", "Bash(echo:*)"]}}));
    let tools = served(&h).await;
    let written = call(
        &tools,
        "mcp__cairn__Write",
        json!({"file_path": h.path("new.txt"), "content": "made over MCP"}),
    )
    .await;
    assert!(!written.is_error, "{written:?}");
    assert_eq!(
        std::fs::read_to_string(h.path("new.txt")).unwrap(),
        "made over MCP"
    );
    let echoed = call(
        &tools,
        "mcp__cairn__Bash",
        json!({"command": "echo served"}),
    )
    .await;
    assert!(!echoed.is_error, "{echoed:?}");
    assert!(echoed.content.text().contains("served"), "{echoed:?}");
}
