//! Tool calls a model wrote as text instead of calling the tool.
//!
//! Local models behind OpenAI-compatible servers often answer a request that offers tools
//! with the call itself as their whole text — `{"name": "Read", "arguments": {…}}`, or
//! Hermes/Qwen's `<tool_call>{…}</tool_call>` tags the server did not parse — and the agent
//! that shows it as text stops there. [`read_text_calls`] takes such a text as the call only
//! when it can be read one way: the whole text is the call (a bare JSON object, one fenced
//! `json` block, or tags with nothing but space between them), it names a tool offered in the
//! request, and its input is valid for that tool's schema. Prose around it, an unknown name,
//! input the schema refuses, or two ways to read it leave the text as text.
//!
//! `Holdback` keeps the text of an answer that may turn out to be such a call from the face
//! until the answer is whole, so that a call read from text is shown as a call, not as JSON.

use cairn_protocol::{ContentBlock, StopReason, ToolSpec};
use serde_json::Value;

use crate::{ModelEvent, ModelResponse};

/// How the model wrote the calls it wrote as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextCallForm {
    /// The whole text is one JSON object (bare, or in one fenced block).
    Json,
    /// Hermes/Qwen `<tool_call>…</tool_call>` tags, one or more.
    Tagged,
}

impl TextCallForm {
    fn describe(self) -> &'static str {
        match self {
            TextCallForm::Json => "as JSON",
            TextCallForm::Tagged => "in <tool_call> tags",
        }
    }
}

/// One call read from text: the tool's name and its input.
#[derive(Debug, Clone, PartialEq)]
pub struct TextCall {
    /// The name of a tool the request offered, exactly as the request spelled it.
    pub name: String,
    /// The call's input, already checked against that tool's schema.
    pub input: Value,
}

const OPEN_TAG: &str = "<tool_call>";
const CLOSE_TAG: &str = "</tool_call>";
const FENCE: &str = "```";

/// The calls `text` is, if it is nothing but well-formed calls of tools in `tools`; `None`
/// when it is anything else or could be read more than one way. Tags are all or nothing: one
/// that is not a valid call leaves the whole text as text.
///
/// ```
/// use cairn_llm::text_calls::read_text_calls;
/// use cairn_protocol::ToolSpec;
/// use serde_json::json;
///
/// let tools = [ToolSpec {
///     name: "Read".into(),
///     description: "Reads a file".into(),
///     input_schema: json!({"type": "object", "properties": {"file_path": {"type": "string"}},
///                          "required": ["file_path"]}),
/// }];
/// let (calls, _) = read_text_calls(r#"{"name": "Read", "arguments": {"file_path": "a"}}"#, &tools)
///     .expect("a call");
/// assert_eq!(calls[0].input, json!({"file_path": "a"}));
/// assert!(read_text_calls(r#"Here: {"name": "Read", "arguments": {"file_path": "a"}}"#, &tools)
///     .is_none());
/// ```
pub fn read_text_calls(text: &str, tools: &[ToolSpec]) -> Option<(Vec<TextCall>, TextCallForm)> {
    let text = text.trim();
    if text.starts_with(OPEN_TAG) {
        let calls = tagged_objects(text)?
            .into_iter()
            .map(|object| call_of(object, tools))
            .collect::<Option<Vec<_>>>()?;
        return Some((calls, TextCallForm::Tagged));
    }
    let json = match text.strip_prefix(FENCE) {
        Some(fenced) => fenced_json(fenced)?,
        None => text,
    };
    if !json.starts_with('{') {
        return None;
    }
    let call = call_of(serde_json::from_str(json).ok()?, tools)?;
    Some((vec![call], TextCallForm::Json))
}

/// The inside of each `<tool_call>` tag of `text`, which holds nothing else but space.
fn tagged_objects(text: &str) -> Option<Vec<Value>> {
    let mut objects = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let inside = rest.strip_prefix(OPEN_TAG)?;
        let (call, after) = inside.split_once(CLOSE_TAG)?;
        objects.push(serde_json::from_str(call.trim()).ok()?);
        rest = after.trim_start();
    }
    Some(objects)
}

/// The JSON of a fenced block that is the whole text (after its opening fence): the info
/// string is empty or `json`, and the block closes at the text's end.
fn fenced_json(fenced: &str) -> Option<&str> {
    let (info, body) = fenced.split_once('\n')?;
    if !matches!(info.trim(), "" | "json") {
        return None;
    }
    let body = body.trim_end().strip_suffix(FENCE)?;
    // A second fence inside would make this two blocks with text between them.
    (!body.contains(FENCE)).then(|| body.trim())
}

/// The call `object` is: `name`, an offered tool's, and its input under exactly one of
/// `arguments` (an object, or a string holding one, as Chat Completions writes it),
/// `parameters` (Llama's) or `input` (Anthropic's), with at most `"type": "function"`
/// besides; the input valid for the tool's schema.
fn call_of(object: Value, tools: &[ToolSpec]) -> Option<TextCall> {
    let Value::Object(mut object) = object else {
        return None;
    };
    let Some(Value::String(name)) = object.remove("name") else {
        return None;
    };
    if let Some(kind) = object.remove("type")
        && kind != "function"
    {
        return None;
    }
    let mut inputs = ["arguments", "parameters", "input"]
        .into_iter()
        .filter_map(|key| object.remove(key));
    let (input, None) = (inputs.next()?, inputs.next()) else {
        return None;
    };
    if !object.is_empty() {
        return None;
    }
    let input = match input {
        Value::Object(input) => input,
        Value::String(json) => match serde_json::from_str(&json).ok()? {
            Value::Object(input) => input,
            _ => return None,
        },
        _ => return None,
    };
    let mut offered = tools.iter().filter(|tool| tool.name == name);
    let (tool, None) = (offered.next()?, offered.next()) else {
        return None;
    };
    let input = Value::Object(input);
    let valid = jsonschema::validator_for(&tool.input_schema)
        .ok()?
        .is_valid(&input);
    valid.then_some(TextCall { name, input })
}

/// Whether the text streamed so far (`text`) may still be the start of a call written as
/// text: empty, a JSON object, a fenced `json` block, or a `<tool_call>` tag.
fn may_become_call(text: &str) -> bool {
    let text = text.trim_start();
    if text.is_empty() || text.starts_with('{') {
        return true;
    }
    if text.len() < OPEN_TAG.len() {
        if OPEN_TAG.starts_with(text) {
            return true;
        }
    } else if text.starts_with(OPEN_TAG) {
        return true;
    }
    match text.strip_prefix(FENCE) {
        None => FENCE.starts_with(text),
        Some(fenced) => match fenced.split_once('\n') {
            None => "json".starts_with(fenced.trim()),
            Some((info, body)) => {
                matches!(info.trim(), "" | "json") && {
                    let body = body.trim_start();
                    body.is_empty() || body.starts_with('{')
                }
            }
        },
    }
}

/// Holds back an answer's text while it may be a call written as text, and at the answer's
/// end either turns it into the call or lets the text through.
pub(crate) struct Holdback {
    /// Whether the answer may still be read as calls.
    watching: bool,
    held: Vec<ModelEvent>,
    text: String,
}

impl Holdback {
    /// A holdback that watches only when `watch` (the request offers tools the model may
    /// call, and the dialect reads calls in text).
    pub(crate) fn new(watch: bool) -> Self {
        Holdback {
            watching: watch,
            held: Vec::new(),
            text: String::new(),
        }
    }

    /// Passes `event` on to `forward`, or keeps it while the text may still be a call.
    pub(crate) fn pass(&mut self, event: ModelEvent, forward: &mut dyn FnMut(ModelEvent)) {
        if !self.watching {
            return forward(event);
        }
        match &event {
            ModelEvent::TextDelta(text) => {
                self.text.push_str(text);
                self.held.push(event);
                if !may_become_call(&self.text) {
                    self.release(forward);
                }
            }
            // The model calls a tool: its text is text.
            ModelEvent::ToolUseStarted { .. } => {
                self.release(forward);
                forward(event);
            }
            ModelEvent::ThinkingDelta(_)
            | ModelEvent::ToolUseComplete { .. }
            | ModelEvent::Retrying(_)
            | ModelEvent::Note(_)
            | ModelEvent::Interrupted(_) => forward(event),
        }
    }

    fn release(&mut self, forward: &mut dyn FnMut(ModelEvent)) {
        self.watching = false;
        for event in self.held.drain(..) {
            forward(event);
        }
    }

    /// At the answer's end: if its text is calls of `tools` and nothing else, `response`
    /// holds them as `tool_use` blocks (ids from `make_id`) and they are announced as calls;
    /// otherwise the held text goes out. Returns the form of the calls read.
    pub(crate) fn finish(
        mut self,
        response: &mut ModelResponse,
        tools: &[ToolSpec],
        make_id: &mut dyn FnMut(usize) -> String,
        forward: &mut dyn FnMut(ModelEvent),
    ) -> Option<TextCallForm> {
        let whole = !matches!(
            response.stop_reason,
            Some(StopReason::MaxTokens | StopReason::Refusal)
        );
        let has_calls = response
            .content
            .iter()
            .any(|block| matches!(block, ContentBlock::ToolUse { .. }));
        let read = (self.watching && whole && !has_calls)
            .then(|| {
                let text: String = response
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        ContentBlock::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect();
                read_text_calls(&text, tools)
            })
            .flatten();
        let Some((calls, form)) = read else {
            self.release(forward);
            return None;
        };
        response
            .content
            .retain(|block| !matches!(block, ContentBlock::Text { .. }));
        for (index, call) in calls.into_iter().enumerate() {
            let id = make_id(index);
            forward(ModelEvent::ToolUseStarted {
                id: id.clone(),
                name: call.name.clone(),
            });
            forward(ModelEvent::ToolUseComplete {
                id: id.clone(),
                name: call.name.clone(),
                input: call.input.clone(),
            });
            response.content.push(ContentBlock::ToolUse {
                id,
                name: call.name,
                input: call.input,
            });
        }
        response.stop_reason = Some(StopReason::ToolUse);
        Some(form)
    }
}

/// The verbose note for calls read from text: which tools, how they were written, and how
/// many calls this client has read so far (`total`).
pub(crate) fn note(response: &ModelResponse, form: TextCallForm, total: u64) -> String {
    let calls: Vec<String> = response
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolUse { id, name, .. } => Some(format!("{name} ({id})")),
            _ => None,
        })
        .collect();
    format!(
        "the model wrote its call of {} {} instead of calling the tool: cairn runs it as the \
         call it names ({total} tool calls read from text in this run)",
        calls.join(", "),
        form.describe(),
    )
}

/// A fresh id for a call read from text, in the letters every API accepts.
pub(crate) fn fresh_id(index: usize) -> String {
    format!("call_text{:08x}{index}", fastrand::u32(..))
}

#[cfg(test)]
#[path = "text_calls_tests.rs"]
mod tests;
