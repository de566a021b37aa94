//! Where an engine's events go: into the face's channel, through the session recorder.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cairn_protocol::{AgentAddress, AgentEvent, EventEnvelope, EventSink};
use cairn_session::{SessionLog, SubAgentStart, entry_for};
use cairn_tools::canonical_spelling;
use serde_json::Value;
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

/// Records the session's history in its file before the face sees it: every event that is
/// part of the conversation becomes an entry the moment it passes, and the file is synced at
/// the end of each turn. This is the one place sessions are recorded, for every face. A
/// sub-agent's events go to a file of its own beside the session's, started at its first
/// entry and linked from the session's file ([`SessionLog::start_sub_agent`]), synced and
/// closed when its turn ends. A failure to write is reported once, as a warning, and the
/// session carries on in memory.
pub struct Recorder {
    logs: Mutex<Logs>,
    next: Arc<dyn EventSink>,
}

/// The session's log and those of the sub-agents running now.
struct Logs {
    main: SessionLog,
    /// By agent id.
    sub_agents: HashMap<String, SessionLog>,
    /// The role and task of each `Agent` call of the turn, by its `tool_use` id, for the
    /// link to its sub-agent's file.
    agent_calls: HashMap<String, (Option<String>, Option<String>)>,
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
            logs: Mutex::new(Logs {
                main: log,
                sub_agents: HashMap::new(),
                agent_calls: HashMap::new(),
            }),
            next,
        }
    }
}

impl Logs {
    /// Writes the main agent's event; returns the warning a failed write left.
    fn record_main(&mut self, event: &AgentEvent) -> Option<String> {
        match event {
            AgentEvent::ToolCallInputComplete { id, name, input }
                if matches!(canonical_spelling(name).as_str(), "agent" | "task") =>
            {
                let field = |key: &str| input.get(key).and_then(Value::as_str).map(String::from);
                self.agent_calls
                    .insert(id.clone(), (field("subagent_type"), field("description")));
            }
            AgentEvent::TurnFinished(_) => self.agent_calls.clear(),
            _ => {}
        }
        if let Some(entry) = entry_for(event) {
            self.main.append(&entry);
        }
        // An approved plan is an entry of its own, after the results that approved it.
        if let AgentEvent::ToolResultsMessage { message } = event
            && let Some(plan) = crate::engine::approved_in(message)
        {
            self.main.append(&cairn_session::Entry::plan(plan));
        }
        if matches!(event, AgentEvent::TurnFinished(_)) {
            self.main.sync();
        }
        self.main.take_warning().map(|warning| warning.to_string())
    }

    /// Writes a sub-agent's event into its own file, started with its first entry.
    fn record_sub_agent(&mut self, from: &AgentAddress, event: &AgentEvent) -> Option<String> {
        let agent_id = from.agent_id.as_deref()?;
        let entry = entry_for(event);
        let log = match (self.sub_agents.get_mut(agent_id), &entry) {
            (Some(log), _) => log,
            (None, Some(_)) => {
                let tool_use_id = from.parent_tool_use_id.clone().unwrap_or_default();
                let (agent_type, description) = self
                    .agent_calls
                    .get(&tool_use_id)
                    .cloned()
                    .unwrap_or_default();
                let log = self.main.start_sub_agent(SubAgentStart {
                    agent_id: agent_id.to_string(),
                    agent_type,
                    description,
                    tool_use_id,
                });
                self.sub_agents.entry(agent_id.to_string()).or_insert(log)
            }
            (None, None) => return None,
        };
        if let Some(entry) = &entry {
            log.append(entry);
        }
        let warning = log.take_warning().map(|warning| warning.to_string());
        if matches!(event, AgentEvent::TurnFinished(_))
            && let Some(mut log) = self.sub_agents.remove(agent_id)
        {
            log.sync();
            return warning.or_else(|| log.take_warning().map(|warning| warning.to_string()));
        }
        warning.or_else(|| self.main.take_warning().map(|warning| warning.to_string()))
    }
}

impl EventSink for Recorder {
    fn emit(&self, envelope: EventEnvelope) {
        let warning = {
            let mut logs = self
                .logs
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if envelope.from.is_main() {
                logs.record_main(&envelope.event)
            } else {
                logs.record_sub_agent(&envelope.from, &envelope.event)
            }
        };
        if let Some(warning) = warning {
            self.next.emit(EventEnvelope {
                from: envelope.from.clone(),
                event: AgentEvent::Warning {
                    message: format!("{warning}; the rest of this session is kept in memory only"),
                },
            });
        }
        self.next.emit(envelope);
    }

    fn sub_agent_transcript(&self, agent_id: &str) -> Option<std::path::PathBuf> {
        let logs = self
            .logs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        logs.sub_agents
            .get(agent_id)
            .and_then(|log| log.path())
            .map(std::path::Path::to_path_buf)
    }
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{CollectedEvents, EventSender, Message, TurnEnd, TurnSummary};
    use cairn_session::{Entry, NewSession, SessionId, SessionStore, read_entries};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn finished() -> AgentEvent {
        AgentEvent::TurnFinished(TurnSummary {
            op_id: String::new(),
            end: TurnEnd::Completed,
            result: String::new(),
            requests: 1,
            usage: Default::default(),
            cost_usd: 0.0,
            cost_unknown: false,
            duration_api_ms: 0,
        })
    }

    /// The user messages' texts of a file.
    fn prompts(path: &std::path::Path) -> Vec<String> {
        read_entries(path)
            .unwrap()
            .entries
            .into_iter()
            .filter_map(|entry| match entry {
                Entry::User(entry) => Some(entry.message.text()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn sub_agents_running_at_once_each_get_their_own_file() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let store = SessionStore::new(home.path());
        let id = SessionId::new();
        let new = NewSession {
            model: "claude-sonnet-4-5".into(),
            git_branch: None,
        };
        let faces = Arc::new(CollectedEvents::default());
        let recorder = Arc::new(Recorder::new(
            store.start(project.path(), &id, new),
            faces.clone(),
        ));
        let main = EventSender::new(recorder);
        main.emit(AgentEvent::UserMessage {
            message: Message::user_text("Look twice."),
        });
        for (call, role) in [("toolu_a", "Explore"), ("toolu_b", "Plan")] {
            main.emit(AgentEvent::ToolCallInputComplete {
                id: call.into(),
                name: "Task".into(),
                input: json!({"description": role, "prompt": "…", "subagent_type": role}),
            });
        }
        let first = main.nested("agent_1", "toolu_a");
        let second = main.nested("agent_2", "toolu_b");
        first.emit(AgentEvent::UserMessage {
            message: Message::user_text("first's task"),
        });
        second.emit(AgentEvent::UserMessage {
            message: Message::user_text("second's task"),
        });
        first.emit(AgentEvent::UserMessage {
            message: Message::user_text("first again"),
        });
        second.emit(finished());
        first.emit(finished());
        main.emit(finished());

        let session = store.path(project.path(), &id);
        assert_eq!(prompts(&session), ["Look twice."]);
        let links: Vec<(String, Option<String>, String)> = read_entries(&session)
            .unwrap()
            .entries
            .into_iter()
            .filter_map(|entry| match entry {
                Entry::SubAgent(link) => Some((link.agent_id, link.agent_type, link.tool_use_id)),
                _ => None,
            })
            .collect();
        assert_eq!(
            links,
            [
                ("agent_1".into(), Some("Explore".into()), "toolu_a".into()),
                ("agent_2".into(), Some("Plan".into()), "toolu_b".into()),
            ]
        );
        let dir = store.session_dir(project.path(), &id).join("subagents");
        assert_eq!(
            prompts(&dir.join("agent-agent_1.jsonl")),
            ["first's task", "first again"]
        );
        assert_eq!(prompts(&dir.join("agent-agent_2.jsonl")), ["second's task"]);
        // Every event still reaches the face, none of them a warning.
        let events = faces.take();
        assert_eq!(events.len(), 9);
        assert!(
            !events
                .iter()
                .any(|envelope| matches!(envelope.event, AgentEvent::Warning { .. }))
        );
    }
}
