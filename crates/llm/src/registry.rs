//! The model registry: what cairn knows about a model, in one place.
//!
//! [`lookup`] answers for any model id: its window, its output ceiling, its prices (with the
//! cache multipliers) and its capabilities. Claude models come from [`models`]
//! and [`pricing`]; the models of OpenAI-compatible providers from the table
//! below. A provider reports a model's [`ModelInfo`] through
//! [`ModelClient::model_info`](crate::ModelClient::model_info), and the engine reads the
//! window and the cost from there, never from a table of its own.
//!
//! A model the registry does not know has no price: its cost is `None`, shown as unknown,
//! never as `$0`.

use cairn_protocol::Usage;

use crate::models;
use crate::pricing::{self, Price};

/// What a model can do besides text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// The model can be offered tools and call them through the API's own tool-call fields
    /// (`tool_use` blocks, `tool_calls`).
    pub tools: bool,
    /// The model reads images in a message (a screenshot, an image file the Read tool
    /// returns).
    pub images: bool,
    /// The provider caches prompt prefixes (with marks, or automatically).
    pub prompt_caching: bool,
    /// The model writes reasoning (thinking) before its answer.
    pub reasoning: bool,
    /// The model's reasoning must be sent back with its message on the next request (DeepSeek's
    /// thinking mode answers 400 when it is dropped between tool calls).
    pub reasoning_replay: bool,
    /// The model takes Chat Completions' `reasoning_effort` (OpenAI's reasoning models): the
    /// run's thinking budget is sent as a level ([`ReasoningEffort`](crate::thinking::ReasoningEffort)).
    pub reasoning_effort: bool,
    /// Tool-call ids must be 9 letters and digits (Mistral's models refuse any other): ids
    /// from elsewhere (another provider's, after `/model`) are rewritten on the way out.
    pub nine_char_tool_ids: bool,
}

impl Capabilities {
    /// What a model is assumed to do when nothing says otherwise: tools, no images, no
    /// reasoning to replay.
    pub const DEFAULT: Capabilities = Capabilities {
        tools: true,
        images: false,
        prompt_caching: false,
        reasoning: false,
        reasoning_replay: false,
        reasoning_effort: false,
        nine_char_tool_ids: false,
    };
}

/// What cairn knows about one model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    /// How many tokens the model reads at most; `None` when unknown.
    pub context_window: Option<u64>,
    /// How many tokens one answer may hold at most; `None` when unknown.
    pub max_output_tokens: Option<u32>,
    /// List prices; `None` when unknown, and then so is every cost.
    pub price: Option<Price>,
    /// What the model can do besides text; [`Capabilities::DEFAULT`] for a model the
    /// registry does not know.
    pub capabilities: Capabilities,
}

impl ModelInfo {
    /// The cost of `usage` in USD, or `None` when the model's prices are unknown.
    pub fn cost_usd(&self, usage: &Usage) -> Option<f64> {
        self.price.map(|price| price.cost_usd(usage))
    }
}

/// One entry of the table of non-Claude models: an id prefix and what it says.
struct Entry {
    prefix: &'static str,
    window: u64,
    max_output: u32,
    price: Option<Price>,
    capabilities: Capabilities,
}

const fn entry(
    prefix: &'static str,
    window: u64,
    max_output: u32,
    price: Option<Price>,
    capabilities: Capabilities,
) -> Entry {
    Entry {
        prefix,
        window,
        max_output,
        price,
        capabilities,
    }
}

const CHAT: Capabilities = Capabilities {
    images: true,
    prompt_caching: true,
    ..Capabilities::DEFAULT
};

/// OpenAI's reasoning models: their reasoning is hidden (nothing to replay), its depth set
/// by `reasoning_effort`.
const OPENAI_REASONING: Capabilities = Capabilities {
    reasoning: true,
    reasoning_effort: true,
    ..CHAT
};

const REASONER: Capabilities = Capabilities {
    prompt_caching: true,
    reasoning: true,
    reasoning_replay: true,
    ..Capabilities::DEFAULT
};

/// Mistral's models, whatever server runs them: tools, and ids of 9 letters and digits.
const MISTRAL: Capabilities = Capabilities {
    nine_char_tool_ids: true,
    ..Capabilities::DEFAULT
};

/// Models of OpenAI-compatible providers, by id prefix (the longest match wins). Prices are
/// list prices in USD per million tokens; these providers cache prefixes automatically, so a
/// cache write costs the input price and a read the provider's share of it.
const OTHER_MODELS: &[Entry] = &[
    entry(
        "gpt-4o-mini",
        128_000,
        16_384,
        Some(Price::with_cache(0.15, 0.6, 1.0, 0.5)),
        CHAT,
    ),
    entry(
        "gpt-4o",
        128_000,
        16_384,
        Some(Price::with_cache(2.5, 10.0, 1.0, 0.5)),
        CHAT,
    ),
    entry(
        "gpt-4.1-mini",
        1_047_576,
        32_768,
        Some(Price::with_cache(0.4, 1.6, 1.0, 0.25)),
        CHAT,
    ),
    entry(
        "gpt-4.1",
        1_047_576,
        32_768,
        Some(Price::with_cache(2.0, 8.0, 1.0, 0.25)),
        CHAT,
    ),
    entry(
        "gpt-5",
        400_000,
        128_000,
        Some(Price::with_cache(1.25, 10.0, 1.0, 0.1)),
        OPENAI_REASONING,
    ),
    entry(
        "o1",
        200_000,
        100_000,
        Some(Price::with_cache(15.0, 60.0, 1.0, 0.5)),
        OPENAI_REASONING,
    ),
    entry(
        "o3-mini",
        200_000,
        100_000,
        Some(Price::with_cache(1.1, 4.4, 1.0, 0.5)),
        Capabilities {
            images: false,
            ..OPENAI_REASONING
        },
    ),
    entry(
        "o3",
        200_000,
        100_000,
        Some(Price::with_cache(2.0, 8.0, 1.0, 0.25)),
        OPENAI_REASONING,
    ),
    entry(
        "o4-mini",
        200_000,
        100_000,
        Some(Price::with_cache(1.1, 4.4, 1.0, 0.25)),
        OPENAI_REASONING,
    ),
    entry(
        "deepseek-chat",
        128_000,
        8_192,
        Some(Price::with_cache(0.28, 0.42, 1.0, 0.1)),
        Capabilities {
            images: false,
            ..CHAT
        },
    ),
    entry("mistral", 128_000, 32_768, None, MISTRAL),
    entry("codestral", 256_000, 32_768, None, MISTRAL),
    entry("devstral", 128_000, 32_768, None, MISTRAL),
    entry("magistral", 128_000, 32_768, None, MISTRAL),
    entry(
        "deepseek-reasoner",
        128_000,
        65_536,
        Some(Price::with_cache(0.28, 0.42, 1.0, 0.1)),
        REASONER,
    ),
];

/// What cairn knows about `model` (an id, an alias, or `provider/id`).
///
/// ```
/// use cairn_llm::registry::lookup;
///
/// assert_eq!(lookup("sonnet").context_window, Some(200_000));
/// assert!(lookup("deepseek/deepseek-reasoner").capabilities.reasoning_replay);
/// assert_eq!(lookup("my-local-model").price, None);
/// ```
pub fn lookup(model: &str) -> ModelInfo {
    let id = models::resolve_model(model);
    if models::context_window(&id).is_some() {
        return ModelInfo {
            context_window: models::context_window(&id),
            max_output_tokens: models::max_output_tokens(&id),
            price: pricing::price_for(&id),
            capabilities: Capabilities {
                images: true,
                prompt_caching: true,
                reasoning: true,
                ..Capabilities::DEFAULT
            },
        };
    }
    // `openrouter/deepseek/deepseek-r1` and `deepseek-reasoner` name the same kind of model:
    // the table is matched against the last part of the id.
    let last = id.rsplit('/').next().unwrap_or(&id).to_ascii_lowercase();
    OTHER_MODELS
        .iter()
        .filter(|entry| last.starts_with(entry.prefix))
        .max_by_key(|entry| entry.prefix.len())
        .map_or(
            ModelInfo {
                context_window: None,
                max_output_tokens: None,
                price: None,
                capabilities: Capabilities::DEFAULT,
            },
            |entry| ModelInfo {
                context_window: Some(entry.window),
                max_output_tokens: Some(entry.max_output),
                price: entry.price,
                capabilities: entry.capabilities,
            },
        )
}

/// The window of `model` as its provider reports it, for a caller that holds no client (the
/// TUI's status line): a built-in OpenAI-compatible provider's model the registry does not
/// know gets that provider's default (128K); an Anthropic model the table does not know,
/// `None`.
///
/// ```
/// use cairn_llm::registry::context_window;
///
/// assert_eq!(context_window("sonnet"), Some(200_000));
/// assert_eq!(context_window("ollama/llama3.2"), Some(128_000));
/// assert_eq!(context_window("my-proxy-model"), None);
/// ```
pub fn context_window(model: &str) -> Option<u64> {
    match crate::openai::split_provider(model) {
        Some((_, id)) => Some(
            lookup(id)
                .context_window
                .unwrap_or(crate::openai::DEFAULT_CONTEXT_WINDOW),
        ),
        None => lookup(model).context_window,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn every_kind_of_model_is_answered() {
        let row = |model: &str| {
            let info = lookup(model);
            (
                info.context_window,
                info.price.map(|p| p.input_per_mtok),
                info.capabilities.reasoning_replay,
            )
        };
        let rows: Vec<_> = [
            "claude-sonnet-4-5",
            "opus",
            "gpt-4o",
            "gpt-4o-mini-2024-07-18",
            "deepseek-reasoner",
            "deepseek/deepseek-reasoner",
            "deepseek-chat",
            "llama3.2",
        ]
        .map(row)
        .into();
        assert_eq!(
            rows,
            vec![
                (Some(200_000), Some(3.0), false),
                (Some(200_000), Some(5.0), false),
                (Some(128_000), Some(2.5), false),
                (Some(128_000), Some(0.15), false),
                (Some(128_000), Some(0.28), true),
                (Some(128_000), Some(0.28), true),
                (Some(128_000), Some(0.28), false),
                (None, None, false),
            ]
        );
    }

    #[test]
    fn an_unknown_model_costs_nothing_known() {
        let usage = Usage {
            input_tokens: 1_000,
            output_tokens: 1_000,
            ..Usage::default()
        };
        assert_eq!(lookup("llama3.2").cost_usd(&usage), None);
        assert_eq!(lookup("claude-opus-4-6").cost_usd(&usage), None);
    }

    /// Cached reads on an automatic-caching provider cost its share of the input price.
    #[test]
    fn cache_reads_cost_the_providers_share() {
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 0,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 1_000_000,
        };
        let cost = lookup("gpt-4o").cost_usd(&usage).unwrap_or(f64::NAN);
        assert!((cost - (2.5 + 1.25)).abs() < 1e-9, "{cost}");
    }
}
