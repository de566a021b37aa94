//! Prompt caching as the API sees it: where the breakpoints are and what stays byte-identical.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::Path;
use std::process::Command;

use cairn_test_support::{RecordedRequest, Reply, ScriptedServer};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::cairn;

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .status()
        .unwrap();
    assert!(status.success());
}

fn count_marks(value: &Value) -> usize {
    match value {
        Value::Object(object) => {
            usize::from(object.contains_key("cache_control"))
                + object.values().map(count_marks).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_marks).sum(),
        _ => 0,
    }
}

/// The cacheable prefix that must not change within a project: the tool definitions and
/// the static system block, as the bytes the API hashes.
fn fixed_prefix(request: &RecordedRequest) -> String {
    format!("{}{}", request.body["tools"], request.body["system"][0])
}

/// A session in `work` of `turns` model requests, each but the last a tool call.
fn session(
    server: &ScriptedServer,
    home: &Path,
    work: &Path,
    turns: usize,
) -> Vec<RecordedRequest> {
    let before = server.requests().len();
    for turn in 0..turns - 1 {
        server.push(Reply::tool_use(
            &format!("t{turn}"),
            "Read",
            json!({"file_path": "a.txt"}),
        ));
    }
    server.push(Reply::text("done"));
    let output = cairn(server, home, work)
        .args(["-p", "go"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    server.requests()[before..].to_vec()
}

#[test]
fn every_request_has_at_most_four_breakpoints_and_the_rolling_one_moves_forward() {
    let server = ScriptedServer::start();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), "alpha\n").unwrap();
    let requests = session(&server, home.path(), work.path(), 6);
    assert_eq!(requests.len(), 6);
    for (index, request) in requests.iter().enumerate() {
        let marks = count_marks(&request.body);
        assert_eq!(
            marks, 3,
            "request {index}: static system, tools and the newest message"
        );
        assert_eq!(
            request.body["system"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert_eq!(request.body["system"][1].get("cache_control"), None);
        let messages = request.body["messages"].as_array().unwrap();
        let last = messages.last().unwrap()["content"].as_array().unwrap();
        assert_eq!(
            last.last().unwrap()["cache_control"],
            json!({"type": "ephemeral"})
        );
        if index > 0 {
            // Everything the previous request sent (but its rolling mark) is sent again as is,
            // so the previous rolling breakpoint's prefix is a cache hit.
            let previous = requests[index - 1].body["messages"].as_array().unwrap();
            let mut unmarked = previous.clone();
            let last_block = unmarked.last_mut().unwrap()["content"]
                .as_array_mut()
                .unwrap()
                .last_mut()
                .unwrap();
            last_block.as_object_mut().unwrap().remove("cache_control");
            assert_eq!(&messages[..previous.len()], &unmarked[..]);
            assert_eq!(request.body["system"], requests[index - 1].body["system"]);
        }
    }
}

#[test]
fn the_stable_prefix_before_the_oldest_clearable_result_carries_the_fourth_mark() {
    // Reads of a file big enough to be worth clearing: from the request after the first one
    // on, the messages before its result (the prompt and the call) are what a clear of old
    // results leaves as it is, so their end is marked, in the same place on every request.
    let server = ScriptedServer::start();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let text: String = (0..200)
        .map(|line| format!("line {line} of a.txt\n"))
        .collect();
    std::fs::write(work.path().join("a.txt"), text).unwrap();
    let requests = session(&server, home.path(), work.path(), 4);
    assert_eq!(requests.len(), 4);
    assert_eq!(count_marks(&requests[0].body), 3, "nothing to clear yet");
    for (index, request) in requests.iter().enumerate().skip(1) {
        assert_eq!(count_marks(&request.body), 4, "request {index}");
        let call = request.body["messages"][1]["content"].as_array().unwrap();
        assert_eq!(call.last().unwrap()["type"], "tool_use");
        assert_eq!(
            call.last().unwrap()["cache_control"],
            json!({"type": "ephemeral"}),
            "request {index}: the end of the stable prefix"
        );
    }
}

#[test]
fn the_fixed_prefix_is_byte_identical_across_sessions_when_git_status_changes() {
    let server = ScriptedServer::start();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    git(work.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(work.path().join("a.txt"), "alpha\n").unwrap();
    git(work.path(), &["add", "a.txt"]);
    git(work.path(), &["commit", "-q", "-m", "first"]);

    let first = session(&server, home.path(), work.path(), 2);
    std::fs::write(work.path().join("a.txt"), "alpha changed\n").unwrap();
    std::fs::write(work.path().join("new.txt"), "new\n").unwrap();
    let second = session(&server, home.path(), work.path(), 2);

    assert_eq!(fixed_prefix(&first[0]), fixed_prefix(&second[0]));
    // The git status did change, after the boundary.
    let dynamic = |r: &RecordedRequest| r.body["system"][1]["text"].as_str().unwrap().to_string();
    assert!(!dynamic(&first[0]).contains("new.txt"));
    assert!(
        dynamic(&second[0]).contains("?? new.txt"),
        "{}",
        dynamic(&second[0])
    );
    // Nothing volatile sits before the breakpoints: not the date, not the git state.
    let prefix = fixed_prefix(&first[0]);
    assert!(!prefix.contains("Today's date"));
    assert!(!prefix.contains(&work.path().display().to_string()));
}

#[test]
fn disable_prompt_caching_sends_no_breakpoints() {
    let server = ScriptedServer::start();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    server.push(Reply::text("ok"));
    let output = cairn(&server, home.path(), work.path())
        .env("DISABLE_PROMPT_CACHING", "1")
        .args(["-p", "hi"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(count_marks(&server.requests()[0].body), 0);
}

#[test]
fn cache_reads_and_writes_are_priced_into_the_total_cost() {
    let server = ScriptedServer::start();
    server.simulate_prompt_cache();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), "alpha\n").unwrap();
    server.push(Reply::tool_use("t0", "Read", json!({"file_path": "a.txt"})).with_usage(0, 1000));
    server.push(Reply::text("done").with_usage(0, 1000));
    let output = cairn(&server, home.path(), work.path())
        .args(["-p", "go", "--output-format", "json", "--model", "sonnet"])
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let usage = &result["usage"];
    let read = usage["cache_read_input_tokens"].as_u64().unwrap();
    let written = usage["cache_creation_input_tokens"].as_u64().unwrap();
    let input = usage["input_tokens"].as_u64().unwrap();
    assert!(
        read > 1_000,
        "the second request reads the first one's prefix: {usage}"
    );
    assert!(written > read, "{usage}");
    // Sonnet: $3/M input, writes 1.25x, reads 0.1x, $15/M output.
    let expected =
        (input as f64 * 3.0 + written as f64 * 3.75 + read as f64 * 0.3 + 2_000.0 * 15.0) / 1e6;
    let cost = result["total_cost_usd"].as_f64().unwrap();
    assert!(
        (cost - expected).abs() < 1e-9,
        "cost {cost} expected {expected}"
    );
}
