//! Rendering a scripted reply as OpenAI Chat Completions streaming chunks, for requests to a
//! `…/chat/completions` path.
//!
//! The same [`Reply`](crate::Reply) a test queues for the Anthropic dialect is served in
//! this one, so a scenario runs on both: text arrives as `delta.content` pieces, thinking as
//! `delta.reasoning_content` (or `delta.reasoning`, as OpenRouter names it, with
//! [`Reply::with_reasoning_field`](crate::Reply::with_reasoning_field)), each tool call as a
//! first delta with its `index`, `id` and name and then its `arguments` in pieces; then a
//! chunk with the `finish_reason`, a usage chunk with empty `choices` (as
//! `stream_options.include_usage` asks), and `data: [DONE]`.

use serde_json::{Value, json};

use crate::reply::{ScriptedBlock, Usage};
use crate::sse::split_chars;

/// What one streamed completion is made of.
#[derive(Debug)]
pub(crate) struct ScriptedCompletion<'a> {
    pub(crate) id: &'a str,
    pub(crate) model: &'a str,
    pub(crate) blocks: &'a [ScriptedBlock],
    pub(crate) stop_reason: &'a str,
    pub(crate) usage: Usage,
    /// `reasoning_content` (DeepSeek, vLLM) or `reasoning` (OpenRouter).
    pub(crate) reasoning_field: &'a str,
}

/// The Chat Completions `finish_reason` for an Anthropic stop reason.
fn finish_reason(stop_reason: &str) -> &str {
    match stop_reason {
        "tool_use" => "tool_calls",
        "max_tokens" => "length",
        "refusal" => "content_filter",
        _ => "stop",
    }
}

fn chunk(id: &str, model: &str, delta: Value, finish: Option<&str>) -> String {
    let body = json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {body}\n\n")
}

/// The completion as SSE `data:` events, in order, ending with `[DONE]`.
pub(crate) fn completion_events(message: &ScriptedCompletion<'_>) -> Vec<String> {
    let (id, model) = (message.id, message.model);
    let mut events = vec![chunk(
        id,
        model,
        json!({"role": "assistant", "content": ""}),
        None,
    )];
    let mut tool_index = 0;
    for block in message.blocks {
        match block {
            ScriptedBlock::Text(text) => {
                for piece in split_chars(text) {
                    events.push(chunk(id, model, json!({"content": piece}), None));
                }
            }
            ScriptedBlock::Thinking { thinking, .. } => {
                for piece in split_chars(thinking) {
                    let mut delta = serde_json::Map::new();
                    delta.insert(message.reasoning_field.to_owned(), json!(piece));
                    events.push(chunk(id, model, Value::Object(delta), None));
                }
            }
            ScriptedBlock::ToolUse {
                id: call,
                name,
                input,
            } => {
                let arguments = input.to_string();
                tool_events(message, tool_index, call, name, &arguments, &mut events);
                tool_index += 1;
            }
            ScriptedBlock::RawToolUse {
                id: call,
                name,
                input_json,
            } => {
                tool_events(message, tool_index, call, name, input_json, &mut events);
                tool_index += 1;
            }
            // Chat Completions has no server-side search to show.
            ScriptedBlock::WebSearch { .. } => {}
        }
    }
    events.push(chunk(
        id,
        model,
        json!({}),
        Some(finish_reason(message.stop_reason)),
    ));
    let usage = message.usage;
    let prompt =
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    let body = json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": usage.output_tokens,
            "total_tokens": prompt + usage.output_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
        },
    });
    events.push(format!("data: {body}\n\n"));
    events.push("data: [DONE]\n\n".to_owned());
    events
}

/// One tool call: its first delta names it, the rest carry its arguments in pieces.
fn tool_events(
    message: &ScriptedCompletion<'_>,
    index: usize,
    call: &str,
    name: &str,
    arguments: &str,
    events: &mut Vec<String>,
) {
    events.push(chunk(
        message.id,
        message.model,
        json!({"tool_calls": [{
            "index": index, "id": call, "type": "function",
            "function": {"name": name, "arguments": ""},
        }]}),
        None,
    ));
    for piece in split_chars(arguments) {
        events.push(chunk(
            message.id,
            message.model,
            json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
            None,
        ));
    }
}

/// The JSON body of an OpenAI API error.
pub(crate) fn error_body(error_type: &str, message: &str) -> String {
    json!({"error": {"message": message, "type": error_type, "param": null, "code": null}})
        .to_string()
}

/// Whether a request path is a Chat Completions one (`/v1/chat/completions`, Ollama's and
/// vLLM's the same, or a gateway's prefix before it).
pub(crate) fn is_chat_completions(path: &str) -> bool {
    path.ends_with("/chat/completions")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn data(events: &[String]) -> Vec<Value> {
        events
            .iter()
            .filter_map(|event| event.strip_prefix("data: "))
            .map(str::trim)
            .filter(|data| *data != "[DONE]")
            .map(|data| serde_json::from_str(data).unwrap_or(Value::Null))
            .collect()
    }

    /// Two calls stream under their own indexes, and their pieces join to their arguments.
    #[test]
    fn tool_calls_arrive_by_index_and_join_to_their_arguments() {
        let blocks = [
            ScriptedBlock::ToolUse {
                id: "call_a".into(),
                name: "Read".into(),
                input: json!({"file_path": "/some/long/path/to/a/file.txt"}),
            },
            ScriptedBlock::ToolUse {
                id: "call_b".into(),
                name: "Glob".into(),
                input: json!({"pattern": "**/*.rs"}),
            },
        ];
        let events = completion_events(&ScriptedCompletion {
            id: "chatcmpl-1",
            model: "gpt-4o",
            blocks: &blocks,
            stop_reason: "tool_use",
            usage: Usage::default(),
            reasoning_field: "reasoning_content",
        });
        assert_eq!(events.last().map(String::as_str), Some("data: [DONE]\n\n"));
        let chunks = data(&events);
        let mut joined = [String::new(), String::new()];
        let mut ids = Vec::new();
        for chunk in &chunks {
            for call in chunk["choices"][0]["delta"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let index = call["index"].as_u64().unwrap_or(9) as usize;
                if let Some(id) = call["id"].as_str() {
                    ids.push((index, id.to_owned()));
                }
                joined[index].push_str(call["function"]["arguments"].as_str().unwrap_or(""));
            }
        }
        assert_eq!(ids, vec![(0, "call_a".into()), (1, "call_b".into())]);
        assert_eq!(
            joined.map(|text| serde_json::from_str::<Value>(&text).unwrap_or(Value::Null)),
            [
                json!({"file_path": "/some/long/path/to/a/file.txt"}),
                json!({"pattern": "**/*.rs"})
            ]
        );
        let finishes: Vec<&Value> = chunks
            .iter()
            .map(|chunk| &chunk["choices"][0]["finish_reason"])
            .filter(|finish| !finish.is_null())
            .collect();
        assert_eq!(finishes, vec![&json!("tool_calls")]);
        assert_eq!(
            chunks.last().map(|c| c["usage"]["prompt_tokens"].clone()),
            Some(json!(10))
        );
    }
}
