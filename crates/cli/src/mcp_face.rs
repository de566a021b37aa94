//! The interactive UI's view of the session's MCP servers ([`cairn_tui::McpFace`]), through
//! the same functions `-p` uses: the prompts of the one command table, a prompt's turn, the
//! `@server:uri` resources a message attaches; and the resources `@` completion offers, as
//! `ListMcpResourcesTool` lists them.

use std::sync::Arc;

use cairn_core::assembly::Turn;
use cairn_core::commands::{CommandEntry, McpPromptCall};
use cairn_mcp::{LIST_RESOURCES_TOOL, McpTools};
use cairn_tools::{CallContext, ToolCall, ToolExecutor};
use cairn_tui::McpFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The session's servers, for the interactive UI.
#[derive(Debug)]
pub struct TuiMcp(pub Arc<McpTools>);

impl cairn_tui::McpFace for TuiMcp {
    fn prompts(&self) -> Vec<CommandEntry> {
        crate::mcp::prompt_entries(&self.0)
    }

    fn prompt_turn(&self, call: McpPromptCall) -> McpFuture<Result<Turn, String>> {
        let mcp = self.0.clone();
        Box::pin(async move {
            // The prompt may be on a server still starting: fetching it waits for that one.
            crate::mcp::prompt_turn(&mcp, &call, CancellationToken::new())
                .await
                .map_err(|err| err.to_string())
        })
    }

    fn mentions_resources(&self, text: &str) -> bool {
        !self.0.mentions(text).is_empty()
    }

    fn attach_mentions(&self, mut turn: Turn) -> McpFuture<(Turn, Vec<String>)> {
        let mcp = self.0.clone();
        Box::pin(async move {
            let warnings = crate::mcp::attach_mentions(Some(&mcp), &mut turn).await;
            (turn, warnings)
        })
    }

    fn settled(&self) -> McpFuture<()> {
        let mcp = self.0.clone();
        Box::pin(async move { mcp.wait_all().await })
    }

    fn resources(&self) -> McpFuture<Vec<String>> {
        let mcp = self.0.clone();
        Box::pin(async move {
            let call = ToolCall {
                id: "resources".into(),
                name: LIST_RESOURCES_TOOL.into(),
                input: serde_json::json!({}),
            };
            // Offered only once a connected server has resources.
            let Ok(prepared) = mcp.try_prepare(&call) else {
                return Vec::new();
            };
            let cx = CallContext::detached(CancellationToken::new());
            let output = mcp.execute(&prepared, &cx).await;
            if output.is_error {
                return Vec::new();
            }
            mentions_of(&output.content.text())
        })
    }
}

/// `server:uri` for each resource of `ListMcpResourcesTool`'s listing (a JSON array, maybe
/// followed by the servers that could not list theirs).
fn mentions_of(listing: &str) -> Vec<String> {
    let Some(Ok(Value::Array(resources))) = serde_json::Deserializer::from_str(listing)
        .into_iter::<Value>()
        .next()
    else {
        return Vec::new();
    };
    resources
        .iter()
        .filter_map(|resource| {
            let server = resource.get("server")?.as_str()?;
            let uri = resource.get("uri")?.as_str()?;
            Some(format!("{server}:{uri}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_gives_each_resource_as_a_mention() {
        let listing = "[{\"server\": \"docs\", \"uri\": \"file:///a.md\", \"name\": \"a\"},\n \
                       {\"server\": \"db\", \"uri\": \"pg://t\"}]\n\nThe MCP server \"x\" did \
                       not list its resources in time.";
        assert_eq!(mentions_of(listing), ["docs:file:///a.md", "db:pg://t"]);
        assert!(mentions_of("No resources found.").is_empty());
    }
}
