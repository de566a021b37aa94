//! How `cairn -p` fails, through the real binary: fast when nothing listens at the base URL,
//! with a JSON result for scripts whatever stopped the run, and with status 2 for usage
//! errors.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::net::TcpListener;
use std::process::Output;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::Harness;

/// A loopback base URL where nothing listens: a port bound, then released.
fn refused_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

/// The one line of standard output, as JSON, with `duration_ms` and `uuid` (which vary)
/// checked and taken out.
fn only_result(output: &Output) -> Value {
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stdout: {stdout}");
    let mut result: Value = serde_json::from_str(lines[0]).unwrap();
    let duration = result
        .as_object_mut()
        .unwrap()
        .remove("duration_ms")
        .unwrap();
    assert!(duration.is_u64(), "{duration}");
    let uuid = result.as_object_mut().unwrap().remove("uuid").unwrap();
    assert_eq!(uuid.as_str().map(str::len), Some(36), "{uuid}");
    result
}

/// The result object of a run that failed before a session started.
fn error_result(message: &str) -> Value {
    json!({
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": true,
        "result": message,
        "errors": [message],
        "stop_reason": null,
        "session_id": null,
        "num_turns": 0,
        "duration_api_ms": 0,
        "total_cost_usd": 0.0,
        "usage": {
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
        "modelUsage": {},
        "permission_denials": [],
    })
}

#[test]
fn a_closed_port_fails_within_seconds_naming_the_url_and_is_listed_as_failed() {
    let h = Harness::new();
    let url = refused_url();
    let started = Instant::now();
    let output = h
        .command()
        .env("ANTHROPIC_BASE_URL", &url)
        .args(["-p", "is anyone there?", "--output-format", "json"])
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert_eq!(output.status.code(), Some(1), "{output:?}");

    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    let first = stderr.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        format!("retrying in 0.2s (nothing is listening at {url}), attempt 2 of 3")
    );
    let result = only_result(&output);
    assert_eq!(result["subtype"], json!("error_during_execution"));
    assert_eq!(result["is_error"], json!(true));
    assert_eq!(
        result["result"],
        json!(format!(
            "gave up after 3 attempts; last error: connection error: nothing is listening at \
             {url} (connection refused): check ANTHROPIC_BASE_URL"
        ))
    );

    // The session holds the prompt and the failure: listed as failed, not as "1 messages".
    let listing = h.command().arg("sessions").output().unwrap();
    let listing = String::from_utf8(listing.stdout).unwrap();
    let line = listing.lines().next().unwrap();
    assert!(
        line.starts_with(result["session_id"].as_str().unwrap()),
        "{listing}"
    );
    assert!(
        line.contains("  failed  $0.0000  is anyone there?"),
        "{listing}"
    );
}

#[test]
fn every_failure_before_the_turn_prints_a_json_result_in_both_formats() {
    let h = Harness::new();
    for format in ["json", "stream-json"] {
        let json = ["--output-format", format];

        let output = h
            .command()
            .env_remove("ANTHROPIC_API_KEY")
            .args(["-p", "hi"])
            .args(json)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        assert_eq!(
            only_result(&output),
            error_result(&cairn_llm::ModelError::MissingAnthropicCredentials.to_string())
        );

        // A bad flag value, refused by the argument parser: a usage error.
        let output = h
            .command()
            .args(["-p", "hi", "--permission-mode", "sometimes"])
            .args(json)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        let result = only_result(&output);
        let message = result["result"].as_str().unwrap().to_owned();
        assert!(
            message.starts_with("invalid value 'sometimes' for '--permission-mode <MODE>'"),
            "{message}"
        );
        assert_eq!(result, error_result(&message));

        // The flag before the format, and `--flag=value`.
        let output = h
            .command()
            .args([
                "-p",
                "hi",
                "--max-turns",
                "0",
                &format!("--output-format={format}"),
            ])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        assert_eq!(
            only_result(&output),
            error_result(
                "invalid value '0' for '--max-turns <MAX_TURNS>': 0 is not in 1..=4294967295"
            )
        );

        // Flags that do not go together, found after parsing: a usage error too.
        let output = h
            .command()
            .args(["-p", "hi", "--fork-session"])
            .args(json)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        assert_eq!(
            only_result(&output),
            error_result("--fork-session goes with --continue or --resume")
        );

        let output = h.command().arg("-p").args(json).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        assert_eq!(
            only_result(&output),
            error_result(
                "no prompt: give one as an argument (cairn -p \"…\") or on standard input"
            )
        );
    }
    assert_eq!(h.server.requests().len(), 0);
}

#[test]
fn a_bad_settings_file_is_a_json_result_naming_the_file() {
    let h = Harness::new();
    let dir = h.path(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), "{\"model\": ").unwrap();
    let output = h
        .command()
        .args(["-p", "hi", "--output-format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let result = only_result(&output);
    let message = result["result"].as_str().unwrap().to_owned();
    assert!(
        message.contains(&dir.join("settings.json").display().to_string()),
        "{message}"
    );
    assert_eq!(result, error_result(&message));
    // The same words on standard error, for a person watching.
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr, format!("error: {message}\n"));
    assert_eq!(h.server.requests().len(), 0);
}

#[test]
fn max_turns_zero_is_a_usage_error_in_text_too() {
    let h = Harness::new();
    let output = h
        .command()
        .args(["-p", "hi", "--max-turns", "0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with("error: invalid value '0' for '--max-turns <MAX_TURNS>'"),
        "{stderr}"
    );
    assert_eq!(h.server.requests().len(), 0);
}
