//! A test MCP server on rmcp's server side, served over stdio by the `cairn-test-mcp-server`
//! binary, with faults on request: slow to answer `initialize`, many tools, a tool that fails,
//! one that returns an image, one that crashes the server mid-call and one that never answers;
//! two resources, a resource template and two prompts; tools that ask the client for its
//! roots, for a sampled message and for an elicited answer, and say what the client
//! answered; a `permit` tool that answers as a `--permission-prompt-tool` does.

use std::io::Write;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, InitializeRequestParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// A one-pixel PNG, for the `image` tool.
pub const PIXEL_PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// What the server does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpServerOptions {
    /// Seconds to wait before answering `initialize`.
    pub sleep_before_initialize: u64,
    /// How many extra tools (`tool_0`, `tool_1`, …) it lists beside its own.
    pub extra_tools: usize,
    /// Serve streamable HTTP on 127.0.0.1 instead of stdio (the URL is printed first).
    pub http: bool,
    /// List a `grow` tool, which adds a `grown` tool and says the tool list changed, and a
    /// `grow_prompt` tool, which adds a `grown` prompt and says the prompt list changed.
    pub list_changes: bool,
    /// Offer two resources and two prompts (`--resources`).
    pub resources: bool,
    /// List the `roots`, `sample` and `elicit` tools, which ask the client (`--client-requests`).
    pub client_requests: bool,
    /// List the `permit` tool, a `--permission-prompt-tool` (`--permit`).
    pub permit: bool,
}

impl McpServerOptions {
    /// Reads `--sleep-before-initialize N` and `--tools N`.
    pub fn parse(mut args: impl Iterator<Item = String>) -> Result<Self, String> {
        let mut options = McpServerOptions::default();
        while let Some(arg) = args.next() {
            let mut number = |name: &str| -> Result<u64, String> {
                args.next()
                    .and_then(|value| value.parse().ok())
                    .ok_or_else(|| format!("{name} takes a number"))
            };
            match arg.as_str() {
                "--sleep-before-initialize" => {
                    options.sleep_before_initialize = number("--sleep-before-initialize")?;
                }
                "--http" => options.http = true,
                "--list-changes" => options.list_changes = true,
                "--resources" => options.resources = true,
                "--client-requests" => options.client_requests = true,
                "--permit" => options.permit = true,
                "--tools" => {
                    options.extra_tools = usize::try_from(number("--tools")?)
                        .map_err(|_| "--tools is too large".to_string())?;
                }
                other => return Err(format!("unknown option {other}")),
            }
        }
        Ok(options)
    }
}

/// The server's handler.
#[derive(Debug, Clone)]
pub struct TestMcpServer {
    options: McpServerOptions,
    /// Whether `grow` was called.
    grown: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Whether `grow_prompt` was called.
    grown_prompt: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl TestMcpServer {
    /// A server that behaves as `options` say.
    pub fn new(options: McpServerOptions) -> Self {
        TestMcpServer {
            options,
            grown: std::sync::Arc::default(),
            grown_prompt: std::sync::Arc::default(),
        }
    }

    /// Serves on standard input and output until the client goes away.
    pub async fn serve_stdio(self) -> Result<(), String> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|err| err.to_string())?;
        running.waiting().await.map_err(|err| err.to_string())?;
        Ok(())
    }

    /// Serves streamable HTTP at `http://127.0.0.1:<port>/mcp`, handing the URL to
    /// `ready` once it listens, until the process ends. Requests that carry an
    /// `x-test-token` header must carry `secret`, so header passing can be checked.
    pub async fn serve_http(self, ready: impl FnOnce(String)) -> Result<(), String> {
        use rmcp::transport::StreamableHttpService;
        use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|err| err.to_string())?;
        let address = listener.local_addr().map_err(|err| err.to_string())?;
        let handler = self.clone();
        let service = std::sync::Arc::new(StreamableHttpService::new(
            move || Ok(handler.clone()),
            std::sync::Arc::new(LocalSessionManager::default()),
            Default::default(),
        ));
        ready(format!("http://{address}/mcp"));
        loop {
            let (stream, _) = listener.accept().await.map_err(|err| err.to_string())?;
            let service = service.clone();
            tokio::spawn(async move {
                let serve = hyper::service::service_fn(
                    move |request: hyper::Request<hyper::body::Incoming>| {
                        let service = service.clone();
                        async move {
                            if request
                                .headers()
                                .get("x-test-token")
                                .is_some_and(|token| token != "secret")
                            {
                                let refused = hyper::Response::builder()
                                    .status(401)
                                    .body(http_body_util::BodyExt::boxed(
                                        http_body_util::Full::new(bytes::Bytes::from_static(
                                            b"wrong token",
                                        )),
                                    ))
                                    .unwrap_or_default();
                                return Ok::<_, std::convert::Infallible>(refused);
                            }
                            Ok(service.handle(request).await)
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), serve)
                    .await;
            });
        }
    }

    fn tools(&self) -> Vec<Value> {
        let text_input = json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"]
        });
        let mut tools = vec![
            json!({
                "name": "echo",
                "description": "Says the text back.",
                "inputSchema": text_input,
                "annotations": {"readOnlyHint": true, "openWorldHint": false}
            }),
            json!({"name": "fail", "description": "Always fails.", "inputSchema": {"type": "object"}}),
            json!({"name": "image", "description": "Returns a one-pixel image.", "inputSchema": {"type": "object"}}),
            json!({"name": "crash", "description": "Exits the server mid-call.", "inputSchema": {"type": "object"}}),
            json!({"name": "hang", "description": "Never answers.", "inputSchema": {"type": "object"}}),
            json!({
                "name": "env",
                "description": "Says the value of the environment variable named by text.",
                "inputSchema": text_input,
                "annotations": {"readOnlyHint": true}
            }),
        ];
        if self.options.client_requests {
            tools.push(json!({"name": "roots", "description": "Says the client's roots, one URI a line.", "inputSchema": {"type": "object"}}));
            tools.push(json!({"name": "sample", "description": "Asks the client to sample a message.", "inputSchema": {"type": "object"}}));
            tools.push(json!({"name": "elicit", "description": "Asks the client for an answer.", "inputSchema": {"type": "object"}}));
        }
        if self.options.permit {
            tools.push(json!({
                "name": "permit",
                "description": "Answers a permission question as --permission-prompt-tool: \
                                denies when a string of the input says deny, answers with \
                                something that is not JSON when one says garbage, else allows, \
                                appending \" (approved by permit)\" to a content field.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "tool_name": {"type": "string"},
                        "input": {"type": "object"},
                        "tool_use_id": {"type": "string"}
                    },
                    "required": ["tool_name", "input"]
                }
            }));
        }
        if self.options.list_changes {
            tools.push(json!({"name": "grow", "description": "Adds the grown tool.", "inputSchema": {"type": "object"}}));
            tools.push(json!({"name": "grow_prompt", "description": "Adds the grown prompt.", "inputSchema": {"type": "object"}}));
        }
        if self.grown.load(std::sync::atomic::Ordering::SeqCst) {
            tools.push(json!({"name": "grown", "description": "Added by grow.", "inputSchema": {"type": "object"}}));
        }
        for n in 0..self.options.extra_tools {
            tools.push(json!({
                "name": format!("tool_{n}"),
                "description": format!("Extra tool number {n}, which echoes its text."),
                "inputSchema": text_input,
            }));
        }
        tools
    }
}

/// The text of the `notes` resource.
pub const NOTES_TEXT: &str = "The notes of the test server.";

/// The server's resources: a text one and a binary one.
fn resources() -> Value {
    json!([
        {"uri": "test://notes", "name": "notes", "description": "Plain notes.", "mimeType": "text/plain"},
        {"uri": "test://pixel", "name": "pixel", "description": "A one-pixel image.", "mimeType": "image/png"}
    ])
}

/// The server's resource templates: one, for numbered notes.
fn resource_templates() -> Value {
    json!([
        {"uriTemplate": "test://notes/{number}", "name": "numbered-note", "description": "One note, by its number.", "mimeType": "text/plain"}
    ])
}

/// The answer of the `permit` tool to a permission question (see its description).
fn permit(arguments: Option<&serde_json::Map<String, Value>>) -> Value {
    let question = arguments.cloned().unwrap_or_default();
    let input = question.get("input").cloned().unwrap_or_else(|| json!({}));
    let says = |word: &str| {
        input.as_object().is_some_and(|input| {
            input
                .values()
                .any(|v| v.as_str().is_some_and(|s| s.contains(word)))
        })
    };
    let tool = question
        .get("tool_name")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let answer = if question
        .get("tool_use_id")
        .and_then(Value::as_str)
        .is_none()
    {
        json!({"behavior": "deny", "message": "permit: the question has no tool_use_id"})
            .to_string()
    } else if says("garbage") {
        "this is not JSON".to_string()
    } else if says("deny") {
        json!({"behavior": "deny", "message": format!("permit says no to {tool}")}).to_string()
    } else {
        let mut updated = input.clone();
        if let Some(content) = updated.get("content").and_then(Value::as_str) {
            updated["content"] = json!(format!("{content} (approved by permit)"));
        }
        json!({"behavior": "allow", "updatedInput": updated}).to_string()
    };
    json!({"content": [{"type": "text", "text": answer}]})
}

/// The server's prompts: `greet` takes a name and a mood, `plain` nothing; `grown` once
/// `grow_prompt` was called.
fn prompts(grown: bool) -> Value {
    let mut prompts = base_prompts();
    if let (true, Value::Array(list)) = (grown, &mut prompts) {
        list.push(json!({"name": "grown", "description": "Added by grow_prompt."}));
    }
    prompts
}

fn base_prompts() -> Value {
    json!([
        {
            "name": "greet",
            "description": "Greets someone.",
            "arguments": [
                {"name": "name", "description": "Who to greet.", "required": true},
                {"name": "mood", "description": "How.", "required": false}
            ]
        },
        {"name": "plain", "description": "A prompt without arguments."}
    ])
}

fn result(value: Value) -> Result<CallToolResponse, ErrorData> {
    serde_json::from_value::<CallToolResult>(value)
        .map(CallToolResponse::from)
        .map_err(|err| ErrorData::internal_error(err.to_string(), None))
}

impl ServerHandler for TestMcpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = match self.options.resources {
            true => {
                json!({"tools": {"listChanged": true}, "resources": {"listChanged": true}, "prompts": {"listChanged": true}})
            }
            false => json!({"tools": {"listChanged": true}}),
        };
        let capabilities: ServerCapabilities =
            serde_json::from_value(capabilities).unwrap_or_default();
        InitializeResult::new(capabilities)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        tokio::time::sleep(Duration::from_secs(self.options.sleep_before_initialize)).await;
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        serde_json::from_value(json!({"tools": self.tools()}))
            .map_err(|err| ErrorData::internal_error(err.to_string(), None))
    }

    #[allow(
        deprecated,
        reason = "roots and sampling, which MCP deprecates, are what two tools test"
    )]
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request
            .arguments
            .as_ref()
            .and_then(|arguments| arguments.get("text"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        match request.name.as_ref() {
            "echo" => {
                result(json!({"content": [{"type": "text", "text": format!("echo: {text}")}]}))
            }
            "fail" => result(json!({
                "content": [{"type": "text", "text": "the fail tool failed, as it always does"}],
                "isError": true
            })),
            "image" => result(json!({"content": [
                {"type": "text", "text": "a pixel"},
                {"type": "image", "data": PIXEL_PNG_BASE64, "mimeType": "image/png"}
            ]})),
            "crash" => {
                let _ = writeln!(
                    std::io::stderr(),
                    "test server: crashing on purpose in the middle of a call"
                );
                std::process::exit(3);
            }
            "hang" => std::future::pending().await,
            "roots" => {
                let roots = context.peer.list_roots().await;
                let text = match roots {
                    Ok(roots) => roots
                        .roots
                        .iter()
                        .map(|root| root.uri.clone())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    Err(err) => format!("roots refused: {err}"),
                };
                result(json!({"content": [{"type": "text", "text": text}]}))
            }
            "sample" => {
                let params = serde_json::from_value(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                    "maxTokens": 10
                }))
                .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
                let sampled = context.peer.create_message(params).await;
                let text = match sampled {
                    Ok(message) => format!("sampled: {:?}", message.message),
                    Err(err) => format!("sampling refused: {err}"),
                };
                result(json!({"content": [{"type": "text", "text": text}]}))
            }
            "elicit" => {
                let params = serde_json::from_value(json!({
                    "mode": "form",
                    "message": "Your name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
                }))
                .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
                let text = match context.peer.create_elicitation(params).await {
                    Ok(answer) => format!("elicitation: {}", json!(answer.action)),
                    Err(err) => format!("elicitation refused: {err}"),
                };
                result(json!({"content": [{"type": "text", "text": text}]}))
            }
            "env" => result(json!({"content": [{
                "type": "text",
                "text": std::env::var(&text).unwrap_or_else(|_| format!("{text} is not set"))
            }]})),
            "grow" => {
                self.grown.store(true, std::sync::atomic::Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                result(json!({"content": [{"type": "text", "text": "grown"}]}))
            }
            "grown" => result(json!({"content": [{"type": "text", "text": "I was added later"}]})),
            "grow_prompt" => {
                self.grown_prompt
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                let _ = context.peer.notify_prompt_list_changed().await;
                result(json!({"content": [{"type": "text", "text": "a prompt grew"}]}))
            }
            "permit" => result(permit(request.arguments.as_ref())),
            name if name.starts_with("tool_") => {
                result(json!({"content": [{"type": "text", "text": format!("{name}: {text}")}]}))
            }
            other => Err(ErrorData::invalid_params(
                format!("no tool named {other}"),
                None,
            )),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        serde_json::from_value(json!({"resources": resources()}))
            .map_err(|err| ErrorData::internal_error(err.to_string(), None))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        serde_json::from_value(json!({"resourceTemplates": resource_templates()}))
            .map_err(|err| ErrorData::internal_error(err.to_string(), None))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let contents = match request.uri.as_str() {
            "test://notes" => {
                json!([{"uri": "test://notes", "mimeType": "text/plain", "text": NOTES_TEXT}])
            }
            "test://pixel" => {
                json!([{"uri": "test://pixel", "mimeType": "image/png", "blob": PIXEL_PNG_BASE64}])
            }
            other => {
                return Err(ErrorData::resource_not_found(
                    format!("no resource {other}"),
                    None,
                ));
            }
        };
        serde_json::from_value::<ReadResourceResult>(json!({"contents": contents}))
            .map(ReadResourceResponse::Complete)
            .map_err(|err| ErrorData::internal_error(err.to_string(), None))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let grown = self.grown_prompt.load(std::sync::atomic::Ordering::SeqCst);
        serde_json::from_value(json!({"prompts": prompts(grown)}))
            .map_err(|err| ErrorData::internal_error(err.to_string(), None))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let argument = |name: &str| {
            request
                .arguments
                .as_ref()
                .and_then(|arguments| arguments.get(name))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let text = match request.name.as_str() {
            "greet" => {
                let Some(name) = argument("name") else {
                    return Err(ErrorData::invalid_params(
                        "greet needs the argument `name`",
                        None,
                    ));
                };
                let mood = argument("mood").unwrap_or_else(|| "plainly".into());
                format!("Greet {name}, {mood}.")
            }
            "plain" => "Say something plain.".to_string(),
            "grown" => "A prompt that grew.".to_string(),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no prompt named {other}"),
                    None,
                ));
            }
        };
        serde_json::from_value::<GetPromptResult>(json!({
            "description": "from the test server",
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}]
        }))
        .map(GetPromptResponse::Complete)
        .map_err(|err| ErrorData::internal_error(err.to_string(), None))
    }
}

/// The `cairn-test-mcp-server` binary, for tests in other crates: it lies beside the test's
/// own executable's `deps/` directory. `cargo test --workspace` built it already; a test run
/// of one crate has cargo bring it up to date first (once per test process), so a stale
/// binary never answers for new code.
pub fn server_binary() -> std::path::PathBuf {
    static BUILT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().unwrap_or_default();
            // target/debug/deps/<test> → target/debug/cairn-test-mcp-server
            let profile_dir = exe
                .parent()
                .and_then(std::path::Path::parent)
                .map(std::path::Path::to_path_buf)
                .unwrap_or_default();
            if let (Some(cargo), Some(target_dir)) =
                (std::env::var_os("CARGO"), profile_dir.parent())
                && profile_dir.ends_with("debug")
            {
                let _ = std::process::Command::new(cargo)
                    .args(["build", "--quiet", "-p", "cairn-test-support"])
                    .args(["--bin", "cairn-test-mcp-server", "--target-dir"])
                    .arg(target_dir)
                    .status();
            }
            profile_dir.join("cairn-test-mcp-server")
        })
        .clone()
}
