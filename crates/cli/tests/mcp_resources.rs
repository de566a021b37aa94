//! MCP resources, prompts and protocol requests through the real binary, against the test
//! MCP server and the scripted model server: `@server:uri` mentions attached to a prompt,
//! `/mcp__server__prompt args` sent as the turn (and listed in the `init` line), the resource
//! tools running without a question, `roots/list` answered with the workspace, and `/mcp`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::process::{Output, Stdio};

use cairn_test_support::Reply;
use cairn_test_support::mcp::{NOTES_TEXT, server_binary};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT, user_texts};

fn config(servers: &[(&str, Value)]) -> String {
    let map: serde_json::Map<String, Value> = servers
        .iter()
        .map(|(name, config)| (name.to_string(), config.clone()))
        .collect();
    json!({"mcpServers": map}).to_string()
}

fn test_server() -> Value {
    json!({"command": server_binary(), "args": ["--resources", "--client-requests"]})
}

/// `cairn -p PROMPT --mcp-config …` with `extra` arguments, run to the end.
fn run(h: &Harness, prompt: &str, servers: &str, extra: &[&str]) -> Output {
    h.command()
        .args(["-p", prompt, "--mcp-config", servers])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// The `tool_result` block for `id` in a request, as (text, is_error).
fn tool_result(request: &Value, id: &str) -> (String, bool) {
    for message in request["messages"].as_array().unwrap() {
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" && block["tool_use_id"] == id {
                let text = match &block["content"] {
                    Value::String(text) => text.clone(),
                    blocks => blocks.to_string(),
                };
                return (text, block["is_error"] == json!(true));
            }
        }
    }
    panic!("no tool_result for {id} in {request}");
}

#[test]
fn a_mention_of_a_servers_resource_is_attached_to_the_prompt() {
    let h = Harness::new();
    h.server.push(Reply::text("done"));
    let servers = config(&[("test", test_server())]);
    let output = run(&h, "Summarise @test:test://notes please", &servers, &[]);
    assert!(output.status.success(), "{output:?}");
    let request = &h.server.wait_for_requests(1, WAIT)[0].body;
    assert_eq!(
        user_texts(request),
        [
            "Summarise @test:test://notes please".to_string(),
            format!(
                "The resource test://notes of the MCP server \"test\":\n[resource test://notes]\n{NOTES_TEXT}"
            )
        ]
    );
}

#[test]
fn a_prompt_line_sends_what_the_server_returns_and_the_init_line_lists_the_prompts() {
    let h = Harness::new();
    h.server.push(Reply::text("done"));
    let servers = config(&[("test", test_server())]);
    let output = run(
        &h,
        "/mcp__test__greet Ada very warmly",
        &servers,
        &["--output-format", "stream-json", "--verbose"],
    );
    assert!(output.status.success(), "{output:?}");
    let request = &h.server.wait_for_requests(1, WAIT)[0].body;
    assert_eq!(
        user_texts(request),
        [
            "<command-name>/mcp__test__greet</command-name>\n<command-args>Ada very warmly</command-args>",
            "Greet Ada, very warmly."
        ]
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let init: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    let commands = init["slash_commands"].as_array().unwrap();
    for prompt in ["mcp__test__greet", "mcp__test__plain", "mcp"] {
        assert!(commands.contains(&json!(prompt)), "{prompt}: {init}");
    }
}

#[test]
fn a_prompt_line_without_its_required_argument_is_refused_before_any_request() {
    let h = Harness::new();
    let servers = config(&[("test", test_server())]);
    let output = run(&h, "/mcp__test__greet", &servers, &[]);
    assert!(!output.status.success(), "{output:?}");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        said.contains(
            "/mcp__test__greet needs the argument name: give the values in order after the name"
        ),
        "{said}"
    );
    assert_eq!(h.server.requests().len(), 0);
}

#[test]
fn the_resource_tools_run_without_a_question_and_roots_are_the_workspace() {
    let h = Harness::new();
    h.server.push(Reply::tool_use(
        "t1",
        "ReadMcpResourceTool",
        json!({"server": "test", "uri": "test://notes"}),
    ));
    h.server
        .push(Reply::tool_use("t2", "mcp__test__roots", json!({})));
    h.server.push(Reply::text("done"));
    let servers = config(&[("test", test_server())]);
    let output = run(&h, "go", &servers, &["--allowedTools", "mcp__test__roots"]);
    assert!(output.status.success(), "{output:?}");
    let requests = h.server.wait_for_requests(3, WAIT);
    assert_eq!(
        tool_result(&requests[1].body, "t1"),
        (format!("[resource test://notes]\n{NOTES_TEXT}"), false)
    );
    let work = h.work.path().canonicalize().unwrap();
    let (roots, is_error) = tool_result(&requests[2].body, "t2");
    assert!(!is_error, "{roots}");
    let listed: Vec<&str> = roots.lines().collect();
    assert!(
        listed.iter().any(|root| {
            root.strip_prefix("file://").is_some_and(|path| {
                std::path::Path::new(path).canonicalize().ok() == Some(work.clone())
            })
        }),
        "{roots} should name {}",
        work.display()
    );
}

#[test]
fn slash_mcp_reports_each_server_with_its_state_and_why_one_failed() {
    let h = Harness::new();
    let servers = config(&[
        ("test", test_server()),
        ("missing", json!({"command": "/nonexistent/mcp-server"})),
    ]);
    let output = run(&h, "/mcp", &servers, &[]);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "MCP servers:", "{stdout}");
    // In the configuration's order (a JSON object's keys, sorted).
    assert_eq!(
        lines[1..],
        [
            "  missing (command line, --mcp-config): failed: cannot run \
             `/nonexistent/mcp-server`: No such file or directory (os error 2)",
            "  test (command line, --mcp-config): connected, 9 tools"
        ],
        "{stdout}"
    );
    assert_eq!(h.server.requests().len(), 0);
}
