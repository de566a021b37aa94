//! Anthropic's server-side web search: a side request offering the `web_search_20250305`
//! server tool. The API runs the searches itself; the answer streams as usual, with
//! `server_tool_use` and `web_search_tool_result` blocks between the text, from which the
//! results' titles and URLs are taken, with the passages the answer cites (`citations_delta`)
//! and the number of searches the API ran (`usage.server_tool_use.web_search_requests`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_protocol::{ContentBlock, Message, Role, SystemPrompt};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::config::AuthHeaders;
use super::stream::StreamDecoder;
use crate::side::{Citation, SearchHit, WebSearchAnswer, WebSearchRequest};
use crate::sse::{SseError, SseFramer};
use crate::transport::{Dialect, StreamDecode, Transport};
use crate::{ModelError, ModelEvent, ModelRequest, ModelResponse, ProviderVariables};

/// The server tool's type, as the API names its version.
pub const WEB_SEARCH_TOOL_TYPE: &str = "web_search_20250305";

const SEARCH_SYSTEM: &str = "You search the web to answer the user's query. Search, then \
     answer concisely from the results, citing each source you use as a Markdown link.";

/// The Messages dialect with the search tool added and its results collected.
struct SearchDialect<'a> {
    messages: &'a dyn Dialect,
    search: &'a WebSearchRequest,
    found: Arc<Mutex<Found>>,
}

/// What the second reading of the stream found.
#[derive(Debug, Default, PartialEq)]
struct Found {
    hits: Vec<SearchHit>,
    citations: Vec<Citation>,
    /// The searches the API reports it ran (the latest count it gave).
    web_search_requests: u64,
}

impl Found {
    /// Takes what one event's data says.
    fn read(&mut self, data: &str) {
        let Ok(event) = serde_json::from_str::<Value>(data) else {
            return;
        };
        self.hits.extend(hits_in(&event));
        match event["type"].as_str() {
            Some("content_block_start") => {
                let block = &event["content_block"];
                if let Some(citations) = block["citations"].as_array() {
                    self.citations.extend(citations.iter().filter_map(citation));
                }
            }
            Some("content_block_delta") if event["delta"]["type"] == "citations_delta" => {
                self.citations.extend(citation(&event["delta"]["citation"]));
            }
            _ => {}
        }
        let usage = match event["type"].as_str() {
            Some("message_start") => &event["message"]["usage"],
            _ => &event["usage"],
        };
        if let Some(searches) = usage["server_tool_use"]["web_search_requests"].as_u64() {
            self.web_search_requests = searches;
        }
    }
}

/// A citation of a search result, as the API gives it on a text block.
fn citation(value: &Value) -> Option<Citation> {
    if value["type"] != "web_search_result_location" {
        return None;
    }
    Some(Citation {
        url: value["url"].as_str()?.to_string(),
        title: value["title"].as_str().unwrap_or_default().to_string(),
        cited_text: value["cited_text"].as_str().unwrap_or_default().to_string(),
    })
}

/// The server tool's definition for `search`.
pub fn web_search_tool(search: &WebSearchRequest) -> Value {
    let mut tool = json!({
        "type": WEB_SEARCH_TOOL_TYPE,
        "name": "web_search",
        "max_uses": search.max_uses,
    });
    // The API takes one list or the other, never both.
    if !search.allowed_domains.is_empty() {
        tool["allowed_domains"] = json!(search.allowed_domains);
    } else if !search.blocked_domains.is_empty() {
        tool["blocked_domains"] = json!(search.blocked_domains);
    }
    tool
}

impl Dialect for SearchDialect<'_> {
    fn body(&self, request: &ModelRequest) -> Result<Vec<u8>, ModelError> {
        let body = self.messages.body(request)?;
        let mut body: Value =
            serde_json::from_slice(&body).map_err(|error| ModelError::InvalidRequest {
                message: format!("could not encode the search request: {error}"),
            })?;
        body["tools"] = json!([web_search_tool(self.search)]);
        serde_json::to_vec(&body).map_err(|error| ModelError::InvalidRequest {
            message: format!("could not encode the search request: {error}"),
        })
    }

    fn headers(&self, request: &ModelRequest, headers: &mut HeaderMap) {
        self.messages.headers(request, headers);
    }

    fn source_headers(&self, key: &str, setting: &'static str) -> Result<AuthHeaders, ModelError> {
        self.messages.source_headers(key, setting)
    }

    fn decoder(&self, _request: &ModelRequest) -> Box<dyn StreamDecode> {
        // A retried attempt starts its results over.
        *self
            .found
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Found::default();
        Box::new(SearchDecoder {
            inner: StreamDecoder::new(),
            framer: SseFramer::new(),
            found: Arc::clone(&self.found),
        })
    }

    fn reads_calls_in_text(&self, _request: &ModelRequest) -> bool {
        false
    }

    fn classify(
        &self,
        status: u16,
        body: &[u8],
        retry_after: Option<Duration>,
        variables: ProviderVariables,
        model: &str,
    ) -> ModelError {
        self.messages
            .classify(status, body, retry_after, variables, model)
    }
}

/// The Messages decoder, beside a second reading of the events for the search results
/// (which the conversation's decoder skips as blocks it does not keep).
struct SearchDecoder {
    inner: StreamDecoder,
    framer: SseFramer,
    found: Arc<Mutex<Found>>,
}

/// The results in a `content_block_start` event, if it opens a search result block.
fn hits_in(event: &Value) -> Vec<SearchHit> {
    let block = &event["content_block"];
    if event["type"] != "content_block_start" || block["type"] != "web_search_tool_result" {
        return Vec::new();
    }
    block["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|result| result["type"] == "web_search_result")
        .filter_map(|result| {
            Some(SearchHit {
                title: result["title"].as_str().unwrap_or_default().to_string(),
                url: result["url"].as_str()?.to_string(),
            })
        })
        .collect()
}

impl StreamDecode for SearchDecoder {
    fn push(
        &mut self,
        chunk: &[u8],
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<(), ModelError> {
        let found = &self.found;
        // A broken stream is the conversation decoder's to report.
        let _ = self.framer.feed(chunk, |event| {
            found
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .read(event.data);
            Ok::<(), SseError>(())
        });
        self.inner.push(chunk, on_event)
    }

    fn is_complete(&self) -> bool {
        self.inner.is_complete()
    }

    fn finish(
        self: Box<Self>,
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<ModelResponse, ModelError> {
        self.inner.finish(on_event)
    }
}

/// Runs `search` over `transport` in the `messages` dialect with the search tool added.
pub(super) async fn search_web(
    transport: &Transport,
    messages: &dyn Dialect,
    search: &WebSearchRequest,
    cancel: &CancellationToken,
) -> Result<WebSearchAnswer, ModelError> {
    let found = Arc::new(Mutex::new(Found::default()));
    let dialect = SearchDialect {
        messages,
        search,
        found: Arc::clone(&found),
    };
    let request = ModelRequest {
        model: search.model.clone(),
        system: SystemPrompt {
            static_part: SEARCH_SYSTEM.to_string(),
            dynamic_part: String::new(),
        },
        messages: vec![Message {
            role: Role::User,
            content: vec![ContentBlock::text(format!(
                "Perform a web search for the query: {}",
                search.query
            ))],
        }],
        tools: Vec::new(),
        max_tokens: search.max_tokens,
        text_only: true,
        stable_prefix: None,
    };
    let response = transport
        .stream(&dialect, &request, &mut |_| {}, cancel)
        .await?;
    let text = Message {
        role: Role::Assistant,
        content: response.content,
    }
    .text();
    let found = std::mem::take(
        &mut *found
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()),
    );
    Ok(WebSearchAnswer {
        text,
        hits: found.hits,
        citations: found.citations,
        web_search_requests: found.web_search_requests,
        model: response.model,
        usage: response.usage,
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn search(allowed: &[&str], blocked: &[&str]) -> WebSearchRequest {
        WebSearchRequest {
            model: "claude-haiku-4-5".into(),
            query: "rust".into(),
            allowed_domains: allowed.iter().map(|d| d.to_string()).collect(),
            blocked_domains: blocked.iter().map(|d| d.to_string()).collect(),
            max_uses: 5,
            max_tokens: 1000,
        }
    }

    #[test]
    fn the_tool_carries_one_domain_list() {
        assert_eq!(
            web_search_tool(&search(&["docs.rs"], &["example.com"])),
            json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5,
                   "allowed_domains": ["docs.rs"]})
        );
        assert_eq!(
            web_search_tool(&search(&[], &["example.com"])),
            json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5,
                   "blocked_domains": ["example.com"]})
        );
    }

    #[test]
    fn results_are_read_from_the_result_block() {
        let data = json!({"type": "content_block_start", "index": 1, "content_block": {
        "type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
            {"type": "web_search_result", "title": "Rust", "url": "https://www.rust-lang.org/",
             "encrypted_content": "x"},
            {"type": "web_search_result", "title": "Docs", "url": "https://doc.rust-lang.org/"}
        ]}});
        assert_eq!(
            hits_in(&data),
            vec![
                SearchHit {
                    title: "Rust".into(),
                    url: "https://www.rust-lang.org/".into()
                },
                SearchHit {
                    title: "Docs".into(),
                    url: "https://doc.rust-lang.org/".into()
                },
            ]
        );
        let text = json!({"type": "content_block_start", "index": 0,
                          "content_block": {"type": "text", "text": ""}});
        assert_eq!(hits_in(&text), vec![]);
    }

    #[test]
    fn citations_and_the_search_count_are_read_from_the_stream() {
        let mut found = Found::default();
        let events = [
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 10,
                   "server_tool_use": {"web_search_requests": 0}}}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {
                   "type": "citations_delta", "citation": {
                   "type": "web_search_result_location", "url": "https://www.rust-lang.org/",
                   "title": "Rust", "cited_text": "Rust 1.90 is out.",
                   "encrypted_index": "x"}}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {
                   "type": "text_delta", "text": "It is out."}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                   "usage": {"output_tokens": 20, "server_tool_use": {"web_search_requests": 2}}}),
        ];
        for event in events {
            found.read(&event.to_string());
        }
        assert_eq!(
            found,
            Found {
                hits: Vec::new(),
                citations: vec![Citation {
                    url: "https://www.rust-lang.org/".into(),
                    title: "Rust".into(),
                    cited_text: "Rust 1.90 is out.".into(),
                }],
                web_search_requests: 2,
            }
        );
    }
}
