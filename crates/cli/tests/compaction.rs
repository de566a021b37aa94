//! Sessions that never overflow (issue 16), through the real binary against a scripted server
//! with a small window: the server refuses any request over it, as the API does, and answers
//! summary requests (`tool_choice: none`) from their own replies.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::process::Output;

use cairn_test_support::{RecordedRequest, Reply, ScriptedBlock};
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT};

/// The window the tests give cairn (`CLAUDE_CODE_AUTO_COMPACT_WINDOW`), in tokens.
const WINDOW: usize = 100_000;
/// What the server accepts: the window, at four bytes a token.
const MAX_BODY: usize = WINDOW * 4;
/// How many long analyses the model writes: together about 2.5 windows.
const READS: usize = 24;
const FIRST_PROMPT: &str = "Please write the quarterly report from the notes, step by step.";
const SUMMARY: &str = "SUMMARY-OF-THE-SESSION: reading the quarter's files for the report.";

fn is_summary(request: &RecordedRequest) -> bool {
    request.body["tool_choice"]["type"] == json!("none")
}

/// Every text the request sends in its messages, tool results included.
fn sent_text(request: &RecordedRequest) -> String {
    request.body["messages"].to_string()
}

/// About `tokens` tokens of the model's own analysis of part `n`: prose no step can clear
/// short of a summary, every line naming the part.
fn analysis(n: usize, tokens: usize) -> String {
    let line = format!("Analysis of part {n}: marker-{n}-of-the-data, the figures add up.\n");
    line.repeat(tokens * 4 / line.len())
}
/// The session of the tests: a todo, a read and an edit of the notes, then `READS` long
/// analyses each with a small read, then the answer.
fn script_long_session(h: &Harness) {
    std::fs::write(h.path("notes.md"), "status: alpha\n").unwrap();
    h.server.push(Reply::tool_use(
        "todo",
        "TodoWrite",
        json!({"todos": [
            {"content": "Send the report to finance", "status": "pending", "activeForm": "Sending the report"},
            {"content": "Read the notes", "status": "in_progress", "activeForm": "Reading the notes"}
        ]}),
    ));
    h.server.push(Reply::tool_use(
        "read-notes",
        "Read",
        json!({"file_path": h.path("notes.md")}),
    ));
    h.server.push(Reply::tool_use(
        "edit-notes",
        "Edit",
        json!({"file_path": h.path("notes.md"), "old_string": "alpha", "new_string": "beta-edited"}),
    ));
    for n in 0..READS {
        let name = format!("part{n}.txt");
        std::fs::write(h.path(&name), format!("part {n}: 42\n")).unwrap();
        h.server.push(Reply::blocks(vec![
            ScriptedBlock::Text(analysis(n, 10_000)),
            ScriptedBlock::ToolUse {
                id: format!("read-{n}"),
                name: "Read".into(),
                input: json!({"file_path": h.path(&name)}),
            },
        ]));
    }
    h.server.push(Reply::text("The report is written."));
}

fn run(h: &Harness, args: &[&str]) -> Output {
    h.command()
        .env("CLAUDE_CODE_AUTO_COMPACT_WINDOW", WINDOW.to_string())
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_session_of_two_and_a_half_windows_runs_to_its_end_within_the_window() {
    let h = Harness::new();
    h.server.simulate_prompt_cache();
    h.server.reject_bodies_over(MAX_BODY);
    h.server.reply_to_side_requests(vec![Reply::text(SUMMARY)]);
    script_long_session(&h);

    let output = run(
        &h,
        &[
            "-p",
            FIRST_PROMPT,
            "--permission-mode",
            "acceptEdits",
            "--output-format",
            "json",
        ],
    );
    assert!(output.status.success(), "{output:?}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        result["result"],
        json!("The report is written."),
        "{result}"
    );

    let requests = h.server.requests();
    for (n, request) in requests.iter().enumerate() {
        let size = request.body.to_string().len();
        assert!(
            size <= MAX_BODY,
            "request {n} was {size} bytes, over the window"
        );
    }
    let summaries: Vec<usize> = (0..requests.len())
        .filter(|&n| is_summary(&requests[n]))
        .collect();
    assert!(summaries.len() >= 2, "compacted {} times", summaries.len());
    for &at in &summaries {
        let next = requests[at + 1..]
            .iter()
            .find(|request| !is_summary(request))
            .expect("a request after the compaction");
        let text = sent_text(next);
        assert!(text.contains(SUMMARY), "the summary is sent: {text:.2000}");
        assert!(
            text.contains(FIRST_PROMPT),
            "the first prompt is kept verbatim"
        );
        assert!(
            text.contains("Send the report to finance"),
            "the pending todo is kept"
        );
        assert!(
            text.contains("status: beta-edited"),
            "the edited file is re-injected with its edit"
        );
        assert!(
            !text.contains("marker-0-of-the-data"),
            "the first analysis is summarised away"
        );
    }

    // Continuing the session sends the compacted view, not the history before it.
    h.server.push(Reply::text("Continued."));
    let output = run(&h, &["-p", "-c", "what next?"]);
    assert!(output.status.success(), "{output:?}");
    let requests = h.server.wait_for_requests(requests.len() + 1, WAIT);
    let resumed = requests.last().unwrap();
    let text = sent_text(resumed);
    assert!(text.contains(SUMMARY), "{text:.2000}");
    assert!(text.contains("what next?"));
    assert!(!text.contains("marker-0-of-the-data"));
    assert!(resumed.body.to_string().len() <= MAX_BODY);
}

#[test]
fn failing_summaries_trip_the_breaker_and_nothing_is_lost_on_disk() {
    let h = Harness::new();
    h.server.simulate_prompt_cache();
    h.server.reject_bodies_over(MAX_BODY);
    h.server.reply_to_side_requests(vec![Reply::error(
        400,
        "invalid_request_error",
        "summaries are broken today",
    )]);
    script_long_session(&h);

    let output = run(
        &h,
        &["-p", FIRST_PROMPT, "--permission-mode", "acceptEdits"],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let requests = h.server.requests();
    let summaries = requests
        .iter()
        .filter(|request| is_summary(request))
        .count();
    // At most three attempts, then the breaker; fewer when the window's hard limit stops the
    // run first, which then says which attempt failed.
    assert!(
        (1..=3).contains(&summaries),
        "{summaries} summary attempts: {stderr}"
    );
    if summaries < 3 {
        assert!(
            stderr.contains(&format!("attempt {summaries} of 3")),
            "{stderr}"
        );
    }
    // The session either ran on or stopped with a clear error before the window: never a
    // request the API would refuse.
    for (n, request) in requests.iter().enumerate() {
        let size = request.body.to_string().len();
        assert!(
            size <= MAX_BODY,
            "request {n} was {size} bytes, over the window"
        );
    }
    if !output.status.success() {
        assert!(
            stderr.contains("compact") || stderr.contains("too long"),
            "the error says why: {stderr}"
        );
    }
    // Every message the model got a reply to is in the session file.
    let sessions = walk(&h.cairn_home().join("projects"));
    let transcript = std::fs::read_to_string(
        sessions
            .iter()
            .find(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
            .unwrap(),
    )
    .unwrap();
    assert!(transcript.contains(FIRST_PROMPT));
    assert!(
        transcript.contains("marker-0-of-the-data"),
        "nothing dropped from disk"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                found.extend(walk(&path));
            } else {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn compact_as_a_prompt_summarizes_tells_the_hooks_and_writes_a_boundary_line() {
    let h = Harness::new();
    let log = h.path("hooks.log");
    let record = format!("cat >> '{0}'; echo >> '{0}'", log.display());
    h.settings(json!({"hooks": {
        "PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": record}]}],
        "PostCompact": [{"hooks": [{"type": "command", "command": record}]}],
    }}));
    // An answer long enough that its summary is the smaller.
    h.server
        .push(Reply::text("First answer, with the figures. ".repeat(40)));
    let output = run(&h, &["-p", FIRST_PROMPT]);
    assert!(output.status.success(), "{output:?}");
    h.server.reply_to_side_requests(vec![Reply::text(SUMMARY)]);

    let output = run(
        &h,
        &[
            "-p",
            "-c",
            "/compact keep the figures",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    );
    assert!(output.status.success(), "{output:?}");
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let boundary = lines
        .iter()
        .find(|line| line["subtype"] == json!("compact_boundary"))
        .expect("a compact_boundary line");
    assert_eq!(boundary["compact_metadata"]["trigger"], json!("manual"));
    assert!(boundary["compact_metadata"]["pre_tokens"].as_u64().unwrap() > 0);
    let result = lines.last().unwrap();
    assert_eq!(result["type"], json!("result"));
    assert_eq!(result["is_error"], json!(false), "{result}");

    let requests = h.server.requests();
    let summary_request = requests.iter().find(|request| is_summary(request)).unwrap();
    assert!(
        sent_text(summary_request).contains("keep the figures"),
        "the user's instructions reach the summary request"
    );
    let hooks: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(hooks.len(), 2, "{hooks:?}");
    assert_eq!(hooks[0]["hook_event_name"], json!("PreCompact"));
    assert_eq!(hooks[0]["trigger"], json!("manual"));
    assert_eq!(hooks[0]["custom_instructions"], json!("keep the figures"));
    assert_eq!(hooks[1]["hook_event_name"], json!("PostCompact"));
    assert!(
        hooks[1]["compact_summary"]
            .as_str()
            .unwrap()
            .contains("SUMMARY-OF-THE-SESSION")
    );

    // The next run continues from the summary.
    h.server.push(Reply::text("Go on."));
    let output = run(&h, &["-p", "-c", "and now?"]);
    assert!(output.status.success(), "{output:?}");
    let last = h.server.requests().last().cloned().unwrap();
    assert!(sent_text(&last).contains("SUMMARY-OF-THE-SESSION"));
}

/// The characters of what a request sends in its messages.
fn messages_size(request: &RecordedRequest) -> usize {
    request.body["messages"].to_string().len()
}

#[test]
fn compact_of_a_small_session_with_one_edit_never_returns_a_larger_context() {
    let h = Harness::new();
    let notes: String = (0..60)
        .map(|n| format!("line {n}: status alpha, figures pending\n"))
        .collect();
    std::fs::write(h.path("notes.md"), &notes).unwrap();
    h.server.push(Reply::tool_use(
        "read",
        "Read",
        json!({"file_path": h.path("notes.md")}),
    ));
    h.server.push(Reply::tool_use(
        "edit",
        "Edit",
        json!({"file_path": h.path("notes.md"), "old_string": "line 0: status alpha", "new_string": "line 0: status beta"}),
    ));
    h.server.push(Reply::text(
        "Line 0 of notes.md now says beta; the rest is as it was.",
    ));
    let output = run(
        &h,
        &[
            "-p",
            "Set line 0 of notes.md to beta.",
            "--permission-mode",
            "acceptEdits",
        ],
    );
    assert!(output.status.success(), "{output:?}");
    let before = messages_size(&h.server.wait_for_requests(3, WAIT)[2]);

    h.server.reply_to_side_requests(vec![Reply::text(SUMMARY)]);
    let output = run(&h, &["-p", "-c", "/compact", "--output-format", "json"]);
    assert!(output.status.success(), "{output:?}");
    h.server.push(Reply::text("Go on."));
    let output = run(&h, &["-p", "-c", "and now?"]);
    assert!(output.status.success(), "{output:?}");
    let next = h.server.requests().last().cloned().unwrap();
    assert!(!is_summary(&next));
    assert!(sent_text(&next).contains("SUMMARY-OF-THE-SESSION"));
    assert!(
        messages_size(&next) < before,
        "the request after /compact sends {} characters of messages, the one before {before}",
        messages_size(&next)
    );
}

#[test]
fn compact_with_nothing_to_gain_says_so_and_keeps_the_conversation() {
    let h = Harness::new();
    h.server.push(Reply::text("Hi."));
    let output = run(&h, &["-p", "hello"]);
    assert!(output.status.success(), "{output:?}");
    // A summary longer than the whole conversation.
    h.server
        .reply_to_side_requests(vec![Reply::text(SUMMARY.repeat(4))]);
    let output = run(&h, &["-p", "-c", "/compact", "--output-format", "json"]);
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let text = result["result"].as_str().unwrap();
    assert!(
        text.contains("there was nothing to gain")
            && text.contains("The conversation is unchanged."),
        "{text}"
    );
    h.server.push(Reply::text("Hello again."));
    let output = run(&h, &["-p", "-c", "and now?"]);
    assert!(output.status.success(), "{output:?}");
    let next = h.server.requests().last().cloned().unwrap();
    // The conversation as it was: the prompt and its answer, no summary.
    let sent = sent_text(&next);
    assert!(sent.contains("hello") && sent.contains("Hi."), "{sent}");
    assert!(!sent.contains("SUMMARY-OF-THE-SESSION"), "{sent}");
    assert!(!sent.contains("being continued"), "{sent}");
}
