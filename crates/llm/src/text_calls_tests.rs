use cairn_protocol::Usage;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn tools() -> Vec<ToolSpec> {
    let tool = |name: &str, schema: Value| ToolSpec {
        name: name.into(),
        description: String::new(),
        input_schema: schema,
    };
    vec![
        tool(
            "Read",
            json!({"type": "object", "properties": {"file_path": {"type": "string"},
                   "offset": {"type": "integer"}}, "required": ["file_path"],
                   "additionalProperties": false}),
        ),
        tool(
            "Bash",
            json!({"type": "object", "properties": {"command": {"type": "string"}},
                   "required": ["command"]}),
        ),
        tool(
            "Glob",
            json!({"type": "object", "properties": {"pattern": {"type": "string"}},
                   "required": ["pattern"]}),
        ),
    ]
}

/// The calls a text should be read as: each tool's name and input.
type Calls<'a> = Vec<(&'a str, Value)>;

const READ_A: &str = r#"{"name": "Read", "arguments": {"file_path": "a.txt"}}"#;

/// Texts that are calls, and what they call.
#[test]
fn texts_that_are_nothing_but_calls_are_taken() {
    let read_a = || ("Read", json!({"file_path": "a.txt"}));
    let cases: Vec<(String, Calls, TextCallForm)> = vec![
        (READ_A.into(), vec![read_a()], TextCallForm::Json),
        (
            format!("\n\n  {READ_A}\n"),
            vec![read_a()],
            TextCallForm::Json,
        ),
        // Chat Completions' own shape: the arguments as a JSON string.
        (
            r#"{"name": "Read", "arguments": "{\"file_path\": \"a.txt\"}"}"#.into(),
            vec![read_a()],
            TextCallForm::Json,
        ),
        // Llama's: `type` and `parameters`.
        (
            r#"{"type": "function", "name": "Bash", "parameters": {"command": "ls"}}"#.into(),
            vec![("Bash", json!({"command": "ls"}))],
            TextCallForm::Json,
        ),
        (
            r#"{"name": "Glob", "input": {"pattern": "*.rs"}}"#.into(),
            vec![("Glob", json!({"pattern": "*.rs"}))],
            TextCallForm::Json,
        ),
        (
            format!("```json\n{READ_A}\n```"),
            vec![read_a()],
            TextCallForm::Json,
        ),
        (
            format!("```\n{READ_A}\n```\n"),
            vec![read_a()],
            TextCallForm::Json,
        ),
        (
            format!("<tool_call>\n{READ_A}\n</tool_call>"),
            vec![read_a()],
            TextCallForm::Tagged,
        ),
        // Qwen's parallel calls: one tag each.
        (
            format!(
                "<tool_call>\n{READ_A}\n</tool_call>\n<tool_call>\n{}\n</tool_call>\n",
                r#"{"name": "Read", "arguments": {"file_path": "b.txt", "offset": 3}}"#
            ),
            vec![
                read_a(),
                ("Read", json!({"file_path": "b.txt", "offset": 3})),
            ],
            TextCallForm::Tagged,
        ),
    ];
    for (text, expected, form) in cases {
        let expected: Vec<TextCall> = expected
            .into_iter()
            .map(|(name, input)| TextCall {
                name: name.into(),
                input,
            })
            .collect();
        assert_eq!(
            read_text_calls(&text, &tools()),
            Some((expected, form)),
            "{text}"
        );
    }
}

/// Texts that are not calls, or not only calls, or could be read more than one way.
#[test]
fn texts_that_are_not_only_a_call_stay_text() {
    let cases: Vec<(&str, String)> = vec![
        ("prose before", format!("Let me read it: {READ_A}")),
        ("prose after", format!("{READ_A}\nThat reads the file.")),
        ("prose after a fence", format!("```json\n{READ_A}\n```\nThen I'll edit.")),
        (
            "unknown tool",
            r#"{"name": "Delete", "arguments": {"file_path": "a.txt"}}"#.into(),
        ),
        (
            "tool name in another case",
            r#"{"name": "read", "arguments": {"file_path": "a.txt"}}"#.into(),
        ),
        (
            "a required field missing",
            r#"{"name": "Read", "arguments": {}}"#.into(),
        ),
        (
            "a field of the wrong type",
            r#"{"name": "Read", "arguments": {"file_path": "a", "offset": "ten"}}"#.into(),
        ),
        (
            "a field the schema does not allow",
            r#"{"name": "Read", "arguments": {"file_path": "a", "mode": "x"}}"#.into(),
        ),
        (
            "two readings: arguments and parameters",
            r#"{"name": "Bash", "arguments": {"command": "ls"}, "parameters": {"command": "rm -rf ."}}"#
                .into(),
        ),
        (
            "a key no call has",
            r#"{"name": "Bash", "arguments": {"command": "ls"}, "why": "to look"}"#.into(),
        ),
        (
            "a type that is not function",
            r#"{"type": "object", "name": "Bash", "parameters": {"command": "ls"}}"#.into(),
        ),
        ("no name, only arguments", r#"{"file_path": "a.txt"}"#.into()),
        ("no arguments", r#"{"name": "Bash"}"#.into()),
        (
            "a name that is not a string",
            r#"{"name": ["Bash"], "arguments": {"command": "ls"}}"#.into(),
        ),
        (
            "arguments that are not an object",
            r#"{"name": "Bash", "arguments": ["ls"]}"#.into(),
        ),
        (
            "arguments as a string that is no object",
            r#"{"name": "Bash", "arguments": "ls"}"#.into(),
        ),
        ("an array of calls", format!("[{READ_A}]")),
        ("a fence of another language", format!("```rust\n{READ_A}\n```")),
        (
            "two fenced blocks",
            format!("```json\n{READ_A}\n```\n```json\n{READ_A}\n```"),
        ),
        (
            "text between tags",
            format!("<tool_call>{READ_A}</tool_call> and <tool_call>{READ_A}</tool_call>"),
        ),
        (
            "one tag of two is no valid call",
            format!(
                "<tool_call>{READ_A}</tool_call><tool_call>{}</tool_call>",
                r#"{"name": "Read", "arguments": {}}"#
            ),
        ),
        ("an unclosed tag", format!("<tool_call>\n{READ_A}")),
        ("JSON cut off", r#"{"name": "Read", "arguments": {"file_path": "a"#.into()),
        ("empty", String::new()),
    ];
    for (case, text) in cases {
        assert_eq!(read_text_calls(&text, &tools()), None, "{case}: {text}");
    }
}

/// Which beginnings of an answer are held back: only those that may still become a call.
#[test]
fn only_a_beginning_that_may_become_a_call_is_held() {
    let cases = [
        ("", true),
        ("  \n", true),
        ("{", true),
        ("{\"name\": \"Re", true),
        ("<tool", true),
        ("<tool_call>\n{", true),
        ("`", true),
        ("```", true),
        ("```js", true),
        ("```json", true),
        ("```json\n", true),
        ("```json\n{\"na", true),
        ("```\n{", true),
        ("Hello", false),
        ("<b>", false),
        ("```rust", false),
        ("```jsonc\n", false),
        ("```json\nfn main", false),
        ("[{", false),
    ];
    let got: Vec<(&str, bool)> = cases
        .iter()
        .map(|(text, _)| (*text, may_become_call(text)))
        .collect();
    assert_eq!(got, cases.to_vec());
}

fn response(content: Vec<ContentBlock>, stop_reason: StopReason) -> ModelResponse {
    ModelResponse {
        id: "chatcmpl-1".into(),
        model: "llama3.2".into(),
        content,
        stop_reason: Some(stop_reason),
        usage: Usage::default(),
        malformed_tool_inputs: Vec::new(),
    }
}

/// Streams `pieces` through a holdback, then finishes it on `final_response`: the events the
/// face saw and the response the engine gets.
fn hold(
    watch: bool,
    pieces: &[&str],
    final_response: ModelResponse,
) -> (Vec<ModelEvent>, ModelResponse, Option<TextCallForm>) {
    let mut seen = Vec::new();
    let mut holdback = Holdback::new(watch);
    let mut forward = |event| seen.push(event);
    for piece in pieces {
        holdback.pass(ModelEvent::TextDelta((*piece).into()), &mut forward);
    }
    let mut response = final_response;
    let form = holdback.finish(
        &mut response,
        &tools(),
        &mut |index| format!("call_t{index}"),
        &mut forward,
    );
    (seen, response, form)
}

/// A call written as text is shown and kept as the call, never as its JSON.
#[test]
fn a_call_written_as_text_becomes_the_call() {
    let thinking = ContentBlock::Thinking {
        thinking: "read it".into(),
        signature: String::new(),
    };
    let (seen, response, form) = hold(
        true,
        &[
            "{\"name\": \"Read\", ",
            "\"arguments\": {\"file_path\": \"a.txt\"}}",
        ],
        response(
            vec![thinking.clone(), ContentBlock::text(READ_A)],
            StopReason::EndTurn,
        ),
    );
    assert_eq!(form, Some(TextCallForm::Json));
    let call = ContentBlock::ToolUse {
        id: "call_t0".into(),
        name: "Read".into(),
        input: json!({"file_path": "a.txt"}),
    };
    assert_eq!(response.content, vec![thinking, call]);
    assert_eq!(response.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(
        seen,
        vec![
            ModelEvent::ToolUseStarted {
                id: "call_t0".into(),
                name: "Read".into()
            },
            ModelEvent::ToolUseComplete {
                id: "call_t0".into(),
                name: "Read".into(),
                input: json!({"file_path": "a.txt"})
            },
        ]
    );
    assert_eq!(
        note(&response, TextCallForm::Json, 3),
        "the model wrote its call of Read (call_t0) as JSON instead of calling the tool: cairn \
         runs it as the call it names (3 tool calls read from text in this run)"
    );
}

/// Prose streams as soon as it is prose; a JSON text that is no call comes out whole at the
/// end; an answer cut off by the output cap, or one that does not watch, is never read.
#[test]
fn text_that_is_no_call_reaches_the_face_unchanged() {
    let deltas = |pieces: &[&str]| -> Vec<ModelEvent> {
        pieces
            .iter()
            .map(|piece| ModelEvent::TextDelta((*piece).into()))
            .collect()
    };
    let mut seen = Vec::new();
    let mut holdback = Holdback::new(true);
    holdback.pass(ModelEvent::TextDelta("  ".into()), &mut |e| seen.push(e));
    assert_eq!(seen, vec![], "a beginning that may be a call waits");
    holdback.pass(ModelEvent::TextDelta("Sure".into()), &mut |e| seen.push(e));
    assert_eq!(seen, deltas(&["  ", "Sure"]), "prose goes out at once");

    let unknown = r#"{"name": "Delete", "arguments": {}}"#;
    let cases = [
        (true, unknown, StopReason::EndTurn),
        (true, READ_A, StopReason::MaxTokens),
        (false, READ_A, StopReason::EndTurn),
    ];
    for (watch, text, stop) in cases {
        let (seen, response, form) = hold(
            watch,
            &[&text[..5], &text[5..]],
            response(vec![ContentBlock::text(text)], stop),
        );
        assert_eq!(form, None, "{text}");
        assert_eq!(seen, deltas(&[&text[..5], &text[5..]]), "{text}");
        assert_eq!(response.content, vec![ContentBlock::text(text)]);
        assert_eq!(response.stop_reason, Some(stop));
    }

    // A message that calls a tool itself: its text is text, whatever it looks like.
    let mut seen = Vec::new();
    let mut holdback = Holdback::new(true);
    holdback.pass(ModelEvent::TextDelta(READ_A.into()), &mut |e| seen.push(e));
    let started = ModelEvent::ToolUseStarted {
        id: "call_1".into(),
        name: "Glob".into(),
    };
    holdback.pass(started.clone(), &mut |e| seen.push(e));
    assert_eq!(seen, vec![ModelEvent::TextDelta(READ_A.into()), started]);
}
