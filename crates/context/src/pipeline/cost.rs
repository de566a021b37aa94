//! The price of changing what was already sent: the cost model behind the pipeline's
//! decisions.
//!
//! A request whose start matches what the previous request sent, within the cache's time to
//! live, reads that start from the cache (Anthropic bills a read at 0.1× the input price) and
//! writes the rest (1.25×). A step that changes an old block (snip, microcompact, collapse)
//! makes every token after the change a write again, once; what it saves is the cleared
//! tokens' read on every later request. So a change is made when:
//!
//! - it is free: the cache has gone cold (everything is written anyway) or holds nothing of
//!   this conversation;
//! - or it pays and waiting no longer does: the reads it saves until the next compaction
//!   cover its extra cost ([`Quote::pays_by`]), and the reads already paid for keeping the
//!   clearable tokens since the last rewrite have reached that cost ([`Quote::batched`], the
//!   rent-or-buy rule). Waiting batches the clears: one rewrite clears many results, and the
//!   prefix is rewritten rarely.
//!
//! Window pressure is not priced: over the thresholds the pipeline acts as it must, so no
//! request goes out over the window. All costs are in input-token equivalents (tokens × the
//! share of the input price they are billed at).

use std::time::Duration;

use cairn_llm::registry::{CacheKind, PromptCache};
use cairn_protocol::Message;

use super::accounting::message_tokens;

/// What the prompt cache holds before a request, and what it bills.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheState {
    /// The provider's cache facts ([`PromptCache::ANTHROPIC`] when the model's are unknown).
    pub cache: PromptCache,
    /// Whether the last request is recent enough for its prefix to be cached still.
    pub warm: bool,
    /// The stable prefix the last request marked besides its end (a count of its leading
    /// messages), which a marked cache holds too.
    pub stable_prefix: Option<usize>,
}

impl CacheState {
    /// The state after `since_last` without a request (`None`: no request yet).
    pub fn after(cache: PromptCache, since_last: Option<Duration>) -> Self {
        CacheState {
            cache,
            warm: !cache.ttl.is_zero() && since_last.is_some_and(|since| since <= cache.ttl),
            stable_prefix: None,
        }
    }

    /// The same state, the last request having marked its first `stable_prefix` messages.
    pub fn with_stable_prefix(self, stable_prefix: Option<usize>) -> Self {
        CacheState {
            stable_prefix,
            ..self
        }
    }

    /// The tokens of a request sending `view` (after `overhead` tokens of system prompt and
    /// tools) that the cache serves, when the previous request sent `previous`: the matching
    /// messages at its start, if a mark can find them. A marked cache looks back only so many
    /// blocks from a mark; past that it finds the stable prefix the last request marked, when
    /// the view still starts with it, else only the fixed prefix. Nothing when the cache is
    /// cold.
    pub fn cached_prefix(&self, previous: &[Message], view: &[Message], overhead: u64) -> u64 {
        if !self.warm {
            return 0;
        }
        let common = previous
            .iter()
            .zip(view)
            .take_while(|(sent, next)| sent == next)
            .count();
        let behind: usize = view[common..]
            .iter()
            .map(|message| message.content.len())
            .sum();
        let found = match self.cache.kind {
            CacheKind::Marked { lookback_blocks } => behind <= lookback_blocks,
            CacheKind::Automatic => true,
        };
        if !found {
            return match self.stable_prefix {
                Some(stable) if stable > 0 && stable <= common => {
                    overhead + view[..stable].iter().map(message_tokens).sum::<u64>()
                }
                _ => overhead,
            };
        }
        if common == 0 {
            return overhead;
        }
        overhead + view[..common].iter().map(message_tokens).sum::<u64>()
    }

    /// The billed cost of a request of `total` input tokens of which `cached` are read from
    /// the cache; the rest is written to it.
    pub fn request_cost(&self, cached: u64, total: u64) -> f64 {
        let cached = cached.min(total);
        self.cache.read_ratio * cached as f64 + self.cache.write_ratio * (total - cached) as f64
    }

    /// What a later request pays to carry `tokens` it could have left out: their read.
    pub fn carrying(&self, tokens: u64) -> f64 {
        self.cache.read_ratio * tokens as f64
    }
}

/// A change to the view, priced: what this request costs with it and without it, and what
/// each later request saves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quote {
    /// This request's cost as the view stands.
    pub kept: f64,
    /// This request's cost with the change.
    pub changed: f64,
    /// What each later request saves (the read of the tokens the change leaves out).
    pub saving_per_request: f64,
}

impl Quote {
    /// Prices changing `view` (`before` tokens) into `after_view` (`after` tokens), when the
    /// previous request sent `previous`.
    pub fn new(
        state: &CacheState,
        previous: &[Message],
        (view, before): (&[Message], u64),
        (after_view, after): (&[Message], u64),
        overhead: u64,
    ) -> Self {
        let kept = state.request_cost(state.cached_prefix(previous, view, overhead), before);
        let changed =
            state.request_cost(state.cached_prefix(previous, after_view, overhead), after);
        Quote {
            kept,
            changed,
            saving_per_request: state.carrying(before.saturating_sub(after)),
        }
    }

    /// What the change costs this request beyond leaving the view as it is (negative: it
    /// saves already).
    pub fn extra(&self) -> f64 {
        self.changed - self.kept
    }

    /// Whether the change costs nothing more now: a cold cache, or one that holds nothing
    /// the change rewrites.
    pub fn free(&self) -> bool {
        self.extra() <= 0.0
    }

    /// Whether the reads saved over `requests` later requests cover the extra cost.
    pub fn pays_by(&self, requests: f64) -> bool {
        self.free() || self.saving_per_request * requests >= self.extra()
    }

    /// Whether `carried` (the reads paid so far for tokens the change would have left out,
    /// since the prefix was last rewritten) has reached the extra cost: waiting longer would
    /// cost more than the rewrite.
    pub fn batched(&self, carried: f64) -> bool {
        self.free() || carried >= self.extra()
    }
}

/// Why the pipeline took or left a change to what was already sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The change costs nothing more now (a cold cache).
    Free,
    /// It pays before the next compaction and waiting no longer does.
    Pays,
    /// It would pay, but batching it with later clears costs less: wait.
    Waits,
    /// The saving until the next compaction would not cover the rewrite.
    DoesNotPay,
}

/// The verdict on `quote`, `carried` reads since the last rewrite (this request's included)
/// and `horizon` requests before the next compaction.
pub fn judge(quote: &Quote, carried: f64, horizon: f64) -> Verdict {
    if quote.free() {
        Verdict::Free
    } else if !quote.pays_by(horizon) {
        Verdict::DoesNotPay
    } else if quote.batched(carried) {
        Verdict::Pays
    } else {
        Verdict::Waits
    }
}

/// The requests expected before the next compaction: the room left below `threshold` after
/// a request of `size` tokens, at `growth` tokens a request.
pub fn horizon(size: u64, threshold: u64, growth: f64) -> f64 {
    threshold.saturating_sub(size) as f64 / growth.max(1.0)
}

/// What a request costs on average over a cycle that starts, after a reset costing `reset`,
/// at `start` tokens and grows by `growth` a request to `threshold`: the reset spread over
/// the cycle's requests, and each request's read of what the cache holds.
pub fn cycle_rate(state: &CacheState, reset: f64, start: u64, threshold: u64, growth: f64) -> f64 {
    let requests = horizon(start, threshold, growth).max(1.0);
    reset.max(0.0) / requests + state.cache.read_ratio * (start + threshold.max(start)) as f64 / 2.0
}

/// Under window pressure: whether clearing (costing `extra` now, leaving `size` tokens) is
/// cheaper over the next requests than the summary that would come instead (its request
/// reads the cached conversation at `threshold`, and the new opening of about `opening`
/// tokens after the `overhead` of system prompt and tools, still cached, is written). The
/// summary's own answer is output, left out as the billed-input measure leaves it out.
pub fn clearing_beats_summary(
    state: &CacheState,
    extra: f64,
    size: u64,
    (overhead, opening): (u64, u64),
    threshold: u64,
    growth: f64,
) -> bool {
    let summary =
        state.carrying(threshold) + state.request_cost(overhead, opening) - state.carrying(opening);
    cycle_rate(state, extra, size, threshold, growth)
        <= cycle_rate(state, summary, opening, threshold, growth)
}

#[cfg(test)]
mod tests {
    use cairn_protocol::ContentBlock;
    use pretty_assertions::assert_eq;

    use super::*;

    fn messages(sizes: &[usize]) -> Vec<Message> {
        sizes
            .iter()
            .enumerate()
            .map(|(index, &chars)| {
                Message::user_text(format!("{index:>4}{}", "x".repeat(chars - 4)))
            })
            .collect()
    }

    fn warm() -> CacheState {
        CacheState::after(PromptCache::ANTHROPIC, Some(Duration::from_secs(30)))
    }

    #[test]
    fn the_cache_serves_the_matching_start_within_its_ttl() {
        let sent = messages(&[4_000, 4_000]);
        let mut next = sent.clone();
        next.extend(messages(&[400]));
        assert_eq!(warm().cached_prefix(&sent, &next, 1_000), 3_000);
        let cold = CacheState::after(PromptCache::ANTHROPIC, Some(Duration::from_secs(301)));
        assert_eq!(cold.cached_prefix(&sent, &next, 1_000), 0);
        assert_eq!(
            CacheState::after(PromptCache::ANTHROPIC, None).cached_prefix(&sent, &next, 1_000),
            0
        );
    }

    #[test]
    fn a_marked_cache_does_not_find_a_change_more_than_twenty_blocks_back() {
        let sent = messages(&[400, 400]);
        let mut next = sent.clone();
        next.push(Message {
            role: cairn_protocol::Role::User,
            content: vec![ContentBlock::text("y"); 21],
        });
        assert_eq!(warm().cached_prefix(&sent, &next, 1_000), 1_000);
        let automatic = CacheState {
            cache: PromptCache::automatic(0.5),
            warm: true,
            stable_prefix: None,
        };
        assert_eq!(automatic.cached_prefix(&sent, &next, 1_000), 1_200);
        // The last request marked its first message too: that mark is found.
        assert_eq!(
            warm()
                .with_stable_prefix(Some(1))
                .cached_prefix(&sent, &next, 1_000),
            1_100
        );
        // Not when the view no longer starts with it.
        let mut changed = next.clone();
        changed[0] = Message::user_text("changed");
        assert_eq!(
            warm()
                .with_stable_prefix(Some(1))
                .cached_prefix(&sent, &changed, 1_000),
            1_000
        );
    }

    #[test]
    fn a_clear_on_a_warm_cache_pays_only_once_its_saving_covers_the_rewrite() {
        // 40,000 tokens cached; clearing 20,000 of them rewrites the other 20,000.
        let state = warm();
        let sent = messages(&[80_000, 80_000]);
        let cleared = messages(&[4, 80_000]);
        let quote = Quote::new(&state, &sent, (&sent, 40_000), (&cleared, 20_001), 0);
        // Kept: 40,000 read at 0.1; changed: 20,001 written at 1.25.
        assert_eq!(quote.kept, 4_000.0);
        assert_eq!(quote.changed, 25_001.25);
        assert_eq!(quote.saving_per_request, 1_999.9);
        assert_eq!(judge(&quote, 1_999.9, 5.0), Verdict::DoesNotPay);
        assert_eq!(judge(&quote, 1_999.9, 20.0), Verdict::Waits);
        assert_eq!(judge(&quote, 21_500.0, 20.0), Verdict::Pays);
        let cold = CacheState::after(PromptCache::ANTHROPIC, None);
        let free = Quote::new(&cold, &sent, (&sent, 40_000), (&cleared, 20_001), 0);
        assert_eq!(judge(&free, 0.0, 0.0), Verdict::Free);
    }

    #[test]
    fn under_pressure_a_clear_must_be_cheaper_than_the_summary_it_replaces() {
        // A 60K window: autocompact at 50,100, 14,000 tokens of system prompt and tools, a
        // summary's opening of about 24,000, requests growing by 3,600.
        let state = warm();
        let beats = |extra: f64, size: u64| {
            clearing_beats_summary(&state, extra, size, (14_000, 24_000), 50_100, 3_600.0)
        };
        // Five kept reads leave 31,500 and cost 14,900 to rewrite: the summary is cheaper.
        assert!(!beats(14_900.0, 31_500));
        // Two kept reads leave 20,000 and cost 5,000: clearing is.
        assert!(beats(5_000.0, 20_000));
    }

    #[test]
    fn the_horizon_is_the_room_left_at_the_growth_seen() {
        assert_eq!(horizon(100_000, 167_000, 3_350.0), 20.0);
        assert_eq!(horizon(170_000, 167_000, 3_350.0), 0.0);
        assert_eq!(horizon(0, 10, 0.0), 10.0);
    }
}
