//! MCP prompts: each connected server's prompts (listed when it connects) as the session's
//! commands, and a prompt fetched (`prompts/get`) into the blocks of a user turn.

use cairn_protocol::{ContentBlock, ImageSource};
use cairn_tools::CallContext;
use rmcp::model::GetPromptRequestParams;
use serde_json::{Map, Value};

use crate::executor::McpTools;
use crate::names::tool_name;

/// One prompt of a server, as a command offers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptInfo {
    /// The server's name under `mcpServers`.
    pub server: String,
    /// The prompt's own name on its server.
    pub name: String,
    /// The command it is typed as, without the slash: `mcp__<server>__<prompt>`, sanitised
    /// as a tool name is.
    pub command: String,
    /// What it does, as its server says.
    pub description: String,
    /// Its arguments in the server's order: name and whether it is required.
    pub arguments: Vec<(String, bool)>,
}

/// Why a prompt could not be fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// No configured server has that name.
    #[error("no MCP server is named \"{server}\"")]
    UnknownServer {
        /// The name asked for.
        server: String,
    },
    /// The server is not connected, or the user interrupted while it started.
    #[error("{reason}")]
    Unavailable {
        /// Why, with the server's name and its stderr's tail.
        reason: String,
    },
    /// The server answered `prompts/get` with an error, or not in time.
    #[error("the MCP server \"{server}\" did not give the prompt {prompt}: {reason}")]
    Failed {
        /// The server.
        server: String,
        /// The prompt.
        prompt: String,
        /// What went wrong.
        reason: String,
    },
}

impl McpTools {
    /// Every connected server's prompts, server by server in the configuration's order.
    pub fn prompts(&self) -> Vec<PromptInfo> {
        let mut prompts = Vec::new();
        for server in &self.servers {
            if server.disabled.load(std::sync::atomic::Ordering::SeqCst) {
                continue;
            }
            let Ok(listed) = server.prompts.read() else {
                continue;
            };
            for prompt in listed.iter() {
                let Some(name) = prompt.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let arguments = prompt
                    .get("arguments")
                    .and_then(Value::as_array)
                    .map(|arguments| {
                        arguments
                            .iter()
                            .filter_map(|argument| {
                                let name = argument.get("name")?.as_str()?.to_string();
                                let required =
                                    argument.get("required").and_then(Value::as_bool) == Some(true);
                                Some((name, required))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                prompts.push(PromptInfo {
                    server: server.name().to_string(),
                    name: name.to_string(),
                    command: tool_name(server.name(), name),
                    description: prompt
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    arguments,
                });
            }
        }
        prompts
    }

    /// The prompt `prompt` of `server` with `arguments`, as the blocks of a user turn: each
    /// message's text, image or embedded resource, in order.
    pub async fn get_prompt(
        &self,
        server_name: &str,
        prompt: &str,
        arguments: &[(String, String)],
        cx: &CallContext,
    ) -> Result<Vec<ContentBlock>, PromptError> {
        let Some(server) = self
            .servers
            .iter()
            .find(|server| server.name() == server_name)
        else {
            return Err(PromptError::UnknownServer {
                server: server_name.to_string(),
            });
        };
        let peer = self
            .connected(server, cx)
            .await
            .map_err(|reason| PromptError::Unavailable { reason })?;
        let failed = |reason: String| PromptError::Failed {
            server: server_name.to_string(),
            prompt: prompt.to_string(),
            reason,
        };
        let values: Map<String, Value> = arguments
            .iter()
            .map(|(name, value)| (name.clone(), Value::String(value.clone())))
            .collect();
        let request = GetPromptRequestParams::new(prompt).with_arguments(values);
        let fetched = tokio::select! {
            fetched = tokio::time::timeout(server.limits.call, peer.get_prompt(request)) => fetched,
            _ = cx.cancel.cancelled() => return Err(failed("the user interrupted".into())),
        };
        let result = match fetched {
            Ok(Ok(result)) => result,
            Ok(Err(err)) => return Err(failed(err.to_string())),
            Err(_) => {
                return Err(failed(format!(
                    "no answer within {} s",
                    server.limits.call.as_secs_f32()
                )));
            }
        };
        let result = serde_json::to_value(&result).map_err(|err| failed(err.to_string()))?;
        let messages = result
            .get("messages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let blocks: Vec<ContentBlock> = messages
            .iter()
            .filter_map(|message| message.get("content"))
            .map(prompt_block)
            .collect();
        if blocks.is_empty() {
            return Err(failed("the prompt has no messages".into()));
        }
        Ok(blocks)
    }
}

/// One message's content as a block of the turn.
fn prompt_block(content: &Value) -> ContentBlock {
    let str_of = |value: &Value, key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match content.get("type").and_then(Value::as_str) {
        Some("image") => ContentBlock::Image {
            source: ImageSource::Base64 {
                media_type: str_of(content, "mimeType"),
                data: str_of(content, "data"),
            },
        },
        Some("resource") => {
            let resource = content.get("resource").unwrap_or(&Value::Null);
            ContentBlock::text(format!(
                "[resource {}]\n{}",
                str_of(resource, "uri"),
                str_of(resource, "text")
            ))
        }
        Some("text") | None => ContentBlock::text(str_of(content, "text")),
        Some(other) => ContentBlock::text(format!("[content of type \"{other}\", not shown]")),
    }
}
