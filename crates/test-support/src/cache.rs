//! A simulation of the Messages API's prompt cache, for measuring what caching saves.
//!
//! The API caches prefixes of a request in the order tools → system → messages, block by
//! block. A block with `cache_control` is a breakpoint: the prefix ending there is written to
//! the cache. A request reads the longest cached prefix that ends at one of its breakpoints or
//! at any of the [`LOOKBACK_BLOCKS`] blocks before one. Tokens are estimated as the length
//! of each block's JSON divided by four.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

/// How far before a breakpoint the API looks for an earlier cached prefix.
pub const LOOKBACK_BLOCKS: usize = 20;

/// The cache-related token counts of one request, as the API reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheUsage {
    /// Tokens after the last breakpoint (neither read nor written).
    pub input_tokens: u64,
    /// Tokens from the end of the prefix read up to the last breakpoint: newly written.
    pub cache_creation_input_tokens: u64,
    /// Tokens of the longest cached prefix found within [`LOOKBACK_BLOCKS`] of a breakpoint.
    pub cache_read_input_tokens: u64,
}

/// The cached prefixes, by hash of their content.
#[derive(Debug, Default)]
pub struct PromptCache {
    /// Prefix hash → tokens in that prefix.
    entries: HashMap<u64, u64>,
}

/// One cacheable block: its tokens, whether it is a breakpoint, and the hash of the prefix
/// that ends with it.
struct Block {
    tokens: u64,
    breakpoint: bool,
    prefix_hash: u64,
    prefix_tokens: u64,
}

impl PromptCache {
    /// Accounts one request body: what it reads from the cache, what it writes, what it pays
    /// in full. Writes its breakpoints' prefixes.
    pub fn account(&mut self, body: &Value) -> CacheUsage {
        let blocks = blocks_of(body);
        let total: u64 = blocks.iter().map(|block| block.tokens).sum();
        let breakpoints: Vec<usize> = blocks
            .iter()
            .enumerate()
            .filter(|(_, block)| block.breakpoint)
            .map(|(index, _)| index)
            .collect();
        let mut read = 0;
        for &breakpoint in &breakpoints {
            let earliest = breakpoint.saturating_sub(LOOKBACK_BLOCKS);
            for index in (earliest..=breakpoint).rev() {
                if let Some(&tokens) = self.entries.get(&blocks[index].prefix_hash) {
                    read = read.max(tokens);
                    break;
                }
            }
        }
        let written_up_to = breakpoints
            .last()
            .map_or(0, |&last| blocks[last].prefix_tokens);
        for &breakpoint in &breakpoints {
            self.entries.insert(
                blocks[breakpoint].prefix_hash,
                blocks[breakpoint].prefix_tokens,
            );
        }
        let creation = written_up_to.saturating_sub(read);
        CacheUsage {
            input_tokens: total - read - creation,
            cache_creation_input_tokens: creation,
            cache_read_input_tokens: read,
        }
    }
}

/// The request's cacheable blocks in cache order (tools, system, message content), each as
/// its JSON without the `cache_control` mark, with its estimated tokens.
pub fn cacheable_blocks(body: &Value) -> Vec<(String, u64)> {
    blocks_in_order(body)
        .into_iter()
        .map(|block| {
            let text = content_text(block);
            let tokens = (text.len() as u64).div_ceil(4);
            (text, tokens)
        })
        .collect()
}

fn content_text(block: &Value) -> String {
    // The mark itself is not content: a block reads the same with or without it.
    let mut content = block.clone();
    if let Some(object) = content.as_object_mut() {
        object.remove("cache_control");
    }
    content.to_string()
}

fn blocks_in_order(body: &Value) -> Vec<&Value> {
    let mut raw: Vec<&Value> = Vec::new();
    if let Some(tools) = body.get("tools").and_then(Value::as_array) {
        raw.extend(tools);
    }
    match body.get("system") {
        Some(Value::Array(system)) => raw.extend(system),
        Some(text @ Value::String(_)) => raw.push(text),
        _ => {}
    }
    for message in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match message.get("content") {
            Some(Value::Array(content)) => raw.extend(content),
            Some(text) => raw.push(text),
            None => {}
        }
    }
    raw
}

/// The request's blocks in cache order, each with the hash of the prefix ending there.
fn blocks_of(body: &Value) -> Vec<Block> {
    let mut hasher = DefaultHasher::new();
    let mut prefix_tokens = 0;
    blocks_in_order(body)
        .into_iter()
        .map(|block| {
            let breakpoint = block.get("cache_control").is_some();
            let text = content_text(block);
            text.hash(&mut hasher);
            let tokens = (text.len() as u64).div_ceil(4);
            prefix_tokens += tokens;
            Block {
                tokens,
                breakpoint,
                prefix_hash: hasher.finish(),
                prefix_tokens,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn body(turns: usize) -> Value {
        let mut messages = Vec::new();
        for turn in 0..turns {
            messages.push(json!({"role": "user", "content": [{"type": "text", "text": format!("question {turn} {}", "q".repeat(400))}]}));
            messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("answer {turn} {}", "a".repeat(400))}]}));
        }
        messages.push(json!({"role": "user", "content": [{"type": "text", "text": "last", "cache_control": {"type": "ephemeral"}}]}));
        json!({
            "tools": [{"name": "A", "description": "x".repeat(4000), "cache_control": {"type": "ephemeral"}}],
            "system": [{"type": "text", "text": "s".repeat(4000), "cache_control": {"type": "ephemeral"}}],
            "messages": messages,
        })
    }

    #[test]
    fn first_request_writes_and_the_next_reads_the_previous_prefix() {
        let mut cache = PromptCache::default();
        let first = cache.account(&body(0));
        assert_eq!(first.cache_read_input_tokens, 0);
        assert!(first.cache_creation_input_tokens > 2_000);
        // The next turn: the previous last message lost its mark and new messages follow.
        let second = cache.account(&body(1));
        assert!(second.cache_read_input_tokens >= 2_000, "{second:?}");
        assert_eq!(
            second.input_tokens, 0,
            "everything up to the last mark is cached or written"
        );
    }

    #[test]
    fn no_breakpoints_means_no_cache() {
        let mut cache = PromptCache::default();
        let plain = json!({"system": "hi", "messages": [{"role": "user", "content": "x"}]});
        cache.account(&plain);
        let again = cache.account(&plain);
        assert_eq!(again.cache_read_input_tokens, 0);
        assert_eq!(again.cache_creation_input_tokens, 0);
        assert!(again.input_tokens > 0);
    }
}
