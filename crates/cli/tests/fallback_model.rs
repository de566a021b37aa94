//! `--fallback-model` through the real binary: a request the API refuses as overloaded (after
//! its retries) goes again to the fallback model, which the session keeps; the user is told;
//! a fallback that is the session's model already is refused before any request.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::process::Stdio;

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::Value;

mod support;
use support::Harness;

#[test]
fn an_overloaded_model_hands_the_request_and_the_rest_of_the_session_to_the_fallback() {
    let harness = Harness::new();
    harness
        .server
        .push(Reply::error(529, "overloaded_error", "Overloaded"));
    harness
        .server
        .push(Reply::text("Answered by the fallback."));
    let output = harness
        .command()
        .env("CAIRN_MAX_RETRIES", "0")
        .args([
            "-p",
            "hi",
            "--model",
            "claude-opus-4-1",
            "--fallback-model",
            "sonnet",
            "--output-format",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let line: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(line["result"], "Answered by the fallback.");
    let models: Vec<String> = harness
        .server
        .requests()
        .iter()
        .map(|request| request.body["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models.len(), 2);
    assert_eq!(models[0], "claude-opus-4-1");
    assert!(models[1].starts_with("claude-sonnet"), "{models:?}");
    assert!(
        stderr.contains("claude-opus-4-1 is overloaded")
            && stderr.contains("switching to the fallback model claude-sonnet"),
        "{stderr}"
    );
}

#[test]
fn a_fallback_that_is_the_sessions_model_is_refused_before_any_request() {
    let harness = Harness::new();
    let output = harness
        .command()
        .args([
            "-p",
            "hi",
            "--model",
            "sonnet",
            "--fallback-model",
            "sonnet",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--fallback-model: claude-sonnet") && stderr.contains("name another model"),
        "{stderr}"
    );
    assert!(harness.server.requests().is_empty());
}
