//! Side requests in the turn's totals: what the session's [`SideTally`] gathered (WebFetch's
//! answers, web searches, memory recall) and what a compaction's summaries cost go into the
//! turn's usage and cost, and each model's share is told to the faces, which show them by
//! model (`modelUsage`, `/cost`).
//!
//! [`SideTally`]: cairn_llm::SideTally

use cairn_protocol::{AgentEvent, EventSender, SideRequests};

use super::Engine;
use super::turn::TurnTally;

impl Engine {
    /// Empties the session's side tally into `tally`.
    pub(super) fn count_side_requests(&self, tally: &mut TurnTally, events: &EventSender) {
        for side in self.side_tally.take() {
            add_side_requests(tally, side, events);
        }
    }
}

/// Adds one model's side requests to the turn's usage and cost, and tells the faces.
pub(super) fn add_side_requests(tally: &mut TurnTally, side: SideRequests, events: &EventSender) {
    tally.usage += side.usage;
    tally.add_cost(side.cost_usd);
    events.emit(AgentEvent::SideRequests(side));
}
