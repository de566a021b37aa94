//! The model facts a compatible server answers besides its completions: the JSON of
//! `GET …/models` (vLLM, OpenRouter, llama.cpp), `GET /props` (llama.cpp) and
//! `POST /api/show` (Ollama), which a client asks for a model's window.
//!
//! These requests take no queued reply: a test says what each path answers
//! ([`ScriptedServer::answer_model_facts`](crate::ScriptedServer::answer_model_facts)); a path
//! it did not set answers 404, as a server that has no such endpoint does. They are recorded
//! apart from the completions ([`ScriptedServer::fact_requests`](crate::ScriptedServer::fact_requests)),
//! so a test counting its model requests does not count them.

use hyper::StatusCode;

/// Whether `path` is one of the model-fact endpoints rather than a completion.
pub(crate) fn is_fact_path(path: &str) -> bool {
    let path = path.trim_end_matches('/');
    path.ends_with("/models") || path == "/props" || path == "/api/show"
}

/// The status and JSON body of a fact request to `path`, from what the test set.
pub(crate) fn answer(facts: &[(String, serde_json::Value)], path: &str) -> (StatusCode, String) {
    let path = path.trim_end_matches('/');
    match facts.iter().find(|(fact_path, _)| fact_path == path) {
        Some((_, body)) => (StatusCode::OK, body.to_string()),
        None => (
            StatusCode::NOT_FOUND,
            serde_json::json!({"error": {"message": format!("no such endpoint: {path}")}})
                .to_string(),
        ),
    }
}
