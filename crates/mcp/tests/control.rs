//! Servers the user controls, against the test MCP server over stdio: reconnecting one (a
//! failed one too), turning one off and on (saved for the project, and read back at the next
//! start), `/mcp`'s actions and their errors, and a server's prompt list changing.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test should fail loudly"
)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cairn_mcp::config::{ConfiguredServer, Scope, ServerConfig, StdioConfig};
use cairn_mcp::{Limits, McpAction, McpTools, Roots, StartOptions, Status};
use cairn_test_support::mcp::server_binary;
use cairn_tools::{CallContext, ToolCall, ToolExecutor, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn server(name: &str, args: &[&str]) -> ConfiguredServer {
    ConfiguredServer {
        name: name.into(),
        scope: Scope::Flag,
        origin: "test".into(),
        config: ServerConfig::Stdio(StdioConfig {
            command: server_binary().display().to_string(),
            args: args.iter().map(|arg| arg.to_string()).collect(),
            env: BTreeMap::new(),
            timeout: None,
            startup_timeout: None,
            always_load: false,
        }),
    }
}

fn start(home: &Path, servers: Vec<ConfiguredServer>, disabled: &[String]) -> Arc<McpTools> {
    McpTools::start_toggled(
        servers,
        StartOptions {
            cairn_home: home.join(".cairn"),
            project: home.to_path_buf(),
            inherited_env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
            limits: Limits {
                startup: Duration::from_secs(20),
                call: Duration::from_secs(20),
                max_output_tokens: 25_000,
            },
            roots: Roots::fixed(Vec::new()),
            elicitation: cairn_mcp::elicitation::Elicitation::decline(),
        },
        None,
        disabled,
    )
}

async fn call(tools: &McpTools, name: &str, input: Value) -> ToolOutput {
    let prepared = match tools.try_prepare(&ToolCall {
        id: "t1".into(),
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

fn status(tools: &McpTools, name: &str) -> Status {
    tools
        .reports()
        .into_iter()
        .find(|report| report.name == name)
        .unwrap()
        .status
}

fn offered(tools: &McpTools) -> Vec<String> {
    tools.specs().into_iter().map(|spec| spec.name).collect()
}

#[tokio::test]
async fn a_crashed_server_is_reconnected_and_serves_again() {
    let home = tempfile::tempdir().unwrap();
    let tools = start(home.path(), vec![server("test", &[])], &[]);
    tools.wait_all().await;
    let crashed = call(&tools, "mcp__test__crash", json!({})).await;
    assert!(crashed.is_error, "{crashed:?}");
    assert!(matches!(status(&tools, "test"), Status::Failed(_)));
    assert_eq!(tools.reconnect("test").await, Ok(Status::Connected));
    assert_eq!(
        call(&tools, "mcp__test__echo", json!({"text": "back"})).await,
        ToolOutput::text("echo: back")
    );
    // A connected server is stopped and started again too.
    assert_eq!(tools.reconnect("test").await, Ok(Status::Connected));
    assert_eq!(
        call(&tools, "mcp__test__echo", json!({"text": "again"})).await,
        ToolOutput::text("echo: again")
    );
}

#[tokio::test]
async fn a_disabled_server_offers_nothing_refuses_its_calls_and_stays_off_next_time() {
    let home = tempfile::tempdir().unwrap();
    let servers = || vec![server("test", &["--resources"]), server("other", &[])];
    let tools = start(home.path(), servers(), &[]);
    tools.wait_all().await;
    assert!(offered(&tools).contains(&"mcp__test__echo".to_string()));
    assert!(!tools.prompts().is_empty());

    let (state, unsaved) = tools.set_enabled("test", false).await.unwrap();
    assert_eq!((state, unsaved), (Status::Disabled, None));
    let offered_now = offered(&tools);
    assert!(
        !offered_now
            .iter()
            .any(|name| name.starts_with("mcp__test__")),
        "{offered_now:?}"
    );
    assert!(offered_now.contains(&"mcp__other__echo".to_string()));
    assert!(tools.prompts().is_empty(), "{:?}", tools.prompts());
    let refused = call(&tools, "mcp__test__echo", json!({"text": "x"})).await;
    assert!(refused.is_error);
    assert!(
        refused.content.text().contains(
            "The MCP server \"test\" is disabled. The user can turn it on with /mcp enable test"
        ),
        "{refused:?}"
    );
    assert!(
        tools
            .report_text()
            .contains("test (command line, test): disabled")
    );
    assert_eq!(
        tools.check(&McpAction::Reconnect("test".into())),
        Err("The MCP server \"test\" is disabled: /mcp enable test starts it.".into())
    );

    // The choice is saved for this project, and the next start leaves the server off.
    let disabled =
        cairn_mcp::toggles::disabled_servers(home.path(), &home.path().join(".cairn"), home.path());
    assert_eq!(disabled, vec!["test".to_string()]);
    let next = start(home.path(), servers(), &disabled);
    next.wait_all().await;
    assert_eq!(status(&next, "test"), Status::Disabled);
    assert_eq!(
        next.run_action(&McpAction::Toggle {
            server: "test".into(),
            enabled: true
        })
        .await,
        Ok("Enabled the MCP server test: connected, 6 tools".into())
    );
    assert_eq!(
        call(&next, "mcp__test__echo", json!({"text": "on"})).await,
        ToolOutput::text("echo: on")
    );
    assert!(
        cairn_mcp::toggles::disabled_servers(home.path(), &home.path().join(".cairn"), home.path())
            .is_empty()
    );
}

#[tokio::test]
async fn mcp_actions_are_read_and_an_unknown_server_names_the_configured_ones() {
    assert_eq!(McpAction::parse(""), Ok(McpAction::Report));
    assert_eq!(
        McpAction::parse(" reconnect  github "),
        Ok(McpAction::Reconnect("github".into()))
    );
    assert_eq!(
        McpAction::parse("disable github"),
        Ok(McpAction::Toggle {
            server: "github".into(),
            enabled: false
        })
    );
    assert_eq!(
        McpAction::parse("enable"),
        Err("/mcp enable needs the name of a server: /mcp enable <server>".into())
    );
    assert_eq!(
        McpAction::parse("restart x"),
        Err(
            "unknown /mcp action \"restart\": use /mcp, /mcp reconnect <server>, /mcp enable \
             <server> or /mcp disable <server>"
                .into()
        )
    );
    let home = tempfile::tempdir().unwrap();
    let tools = start(home.path(), vec![server("a", &[]), server("b", &[])], &[]);
    assert_eq!(
        tools.reconnect("c").await,
        Err("No MCP server is named \"c\"; the servers are: a, b.".into())
    );
    assert_eq!(
        tools.set_enabled("c", false).await.map(|_| ()),
        Err("No MCP server is named \"c\"; the servers are: a, b.".into())
    );
}

#[tokio::test]
async fn a_server_whose_prompts_change_is_listed_again() {
    let home = tempfile::tempdir().unwrap();
    let tools = start(
        home.path(),
        vec![server("test", &["--resources", "--list-changes"])],
        &[],
    );
    tools.wait_all().await;
    let names = |tools: &McpTools| -> Vec<String> {
        tools
            .prompts()
            .into_iter()
            .map(|prompt| prompt.name)
            .collect()
    };
    assert_eq!(names(&tools), ["greet", "plain"]);
    let seen = tools.tools_version();
    assert_eq!(
        call(&tools, "mcp__test__grow_prompt", json!({})).await,
        ToolOutput::text("a prompt grew")
    );
    tokio::time::timeout(Duration::from_secs(10), tools.changed_since(seen))
        .await
        .unwrap();
    assert_eq!(names(&tools), ["greet", "plain", "grown"]);
}
