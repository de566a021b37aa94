//! The context pipeline: what of the conversation each request sends.
//!
//! The engine owns the conversation (the message list is the state); before every request it
//! hands it to a [`ContextPipeline`] with the token accounting so far, and sends what the
//! pipeline projects. The pipeline compresses as late and as lightly as possible: step 1,
//! [`spill`], already acts on every tool-results message before it joins the conversation
//! ([`ContextPipeline::admit_tool_results`]); the later steps (snip, microcompact, collapse,
//! autocompact) act in [`ContextPipeline::project`], where a step that rewrites the stored
//! conversation (autocompact) does so in place and gives the summary in its [`Compaction`]. The
//! summary itself comes from the engine's [`Summarizer`] (the session's own model).
//!
//! [`StandardPipeline`] is the pipeline of a session:
//!
//! | step | module | when |
//! |---|---|---|
//! | 1 spill | [`spill`] | every tool result |
//! | 2 snip | [`snip`] | past half of autocompact's threshold, when the [`cost`] model says it pays: free on a cold cache; on a warm one once the reads saved before the next compaction cover the rewrite and the reads carried since the last rewrite have reached it (batching); over the collapse threshold, when it relieves the window more cheaply than the summary that would follow |
//! | 3 microcompact | [`microcompact`] | with snip, priced together (one rewrite) |
//! | 4 collapse | [`collapse`] | over the collapse threshold, down to 60% of autocompact's; below it, as far as it may go, where what snip and microcompact leave is over a third of autocompact's threshold and the cost model says it pays on a warm cache |
//! | 5 autocompact | [`autocompact`] | still over the autocompact threshold (window pressure, never priced); `/compact`; the API refused a request as too long |
//!
//! Steps 2 to 4 are decisions over a read-time view ([`view`], [`collapse`]): the stored
//! conversation keeps every message and the decisions are sticky, so each later request
//! repeats the same bytes and the prompt cache keeps serving them. How far the view is
//! collapsed is reported ([`Compaction::collapsed_through`]) for the session to record, and
//! given back on resume ([`StandardPipeline::with_collapsed_through`]).

pub mod accounting;
pub mod autocompact;
pub mod carried_skills;
pub mod collapse;
pub mod cost;
pub mod microcompact;
pub mod settings;
pub mod snip;
pub mod spill;
mod state;
pub mod view;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use cairn_llm::registry::PromptCache;
use cairn_protocol::{BoxFuture, Compaction, ContentBlock, Message};

use accounting::{Calibration, messages_tokens};
use collapse::Collapsed;
use cost::{CacheState, Quote, Verdict};
pub use settings::{Limits, PipelineSettings};
use spill::{SpillCandidate, Spilled, apply_budget};
use state::PipelineState;
use view::ViewDecisions;

/// What is known about the window before a request.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TokenAccounting {
    /// The input tokens the API reported for the last request (cached and uncached together),
    /// and how many messages of the conversation that request sent; `None` before the first
    /// answer. Messages after those are estimated ([`crate::estimate_tokens`]).
    pub last_reported: Option<(u64, usize)>,
    /// The model's context window, in tokens; `None` when unknown.
    pub context_window: Option<u64>,
    /// The output tokens each request reserves.
    pub max_output_tokens: u32,
    /// How the provider caches prompt prefixes and bills the cache
    /// ([`cairn_llm::registry::ModelInfo::prompt_cache`]): the weights of every change to what
    /// was already sent. `None`: unknown, taken as Anthropic's default
    /// ([`PromptCache::ANTHROPIC`]).
    pub prompt_cache: Option<PromptCache>,
}

/// What one request sends, and what the pipeline did to get there.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    /// The messages the request sends: the stored conversation, possibly cut, collapsed or
    /// with old tool results cleared.
    pub messages: Vec<Message>,
    /// Each step that made the conversation smaller, for the face and the session.
    pub compactions: Vec<Compaction>,
    /// What the user should be told though the request goes ahead: an automatic compaction
    /// that failed, the circuit breaker that stopped trying.
    pub notices: Vec<String>,
    /// How many leading messages of `messages` a clear of old results would leave as they
    /// were in the previous request ([`microcompact::frontier`] under the decisions that
    /// request was sent with), for a marked prompt cache to mark; `None` after a summary
    /// and where nothing is left to clear.
    pub stable_prefix: Option<usize>,
    /// Whether this request writes its cached prefix again anyway: the prompt cache has gone
    /// cold (or there is none), or a summary or a collapse rewrote the conversation from its
    /// start (taking with it the older turns' tool results, where found tools' definitions
    /// were). Tools found since the last such request join the tool list here (the tool
    /// executor's `commit_loads`): a change to the tool list, which comes first, rewrites
    /// all that follows, so it is made when that costs the least, or no longer waits.
    pub prefix_rewritten: bool,
}

/// Why the pipeline is asked to compact now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// Before a request, as the thresholds say (the usual case).
    Auto,
    /// The user asked (`/compact [instructions]`): compact now, whatever the size.
    Manual {
        /// What the summary should keep or stress; `None` for the default summary.
        instructions: Option<String>,
    },
    /// The API refused the last request as too long: compact now, then the request is retried
    /// once.
    Reactive,
}

/// Asks the session's model for a summary of the conversation, reusing the conversation's
/// cached prefix (the same system prompt and tools, `tool_choice: none`). The engine
/// implements it; it also runs the PreCompact hooks, which may refuse (`Err`).
pub trait Summarizer: Send + Sync {
    /// The summary of `conversation`, written as `instructions` ask (the pipeline's request
    /// for a summary, with the user's words on `/compact`); `Err` says in words for the user
    /// why there is none.
    fn summarize<'a>(
        &'a self,
        conversation: Vec<Message>,
        instructions: String,
        trigger: &'a Trigger,
    ) -> BoxFuture<'a, Result<String, String>>;
}

/// Why a request cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PipelineError {
    /// Over the hard limit and compaction failed or is off: sending would be refused.
    #[error("{0}")]
    Blocked(String),
    /// `/compact` could not be done (compaction is off, or the summary failed); the
    /// conversation is as it was.
    #[error("{0}")]
    CompactionFailed(String),
}

/// Projects the conversation into what fits the window.
pub trait ContextPipeline: Send + Sync + std::fmt::Debug {
    /// Step 1: one message's tool results, made to fit the budget before they join the
    /// conversation. Returns what was spilled, so the user can be told.
    fn admit_tool_results(&self, results: &mut [ContentBlock]) -> Vec<Spilled>;

    /// Before every request (and on `/compact`, and after the API refused a request as too
    /// long): the messages to send. A step that rewrites the stored conversation
    /// (autocompact) does so in `conversation` and reports it as a [`Compaction`] with its
    /// summary and the new conversation's opening messages.
    fn project<'a>(
        &'a self,
        conversation: &'a mut Vec<Message>,
        accounting: TokenAccounting,
        trigger: Trigger,
        summarizer: &'a dyn Summarizer,
    ) -> BoxFuture<'a, Result<Projection, PipelineError>>;
}

/// The time, for the pipeline's judgement of whether the prompt cache is still warm. Tests and
/// the benchmark give a clock they move by hand.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// The machine's monotonic clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// Anthropic's prompt cache forgets a prefix unused for this long (its default entries; the
/// pipeline reads the model's own from [`TokenAccounting::prompt_cache`]).
pub const CACHE_TTL: Duration = PromptCache::ANTHROPIC.ttl;

/// Consecutive failed automatic summaries after which the pipeline stops trying (the circuit
/// breaker); a `/compact` that succeeds closes it again.
pub const MAX_SUMMARY_FAILURES: u32 = 3;

/// The pipeline of a session: large results spill to `spill_dir`; before each request the
/// conversation is snipped, microcompacted and autocompacted as the window requires (see the
/// module's table).
///
/// ```
/// use std::sync::Arc;
/// use cairn_context::pipeline::{PipelineSettings, StandardPipeline, SystemClock};
///
/// let pipeline = StandardPipeline::new("/tmp/session/tool-results".into())
///     .with_settings(PipelineSettings { auto_compact: false, ..PipelineSettings::default() })
///     .with_clock(Arc::new(SystemClock));
/// # let _ = pipeline;
/// ```
#[derive(Debug)]
pub struct StandardPipeline {
    spill_dir: PathBuf,
    settings: PipelineSettings,
    clock: Arc<dyn Clock>,
    state: Mutex<PipelineState>,
}

impl StandardPipeline {
    /// A pipeline spilling to `spill_dir`, with the default settings (autocompact on) and the
    /// system clock.
    pub fn new(spill_dir: PathBuf) -> Self {
        StandardPipeline {
            spill_dir,
            settings: PipelineSettings::default(),
            clock: Arc::new(SystemClock),
            state: Mutex::new(PipelineState::default()),
        }
    }

    /// The same pipeline, configured by `settings`
    /// ([`PipelineSettings::from_env_and_settings`]).
    pub fn with_settings(mut self, settings: PipelineSettings) -> Self {
        self.settings = settings;
        self
    }

    /// The same pipeline, telling time by `clock`.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The same pipeline, for a resumed conversation whose first `collapsed_through` messages
    /// an earlier run showed collapsed (the last [`Compaction::collapsed_through`] the session
    /// recorded after its last compaction boundary): requests show the same view again. A mark
    /// that does not fit the conversation (not at a prompt after a model message) is ignored.
    pub fn with_collapsed_through(self, collapsed_through: u64) -> Self {
        self.state().collapsed_through = usize::try_from(collapsed_through).unwrap_or(0);
        self
    }

    /// The same pipeline, for a resumed conversation whose last request went out at `at` (the
    /// session file's last answer), sending its first `sent` messages: the prompt cache is
    /// known warm or cold from that, as if this pipeline had sent it. The first request takes
    /// the cache to hold what the stored conversation shows (exact when the last run cleared
    /// nothing; its decisions are made again, not restored). Give the clock first
    /// ([`StandardPipeline::with_clock`]); a time in the future counts as now.
    pub fn with_last_request_at(self, at: SystemTime, sent: usize) -> Self {
        let age = SystemTime::now().duration_since(at).unwrap_or_default();
        {
            let mut state = self.state();
            state.last_request = self.clock.now().checked_sub(age);
            state.resumed_sent = state.last_request.map(|_| sent);
        }
        self
    }

    /// Asks for the summary and rewrites `conversation` around it.
    async fn autocompact(
        &self,
        conversation: &mut Vec<Message>,
        view: &[Message],
        calibration: Calibration,
        limits: Limits,
        trigger: &Trigger,
        summarizer: &dyn Summarizer,
    ) -> Result<Compaction, String> {
        let before = calibration.estimate(view);
        let instructions = autocompact::summary_instructions(trigger);
        let input = autocompact::summary_input(view, &instructions, calibration, limits);
        let answer = summarizer.summarize(input, instructions, trigger).await?;
        let summary = autocompact::clean_summary(&answer);
        if summary.is_empty() {
            return Err("the model's summary was empty".into());
        }
        let rebuilt = autocompact::rebuild_within(
            conversation,
            &summary,
            trigger,
            limits,
            messages_tokens(view),
        );
        let after = calibration.estimate(&rebuilt);
        if after >= before {
            return Err(format!(
                "there was nothing to gain: the summary with what it carries over comes to about \
                 {after} tokens, and the conversation is about {before}"
            ));
        }
        *conversation = rebuilt.clone();
        Ok(Compaction {
            step: "autocompact".into(),
            manual: matches!(trigger, Trigger::Manual { .. }),
            tokens_before: before,
            tokens_after: after,
            summary: Some(summary),
            opening: rebuilt,
            collapsed_through: None,
        })
    }

    async fn project_now(
        &self,
        conversation: &mut Vec<Message>,
        accounting: TokenAccounting,
        trigger: Trigger,
        summarizer: &dyn Summarizer,
    ) -> Result<Projection, PipelineError> {
        let now = self.clock.now();
        let limits = self.settings.limits(accounting.context_window);
        let prompt_cache = accounting.prompt_cache.unwrap_or(PromptCache::ANTHROPIC);
        let (mut decisions, cache, mut collapsed, previous, last_size) = {
            let state = self.state();
            let cache = CacheState::after(
                prompt_cache,
                state
                    .last_request
                    .map(|last| now.saturating_duration_since(last)),
            )
            .with_stable_prefix(state.last_stable_prefix);
            let mark = state.collapsed_through;
            // The log is written once per mark (a restored mark has none yet), and a mark
            // that no longer fits the conversation is dropped.
            let collapsed =
                if state.collapsed.through() == mark && collapse::is_boundary(conversation, mark) {
                    state.collapsed.clone()
                } else {
                    Collapsed::new(conversation, mark)
                };
            (
                state.decisions.clone(),
                cache,
                collapsed,
                state.last_view.clone(),
                state.last_size,
            )
        };
        let mut view = collapsed.project(conversation, &decisions);
        // Resumed: the last request, made by an earlier run, sent the stored conversation.
        let resumed_sent = self.state().resumed_sent.take();
        let previous = match resumed_sent {
            Some(sent) if previous.is_empty() => {
                let added = conversation.len().saturating_sub(sent);
                view[..view.len().saturating_sub(added)].to_vec()
            }
            _ => previous,
        };
        let calibration = self.calibrate(&accounting, &view);
        let mut estimate = calibration.estimate(&view);
        let growth = self.learn_growth(estimate, last_size, limits);
        let mut compactions = Vec::new();
        let mut notices = Vec::new();

        if !self.settings.compact {
            return match trigger {
                Trigger::Manual { .. } => Err(PipelineError::CompactionFailed(
                    "Compaction is turned off (DISABLE_COMPACT).".into(),
                )),
                Trigger::Auto | Trigger::Reactive if estimate < limits.hard_limit => Ok(self
                    .finish(
                        view,
                        decisions,
                        collapsed,
                        (now, cache.warm),
                        compactions,
                        notices,
                    )),
                Trigger::Auto | Trigger::Reactive => Err(blocked(
                    estimate,
                    limits,
                    "compaction is turned off (DISABLE_COMPACT)",
                )),
            };
        }

        // Steps 2 and 3, priced: on a warm cache a change rewrites the cached
        // prefix from the first changed block on (from the stable prefix's mark, where the
        // last request marked one), so it is made when it pays and waiting no longer does
        // ([`cost`]); a cold cache makes it free. Over the collapse threshold they are also
        // taken when they relieve the window more cheaply than the summary that would come
        // instead; a reactive compaction takes them too, to send the summary less. They act
        // on what the view shows uncollapsed.
        // Below half the autocompact threshold nothing is cleared, however cheap: the model
        // keeps what it read while there is room for it (a clear only saves money, and the
        // model may have to read again what was cleared).
        let pressure = estimate >= limits.collapse_at;
        let worth_trying = match trigger {
            Trigger::Auto => pressure || estimate >= limits.autocompact_at / 2,
            Trigger::Reactive => true,
            Trigger::Manual { .. } => false,
        };
        // The lighter steps' decisions when they did not pay on their own.
        let mut declined: Option<(ViewDecisions, Vec<Compaction>)> = None;
        // Below the gate the clear is still priced, though not made: the reads carried for
        // what it would clear count from the last rewrite of the prefix, so once the gate
        // opens the batching rule knows what waiting has cost already.
        if worth_trying || matches!(trigger, Trigger::Auto) {
            let shown = &conversation[collapsed.through()..];
            let mut trial = decisions.clone();
            let mut steps = Vec::new();
            let mut size = estimate;
            let mut step = |name: &str, added: usize, trial: &ViewDecisions, size: &mut u64| {
                if added > 0 {
                    let after = calibration.estimate(&collapsed.project(conversation, trial));
                    steps.push(view_compaction(name, *size, after));
                    *size = after;
                }
            };
            let snipped = snip::snip(shown, &mut trial);
            step("snip", snipped, &trial, &mut size);
            let budget = (limits.window / 10).max(microcompact::MIN_KEPT_TOKENS);
            let keep = microcompact::recent_to_keep(shown, &trial, budget);
            let cleared = microcompact::microcompact(shown, &mut trial, keep);
            step("microcompact", cleared, &trial, &mut size);
            if !steps.is_empty() {
                let trial_view = collapsed.project(conversation, &trial);
                let quote = Quote::new(
                    &cache,
                    &previous,
                    (&view, estimate),
                    (&trial_view, size),
                    calibration.overhead(),
                );
                let carried = self.state().carried + quote.saving_per_request;
                let horizon = cost::horizon(size, limits.autocompact_at, growth);
                let verdict = cost::judge(&quote, carried, horizon);
                // Under pressure a clear that relieves the window is weighed against the
                // summary that would come instead: the cheaper way through the next requests.
                let relieves = size + limits.window / 20 <= limits.collapse_at;
                let summary_left = self.settings.auto_compact
                    && self.state().summary_failures < MAX_SUMMARY_FAILURES;
                let beats_summary = !summary_left
                    || cost::clearing_beats_summary(
                        &cache,
                        quote.extra(),
                        size,
                        (
                            calibration.overhead(),
                            calibration.overhead() + limits.window / 6,
                        ),
                        limits.autocompact_at,
                        growth,
                    );
                let take = match trigger {
                    Trigger::Auto => {
                        worth_trying
                            && (matches!(verdict, Verdict::Free | Verdict::Pays)
                                || (pressure && relieves && beats_summary))
                    }
                    Trigger::Reactive | Trigger::Manual { .. } => true,
                };
                if take {
                    decisions = trial;
                    view = trial_view;
                    estimate = size;
                    compactions.extend(steps);
                    self.state().carried = 0.0;
                } else {
                    // A cold cache rewrites the whole prefix anyway: the reads carried start
                    // again from this request.
                    self.state().carried = if cache.warm { carried } else { 0.0 };
                    declined = Some((trial, steps));
                }
            }
        }

        // Step 4: still over the collapse threshold, older turns go out as a log; below it,
        // where what the lighter steps leave is still over half the autocompact threshold
        // (answers and prompts, which they cannot clear), when the cost model says it pays,
        // as far as it can go. Collapsing rewrites the request from its first message, so
        // the lighter steps' declined decisions come along at no further cost.
        if matches!(trigger, Trigger::Auto) {
            let (base, steps) = declined.unwrap_or_else(|| (decisions.clone(), Vec::new()));
            let lightest = steps.last().map_or(estimate, |step| step.tokens_after);
            let chosen = if estimate >= limits.collapse_at {
                collapse::choose(
                    conversation,
                    collapsed.through(),
                    &base,
                    calibration,
                    limits,
                )
                .map(|through| {
                    let further = Collapsed::new(conversation, through);
                    let shown = further.project(conversation, &base);
                    (further, shown)
                })
            } else if worth_trying && lightest >= limits.autocompact_at / 3 {
                collapse::furthest(conversation, collapsed.through()).and_then(|through| {
                    let further = Collapsed::new(conversation, through);
                    let shown = further.project(conversation, &base);
                    let after = calibration.estimate(&shown);
                    let quote = Quote::new(
                        &cache,
                        &previous,
                        (&view, estimate),
                        (&shown, after),
                        calibration.overhead(),
                    );
                    let mut state = self.state();
                    let carried = state.collapse_carried + quote.saving_per_request;
                    let horizon = cost::horizon(after, limits.autocompact_at, growth);
                    match cost::judge(&quote, carried, horizon) {
                        Verdict::Pays => Some((further, shown)),
                        Verdict::Free | Verdict::Waits | Verdict::DoesNotPay => {
                            if cache.warm {
                                state.collapse_carried = carried;
                            }
                            None
                        }
                    }
                })
            } else {
                None
            };
            if let Some((further, collapsed_view)) = chosen {
                let through = further.through();
                let after = calibration.estimate(&collapsed_view);
                let before = lightest;
                compactions.extend(steps);
                compactions.push(Compaction {
                    collapsed_through: Some(through as u64),
                    ..view_compaction("collapse", before, after)
                });
                decisions = base;
                collapsed = further;
                view = collapsed_view;
                estimate = after;
                let mut state = self.state();
                state.carried = 0.0;
                state.collapse_carried = 0.0;
            }
        }

        let (failures, last_failure) = {
            let state = self.state();
            (state.summary_failures, state.last_failure.clone())
        };
        let summarize = match &trigger {
            Trigger::Auto => {
                estimate >= limits.autocompact_at
                    && self.settings.auto_compact
                    && failures < MAX_SUMMARY_FAILURES
            }
            Trigger::Reactive => failures < MAX_SUMMARY_FAILURES,
            Trigger::Manual { .. } => true,
        };
        let mut failure = None;
        if summarize {
            match self
                .autocompact(
                    conversation,
                    &view,
                    calibration,
                    limits,
                    &trigger,
                    summarizer,
                )
                .await
            {
                Ok(compaction) => {
                    decisions = ViewDecisions::default();
                    collapsed = Collapsed::default();
                    view = conversation.clone();
                    estimate = compaction.tokens_after;
                    compactions.push(compaction);
                    let mut state = self.state();
                    state.summary_failures = 0;
                    state.last_failure = None;
                    state.carried = 0.0;
                    state.collapse_carried = 0.0;
                }
                Err(reason) => {
                    if let Trigger::Manual { .. } = trigger {
                        return Err(PipelineError::CompactionFailed(format!(
                            "Compaction failed: {reason}. The conversation is unchanged."
                        )));
                    }
                    let mut state = self.state();
                    state.summary_failures += 1;
                    state.last_failure = Some(reason.clone());
                    notices.push(if state.summary_failures >= MAX_SUMMARY_FAILURES {
                        format!(
                            "Automatic compaction failed {MAX_SUMMARY_FAILURES} times in a row (the \
                             last time: {reason}); it will not be tried again this session. \
                             /compact can still be run by hand."
                        )
                    } else {
                        format!(
                            "Automatic compaction failed ({reason}); attempt {} of {MAX_SUMMARY_FAILURES}.",
                            state.summary_failures
                        )
                    });
                    failure = Some(state.summary_failures);
                }
            }
        }

        let compacted = compactions
            .iter()
            .any(|compaction| compaction.summary.is_some());
        let over = match trigger {
            Trigger::Manual { .. } => false,
            Trigger::Auto => estimate >= limits.hard_limit,
            // The API said it is too long, whatever the estimate says.
            Trigger::Reactive => !compacted || estimate >= limits.hard_limit,
        };
        if over {
            let reason = if let Some(failures) = failure {
                let reason = notices.last().cloned().unwrap_or_default();
                if failures >= MAX_SUMMARY_FAILURES {
                    format!("automatic compaction has stopped trying: {reason}")
                } else {
                    format!("the summary failed: {reason}")
                }
            } else if failures >= MAX_SUMMARY_FAILURES {
                format!(
                    "automatic compaction failed {failures} times in a row and has stopped trying \
                     this session (the last time: {})",
                    last_failure.as_deref().unwrap_or("no reason given")
                )
            } else {
                "automatic compaction is turned off (autoCompactEnabled, DISABLE_AUTO_COMPACT)"
                    .to_string()
            };
            return Err(blocked(estimate, limits, &reason));
        }
        Ok(self.finish(
            view,
            decisions,
            collapsed,
            (now, cache.warm),
            compactions,
            notices,
        ))
    }
}

/// A step that changed only what requests send.
fn view_compaction(step: &str, before: u64, after: u64) -> Compaction {
    Compaction {
        step: step.into(),
        manual: false,
        tokens_before: before,
        tokens_after: after,
        summary: None,
        opening: Vec::new(),
        collapsed_through: None,
    }
}

fn blocked(estimate: u64, limits: Limits, reason: &str) -> PipelineError {
    PipelineError::Blocked(format!(
        "The conversation is about {estimate} tokens, too close to the model's {}-token window to \
         send (the limit is {}), and {}. Run /compact to summarize it, or /clear to start \
         over.",
        limits.window,
        limits.hard_limit,
        reason.trim_end_matches('.')
    ))
}

impl ContextPipeline for StandardPipeline {
    fn admit_tool_results(&self, results: &mut [ContentBlock]) -> Vec<Spilled> {
        let mut candidates: Vec<SpillCandidate<'_>> = results
            .iter_mut()
            .filter_map(|block| match block {
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } => Some(SpillCandidate {
                    tool_use_id: tool_use_id.as_str(),
                    content,
                }),
                _ => None,
            })
            .collect();
        apply_budget(&mut candidates, &self.spill_dir)
    }

    fn project<'a>(
        &'a self,
        conversation: &'a mut Vec<Message>,
        accounting: TokenAccounting,
        trigger: Trigger,
        summarizer: &'a dyn Summarizer,
    ) -> BoxFuture<'a, Result<Projection, PipelineError>> {
        Box::pin(self.project_now(conversation, accounting, trigger, summarizer))
    }
}

#[cfg(test)]
mod tests;
