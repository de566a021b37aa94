//! Where an engine's events go: into the face's channel, through the session recorder.

use std::sync::{Arc, Mutex};

use cairn_protocol::{AgentEvent, EventEnvelope, EventSink};
use cairn_session::{SessionLog, entry_for};
use tokio::sync::mpsc::UnboundedSender;

/// A face's channel as a sink: the TUI, `-p` and the SDK face each read one.
#[derive(Debug, Clone)]
pub struct ChannelSink(pub UnboundedSender<EventEnvelope>);

impl EventSink for ChannelSink {
    fn emit(&self, envelope: EventEnvelope) {
        // A receiver that went away means nobody listens any more; the turn still finishes
        // so the conversation stays consistent.
        let _ = self.0.send(envelope);
    }
}

/// Records the main agent's history in the session file before the face sees it: every
/// event that is part of the conversation becomes an entry the moment it passes, and the
/// file is synced at the end of each turn. This is the one place sessions are recorded, for
/// every face. A failure to write is reported once, as a warning, and the session carries on
/// in memory.
pub struct Recorder {
    log: Mutex<SessionLog>,
    next: Arc<dyn EventSink>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

impl Recorder {
    /// Records into `log` what passes on its way to `next`.
    pub fn new(log: SessionLog, next: Arc<dyn EventSink>) -> Self {
        Recorder {
            log: Mutex::new(log),
            next,
        }
    }
}

impl EventSink for Recorder {
    fn emit(&self, envelope: EventEnvelope) {
        if envelope.from.is_main() {
            let mut log = self
                .log
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some(entry) = entry_for(&envelope.event) {
                log.append(&entry);
            }
            // An approved plan is an entry of its own, after the results that approved it.
            if let AgentEvent::ToolResultsMessage { message } = &envelope.event
                && let Some(plan) = crate::engine::approved_in(message)
            {
                log.append(&cairn_session::Entry::plan(plan));
            }
            if matches!(envelope.event, AgentEvent::TurnFinished(_)) {
                log.sync();
            }
            if let Some(warning) = log.take_warning() {
                self.next.emit(EventEnvelope {
                    from: envelope.from.clone(),
                    event: AgentEvent::Warning {
                        message: format!(
                            "{warning}; the rest of this session is kept in memory only"
                        ),
                    },
                });
            }
        }
        self.next.emit(envelope);
    }
}
