//! What tokens cost: one price table, and usage turned into US dollars.

use cairn_protocol::Usage;

use crate::models::resolve_model;

/// List prices of one model in USD per million tokens.
///
/// Prompt-cache writes and reads cost a multiple of the input price: on Anthropic 1.25× and
/// 0.1× ([`Price::new`]); providers with automatic prefix caching charge nothing extra to
/// write and their own share to read ([`Price::with_cache`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Input that was neither written to nor read from a cache
    /// ([`Usage::input_tokens`]), in USD per million tokens.
    pub input_per_mtok: f64,
    /// Everything the model wrote, its reasoning included ([`Usage::output_tokens`]), in
    /// USD per million tokens.
    pub output_per_mtok: f64,
    /// Cache writes, as a multiple of the input price.
    pub cache_write_ratio: f64,
    /// Cache reads, as a multiple of the input price.
    pub cache_read_ratio: f64,
}

impl Price {
    /// Anthropic's prices: cache writes at 1.25× the input price, reads at 0.1×.
    pub const fn new(input_per_mtok: f64, output_per_mtok: f64) -> Self {
        Price::with_cache(input_per_mtok, output_per_mtok, 1.25, 0.1)
    }

    /// Prices with their own cache multipliers.
    pub const fn with_cache(
        input_per_mtok: f64,
        output_per_mtok: f64,
        cache_write_ratio: f64,
        cache_read_ratio: f64,
    ) -> Self {
        Price {
            input_per_mtok,
            output_per_mtok,
            cache_write_ratio,
            cache_read_ratio,
        }
    }

    /// What input written to a cache costs ([`Usage::cache_creation_input_tokens`]), in USD
    /// per million tokens: the input price times [`cache_write_ratio`](Self::cache_write_ratio).
    pub fn cache_write_per_mtok(&self) -> f64 {
        self.input_per_mtok * self.cache_write_ratio
    }

    /// What input read from a cache costs ([`Usage::cache_read_input_tokens`]), in USD per
    /// million tokens: the input price times [`cache_read_ratio`](Self::cache_read_ratio).
    pub fn cache_read_per_mtok(&self) -> f64 {
        self.input_per_mtok * self.cache_read_ratio
    }

    /// The cost of `usage` at these prices.
    pub fn cost_usd(&self, usage: &Usage) -> f64 {
        let per_token = |tokens: u64, per_mtok: f64| tokens as f64 * per_mtok / 1_000_000.0;
        per_token(usage.input_tokens, self.input_per_mtok)
            + per_token(usage.output_tokens, self.output_per_mtok)
            + per_token(
                usage.cache_creation_input_tokens,
                self.cache_write_per_mtok(),
            )
            + per_token(usage.cache_read_input_tokens, self.cache_read_per_mtok())
    }
}

/// Model id prefixes and their prices. A dated id (`claude-sonnet-4-5-20250929`) matches its
/// undated prefix; the longest matching prefix wins.
const PRICES: &[(&str, Price)] = &[
    ("claude-opus-4-5", Price::new(5.0, 25.0)),
    ("claude-opus-4-1", Price::new(15.0, 75.0)),
    ("claude-opus-4", Price::new(15.0, 75.0)),
    ("claude-sonnet-4-5", Price::new(3.0, 15.0)),
    ("claude-sonnet-4", Price::new(3.0, 15.0)),
    ("claude-3-7-sonnet", Price::new(3.0, 15.0)),
    ("claude-haiku-4-5", Price::new(1.0, 5.0)),
    ("claude-3-5-haiku", Price::new(0.8, 4.0)),
];

/// The prices of `model` (an id or an alias), or `None` for a model cairn does not know.
///
/// ```
/// use cairn_llm::pricing::price_for;
///
/// assert_eq!(price_for("claude-sonnet-4-5-20250929").map(|p| p.input_per_mtok), Some(3.0));
/// assert_eq!(price_for("claude-opus-4-6"), None); // a version the table does not list
/// ```
pub fn price_for(model: &str) -> Option<Price> {
    let model = resolve_model(model);
    PRICES
        .iter()
        .filter(|(prefix, _)| {
            model
                .strip_prefix(prefix)
                .is_some_and(|rest| !starts_with_version_number(rest))
        })
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, price)| *price)
}

/// Whether `rest` (what follows a prefix) starts another version component such as `-6` or
/// `-1-`, as opposed to a date (`-20250929`), a tag (`-latest`) or nothing. Without this,
/// `claude-opus-4-6` would be priced as `claude-opus-4`.
fn starts_with_version_number(rest: &str) -> bool {
    let Some(rest) = rest.strip_prefix('-') else {
        // `claude-opus-4` must not match `claude-opus-45`.
        return rest.starts_with(|c: char| c.is_ascii_alphanumeric());
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    (1..=2).contains(&digits)
}

/// The cost in USD of `usage` on `model`, or `None` for a model without a known price: an
/// unknown cost is never reported as free.
pub fn cost_usd(model: &str, usage: &Usage) -> Option<f64> {
    crate::registry::lookup(model).cost_usd(usage)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn input_output(model: &str) -> Option<(f64, f64)> {
        price_for(model).map(|p| (p.input_per_mtok, p.output_per_mtok))
    }

    #[test]
    fn every_listed_model_has_its_price() {
        assert_eq!(input_output("claude-opus-4-5"), Some((5.0, 25.0)));
        assert_eq!(input_output("claude-opus-4-5-20251101"), Some((5.0, 25.0)));
        assert_eq!(input_output("claude-opus-4-1-20250805"), Some((15.0, 75.0)));
        assert_eq!(input_output("claude-opus-4-20250514"), Some((15.0, 75.0)));
        assert_eq!(
            input_output("claude-sonnet-4-5-20250929"),
            Some((3.0, 15.0))
        );
        assert_eq!(input_output("claude-sonnet-4-20250514"), Some((3.0, 15.0)));
        assert_eq!(input_output("claude-3-7-sonnet-latest"), Some((3.0, 15.0)));
        assert_eq!(input_output("claude-haiku-4-5"), Some((1.0, 5.0)));
        assert_eq!(input_output("claude-3-5-haiku-20241022"), Some((0.8, 4.0)));
        assert_eq!(input_output("haiku"), Some((1.0, 5.0)));
    }

    #[test]
    fn unknown_models_have_no_price() {
        assert_eq!(input_output("gpt-4o"), None);
        assert_eq!(input_output("claude-opus-4-6"), None);
        assert_eq!(input_output("claude-opus-45"), None);
        assert_eq!(cost_usd("my-proxy-model", &Usage::default()), None);
    }

    #[test]
    fn cost_counts_every_kind_of_token() {
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            cache_creation_input_tokens: 1_000_000,
            cache_read_input_tokens: 1_000_000,
        };
        // 3 + 15 + 3.75 + 0.3
        let cost = cost_usd("claude-sonnet-4-5", &usage).unwrap_or(f64::NAN);
        assert!((cost - 22.05).abs() < 1e-9, "{cost}");
        let small = Usage {
            input_tokens: 1200,
            output_tokens: 300,
            ..Usage::default()
        };
        let cost = cost_usd("claude-haiku-4-5-20251001", &small).unwrap_or(f64::NAN);
        assert!((cost - (0.0012 + 0.0015)).abs() < 1e-12, "{cost}");
    }
}
