//! The real `cairn` binary in headless mode against the scripted model server.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT};

/// Runs `cairn ARGS…` and keeps what it printed.
trait RunHarness {
    fn run(&self, args: &[&str]) -> Run;
}

impl RunHarness for Harness {
    fn run(&self, args: &[&str]) -> Run {
        let output = self.command().args(args).output().unwrap();
        Run {
            code: output.status.code(),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }
}

#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|err| panic!("stdout is not one JSON object ({err}): {self:?}"))
    }

    fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
            .collect()
    }
}

/// The stream-json lines with the values that differ from run to run taken out.
fn stable_lines(run: &Run) -> Vec<Value> {
    run.json_lines()
        .into_iter()
        .map(|mut line| {
            let object = line.as_object_mut().unwrap();
            for key in [
                "session_id",
                "duration_ms",
                "duration_api_ms",
                "cwd",
                "uuid",
            ] {
                object.remove(key);
            }
            line
        })
        .collect()
}

#[test]
fn text_output_prints_the_answer() {
    let h = Harness::new();
    h.server.push(Reply::text("Hello from the model."));
    let run = h.run(&["-p", "hello"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "Hello from the model.\n");

    let request = &h.server.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-test-key"));
    assert_eq!(
        request.body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}
        ]}])
    );
    assert_eq!(request.body["stream"], json!(true));
    // The Agent tool first, then the built-ins.
    assert_eq!(request.body["tools"][5]["name"], json!("Read"));
}

#[test]
fn json_output_is_one_result_object_with_claude_code_field_names() {
    let h = Harness::new();
    h.server
        .push(Reply::text("Four.").with_usage(1_000_000, 1_000_000));
    let run = h.run(&["-p", "2+2?", "--output-format", "json", "--model", "sonnet"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let result = run.json();
    assert_eq!(result["type"], json!("result"));
    assert_eq!(result["subtype"], json!("success"));
    assert_eq!(result["is_error"], json!(false));
    assert_eq!(result["result"], json!("Four."));
    assert_eq!(result["num_turns"], json!(1));
    // Sonnet: $3 per million input tokens and $15 per million output tokens.
    assert_eq!(result["total_cost_usd"], json!(18.0));
    assert_eq!(result["usage"]["input_tokens"], json!(1_000_000));
    assert!(result["session_id"].as_str().unwrap().len() >= 32);
    assert!(result["duration_ms"].is_u64() && result["duration_api_ms"].is_u64());
    assert_eq!(
        h.server.requests()[0].body["model"],
        json!("claude-sonnet-4-5")
    );
}

#[test]
fn stream_json_reports_init_messages_and_result_line_by_line() {
    let h = Harness::new();
    std::fs::write(h.work.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    h.server.push(Reply::tool_use(
        "toolu_1",
        "Read",
        json!({"file_path": "notes.txt"}),
    ));
    h.server.push(Reply::text("It lists alpha and beta."));
    let run = h.run(&[
        "-p",
        "what is in notes.txt?",
        "--output-format",
        "stream-json",
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines = run.json_lines();
    let kinds: Vec<&str> = lines
        .iter()
        .map(|line| line["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        vec!["system", "assistant", "user", "assistant", "result"]
    );
    assert_eq!(lines[0]["subtype"], json!("init"));
    assert_eq!(
        lines[0]["tools"],
        json!([
            "Agent",
            "Bash",
            "BashOutput",
            "TaskStop",
            "TaskOutput",
            "Read",
            "Glob",
            "Grep",
            "LS",
            "Write",
            "Edit",
            "MultiEdit",
            "NotebookEdit",
            "TodoWrite",
            "ExitPlanMode",
            "WebFetch",
            "WebSearch"
        ])
    );
    assert_eq!(lines[0]["apiKeySource"], json!("ANTHROPIC_API_KEY"));
    assert_eq!(lines[1]["message"]["content"][0]["name"], json!("Read"));
    let tool_result = &lines[2]["message"]["content"][0];
    assert_eq!(tool_result["tool_use_id"], json!("toolu_1"));
    assert_eq!(
        tool_result["content"],
        json!("     1\talpha\n     2\tbeta\n")
    );
    assert_eq!(lines[4]["result"], json!("It lists alpha and beta."));
    assert_eq!(lines[4]["num_turns"], json!(2));
    let session = lines[0]["session_id"].clone();
    assert!(lines.iter().all(|line| line["session_id"] == session));

    // The second request carries the tool result back, answering every tool_use.
    let second = &h.server.wait_for_requests(2, WAIT)[1];
    assert_eq!(
        second.body["messages"][2]["content"][0]["tool_use_id"],
        json!("toolu_1")
    );
}

#[test]
fn piped_standard_input_is_added_to_the_prompt() {
    let h = Harness::new();
    h.server.push(Reply::text("ok"));
    let mut child = h
        .command()
        .args(["-p", "summarise this"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"line one\nline two\n").unwrap();
    }
    assert!(child.wait().unwrap().success());
    let body = &h.server.requests()[0].body;
    assert_eq!(
        body["messages"][0]["content"][0]["text"],
        json!("summarise this\n\nline one\nline two")
    );
}

#[test]
fn overloaded_529_is_retried_and_announced() {
    let h = Harness::new();
    h.server
        .push(Reply::error(529, "overloaded_error", "Overloaded"));
    h.server.push(Reply::text("Made it."));
    let run = h.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "Made it.\n");
    assert!(
        run.stderr.contains("(overloaded), attempt 2 of"),
        "{}",
        run.stderr
    );
    assert_eq!(h.server.requests().len(), 2);
}

#[test]
fn rate_limit_429_honours_retry_after() {
    let h = Harness::new();
    h.server
        .push(Reply::error(429, "rate_limit_error", "Slow down").with_header("retry-after", "1"));
    h.server.push(Reply::text("Made it."));
    let started = Instant::now();
    let run = h.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr.contains("retrying in 1.0s (rate limited)"),
        "{}",
        run.stderr
    );
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(h.server.requests().len(), 2);
}

#[test]
fn invalid_key_401_is_not_retried_and_says_which_variable() {
    let h = Harness::new();
    h.server.push(Reply::error(
        401,
        "authentication_error",
        "invalid x-api-key",
    ));
    let run = h.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("ANTHROPIC_API_KEY"), "{}", run.stderr);
    assert!(
        !run.stderr.contains("sk-test-key"),
        "the key must never be printed"
    );
    assert_eq!(h.server.requests().len(), 1);

    h.server.push(Reply::error(
        401,
        "authentication_error",
        "invalid x-api-key",
    ));
    let run = h.run(&["-p", "hi", "--output-format", "json"]);
    assert_eq!(run.code, Some(1));
    let result = run.json();
    assert_eq!(result["is_error"], json!(true));
    assert_eq!(result["subtype"], json!("error_during_execution"));
    assert!(
        result["result"]
            .as_str()
            .unwrap()
            .contains("ANTHROPIC_API_KEY")
    );
}

#[test]
fn missing_credentials_name_the_variable_to_set() {
    let h = Harness::new();
    let output = h
        .command()
        .env_remove("ANTHROPIC_API_KEY")
        .args(["-p", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("ANTHROPIC_API_KEY"), "{stderr}");
    assert!(h.server.requests().is_empty());
}

#[test]
fn a_stream_cut_mid_way_is_retried_without_duplicated_text() {
    let h = Harness::new();
    let answer = "The quick brown fox jumps over the lazy dog, twice over.";
    let whole = Reply::text(answer).body_bytes("claude-sonnet-4-5").len();
    h.server.push(Reply::text(answer).cut_after(whole * 2 / 3));
    h.server.push(Reply::text(answer));
    let run = h.run(&["-p", "fox?", "--output-format", "stream-json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines = run.json_lines();
    let assistant: Vec<&Value> = lines
        .iter()
        .filter(|line| line["type"] == "assistant")
        .collect();
    assert_eq!(assistant.len(), 1);
    assert_eq!(
        assistant[0]["message"]["content"],
        json!([{"type": "text", "text": answer}])
    );
    assert_eq!(lines.last().unwrap()["result"], json!(answer));
    assert_eq!(h.server.requests().len(), 2);
    assert!(run.stderr.contains("retrying"), "{}", run.stderr);
}

#[test]
fn one_byte_chunks_and_whole_delivery_give_identical_output() {
    let h = Harness::new();
    let blocks = || {
        Reply::blocks(vec![
            cairn_test_support::ScriptedBlock::Thinking {
                thinking: "Let me think about ünïcödé.".into(),
                signature: "sig".into(),
            },
            cairn_test_support::ScriptedBlock::Text("Here is 日本語 and an emoji 🎉.".into()),
        ])
    };
    h.server.push(blocks());
    let whole = h.run(&["-p", "hi", "--output-format", "stream-json"]);
    // A fresh server, so that the message ids match too.
    let h = Harness::new();
    h.server.push(blocks().with_chunk_size(1));
    let bytewise = h.run(&["-p", "hi", "--output-format", "stream-json"]);
    assert_eq!(whole.code, Some(0), "{whole:?}");
    assert_eq!(stable_lines(&whole), stable_lines(&bytewise));
    assert_eq!(
        stable_lines(&whole)[2]["result"],
        json!("Here is 日本語 and an emoji 🎉.")
    );
}

#[test]
fn max_turns_ends_with_error_max_turns() {
    let h = Harness::new();
    std::fs::write(h.work.path().join("a.txt"), "a\n").unwrap();
    h.server.push(Reply::tool_use(
        "toolu_1",
        "Read",
        json!({"file_path": "a.txt"}),
    ));
    let run = h.run(&["-p", "loop", "--max-turns", "1", "--output-format", "json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(run.json()["subtype"], json!("error_max_turns"));
    assert_eq!(h.server.requests().len(), 1);
}

#[test]
fn malformed_tool_input_reaches_the_model_as_an_error_and_the_loop_goes_on() {
    let h = Harness::new();
    h.server.push(Reply::blocks(vec![
        cairn_test_support::ScriptedBlock::RawToolUse {
            id: "toolu_bad".into(),
            name: "Read".into(),
            input_json: "{\"file_path\": \"a.txt\"".into(),
        },
    ]));
    h.server.push(Reply::text("Sorry, retrying differently."));
    let run = h.run(&["-p", "read a.txt", "--output-format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let second = &h.server.wait_for_requests(2, WAIT)[1];
    let result = &second.body["messages"][2]["content"][0];
    assert_eq!(result["tool_use_id"], json!("toolu_bad"));
    assert_eq!(result["is_error"], json!(true));
    assert!(
        result["content"].as_str().unwrap().contains("Read"),
        "{result}"
    );
    // The assistant message sent back keeps a valid object as the input.
    assert_eq!(second.body["messages"][1]["content"][0]["input"], json!({}));
}

#[test]
fn sigint_during_a_stream_exits_promptly_with_an_error_result() {
    let h = Harness::new();
    h.server
        .push(Reply::text("This answer never finishes streaming.").stall_after(300));
    let mut child = h
        .command()
        .args(["-p", "hi", "--output-format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The request has arrived and the server is holding the stream open.
    h.server.wait_for_requests(1, WAIT);
    let interrupted = Instant::now();
    let pid = rustix::process::Pid::from_raw(child.id().cast_signed()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let exit = child.wait().unwrap();
    let elapsed = interrupted.elapsed();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert_eq!(exit.code(), Some(1), "stdout: {stdout}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["subtype"], json!("error_during_execution"));
    assert_eq!(result["is_error"], json!(true));
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?} to stop");
}

#[test]
fn without_a_terminal_plain_cairn_answers_in_plain_text() {
    let h = Harness::new();
    h.server.push(Reply::text("Plain answer."));
    let run = h.run(&["a question"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "Plain answer.\n");

    let run = h.run(&[]);
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("no prompt"), "{}", run.stderr);
    assert_eq!(h.server.requests().len(), 1);
}

#[test]
fn a_custom_command_runs_in_headless_mode_with_its_model_and_allowed_tools() {
    let h = Harness::new();
    let commands = h.path(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("shout.md"),
        "---\nmodel: haiku\nallowed-tools: Bash(echo:*)\n---\nShout $ARGUMENTS.\n",
    )
    .unwrap();
    h.server.push(Reply::tool_use(
        "b1",
        "Bash",
        json!({"command": "echo HI > shouted.txt"}),
    ));
    h.server.push(Reply::text("Shouted."));
    let output = h.command().args(["-p", "/shout hi"]).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "Shouted.");
    assert_eq!(
        std::fs::read_to_string(h.path("shouted.txt")).unwrap(),
        "HI\n",
        "allowed without a question, which -p would have refused"
    );
    let requests = h.server.wait_for_requests(2, WAIT);
    assert_eq!(requests[0].body["model"], json!("claude-haiku-4-5"));
    let prompt = requests[0].body["messages"][0].to_string();
    assert!(prompt.contains("Shout hi."), "{prompt}");
}

/// `-v` prints the version as `-V` and `--version` do (Claude Code takes all three, and the
/// Agent SDKs check the CLI with `-v`), without starting a session or asking the model.
#[test]
fn dash_v_prints_the_version_as_dash_capital_v_does() {
    let h = Harness::new();
    let expected = format!("cairn {}\n", env!("CARGO_PKG_VERSION"));
    for flag in ["-v", "-V", "--version"] {
        let run = h.run(&[flag]);
        assert_eq!(run.code, Some(0), "{flag}: {}", run.stderr);
        assert_eq!(run.stdout, expected, "{flag}");
    }
    assert_eq!(h.server.requests().len(), 0);
}
