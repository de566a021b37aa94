//! The client against the test MCP server (rmcp's server side, `cairn-test-mcp-server`) over
//! stdio: tools listed and called, every kind of result, failures that become error results
//! and never hangs, and the manifest cache.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test should fail loudly"
)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_mcp::cache::ManifestCache;
use cairn_mcp::config::{ConfiguredServer, Scope, ServerConfig, StdioConfig};
use cairn_mcp::{Limits, McpTools, Roots, StartOptions, Status};
use cairn_protocol::{ImageSource, ToolResultBlock, ToolResultContent};
use cairn_test_support::mcp::{PIXEL_PNG_BASE64, server_binary};
use cairn_tools::{
    Assurance, CallContext, PrepareError, Reach, ToolCall, ToolExecutor, ToolOutput,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn server(name: &str, args: &[&str]) -> ConfiguredServer {
    server_running(name, &server_binary().display().to_string(), args)
}

fn server_running(name: &str, command: &str, args: &[&str]) -> ConfiguredServer {
    ConfiguredServer {
        name: name.into(),
        scope: Scope::Flag,
        origin: "test".into(),
        config: ServerConfig::Stdio(StdioConfig {
            command: command.into(),
            args: args.iter().map(|arg| arg.to_string()).collect(),
            env: BTreeMap::new(),
            timeout: None,
            startup_timeout: None,
            always_load: false,
        }),
    }
}

fn start(home: &Path, servers: Vec<ConfiguredServer>, call: Duration) -> Arc<McpTools> {
    McpTools::start(
        servers,
        StartOptions {
            cairn_home: home.to_path_buf(),
            project: home.to_path_buf(),
            inherited_env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
            limits: Limits {
                startup: Duration::from_secs(20),
                call,
                max_output_tokens: 25_000,
            },
            roots: Roots::fixed(vec![home.to_path_buf()]),
            elicitation: cairn_mcp::elicitation::Elicitation::decline(),
        },
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

#[tokio::test]
async fn tools_are_listed_and_every_kind_of_result_comes_back() {
    let home = tempfile::tempdir().unwrap();
    let tools = start(
        home.path(),
        vec![server("test", &[])],
        Duration::from_secs(20),
    );
    tools.wait_all().await;
    let names: Vec<String> = tools.specs().into_iter().map(|spec| spec.name).collect();
    assert_eq!(
        names,
        [
            "mcp__test__echo",
            "mcp__test__fail",
            "mcp__test__image",
            "mcp__test__crash",
            "mcp__test__hang",
            "mcp__test__env"
        ]
    );
    assert_eq!(
        call(&tools, "mcp__test__echo", json!({"text": "hi"})).await,
        ToolOutput::text("echo: hi")
    );
    assert_eq!(
        call(&tools, "mcp__test__fail", json!({})).await,
        ToolOutput::error("the fail tool failed, as it always does")
    );
    assert_eq!(
        call(&tools, "mcp__test__image", json!({})).await.content,
        ToolResultContent::Blocks(vec![
            ToolResultBlock::Text {
                text: "a pixel".into()
            },
            ToolResultBlock::Image {
                source: ImageSource::Base64 {
                    media_type: "image/png".into(),
                    data: PIXEL_PNG_BASE64.into()
                }
            }
        ])
    );
    let prepared = tools
        .try_prepare(&ToolCall {
            id: "t".into(),
            name: "mcp__test__echo".into(),
            input: json!({"text": "x"}),
        })
        .unwrap();
    // The server calls echo read-only and closed-world: its word, not cairn's.
    assert_eq!(tools.reach(&prepared), Reach::Local);
    assert_eq!(tools.assurance(&prepared), Assurance::Claimed);
    assert_eq!(
        tools.reports()[0].status,
        Status::Connected,
        "{:?}",
        tools.reports()
    );
}

#[tokio::test]
async fn input_that_does_not_fit_the_schema_never_reaches_the_server() {
    let home = tempfile::tempdir().unwrap();
    let tools = start(
        home.path(),
        vec![server("test", &[])],
        Duration::from_secs(20),
    );
    tools.wait_all().await;
    let refused = tools.try_prepare(&ToolCall {
        id: "t".into(),
        name: "mcp__test__echo".into(),
        input: json!({"text": 5}),
    });
    assert_eq!(
        refused.unwrap_err(),
        PrepareError::RejectedInput {
            tool: "mcp__test__echo".into(),
            message:
                "Invalid input for mcp__test__echo: field `text`: 5 is not of type \"string\"."
                    .into()
        }
    );
    assert!(matches!(
        tools.try_prepare(&ToolCall {
            id: "t".into(),
            name: "mcp__test__nothing".into(),
            input: json!({}),
        }),
        Err(PrepareError::UnknownTool { .. })
    ));
}

#[tokio::test]
async fn a_crash_mid_call_is_an_error_result_with_its_stderr_and_the_server_comes_back() {
    let home = tempfile::tempdir().unwrap();
    let tools = start(
        home.path(),
        vec![server("test", &[])],
        Duration::from_secs(20),
    );
    tools.wait_all().await;
    let crashed = call(&tools, "mcp__test__crash", json!({})).await;
    assert!(crashed.is_error);
    let text = crashed.content.text();
    assert!(
        text.starts_with("The MCP server \"test\" failed: it stopped during a call to crash"),
        "{text}"
    );
    assert!(text.contains("crashing on purpose"), "{text}");
    // Restarted on its next use.
    assert_eq!(
        call(&tools, "mcp__test__echo", json!({"text": "again"})).await,
        ToolOutput::text("echo: again")
    );
}

#[tokio::test]
async fn a_hung_call_ends_at_the_tool_timeout() {
    let home = tempfile::tempdir().unwrap();
    let tools = start(
        home.path(),
        vec![server("test", &[])],
        Duration::from_millis(300),
    );
    tools.wait_all().await;
    let hung = call(&tools, "mcp__test__hang", json!({})).await;
    assert_eq!(
        hung,
        ToolOutput::error(
            "The MCP server \"test\" did not answer the call to hang within 0.3 s \
             (MCP_TOOL_TIMEOUT, or the server's timeout)."
        )
    );
}

#[tokio::test]
async fn a_server_with_200_tools_lists_them_all() {
    let home = tempfile::tempdir().unwrap();
    let tools = start(
        home.path(),
        vec![server("many", &["--tools", "200"])],
        Duration::from_secs(20),
    );
    tools.wait_all().await;
    assert_eq!(tools.specs().len(), 206);
    assert_eq!(
        call(&tools, "mcp__many__tool_199", json!({"text": "last"})).await,
        ToolOutput::text("tool_199: last")
    );
}

#[tokio::test]
async fn missing_and_slow_servers_never_hold_up_settling() {
    let home = tempfile::tempdir().unwrap();
    let tools = start(
        home.path(),
        vec![
            server_running("missing", "/nonexistent/mcp-server", &[]),
            server("slow", &["--sleep-before-initialize", "8"]),
        ],
        Duration::from_secs(20),
    );
    let started = Instant::now();
    tools.settle(Duration::from_millis(300)).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let reports = tools.reports();
    let Status::Failed(reason) = &reports[0].status else {
        panic!("{reports:?}");
    };
    assert!(
        reason.starts_with("cannot run `/nonexistent/mcp-server`"),
        "{reason}"
    );
    assert_eq!(reports[1].status, Status::Pending);
    // Nothing is known of the slow server yet, and the failed one offers nothing.
    assert_eq!(tools.specs(), Vec::new());
}

#[tokio::test]
async fn a_cached_manifest_offers_a_slow_servers_tools_at_once_and_a_call_waits_for_it() {
    let home = tempfile::tempdir().unwrap();
    let slow = server("slow", &["--sleep-before-initialize", "2"]);
    // The last good connection's list, as a first run would have left it.
    let key = ManifestCache::key(&slow.name, &slow.config);
    ManifestCache::new(home.path())
        .store(
            &key,
            "slow",
            &[json!({"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}})],
        )
        .unwrap();
    let tools = start(home.path(), vec![slow], Duration::from_secs(20));
    let started = Instant::now();
    tools.settle(Duration::from_millis(300)).await;
    // Known from the cache: nothing to wait for.
    assert!(
        started.elapsed() < Duration::from_millis(250),
        "{:?}",
        started.elapsed()
    );
    let names: Vec<String> = tools.specs().into_iter().map(|spec| spec.name).collect();
    assert_eq!(names, ["mcp__slow__echo"]);
    assert_eq!(tools.reports()[0].status, Status::Pending);
    assert_eq!(
        call(&tools, "mcp__slow__echo", json!({"text": "late"})).await,
        ToolOutput::text("echo: late")
    );
    // Connected now: the live list replaced the cached one.
    assert_eq!(tools.specs().len(), 6);
}

/// The test server on streamable HTTP: its URL, and the process (killed on drop).
struct HttpServer {
    url: String,
    child: std::process::Child,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_server() -> HttpServer {
    use std::io::BufRead;
    let mut child = std::process::Command::new(server_binary())
        .arg("--http")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    HttpServer {
        url: url.trim().to_string(),
        child,
    }
}

fn http(name: &str, url: &str, token: &str) -> ConfiguredServer {
    ConfiguredServer {
        name: name.into(),
        scope: Scope::Flag,
        origin: "test".into(),
        config: serde_json::from_value(json!({
            "type": "http",
            "url": url,
            "headers": {"x-test-token": token}
        }))
        .unwrap(),
    }
}

#[tokio::test]
async fn a_streamable_http_server_is_called_with_its_headers() {
    let home = tempfile::tempdir().unwrap();
    let server = http_server();
    let tools = start(
        home.path(),
        vec![
            http("web", &server.url, "secret"),
            http("refused", &server.url, "wrong"),
        ],
        Duration::from_secs(20),
    );
    tools.wait_all().await;
    let reports = tools.reports();
    assert_eq!(reports[0].status, Status::Connected, "{reports:?}");
    let Status::Failed(reason) = &reports[1].status else {
        panic!("{reports:?}");
    };
    assert!(
        reason.contains("did not complete the MCP handshake"),
        "{reason}"
    );
    assert_eq!(
        call(&tools, "mcp__web__echo", json!({"text": "over http"})).await,
        ToolOutput::text("echo: over http")
    );
    assert!(call(&tools, "mcp__web__fail", json!({})).await.is_error);
}

#[tokio::test]
async fn a_server_that_says_its_tools_changed_is_listed_again() {
    let home = tempfile::tempdir().unwrap();
    let tools = start(
        home.path(),
        vec![server("test", &["--list-changes"])],
        Duration::from_secs(20),
    );
    tools.wait_all().await;
    assert!(!tools.serves("mcp__test__grown"));
    let seen = tools.tools_version();
    assert_eq!(
        call(&tools, "mcp__test__grow", json!({})).await,
        ToolOutput::text("grown")
    );
    tokio::time::timeout(Duration::from_secs(20), tools.changed_since(seen))
        .await
        .unwrap();
    assert!(
        tools
            .specs()
            .iter()
            .any(|spec| spec.name == "mcp__test__grown")
    );
    assert_eq!(
        call(&tools, "mcp__test__grown", json!({})).await,
        ToolOutput::text("I was added later")
    );
}
