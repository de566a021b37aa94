//! Where the engine's events go.

use cairn_protocol::AgentEvent;
use tokio::sync::mpsc::UnboundedSender;

/// Receives the engine's events in order. Implementations must not block for long: the
/// engine calls `emit` between stream chunks.
pub trait EventSink: Send {
    fn emit(&mut self, event: AgentEvent);
}

impl EventSink for UnboundedSender<AgentEvent> {
    fn emit(&mut self, event: AgentEvent) {
        // A receiver that went away means nobody is listening any more; the turn still
        // finishes so the conversation stays consistent.
        let _ = self.send(event);
    }
}

impl EventSink for Vec<AgentEvent> {
    fn emit(&mut self, event: AgentEvent) {
        self.push(event);
    }
}
