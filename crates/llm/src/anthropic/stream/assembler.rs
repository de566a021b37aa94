//! Building a [`ModelResponse`] from decoded stream events.

use cairn_protocol::json_kind;
use cairn_protocol::{ContentBlock, StopReason, Usage};
use serde_json::Value;

use super::{BlockDelta, BlockStart, StreamEvent};
use crate::error::truncate_chars;
use crate::{MalformedToolInput, ModelError, ModelEvent, ModelResponse, PartialAnswer};

/// The longest stretch of a malformed tool input quoted back to the model.
const MAX_QUOTED_INPUT: usize = 200;

/// Builds a [`ModelResponse`] from [`StreamEvent`]s fed in stream order, reporting
/// [`ModelEvent`]s as they become known.
///
/// ```
/// use cairn_llm::anthropic::stream::{parse_event, StreamAssembler};
///
/// let mut assembler = StreamAssembler::new();
/// let mut events = Vec::new();
/// for data in [
///     r#"{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":3}}}"#,
///     r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
///     r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
///     r#"{"type":"content_block_stop","index":0}"#,
///     r#"{"type":"message_stop"}"#,
/// ] {
///     let event = parse_event(data).unwrap();
///     assembler.push(event, &mut |e| events.push(e)).unwrap();
/// }
/// let response = assembler.finish().unwrap();
/// assert_eq!(response.id, "msg_1");
/// assert_eq!(events.len(), 1);
/// ```
#[derive(Debug, Default)]
pub struct StreamAssembler {
    id: String,
    model: String,
    /// Blocks in the order they started; nearly always index order already.
    blocks: Vec<Block>,
    usage: Usage,
    stop_reason: Option<StopReason>,
    malformed: Vec<MalformedToolInput>,
    stopped: bool,
}

#[derive(Debug)]
struct Block {
    index: usize,
    state: BlockState,
}

#[derive(Debug)]
enum BlockState {
    Text(String),
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking(String),
    ToolUse {
        id: String,
        name: String,
        /// The `input` of `content_block_start`, used when no JSON pieces follow.
        initial: Value,
        json: String,
        /// Set at `content_block_stop`.
        input: Option<Value>,
    },
}

impl StreamAssembler {
    /// An assembler that has seen no event yet.
    pub fn new() -> Self {
        StreamAssembler::default()
    }

    /// Whether `message_stop` has arrived: the response is complete.
    pub fn is_complete(&self) -> bool {
        self.stopped
    }

    /// Takes in the next event. Deltas and tool-call milestones go to `on_event`. An `error`
    /// event is returned as [`ModelError::StreamError`]; events after `message_stop` are
    /// ignored.
    pub fn push(
        &mut self,
        event: StreamEvent,
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<(), ModelError> {
        if self.stopped {
            return Ok(());
        }
        match event {
            StreamEvent::MessageStart { message } => {
                self.id = message.id;
                self.model = message.model;
                self.usage.update_from(&message.usage);
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => self.start_block(index, content_block, on_event),
            StreamEvent::ContentBlockDelta { index, delta } => {
                if let Some(block) = self.block_mut(index) {
                    apply_delta(&mut block.state, delta, on_event);
                }
            }
            StreamEvent::ContentBlockStop { index } => {
                if let Some(position) = self.position(index) {
                    self.complete_tool_use(position, on_event);
                }
            }
            StreamEvent::MessageDelta { delta, usage } => {
                self.usage.update_from(&usage);
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
            }
            StreamEvent::MessageStop => {
                // A block the API never closed is closed now, so its tool call is not lost.
                for position in 0..self.blocks.len() {
                    self.complete_tool_use(position, on_event);
                }
                self.stopped = true;
            }
            StreamEvent::Error { error } => {
                return Err(ModelError::StreamError {
                    error_type: error.error_type,
                    message: error.message,
                });
            }
            StreamEvent::Ping | StreamEvent::Unknown => {}
        }
        Ok(())
    }

    /// What `message_start` and any `message_delta` since reported: the id, the model and
    /// the counts; `None` before `message_start`.
    pub fn so_far(&self) -> Option<PartialAnswer> {
        (!self.id.is_empty()).then(|| PartialAnswer {
            id: self.id.clone(),
            model: self.model.clone(),
            usage: self.usage,
        })
    }

    /// The stream has ended: if `message_stop` never came but a `message_delta` gave the stop
    /// reason, the message is complete all the same (the API sends nothing between the two
    /// but usage), so it is ended as `message_stop` would end it.
    pub fn end_of_stream(&mut self, on_event: &mut dyn FnMut(ModelEvent)) {
        if !self.stopped && self.stop_reason.is_some() {
            // Cannot fail: `message_stop` never does.
            let _ = self.push(StreamEvent::MessageStop, on_event);
        }
    }

    /// The complete response, or [`ModelError::StreamEndedEarly`] when `message_stop` never
    /// came.
    pub fn finish(mut self) -> Result<ModelResponse, ModelError> {
        if !self.stopped {
            return Err(ModelError::StreamEndedEarly);
        }
        self.blocks.sort_by_key(|block| block.index);
        let content = self
            .blocks
            .into_iter()
            .filter_map(|block| match block.state {
                // The API refuses empty text blocks when the message is sent back.
                BlockState::Text(text) if text.is_empty() => None,
                BlockState::Text(text) => Some(ContentBlock::Text { text }),
                BlockState::Thinking {
                    thinking,
                    signature,
                } => Some(ContentBlock::Thinking {
                    thinking,
                    signature,
                }),
                BlockState::RedactedThinking(data) => Some(ContentBlock::RedactedThinking { data }),
                BlockState::ToolUse {
                    id, name, input, ..
                } => Some(ContentBlock::ToolUse {
                    id,
                    name,
                    input: input.unwrap_or_else(empty_object),
                }),
            })
            .collect();
        Ok(ModelResponse {
            id: self.id,
            model: self.model,
            content,
            stop_reason: self.stop_reason,
            usage: self.usage,
            malformed_tool_inputs: self.malformed,
        })
    }

    fn start_block(
        &mut self,
        index: usize,
        start: BlockStart,
        on_event: &mut dyn FnMut(ModelEvent),
    ) {
        if self.position(index).is_some() {
            return;
        }
        let state = match start {
            BlockStart::Text { text } => {
                if !text.is_empty() {
                    on_event(ModelEvent::TextDelta(text.clone()));
                }
                BlockState::Text(text)
            }
            BlockStart::Thinking {
                thinking,
                signature,
            } => {
                if !thinking.is_empty() {
                    on_event(ModelEvent::ThinkingDelta(thinking.clone()));
                }
                BlockState::Thinking {
                    thinking,
                    signature,
                }
            }
            BlockStart::RedactedThinking { data } => BlockState::RedactedThinking(data),
            BlockStart::ToolUse { id, name, input } => {
                on_event(ModelEvent::ToolUseStarted {
                    id: id.clone(),
                    name: name.clone(),
                });
                BlockState::ToolUse {
                    id,
                    name,
                    initial: input,
                    json: String::new(),
                    input: None,
                }
            }
            BlockStart::Unknown => return,
        };
        self.blocks.push(Block { index, state });
    }

    fn position(&self, index: usize) -> Option<usize> {
        self.blocks.iter().rposition(|block| block.index == index)
    }

    fn block_mut(&mut self, index: usize) -> Option<&mut Block> {
        self.blocks
            .iter_mut()
            .rev()
            .find(|block| block.index == index)
    }

    /// Parses the input of the tool call at `position` if it is one and is still open.
    fn complete_tool_use(&mut self, position: usize, on_event: &mut dyn FnMut(ModelEvent)) {
        let Some(Block {
            state:
                BlockState::ToolUse {
                    id,
                    name,
                    initial,
                    json,
                    input: input @ None,
                },
            ..
        }) = self.blocks.get_mut(position)
        else {
            return;
        };
        let parsed = if json.trim().is_empty() {
            match std::mem::take(initial) {
                Value::Object(map) => Ok(Value::Object(map)),
                _ => Ok(empty_object()),
            }
        } else {
            parse_tool_input(name, json)
        };
        let value = match parsed {
            Ok(value) => value,
            Err(error) => {
                self.malformed.push(MalformedToolInput {
                    id: id.clone(),
                    name: name.clone(),
                    error,
                });
                empty_object()
            }
        };
        *json = String::new();
        *input = Some(value.clone());
        on_event(ModelEvent::ToolUseComplete {
            id: id.clone(),
            name: name.clone(),
            input: value,
        });
    }
}

fn apply_delta(state: &mut BlockState, delta: BlockDelta, on_event: &mut dyn FnMut(ModelEvent)) {
    match (state, delta) {
        (BlockState::Text(text), BlockDelta::TextDelta { text: piece }) => {
            text.push_str(&piece);
            on_event(ModelEvent::TextDelta(piece));
        }
        (BlockState::Thinking { thinking, .. }, BlockDelta::ThinkingDelta { thinking: piece }) => {
            thinking.push_str(&piece);
            on_event(ModelEvent::ThinkingDelta(piece));
        }
        (
            BlockState::Thinking { signature, .. },
            BlockDelta::SignatureDelta { signature: piece },
        ) => {
            signature.push_str(&piece);
        }
        (
            BlockState::ToolUse {
                json, input: None, ..
            },
            BlockDelta::InputJsonDelta { partial_json },
        ) => json.push_str(&partial_json),
        // A delta of another block's kind, or of a kind this version does not know.
        _ => {}
    }
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// The tool input `json` as a JSON object, or a message for the model saying what was wrong
/// with it and quoting (the start of) what it sent.
fn parse_tool_input(name: &str, json: &str) -> Result<Value, String> {
    let quoted = truncate_chars(json, MAX_QUOTED_INPUT);
    match serde_json::from_str::<Value>(json) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!(
            "the input for tool `{name}` must be a JSON object, not {}; received: {quoted}",
            json_kind(&other)
        )),
        Err(error) => Err(format!(
            "the input for tool `{name}` is not valid JSON ({error}); received: {quoted}"
        )),
    }
}
