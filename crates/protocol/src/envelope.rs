//! Events with an address: which agent an event comes from, and the one way events leave an
//! engine.
//!
//! The main agent and every sub-agent it starts emit into the same stream. Each event travels
//! in an [`EventEnvelope`] naming its agent; the main agent's envelopes name none, a
//! sub-agent's name it and the `tool_use` id of the `Agent` call that started it (stream-json's
//! `parent_tool_use_id`). An [`EventSender`] is the cloneable handle an engine, a tool call or
//! a nested engine emits through: it stamps its own address on everything it sends.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::AgentEvent;

/// The agent an event comes from. The main agent is the default: no id, no parent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentAddress {
    /// The sub-agent's id; `None` for the main agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The `tool_use` id of the call that started this agent; `None` for the main agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tool_use_id: Option<String>,
}

impl AgentAddress {
    /// Whether this is the main agent (the one the user talks to).
    pub fn is_main(&self) -> bool {
        self.agent_id.is_none()
    }
}

/// One event and the agent it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventEnvelope {
    /// The agent that emitted the event; its fields sit beside `event` in the JSON.
    #[serde(flatten)]
    pub from: AgentAddress,
    /// What happened.
    pub event: AgentEvent,
}

/// Where envelopes go: a face's channel, a recorder, a test's list. Implementations must not
/// block for long: engines emit between stream chunks.
pub trait EventSink: Send + Sync {
    /// Takes one envelope, from whichever task emitted it (the engine's, a tool call's).
    fn emit(&self, envelope: EventEnvelope);

    /// The file a sub-agent's transcript is being written to, for sinks that record one
    /// (`SubagentStop` hooks are told it); `None` for every other sink.
    fn sub_agent_transcript(&self, _agent_id: &str) -> Option<std::path::PathBuf> {
        None
    }
}

/// Collects envelopes in memory, for tests and for faces that read them afterwards.
#[derive(Debug, Default)]
pub struct CollectedEvents(Mutex<Vec<EventEnvelope>>);

impl CollectedEvents {
    /// The envelopes so far, leaving none behind.
    pub fn take(&self) -> Vec<EventEnvelope> {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }
}

impl EventSink for CollectedEvents {
    fn emit(&self, envelope: EventEnvelope) {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(envelope);
    }
}

/// The handle events are emitted through: a sink and the address stamped on each event.
/// Cloning is cheap; a nested engine gets [`EventSender::nested`].
#[derive(Clone)]
pub struct EventSender {
    sink: Arc<dyn EventSink>,
    from: AgentAddress,
}

impl std::fmt::Debug for EventSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSender")
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

impl EventSender {
    /// The main agent's sender into `sink`.
    pub fn new(sink: Arc<dyn EventSink>) -> Self {
        EventSender {
            sink,
            from: AgentAddress::default(),
        }
    }

    /// A sender that drops everything, for work nobody watches.
    pub fn discard() -> Self {
        struct Discard;
        impl EventSink for Discard {
            fn emit(&self, _envelope: EventEnvelope) {}
        }
        EventSender::new(Arc::new(Discard))
    }

    /// Sends `event` to the sink, stamped with this sender's address.
    pub fn emit(&self, event: AgentEvent) {
        self.sink.emit(EventEnvelope {
            from: self.from.clone(),
            event,
        });
    }

    /// The sink this sender emits into.
    pub fn sink(&self) -> Arc<dyn EventSink> {
        self.sink.clone()
    }

    /// Who this sender speaks for.
    pub fn address(&self) -> &AgentAddress {
        &self.from
    }

    /// The file this sender's sub-agent's transcript goes to, if the sink records one; `None`
    /// for the main agent.
    pub fn sub_agent_transcript(&self) -> Option<std::path::PathBuf> {
        self.sink
            .sub_agent_transcript(self.from.agent_id.as_deref()?)
    }

    /// The sender for a sub-agent `agent_id` started by the call `parent_tool_use_id`: same
    /// sink, the sub-agent's address.
    pub fn nested(
        &self,
        agent_id: impl Into<String>,
        parent_tool_use_id: impl Into<String>,
    ) -> Self {
        EventSender {
            sink: self.sink.clone(),
            from: AgentAddress {
                agent_id: Some(agent_id.into()),
                parent_tool_use_id: Some(parent_tool_use_id.into()),
            },
        }
    }

    /// The same address into another sink (a recorder in front of the face's).
    pub fn with_sink(&self, sink: Arc<dyn EventSink>) -> Self {
        EventSender {
            sink,
            from: self.from.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_sender_stamps_its_address_and_shares_the_sink() {
        let collected = Arc::new(CollectedEvents::default());
        let main = EventSender::new(collected.clone());
        let child = main.nested("agent_1", "toolu_9");
        main.emit(AgentEvent::Warning {
            message: "main".into(),
        });
        child.emit(AgentEvent::Warning {
            message: "child".into(),
        });
        let envelopes = collected.take();
        assert_eq!(envelopes.len(), 2);
        assert!(envelopes[0].from.is_main());
        assert_eq!(
            envelopes[1].from,
            AgentAddress {
                agent_id: Some("agent_1".into()),
                parent_tool_use_id: Some("toolu_9".into()),
            }
        );
        let json = serde_json::to_value(&envelopes[0]).unwrap_or_default();
        assert_eq!(json.get("agent_id"), None, "the main agent has no id");
    }
}
