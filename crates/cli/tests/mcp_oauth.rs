//! OAuth for HTTP MCP servers through the real binary, against an OAuth-protected test server
//! (`cairn_test_support::oauth`): `cairn mcp login` runs the flow (the "browser" follows the
//! authorization server's redirect to cairn's loopback listener) and stores the tokens 0600;
//! `-p` calls a tool with them; an expired token is refreshed before the request and a refused
//! one after its 401; a revoked authorization fails the server with the command to run, and
//! `cairn mcp logout` forgets the tokens. No token ever reaches cairn's output.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Output, Stdio};

use cairn_test_support::Reply;
use cairn_test_support::oauth::{OAuthMcpServer, open_in_browser};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT};

fn config(server: &OAuthMcpServer) -> String {
    format!(
        "--mcp-config={}",
        json!({"mcpServers": {"auth": {"type": "http", "url": server.url()}}})
    )
}

/// No token of the test server's (they all carry "token-secret") in a run's output.
fn assert_no_token(output: &str) {
    assert!(!output.contains("token-secret"), "a token leaked: {output}");
}

/// `cairn mcp login auth`, with the test as the user's browser: the URL it prints is opened
/// (the authorization server approves at once and redirects to cairn's listener). Returns
/// the page the browser was shown and cairn's whole output (`cairn mcp list`'s after it).
fn login(h: &Harness, server: &OAuthMcpServer) -> (String, String) {
    let mut child = h
        .command()
        .arg(config(server))
        .args(["mcp", "login", "auth"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    let url = loop {
        let mut line = String::new();
        assert_ne!(
            stdout.read_line(&mut line).unwrap(),
            0,
            "no URL in {printed}"
        );
        printed.push_str(&line);
        if let Some(url) = line.trim().strip_prefix("http://") {
            break format!("http://{url}");
        }
    };
    let (status, page) = open_in_browser(&url).unwrap();
    assert_eq!(status, 200, "{page}");
    stdout.read_to_string(&mut printed).unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(child.wait().unwrap().success(), "{printed}{stderr}");
    // Connecting once also keeps the server's tools in the manifest cache, so a run offers
    // them at once and a call waits for the server, however long its refresh takes.
    let listed = h
        .command()
        .arg(config(server))
        .args(["mcp", "list"])
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&listed.stdout);
    assert!(list.contains(" - connected, "), "{list}");
    (page, printed + &stderr + &list)
}

/// The one token file under `~/.cairn/mcp-auth`.
fn token_file(h: &Harness) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(h.cairn_home().join("mcp-auth"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

/// `cairn -p` whose model calls `mcp__auth__echo`; the tool's result as (text, is_error),
/// and cairn's output.
fn call_echo(h: &Harness, server: &OAuthMcpServer) -> ((String, bool), String) {
    let before = h.server.requests().len();
    h.server.push(Reply::tool_use(
        "t1",
        "mcp__auth__echo",
        json!({"text": "hello"}),
    ));
    h.server.push(Reply::text("done"));
    let output: Output = h
        .command()
        .args(["-p", "go", &config(server)])
        .args(["--allowedTools", "mcp__auth__echo"])
        .output()
        .unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{printed}");
    let requests = h.server.wait_for_requests(before + 2, WAIT);
    let result = support::tool_result(&requests, before + 1);
    ((result.1, result.0), printed)
}

fn file_json(path: &PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn login_stores_the_tokens_privately_and_print_mode_calls_a_tool_with_them() {
    let server = OAuthMcpServer::start();
    let h = Harness::new();
    let listed = h
        .command()
        .arg(config(&server))
        .args(["mcp", "list"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(
        stdout.contains("failed: needs authentication: run `cairn mcp login auth`"),
        "{stdout}"
    );

    let (page, printed) = login(&h, &server);
    assert!(page.contains("cairn is authorized with auth"), "{page}");
    let file = token_file(&h);
    assert!(
        printed.contains(&format!("tokens are stored in {}", file.display())),
        "{printed}"
    );
    assert_no_token(&printed);
    assert_eq!(server.registrations(), 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode =
            |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(file.parent().unwrap()), mode(&file)), (0o700, 0o600));
    }
    let stored = file_json(&file);
    assert_eq!(stored["server"], "auth");
    assert_eq!(stored["credentials"]["client_id"], "client-1");

    let (result, printed) = call_echo(&h, &server);
    assert_eq!(result, ("echo: hello".to_string(), false));
    assert_no_token(&printed);
    assert_eq!(server.refreshes(), 0);

    let logout = h
        .command()
        .arg(config(&server))
        .args(["mcp", "logout", "auth"])
        .output()
        .unwrap();
    assert!(logout.status.success(), "{logout:?}");
    assert!(!file.exists());
    let again = h
        .command()
        .arg(config(&server))
        .args(["mcp", "logout", "auth"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        "\"auth\" has no stored tokens.\n"
    );
}

#[test]
fn an_expired_token_is_refreshed_before_the_connection() {
    let server = OAuthMcpServer::start();
    let h = Harness::new();
    login(&h, &server);
    let file = token_file(&h);
    // As if the hour the token lasts had passed since it came.
    let mut stored = file_json(&file);
    let old_refresh = stored["credentials"]["token_response"]["refresh_token"].clone();
    stored["credentials"]["token_received_at"] = json!(1);
    std::fs::write(&file, stored.to_string()).unwrap();

    let (result, printed) = call_echo(&h, &server);
    assert_eq!(result, ("echo: hello".to_string(), false));
    assert_eq!(server.refreshes(), 1);
    assert_no_token(&printed);
    let stored = file_json(&file);
    assert_ne!(
        stored["credentials"]["token_response"]["refresh_token"],
        old_refresh
    );
    assert_ne!(stored["credentials"]["token_received_at"], json!(1));
}

#[test]
fn a_refused_token_is_refreshed_once_after_the_servers_401() {
    let server = OAuthMcpServer::start();
    let h = Harness::new();
    login(&h, &server);
    server.revoke_access_tokens();
    let (result, _) = call_echo(&h, &server);
    assert_eq!(result, ("echo: hello".to_string(), false));
    assert_eq!(server.refreshes(), 1);
}

#[test]
fn a_revoked_authorization_fails_the_server_with_the_command_to_run() {
    let server = OAuthMcpServer::start();
    let h = Harness::new();
    login(&h, &server);
    let (result, _) = call_echo(&h, &server);
    assert_eq!(result, ("echo: hello".to_string(), false));
    server.revoke_all();

    let ((text, is_error), printed) = call_echo(&h, &server);
    assert!(is_error, "{text}");
    assert!(
        text.contains("needs authentication: run `cairn mcp login auth`"),
        "{text}"
    );
    assert_no_token(&printed);
    assert_eq!(server.refreshes(), 0);
}
