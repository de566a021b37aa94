//! The Chat Completions event stream: `chat.completion.chunk`s assembled into a
//! [`ModelResponse`].
//!
//! Text arrives in `delta.content`; reasoning in `delta.reasoning_content` (DeepSeek, Qwen,
//! vLLM's reasoning parsers) or `delta.reasoning` (OpenRouter), shown as thinking; each tool
//! call as deltas under its `index`, the first naming its `id` and function, the rest adding
//! to its `arguments`. The `finish_reason` ends the choice, a chunk with empty `choices`
//! carries the usage, and `data: [DONE]` ends the stream.

use std::collections::BTreeMap;

use cairn_protocol::{ContentBlock, StopReason, Usage};
use serde::Deserialize;
use serde_json::Value;

use crate::error::truncate_chars;
use crate::sse::SseFramer;
use crate::transport::StreamDecode;
use crate::{MalformedToolInput, ModelError, ModelEvent, ModelResponse, PartialAnswer};

/// The longest stretch of an unreadable chunk quoted in an error.
const MAX_QUOTED_DATA: usize = 200;

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<WireError>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Delta,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCallDelta>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: usize,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: FunctionDelta,
}

#[derive(Debug, Default, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    /// DeepSeek's name for the cached part of the prompt.
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct WireError {
    #[serde(default)]
    message: String,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    code: Option<Value>,
}

impl WireUsage {
    /// Into the shared [`Usage`]: `prompt_tokens` includes the cached tokens, which are
    /// counted once, as cache reads.
    fn into_usage(self) -> Usage {
        let cached = self
            .prompt_tokens_details
            .and_then(|details| details.cached_tokens)
            .or(self.prompt_cache_hit_tokens)
            .unwrap_or(0)
            .min(self.prompt_tokens);
        Usage {
            input_tokens: self.prompt_tokens - cached,
            output_tokens: self.completion_tokens,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: cached,
        }
    }
}

/// A tool call being assembled.
#[derive(Debug, Default)]
struct Call {
    id: String,
    name: String,
    arguments: String,
    announced: bool,
}

/// A response body fed chunk by chunk and assembled.
#[derive(Debug, Default)]
pub(crate) struct ChatDecoder {
    framer: SseFramer,
    id: String,
    model: String,
    text: String,
    reasoning: String,
    calls: BTreeMap<usize, Call>,
    finish: Option<String>,
    usage: Usage,
    done: bool,
}

impl ChatDecoder {
    pub(crate) fn new(model: &str) -> Self {
        ChatDecoder {
            model: model.to_owned(),
            ..ChatDecoder::default()
        }
    }

    fn push_data(
        &mut self,
        data: &str,
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<(), ModelError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|error| {
            ModelError::InvalidStream(format!(
                "chunk: {error}; data: {}",
                truncate_chars(data, MAX_QUOTED_DATA)
            ))
        })?;
        if let Some(error) = chunk.error {
            // A server error mid-stream is worth retrying, as Anthropic's `api_error` is.
            let server = error.kind.as_deref() == Some("server_error")
                || error
                    .code
                    .as_ref()
                    .and_then(Value::as_u64)
                    .is_some_and(|code| code >= 500);
            return Err(ModelError::StreamError {
                error_type: if server {
                    "api_error".to_string()
                } else {
                    error.kind.unwrap_or_else(|| "error".to_string())
                },
                message: error.message,
            });
        }
        if let Some(id) = chunk.id.filter(|id| !id.is_empty()) {
            self.id = id;
        }
        if let Some(model) = chunk.model.filter(|model| !model.is_empty()) {
            self.model = model;
        }
        if let Some(usage) = chunk.usage {
            self.usage = usage.into_usage();
        }
        for choice in chunk.choices {
            let delta = choice.delta;
            for reasoning in [delta.reasoning_content, delta.reasoning]
                .into_iter()
                .flatten()
            {
                if !reasoning.is_empty() {
                    self.reasoning.push_str(&reasoning);
                    on_event(ModelEvent::ThinkingDelta(reasoning));
                }
            }
            if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
                self.text.push_str(&text);
                on_event(ModelEvent::TextDelta(text));
            }
            for call in delta.tool_calls {
                // A server that numbers no calls (every `index` 0) still gives each its own
                // `id`: a new id under a taken index is a new call.
                let index = match (self.calls.get(&call.index), call.id.as_deref()) {
                    (Some(taken), Some(id)) if !taken.id.is_empty() && taken.id != id => {
                        self.calls.keys().next_back().map_or(0, |last| last + 1)
                    }
                    _ => call.index,
                };
                let entry = self.calls.entry(index).or_default();
                if let Some(id) = call.id.filter(|id| !id.is_empty()) {
                    entry.id = id;
                }
                if let Some(name) = call.function.name.filter(|name| !name.is_empty()) {
                    entry.name.push_str(&name);
                }
                if let Some(arguments) = call.function.arguments {
                    entry.arguments.push_str(&arguments);
                }
                if !entry.announced && !entry.name.is_empty() {
                    entry.announced = true;
                    if entry.id.is_empty() {
                        // Some local servers send no id: one is made up, unique in the message.
                        entry.id = format!("call_{index}");
                    }
                    on_event(ModelEvent::ToolUseStarted {
                        id: entry.id.clone(),
                        name: entry.name.clone(),
                    });
                }
            }
            if let Some(finish) = choice.finish_reason.filter(|finish| !finish.is_empty()) {
                self.finish = Some(finish);
            }
        }
        Ok(())
    }
}

/// The shared stop reason for a `finish_reason`; a message with tool calls stopped to call
/// them whatever the server says (Ollama answers `stop`).
fn stop_reason(finish: &str, has_calls: bool) -> StopReason {
    match finish {
        _ if has_calls => StopReason::ToolUse,
        "stop" => StopReason::EndTurn,
        "length" => StopReason::MaxTokens,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "content_filter" => StopReason::Refusal,
        _ => StopReason::Unknown,
    }
}

impl StreamDecode for ChatDecoder {
    fn push(
        &mut self,
        chunk: &[u8],
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<(), ModelError> {
        if self.done {
            return Ok(());
        }
        let mut framer = std::mem::take(&mut self.framer);
        let fed = framer.feed(chunk, |event| {
            if self.done {
                return Ok(());
            }
            self.push_data(event.data, on_event)
        });
        self.framer = framer;
        fed
    }

    fn is_complete(&self) -> bool {
        self.done
    }

    /// The id of the first chunk; the counts only if the usage chunk came already (servers
    /// send it last).
    fn so_far(&self) -> Option<PartialAnswer> {
        (!self.id.is_empty() || self.usage != Usage::default()).then(|| PartialAnswer {
            id: self.id.clone(),
            model: self.model.clone(),
            usage: self.usage,
        })
    }

    fn finish(
        mut self: Box<Self>,
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<ModelResponse, ModelError> {
        let mut framer = std::mem::take(&mut self.framer);
        framer.finish(|event| {
            if self.done {
                return Ok(());
            }
            // A cut-off last chunk means the stream was cut: it is left unread.
            match self.push_data(event.data, on_event) {
                Err(ModelError::InvalidStream(_)) => Ok(()),
                other => other,
            }
        })?;
        let Some(finish) = self.finish.take() else {
            return Err(ModelError::StreamEndedEarly);
        };
        let mut content = Vec::new();
        if !self.reasoning.is_empty() {
            content.push(ContentBlock::Thinking {
                thinking: std::mem::take(&mut self.reasoning),
                signature: String::new(),
            });
        }
        if !self.text.is_empty() {
            content.push(ContentBlock::text(std::mem::take(&mut self.text)));
        }
        let mut malformed = Vec::new();
        let has_calls = !self.calls.is_empty();
        for (_, call) in std::mem::take(&mut self.calls) {
            let arguments = if call.arguments.trim().is_empty() {
                "{}"
            } else {
                call.arguments.as_str()
            };
            let input = match serde_json::from_str::<Value>(arguments) {
                Ok(input @ Value::Object(_)) => input,
                Ok(other) => {
                    malformed.push(MalformedToolInput {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        error: format!("the input must be a JSON object, got: {other}"),
                    });
                    Value::Object(serde_json::Map::new())
                }
                Err(error) => {
                    malformed.push(MalformedToolInput {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        error: format!(
                            "the input is not valid JSON ({error}): {}",
                            truncate_chars(&call.arguments, MAX_QUOTED_DATA)
                        ),
                    });
                    Value::Object(serde_json::Map::new())
                }
            };
            on_event(ModelEvent::ToolUseComplete {
                id: call.id.clone(),
                name: call.name.clone(),
                input: input.clone(),
            });
            content.push(ContentBlock::ToolUse {
                id: call.id,
                name: call.name,
                input,
            });
        }
        Ok(ModelResponse {
            id: self.id,
            model: self.model,
            content,
            stop_reason: Some(stop_reason(&finish, has_calls)),
            usage: self.usage,
            malformed_tool_inputs: malformed,
        })
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn decode(body: &str, piece: usize) -> (Result<ModelResponse, String>, Vec<ModelEvent>) {
        let mut events = Vec::new();
        let mut decoder = Box::new(ChatDecoder::new("asked-model"));
        let mut on_event = |event| events.push(event);
        for chunk in body.as_bytes().chunks(piece) {
            if let Err(error) = decoder.push(chunk, &mut on_event) {
                return (Err(error.to_string()), events);
            }
        }
        let response = decoder.finish(&mut on_event).map_err(|e| e.to_string());
        (response, events)
    }

    fn data(value: Value) -> String {
        format!("data: {value}\n\n")
    }

    /// An answer cut short says what it had: the id of its first chunk at once, the counts
    /// only once the usage chunk came.
    #[test]
    fn what_an_unfinished_stream_reported_is_known() {
        let mut decoder = ChatDecoder::new("asked-model");
        assert_eq!(decoder.so_far(), None);
        let first = data(
            json!({"id": "chatcmpl-7", "model": "gpt-5", "choices": [{"index": 0, "delta": {"content": "Hel"}}]}),
        );
        decoder.push(first.as_bytes(), &mut |_| {}).unwrap();
        let mut expected = PartialAnswer {
            id: "chatcmpl-7".into(),
            model: "gpt-5".into(),
            usage: Usage::default(),
        };
        assert_eq!(decoder.so_far(), Some(expected.clone()));
        let usage = data(
            json!({"id": "chatcmpl-7", "choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 100}}}),
        );
        decoder.push(usage.as_bytes(), &mut |_| {}).unwrap();
        expected.usage = Usage {
            input_tokens: 20,
            output_tokens: 3,
            cache_read_input_tokens: 100,
            ..Usage::default()
        };
        assert_eq!(decoder.so_far(), Some(expected));
    }

    /// Two calls interleaved by index, reasoning, text, a usage chunk with cached tokens: cut
    /// anywhere, the same response.
    #[test]
    fn a_stream_is_assembled_whatever_its_cuts() {
        let delta = |delta: Value| {
            data(
                json!({"id": "c1", "model": "deepseek-reasoner", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]}),
            )
        };
        let body = [
            delta(json!({"role": "assistant", "content": ""})),
            delta(json!({"reasoning_content": "think"})),
            delta(json!({"content": "Reading."})),
            delta(json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "Read", "arguments": ""}}]})),
            delta(json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "Glob", "arguments": "{\"pat"}}]})),
            delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"file_path\":\"a\"}"}}]})),
            delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": "tern\":\"*\"}"}}]})),
            data(json!({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})),
            data(json!({"id": "c1", "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 60}}})),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        for piece in [1, 7, body.len()] {
            let (response, events) = decode(&body, piece);
            let response = response.unwrap_or_else(|error| panic!("{piece}: {error}"));
            assert_eq!(
                response.content,
                vec![
                    ContentBlock::Thinking {
                        thinking: "think".into(),
                        signature: String::new()
                    },
                    ContentBlock::text("Reading."),
                    ContentBlock::ToolUse {
                        id: "call_a".into(),
                        name: "Read".into(),
                        input: json!({"file_path": "a"})
                    },
                    ContentBlock::ToolUse {
                        id: "call_b".into(),
                        name: "Glob".into(),
                        input: json!({"pattern": "*"})
                    },
                ]
            );
            assert_eq!(response.stop_reason, Some(StopReason::ToolUse));
            assert_eq!(
                response.usage,
                Usage {
                    input_tokens: 40,
                    output_tokens: 20,
                    cache_creation_input_tokens: 0,
                    cache_read_input_tokens: 60
                }
            );
            assert_eq!(response.usage.input_total(), 100);
            assert_eq!(
                (response.id.as_str(), response.model.as_str()),
                ("c1", "deepseek-reasoner")
            );
            let started = events
                .iter()
                .filter(|event| matches!(event, ModelEvent::ToolUseStarted { .. }))
                .count();
            assert_eq!(started, 2);
        }
    }

    /// Ollama-style: each call whole in one delta, all under index 0, told apart by id; and
    /// an empty `finish_reason` is no finish.
    #[test]
    fn calls_without_their_own_index_stay_apart() {
        let call = |id: &str, path: &str| {
            data(
                json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": "Read", "arguments": json!({"file_path": path}).to_string()}}]}, "finish_reason": ""}]}),
            )
        };
        let body = [
            call("call_1", "a"),
            call("call_2", "b"),
            data(json!({"choices": [{"delta": {}, "finish_reason": "stop"}]})),
        ]
        .concat();
        let (response, _) = decode(&body, 11);
        let response = response.unwrap_or_else(|error| panic!("{error}"));
        let calls: Vec<(String, Value)> = response
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolUse { id, input, .. } => Some((id.clone(), input.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            vec![
                ("call_1".into(), json!({"file_path": "a"})),
                ("call_2".into(), json!({"file_path": "b"}))
            ]
        );
        assert_eq!(response.stop_reason, Some(StopReason::ToolUse));
    }

    #[test]
    fn finish_reasons_map_and_a_stream_without_one_ended_early() {
        let finish = |reason: &str| {
            let body =
                data(json!({"choices": [{"delta": {"content": "x"}, "finish_reason": reason}]}));
            decode(&body, 5).0.map(|response| response.stop_reason)
        };
        assert_eq!(finish("stop"), Ok(Some(StopReason::EndTurn)));
        assert_eq!(finish("length"), Ok(Some(StopReason::MaxTokens)));
        assert_eq!(finish("content_filter"), Ok(Some(StopReason::Refusal)));
        let cut = data(json!({"choices": [{"delta": {"content": "x"}, "finish_reason": null}]}));
        assert_eq!(
            decode(&cut, 5).0.map(|_| ()),
            Err("the response stream ended early, before the message was complete".into())
        );
    }

    /// OpenRouter's `reasoning` is thinking too; an error chunk mid-stream is a stream error.
    #[test]
    fn openrouter_reasoning_and_error_chunks_are_read() {
        let body = [
            data(json!({"choices": [{"delta": {"reasoning": "hmm"}}]})),
            data(json!({"choices": [{"delta": {}, "finish_reason": "stop"}]})),
        ]
        .concat();
        let (response, events) = decode(&body, 3);
        assert_eq!(events, vec![ModelEvent::ThinkingDelta("hmm".into())]);
        assert!(response.is_ok());
        let error = data(json!({"error": {"message": "upstream died", "type": "server_error"}}));
        let (failed, _) = decode(&error, 100);
        assert_eq!(
            failed.map(|_| ()),
            Err("the API reported an error mid-stream (api_error): upstream died".into())
        );
    }
}
