//! What the pipeline remembers between requests, and how it learns from each one: the
//! sticky decisions, what the last request sent and when, the estimate's calibration, how
//! fast requests grow, and the reads carried since the prefix was last rewritten.

use std::sync::MutexGuard;
use std::time::Instant;

use cairn_protocol::{Compaction, Message};

use super::accounting::{self, Calibration, messages_tokens};
use super::collapse::Collapsed;
use super::microcompact;
use super::settings::Limits;
use super::view::ViewDecisions;
use super::{Projection, StandardPipeline, TokenAccounting};

/// What the pipeline remembers between requests.
#[derive(Debug, Default)]
pub(super) struct PipelineState {
    /// What snip and microcompact decided: sticky until autocompact rewrites the conversation.
    pub(super) decisions: ViewDecisions,
    /// How many leading messages of the conversation requests show collapsed (0: none):
    /// extended, never undone, until autocompact rewrites the conversation.
    pub(super) collapsed_through: usize,
    /// The log written for that collapse, kept for the next requests.
    pub(super) collapsed: Collapsed,
    /// What the last report taught about the estimate.
    pub(super) calibration: Calibration,
    /// The estimated tokens of the last projection's messages, as running totals, so the next
    /// report can be matched with the messages it counted.
    pub(super) last_sent: Vec<u64>,
    /// When the last request went out.
    pub(super) last_request: Option<Instant>,
    /// What the last request sent, to know what of the next one the cache holds.
    pub(super) last_view: Vec<Message>,
    /// Resumed: how many stored messages the earlier run's last request sent, until the first
    /// request takes them as `last_view`.
    pub(super) resumed_sent: Option<usize>,
    /// The estimated tokens of the last request.
    pub(super) last_size: Option<u64>,
    /// The stable prefix the last request marked ([`Projection::stable_prefix`]).
    pub(super) last_stable_prefix: Option<usize>,
    /// How many tokens a request adds, on average of the recent ones; `None` before two.
    pub(super) growth: Option<f64>,
    /// The reads paid since the prefix was last rewritten for tokens snip and microcompact
    /// could have left out: once they reach the cost of the rewrite, it is made.
    pub(super) carried: f64,
    /// The same for the turns a collapse could have left out.
    pub(super) collapse_carried: f64,
    /// Automatic summaries that failed in a row.
    pub(super) summary_failures: u32,
    /// Why the last automatic summary failed.
    pub(super) last_failure: Option<String>,
}

impl StandardPipeline {
    pub(super) fn state(&self) -> MutexGuard<'_, PipelineState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Learns from the API's last report; returns the calibration for this request.
    pub(super) fn calibrate(&self, accounting: &TokenAccounting, view: &[Message]) -> Calibration {
        let mut state = self.state();
        if let Some((reported, sent)) = accounting.last_reported {
            let sent_estimate = match sent.checked_sub(1) {
                None => 0,
                Some(last) => match state.last_sent.get(last) {
                    Some(&total) => total,
                    // A pipeline that did not make the request (a resumed session): the view
                    // starts with what was sent.
                    None => messages_tokens(&view[..sent.min(view.len())]),
                },
            };
            state.calibration = Calibration::learn(reported, sent_estimate);
        }
        state.calibration
    }

    /// The tokens a request adds, on average (the newest counting most), learned from this
    /// request's `estimate` against the last one's; a window's hundredth before any is seen.
    pub(super) fn learn_growth(
        &self,
        estimate: u64,
        last_size: Option<u64>,
        limits: Limits,
    ) -> f64 {
        let mut state = self.state();
        if let Some(added) = last_size
            .map(|last| estimate.saturating_sub(last))
            .filter(|&added| added > 0)
        {
            let added = added as f64;
            state.growth = Some(state.growth.map_or(added, |seen| 0.7 * seen + 0.3 * added));
        }
        state.growth.unwrap_or(limits.window as f64 / 100.0)
    }

    /// Keeps what the next request needs to know and hands the projection over.
    pub(super) fn finish(
        &self,
        view: Vec<Message>,
        decisions: ViewDecisions,
        collapsed: Collapsed,
        (now, warm): (Instant, bool),
        compactions: Vec<Compaction>,
        notices: Vec<String>,
    ) -> Projection {
        let mut state = self.state();
        // The frontier under the decisions the previous request went out with: where this
        // request's clear (if any) began, so the mark finds what that request cached.
        let prefix_rewritten = !warm
            || compactions.iter().any(|compaction| {
                compaction.summary.is_some() || compaction.collapsed_through.is_some()
            });
        let summarised = compactions
            .iter()
            .any(|compaction| compaction.summary.is_some());
        let stable_prefix = if summarised {
            None
        } else {
            microcompact::frontier(&view, &state.decisions)
        };
        state.last_stable_prefix = stable_prefix;
        state.decisions = decisions;
        state.collapsed_through = collapsed.through();
        state.collapsed = collapsed;
        state.last_request = Some(now);
        let mut total = 0;
        state.last_sent = view
            .iter()
            .map(|message| {
                total += accounting::message_tokens(message);
                total
            })
            .collect();
        state.last_size = Some(state.calibration.estimate_from(total));
        state.last_view = view.clone();
        Projection {
            messages: view,
            compactions,
            notices,
            stable_prefix,
            prefix_rewritten,
        }
    }
}
