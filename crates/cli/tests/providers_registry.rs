//! The model registry as a run sees it, through the real binary: the settings' overrides of
//! a provider's models (`providers.<name>.models`), checked at load with the file and the
//! field named; and the window of a model neither knows, asked of the server it runs on.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::terminal::Terminal;
use support::{Harness, WAIT};

mod dialect;
use dialect::{run, tool_use, without_anthropic};

/// `cairn --model ollama/llama3.2 -p hi --output-format json` against `h`'s server.
fn ollama_json(h: &Harness) -> (Option<i32>, String, String) {
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
    run(&mut command)
}

/// The settings give an unknown model a window, an output ceiling and prices: its cost is
/// known, its output cap is the ceiling, and the result says both.
#[test]
fn overrides_make_an_unknown_models_cost_and_window_known() {
    let h = Harness::new();
    h.user_settings(json!({"providers": {"ollama": {"models": {"llama3.2": {
        "contextWindow": 32_768,
        "maxOutputTokens": 4096,
        "inputPrice": 1.0,
        "outputPrice": 2.0,
    }}}}}));
    h.server
        .push(Reply::text("Priced.").with_usage(1_000_000, 500_000));
    let (code, stdout, stderr) = ollama_json(&h);
    assert_eq!(code, Some(0), "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    // A million input tokens at $1 and half a million output tokens at $2.
    let cost = result["total_cost_usd"].as_f64().unwrap_or(f64::NAN);
    assert!((cost - 2.0).abs() < 1e-9, "{result}");
    let usage = &result["modelUsage"]["llama3.2"];
    assert_eq!(usage["contextWindow"], json!(32_768), "{result}");
    assert_eq!(usage["maxOutputTokens"], json!(4096), "{result}");
    assert_eq!(
        usage["costUSD"]
            .as_f64()
            .map(|usd| (usd - 2.0).abs() < 1e-9),
        Some(true)
    );
    let request = &h.server.wait_for_requests(1, WAIT)[0];
    assert_eq!(request.body["max_tokens"], json!(4096));
    // Nothing was asked of the server: the settings gave the window.
    assert_eq!(h.server.fact_requests(), Vec::new());
}

/// A misspelt field, or a price below zero, stops the run before anything is sent, naming
/// the file and the field.
#[test]
fn a_bad_override_names_the_file_and_the_field() {
    for (entry, field, complaint) in [
        (
            json!({"contextWindw": 8192}),
            "providers.ollama.models.llama3.2",
            "unknown field `contextWindw`",
        ),
        (
            json!({"inputPrice": -1}),
            "providers.ollama.models.llama3.2.inputPrice",
            "0 or more",
        ),
        (
            json!({"contextWindow": 0}),
            "providers.ollama.models.llama3.2.contextWindow",
            "nonzero",
        ),
    ] {
        let h = Harness::new();
        h.user_settings(json!({"providers": {"ollama": {"models": {"llama3.2": entry}}}}));
        let (code, _, stderr) = ollama_json(&h);
        assert_ne!(code, Some(0), "{stderr}");
        let file = h.home.path().join(".claude/settings.json");
        for part in [file.display().to_string().as_str(), field, complaint] {
            assert!(stderr.contains(part), "{part:?} not in {stderr}");
        }
        assert_eq!(h.server.requests().len(), 0);
    }
}

/// A project's settings may say what its models cost and hold (no credential goes
/// anywhere by it): its overrides count without the user's approval.
#[test]
fn a_projects_overrides_count_too() {
    let h = Harness::new();
    h.settings(json!({"providers": {"ollama": {"models": {"llama3.2": {
        "inputPrice": 3.0,
        "outputPrice": 3.0,
    }}}}}));
    h.server
        .push(Reply::text("Priced.").with_usage(1_000_000, 0));
    let (code, stdout, stderr) = ollama_json(&h);
    assert_eq!(code, Some(0), "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    let cost = result["total_cost_usd"].as_f64().unwrap_or(f64::NAN);
    assert!((cost - 3.0).abs() < 1e-9, "{result}");
}

/// vLLM says the window of what it serves at `/v1/models`: the run asks while its first
/// request goes out, and what follows counts with the server's figure.
#[test]
fn an_unknown_models_window_is_asked_of_its_server() {
    let h = Harness::new();
    std::fs::write(h.path("a.txt"), "alpha\n").unwrap();
    h.server.answer_model_facts(
        "/v1/models",
        json!({"object": "list", "data": [{"id": "qwen3-coder", "object": "model", "max_model_len": 40_960}]}),
    );
    h.server.push(Reply::blocks(vec![tool_use(
        "call_1",
        "Read",
        json!({"file_path": "a.txt"}),
    )]));
    h.server.push(Reply::text("It says alpha."));
    let mut command = h.command();
    without_anthropic(&mut command)
        .env("VLLM_BASE_URL", format!("{}/v1", h.server.url()))
        .args(["--model", "vllm/qwen3-coder", "-p", "read a.txt"])
        .args(["--output-format", "json"]);
    let (code, stdout, stderr) = run(&mut command);
    assert_eq!(code, Some(0), "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["result"], json!("It says alpha."));
    assert_eq!(
        result["modelUsage"]["qwen3-coder"]["contextWindow"],
        json!(40_960),
        "{result}"
    );
    let asked: Vec<String> = h
        .server
        .fact_requests()
        .iter()
        .map(|request| format!("{} {}", request.method, request.path))
        .collect();
    assert_eq!(asked, ["GET /v1/models"], "asked once for the run");
    assert_eq!(h.server.requests().len(), 2);
}

/// Ollama says it in `/api/show`; its `/v1/models` lists no window and it has no `/props`.
#[test]
fn ollama_says_the_window_in_api_show() {
    let h = Harness::new();
    h.server.answer_model_facts(
        "/v1/models",
        json!({"object": "list", "data": [{"id": "llama3.2", "object": "model"}]}),
    );
    h.server.answer_model_facts(
        "/api/show",
        json!({"model_info": {"general.architecture": "llama", "llama.context_length": 131_072}}),
    );
    h.server.push(Reply::text("Local."));
    let (code, stdout, stderr) = ollama_json(&h);
    assert_eq!(code, Some(0), "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        result["modelUsage"]["llama3.2"]["contextWindow"],
        json!(131_072),
        "{result}"
    );
    let show = h
        .server
        .fact_requests()
        .into_iter()
        .find(|request| request.path == "/api/show")
        .unwrap();
    assert_eq!(show.body, json!({"model": "llama3.2"}));
}

/// The interactive UI's status line reads the window from the run's provider: the
/// settings' override for one model, the server's figure for another, the same as the
/// engine's.
#[test]
fn the_status_line_reads_the_window_from_the_provider() {
    let h = Harness::new();
    h.user_settings(json!({"providers": {"ollama": {"models": {"llama3.2": {
        "contextWindow": 10_000,
    }}}}}));
    h.server.answer_model_facts(
        "/v1/models",
        json!({"data": [{"id": "qwen3-coder", "max_model_len": 20_000}]}),
    );
    h.server
        .push(Reply::text("Local answer.").with_usage(5_000, 0));
    let term = Terminal::launch(&h)
        .env("OLLAMA_HOST", &h.server.url())
        .args(&["--model", "ollama/llama3.2"])
        .start();
    term.send_line("hi");
    term.wait_for("Local answer.");
    term.wait_for("50% context");
    term.press("C-d");
    assert_eq!(term.wait_for_exit(), 0);

    h.server
        .push(Reply::text("vLLM answer.").with_usage(5_000, 0));
    let term = Terminal::launch(&h)
        .env("VLLM_BASE_URL", &format!("{}/v1", h.server.url()))
        .args(&["--model", "vllm/qwen3-coder"])
        .start();
    term.send_line("hi");
    term.wait_for("vLLM answer.");
    term.wait_for("25% context");
}

/// `providers.anthropic.models` overrides Claude's entries (a negotiated price), and does
/// not make `anthropic/…` a provider prefix: a gateway's id stays the default provider's.
#[test]
fn claudes_models_are_overridden_under_anthropic() {
    let h = Harness::new();
    h.user_settings(
        json!({"providers": {"anthropic": {"models": {"claude-sonnet-4-5": {
            "inputPrice": 10.0,
            "outputPrice": 10.0,
        }}}}}),
    );
    h.server
        .push(Reply::text("Priced.").with_usage(1_000_000, 0));
    let (code, stdout, stderr) = run(h.command().args([
        "--model",
        "claude-sonnet-4-5",
        "-p",
        "hi",
        "--output-format",
        "json",
    ]));
    assert_eq!(code, Some(0), "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    // A million input tokens at $10 (and the one output token the answer counts).
    let cost = result["total_cost_usd"].as_f64().unwrap_or(f64::NAN);
    assert!((cost - 10.0).abs() < 1e-3, "{result}");

    // The gateway's id: the settings' entry is no provider of its own.
    h.server.push(Reply::text("Via the gateway."));
    let mut gateway = h.command();
    gateway.args(["-p", "hi", "--model", "anthropic/claude-sonnet-4-5"]);
    let (code, stdout, stderr) = run(&mut gateway);
    assert_eq!(
        (code, stdout.as_str()),
        (Some(0), "Via the gateway.\n"),
        "{stderr}"
    );
    let sent: Vec<(String, Value)> = h
        .server
        .wait_for_requests(2, WAIT)
        .iter()
        .map(|request| (request.path.clone(), request.body["model"].clone()))
        .collect();
    assert_eq!(
        sent[1],
        (
            "/v1/messages".to_owned(),
            json!("anthropic/claude-sonnet-4-5")
        )
    );
}
