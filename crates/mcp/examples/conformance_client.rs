//! The client harness for the MCP conformance suite (`@modelcontextprotocol/conformance`),
//! which runs `conformance_client <server-url>` with `MCP_CONFORMANCE_SCENARIO` set: cairn's
//! client connects over streamable HTTP, lists the tools and calls each one with arguments
//! made from its schema (numbers 1, strings "test", booleans true), as a model would. A
//! server's elicitation is accepted with the requested schema's defaults
//! (`elicitation-sep1034-client-defaults`), checked against the schema as every face's are.
//!
//! ```text
//! cargo build -p cairn-mcp --example conformance_client
//! npx @modelcontextprotocol/conformance client \
//!     --command target/debug/examples/conformance_client --scenario tools_call
//! ```

#![allow(clippy::print_stderr, reason = "a harness reports on stderr")]

use std::process::ExitCode;
use std::time::Duration;

use cairn_mcp::config::{ConfiguredServer, HttpConfig, Scope, ServerConfig};
use cairn_mcp::elicitation::{
    Elicitation, ElicitationAnswer, ElicitationFuture, ElicitationRequest, Elicitor, defaults_of,
};
use cairn_mcp::{Limits, McpTools, Roots, StartOptions, Status};
use cairn_tools::{CallContext, ToolCall, ToolExecutor};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// Arguments for a tool from its input schema: each required property gets a plain value.
fn arguments(schema: &Value) -> Value {
    let mut arguments = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        let value = match property.get("type").and_then(Value::as_str) {
            Some("number" | "integer") => json!(1),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("test"),
        };
        arguments.insert(name.clone(), value);
    }
    Value::Object(arguments)
}

/// Answers every elicitation with the schema's defaults, as a user pressing Enter on a form
/// would.
struct AcceptDefaults;

impl Elicitor for AcceptDefaults {
    fn elicit(&self, request: ElicitationRequest) -> ElicitationFuture {
        eprintln!("elicitation from {}: {}", request.server, request.message);
        let defaults = defaults_of(&request.schema);
        Box::pin(std::future::ready(ElicitationAnswer::Accept(defaults)))
    }
}

/// cairn's client for the suite's server, started and settled.
async fn start(config: &HttpConfig, home: &std::path::Path) -> std::sync::Arc<McpTools> {
    let tools = McpTools::start(
        vec![ConfiguredServer {
            name: "conformance".into(),
            scope: Scope::Flag,
            origin: "conformance".into(),
            config: ServerConfig::Http(config.clone()),
        }],
        StartOptions {
            cairn_home: home.to_path_buf(),
            project: std::env::temp_dir(),
            inherited_env: Vec::new(),
            limits: Limits {
                startup: Duration::from_secs(20),
                call: Duration::from_secs(20),
                max_output_tokens: 25_000,
            },
            roots: Roots::fixed(Vec::new()),
            elicitation: Elicitation::new(AcceptDefaults),
        },
    );
    tools.wait_all().await;
    tools
}

/// The `auth/*` scenarios: `cairn mcp login`'s flow, where the "user" opening the
/// authorization URL is a GET that follows the suite's authorization server's redirect (it
/// approves at once) to cairn's loopback listener.
async fn authorize(config: &HttpConfig, home: &std::path::Path) -> Result<(), String> {
    let store = cairn_mcp::auth::AuthStore::new(home);
    let open = |url: &str| {
        let url = url.to_string();
        tokio::spawn(async move {
            if let Err(err) = reqwest::get(&url).await {
                eprintln!("conformance_client: opening the authorization URL: {err}");
            }
        });
    };
    let login = cairn_mcp::auth::login(&store, "conformance", config, open);
    match tokio::time::timeout(Duration::from_secs(20), login).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(err)) => Err(err.to_string()),
        Err(_) => Err("the authorization's redirect did not come within 20 s".into()),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: conformance_client <server-url>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let home = std::env::temp_dir().join(format!("cairn-conformance-{}", std::process::id()));
    let config: HttpConfig = match serde_json::from_value(json!({"url": url})) {
        Ok(config) => config,
        Err(err) => {
            eprintln!("conformance_client: {err}");
            return ExitCode::FAILURE;
        }
    };
    let mut tools = start(&config, &home).await;
    if let Status::Failed(reason) = &tools.reports()[0].status
        && reason.starts_with("needs authentication")
    {
        if let Err(err) = authorize(&config, &home).await {
            eprintln!("conformance_client ({scenario}): {err}");
            return ExitCode::FAILURE;
        }
        tools = start(&config, &home).await;
    }
    if let Status::Failed(reason) = &tools.reports()[0].status {
        eprintln!("conformance_client ({scenario}): {reason}");
        return ExitCode::FAILURE;
    }
    let cx = CallContext::detached(CancellationToken::new());
    for spec in tools.specs() {
        if !spec.name.starts_with("mcp__") {
            continue;
        }
        let call = ToolCall {
            id: spec.name.clone(),
            name: spec.name.clone(),
            input: arguments(&spec.input_schema),
        };
        match tools.try_prepare(&call) {
            Ok(prepared) => {
                let output = tools.execute(&prepared, &cx).await;
                eprintln!("{}: {}", spec.name, output.content.text());
            }
            Err(err) => eprintln!("{}: {err}", spec.name),
        }
    }
    let _ = std::fs::remove_dir_all(home);
    ExitCode::SUCCESS
}
