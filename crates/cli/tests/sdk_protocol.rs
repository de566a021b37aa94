//! The Agent SDK face through the real binary over pipes, as the SDKs drive it: user lines
//! run as turns one after another on one session, the control protocol both ways
//! (`initialize` with a hook callback, `can_use_tool` whose `updatedInput` is what runs,
//! `interrupt`, `set_permission_mode`, errors for what cairn cannot do), `stream_event` lines,
//! a malformed line, stdin closing, and `--max-budget-usd`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use cairn_test_support::{Reply, ScriptedBlock};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT};

/// A cairn started as the SDKs start it, with its output read line by line.
struct SdkRun {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// Every line read so far, for failure messages and later checks.
    seen: Vec<Value>,
}

impl SdkRun {
    fn start(harness: &Harness, extra: &[&str]) -> SdkRun {
        let mut child = harness
            .command()
            .args([
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--input-format",
                "stream-json",
            ])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let line = line.unwrap();
                let value = serde_json::from_str(&line)
                    .unwrap_or_else(|err| panic!("stdout line is not JSON ({err}): {line}"));
                if sender.send(value).is_err() {
                    return;
                }
            }
        });
        SdkRun {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, line: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn send_raw(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{text}").unwrap();
        stdin.flush().unwrap();
    }

    fn user(&mut self, text: &str) {
        self.send(
            &json!({"type": "user", "message": {"role": "user", "content": text},
                          "parent_tool_use_id": null, "session_id": "default"}),
        );
    }

    fn control(&mut self, request_id: &str, request: Value) {
        self.send(
            &json!({"type": "control_request", "request_id": request_id, "request": request}),
        );
    }

    /// The next line that `wanted` accepts; the lines before it are kept in `seen`.
    fn wait_for(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if wanted(&line) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    panic!("no {what} line; saw {:#?}", self.seen)
                }
            }
        }
    }

    fn result(&mut self) -> Value {
        self.wait_for("result", |line| line["type"] == "result")
    }

    /// The response to `request_id`, whether it came already or is still to come.
    fn response_to(&mut self, request_id: &str) -> Value {
        let wanted = |line: &Value| {
            line["type"] == "control_response" && line["response"]["request_id"] == request_id
        };
        if let Some(line) = self.seen.iter().find(|line| wanted(line)) {
            return line["response"].clone();
        }
        self.wait_for(&format!("control_response to {request_id}"), wanted)["response"].clone()
    }

    fn request_of(&mut self, subtype: &str) -> Value {
        self.wait_for(&format!("control_request {subtype}"), |line| {
            line["type"] == "control_request" && line["request"]["subtype"] == subtype
        })
    }

    fn answer(&mut self, request: &Value, response: Value) {
        self.send(&json!({"type": "control_response", "response": {
            "subtype": "success", "request_id": request["request_id"], "response": response}}));
    }

    /// Closes stdin and waits for the exit: its status and standard error.
    fn finish(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let output = self.child.wait_with_output().unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }
}

#[test]
fn three_turns_run_one_after_another_on_one_session_and_closing_stdin_exits_zero() {
    let harness = Harness::new();
    for answer in ["one", "two", "three"] {
        harness.server.push(Reply::text(answer));
    }
    let mut run = SdkRun::start(&harness, &[]);
    // All three at once: the second and third wait for the turn before them.
    run.user("first");
    run.user("second");
    run.user("third");
    let results: Vec<(Value, Value)> = (0..3)
        .map(|_| {
            let result = run.result();
            (result["subtype"].clone(), result["result"].clone())
        })
        .collect();
    assert_eq!(
        results,
        vec![
            (json!("success"), json!("one")),
            (json!("success"), json!("two")),
            (json!("success"), json!("three")),
        ]
    );
    let session_ids: Vec<&Value> = run
        .seen
        .iter()
        .filter(|line| line["type"] == "result")
        .map(|line| &line["session_id"])
        .collect();
    assert!(
        session_ids.windows(2).all(|pair| pair[0] == pair[1]),
        "{session_ids:?}"
    );
    assert!(!run.seen.iter().any(|line| line["type"] == "stream_event"));
    let (code, stderr) = run.finish();
    assert_eq!(code, Some(0), "{stderr}");
    // One conversation: the third request carries the two turns before it.
    let requests = harness.server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2].body["messages"].as_array().unwrap().len(), 5);
}

#[test]
fn initialize_registers_a_hook_callback_that_denies_a_bash_call_which_then_does_not_run() {
    let harness = Harness::new();
    let marker = harness.path("ran.txt");
    harness.server.push(Reply::tool_use(
        "toolu_bash",
        "Bash",
        json!({"command": format!("touch {}", marker.display())}),
    ));
    harness.server.push(Reply::text("understood"));
    let mut run = SdkRun::start(&harness, &["--allowedTools", "Bash"]);
    run.control(
        "req_init",
        json!({"subtype": "initialize", "hooks": {"PreToolUse": [
                {"matcher": "Bash", "hookCallbackIds": ["hook_0"]}]},
               "agents": {"reviewer": {"description": "Reviews a change", "prompt": "You review."}},
               "appendSystemPrompt": "SDK-APPENDED-LINE"}),
    );
    let response = run.response_to("req_init");
    assert_eq!(response["subtype"], "success", "{response}");
    let agents = response["response"]["agents"].as_array().unwrap();
    assert!(
        agents
            .iter()
            .any(|agent| agent["name"] == "reviewer" && agent["description"] == "Reviews a change"),
        "{agents:?}"
    );
    let commands = response["response"]["commands"].as_array().unwrap();
    assert!(
        commands.iter().any(|command| command["name"] == "compact"),
        "{commands:?}"
    );
    assert_eq!(response["response"]["output_style"], "default");
    assert!(
        !response["response"]["models"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    run.user("run it");
    let asked = run.request_of("hook_callback");
    assert_eq!(
        (
            &asked["request"]["callback_id"],
            &asked["request"]["tool_use_id"],
            &asked["request"]["input"]["hook_event_name"],
            &asked["request"]["input"]["tool_name"],
        ),
        (
            &json!("hook_0"),
            &json!("toolu_bash"),
            &json!("PreToolUse"),
            &json!("Bash")
        )
    );
    run.answer(
        &asked,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
               "permissionDecision": "deny", "permissionDecisionReason": "no shell today"}}),
    );
    let result = run.result();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["permission_denials"][0]["tool_use_id"], "toolu_bash");
    let (code, stderr) = run.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!marker.exists(), "the denied command ran");
    let system = harness.server.requests()[0].body["system"].to_string();
    assert!(system.contains("SDK-APPENDED-LINE"), "{system}");
    let (is_error, text) = support::tool_result(&harness.server.requests(), 1);
    assert!(is_error && text.contains("no shell today"), "{text}");
}

#[test]
fn can_use_tool_asks_the_host_and_its_updated_input_is_what_is_written() {
    let harness = Harness::new();
    let file = harness.path("note.txt");
    harness.server.push(Reply::tool_use(
        "toolu_write",
        "Write",
        json!({"file_path": file.display().to_string(), "content": "from the model\n"}),
    ));
    harness.server.push(Reply::text("written"));
    let mut run = SdkRun::start(&harness, &["--permission-prompt-tool", "stdio"]);
    run.user("write the note");
    let asked = run.request_of("can_use_tool");
    assert_eq!(asked["request"]["tool_name"], "Write");
    assert_eq!(asked["request"]["tool_use_id"], "toolu_write");
    assert_eq!(asked["request"]["input"]["content"], "from the model\n");
    run.answer(
        &asked,
        json!({"behavior": "allow", "updatedInput": {
            "file_path": file.display().to_string(), "content": "from the host\n"}}),
    );
    let result = run.result();
    assert_eq!(
        (&result["subtype"], &result["result"]),
        (&json!("success"), &json!("written"))
    );
    let (code, stderr) = run.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "from the host\n");
}

#[test]
fn a_host_denial_refuses_the_call_with_its_message() {
    let harness = Harness::new();
    let file = harness.path("note.txt");
    harness.server.push(Reply::tool_use(
        "toolu_write",
        "Write",
        json!({"file_path": file.display().to_string(), "content": "x"}),
    ));
    harness.server.push(Reply::text("fine"));
    let mut run = SdkRun::start(&harness, &["--permission-prompt-tool", "stdio"]);
    run.user("write");
    let asked = run.request_of("can_use_tool");
    run.answer(
        &asked,
        json!({"behavior": "deny", "message": "not in this folder"}),
    );
    let result = run.result();
    assert_eq!(result["permission_denials"][0]["tool_name"], "Write");
    let (code, _) = run.finish();
    assert_eq!(code, Some(0));
    assert!(!file.exists());
    let (is_error, text) = support::tool_result(&harness.server.requests(), 1);
    assert!(is_error && text.contains("not in this folder"), "{text}");
}

#[test]
fn interrupt_ends_a_slow_turn_within_a_second_and_the_next_turn_works() {
    let harness = Harness::new();
    harness.server.push(Reply::endless_text("tick "));
    harness.server.push(Reply::text("after the interrupt"));
    let mut run = SdkRun::start(&harness, &[]);
    run.user("go on forever");
    harness.server.wait_for_requests(1, WAIT);
    let asked = Instant::now();
    run.control("req_stop", json!({"subtype": "interrupt"}));
    let result = run.result();
    let took = asked.elapsed();
    assert!(took < Duration::from_secs(1), "the interrupt took {took:?}");
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(run.response_to("req_stop")["subtype"], "success");
    run.user("and now?");
    let result = run.result();
    assert_eq!(
        (&result["subtype"], &result["result"]),
        (&json!("success"), &json!("after the interrupt"))
    );
    let (code, stderr) = run.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn set_permission_mode_takes_effect_for_the_next_call() {
    let harness = Harness::new();
    let file = harness.path("edit.txt");
    let write = || {
        Reply::tool_use(
            "toolu_write",
            "Write",
            json!({"file_path": file.display().to_string(), "content": "accepted\n"}),
        )
    };
    harness.server.push(write());
    harness.server.push(Reply::text("refused"));
    harness.server.push(write());
    harness.server.push(Reply::text("done"));
    let mut run = SdkRun::start(&harness, &[]);
    // In the default mode, with nobody to ask, the Write is refused.
    run.user("write it");
    assert_eq!(run.result()["permission_denials"][0]["tool_name"], "Write");
    assert!(!file.exists());
    run.control(
        "req_mode",
        json!({"subtype": "set_permission_mode", "mode": "acceptEdits"}),
    );
    assert_eq!(run.response_to("req_mode")["subtype"], "success");
    run.user("write it again");
    let result = run.result();
    assert_eq!(result["permission_denials"], json!([]));
    let (code, stderr) = run.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "accepted\n");
}

#[test]
fn set_max_thinking_tokens_sets_the_budget_of_the_next_requests() {
    let harness = Harness::new();
    for answer in ["one", "two", "three"] {
        harness.server.push(Reply::text(answer));
    }
    let mut run = SdkRun::start(&harness, &[]);
    let turn = |run: &mut SdkRun, id: &str, tokens: Value| {
        run.control(
            id,
            json!({"subtype": "set_max_thinking_tokens", "max_thinking_tokens": tokens}),
        );
        assert_eq!(run.response_to(id)["subtype"], "success");
        run.user("think about it");
        run.result();
        harness.server.requests().last().unwrap().body["thinking"].clone()
    };
    assert_eq!(
        turn(&mut run, "req_on", json!(4096)),
        json!({"type": "enabled", "budget_tokens": 4096})
    );
    assert_eq!(turn(&mut run, "req_off", json!(0)), Value::Null);
    // null: back to what the run started with, here no thinking.
    assert_eq!(turn(&mut run, "req_default", Value::Null), Value::Null);
    run.control(
        "req_bad",
        json!({"subtype": "set_max_thinking_tokens", "max_thinking_tokens": "lots"}),
    );
    let bad = run.response_to("req_bad");
    assert_eq!(bad["subtype"], "error");
    assert!(bad["error"].as_str().unwrap().contains("\"lots\""), "{bad}");
    let (code, stderr) = run.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn stop_task_stops_a_background_shell_by_its_id() {
    let harness = Harness::new();
    harness.server.push(Reply::tool_use(
        "toolu_bg",
        "Bash",
        json!({"command": "sleep 300", "run_in_background": true}),
    ));
    harness.server.push(Reply::text("started"));
    harness.server.push(Reply::tool_use(
        "toolu_out",
        "BashOutput",
        json!({"bash_id": "bash_1"}),
    ));
    harness.server.push(Reply::text("checked"));
    let mut run = SdkRun::start(&harness, &["--permission-mode", "bypassPermissions"]);
    run.user("start the sleeper");
    assert_eq!(run.result()["result"], "started");
    run.control(
        "req_stop",
        json!({"subtype": "stop_task", "task_id": "bash_1"}),
    );
    assert_eq!(run.response_to("req_stop")["subtype"], "success");
    run.control(
        "req_none",
        json!({"subtype": "stop_task", "task_id": "bash_9"}),
    );
    let none = run.response_to("req_none");
    assert_eq!(none["subtype"], "error");
    assert!(none["error"].as_str().unwrap().contains("bash_9"), "{none}");
    run.user("is it still running?");
    assert_eq!(run.result()["result"], "checked");
    let requests = harness.server.requests();
    let (_, output) = support::tool_result(&requests, requests.len() - 1);
    assert!(output.contains("killed"), "{output}");
    let (code, stderr) = run.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn include_partial_messages_streams_the_raw_events_before_the_message() {
    let harness = Harness::new();
    harness.server.push(Reply::text("streamed"));
    let mut run = SdkRun::start(&harness, &["--include-partial-messages"]);
    run.user("hi");
    run.wait_for("assistant", |line| line["type"] == "assistant");
    let events: Vec<String> = run
        .seen
        .iter()
        .filter(|line| line["type"] == "stream_event")
        .map(|line| line["event"]["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        events.first().map(String::as_str),
        Some("message_start"),
        "{events:?}"
    );
    assert_eq!(events.last().map(String::as_str), Some("message_stop"));
    let text: String = run
        .seen
        .iter()
        .filter(|line| line["event"]["delta"]["type"] == "text_delta")
        .map(|line| line["event"]["delta"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "streamed");
    run.result();
    let (code, _) = run.finish();
    assert_eq!(code, Some(0));
}

#[test]
fn bad_input_is_answered_and_the_session_goes_on() {
    let harness = Harness::new();
    harness.server.push(Reply::text("still here"));
    let mut run = SdkRun::start(&harness, &[]);
    run.send_raw("{this is not json");
    run.control("req_odd", json!({"subtype": "make_coffee"}));
    let odd = run.response_to("req_odd");
    assert_eq!(
        (&odd["subtype"], &odd["error"]),
        (
            &json!("error"),
            &json!("unsupported control request subtype: make_coffee")
        )
    );
    run.control(
        "req_rewind",
        json!({"subtype": "rewind_files", "user_message_id": "u1"}),
    );
    let rewind = run.response_to("req_rewind");
    assert_eq!(rewind["subtype"], "error");
    assert!(
        rewind["error"].as_str().unwrap().contains("not supported"),
        "{rewind}"
    );
    run.user("are you there?");
    assert_eq!(run.result()["result"], "still here");
    run.control("req_usage", json!({"subtype": "get_context_usage"}));
    let usage = run.response_to("req_usage");
    assert_eq!(usage["response"]["maxTokens"], 200_000, "{usage}");
    let (code, stderr) = run.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("standard input line 1 is not a stream-json message"),
        "{stderr}"
    );
}

#[test]
fn max_budget_usd_ends_the_turn_with_its_own_subtype() {
    let harness = Harness::new();
    // 1M input tokens at $3 per million: far above the budget.
    harness
        .server
        .push(Reply::blocks(vec![ScriptedBlock::Text("costly".into())]).with_usage(1_000_000, 10));
    let mut run = SdkRun::start(
        &harness,
        &["--max-budget-usd", "0.5", "--plugin-dir", "plugins"],
    );
    run.user("spend");
    let result = run.result();
    assert_eq!(
        (&result["subtype"], &result["is_error"]),
        (&json!("error_max_budget_usd"), &json!(true))
    );
    let (code, stderr) = run.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("--plugin-dir plugins: accepted"),
        "{stderr}"
    );
}

/// The host's in-process MCP server `calc`, answering the JSON-RPC that cairn carries in
/// `mcp_message` requests: one tool, `add`.
fn calc_server(message: &Value) -> Value {
    let id = message.get("id").cloned();
    let result = match message["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "calc", "version": "1.0.0"},
        }),
        "tools/list" => json!({"tools": [{
            "name": "add",
            "description": "Adds two numbers",
            "inputSchema": {"type": "object", "properties": {
                "a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
        }]}),
        "tools/call" => {
            let arguments = &message["params"]["arguments"];
            let sum = arguments["a"].as_f64().unwrap() + arguments["b"].as_f64().unwrap();
            json!({"content": [{"type": "text", "text": format!("sum is {sum}")}]})
        }
        _ => json!({}),
    };
    match id {
        Some(id) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        // A notification: the acknowledgement the Python SDK sends.
        None => json!({"jsonrpc": "2.0", "result": {}}),
    }
}

#[test]
fn an_sdk_mcp_server_is_reached_through_mcp_message_requests() {
    let harness = Harness::new();
    harness.server.push(Reply::tool_use(
        "toolu_add",
        "mcp__calc__add",
        json!({"a": 2, "b": 3}),
    ));
    harness.server.push(Reply::text("five"));
    let config = json!({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}).to_string();
    let mut run = SdkRun::start(
        &harness,
        &["--mcp-config", &config, "--allowedTools", "mcp__calc__add"],
    );
    run.control("req_init", json!({"subtype": "initialize", "hooks": null}));
    let mut methods = Vec::new();
    let served = |run: &mut SdkRun, methods: &mut Vec<String>, until: &dyn Fn(&Value) -> bool| loop {
        let line = run.wait_for("an mcp_message or the awaited line", |line| {
            until(line) || line["request"]["subtype"] == "mcp_message"
        });
        if until(&line) {
            return line;
        }
        assert_eq!(line["request"]["server_name"], "calc");
        let message = &line["request"]["message"];
        methods.push(message["method"].as_str().unwrap().to_owned());
        run.answer(&line, json!({"mcp_response": calc_server(message)}));
    };
    let init = served(&mut run, &mut methods, &|line| {
        line["type"] == "control_response" && line["response"]["request_id"] == "req_init"
    });
    assert_eq!(init["response"]["subtype"], "success");
    run.user("add 2 and 3");
    let result = served(&mut run, &mut methods, &|line| line["type"] == "result");
    assert_eq!(result["result"], "five");
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call"
        ]
    );
    let init_line = run
        .seen
        .iter()
        .find(|line| line["subtype"] == "init")
        .unwrap()
        .clone();
    assert_eq!(
        init_line["mcp_servers"],
        json!([{"name": "calc", "status": "connected"}])
    );
    let (code, stderr) = run.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let (is_error, text) = support::tool_result(&harness.server.requests(), 1);
    assert!(!is_error && text.contains("sum is 5"), "{text}");
}

#[test]
fn a_retried_request_is_reported_as_a_system_api_retry_line() {
    let harness = Harness::new();
    harness
        .server
        .push(Reply::error(529, "overloaded_error", "busy").with_header("retry-after", "0"));
    harness.server.push(Reply::text("made it"));
    let mut run = SdkRun::start(&harness, &[]);
    run.user("hi");
    let retry = run.wait_for("api_retry", |line| line["subtype"] == "api_retry");
    assert_eq!(
        (&retry["type"], &retry["attempt"]),
        (&json!("system"), &json!(2))
    );
    assert_eq!(run.result()["result"], "made it");
    let (code, _) = run.finish();
    assert_eq!(code, Some(0));
}
