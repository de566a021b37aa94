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

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

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

    /// How the model's provider caches prompt prefixes, for whoever weighs a change to what
    /// was already sent (the context pipeline); [`PromptCache::NONE`] when it does not cache.
    /// A price whose cache write costs more than plain input is Anthropic's marked cache
    /// (its 5-minute entries at 1.25×, its 1-hour ones at 2×); one whose write costs the input
    /// price is an automatic prefix cache (OpenAI's, DeepSeek's). A caching model of unknown
    /// price is taken as Anthropic's default.
    ///
    /// ```
    /// use std::time::Duration;
    /// use cairn_llm::registry::{CacheKind, PromptCache, lookup};
    ///
    /// let sonnet = lookup("sonnet").prompt_cache();
    /// assert_eq!((sonnet.write_ratio, sonnet.read_ratio), (1.25, 0.1));
    /// assert_eq!(sonnet.ttl, Duration::from_secs(300));
    /// assert_eq!(lookup("gpt-4o").prompt_cache().kind, CacheKind::Automatic);
    /// assert_eq!(lookup("llama3.2").prompt_cache(), PromptCache::NONE);
    /// ```
    pub fn prompt_cache(&self) -> PromptCache {
        if !self.capabilities.prompt_caching {
            return PromptCache::NONE;
        }
        match self.price {
            None => PromptCache::ANTHROPIC,
            Some(price) if price.cache_write_ratio >= PromptCache::ANTHROPIC_1H.write_ratio => {
                PromptCache {
                    read_ratio: price.cache_read_ratio,
                    ..PromptCache::ANTHROPIC_1H
                }
            }
            Some(price) if price.cache_write_ratio > 1.0 => PromptCache {
                write_ratio: price.cache_write_ratio,
                read_ratio: price.cache_read_ratio,
                ..PromptCache::ANTHROPIC
            },
            Some(price) => PromptCache::automatic(price.cache_read_ratio),
        }
    }
}

/// How a provider finds a cached prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheKind {
    /// Prefixes are cached where the request marks them (`cache_control`), and a mark finds
    /// an earlier entry only up to `lookback_blocks` content blocks before it (Anthropic's
    /// 20): a change further back than that is read from the mark before it (the system
    /// prompt's), so the whole conversation is written again.
    Marked {
        /// How many blocks before a mark the API looks for an earlier entry.
        lookback_blocks: usize,
    },
    /// The longest prefix already seen is served from the cache, wherever it ends (OpenAI's
    /// and DeepSeek's automatic caching).
    Automatic,
}

/// What a provider's prompt cache costs and how long it keeps a prefix: the weights of the
/// context pipeline's decisions. Ratios are of the input price; a cached prefix unused for
/// `ttl` is gone, and the next request writes it again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PromptCache {
    /// How prefixes are found again.
    pub kind: CacheKind,
    /// How long an unused prefix stays cached.
    pub ttl: Duration,
    /// What writing a token to the cache costs, as a share of the input price (1.0 where
    /// writing costs nothing more than sending).
    pub write_ratio: f64,
    /// What reading a token from the cache costs, as a share of the input price.
    pub read_ratio: f64,
}

impl PromptCache {
    /// Anthropic's default: `cache_control: ephemeral`, kept 5 minutes, written at 1.25× and
    /// read at 0.1× the input price.
    pub const ANTHROPIC: PromptCache = PromptCache {
        kind: CacheKind::Marked {
            lookback_blocks: 20,
        },
        ttl: Duration::from_secs(5 * 60),
        write_ratio: 1.25,
        read_ratio: 0.1,
    };

    /// Anthropic's 1-hour cache (`"ttl": "1h"`), where a request asks for it: written at 2×.
    pub const ANTHROPIC_1H: PromptCache = PromptCache {
        ttl: Duration::from_secs(60 * 60),
        write_ratio: 2.0,
        ..PromptCache::ANTHROPIC
    };

    /// An automatic prefix cache reading at `read_ratio` of the input price and writing at
    /// the input price. OpenAI keeps a prefix 5 to 10 minutes unused (5 is assumed); DeepSeek
    /// keeps its disk cache longer, so 5 minutes errs on the side of a cold cache.
    pub const fn automatic(read_ratio: f64) -> PromptCache {
        PromptCache {
            kind: CacheKind::Automatic,
            ttl: Duration::from_secs(5 * 60),
            write_ratio: 1.0,
            read_ratio,
        }
    }

    /// No prompt cache (a model or server without one, or `DISABLE_PROMPT_CACHING`): nothing
    /// is read back, every token is sent at the input price, so changing what was already
    /// sent costs nothing more.
    pub const NONE: PromptCache = PromptCache {
        kind: CacheKind::Automatic,
        ttl: Duration::ZERO,
        write_ratio: 1.0,
        read_ratio: 1.0,
    };
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

/// What the settings say of one model (`providers.<name>.models.<id>`): each field given
/// replaces the registry's, so a model the registry does not know gets a window and, with
/// both an input and an output price, a known cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelOverride {
    /// `contextWindow`: how many tokens the model reads at most.
    pub context_window: Option<u64>,
    /// `maxOutputTokens`: how many tokens one answer may hold at most.
    pub max_output_tokens: Option<u32>,
    /// `inputPrice`, USD per million input tokens.
    pub input_price: Option<f64>,
    /// `outputPrice`, USD per million output tokens.
    pub output_price: Option<f64>,
    /// `cacheWritePrice`, USD per million tokens written to a prompt cache.
    pub cache_write_price: Option<f64>,
    /// `cacheReadPrice`, USD per million tokens read from a prompt cache.
    pub cache_read_price: Option<f64>,
    /// `tools`, `images`, `promptCaching`, `reasoning`, `reasoningReplay`,
    /// `reasoningEffort`, `nineCharToolIds`: the [`Capabilities`] the settings set.
    pub capabilities: CapabilityOverride,
}

/// The capabilities a [`ModelOverride`] sets; `None` keeps the registry's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[allow(
    missing_docs,
    reason = "each field is the Capabilities field of the same name"
)]
pub struct CapabilityOverride {
    pub tools: Option<bool>,
    pub images: Option<bool>,
    pub prompt_caching: Option<bool>,
    pub reasoning: Option<bool>,
    pub reasoning_replay: Option<bool>,
    pub reasoning_effort: Option<bool>,
    pub nine_char_tool_ids: Option<bool>,
}

impl ModelOverride {
    /// `info` with what the settings say laid over it.
    ///
    /// Prices: an input or output price the settings leave out is the registry's; with
    /// neither known the cost stays unknown. A cache price becomes a share of the input
    /// price (a free model's cache is free too); one the settings leave out keeps the
    /// registry's share, or for a model the registry has no price for, the input price
    /// itself (no discount assumed).
    ///
    /// ```
    /// use cairn_llm::registry::{ModelOverride, lookup};
    /// use cairn_protocol::Usage;
    ///
    /// let local = ModelOverride {
    ///     context_window: Some(32_768),
    ///     input_price: Some(1.0),
    ///     output_price: Some(2.0),
    ///     ..ModelOverride::default()
    /// }
    /// .apply(lookup("my-local-model"));
    /// assert_eq!(local.context_window, Some(32_768));
    /// let usage = Usage { input_tokens: 1_000_000, output_tokens: 1_000_000, ..Usage::default() };
    /// assert_eq!(local.cost_usd(&usage), Some(3.0));
    /// ```
    pub fn apply(&self, mut info: ModelInfo) -> ModelInfo {
        if let Some(window) = self.context_window {
            info.context_window = Some(window);
        }
        if let Some(max) = self.max_output_tokens {
            info.max_output_tokens = Some(max);
        }
        let base = info.price;
        let input = self.input_price.or(base.map(|price| price.input_per_mtok));
        let output = self
            .output_price
            .or(base.map(|price| price.output_per_mtok));
        if let (Some(input), Some(output)) = (input, output) {
            let share = |price: Option<f64>, registry: Option<f64>| match price {
                Some(_) if input <= 0.0 => 0.0,
                Some(price) => price / input,
                None => registry.unwrap_or(1.0),
            };
            info.price = Some(Price::with_cache(
                input,
                output,
                share(
                    self.cache_write_price,
                    base.map(|price| price.cache_write_ratio),
                ),
                share(
                    self.cache_read_price,
                    base.map(|price| price.cache_read_ratio),
                ),
            ));
        }
        let set = self.capabilities;
        let capabilities = &mut info.capabilities;
        for (field, value) in [
            (&mut capabilities.tools, set.tools),
            (&mut capabilities.images, set.images),
            (&mut capabilities.prompt_caching, set.prompt_caching),
            (&mut capabilities.reasoning, set.reasoning),
            (&mut capabilities.reasoning_replay, set.reasoning_replay),
            (&mut capabilities.reasoning_effort, set.reasoning_effort),
            (&mut capabilities.nine_char_tool_ids, set.nine_char_tool_ids),
        ] {
            if let Some(value) = value {
                *field = value;
            }
        }
        info
    }
}

/// One provider's view of the registry: the table with the settings' overrides of its
/// models (`providers.<name>.models`) laid over it. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    overrides: Arc<BTreeMap<String, ModelOverride>>,
}

impl Registry {
    /// The registry with `overrides`, by model id as the provider names it (without the
    /// `provider/` prefix of `--model`).
    pub fn with_overrides(overrides: BTreeMap<String, ModelOverride>) -> Registry {
        Registry {
            overrides: Arc::new(overrides),
        }
    }

    /// What is known about `model`: [`lookup`], then the settings' entry for it (by the id
    /// as given, or as an alias resolves).
    pub fn lookup(&self, model: &str) -> ModelInfo {
        let info = lookup(model);
        match self.overrides(model) {
            Some(entry) => entry.apply(info),
            None => info,
        }
    }

    /// Whether the settings give `model`'s window.
    pub fn overrides_window(&self, model: &str) -> bool {
        self.overrides(model)
            .is_some_and(|entry| entry.context_window.is_some())
    }

    fn overrides(&self, model: &str) -> Option<&ModelOverride> {
        self.overrides
            .get(model)
            .or_else(|| self.overrides.get(&models::resolve_model(model)))
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

    #[test]
    fn each_provider_reports_how_its_cache_bills() {
        let cache = |model: &str| lookup(model).prompt_cache();
        assert_eq!(cache("claude-sonnet-4-5"), PromptCache::ANTHROPIC);
        assert_eq!(cache("gpt-4o"), PromptCache::automatic(0.5));
        assert_eq!(cache("deepseek-reasoner"), PromptCache::automatic(0.1));
        assert_eq!(cache("mistral-large"), PromptCache::NONE);
    }

    /// The settings' entry replaces what it names and keeps the rest; a cache price becomes
    /// a share of the input price; an unknown model with one price only stays unknown.
    #[test]
    fn overrides_replace_what_they_name() {
        let registry = Registry::with_overrides(BTreeMap::from([
            (
                "gpt-4o".to_owned(),
                ModelOverride {
                    context_window: Some(64_000),
                    input_price: Some(5.0),
                    ..ModelOverride::default()
                },
            ),
            (
                "local".to_owned(),
                ModelOverride {
                    input_price: Some(2.0),
                    output_price: Some(4.0),
                    cache_read_price: Some(0.5),
                    capabilities: CapabilityOverride {
                        reasoning_replay: Some(true),
                        ..CapabilityOverride::default()
                    },
                    ..ModelOverride::default()
                },
            ),
            (
                "half".to_owned(),
                ModelOverride {
                    input_price: Some(2.0),
                    ..ModelOverride::default()
                },
            ),
        ]));
        let gpt = registry.lookup("gpt-4o");
        assert_eq!(gpt.context_window, Some(64_000));
        assert_eq!(gpt.max_output_tokens, Some(16_384));
        assert_eq!(gpt.price, Some(Price::with_cache(5.0, 10.0, 1.0, 0.5)));
        let local = registry.lookup("local");
        assert_eq!(local.price, Some(Price::with_cache(2.0, 4.0, 1.0, 0.25)));
        assert!(local.capabilities.reasoning_replay);
        assert_eq!(local.context_window, None);
        assert!(!registry.overrides_window("local"));
        assert!(registry.overrides_window("gpt-4o"));
        assert_eq!(registry.lookup("half").price, None);
        assert_eq!(registry.lookup("sonnet"), lookup("sonnet"));
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
