//! `--include-partial-messages`: the engine's deltas turned back into the Messages API's raw
//! stream events (`message_start`, `content_block_start`, `content_block_delta`,
//! `content_block_stop`, `message_delta`, `message_stop`), as Claude Code forwards them in
//! `stream_event` lines.

use std::collections::HashMap;

use cairn_protocol::{AgentEvent, EventEnvelope};
use serde_json::{Value, json};

/// The block a stream has open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Text,
    Thinking,
    ToolUse,
}

/// Where one agent's current message stands.
#[derive(Debug, Default)]
struct MessageStream {
    started: bool,
    open: Option<Block>,
    /// The index the next block gets.
    next_index: usize,
}

impl MessageStream {
    fn start(&mut self, model: &str, events: &mut Vec<Value>) {
        if !self.started {
            self.started = true;
            events.push(json!({
                "type": "message_start",
                "message": {"id": "", "type": "message", "role": "assistant", "model": model,
                            "content": [], "stop_reason": null, "stop_sequence": null,
                            "usage": {"input_tokens": 0, "output_tokens": 0}}
            }));
        }
    }

    fn close(&mut self, events: &mut Vec<Value>) {
        if self.open.take().is_some() {
            events.push(json!({"type": "content_block_stop", "index": self.next_index - 1}));
        }
    }

    /// Opens a block of `kind` unless one is open already.
    fn open(&mut self, kind: Block, content_block: Value, events: &mut Vec<Value>) -> usize {
        if self.open != Some(kind) {
            self.close(events);
            events.push(json!({
                "type": "content_block_start",
                "index": self.next_index,
                "content_block": content_block,
            }));
            self.open = Some(kind);
            self.next_index += 1;
        }
        self.next_index - 1
    }
}

/// Turns each agent's deltas into raw stream events.
#[derive(Debug, Default)]
pub struct PartialMessages {
    /// By the `tool_use` id of the Agent call the stream belongs to (`None`: the main agent).
    streams: HashMap<Option<String>, MessageStream>,
}

impl PartialMessages {
    /// The raw events `envelope` stands for; none for events outside a message's stream.
    pub fn events(&mut self, envelope: &EventEnvelope, model: &str) -> Vec<Value> {
        let key = envelope.from.parent_tool_use_id.clone();
        let mut events = Vec::new();
        match &envelope.event {
            AgentEvent::TextDelta { text } => {
                let stream = self.streams.entry(key).or_default();
                stream.start(model, &mut events);
                let index = stream.open(
                    Block::Text,
                    json!({"type": "text", "text": ""}),
                    &mut events,
                );
                events.push(json!({"type": "content_block_delta", "index": index,
                                   "delta": {"type": "text_delta", "text": text}}));
            }
            AgentEvent::ThinkingDelta { text } => {
                let stream = self.streams.entry(key).or_default();
                stream.start(model, &mut events);
                let index = stream.open(
                    Block::Thinking,
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                    &mut events,
                );
                events.push(json!({"type": "content_block_delta", "index": index,
                                   "delta": {"type": "thinking_delta", "thinking": text}}));
            }
            AgentEvent::ToolCallStarted { id, name } => {
                let stream = self.streams.entry(key).or_default();
                stream.start(model, &mut events);
                stream.close(&mut events);
                stream.open(
                    Block::ToolUse,
                    json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                    &mut events,
                );
            }
            AgentEvent::ToolCallInputComplete { input, .. } => {
                let stream = self.streams.entry(key).or_default();
                if stream.open == Some(Block::ToolUse) {
                    events.push(
                        json!({"type": "content_block_delta", "index": stream.next_index - 1,
                                       "delta": {"type": "input_json_delta",
                                                 "partial_json": input.to_string()}}),
                    );
                    stream.close(&mut events);
                }
            }
            AgentEvent::AssistantMessage {
                model: answered_by,
                stop_reason,
                usage,
                ..
            } => {
                let mut stream = self.streams.remove(&key).unwrap_or_default();
                stream.start(answered_by, &mut events);
                stream.close(&mut events);
                events.push(json!({
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                    "usage": {"output_tokens": usage.output_tokens},
                }));
                events.push(json!({"type": "message_stop"}));
            }
            // A retry streams the whole message again.
            AgentEvent::Retrying(notice) if notice.discard_partial => {
                self.streams.remove(&key);
            }
            _ => {}
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{AgentAddress, Message, Role, StopReason, Usage};
    use pretty_assertions::assert_eq;

    use super::*;

    fn main(event: AgentEvent) -> EventEnvelope {
        EventEnvelope {
            from: AgentAddress::default(),
            event,
        }
    }

    #[test]
    fn deltas_become_the_apis_stream_events_in_order() {
        let mut partial = PartialMessages::default();
        let envelopes = [
            main(AgentEvent::TextDelta { text: "Hel".into() }),
            main(AgentEvent::TextDelta { text: "lo".into() }),
            main(AgentEvent::ToolCallStarted {
                id: "toolu_1".into(),
                name: "Read".into(),
            }),
            main(AgentEvent::ToolCallInputComplete {
                id: "toolu_1".into(),
                name: "Read".into(),
                input: json!({"file_path": "a"}),
            }),
            main(AgentEvent::AssistantMessage {
                message: Message {
                    role: Role::Assistant,
                    content: Vec::new(),
                },
                id: "msg_1".into(),
                model: "m".into(),
                stop_reason: Some(StopReason::ToolUse),
                usage: Usage {
                    output_tokens: 5,
                    ..Usage::default()
                },
                cost_usd: 0.0,
            }),
        ];
        let kinds: Vec<(String, Option<u64>)> = envelopes
            .iter()
            .flat_map(|envelope| partial.events(envelope, "m"))
            .map(|event| {
                (
                    event["type"].as_str().unwrap_or_default().to_owned(),
                    event["index"].as_u64(),
                )
            })
            .collect();
        let expected: Vec<(String, Option<u64>)> = [
            ("message_start", None),
            ("content_block_start", Some(0)),
            ("content_block_delta", Some(0)),
            ("content_block_delta", Some(0)),
            ("content_block_stop", Some(0)),
            ("content_block_start", Some(1)),
            ("content_block_delta", Some(1)),
            ("content_block_stop", Some(1)),
            ("message_delta", None),
            ("message_stop", None),
        ]
        .into_iter()
        .map(|(kind, index)| (kind.to_owned(), index))
        .collect();
        assert_eq!(kinds, expected);
    }
}
