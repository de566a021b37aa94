//! The client against a real MCP server from npm, `@modelcontextprotocol/server-everything`
//! over stdio: the interop suite (`cargo test -p cairn-mcp --features interop`), which needs
//! Node's `npx` and the network to install the server.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test should fail loudly"
)]
#![cfg(feature = "interop")]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use cairn_mcp::config::{ConfiguredServer, Scope, ServerConfig, StdioConfig};
use cairn_mcp::{Limits, McpTools, Roots, StartOptions, Status};
use cairn_protocol::{ToolResultBlock, ToolResultContent};
use cairn_tools::{CallContext, PrepareError, ToolCall, ToolExecutor, ToolOutput};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

async fn everything(home: &std::path::Path) -> Arc<McpTools> {
    let tools = McpTools::start(
        vec![ConfiguredServer {
            name: "everything".into(),
            scope: Scope::Flag,
            origin: "test".into(),
            config: ServerConfig::Stdio(StdioConfig {
                command: "npx".into(),
                args: vec![
                    "-y".into(),
                    "@modelcontextprotocol/server-everything".into(),
                ],
                env: BTreeMap::new(),
                timeout: None,
                startup_timeout: None,
                always_load: false,
            }),
        }],
        StartOptions {
            cairn_home: home.to_path_buf(),
            project: home.to_path_buf(),
            inherited_env: std::env::vars().collect(),
            limits: Limits {
                // A cold `npx` install takes a while.
                startup: Duration::from_secs(180),
                call: Duration::from_secs(60),
                max_output_tokens: 25_000,
            },
            roots: Roots::fixed(vec![home.to_path_buf()]),
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

async fn call(tools: &McpTools, name: &str, input: Value) -> Result<ToolOutput, PrepareError> {
    let prepared = tools.try_prepare(&ToolCall {
        id: "t".into(),
        name: name.into(),
        input,
    })?;
    Ok(tools
        .execute(&prepared, &CallContext::detached(CancellationToken::new()))
        .await)
}

/// The server's tool whose name contains `part` (its names changed between releases:
/// `getTinyImage`, `get-tiny-image`).
fn tool_with(tools: &McpTools, part: &str) -> String {
    tools
        .specs()
        .into_iter()
        .map(|spec| spec.name)
        .find(|name| name.to_lowercase().replace(['-', '_'], "").contains(part))
        .unwrap_or_else(|| panic!("no tool like {part} in {:?}", tools.specs()))
}

#[tokio::test]
async fn server_everything_lists_tools_echoes_returns_an_image_and_refuses_bad_input() {
    let home = tempfile::tempdir().unwrap();
    let tools = everything(home.path()).await;
    let echo = call(&tools, "mcp__everything__echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert!(
        !echo.is_error && echo.content.text().contains("hi"),
        "{echo:?}"
    );

    let image = call(&tools, &tool_with(&tools, "tinyimage"), json!({}))
        .await
        .unwrap();
    let ToolResultContent::Blocks(blocks) = &image.content else {
        panic!("{image:?}");
    };
    assert!(
        blocks
            .iter()
            .any(|block| matches!(block, ToolResultBlock::Image { .. })),
        "{image:?}"
    );

    // The schema says `message` is required: refused before the server sees it.
    let refused = call(&tools, "mcp__everything__echo", json!({})).await;
    assert!(
        matches!(refused, Err(PrepareError::RejectedInput { .. })),
        "{refused:?}"
    );
}

#[tokio::test]
async fn server_everything_resources_are_listed_and_read_and_a_prompt_is_fetched() {
    let home = tempfile::tempdir().unwrap();
    let tools = everything(home.path()).await;
    let listed = call(&tools, cairn_mcp::LIST_RESOURCES_TOOL, json!({}))
        .await
        .unwrap();
    assert!(!listed.is_error, "{listed:?}");
    let text = listed.content.text();
    // The resources, then (server-everything has some) the resource templates.
    let listing = text
        .split_once("\nResource templates (")
        .map_or(text.as_str(), |(resources, _)| resources);
    let json_end = listing.rfind(']').map_or(listing.len(), |end| end + 1);
    let resources: Value = serde_json::from_str(&listing[..json_end]).unwrap();
    let uri = resources[0]["uri"].as_str().unwrap().to_string();
    let read = call(
        &tools,
        cairn_mcp::READ_RESOURCE_TOOL,
        json!({"server": "everything", "uri": uri}),
    )
    .await
    .unwrap();
    assert!(!read.is_error, "{read:?}");

    // A prompt that needs no argument, fetched into the blocks of a turn.
    let prompt = tools
        .prompts()
        .into_iter()
        .find(|prompt| prompt.arguments.iter().all(|(_, required)| !required))
        .unwrap_or_else(|| panic!("no prompt without arguments in {:?}", tools.prompts()));
    let blocks = tools
        .get_prompt(
            "everything",
            &prompt.name,
            &[],
            &CallContext::detached(CancellationToken::new()),
        )
        .await
        .unwrap();
    assert!(!blocks.is_empty());
}
