//! A model the registry does not know: its window is asked of the server in the background
//! while the first request goes out, and read where each kind of server says it.

#![allow(clippy::unwrap_used, reason = "tests")]

use std::time::Duration;

use cairn_llm::{ModelClient, ModelRequest, OpenAiClient, OpenAiConfig, ProviderVariables};
use cairn_protocol::{Message, SystemPrompt};
use cairn_test_support::{Reply, ScriptedServer};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const VARIABLES: ProviderVariables = ProviderVariables {
    credential: "VLLM_API_KEY",
    base_url: "VLLM_BASE_URL",
};

fn request(model: &str) -> ModelRequest {
    ModelRequest {
        model: model.to_owned(),
        system: SystemPrompt::default(),
        messages: vec![Message::user_text("hi")],
        tools: vec![],
        max_tokens: 64,
        text_only: false,
        stable_prefix: None,
    }
}

/// The window `model` gets from a server that answers `facts`, after one request.
async fn window_after_one_request(
    model: &str,
    facts: &[(&str, serde_json::Value)],
) -> (u64, Vec<String>) {
    let server = ScriptedServer::start();
    for (path, body) in facts {
        server.answer_model_facts(path, body.clone());
    }
    server.push(Reply::text("ok"));
    let client = OpenAiClient::new(OpenAiConfig::new(
        format!("{}/v1", server.url()),
        None,
        VARIABLES,
    ))
    .unwrap();
    let sent = client
        .stream(&request(model), &mut |_| {}, &CancellationToken::new())
        .await;
    assert!(sent.is_ok(), "{sent:?}");
    client.reported_window(model, Duration::from_secs(10)).await;
    let asked = server
        .fact_requests()
        .iter()
        .map(|request| format!("{} {}", request.method, request.path))
        .collect();
    (client.model_info(model).context_window.unwrap(), asked)
}

#[tokio::test]
async fn each_kind_of_server_reports_the_window_in_its_own_place() {
    let vllm = window_after_one_request(
        "qwen",
        &[(
            "/v1/models",
            json!({"data": [{"id": "qwen", "max_model_len": 32_768}]}),
        )],
    )
    .await;
    assert_eq!(vllm, (32_768, vec!["GET /v1/models".to_owned()]));

    let openrouter = window_after_one_request(
        "deepseek/deepseek-r1-distill",
        &[(
            "/v1/models",
            json!({"data": [{"id": "other", "context_length": 1}, {"id": "deepseek/deepseek-r1-distill", "context_length": 163_840}]}),
        )],
    )
    .await;
    assert_eq!(openrouter.0, 163_840);

    let llama_cpp = window_after_one_request(
        "gemma",
        &[
            (
                "/v1/models",
                json!({"data": [{"id": "/models/gemma.gguf", "meta": {"n_ctx_train": 32_768}}]}),
            ),
            (
                "/props",
                json!({"default_generation_settings": {"n_ctx": 4096}}),
            ),
        ],
    )
    .await;
    assert_eq!(
        llama_cpp,
        (
            4096,
            vec!["GET /v1/models".to_owned(), "GET /props".to_owned()]
        )
    );

    let ollama = window_after_one_request(
        "llama3.2",
        &[
            ("/v1/models", json!({"data": [{"id": "llama3.2"}, {"id": "qwen3"}]})),
            ("/api/show", json!({"model_info": {"general.architecture": "llama", "llama.context_length": 131_072}})),
        ],
    )
    .await;
    assert_eq!(
        ollama,
        (
            131_072,
            vec![
                "GET /v1/models".to_owned(),
                "GET /props".to_owned(),
                "POST /api/show".to_owned()
            ]
        )
    );

    // A server that says nothing leaves the default, 128K.
    let silent = window_after_one_request("mystery", &[]).await;
    assert_eq!(silent.0, 128_000);
    // A model the registry knows is not asked about.
    let known = window_after_one_request("gpt-4o", &[]).await;
    assert_eq!(known, (128_000, Vec::new()));
}

/// The first request does not wait for the lookup: with a server slow to say the window,
/// the answer is in while the window is still the default, and the server's figure counts
/// once it has come.
#[tokio::test]
async fn the_first_request_goes_out_before_the_window_is_known() {
    let server = ScriptedServer::start();
    server.answer_model_facts(
        "/v1/models",
        json!({"data": [{"id": "qwen", "max_model_len": 8192}]}),
    );
    server.delay_model_facts(Duration::from_secs(8));
    server.push(Reply::text("ok"));
    let client = OpenAiClient::new(OpenAiConfig::new(
        format!("{}/v1", server.url()),
        None,
        VARIABLES,
    ))
    .unwrap();
    assert_eq!(client.model_info("qwen").context_window, Some(128_000));
    let sent = client
        .stream(&request("qwen"), &mut |_| {}, &CancellationToken::new())
        .await;
    assert!(sent.is_ok(), "{sent:?}");
    assert_eq!(server.requests().len(), 1);
    assert_eq!(client.model_info("qwen").context_window, Some(128_000));
    assert_eq!(
        client
            .reported_window("qwen", Duration::from_secs(30))
            .await,
        Some(8192)
    );
    assert_eq!(client.model_info("qwen").context_window, Some(8192));
}
