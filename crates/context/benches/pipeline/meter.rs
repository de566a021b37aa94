//! What a session's requests cost under a model of Anthropic's prompt cache.
//!
//! Every request carries the system prompt and tools ([`FIXED_PREFIX`] tokens, marked), a
//! rolling mark on its last message and, where the pipeline names one, a mark at the end of
//! its stable prefix. Each mark leaves a cache entry: the prefix through it. A request reads
//! from the cache the longest entry (of the last few requests', within five minutes) that it
//! starts with and that ends at most 20 content blocks before one of its own marks (the API
//! looks back 20 blocks from a mark); otherwise only the fixed prefix, if any request came
//! within five minutes. Everything after what it reads is written. Billed input equivalent:
//! input + 1.25 × writes + 0.1 × reads (no input goes unmarked here).

use std::time::{Duration, Instant};

use cairn_context::pipeline::accounting::message_tokens;
use cairn_protocol::Message;

/// The system prompt and the tool definitions every request carries, in tokens.
pub const FIXED_PREFIX: u64 = 14_000;
const TTL: Duration = Duration::from_secs(5 * 60);
const LOOKBACK_BLOCKS: usize = 20;
/// How many cache entries of earlier requests are looked for (two a request at most).
const ENTRIES: usize = 16;

/// One request as billed.
#[derive(Debug, Clone)]
pub struct Billed {
    /// `request` or `summary`.
    pub kind: &'static str,
    pub context: u64,
    pub read: u64,
    pub written: u64,
    /// What the pipeline did before it (`snip+microcompact`, `autocompact`…), or empty.
    pub steps: String,
    /// Whether its message list was shorter than the previous request's.
    pub shrank: bool,
    /// The previous request's input, re-sent by this one (changed or not).
    pub resent: u64,
}

impl Billed {
    pub fn cost(&self) -> f64 {
        1.25 * self.written as f64 + 0.1 * self.read as f64
    }
}

struct Entry {
    messages: Vec<Message>,
    tokens: u64,
    blocks: usize,
    at: Instant,
}

/// The requests of one run, billed.
#[derive(Default)]
pub struct Meter {
    entries: Vec<Entry>,
    last_request_at: Option<Instant>,
    previous: Option<(usize, u64)>,
    pub requests: Vec<Billed>,
    pending_steps: Vec<String>,
    /// The wall time of each projection (cairn's policy only).
    pub pipeline_time: Vec<Duration>,
}

impl Meter {
    /// What the pipeline did before the next request.
    pub fn step(&mut self, step: &str) {
        self.pending_steps.push(step.to_string());
    }

    /// What the cache serves a request sending `messages`, marked after the first of each
    /// of `marks` (message counts).
    fn read_for(&self, messages: &[Message], marks: &[usize], now: Instant) -> u64 {
        let warm = self
            .last_request_at
            .is_some_and(|at| now.saturating_duration_since(at) <= TTL);
        if !warm {
            return 0;
        }
        let mark_blocks: Vec<usize> = marks
            .iter()
            .map(|&mark| blocks(&messages[..mark]))
            .collect();
        let best = self
            .entries
            .iter()
            .filter(|entry| now.saturating_duration_since(entry.at) <= TTL)
            .filter(|entry| {
                mark_blocks
                    .iter()
                    .any(|&mark| mark >= entry.blocks && mark - entry.blocks <= LOOKBACK_BLOCKS)
            })
            .filter(|entry| {
                entry.messages.len() <= messages.len()
                    && entry.messages[..] == messages[..entry.messages.len()]
            })
            .map(|entry| entry.tokens)
            .max()
            .unwrap_or(0);
        FIXED_PREFIX + best
    }

    /// A request sending `messages` (after the fixed prefix), and `extra` tokens after them
    /// (a summary request's instructions), with a mark after its first `stable_prefix`
    /// messages besides the one at its end.
    pub fn request(
        &mut self,
        kind: &'static str,
        messages: &[Message],
        stable_prefix: Option<usize>,
        extra: u64,
        now: Instant,
    ) {
        let tokens: u64 = messages.iter().map(message_tokens).sum();
        let context = FIXED_PREFIX + tokens + extra;
        let mut marks = vec![messages.len()];
        marks.extend(stable_prefix.filter(|&count| count > 0 && count < messages.len()));
        let read = self.read_for(messages, &marks, now).min(context);
        let (shrank, resent) = match (kind, self.previous) {
            ("request", Some((count, total))) => (messages.len() < count, total.min(context)),
            _ => (false, 0),
        };
        self.requests.push(Billed {
            kind,
            context,
            read,
            written: context - read,
            steps: std::mem::take(&mut self.pending_steps).join("+"),
            shrank,
            resent,
        });
        self.last_request_at = Some(now);
        if kind == "request" {
            self.previous = Some((messages.len(), context));
            for &mark in &marks {
                let cached = &messages[..mark];
                self.entries.push(Entry {
                    messages: cached.to_vec(),
                    tokens: cached.iter().map(message_tokens).sum(),
                    blocks: blocks(cached),
                    at: now,
                });
            }
            while self.entries.len() > ENTRIES {
                self.entries.remove(0);
            }
        }
    }

    /// The input tokens the API reports for the last request, for the pipeline's estimate.
    pub fn last_reported(&self) -> Option<u64> {
        self.requests
            .iter()
            .rev()
            .find(|billed| billed.kind == "request")
            .map(|billed| billed.context)
    }

    /// How many messages the last request sent (what its report covered).
    pub fn last_sent_messages(&self) -> usize {
        self.previous.map_or(0, |(count, _)| count)
    }

    pub fn billed(&self) -> f64 {
        self.requests.iter().map(Billed::cost).sum()
    }

    /// The share of re-sent tokens read from the cache, over requests whose message list did
    /// not shrink (summary requests aside).
    pub fn cache_share(&self) -> f64 {
        let counted = self
            .requests
            .iter()
            .filter(|billed| billed.kind == "request" && !billed.shrank && billed.resent > 0);
        let (read, resent) = counted.fold((0, 0), |(read, resent), billed| {
            (
                read + billed.read.min(billed.resent),
                resent + billed.resent,
            )
        });
        read as f64 / resent.max(1) as f64
    }

    pub fn peak(&self) -> u64 {
        self.requests
            .iter()
            .map(|billed| billed.context)
            .max()
            .unwrap_or(0)
    }

    pub fn count(&self, step: &str) -> usize {
        self.requests
            .iter()
            .filter(|billed| billed.steps.split('+').any(|name| name == step))
            .count()
    }
}

/// The content blocks of `messages`.
fn blocks(messages: &[Message]) -> usize {
    messages.iter().map(|message| message.content.len()).sum()
}
