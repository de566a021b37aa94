//! The `WebSearch` tool: the provider's server-side search in a side request, its results
//! listed with their URLs before the answer that cites them, and the passages it cites
//! quoted after it.

use async_trait::async_trait;
use cairn_llm::{Citation, SideModel, WebSearchAnswer};
use cairn_protocol::ToolSpec;
use cairn_tools::{
    CallContext, PrepareError, PreparedCall, Reach, Safety, ToolCall, ToolExecutor, ToolOutput,
};
use serde_json::{Value, json};

/// The tool's name, as Claude Code's rules and hooks name it.
pub const WEB_SEARCH_TOOL: &str = "WebSearch";

/// What one call asks for.
struct SearchInput {
    query: String,
    allowed_domains: Vec<String>,
    blocked_domains: Vec<String>,
}

impl SearchInput {
    fn parse(input: &Value) -> Result<SearchInput, String> {
        let query = input
            .get("query")
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or_default();
        if query.chars().count() < 2 {
            return Err(
                "WebSearch: `query` is required and must be at least 2 characters.".to_string(),
            );
        }
        let domains = |name: &str| -> Result<Vec<String>, String> {
            match input.get(name) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| {
                        item.as_str()
                            .map(|domain| domain.trim().to_string())
                            .ok_or_else(|| {
                                format!("WebSearch: `{name}` must list domains as strings.")
                            })
                    })
                    .collect(),
                Some(_) => Err(format!("WebSearch: `{name}` must be a list of domains.")),
            }
        };
        let allowed_domains = domains("allowed_domains")?;
        let blocked_domains = domains("blocked_domains")?;
        if !allowed_domains.is_empty() && !blocked_domains.is_empty() {
            return Err(
                "WebSearch: give `allowed_domains` or `blocked_domains`, not both.".to_string(),
            );
        }
        Ok(SearchInput {
            query: query.to_string(),
            allowed_domains,
            blocked_domains,
        })
    }
}

/// `WebSearch {query, allowed_domains?, blocked_domains?}` over the side model's provider.
#[derive(Debug)]
pub struct WebSearchTool {
    side: SideModel,
}

impl WebSearchTool {
    /// The tool searching through `side`'s provider; offer it only where
    /// [`SideModel::offers_web_search`] holds (elsewhere every call is refused, saying why).
    pub fn new(side: SideModel) -> WebSearchTool {
        WebSearchTool { side }
    }
}

/// The result the model reads: the query, the links found, the answer, then the passages the
/// answer cites, quoted with their sources (each once).
fn search_result(query: &str, answer: &WebSearchAnswer) -> String {
    let mut text = format!("Web search results for query: \"{query}\"\n\n");
    if answer.hits.is_empty() {
        text.push_str("No links were found.\n");
    } else {
        text.push_str("Links:\n");
        for hit in &answer.hits {
            let title = if hit.title.is_empty() {
                hit.url.as_str()
            } else {
                hit.title.as_str()
            };
            text.push_str(&format!("- [{title}]({})\n", hit.url));
        }
    }
    let answer_text = answer.text.trim();
    if !answer_text.is_empty() {
        text.push('\n');
        text.push_str(answer_text);
        text.push('\n');
    }
    let mut quoted: Vec<&Citation> = Vec::new();
    for citation in &answer.citations {
        if !citation.cited_text.trim().is_empty() && !quoted.contains(&citation) {
            quoted.push(citation);
        }
    }
    if !quoted.is_empty() {
        text.push_str("\nQuoted from the results:\n");
        for citation in quoted {
            let title = if citation.title.is_empty() {
                citation.url.as_str()
            } else {
                citation.title.as_str()
            };
            text.push_str(&format!(
                "- \"{}\" ([{title}]({}))\n",
                one_line(&citation.cited_text),
                citation.url
            ));
        }
    }
    text.push_str("\nCite the sources you use from these results as Markdown links.");
    text
}

/// `text` on one line, its whitespace collapsed.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether the model's `name` means this tool, in any case or spelling (`web_search`).
fn names_web_search(name: &str) -> bool {
    cairn_tools::canonical_spelling(name) == "websearch"
}

#[async_trait]
impl ToolExecutor for WebSearchTool {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: WEB_SEARCH_TOOL.to_string(),
            description: "Searches the web and answers from the results, with their links: \
                          for anything newer than your knowledge or that you must check. Cite \
                          the sources you use as Markdown links. Restrict it to some domains \
                          with `allowed_domains`, or leave some out with `blocked_domains`."
                .to_string(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "minLength": 2,
                        "description": "The search query."
                    },
                    "allowed_domains": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Only results from these domains."
                    },
                    "blocked_domains": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Never results from these domains."
                    }
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        }]
    }

    fn serves(&self, name: &str) -> bool {
        name == WEB_SEARCH_TOOL
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        self.try_prepare(call).map_err(PrepareError::into_output)
    }

    fn try_prepare(&self, call: &ToolCall) -> Result<PreparedCall, PrepareError> {
        if !names_web_search(&call.name) {
            return Err(PrepareError::UnknownTool {
                name: call.name.clone(),
                available: vec![WEB_SEARCH_TOOL.to_string()],
            });
        }
        SearchInput::parse(&call.input).map_err(|message| PrepareError::RejectedInput {
            tool: WEB_SEARCH_TOOL.to_string(),
            message,
        })?;
        Ok(PreparedCall {
            id: call.id.clone(),
            name: WEB_SEARCH_TOOL.to_string(),
            input: call.input.clone(),
            safety: Safety::READ_ONLY,
            paths: Vec::new(),
        })
    }

    fn reach(&self, _call: &PreparedCall) -> Reach {
        Reach::OpenWorld
    }

    async fn execute(&self, call: &PreparedCall, cx: &CallContext) -> ToolOutput {
        let input = match SearchInput::parse(&call.input) {
            Ok(input) => input,
            Err(message) => return ToolOutput::error(message),
        };
        match self
            .side
            .search_web(
                &input.query,
                input.allowed_domains,
                input.blocked_domains,
                &cx.cancel,
            )
            .await
        {
            Ok(answer) => ToolOutput::text(search_result(&input.query, &answer)),
            Err(error) => ToolOutput::error(format!("WebSearch failed: {error}")),
        }
    }
}

/// Where the provider has no server-side search: `WebSearch` is not offered, and a call to
/// it anyway (a model that knows the tool from elsewhere, or a `/model` switch after the
/// tools were listed) is told why, not that no such tool exists.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebSearchUnavailable;

/// What a call to `WebSearch` hears where the provider cannot search.
const UNAVAILABLE: &str = "this model's provider has no server-side web search (only the \
                           Anthropic API offers one to cairn). Use WebFetch on a URL you know \
                           instead, or ask the user for one.";

#[async_trait]
impl ToolExecutor for WebSearchUnavailable {
    fn specs(&self) -> Vec<ToolSpec> {
        Vec::new()
    }

    fn serves(&self, _name: &str) -> bool {
        false
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        self.try_prepare(call).map_err(PrepareError::into_output)
    }

    fn try_prepare(&self, call: &ToolCall) -> Result<PreparedCall, PrepareError> {
        if names_web_search(&call.name) {
            Err(PrepareError::Unavailable {
                tool: WEB_SEARCH_TOOL.to_owned(),
                why: UNAVAILABLE.to_owned(),
            })
        } else {
            Err(PrepareError::UnknownTool {
                name: call.name.clone(),
                available: Vec::new(),
            })
        }
    }

    async fn execute(&self, call: &PreparedCall, _cx: &CallContext) -> ToolOutput {
        ToolOutput::error(format!(
            "{} is not available in this session: {UNAVAILABLE}",
            call.name
        ))
    }
}

#[cfg(test)]
mod tests {
    use cairn_llm::SearchHit;
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn the_result_lists_the_links_before_the_answer() {
        let answer = WebSearchAnswer {
            text: "Rust 1.90 is out ([Rust](https://www.rust-lang.org/)).".into(),
            hits: vec![SearchHit {
                title: "Rust".into(),
                url: "https://www.rust-lang.org/".into(),
            }],
            citations: vec![
                Citation {
                    url: "https://www.rust-lang.org/".into(),
                    title: "Rust".into(),
                    cited_text: "Rust 1.90\n is out.".into(),
                };
                2
            ],
            web_search_requests: 1,
            model: "claude-haiku-4-5".into(),
            usage: Default::default(),
        };
        assert_eq!(
            search_result("rust release", &answer),
            "Web search results for query: \"rust release\"\n\nLinks:\n\
             - [Rust](https://www.rust-lang.org/)\n\nRust 1.90 is out \
             ([Rust](https://www.rust-lang.org/)).\n\nQuoted from the results:\n\
             - \"Rust 1.90 is out.\" ([Rust](https://www.rust-lang.org/))\n\nCite the \
             sources you use from these results as Markdown links."
        );
    }

    #[test]
    fn bad_input_is_refused_naming_the_field() {
        let refused = |input: Value| SearchInput::parse(&input).err();
        assert_eq!(
            refused(json!({"query": "x"})),
            Some("WebSearch: `query` is required and must be at least 2 characters.".into())
        );
        assert_eq!(
            refused(
                json!({"query": "rust", "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]})
            ),
            Some("WebSearch: give `allowed_domains` or `blocked_domains`, not both.".into())
        );
        assert_eq!(
            refused(json!({"query": "rust", "blocked_domains": "b.com"})),
            Some("WebSearch: `blocked_domains` must be a list of domains.".into())
        );
    }
}
