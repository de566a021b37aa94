//! MCP resources: the two tools that list and read every connected server's resources
//! (`ListMcpResourcesTool` and `ReadMcpResourceTool`, Claude Code's names), and `@server:uri`
//! mentions, which attach a resource to a prompt.
//!
//! Both tools only list or read, and cairn knows that of them (they are its own, not a
//! server's claim), so they run without a question, as in Claude Code.

use cairn_protocol::{ContentBlock, ToolResultBlock, ToolResultContent, ToolSpec};
use cairn_tools::{Access, CallContext, Concurrency, Destructiveness, Safety, ToolOutput};
use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};

use crate::executor::McpTools;
use crate::server::{State, supports};

/// The tool that lists the resources of the connected servers.
pub const LIST_RESOURCES_TOOL: &str = "ListMcpResourcesTool";
/// The tool that reads one resource of a server.
pub const READ_RESOURCE_TOOL: &str = "ReadMcpResourceTool";

/// What the two resource tools are: read-only, safe beside other calls.
pub(crate) const RESOURCE_SAFETY: Safety = Safety {
    access: Access::ReadOnly,
    destructive: Destructiveness::Harmless,
    concurrency: Concurrency::Safe,
};

/// Whether `name` is one of the two resource tools.
pub(crate) fn is_resource_tool(name: &str) -> bool {
    name == LIST_RESOURCES_TOOL || name == READ_RESOURCE_TOOL
}

/// The two tools' definitions.
pub(crate) fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: LIST_RESOURCES_TOOL.into(),
            description: "Lists the resources the connected MCP servers offer (files, \
                          records, documents), each with its server, URI, name and type, and \
                          their resource templates (URI templates: fill one in and read it \
                          with ReadMcpResourceTool). Give `server` to list one server's only."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "Only this server's resources."}
                },
                "additionalProperties": false
            }),
        },
        ToolSpec {
            name: READ_RESOURCE_TOOL.into(),
            description: "Reads one resource of an MCP server by its URI, as \
                          ListMcpResourcesTool lists it."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "The server's name."},
                    "uri": {"type": "string", "description": "The resource's URI."}
                },
                "required": ["server", "uri"],
                "additionalProperties": false
            }),
        },
    ]
}

/// Why the input of a resource tool is refused, if it is.
pub(crate) fn check_input(name: &str, input: &Value) -> Result<(), String> {
    let Some(object) = input.as_object() else {
        return Err(format!(
            "Invalid input for {name}: the input must be a JSON object."
        ));
    };
    let text = |field: &str| object.get(field).map(Value::is_string);
    let required: &[&str] = match name {
        READ_RESOURCE_TOOL => &["server", "uri"],
        _ => &[],
    };
    for field in required {
        if text(field).is_none() {
            return Err(format!(
                "Invalid input for {name}: the field `{field}` is required."
            ));
        }
    }
    for (field, _) in object {
        if !matches!(field.as_str(), "server" | "uri")
            || (name == LIST_RESOURCES_TOOL && field == "uri")
        {
            return Err(format!(
                "Invalid input for {name}: there is no field `{field}`."
            ));
        }
        if text(field) == Some(false) {
            return Err(format!(
                "Invalid input for {name}: `{field}` must be a string."
            ));
        }
    }
    Ok(())
}

impl McpTools {
    /// Whether a connected server offers resources, so the two tools are worth offering.
    pub(crate) fn has_resources(&self) -> bool {
        self.servers.iter().any(|server| match server.state() {
            State::Connected(peer) => supports(&peer, |caps| caps.resources.is_some()),
            State::Starting | State::Failed(_) | State::Disabled => false,
        })
    }

    /// Runs one of the two resource tools.
    pub(crate) async fn run_resource_tool(
        &self,
        name: &str,
        input: &Value,
        cx: &CallContext,
    ) -> ToolOutput {
        let server = input.get("server").and_then(Value::as_str);
        match name {
            READ_RESOURCE_TOOL => {
                let uri = input.get("uri").and_then(Value::as_str).unwrap_or_default();
                match self
                    .read_resource(server.unwrap_or_default(), uri, cx)
                    .await
                {
                    Ok(contents) => crate::result::to_output(
                        &json!({"content": contents}),
                        self.max_output_tokens(server.unwrap_or_default()),
                    ),
                    Err(message) => ToolOutput::error(message),
                }
            }
            _ => self.list_resources(server, cx).await,
        }
    }

    async fn list_resources(&self, only: Option<&str>, cx: &CallContext) -> ToolOutput {
        if let Some(only) = only
            && !self.servers.iter().any(|server| server.name() == only)
        {
            return ToolOutput::error(self.no_such_server(only));
        }
        let mut listed: Vec<Value> = Vec::new();
        let mut templates: Vec<Value> = Vec::new();
        let mut problems: Vec<String> = Vec::new();
        for server in &self.servers {
            if only.is_some_and(|only| only != server.name()) {
                continue;
            }
            let peer = match self.connected(server, cx).await {
                Ok(peer) => peer,
                Err(reason) => {
                    problems.push(reason);
                    continue;
                }
            };
            if !supports(&peer, |caps| caps.resources.is_some()) {
                continue;
            }
            let listing = tokio::select! {
                listing = tokio::time::timeout(server.limits.call, peer.list_all_resources()) => listing,
                _ = cx.cancel.cancelled() => return ToolOutput::error("The user interrupted this tool call."),
            };
            match listing {
                Ok(Ok(resources)) => {
                    for resource in resources {
                        if let Ok(mut item) = serde_json::to_value(&resource) {
                            if let Some(object) = item.as_object_mut() {
                                object.insert("server".into(), json!(server.name()));
                            }
                            listed.push(item);
                        }
                    }
                }
                Ok(Err(err)) => problems.push(format!(
                    "The MCP server \"{}\" did not list its resources: {err}",
                    server.name()
                )),
                Err(_) => problems.push(format!(
                    "The MCP server \"{}\" did not list its resources in time.",
                    server.name()
                )),
            }
            // Templates are an extra: a server that has none, or cannot list them, still has
            // its resources listed.
            let listing = tokio::select! {
                listing = tokio::time::timeout(server.limits.call, peer.list_all_resource_templates()) => listing,
                _ = cx.cancel.cancelled() => return ToolOutput::error("The user interrupted this tool call."),
            };
            if let Ok(Ok(found)) = listing {
                for template in found {
                    if let Ok(mut item) = serde_json::to_value(&template) {
                        if let Some(object) = item.as_object_mut() {
                            object.insert("server".into(), json!(server.name()));
                        }
                        templates.push(item);
                    }
                }
            }
        }
        let mut text = if listed.is_empty() {
            "No resources found.".to_string()
        } else {
            serde_json::to_string_pretty(&listed).unwrap_or_default()
        };
        if !templates.is_empty() {
            text.push_str(
                "\nResource templates (fill in a template's {placeholders} and read the URI with \
                 ReadMcpResourceTool):\n",
            );
            text.push_str(&serde_json::to_string_pretty(&templates).unwrap_or_default());
        }
        for problem in problems {
            text.push('\n');
            text.push_str(&problem);
        }
        ToolOutput::text(text)
    }

    /// One resource's contents, as `tools/call` content items (text, or an image, or a
    /// described blob), or why it cannot be read.
    pub(crate) async fn read_resource(
        &self,
        server_name: &str,
        uri: &str,
        cx: &CallContext,
    ) -> Result<Vec<Value>, String> {
        let Some(server) = self
            .servers
            .iter()
            .find(|server| server.name() == server_name)
        else {
            return Err(self.no_such_server(server_name));
        };
        let peer = self.connected(server, cx).await?;
        if !supports(&peer, |caps| caps.resources.is_some()) {
            return Err(format!(
                "The MCP server \"{server_name}\" offers no resources."
            ));
        }
        let request = ReadResourceRequestParams::new(uri);
        let read = tokio::select! {
            read = tokio::time::timeout(server.limits.call, peer.read_resource(request)) => read,
            _ = cx.cancel.cancelled() => return Err("The user interrupted this tool call.".into()),
        };
        let result = match read {
            Ok(Ok(result)) => result,
            Ok(Err(err)) => {
                return Err(format!(
                    "The MCP server \"{server_name}\" could not read {uri}: {err}"
                ));
            }
            Err(_) => {
                return Err(format!(
                    "The MCP server \"{server_name}\" did not read {uri} within {} s.",
                    server.limits.call.as_secs_f32()
                ));
            }
        };
        let result = serde_json::to_value(&result).unwrap_or_default();
        let contents = result
            .get("contents")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok(contents.into_iter().map(content_item).collect())
    }

    /// The resources `text` mentions as `@server:uri` (a configured server's name, a colon,
    /// the URI), read and turned into blocks to send after the text; a mention that cannot
    /// be read becomes a warning instead.
    pub async fn attach_mentions(
        &self,
        text: &str,
        cx: &CallContext,
    ) -> (Vec<ContentBlock>, Vec<String>) {
        let mut blocks = Vec::new();
        let mut warnings = Vec::new();
        for (server, uri) in self.mentions(text) {
            match self.read_resource(&server, &uri, cx).await {
                Ok(contents) => {
                    let output = crate::result::to_output(
                        &json!({"content": contents}),
                        self.max_output_tokens(&server),
                    );
                    let heading = format!("The resource {uri} of the MCP server \"{server}\":");
                    match output.content {
                        ToolResultContent::Text(body) => {
                            blocks.push(ContentBlock::text(format!("{heading}\n{body}")));
                        }
                        ToolResultContent::Blocks(parts) => {
                            blocks.push(ContentBlock::text(heading));
                            blocks.extend(parts.into_iter().map(|part| match part {
                                ToolResultBlock::Text { text } => ContentBlock::text(text),
                                ToolResultBlock::Image { source } => ContentBlock::Image { source },
                            }));
                        }
                    }
                }
                Err(reason) => warnings.push(format!("@{server}:{uri} was not attached: {reason}")),
            }
        }
        (blocks, warnings)
    }

    /// The `@server:uri` mentions of `text` whose server is configured, each once.
    pub fn mentions(&self, text: &str) -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = Vec::new();
        for word in text.split_whitespace() {
            let Some(mention) = word.strip_prefix('@') else {
                continue;
            };
            let Some((server, uri)) = mention.split_once(':') else {
                continue;
            };
            // A mention at the end of a sentence keeps its punctuation out of the URI.
            let uri = uri.trim_end_matches([',', '.', ';', ')', '!', '?']);
            if uri.is_empty() || !self.servers.iter().any(|known| known.name() == server) {
                continue;
            }
            let mention = (server.to_string(), uri.to_string());
            if !found.contains(&mention) {
                found.push(mention);
            }
        }
        found
    }

    pub(crate) fn no_such_server(&self, name: &str) -> String {
        let names: Vec<&str> = self.servers.iter().map(|server| server.name()).collect();
        format!(
            "No MCP server is named \"{name}\"; the servers are: {}.",
            names.join(", ")
        )
    }

    fn max_output_tokens(&self, server: &str) -> usize {
        self.servers
            .iter()
            .find(|candidate| candidate.name() == server)
            .map_or(crate::result::DEFAULT_MAX_OUTPUT_TOKENS, |server| {
                server.limits.max_output_tokens
            })
    }
}

/// One item of a `resources/read` result as a `tools/call` content item: an image's blob
/// as an image, anything else as an embedded resource.
fn content_item(item: Value) -> Value {
    let mime = item
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match item.get("blob").and_then(Value::as_str) {
        Some(blob) if mime.starts_with("image/") => {
            json!({"type": "image", "data": blob, "mimeType": mime})
        }
        _ => json!({"type": "resource", "resource": item}),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn resource_tool_input_is_checked() {
        let cases = [
            (LIST_RESOURCES_TOOL, json!({}), Ok(())),
            (LIST_RESOURCES_TOOL, json!({"server": "s"}), Ok(())),
            (
                LIST_RESOURCES_TOOL,
                json!({"uri": "x"}),
                Err("Invalid input for ListMcpResourcesTool: there is no field `uri`."),
            ),
            (
                READ_RESOURCE_TOOL,
                json!({"server": "s", "uri": "test://a"}),
                Ok(()),
            ),
            (
                READ_RESOURCE_TOOL,
                json!({"server": "s"}),
                Err("Invalid input for ReadMcpResourceTool: the field `uri` is required."),
            ),
            (
                READ_RESOURCE_TOOL,
                json!({"server": 1, "uri": "u"}),
                Err("Invalid input for ReadMcpResourceTool: `server` must be a string."),
            ),
        ];
        for (tool, input, expected) in cases {
            assert_eq!(
                check_input(tool, &input),
                expected.map_err(String::from),
                "{input}"
            );
        }
    }

    #[test]
    fn an_image_blob_becomes_an_image_and_other_contents_a_resource() {
        assert_eq!(
            content_item(json!({"uri": "a", "mimeType": "image/png", "blob": "AAA"})),
            json!({"type": "image", "data": "AAA", "mimeType": "image/png"})
        );
        assert_eq!(
            content_item(json!({"uri": "a", "text": "hi"})),
            json!({"type": "resource", "resource": {"uri": "a", "text": "hi"}})
        );
    }
}
