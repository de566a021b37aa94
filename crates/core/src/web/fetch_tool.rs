//! The `WebFetch` tool: fetches a page, turns it into Markdown, and answers the model's
//! question about it through a side request, so a whole page never enters the conversation.

use async_trait::async_trait;
use cairn_llm::SideModel;
use cairn_protocol::{ContentBlock, Message, Role, ToolSpec};
use cairn_tools::{
    CallContext, PrepareError, PreparedCall, Reach, Safety, ToolCall, ToolExecutor, ToolOutput,
};
use serde_json::{Value, json};

use super::cache::{CACHE_TTL, CachedPage, PageCache};
use super::fetch::{FetchError, FetchLimits, Fetched, Fetcher, HostRule, fetch_url};
use super::markdown::{cut_to_fit, is_text, page_markdown};

/// The tool's name, as Claude Code's rules and hooks name it.
pub const WEB_FETCH_TOOL: &str = "WebFetch";

/// How many tokens the side model's answer may take.
const ANSWER_TOKENS: u32 = 2048;

const SIDE_SYSTEM: &str = "You answer a question about one web page, from the page's content \
     alone, which follows as Markdown. Be concise and exact; quote briefly where the wording \
     matters and keep the page's links for what you cite. If the page does not say, answer so.";

/// What one call asks for.
struct FetchInput {
    url: String,
    prompt: String,
}

impl FetchInput {
    fn parse(input: &Value) -> Result<FetchInput, String> {
        let field = |name: &str| {
            input
                .get(name)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|text| !text.is_empty())
                .map(String::from)
                .ok_or_else(|| {
                    format!("WebFetch: `{name}` is required and must be a non-empty string.")
                })
        };
        let url = field("url")?;
        fetch_url(&url).map_err(|error| format!("WebFetch: {error}"))?;
        Ok(FetchInput {
            url,
            prompt: field("prompt")?,
        })
    }
}

/// `WebFetch {url, prompt}` over a [`Fetcher`] and a side model.
pub struct WebFetchTool {
    fetcher: Fetcher,
    side: SideModel,
    cache: PageCache,
}

impl std::fmt::Debug for WebFetchTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebFetchTool")
            .field("fetcher", &self.fetcher)
            .field("side", &self.side)
            .finish_non_exhaustive()
    }
}

impl WebFetchTool {
    /// The tool with Claude Code's caps (10 MB, 30 s) and a 15-minute cache; `names_host`
    /// opens closed addresses ([`super::gate_host_rule`]), `side` answers the prompt.
    pub fn new(names_host: HostRule, side: SideModel) -> WebFetchTool {
        WebFetchTool::with_limits(names_host, side, FetchLimits::default())
    }

    /// The tool within other `limits`.
    pub fn with_limits(names_host: HostRule, side: SideModel, limits: FetchLimits) -> WebFetchTool {
        WebFetchTool {
            fetcher: Fetcher::new(names_host, limits),
            side,
            cache: PageCache::new(CACHE_TTL),
        }
    }

    /// The page's Markdown, from the cache or fetched; `Err` is the call's result (a
    /// refusal, a failure, or a redirect to another host).
    async fn page(&self, asked: &str, cx: &CallContext) -> Result<CachedPage, ToolOutput> {
        let url = fetch_url(asked).map_err(|error| ToolOutput::error(error.to_string()))?;
        let key = url.to_string();
        if let Some(page) = self.cache.get(&key) {
            return Ok(page);
        }
        let page = match self.fetcher.fetch(url, &cx.cancel).await {
            Ok(Fetched::Page(page)) => page,
            Ok(Fetched::Redirect { from, to, status }) => {
                return Err(ToolOutput::text(format!(
                    "{from} redirects (HTTP {status}) to another host: {to}\n\
                     WebFetch does not follow a redirect to another host. To read it, call \
                     WebFetch again with url \"{to}\" and the same prompt."
                )));
            }
            Err(FetchError::Cancelled) => {
                return Err(ToolOutput::error("The user interrupted the fetch."));
            }
            Err(error) => return Err(ToolOutput::error(error.to_string())),
        };
        if !is_text(&page.content_type) {
            return Err(ToolOutput::error(format!(
                "{} is {}, not a text page WebFetch can read.",
                page.url, page.content_type
            )));
        }
        let url = page.url.to_string();
        let markdown = tokio::task::spawn_blocking(move || page_markdown(&page))
            .await
            .map_err(|error| ToolOutput::error(format!("converting {url} failed: {error}")))?
            .map_err(ToolOutput::error)?;
        let page = CachedPage {
            url: url.clone(),
            markdown,
        };
        self.cache.put(&key, page.clone());
        Ok(page)
    }

    async fn run(&self, input: FetchInput, cx: &CallContext) -> ToolOutput {
        let page = match self.page(&input.url, cx).await {
            Ok(page) => page,
            Err(output) => return output,
        };
        let question = format!(
            "Web page content ({}):\n---\n{}\n---\n\n{}",
            page.url,
            cut_to_fit(&page.markdown),
            input.prompt
        );
        let messages = vec![Message {
            role: Role::User,
            content: vec![ContentBlock::text(question)],
        }];
        match self
            .side
            .ask(SIDE_SYSTEM, messages, ANSWER_TOKENS, &cx.cancel)
            .await
        {
            Ok(answer) if answer.text.trim().is_empty() => ToolOutput::error(format!(
                "WebFetch read {} but the model gave no answer about it.",
                page.url
            )),
            Ok(answer) => ToolOutput::text(answer.text),
            Err(error) => ToolOutput::error(format!(
                "WebFetch read {} but could not ask about it: {error}",
                page.url
            )),
        }
    }
}

/// Whether the model's `name` means this tool, in any case or spelling (`web_fetch`).
fn names_web_fetch(name: &str) -> bool {
    cairn_tools::canonical_spelling(name) == "webfetch"
}

#[async_trait]
impl ToolExecutor for WebFetchTool {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: WEB_FETCH_TOOL.to_string(),
            description: "Fetches a web page and answers a question about it: the page is \
                          turned into Markdown and a small model answers `prompt` from it, so \
                          say exactly what you want to know. http URLs are upgraded to https. \
                          A redirect to another host is reported, not followed: fetch the new \
                          URL if you want it. Pages are cached for 15 minutes. Read-only; it \
                          does not reach private or local addresses unless a rule names them."
                .to_string(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "url": {
                        "type": "string",
                        "format": "uri",
                        "description": "The URL to fetch."
                    },
                    "prompt": {
                        "type": "string",
                        "description": "What to find out from the page."
                    }
                },
                "required": ["url", "prompt"],
                "additionalProperties": false
            }),
        }]
    }

    fn serves(&self, name: &str) -> bool {
        name == WEB_FETCH_TOOL
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        self.try_prepare(call).map_err(PrepareError::into_output)
    }

    fn try_prepare(&self, call: &ToolCall) -> Result<PreparedCall, PrepareError> {
        if !names_web_fetch(&call.name) {
            return Err(PrepareError::UnknownTool {
                name: call.name.clone(),
                available: vec![WEB_FETCH_TOOL.to_string()],
            });
        }
        FetchInput::parse(&call.input).map_err(|message| PrepareError::RejectedInput {
            tool: WEB_FETCH_TOOL.to_string(),
            message,
        })?;
        Ok(PreparedCall {
            id: call.id.clone(),
            name: WEB_FETCH_TOOL.to_string(),
            input: call.input.clone(),
            // Nothing on this machine changes; the network reach is what the gate asks about.
            safety: Safety::READ_ONLY,
            paths: Vec::new(),
        })
    }

    fn reach(&self, _call: &PreparedCall) -> Reach {
        Reach::OpenWorld
    }

    async fn execute(&self, call: &PreparedCall, cx: &CallContext) -> ToolOutput {
        match FetchInput::parse(&call.input) {
            Ok(input) => self.run(input, cx).await,
            Err(message) => ToolOutput::error(message),
        }
    }
}
