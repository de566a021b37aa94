//! `/context` and the status line's first estimate: what the app knows of the next request,
//! given to the estimate every face shares ([`cairn_core::reports`]).

use cairn_core::reports::{ContextFacts, ContextUsage, context_report};

use super::*;

impl App {
    /// The `/context` report.
    pub(super) fn context_report(&self) -> String {
        let system = self
            .config
            .system_prompt
            .as_ref()
            .map(|source| source.system_prompt());
        context_report(&ContextFacts {
            system_prompt: system.as_ref(),
            tools: &self.config.tool_specs,
            conversation: &self.conversation,
            last_request: self.last_request,
            window: self.status.context_window,
        })
    }
}

/// The estimated tokens of the next request with `conversation`, for the status line's gauge
/// before the first request reports the real count.
pub(super) fn estimated_tokens(config: &AppConfig, conversation: &[Message]) -> u64 {
    let system = config
        .system_prompt
        .as_ref()
        .map(|source| source.system_prompt());
    let estimate = ContextUsage::estimate(system.as_ref(), &config.tool_specs, conversation);
    u64::try_from(estimate.total()).unwrap_or(u64::MAX)
}
