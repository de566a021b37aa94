//! The window of a model the registry does not know, asked of the server that runs it.
//!
//! The first request for such a model starts one background lookup and goes out at once
//! with the default window (128K); once the server has answered, the model's
//! [`ModelInfo`](crate::ModelInfo) reports the server's figure. Each server says it in its
//! own place, and the lookup tries them in turn until one answers:
//!
//! - `GET {base}/models`: vLLM's `max_model_len`, OpenRouter's `context_length` (its
//!   `/api/v1/models`) for the entry whose `id` is the model;
//! - `GET {root}/props` (llama.cpp's server): `default_generation_settings.n_ctx`, the window
//!   it was started with;
//! - `POST {root}/api/show` with `{"model": …}` (Ollama): `model_info.<family>.context_length`;
//! - llama.cpp's `/v1/models` entry's `meta.n_ctx_train`, the window the model was trained
//!   with, when its server says nothing better.
//!
//! `{root}` is the base URL without its trailing `/v1`. A lookup that finds nothing (or
//! fails) leaves the default for the rest of the run; none is retried. Once the first answer
//! has streamed, the client gives a lookup still under way a moment more
//! ([`WindowProbes::settle`]) so that what the run reports of that answer (its window in the
//! result, the next request's compaction threshold) already has the server's figure.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::transport::AuthHeaders;

/// How long one question to the server may take.
const ASK_TIMEOUT: Duration = Duration::from_secs(10);

/// What is known of one model's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lookup {
    Asking,
    Found(u64),
    NotFound,
}

/// The lookups of one client, by the model's id as the server names it.
#[derive(Debug, Default, Clone)]
pub(super) struct WindowProbes {
    lookups: Arc<Mutex<HashMap<String, Lookup>>>,
    /// Notified each time a lookup ends.
    ended: Arc<tokio::sync::Notify>,
}

impl WindowProbes {
    /// The window the server reported for `model`, once it has.
    pub(super) fn window(&self, model: &str) -> Option<u64> {
        match self.lock().get(model) {
            Some(Lookup::Found(window)) => Some(*window),
            _ => None,
        }
    }

    /// Starts the lookup of `model`'s window on the runtime, unless one was started before.
    pub(super) fn start(
        &self,
        http: reqwest::Client,
        headers: AuthHeaders,
        base_url: &str,
        model: &str,
    ) {
        {
            let mut lookups = self.lock();
            if lookups.contains_key(model) {
                return;
            }
            lookups.insert(model.to_owned(), Lookup::Asking);
        }
        let (probes, base_url, model) = (self.clone(), base_url.to_owned(), model.to_owned());
        tokio::spawn(async move {
            let asker = Asker {
                http,
                headers,
                base_url,
            };
            let found = asker.window_of(&model).await;
            probes
                .lock()
                .insert(model, found.map_or(Lookup::NotFound, Lookup::Found));
            probes.ended.notify_waiters();
        });
    }

    /// Waits, for `limit` at most, until the lookup of `model` (if one is under way) ends;
    /// returns the window it found.
    pub(crate) async fn settle(&self, model: &str, limit: Duration) -> Option<u64> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let ended = self.ended.notified();
            tokio::pin!(ended);
            // Registered before the state is read, so an end in between is not missed.
            ended.as_mut().enable();
            match self.lock().get(model) {
                Some(Lookup::Asking) => {}
                Some(Lookup::Found(window)) => return Some(*window),
                Some(Lookup::NotFound) | None => return None,
            }
            if tokio::time::timeout_at(deadline, ended).await.is_err() {
                return None;
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Lookup>> {
        self.lookups
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Asks one server.
struct Asker {
    http: reqwest::Client,
    headers: AuthHeaders,
    base_url: String,
}

impl Asker {
    /// The first answer of the places the module documentation lists, in that order.
    async fn window_of(&self, model: &str) -> Option<u64> {
        let base = self.base_url.trim_end_matches('/');
        let root = base.strip_suffix("/v1").unwrap_or(base);
        let models = self.ask(format!("{base}/models"), None).await;
        let entry = models.as_ref().and_then(|list| model_entry(list, model));
        if let Some(window) = entry.and_then(|entry| {
            positive(&entry["max_model_len"]).or_else(|| positive(&entry["context_length"]))
        }) {
            return Some(window);
        }
        let props = self.ask(format!("{root}/props"), None).await;
        if let Some(window) = props
            .as_ref()
            .and_then(|props| positive(&props["default_generation_settings"]["n_ctx"]))
        {
            return Some(window);
        }
        let show = self
            .ask(
                format!("{root}/api/show"),
                Some(serde_json::json!({"model": model})),
            )
            .await;
        if let Some(window) = show.as_ref().and_then(ollama_window) {
            return Some(window);
        }
        entry.and_then(|entry| positive(&entry["meta"]["n_ctx_train"]))
    }

    /// The JSON a GET (or, with a body, a POST) of `url` answers with; `None` for any
    /// failure, a status other than 2xx, or a body that is not JSON.
    async fn ask(&self, url: String, body: Option<Value>) -> Option<Value> {
        let request = match body {
            Some(body) => self.http.post(url).json(&body),
            None => self.http.get(url),
        };
        let mut request = request.timeout(ASK_TIMEOUT);
        for (name, value) in &self.headers {
            request = request.header(name.clone(), value.clone());
        }
        let response = request.send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let bytes = response.bytes().await.ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

/// The entry of `model` in a `/models` list (`{"data": [{"id": …}, …]}`); a server that
/// lists one model only (llama.cpp's, which names it by its file) answers for it.
fn model_entry<'a>(list: &'a Value, model: &str) -> Option<&'a Value> {
    let data = list["data"].as_array()?;
    data.iter()
        .find(|entry| entry["id"].as_str() == Some(model))
        .or(match data.as_slice() {
            [only] => Some(only),
            _ => None,
        })
}

/// Ollama's `/api/show`: the `context_length` of the model's family in `model_info`
/// (`llama.context_length`, `qwen2.context_length`, …).
fn ollama_window(show: &Value) -> Option<u64> {
    show["model_info"]
        .as_object()?
        .iter()
        .find(|(key, _)| key.ends_with(".context_length"))
        .and_then(|(_, value)| positive(value))
}

fn positive(value: &Value) -> Option<u64> {
    value.as_u64().filter(|window| *window > 0)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn each_servers_answer_is_read_where_it_puts_it() {
        let list = json!({"data": [
            {"id": "qwen", "max_model_len": 32_768},
            {"id": "deepseek/deepseek-r1", "context_length": 163_840},
        ]});
        assert_eq!(
            model_entry(&list, "qwen").and_then(|entry| positive(&entry["max_model_len"])),
            Some(32_768)
        );
        assert_eq!(
            model_entry(&list, "deepseek/deepseek-r1")
                .and_then(|entry| positive(&entry["context_length"])),
            Some(163_840)
        );
        assert_eq!(model_entry(&list, "other"), None);
        let llama_cpp =
            json!({"data": [{"id": "/models/gemma.gguf", "meta": {"n_ctx_train": 8192}}]});
        assert_eq!(
            model_entry(&llama_cpp, "gemma").map(|entry| positive(&entry["meta"]["n_ctx_train"])),
            Some(Some(8192))
        );
        let show = json!({"model_info": {"general.architecture": "llama", "llama.context_length": 131_072}});
        assert_eq!(ollama_window(&show), Some(131_072));
        assert_eq!(ollama_window(&json!({"model_info": {}})), None);
        assert_eq!(positive(&json!(0)), None);
    }
}
