//! `cairn mcp serve`: cairn's own tools served to other MCP clients, each call behind the same
//! gate as the model's. Nobody can be asked a question on this path, so a call that would ask
//! is refused, with the gate's reason as the tool's error result; what the rules allow runs.
//!
//! [`ToolServer`] is rmcp's server side over any [`cairn_tools::ToolExecutor`] and
//! [`CallGate`], served on any rmcp transport ([`ToolServer::serve_on`]; the CLI uses stdio).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use cairn_protocol::{ImageSource, ToolResultBlock, ToolResultContent};
use cairn_tools::{CallContext, PreparedCall, ToolCall, ToolExecutor, ToolOutput};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Decides whether a call from an MCP client may run: the session's permission rules and
/// hooks, with nobody to ask.
#[async_trait]
pub trait CallGate: Send + Sync {
    /// The call to run (a hook may have rewritten its input), or the refusal or error to send
    /// back as the call's result.
    async fn authorize(
        &self,
        tools: &Arc<dyn ToolExecutor>,
        call: PreparedCall,
        cancel: &CancellationToken,
    ) -> Result<PreparedCall, ToolOutput>;
}

/// cairn's tools as an MCP server.
#[derive(Clone)]
pub struct ToolServer {
    tools: Arc<dyn ToolExecutor>,
    gate: Arc<dyn CallGate>,
    next_id: Arc<AtomicU64>,
}

impl std::fmt::Debug for ToolServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolServer").finish_non_exhaustive()
    }
}

/// Why serving stopped before the client went away.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The client never completed the MCP handshake.
    #[error("the MCP client did not complete the handshake: {0}")]
    Handshake(String),
    /// The connection failed while serving.
    #[error("the MCP connection failed: {0}")]
    Connection(String),
}

impl ToolServer {
    /// A server of `tools`, each call judged by `gate`.
    pub fn new(tools: Arc<dyn ToolExecutor>, gate: Arc<dyn CallGate>) -> ToolServer {
        ToolServer {
            tools,
            gate,
            next_id: Arc::default(),
        }
    }

    /// Serves on `transport` until the client goes away.
    pub async fn serve_on<T, E, A>(self, transport: T) -> Result<(), ServeError>
    where
        T: rmcp::transport::IntoTransport<RoleServer, E, A> + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let running = self
            .serve(transport)
            .await
            .map_err(|err| ServeError::Handshake(err.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|err| ServeError::Connection(err.to_string()))?;
        Ok(())
    }

    /// Serves on standard input and output until the client goes away.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        self.serve_on(rmcp::transport::stdio()).await
    }

    /// One call, start to end: prepared (unknown tools and bad input refused), judged by the
    /// gate, run.
    pub async fn call(
        &self,
        name: &str,
        arguments: Value,
        cancel: CancellationToken,
    ) -> ToolOutput {
        let call = ToolCall {
            id: format!("mcp_{}", self.next_id.fetch_add(1, Ordering::SeqCst)),
            name: name.to_string(),
            input: arguments,
        };
        let prepared = match self.tools.try_prepare(&call) {
            Ok(prepared) => prepared,
            Err(error) => return error.into_output(),
        };
        let prepared = match self.gate.authorize(&self.tools, prepared, &cancel).await {
            Ok(prepared) => prepared,
            Err(refusal) => return refusal,
        };
        self.tools
            .execute(&prepared, &CallContext::detached(cancel))
            .await
    }
}

/// A result as MCP carries it: text and images as content, `isError` for a failure or a
/// refusal.
fn to_mcp_result(output: &ToolOutput) -> Value {
    let content: Vec<Value> = match &output.content {
        ToolResultContent::Text(text) => vec![json!({"type": "text", "text": text})],
        ToolResultContent::Blocks(blocks) => blocks
            .iter()
            .map(|block| match block {
                ToolResultBlock::Text { text } => json!({"type": "text", "text": text}),
                ToolResultBlock::Image {
                    source: ImageSource::Base64 { media_type, data },
                } => json!({"type": "image", "data": data, "mimeType": media_type}),
                ToolResultBlock::Image { source } => {
                    json!({"type": "text", "text": format!("[an image: {source:?}]")})
                }
            })
            .collect(),
    };
    json!({"content": content, "isError": output.is_error})
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities: ServerCapabilities =
            serde_json::from_value(json!({"tools": {}})).unwrap_or_default();
        let mut info = ServerConfig::new(capabilities);
        info.server_info = Implementation::new("cairn", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools: Vec<Value> = self
            .tools
            .specs()
            .into_iter()
            .map(|spec| {
                json!({
                    "name": spec.name,
                    "description": spec.description,
                    "inputSchema": spec.input_schema,
                })
            })
            .collect();
        serde_json::from_value(json!({ "tools": tools }))
            .map_err(|err| ErrorData::internal_error(err.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // The client's `notifications/cancelled` cancels the request's token.
        let output = self
            .call(&request.name, arguments, context.ct.clone())
            .await;
        serde_json::from_value::<CallToolResult>(to_mcp_result(&output))
            .map(CallToolResponse::from)
            .map_err(|err| ErrorData::internal_error(err.to_string(), None))
    }
}
