//! Token usage as the API reports it.

use std::ops::AddAssign;

use serde::{Deserialize, Deserializer, Serialize};

/// Tokens consumed by one request, or summed over many.
///
/// The cache fields may be absent or `null` in the API's answer; both read as zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens neither read from nor written to the prompt cache.
    #[serde(default, deserialize_with = "null_as_zero")]
    pub input_tokens: u64,
    /// Tokens the model wrote, thinking included.
    #[serde(default, deserialize_with = "null_as_zero")]
    pub output_tokens: u64,
    /// Input tokens written to the prompt cache by this request (billed above the base rate).
    #[serde(default, deserialize_with = "null_as_zero")]
    pub cache_creation_input_tokens: u64,
    /// Input tokens read from the prompt cache (billed below the base rate).
    #[serde(default, deserialize_with = "null_as_zero")]
    pub cache_read_input_tokens: u64,
}

fn null_as_zero<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    Ok(Option::<u64>::deserialize(deserializer)?.unwrap_or(0))
}

impl Usage {
    /// Every input token of the request, cached or not: how much of the window it filled
    /// before the answer.
    pub fn input_total(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }

    /// Merges a later report about the same request: the API's `message_delta` repeats or
    /// raises counts, so each non-zero field replaces the earlier value.
    pub fn update_from(&mut self, later: &Usage) {
        for (mine, theirs) in [
            (&mut self.input_tokens, later.input_tokens),
            (&mut self.output_tokens, later.output_tokens),
            (
                &mut self.cache_creation_input_tokens,
                later.cache_creation_input_tokens,
            ),
            (
                &mut self.cache_read_input_tokens,
                later.cache_read_input_tokens,
            ),
        ] {
            if theirs != 0 {
                *mine = theirs;
            }
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
    }
}
