//! Which engine events become transcript entries.
//!
//! Every face of the engine (headless, interactive, SDK) records the same way: each event
//! that matters for replay is turned into an [`Entry`] the moment it arrives.

use cairn_protocol::{AgentEvent, Compaction, TurnEnd, TurnSummary};

use crate::Entry;
use crate::entry::{
    AssistantEntry, CollapseEntry, CompactionEntry, PermissionEntry, PermissionOutcome, now_ms,
};

/// The transcript entry for `event`, or `None` for events that are not part of the history
/// (deltas, retries, warnings, the end of a turn that did not fail).
pub fn entry_for(event: &AgentEvent) -> Option<Entry> {
    match event {
        AgentEvent::UserMessage { message } => Some(Entry::user(message.clone())),
        // The engine does not keep an empty answer in the conversation; neither does the file.
        AgentEvent::AssistantMessage { message, .. } if message.content.is_empty() => None,
        AgentEvent::AssistantMessage {
            message,
            id,
            model,
            usage,
            cost_usd,
            ..
        } => Some(Entry::Assistant(AssistantEntry {
            timestamp: now_ms(),
            message: message.clone(),
            model: model.clone(),
            message_id: Some(id.clone()),
            usage: *usage,
            cost_usd: *cost_usd,
        })),
        AgentEvent::ToolResultsMessage { message } => Some(Entry::tool_results(message.clone())),
        AgentEvent::TodosChanged { todos } => Some(Entry::todos(todos.clone())),
        AgentEvent::ModelChanged { model } => Some(Entry::model_change(model.clone())),
        AgentEvent::PermissionDecided(decision) => Some(Entry::Permission(PermissionEntry {
            timestamp: now_ms(),
            tool_name: decision.tool.clone(),
            tool_use_id: decision.tool_use_id.clone(),
            decision: if decision.allowed {
                PermissionOutcome::Allow
            } else {
                PermissionOutcome::Deny
            },
            rule: decision.rule.clone(),
            reason: decision.reason.clone(),
        })),
        AgentEvent::Compacted(Compaction {
            summary: Some(summary),
            tokens_before,
            tokens_after,
            opening,
            ..
        }) => Some(Entry::Compaction(CompactionEntry {
            timestamp: now_ms(),
            summary: summary.clone(),
            tokens_before: *tokens_before,
            tokens_after: *tokens_after,
            opening: opening.clone(),
        })),
        AgentEvent::Compacted(Compaction {
            collapsed_through: Some(collapsed_through),
            tokens_before,
            tokens_after,
            ..
        }) => Some(Entry::Collapse(CollapseEntry {
            timestamp: now_ms(),
            collapsed_through: *collapsed_through,
            tokens_before: *tokens_before,
            tokens_after: *tokens_after,
        })),
        AgentEvent::TurnFinished(TurnSummary {
            end: TurnEnd::Failed { message },
            ..
        }) => Some(Entry::turn_failed(message.clone())),
        AgentEvent::Compacted(_)
        | AgentEvent::SideRequests(_)
        | AgentEvent::TextDelta { .. }
        | AgentEvent::ThinkingDelta { .. }
        | AgentEvent::ToolCallStarted { .. }
        | AgentEvent::ToolCallInputComplete { .. }
        | AgentEvent::ToolCallResult { .. }
        | AgentEvent::Retrying(_)
        | AgentEvent::PermissionRequested { .. }
        | AgentEvent::Warning { .. }
        | AgentEvent::Debug { .. }
        | AgentEvent::PermissionModeChanged { .. }
        | AgentEvent::TurnFinished(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{ContentBlock, Message, Role, Usage};

    use super::*;

    #[test]
    fn history_events_become_entries_and_deltas_do_not() {
        let user = Message::user_text("hi");
        assert!(matches!(
            entry_for(&AgentEvent::UserMessage { message: user }),
            Some(Entry::User(_))
        ));
        assert_eq!(entry_for(&AgentEvent::TextDelta { text: "x".into() }), None);
        let empty = AgentEvent::AssistantMessage {
            message: Message {
                role: Role::Assistant,
                content: Vec::new(),
            },
            id: "msg".into(),
            model: "m".into(),
            stop_reason: None,
            usage: Usage::default(),
            cost_usd: 0.0,
        };
        assert_eq!(entry_for(&empty), None);
        let answer = AgentEvent::AssistantMessage {
            message: Message {
                role: Role::Assistant,
                content: vec![ContentBlock::text("yo")],
            },
            id: "msg_1".into(),
            model: "m".into(),
            stop_reason: None,
            usage: Usage::default(),
            cost_usd: 0.5,
        };
        match entry_for(&answer) {
            Some(Entry::Assistant(entry)) => {
                assert_eq!(entry.message_id.as_deref(), Some("msg_1"));
                assert_eq!(entry.cost_usd, 0.5);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_failed_turn_is_recorded_and_other_ends_are_not() {
        let finished = |end| {
            AgentEvent::TurnFinished(TurnSummary {
                op_id: String::new(),
                end,
                result: String::new(),
                requests: 0,
                usage: Usage::default(),
                cost_usd: 0.0,
                cost_unknown: false,
                duration_api_ms: 0,
            })
        };
        let failed = entry_for(&finished(TurnEnd::Failed {
            message: "connection error: refused".into(),
        }));
        match failed {
            Some(Entry::TurnFailed(entry)) => {
                assert_eq!(entry.message, "connection error: refused");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(entry_for(&finished(TurnEnd::Completed)), None);
        assert_eq!(entry_for(&finished(TurnEnd::Interrupted)), None);
    }
}
