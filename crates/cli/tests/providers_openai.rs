//! Providers through the real binary: what the OpenAI-compatible ones (Chat Completions)
//! have beyond the scenarios `dialects.rs` runs on both dialects — `<provider>/<model>`, a
//! run with no Anthropic variable at all, reasoning passed back where the model needs it,
//! `reasoning_effort`, tool calls written as text, the provider's small model, and the cost
//! of a model without known prices shown as unknown — and thinking on Anthropic's.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::time::{Duration, Instant};

use cairn_test_support::{Reply, ScriptedBlock};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT};

mod dialect;
use dialect::{Dialect, run, tool_use, without_anthropic};

/// Chat Completions specifics: the system prompt first, tools as functions, usage asked for,
/// the key as a bearer token and no Anthropic header.
#[test]
fn an_openai_run_needs_no_anthropic_variable_and_sends_the_chat_dialect() {
    let h = Harness::new();
    h.server.push(Reply::text("Hello."));
    let (code, stdout, stderr) = run(Dialect::OpenAi.command(&h).args(["-p", "hi"]));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "Hello.\n");
    let request = &h.server.wait_for_requests(1, WAIT)[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(
        request.header("authorization"),
        Some("Bearer sk-openai-test")
    );
    assert_eq!(request.header("x-api-key"), None);
    assert_eq!(request.header("anthropic-version"), None);
    let body = &request.body;
    assert_eq!(body["model"], json!("gpt-4o"));
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    // gpt-4o writes at most 16,384 tokens: the engine's larger cap is lowered to it.
    assert_eq!(body["max_completion_tokens"], json!(16_384));
    assert_eq!(body.get("max_tokens"), None);
    assert_eq!(body["messages"][0]["role"], json!("system"));
    assert_eq!(body["tools"][0]["type"], json!("function"));
    assert!(body["tools"][0]["function"]["parameters"].is_object());
}

/// `ollama/<model>` goes to `OLLAMA_HOST`'s `/v1` with no key at all.
#[test]
fn ollama_needs_only_its_host() {
    let h = Harness::new();
    h.server.push(Reply::text("Local."));
    let mut command = h.command();
    without_anthropic(&mut command)
        .env("OLLAMA_HOST", h.server.url())
        .args(["--model", "ollama/llama3.2", "-p", "hi"]);
    let (code, stdout, stderr) = run(&mut command);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "Local.\n");
    let request = &h.server.wait_for_requests(1, WAIT)[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.body["model"], json!("llama3.2"));
    // A model the registry does not know keeps the engine's cap, in the field servers read.
    assert_eq!(request.body["max_tokens"], json!(32_000));
}

/// A prefix that is no provider's name is part of the model id, sent to Anthropic as it is
/// (gateways behind `ANTHROPIC_BASE_URL` name models so).
#[test]
fn an_unknown_prefix_stays_with_the_default_provider() {
    let h = Harness::new();
    h.server.push(Reply::text("Via the gateway."));
    let (code, _, stderr) =
        run(h
            .command()
            .args(["--model", "anthropic/claude-sonnet-4-5", "-p", "hi"]));
    assert_eq!(code, Some(0), "{stderr}");
    let request = &h.server.wait_for_requests(1, WAIT)[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.body["model"], json!("anthropic/claude-sonnet-4-5"));
}

/// DeepSeek's reasoner must get its reasoning back between tool calls; a model the registry
/// does not mark so does not. Either way the reasoning is shown as thinking.
#[test]
fn reasoning_is_shown_and_passed_back_where_the_model_needs_it() {
    for (model, passed_back) in [
        ("deepseek/deepseek-reasoner", true),
        ("openai/gpt-4o", false),
    ] {
        let h = Harness::new();
        std::fs::write(h.path("a.txt"), "alpha\n").unwrap();
        h.server.push(Reply::blocks(vec![
            ScriptedBlock::Thinking {
                thinking: "I should read a.txt first.".into(),
                signature: String::new(),
            },
            tool_use("call_r", "Read", json!({"file_path": "a.txt"})),
        ]));
        h.server.push(Reply::text("Read it."));
        let mut command = h.command();
        without_anthropic(&mut command)
            .env("DEEPSEEK_API_KEY", "sk-ds")
            .env("DEEPSEEK_BASE_URL", h.server.url())
            .env("OPENAI_API_KEY", "sk-oa")
            .env("OPENAI_BASE_URL", h.server.url())
            .args([
                "--model",
                model,
                "-p",
                "go",
                "--output-format",
                "stream-json",
                "--verbose",
            ]);
        let (code, stdout, stderr) = run(&mut command);
        assert_eq!(code, Some(0), "{model}: {stderr}");
        let shown = stdout.lines().any(|line| {
            let line: Value = serde_json::from_str(line).unwrap_or(Value::Null);
            line["type"] == "assistant"
                && line["message"]["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|block| {
                        block["type"] == "thinking"
                            && block["thinking"] == "I should read a.txt first."
                    })
        });
        assert!(shown, "{model}: {stdout}");
        let requests = h.server.wait_for_requests(2, WAIT);
        let assistant = requests[1].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|message| message["role"] == "assistant")
            .cloned()
            .unwrap();
        assert_eq!(
            assistant.get("reasoning_content").cloned(),
            passed_back.then(|| json!("I should read a.txt first.")),
            "{model}"
        );
        assert_eq!(assistant["tool_calls"][0]["id"], json!("call_r"));
    }
}

/// OpenRouter streams reasoning as `reasoning`; it is thinking all the same.
#[test]
fn openrouter_reasoning_is_thinking_too() {
    let h = Harness::new();
    h.server.push(
        Reply::blocks(vec![
            ScriptedBlock::Thinking {
                thinking: "Hmm.".into(),
                signature: String::new(),
            },
            ScriptedBlock::Text("Done.".into()),
        ])
        .with_reasoning_field("reasoning"),
    );
    let mut command = h.command();
    without_anthropic(&mut command)
        .env("OPENROUTER_API_KEY", "sk-or")
        .env("OPENROUTER_BASE_URL", h.server.url())
        .args(["--model", "openrouter/deepseek/deepseek-r1", "-p", "go"])
        .args(["--output-format", "stream-json", "--verbose"]);
    let (code, stdout, stderr) = run(&mut command);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(r#""thinking":"Hmm.""#), "{stdout}");
    assert_eq!(
        h.server.wait_for_requests(1, WAIT)[0].body["model"],
        json!("deepseek/deepseek-r1")
    );
}

#[test]
fn a_429_on_the_openai_dialect_is_retried_after_retry_after() {
    let h = Harness::new();
    h.server.push(
        Reply::error(429, "rate_limit_exceeded", "Slow down").with_header("retry-after", "1"),
    );
    h.server.push(Reply::text("Made it."));
    let started = Instant::now();
    let (code, stdout, stderr) = run(Dialect::OpenAi.command(&h).args(["-p", "hi"]));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "Made it.\n");
    assert!(
        stderr.contains("retrying in 1.0s (rate limited)"),
        "{stderr}"
    );
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(h.server.requests().len(), 2);
}

#[test]
fn a_401_on_the_openai_dialect_exits_1_naming_openai_api_key() {
    let h = Harness::new();
    h.server.push(Reply::error(
        401,
        "invalid_request_error",
        "Incorrect API key provided",
    ));
    let (code, stdout, stderr) = run(Dialect::OpenAi.command(&h).args(["-p", "hi"]));
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("check the value of OPENAI_API_KEY"),
        "{stderr}"
    );
    assert!(stderr.contains("Incorrect API key provided"), "{stderr}");
    assert!(
        !stderr.contains("sk-openai-test"),
        "the key must never be printed"
    );
    assert_eq!(h.server.requests().len(), 1);
    // Without the key, the run stops before any request and names the variable.
    let mut command = h.command();
    without_anthropic(&mut command).args(["--model", "openai/gpt-4o", "-p", "hi"]);
    let (code, _, stderr) = run(&mut command);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("set OPENAI_API_KEY"), "{stderr}");
    assert_eq!(h.server.requests().len(), 1);
}

/// A model the registry has no prices for costs "unknown", never $0; a known one is priced.
#[test]
fn an_unknown_models_cost_is_reported_as_unknown() {
    let h = Harness::new();
    h.server.push(Reply::text("Local."));
    let mut command = h.command();
    without_anthropic(&mut command)
        .env("OLLAMA_HOST", h.server.url())
        .args([
            "--model",
            "ollama/llama3.2",
            "-p",
            "hi",
            "--output-format",
            "json",
        ]);
    let (code, stdout, stderr) = run(&mut command);
    assert_eq!(code, Some(0), "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["total_cost_usd"], Value::Null, "{result}");

    h.server.push(Reply::text("Local."));
    let mut command = h.command();
    without_anthropic(&mut command)
        .env("OLLAMA_HOST", h.server.url())
        .args(["--model", "ollama/llama3.2", "-p", "hi", "--verbose"]);
    let (_, _, stderr) = run(&mut command);
    assert!(stderr.contains("output tokens; cost unknown"), "{stderr}");

    h.server
        .push(Reply::text("Priced.").with_usage(1_000_000, 0));
    let (_, stdout, stderr) =
        run(Dialect::OpenAi
            .command(&h)
            .args(["-p", "hi", "--output-format", "json"]));
    let result: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stderr}"));
    let cost = result["total_cost_usd"].as_f64().unwrap();
    // gpt-4o's input at $2.50 per million tokens.
    assert!((cost - 2.5).abs() < 1e-9, "{result}");
}

/// A project's settings cannot choose where `ollama/…` sends the conversation: its
/// `OLLAMA_HOST` is ignored as its `ANTHROPIC_BASE_URL` would be, and the run goes to the
/// default host (where nothing listens here) instead of the project's.
#[test]
fn a_projects_ollama_host_is_not_followed() {
    let h = Harness::new();
    h.settings(json!({"env": {"OLLAMA_HOST": h.server.url()}}));
    h.server.push(Reply::text("Exfiltrated."));
    let mut command = h.command();
    without_anthropic(&mut command)
        .env_remove("OLLAMA_HOST")
        .env("CAIRN_MAX_RETRIES", "0")
        .args(["--model", "ollama/llama3.2", "-p", "hi"]);
    let (code, stdout, stderr) = run(&mut command);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(h.server.requests().is_empty(), "{stderr}");
}

/// Memory recall on another provider goes to the `smallModel` its settings entry names, on
/// the same provider; without one, to the run's own model (that provider has no haiku).
#[test]
fn recall_on_another_provider_asks_its_small_model() {
    for (small_model, recall_model) in [(None, "llama3.2"), (Some("qwen2.5:0.5b"), "qwen2.5:0.5b")]
    {
        let h = Harness::new();
        let dir = h.home.path().join("memories");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("feedback_0.md"),
            "---\nname: rule\ndescription: what the user said about tests\ntype: feedback\n---\nUse tables.\n",
        )
        .unwrap();
        std::fs::write(dir.join("MEMORY.md"), "- [rule](feedback_0.md) — tests\n").unwrap();
        let mut settings = json!({"autoMemoryDirectory": dir});
        if let Some(small) = small_model {
            settings["providers"] = json!({"ollama": {"smallModel": small}});
        }
        h.user_settings(settings);
        h.server
            .reply_to_side_requests(vec![Reply::text("{\"selected_memories\": []}")]);
        h.server
            .push(Reply::text("done").with_delay(Duration::from_millis(300)));
        let mut command = h.command();
        without_anthropic(&mut command)
            .env("OLLAMA_HOST", h.server.url())
            .args(["--model", "ollama/llama3.2", "-p", "how do we write tests?"]);
        let (code, _, stderr) = run(&mut command);
        assert_eq!(code, Some(0), "{stderr}");
        let requests = h.server.requests();
        let (recalls, answers): (Vec<_>, Vec<_>) = requests
            .iter()
            .partition(|r| r.body["tools"].as_array().is_none_or(Vec::is_empty));
        assert!(!recalls.is_empty(), "a recall request: {requests:#?}");
        for recall in recalls {
            assert_eq!(recall.path, "/v1/chat/completions");
            assert_eq!(recall.body["model"], json!(recall_model), "{small_model:?}");
        }
        assert_eq!(answers.len(), 1);
        assert_eq!(answers[0].body["model"], json!("llama3.2"));
    }
}

/// A model that is not Claude's, sent to Anthropic's endpoint, gets a 404 that says how to
/// choose another provider.
#[test]
fn a_404_for_a_foreign_model_says_how_to_choose_a_provider() {
    let h = Harness::new();
    h.server
        .push(Reply::error(404, "not_found_error", "model: gpt-4o"));
    let (code, _, stderr) = run(h.command().args(["--model", "gpt-4o", "-p", "hi"]));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("for model `gpt-4o`: model: gpt-4o; it went to the Anthropic API; another provider is chosen with its prefix, such as openai/gpt-4o, one of openai/, ollama/"),
        "{stderr}"
    );
}

/// A custom provider from the user's settings: its URL, its key variable and its headers.
fn custom_provider(h: &Harness) -> Value {
    json!({"providers": {"mylab": {
        "kind": "openai",
        "baseUrl": format!("{}/v1", h.server.url()),
        "apiKeyEnv": "MYLAB_KEY",
        "headers": {"x-team": "blue"},
    }}})
}

#[test]
fn a_custom_provider_from_the_users_settings_is_used() {
    let h = Harness::new();
    h.user_settings(custom_provider(&h));
    h.server.push(Reply::text("From the lab."));
    let mut command = h.command();
    without_anthropic(&mut command)
        .env("MYLAB_KEY", "sk-lab")
        .args(["--model", "mylab/qwen3-coder", "-p", "hi"]);
    let (code, stdout, stderr) = run(&mut command);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "From the lab.\n");
    let request = &h.server.wait_for_requests(1, WAIT)[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer sk-lab"));
    assert_eq!(request.header("x-team"), Some("blue"));
    assert_eq!(request.body["model"], json!("qwen3-coder"));

    // Without its key variable the run stops before any request and names it.
    let mut command = h.command();
    without_anthropic(&mut command)
        .env_remove("MYLAB_KEY")
        .args(["--model", "mylab/qwen3-coder", "-p", "hi"]);
    let (code, _, stderr) = run(&mut command);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("set MYLAB_KEY"), "{stderr}");
    assert_eq!(h.server.requests().len(), 1);
}

/// A project's settings may not point a key at a URL of their choosing: the same provider
/// in `.claude/settings.json` stops a `-p` run before anything is sent, naming the keys.
#[test]
fn a_custom_provider_from_a_projects_settings_is_refused() {
    let h = Harness::new();
    h.settings(custom_provider(&h));
    h.server.push(Reply::text("Exfiltrated."));
    let mut command = h.command();
    without_anthropic(&mut command)
        .env("MYLAB_KEY", "sk-lab")
        .args(["--model", "mylab/qwen3-coder", "-p", "hi"]);
    let (code, _, stderr) = run(&mut command);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("providers.mylab.baseUrl"), "{stderr}");
    assert!(stderr.contains("providers.mylab.apiKeyEnv"), "{stderr}");
    assert!(h.server.requests().is_empty());
}

/// `MAX_THINKING_TOKENS` asks Anthropic for thinking (with interleaved thinking between tool
/// calls); the thinking block and its signature go back intact with the tool call.
#[test]
fn anthropic_thinking_is_asked_for_and_its_signature_kept_across_a_tool_call() {
    let h = Harness::new();
    std::fs::write(h.path("a.txt"), "alpha\n").unwrap();
    h.server.push(Reply::blocks(vec![
        ScriptedBlock::Thinking {
            thinking: "Read a.txt.".into(),
            signature: "sig-abc".into(),
        },
        tool_use("toolu_1", "Read", json!({"file_path": "a.txt"})),
    ]));
    h.server.push(Reply::text("Read."));
    let (code, stdout, stderr) = run(h
        .command()
        .env("MAX_THINKING_TOKENS", "4096")
        .args(["-p", "go"]));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "Read.\n");
    let requests = h.server.wait_for_requests(2, WAIT);
    for request in &requests {
        assert_eq!(
            request.body["thinking"],
            json!({"type": "enabled", "budget_tokens": 4096})
        );
        assert_eq!(
            request.header("anthropic-beta"),
            Some("interleaved-thinking-2025-05-14")
        );
    }
    let assistant = &requests[1].body["messages"][1];
    assert_eq!(assistant["role"], json!("assistant"));
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": "Read a.txt.", "signature": "sig-abc"})
    );
    assert_eq!(assistant["content"][1]["id"], json!("toolu_1"));

    // `alwaysThinkingEnabled` thinks without the variable; without either, no thinking.
    h.user_settings(json!({"alwaysThinkingEnabled": true}));
    h.server.push(Reply::text("Thought."));
    let (code, _, stderr) = run(h.command().args(["-p", "go"]));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        h.server.wait_for_requests(3, WAIT)[2].body["thinking"]["budget_tokens"],
        json!(31_999)
    );
    h.user_settings(json!({}));
    h.server.push(Reply::text("Plain."));
    let (code, _, stderr) = run(h.command().args(["-p", "go"]));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        h.server.wait_for_requests(4, WAIT)[3].body.get("thinking"),
        None
    );

    // A budget under the API's minimum is refused before anything is sent.
    let (code, _, stderr) = run(h
        .command()
        .env("MAX_THINKING_TOKENS", "100")
        .args(["-p", "go"]));
    assert_eq!(code, Some(1));
    assert!(stderr.contains("MAX_THINKING_TOKENS is `100`"), "{stderr}");
    assert_eq!(h.server.requests().len(), 4);
}

/// A local model that writes its call as text — Qwen's `<tool_call>` tags, or a bare JSON
/// object — has it run as the call: the tool runs, the next request carries the call and
/// its result under one id, `--verbose` says so; the JSON never reaches the output.
#[test]
fn a_tool_call_written_as_text_is_run_as_the_call() {
    let call = json!({"name": "Read", "arguments": {"file_path": "a.txt"}});
    for text in [
        format!("<tool_call>\n{call}\n</tool_call>"),
        format!("{call}\n"),
    ] {
        let h = Harness::new();
        std::fs::write(h.path("a.txt"), "alpha\n").unwrap();
        h.server.push(Reply::text(text.clone()));
        h.server.push(Reply::text("It says alpha."));
        let mut command = h.command();
        without_anthropic(&mut command)
            .env("OLLAMA_HOST", h.server.url())
            .args(["--model", "ollama/qwen2.5-coder", "-p", "read a.txt"])
            .args(["--output-format", "stream-json", "--verbose"]);
        let (code, stdout, stderr) = run(&mut command);
        assert_eq!(code, Some(0), "{text}: {stderr}");
        assert!(
            stderr.contains("debug: the model wrote its call of Read (call_text"),
            "{stderr}"
        );
        assert!(
            stderr.contains("(1 tool calls read from text in this run)"),
            "{stderr}"
        );
        assert!(!stdout.contains("file_path\\\":"), "{stdout}");
        let requests = h.server.wait_for_requests(2, WAIT);
        let messages = requests[1].body["messages"].as_array().unwrap();
        let assistant = messages
            .iter()
            .find(|message| message["role"] == "assistant")
            .unwrap();
        assert_eq!(
            assistant["content"],
            json!(""),
            "the JSON is no text: {assistant}"
        );
        let sent_call = &assistant["tool_calls"][0];
        assert_eq!(sent_call["function"]["name"], json!("Read"));
        assert_eq!(
            serde_json::from_str::<Value>(sent_call["function"]["arguments"].as_str().unwrap())
                .unwrap(),
            json!({"file_path": "a.txt"})
        );
        let results = Dialect::OpenAi.tool_results(&requests[1]);
        assert_eq!(results.len(), 1, "{results:?}");
        assert_eq!(json!(results[0].0), sent_call["id"]);
        assert!(results[0].1.contains("alpha"), "{results:?}");
        let last = stdout.lines().last().unwrap();
        let result: Value = serde_json::from_str(last).unwrap();
        assert_eq!(result["result"], json!("It says alpha."));
        // The result counts the calls read from text.
        assert_eq!(result["cairn_tool_calls_from_text"], json!(1), "{result}");
    }
}

/// A call with prose around it is text: shown as the model wrote it, nothing run.
#[test]
fn a_call_with_prose_around_it_stays_text() {
    let h = Harness::new();
    std::fs::write(h.path("a.txt"), "alpha\n").unwrap();
    let text = r#"I would call {"name": "Read", "arguments": {"file_path": "a.txt"}} next."#;
    h.server.push(Reply::text(text));
    let mut command = h.command();
    without_anthropic(&mut command)
        .env("OLLAMA_HOST", h.server.url())
        .args([
            "--model",
            "ollama/qwen2.5-coder",
            "-p",
            "read a.txt",
            "--verbose",
        ]);
    let (code, stdout, stderr) = run(&mut command);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, format!("{text}\n"));
    assert!(!stderr.contains("read from text"), "{stderr}");
    assert_eq!(h.server.requests().len(), 1);
}

/// `--max-thinking-tokens` is Claude Code's flag: it wins over `MAX_THINKING_TOKENS` and
/// `alwaysThinkingEnabled`, 0 turns thinking off, and a budget the API would refuse is a
/// usage error naming the flag.
#[test]
fn the_thinking_flag_wins_over_the_variable_and_the_setting() {
    let h = Harness::new();
    let thinking = |h: &Harness, extra: &[&str], n: usize| -> Option<Value> {
        h.server.push(Reply::text("Thought."));
        let (code, _, stderr) = run(h
            .command()
            .env("MAX_THINKING_TOKENS", "4096")
            .args(extra)
            .args(["-p", "go"]));
        assert_eq!(code, Some(0), "{extra:?}: {stderr}");
        h.server.wait_for_requests(n, WAIT)[n - 1]
            .body
            .get("thinking")
            .cloned()
    };
    assert_eq!(
        thinking(&h, &["--max-thinking-tokens", "8192"], 1),
        Some(json!({"type": "enabled", "budget_tokens": 8192}))
    );
    assert_eq!(
        thinking(&h, &[], 2),
        Some(json!({"type": "enabled", "budget_tokens": 4096}))
    );
    h.user_settings(json!({"alwaysThinkingEnabled": true}));
    assert_eq!(thinking(&h, &["--max-thinking-tokens", "0"], 3), None);

    let (code, _, stderr) = run(h
        .command()
        .args(["--max-thinking-tokens", "100", "-p", "go"]));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("'--max-thinking-tokens <TOKENS>'")
            && stderr.contains("at least 1024 (0 turns thinking off)"),
        "{stderr}"
    );
    assert_eq!(h.server.requests().len(), 3);
}

/// OpenAI's reasoning models get the run's thinking budget as `reasoning_effort`; a model
/// the registry does not mark so gets no such field, whatever the budget.
#[test]
fn openai_reasoning_models_get_a_reasoning_effort() {
    let h = Harness::new();
    // (model, flags, variables, the effort sent)
    type Case<'a> = (
        &'a str,
        &'a [&'a str],
        &'a [(&'a str, &'a str)],
        Option<&'a str>,
    );
    let cases: [Case; 5] = [
        (
            "openai/o3",
            &["--max-thinking-tokens", "4096"],
            &[],
            Some("low"),
        ),
        (
            "openai/o4-mini",
            &[],
            &[("MAX_THINKING_TOKENS", "16000")],
            Some("medium"),
        ),
        (
            "openai/gpt-5",
            &["--max-thinking-tokens", "31999"],
            &[],
            Some("high"),
        ),
        ("openai/o3", &[], &[], None),
        (
            "openai/gpt-4o",
            &["--max-thinking-tokens", "31999"],
            &[],
            None,
        ),
    ];
    for (n, (model, flags, variables, effort)) in cases.into_iter().enumerate() {
        h.server.push(Reply::text("Reasoned."));
        let mut command = h.command();
        without_anthropic(&mut command)
            .env_remove("MAX_THINKING_TOKENS")
            .env("OPENAI_API_KEY", "sk-openai-test")
            .env("OPENAI_BASE_URL", format!("{}/v1", h.server.url()))
            .envs(variables.iter().copied())
            .args(["--model", model])
            .args(flags)
            .args(["-p", "go"]);
        let (code, stdout, stderr) = run(&mut command);
        assert_eq!(code, Some(0), "{model}: {stderr}");
        assert_eq!(stdout, "Reasoned.\n");
        let body = &h.server.wait_for_requests(n + 1, WAIT)[n].body;
        assert_eq!(
            body.get("reasoning_effort"),
            effort.map(Value::from).as_ref(),
            "{model} {flags:?} {variables:?}"
        );
    }
}

/// On the Messages API a call written as text is read only for a model that is not Claude
/// (a gateway's): Claude calls its tools, and its answer that is only a call's JSON stays
/// the text it wrote.
#[test]
fn on_the_messages_api_only_a_model_that_is_not_claude_has_its_text_read_as_a_call() {
    let text = format!(
        "<tool_call>{}</tool_call>",
        json!({"name": "Read", "arguments": {"file_path": "a.txt"}})
    );
    for (model, read_as_call) in [("gateway-qwen3-coder", true), ("claude-sonnet-4-5", false)] {
        let h = Harness::new();
        std::fs::write(h.path("a.txt"), "alpha\n").unwrap();
        h.server.push(Reply::text(text.clone()));
        h.server.push(Reply::text("It says alpha."));
        let (code, stdout, stderr) =
            run(h
                .command()
                .args(["--model", model, "-p", "read a.txt", "--verbose"]));
        assert_eq!(code, Some(0), "{model}: {stderr}");
        let requests = h.server.requests();
        if read_as_call {
            assert_eq!(stdout, "It says alpha.\n", "{model}");
            assert_eq!(requests.len(), 2, "{model}");
            let results = Dialect::Anthropic.tool_results(&requests[1]);
            let call = &requests[1].body["messages"][1]["content"][0];
            assert_eq!(call["type"], json!("tool_use"), "{call}");
            assert_eq!(json!(results[0].0), call["id"]);
            assert!(results[0].1.contains("alpha"), "{results:?}");
        } else {
            assert_eq!(stdout, format!("{text}\n"), "{model}");
            assert_eq!(requests.len(), 1, "{model}");
            assert!(!stderr.contains("read from text"), "{stderr}");
        }
    }
}
