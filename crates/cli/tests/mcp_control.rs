//! MCP servers the user controls, through the real binary against the test MCP server
//! (`cairn-test-mcp-server`) and the scripted model server: `/mcp reconnect|enable|disable`
//! in `-p` (a disabled server's tools leave the next request, and the choice holds for the
//! next run), the SDK's `mcp_toggle`, `mcp_reconnect` and `mcp_status`, `/doctor` and `cairn
//! doctor` reporting each server, and `--permission-prompt-tool` naming an MCP tool.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::io::Write;
use std::process::{Output, Stdio};

use cairn_test_support::Reply;
use cairn_test_support::mcp::server_binary;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT, tool_result};

fn servers(servers: &[(&str, &[&str])]) -> Value {
    let map: serde_json::Map<String, Value> = servers
        .iter()
        .map(|(name, args)| {
            (
                name.to_string(),
                json!({"command": server_binary(), "args": args}),
            )
        })
        .collect();
    json!({"mcpServers": map})
}

/// Writes the user's `~/.claude.json` with these servers (the user scope).
fn user_servers(h: &Harness, config: &Value) {
    std::fs::write(h.home.path().join(".claude.json"), config.to_string()).unwrap();
}

/// `cairn -p LINE` with `extra` arguments, run to the end.
fn run(h: &Harness, line: &str, extra: &[&str]) -> Output {
    h.command()
        .args(["-p", line])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn mcp_disable_takes_a_servers_tools_away_for_the_next_runs_and_enable_brings_them_back() {
    let h = Harness::new();
    user_servers(&h, &servers(&[("test", &[]), ("other", &[])]));
    let disabled = run(&h, "/mcp disable test", &[]);
    assert!(disabled.status.success(), "{disabled:?}");
    assert_eq!(
        stdout(&disabled),
        "Disabled the MCP server test: disabled (/mcp enable test turns it on)\n"
    );
    // Saved in cairn's own file for this project; Claude Code's file is left as it was.
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(h.cairn_home().join("mcp.json")).unwrap())
            .unwrap();
    let project = std::fs::canonicalize(h.work.path()).unwrap();
    assert_eq!(
        saved["projects"][project.display().to_string()]["disabledMcpServers"],
        json!(["test"])
    );
    assert_eq!(
        std::fs::read_to_string(h.home.path().join(".claude.json")).unwrap(),
        servers(&[("test", &[]), ("other", &[])]).to_string()
    );

    let report = run(&h, "/mcp", &[]);
    let report = stdout(&report);
    assert!(
        report.contains("  test (user, ") && report.contains("): disabled (/mcp enable test"),
        "{report}"
    );
    assert!(report.contains("): connected, 6 tools"), "{report}");

    // The next run offers the other server's tools only; a call to a disabled one's tool is
    // told how to turn it on.
    h.server.push(Reply::tool_use(
        "t1",
        "mcp__test__echo",
        json!({"text": "x"}),
    ));
    h.server.push(Reply::text("done"));
    let output = run(&h, "go", &["--allowedTools", "mcp__test"]);
    assert!(output.status.success(), "{output:?}");
    let requests = h.server.wait_for_requests(2, WAIT);
    let tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .filter(|name| name.starts_with("mcp__"))
        .collect();
    assert!(
        tools.iter().all(|name| name.starts_with("mcp__other__")) && tools.len() == 6,
        "{tools:?}"
    );
    let (is_error, text) = tool_result(&requests, 1);
    assert!(is_error, "{text}");
    assert!(
        text.contains("mcp__test__echo is not available in this session: The MCP server \"test\" is disabled. The user can turn it on with /mcp enable test"),
        "{text}"
    );

    let enabled = run(&h, "/mcp enable test", &[]);
    assert!(enabled.status.success(), "{enabled:?}");
    assert_eq!(
        stdout(&enabled),
        "Enabled the MCP server test: connected, 6 tools\n"
    );
    let reconnected = run(&h, "/mcp reconnect test", &[]);
    assert_eq!(
        stdout(&reconnected),
        "Reconnected the MCP server test: connected, 6 tools\n"
    );
}

#[test]
fn an_mcp_action_on_an_unknown_server_or_a_bad_line_is_an_error_naming_what_is_there() {
    let h = Harness::new();
    user_servers(&h, &servers(&[("alpha", &[]), ("beta", &[])]));
    let cases = [
        (
            "/mcp reconnect gamma",
            "No MCP server is named \"gamma\"; the servers are: alpha, beta.",
        ),
        (
            "/mcp enable",
            "/mcp enable needs the name of a server: /mcp enable <server>",
        ),
        (
            "/mcp restart alpha",
            "unknown /mcp action \"restart\": use /mcp, /mcp reconnect <server>, /mcp enable \
             <server> or /mcp disable <server>",
        ),
    ];
    for (line, error) in cases {
        let output = run(&h, line, &[]);
        assert_eq!(output.status.code(), Some(1), "{line}: {output:?}");
        let said = format!(
            "{}{}",
            stdout(&output),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(said.contains(error), "{line}: {said}");
    }
}

#[test]
fn the_sdk_toggles_and_reconnects_a_server_and_mcp_status_shows_it_disabled() {
    let h = Harness::new();
    let config = servers(&[("test", &[])]).to_string();
    let mut child = h
        .command()
        .args(["-p", "--output-format", "stream-json", "--verbose"])
        .args(["--input-format", "stream-json", "--mcp-config", &config])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let requests = [
        json!({"subtype": "initialize"}),
        json!({"subtype": "mcp_toggle", "serverName": "test", "enabled": false}),
        json!({"subtype": "mcp_status"}),
        json!({"subtype": "mcp_reconnect", "serverName": "test"}),
        json!({"subtype": "mcp_toggle", "serverName": "test", "enabled": true}),
        json!({"subtype": "mcp_reconnect", "serverName": "test"}),
        json!({"subtype": "mcp_status"}),
        json!({"subtype": "mcp_reconnect", "serverName": "nope"}),
        json!({"subtype": "mcp_toggle", "serverName": "test"}),
    ];
    {
        let mut stdin = child.stdin.take().unwrap();
        for (n, request) in requests.iter().enumerate() {
            let line = json!({"type": "control_request", "request_id": format!("r{n}"), "request": request});
            writeln!(stdin, "{line}").unwrap();
        }
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let lines: Vec<Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let response = |n: usize| -> Value {
        lines
            .iter()
            .find(|line| {
                line["type"] == "control_response"
                    && line["response"]["request_id"] == format!("r{n}")
            })
            .unwrap_or_else(|| panic!("no response to r{n}: {lines:#?}"))["response"]
            .clone()
    };
    assert_eq!(response(1)["subtype"], "success", "{}", response(1));
    assert_eq!(
        response(2)["response"],
        json!({"mcpServers": [{"name": "test", "status": "disabled", "scope": "command line"}]})
    );
    let refused = response(3);
    assert_eq!(
        (&refused["subtype"], &refused["error"]),
        (
            &json!("error"),
            &json!("The MCP server \"test\" is disabled: /mcp enable test starts it.")
        )
    );
    assert_eq!(response(4)["subtype"], "success", "{}", response(4));
    assert_eq!(response(5)["subtype"], "success", "{}", response(5));
    assert_eq!(
        response(6)["response"],
        json!({"mcpServers": [{"name": "test", "status": "connected", "scope": "command line"}]})
    );
    assert_eq!(
        response(7)["error"],
        "No MCP server is named \"nope\"; the servers are: test."
    );
    assert_eq!(
        response(8)["error"],
        "mcp_toggle needs \"enabled\": true or false"
    );
}

#[test]
fn doctor_reports_each_server_and_cairn_doctor_fails_for_one_that_did_not_start() {
    let h = Harness::new();
    let mut config = servers(&[("test", &[])]);
    config["mcpServers"]["broken"] = json!({"command": h.path("no-such-server")});
    user_servers(&h, &config);
    let doctor = h
        .command()
        .arg("doctor")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let text = stdout(&doctor);
    assert!(
        text.contains("\n  ✓ MCP server test: connected, 6 tools"),
        "{text}"
    );
    assert!(
        text.contains("\n  ✗ MCP server broken: failed: cannot run `"),
        "{text}"
    );
    assert_eq!(doctor.status.code(), Some(1), "{text}");

    // Turned off, the broken server is a note, and fails nothing.
    let disabled = run(&h, "/mcp disable broken", &[]);
    assert!(disabled.status.success(), "{disabled:?}");
    let report = run(&h, "/doctor", &[]);
    let text = stdout(&report);
    assert!(
        text.contains("\n  ✓ MCP server test: connected, 6 tools"),
        "{text}"
    );
    assert!(
        text.contains("\n  ! MCP server broken: disabled (/mcp enable broken turns it on)"),
        "{text}"
    );
    let doctor = h
        .command()
        .arg("doctor")
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    let text = stdout(&doctor);
    assert!(!text.contains("✗ MCP"), "{text}");
}

/// A `-p` run whose model writes `content` to a file, asking the `permit` tool of the
/// `perm` server (`--permission-prompt-tool tool`); the file's text and the Write's result.
fn write_through_permit(content: &str, tool: &str) -> (Option<String>, (bool, String)) {
    let h = Harness::new();
    let file = h.path("note.txt");
    h.server.push(Reply::tool_use(
        "toolu_write",
        "Write",
        json!({"file_path": file.display().to_string(), "content": content}),
    ));
    h.server.push(Reply::text("done"));
    let config = servers(&[("perm", &["--permit"])]).to_string();
    let output = run(
        &h,
        "write the note",
        &["--mcp-config", &config, "--permission-prompt-tool", tool],
    );
    assert!(output.status.success(), "{output:?}");
    let requests = h.server.wait_for_requests(2, WAIT);
    (
        std::fs::read_to_string(&file).ok(),
        tool_result(&requests, 1),
    )
}

#[test]
fn a_permission_prompt_tool_of_an_mcp_server_answers_what_would_be_asked() {
    // Allowed: its updated input is what is written.
    let (written, (is_error, _)) = write_through_permit("hello", "mcp__perm__permit");
    assert_eq!(written.as_deref(), Some("hello (approved by permit)"));
    assert!(!is_error);

    // Denied with its message.
    let (written, (is_error, text)) = write_through_permit("please deny", "mcp__perm__permit");
    assert_eq!(written, None);
    assert!(
        is_error && text.contains("permit says no to Write"),
        "{text}"
    );

    // An answer that is not the contract's JSON is a refusal saying so.
    let (written, (is_error, text)) = write_through_permit("garbage", "mcp__perm__permit");
    assert_eq!(written, None);
    assert!(
        is_error
            && text.contains(
                "the --permission-prompt-tool mcp__perm__permit answered \"this is not JSON\", \
                 which is not JSON"
            ),
        "{text}"
    );

    // A tool no server has is a refusal naming the servers.
    let (written, (is_error, text)) = write_through_permit("hello", "mcp__perm__nope");
    assert_eq!(written, None);
    assert!(
        is_error
            && text.contains(
                "the --permission-prompt-tool mcp__perm__nope is not a tool of the MCP servers \
                 (perm)"
            ),
        "{text}"
    );
}
