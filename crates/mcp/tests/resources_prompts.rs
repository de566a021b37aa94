//! Resources, prompts and the requests a server makes of its client, against the test MCP
//! server over stdio: the two resource tools, `@server:uri` mentions, prompts fetched with
//! their arguments, `roots/list` answered with the workspace, sampling and elicitation
//! declined.

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
use cairn_mcp::{Limits, McpTools, PromptError, PromptInfo, Roots, StartOptions};
use cairn_protocol::{ContentBlock, ImageSource, ToolResultBlock, ToolResultContent};
use cairn_test_support::mcp::{NOTES_TEXT, PIXEL_PNG_BASE64, server_binary};
use cairn_tools::{
    Access, Assurance, CallContext, PrepareError, ToolCall, ToolExecutor, ToolOutput,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn server(name: &str) -> ConfiguredServer {
    ConfiguredServer {
        name: name.into(),
        scope: Scope::Flag,
        origin: "test".into(),
        config: ServerConfig::Stdio(StdioConfig {
            command: server_binary().display().to_string(),
            args: vec!["--resources".into(), "--client-requests".into()],
            env: BTreeMap::new(),
            timeout: None,
            startup_timeout: None,
            always_load: false,
        }),
    }
}

async fn connected(home: &Path, roots: Roots) -> Arc<McpTools> {
    let tools = McpTools::start(
        vec![server("test")],
        StartOptions {
            cairn_home: home.to_path_buf(),
            project: home.to_path_buf(),
            inherited_env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
            limits: Limits {
                startup: Duration::from_secs(20),
                call: Duration::from_secs(20),
                max_output_tokens: 25_000,
            },
            roots,
            elicitation: cairn_mcp::elicitation::Elicitation::decline(),
        },
    );
    tools.wait_all().await;
    tools
}

fn cx() -> CallContext {
    CallContext::detached(CancellationToken::new())
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
    tools.execute(&prepared, &cx()).await
}

#[tokio::test]
async fn resources_are_listed_and_read_by_cairns_own_read_only_tools() {
    let home = tempfile::tempdir().unwrap();
    let tools = connected(home.path(), Roots::fixed(Vec::new())).await;
    let listed = call(&tools, "ListMcpResourcesTool", json!({})).await;
    assert!(!listed.is_error, "{listed:?}");
    let text = listed.content.text();
    // The resources, then the templates with a note that a filled-in URI can be read.
    let (resources, templates) = text
        .split_once("\nResource templates (fill in a template's {placeholders} and read the URI with ReadMcpResourceTool):\n")
        .unwrap();
    let templates: Value = serde_json::from_str(templates).unwrap();
    assert_eq!(
        templates,
        json!([{"uriTemplate": "test://notes/{number}", "name": "numbered-note",
                "description": "One note, by its number.", "mimeType": "text/plain",
                "server": "test"}])
    );
    let listed: Value = serde_json::from_str(resources).unwrap();
    let uris: Vec<(&str, &str)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            (
                item["server"].as_str().unwrap(),
                item["uri"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(uris, [("test", "test://notes"), ("test", "test://pixel")]);

    assert_eq!(
        call(
            &tools,
            "ReadMcpResourceTool",
            json!({"server": "test", "uri": "test://notes"})
        )
        .await,
        ToolOutput::text(format!("[resource test://notes]\n{NOTES_TEXT}"))
    );
    assert_eq!(
        call(
            &tools,
            "ReadMcpResourceTool",
            json!({"server": "test", "uri": "test://pixel"})
        )
        .await
        .content,
        ToolResultContent::Blocks(vec![ToolResultBlock::Image {
            source: ImageSource::Base64 {
                media_type: "image/png".into(),
                data: PIXEL_PNG_BASE64.into()
            }
        }])
    );
    let missing = call(
        &tools,
        "ReadMcpResourceTool",
        json!({"server": "test", "uri": "test://nothing"}),
    )
    .await;
    assert!(missing.is_error, "{missing:?}");
    assert!(
        missing
            .content
            .text()
            .starts_with("The MCP server \"test\" could not read test://nothing"),
        "{missing:?}"
    );
    assert_eq!(
        call(
            &tools,
            "ReadMcpResourceTool",
            json!({"server": "other", "uri": "x"})
        )
        .await,
        ToolOutput::error("No MCP server is named \"other\"; the servers are: test.")
    );
    // cairn's own tools, which only read: nothing to ask about.
    let prepared = tools
        .try_prepare(&ToolCall {
            id: "t".into(),
            name: "ReadMcpResourceTool".into(),
            input: json!({"server": "test", "uri": "test://notes"}),
        })
        .unwrap();
    assert_eq!(
        (prepared.safety.access, tools.assurance(&prepared)),
        (Access::ReadOnly, Assurance::Checked)
    );
    assert!(tools.always_loads("ListMcpResourcesTool"));
    assert!(matches!(
        tools.try_prepare(&ToolCall {
            id: "t".into(),
            name: "ReadMcpResourceTool".into(),
            input: json!({"server": "test"}),
        }),
        Err(PrepareError::RejectedInput { .. })
    ));
}

#[tokio::test]
async fn a_mention_attaches_the_resource_and_an_unreadable_one_warns() {
    let home = tempfile::tempdir().unwrap();
    let tools = connected(home.path(), Roots::fixed(Vec::new())).await;
    let text = "Summarise @test:test://notes, then @test:test://gone. Mail me@example.com";
    assert_eq!(
        tools.mentions(text),
        [
            ("test".to_string(), "test://notes".to_string()),
            ("test".to_string(), "test://gone".to_string())
        ]
    );
    let (blocks, warnings) = tools.attach_mentions(text, &cx()).await;
    assert_eq!(
        blocks,
        [ContentBlock::text(format!(
            "The resource test://notes of the MCP server \"test\":\n[resource test://notes]\n{NOTES_TEXT}"
        ))]
    );
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("@test:test://gone was not attached: "),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn prompts_are_listed_and_fetched_with_their_arguments() {
    let home = tempfile::tempdir().unwrap();
    let tools = connected(home.path(), Roots::fixed(Vec::new())).await;
    assert_eq!(
        tools.prompts(),
        [
            PromptInfo {
                server: "test".into(),
                name: "greet".into(),
                command: "mcp__test__greet".into(),
                description: "Greets someone.".into(),
                arguments: vec![("name".into(), true), ("mood".into(), false)],
            },
            PromptInfo {
                server: "test".into(),
                name: "plain".into(),
                command: "mcp__test__plain".into(),
                description: "A prompt without arguments.".into(),
                arguments: Vec::new(),
            }
        ]
    );
    let arguments = [
        ("name".to_string(), "Ada".to_string()),
        ("mood".to_string(), "warmly".to_string()),
    ];
    assert_eq!(
        tools.get_prompt("test", "greet", &arguments, &cx()).await,
        Ok(vec![ContentBlock::text("Greet Ada, warmly.")])
    );
    let refused = tools.get_prompt("test", "greet", &[], &cx()).await;
    let Err(PromptError::Failed { reason, .. }) = &refused else {
        panic!("{refused:?}");
    };
    assert!(
        reason.contains("greet needs the argument `name`"),
        "{reason}"
    );
    assert_eq!(
        tools.get_prompt("nobody", "greet", &[], &cx()).await,
        Err(PromptError::UnknownServer {
            server: "nobody".into()
        })
    );
}

#[tokio::test]
async fn roots_are_the_workspace_asked_afresh_and_sampling_and_elicitation_are_declined() {
    let home = tempfile::tempdir().unwrap();
    let added = Arc::new(std::sync::Mutex::new(vec![home.path().join("my project")]));
    let live = added.clone();
    let tools = connected(
        home.path(),
        Roots::live(move || live.lock().unwrap().clone()),
    )
    .await;
    let uri = |path: &Path| format!("file://{}", path.display()).replace(' ', "%20");
    assert_eq!(
        call(&tools, "mcp__test__roots", json!({})).await,
        ToolOutput::text(uri(&home.path().join("my project")))
    );
    // A directory added later (/add-dir) is in the next answer.
    added.lock().unwrap().push(home.path().join("other"));
    assert_eq!(
        call(&tools, "mcp__test__roots", json!({})).await,
        ToolOutput::text(format!(
            "{}\n{}",
            uri(&home.path().join("my project")),
            uri(&home.path().join("other"))
        ))
    );
    let sampled = call(&tools, "mcp__test__sample", json!({})).await;
    assert!(
        sampled.content.text().starts_with("sampling refused: ")
            && sampled
                .content
                .text()
                .contains("cairn declines sampling requests"),
        "{sampled:?}"
    );
    assert_eq!(
        call(&tools, "mcp__test__elicit", json!({})).await,
        ToolOutput::text("elicitation: \"decline\"")
    );
}
