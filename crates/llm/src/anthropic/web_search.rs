//! Anthropic's server-side web search: a side request offering the `web_search_20250305`
//! server tool. The API runs the searches itself; the answer streams as usual, with
//! `server_tool_use` and `web_search_tool_result` blocks between the text, from which the
//! results' titles and URLs are taken.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_protocol::{ContentBlock, Message, Role, SystemPrompt};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::config::AuthHeaders;
use super::stream::StreamDecoder;
use crate::side::{SearchHit, WebSearchAnswer, WebSearchRequest};
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
    hits: Arc<Mutex<Vec<SearchHit>>>,
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
        self.hits
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clear();
        Box::new(SearchDecoder {
            inner: StreamDecoder::new(),
            framer: SseFramer::new(),
            hits: Arc::clone(&self.hits),
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
    hits: Arc<Mutex<Vec<SearchHit>>>,
}

/// The results in a `content_block_start` event's data, if it opens a search result block.
fn hits_in(data: &str) -> Vec<SearchHit> {
    let Ok(event) = serde_json::from_str::<Value>(data) else {
        return Vec::new();
    };
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
        let hits = &self.hits;
        // A broken stream is the conversation decoder's to report.
        let _ = self.framer.feed(chunk, |event| {
            let found = hits_in(event.data);
            if !found.is_empty() {
                hits.lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .extend(found);
            }
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
    let hits = Arc::new(Mutex::new(Vec::new()));
    let dialect = SearchDialect {
        messages,
        search,
        hits: Arc::clone(&hits),
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
    let hits = std::mem::take(&mut *hits.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
    Ok(WebSearchAnswer {
        text,
        hits,
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
            hits_in(&data.to_string()),
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
        assert_eq!(hits_in(&text.to_string()), vec![]);
    }
}
