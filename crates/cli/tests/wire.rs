//! The stream-json lines and the `result` object of the real `cairn` binary, read as the
//! Agent SDKs read them: every line is one of cairn's wire types, carries the fields the
//! official SDKs' parsers require, and the result reports what Claude Code's does (its
//! subtype, the refused calls, the usage of each model).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::collections::BTreeSet;
use std::process::Output;

use cairn_test_support::{Reply, ScriptedBlock};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::Harness;

/// The binary's own wire types, so that a line that parses here is one the binary defines.
#[allow(
    dead_code,
    reason = "the tests read the types; the binary's helpers go unused"
)]
#[path = "../src/wire.rs"]
mod wire;

/// What a run printed on standard output, one JSON value per line.
fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect()
}

/// Reads `line` as a [`wire::Line`] and checks that writing it again gives the same JSON:
/// every field the binary printed belongs to the one definition of that line.
fn typed(line: &Value) -> wire::Line {
    let typed: wire::Line = serde_json::from_value(line.clone())
        .unwrap_or_else(|err| panic!("not a wire line ({err}): {line}"));
    assert_eq!(&serde_json::to_value(&typed).unwrap(), line);
    typed
}

/// The keys the Python SDK's message parser reads with `data[…]` (a missing one raises) and
/// the TypeScript SDK's types declare without `?`, for each kind of line.
fn required_keys(line: &Value) -> &'static [&'static str] {
    match (line["type"].as_str(), line["subtype"].as_str()) {
        (Some("system"), Some("init")) => &[
            "type",
            "subtype",
            "cwd",
            "session_id",
            "tools",
            "mcp_servers",
            "model",
            "permissionMode",
            "slash_commands",
            "apiKeySource",
            "output_style",
            "uuid",
        ],
        (Some("system"), Some("compact_boundary")) => {
            &["type", "subtype", "compact_metadata", "session_id", "uuid"]
        }
        (Some("assistant" | "user"), _) => &[
            "type",
            "message",
            "parent_tool_use_id",
            "session_id",
            "uuid",
        ],
        (Some("result"), _) => &[
            "type",
            "subtype",
            "duration_ms",
            "duration_api_ms",
            "is_error",
            "num_turns",
            "session_id",
            "total_cost_usd",
            "usage",
            "modelUsage",
            "permission_denials",
            "uuid",
        ],
        _ => panic!("a line the SDKs do not know: {line}"),
    }
}

fn assert_has_required_keys(line: &Value) {
    let object = line.as_object().unwrap();
    for key in required_keys(line) {
        assert!(object.contains_key(*key), "no `{key}` in {line}");
    }
}

/// The one `result` line of a run, typed.
fn result_of(output: &Output) -> wire::ResultLine {
    let lines = lines(output);
    let last = lines.last().expect("a result line");
    assert_has_required_keys(last);
    match typed(last) {
        wire::Line::Result(result) => result,
        other => panic!("the last line is not the result: {other:?}"),
    }
}

#[test]
fn every_line_of_a_tool_round_trip_is_a_wire_line_with_the_fields_the_sdks_require() {
    let h = Harness::new();
    std::fs::write(h.path("notes.txt"), "alpha\n").unwrap();
    h.server.push(Reply::tool_use(
        "toolu_1",
        "Read",
        json!({"file_path": "notes.txt"}),
    ));
    h.server.push(Reply::text("It says alpha."));
    let output = h
        .command()
        .args(["-p", "read notes.txt", "--output-format", "stream-json"])
        .args(["--verbose"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let lines = lines(&output);
    for line in &lines {
        assert_has_required_keys(line);
    }
    let typed: Vec<wire::Line> = lines.iter().map(typed).collect();
    let kinds: Vec<&str> = typed
        .iter()
        .map(|line| match line {
            wire::Line::System(wire::SystemLine::Init(_)) => "init",
            wire::Line::System(wire::SystemLine::CompactBoundary(_)) => "compact_boundary",
            wire::Line::System(wire::SystemLine::ApiRetry(_)) => "api_retry",
            wire::Line::Assistant(_) => "assistant",
            wire::Line::User(_) => "user",
            wire::Line::Result(_) => "result",
            wire::Line::StreamEvent(_) => "stream_event",
            wire::Line::ControlRequest(_) => "control_request",
            wire::Line::ControlResponse(_) => "control_response",
            wire::Line::ControlCancelRequest(_) => "control_cancel_request",
        })
        .collect();
    assert_eq!(kinds, ["init", "assistant", "user", "assistant", "result"]);

    let wire::Line::System(wire::SystemLine::Init(init)) = &typed[0] else {
        unreachable!("checked above")
    };
    assert_eq!(init.permission_mode, "default");
    assert_eq!(init.output_style, "default");
    // The main agent's messages have no parent call, written as `null` as the SDKs expect.
    assert_eq!(lines[1]["parent_tool_use_id"], Value::Null);
    assert_eq!(lines[2]["parent_tool_use_id"], Value::Null);
    assert_eq!(lines[1]["message"]["type"], json!("message"));
    assert_eq!(lines[1]["message"]["role"], json!("assistant"));
    assert_eq!(lines[2]["message"]["role"], json!("user"));
    // One session, and a different id for every line.
    assert!(
        lines
            .iter()
            .all(|line| line["session_id"] == init.session_id)
    );
    let uuids: BTreeSet<&str> = lines
        .iter()
        .map(|line| line["uuid"].as_str().unwrap())
        .collect();
    assert_eq!(uuids.len(), lines.len(), "{uuids:?}");

    let wire::Line::Result(result) = &typed[4] else {
        unreachable!("checked above")
    };
    assert_eq!(result.subtype, wire::ResultSubtype::Success);
    assert!(!result.is_error);
    assert_eq!(result.result, "It says alpha.");
    assert_eq!(
        result.stop_reason,
        Some(cairn_protocol::StopReason::EndTurn)
    );
    assert_eq!(result.permission_denials, []);
    assert_eq!(result.errors, Vec::<String>::new());
}

#[test]
fn permission_denials_name_each_refused_call_with_its_id_and_input() {
    let h = Harness::new();
    h.settings(json!({"permissions": {"deny": ["Bash(rm:*)"]}}));
    std::fs::write(h.path("keep.txt"), "keep\n").unwrap();
    let rm = json!({"command": "rm keep.txt"});
    let write = json!({"file_path": h.path("new.txt"), "content": "hello\n"});
    let read = json!({"file_path": "keep.txt"});
    h.server.push(Reply::blocks(vec![
        ScriptedBlock::ToolUse {
            id: "toolu_rm".into(),
            name: "Bash".into(),
            input: rm.clone(),
        },
        ScriptedBlock::ToolUse {
            id: "toolu_write".into(),
            name: "Write".into(),
            input: write.clone(),
        },
        ScriptedBlock::ToolUse {
            id: "toolu_read".into(),
            name: "Read".into(),
            input: read,
        },
    ]));
    h.server.push(Reply::text("Some calls were refused."));
    let output = h
        .command()
        .args(["-p", "tidy up", "--output-format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let mut result = result_of(&output);
    assert_eq!(result.subtype, wire::ResultSubtype::Success);
    // The deny rule refused the `rm`; nobody could be asked about the Write in -p. The Read
    // was allowed and is not listed.
    result
        .permission_denials
        .sort_by(|a, b| a.tool_use_id.cmp(&b.tool_use_id));
    assert_eq!(
        result.permission_denials,
        vec![
            wire::PermissionDenial {
                tool_name: "Bash".into(),
                tool_use_id: "toolu_rm".into(),
                tool_input: rm,
            },
            wire::PermissionDenial {
                tool_name: "Write".into(),
                tool_use_id: "toolu_write".into(),
                tool_input: write,
            },
        ]
    );
    assert!(h.path("keep.txt").exists());
    assert!(!h.path("new.txt").exists());
}

#[test]
fn max_turns_one_with_a_tool_call_ends_error_max_turns() {
    let h = Harness::new();
    std::fs::write(h.path("a.txt"), "a\n").unwrap();
    h.server.push(Reply::tool_use(
        "toolu_1",
        "Read",
        json!({"file_path": "a.txt"}),
    ));
    let output = h
        .command()
        .args([
            "-p",
            "loop",
            "--max-turns",
            "1",
            "--output-format",
            "stream-json",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let result = result_of(&output);
    assert_eq!(result.subtype, wire::ResultSubtype::ErrorMaxTurns);
    assert!(result.is_error);
    assert_eq!(result.num_turns, 1);
    assert_eq!(result.result, "Reached the maximum number of turns (1).");
    assert_eq!(result.errors, vec![result.result.clone()]);
    assert_eq!(
        result.stop_reason,
        Some(cairn_protocol::StopReason::ToolUse)
    );
    assert_eq!(h.server.requests().len(), 1);
}

#[test]
fn a_user_prompt_submit_hook_that_blocks_ends_error_during_execution() {
    let h = Harness::new();
    h.settings(json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo 'no secrets in prompts' >&2; exit 2"}
    ]}]}}));
    let output = h
        .command()
        .args(["-p", "my password is hunter2", "--output-format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let result = result_of(&output);
    assert_eq!(result.subtype, wire::ResultSubtype::ErrorDuringExecution);
    assert!(result.is_error);
    assert!(
        result.result.contains("no secrets in prompts"),
        "{result:?}"
    );
    assert_eq!(result.num_turns, 0);
    assert_eq!(result.total_cost_usd, Some(0.0));
    assert!(result.model_usage.is_empty(), "{result:?}");
    assert!(h.server.requests().is_empty(), "nothing reached the model");
}

#[test]
fn a_setup_failure_prints_the_same_result_shape_as_a_turn() {
    let h = Harness::new();
    h.server.push(Reply::text("ok"));
    let answered = h
        .command()
        .args(["-p", "hi", "--output-format", "json"])
        .output()
        .unwrap();
    assert_eq!(answered.status.code(), Some(0), "{answered:?}");
    let failed = h
        .command()
        .env_remove("ANTHROPIC_API_KEY")
        .args(["-p", "hi", "--output-format", "json"])
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(1), "{failed:?}");

    let keys = |output: &Output| -> BTreeSet<String> {
        let line = &lines(output)[0];
        line.as_object().unwrap().keys().cloned().collect()
    };
    let mut answered_keys = keys(&answered);
    // Only an error result lists its errors.
    answered_keys.insert("errors".into());
    assert_eq!(keys(&failed), answered_keys);

    let result = result_of(&failed);
    let message = cairn_llm::ModelError::MissingAnthropicCredentials.to_string();
    let message = message.as_str();
    assert_eq!(result.subtype, wire::ResultSubtype::ErrorDuringExecution);
    assert!(result.is_error);
    assert_eq!(result.result, message);
    assert_eq!(result.errors, vec![message.to_owned()]);
    assert_eq!(result.session_id, None, "no session was started");
    assert_eq!(result.permission_denials, []);
    assert!(result.model_usage.is_empty());
}

#[test]
fn model_usage_sums_the_requests_of_each_model() {
    let h = Harness::new();
    std::fs::write(h.path("a.txt"), "a\n").unwrap();
    h.server.push(
        Reply::tool_use("toolu_1", "Read", json!({"file_path": "a.txt"}))
            .with_usage(100_000, 20_000),
    );
    h.server
        .push(Reply::text("Done.").with_usage(150_000, 30_000));
    let output = h
        .command()
        .args([
            "-p",
            "read a.txt",
            "--model",
            "sonnet",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let line = &lines(&output)[0];
    // Sonnet 4.5: $3 per million input tokens, $15 per million output tokens: $0.75 + $0.75.
    assert_eq!(
        line["modelUsage"],
        json!({"claude-sonnet-4-5": {
            "inputTokens": 250_000,
            "outputTokens": 50_000,
            "cacheReadInputTokens": 0,
            "cacheCreationInputTokens": 0,
            "webSearchRequests": 0,
            "costUSD": 1.5,
            "contextWindow": 200_000,
            "maxOutputTokens": 64_000,
        }})
    );
    // The total adds each request's cost: the same figure, up to rounding.
    let total = line["total_cost_usd"].as_f64().unwrap();
    assert!((total - 1.5).abs() < 1e-9, "{total}");
    assert_eq!(line["num_turns"], json!(2));
}

#[test]
fn a_model_without_known_prices_has_an_unknown_cost_not_zero() {
    let h = Harness::new();
    h.server.push(Reply::text("Hi.").with_usage(1_000, 100));
    let output = h
        .command()
        .args([
            "-p",
            "hi",
            "--model",
            "my-proxy-model",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let line = &lines(&output)[0];
    assert_eq!(line["total_cost_usd"], Value::Null);
    assert_eq!(
        line["modelUsage"],
        json!({"my-proxy-model": {
            "inputTokens": 1_000,
            "outputTokens": 100,
            "cacheReadInputTokens": 0,
            "cacheCreationInputTokens": 0,
            "webSearchRequests": 0,
            "costUSD": null,
            "contextWindow": null,
            "maxOutputTokens": null,
        }})
    );
}

#[test]
fn a_compaction_writes_a_typed_compact_boundary_line() {
    let h = Harness::new();
    // Long enough that a summary makes it smaller (a compaction with nothing to gain keeps the
    // conversation and writes no boundary).
    h.server.push(Reply::text(format!(
        "First answer. {}",
        "The greeting goes on at length. ".repeat(200)
    )));
    let output = h.command().args(["-p", "hello"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    h.server
        .reply_to_side_requests(vec![Reply::text("SUMMARY: a greeting.")]);
    let output = h
        .command()
        .args(["-p", "-c", "/compact", "--output-format", "stream-json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let lines = lines(&output);
    for line in &lines {
        assert_has_required_keys(line);
    }
    let boundaries: Vec<wire::CompactBoundary> = lines
        .iter()
        .filter_map(|line| match typed(line) {
            wire::Line::System(wire::SystemLine::CompactBoundary(boundary)) => Some(boundary),
            _ => None,
        })
        .collect();
    assert_eq!(boundaries.len(), 1, "{lines:?}");
    let boundary = &boundaries[0];
    assert_eq!(
        boundary.compact_metadata.trigger,
        wire::CompactTrigger::Manual
    );
    assert!(boundary.compact_metadata.pre_tokens > 0, "{boundary:?}");
    assert_eq!(
        boundary.session_id,
        lines[0]["session_id"].as_str().unwrap()
    );
    assert_eq!(lines.last().unwrap()["subtype"], json!("success"));
}

#[test]
fn a_denial_names_the_input_as_judged_after_a_hook_rewrote_it() {
    let h = Harness::new();
    let script = h.path("rewrite.sh");
    std::fs::write(
        &script,
        r#"#!/bin/sh
cat > /dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "echo rewritten"}}}'
"#,
    )
    .unwrap();
    h.settings(
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": format!("sh {}", script.display())}
        ]}]}}),
    );
    h.server.push(Reply::tool_use(
        "toolu_b",
        "Bash",
        json!({"command": "echo original"}),
    ));
    h.server.push(Reply::text("ok"));
    let output = h
        .command()
        .args(["-p", "go", "--disallowedTools", "Bash(echo:*)"])
        .args(["--output-format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        result_of(&output).permission_denials,
        vec![wire::PermissionDenial {
            tool_name: "Bash".into(),
            tool_use_id: "toolu_b".into(),
            tool_input: json!({"command": "echo rewritten"}),
        }]
    );
}
