//! The same end-to-end scenarios through both faces, `cairn -p` and the interactive UI on a
//! pseudo-terminal: a tool round trip, refusals (a deny rule, a question nobody or the user
//! says no to), a hook that blocks, a custom command, a compaction and `-c`. Each scenario
//! is written once against [`Face`] and instantiated by [`on_both_faces!`]: once per face,
//! and once through both to compare every request they sent. Each asserts what the model
//! received (the scripted server records every request), what is on disk, and what the user
//! saw. A session begun in one face also continues in the other.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::{RecordedRequest, Reply};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::faces::{Face, FaceKind, Start, Step};
use support::{Harness, WAIT, without_cache_marks};

/// Three tests per scenario function `NAME`: `headless::NAME` and `interactive::NAME` run it
/// through one face each; `alike::NAME` runs it through both and compares every request
/// they sent.
macro_rules! on_both_faces {
    ($($scenario:ident),* $(,)?) => {
        mod headless {
            $(
                #[test]
                fn $scenario() {
                    super::$scenario(&crate::support::faces::Headless);
                }
            )*
        }
        mod interactive {
            $(
                #[test]
                fn $scenario() {
                    super::$scenario(&crate::support::faces::Interactive);
                }
            )*
        }
        mod alike {
            $(
                #[test]
                fn $scenario() {
                    pretty_assertions::assert_eq!(
                        super::$scenario(&crate::support::faces::Headless),
                        super::$scenario(&crate::support::faces::Interactive),
                        "the requests of `cairn -p` (left) and the interactive UI (right)"
                    );
                }
            )*
        }
    };
}

on_both_faces! {
    a_tool_result_reaches_the_next_request_and_the_answer_is_shown,
    a_deny_rule_in_the_users_settings_refuses_the_call_unasked,
    a_call_that_needs_approval_is_refused_and_the_model_is_told_why,
    a_pre_tool_use_hook_that_exits_2_blocks_the_call_with_its_message,
    a_custom_command_sends_its_name_its_expansion_and_the_session_context,
    compact_summarizes_and_the_next_request_carries_the_summary,
    continue_carries_the_first_runs_messages_into_the_second,
}

const SUMMARY: &str = "SUMMARY-OF-THE-SESSION: the user asked to remember the number 42.";

/// The content blocks of message `n` of a request, without cache marks.
fn blocks(request: &RecordedRequest, n: usize) -> Vec<Value> {
    let message = without_cache_marks(request.body["messages"][n].clone());
    match message["content"].clone() {
        Value::Array(blocks) => blocks,
        Value::String(text) => vec![json!({"type": "text", "text": text})],
        other => panic!("message {n} has content {other}"),
    }
}

/// The text blocks of message `n` of a request, in order.
fn texts_of(request: &RecordedRequest, n: usize) -> Vec<String> {
    blocks(request, n)
        .iter()
        .filter_map(|block| block["text"].as_str().map(str::to_string))
        .collect()
}

/// Each message of a request as one line: its text blocks joined, other blocks by type.
fn conversation(request: &RecordedRequest) -> Vec<String> {
    let count = request.body["messages"].as_array().map_or(0, Vec::len);
    (0..count)
        .map(|n| {
            blocks(request, n)
                .iter()
                .map(|block| match block["text"].as_str() {
                    Some(text) => text.to_string(),
                    None => format!("<{}>", block["type"].as_str().unwrap_or("?")),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// The single tool result the last message of `request` answers with, without cache marks.
fn the_tool_result(request: &RecordedRequest) -> Value {
    let last = request.body["messages"].as_array().unwrap().len() - 1;
    let blocks = blocks(request, last);
    assert_eq!(blocks.len(), 1, "one tool result: {blocks:#?}");
    assert_eq!(blocks[0]["type"], json!("tool_result"), "{blocks:#?}");
    blocks[0].clone()
}

/// A summary request: the conversation sent once more, no tool callable.
fn is_summary(request: &RecordedRequest) -> bool {
    request.body["tool_choice"]["type"] == json!("none")
}

/// Every request a session sent, as the model received it, with the names of the test's own
/// directories (its HOME, its project and the project's folder in cairn's home) put as
/// `HOME`, `WORK` and `PROJECT`, so that two runs compare.
#[derive(Debug, PartialEq)]
struct Sent(Vec<Value>);

impl Sent {
    /// `text` replaced by `placeholder` wherever a request sent it as a whole string: for
    /// what a scenario expects to differ between the faces, and has checked.
    fn masking(mut self, text: &str, placeholder: &str) -> Sent {
        fn mask(value: &mut Value, text: &str, placeholder: &str) {
            match value {
                Value::String(string) if string == text => *string = placeholder.to_string(),
                Value::Object(object) => object
                    .values_mut()
                    .for_each(|value| mask(value, text, placeholder)),
                Value::Array(items) => items
                    .iter_mut()
                    .for_each(|value| mask(value, text, placeholder)),
                _ => {}
            }
        }
        self.0
            .iter_mut()
            .for_each(|body| mask(body, text, placeholder));
        self
    }
}

/// The tools the interactive UI offers and `cairn -p` does not (nobody there could answer).
const ONLY_WHERE_SOMEONE_ANSWERS: &[&str] = &["EnterPlanMode", "AskUserQuestion"];

/// What `requests`, received by `h`'s server, sent (see [`Sent`]), without the tools of
/// [`ONLY_WHERE_SOMEONE_ANSWERS`].
fn sent(h: &Harness, requests: &[RecordedRequest]) -> Sent {
    let mut names: Vec<(String, &str)> = Vec::new();
    for project in std::fs::read_dir(h.cairn_home().join("projects")).unwrap() {
        let name = project.unwrap().file_name().to_string_lossy().into_owned();
        names.push((name, "PROJECT"));
    }
    for (dir, placeholder) in [(h.work.path(), "WORK"), (h.home.path(), "HOME")] {
        names.push((
            dir.canonicalize().unwrap().display().to_string(),
            placeholder,
        ));
        names.push((dir.display().to_string(), placeholder));
    }
    let bodies = requests
        .iter()
        .map(|request| {
            let mut text = request.body.to_string();
            for (name, placeholder) in &names {
                text = text.replace(name.as_str(), placeholder);
            }
            let mut body: Value = serde_json::from_str(&text).unwrap();
            // The tools that need someone to answer are offered only where someone can; the
            // cache mark on the last tool then sits on another one.
            if let Some(Value::Array(tools)) = body.get_mut("tools") {
                for tool in tools.iter_mut() {
                    if let Some(tool) = tool.as_object_mut() {
                        tool.remove("cache_control");
                    }
                }
                tools.retain(|tool| {
                    !ONLY_WHERE_SOMEONE_ANSWERS.contains(&tool["name"].as_str().unwrap_or(""))
                });
            }
            body
        })
        .collect();
    Sent(bodies)
}

fn a_tool_result_reaches_the_next_request_and_the_answer_is_shown(face: &dyn Face) -> Sent {
    let h = Harness::new();
    std::fs::write(h.path("notes.txt"), "alpha\nbeta\n").unwrap();
    h.server.push(Reply::tool_use(
        "read-1",
        "Read",
        json!({"file_path": "notes.txt"}),
    ));
    h.server.push(Reply::text("It lists alpha and beta."));

    let mut session = face.open(&h, Start::New);
    session.say(&Step::new(
        "What is in notes.txt?",
        "It lists alpha and beta.",
    ));
    session.close();

    let requests = h.server.wait_for_requests(2, WAIT);
    assert_eq!(requests.len(), 2, "a request, then one with the result");
    assert_eq!(texts_of(&requests[0], 0), ["What is in notes.txt?"]);
    assert_eq!(
        blocks(&requests[1], 1),
        [json!({"type": "tool_use", "id": "read-1", "name": "Read",
                "input": {"file_path": "notes.txt"}})]
    );
    assert_eq!(
        the_tool_result(&requests[1]),
        json!({"type": "tool_result", "tool_use_id": "read-1",
               "content": "     1\talpha\n     2\tbeta\n"})
    );
    sent(&h, &requests)
}

fn a_deny_rule_in_the_users_settings_refuses_the_call_unasked(face: &dyn Face) -> Sent {
    let h = Harness::new();
    h.user_settings(json!({"permissions": {"deny": ["Bash(touch:*)"]}}));
    h.server.push(Reply::tool_use(
        "bash-1",
        "Bash",
        json!({"command": "touch made-by-bash.txt"}),
    ));
    h.server.push(Reply::text("The rule refused the command."));

    let mut session = face.open(&h, Start::New);
    // No dialog: a deny rule refuses before anyone could be asked.
    session.say(&Step::new(
        "Make the file.",
        "The rule refused the command.",
    ));
    session.close();

    assert!(!h.path("made-by-bash.txt").exists(), "the command ran");
    let requests = h.server.wait_for_requests(2, WAIT);
    assert_eq!(
        the_tool_result(&requests[1]),
        json!({"type": "tool_result", "tool_use_id": "bash-1", "is_error": true,
               "content": "The permission rule Bash(touch:*) denies this call."})
    );
    sent(&h, &requests)
}

fn a_call_that_needs_approval_is_refused_and_the_model_is_told_why(face: &dyn Face) -> Sent {
    let h = Harness::new();
    h.server.push(Reply::tool_use(
        "write-1",
        "Write",
        json!({"file_path": "asked.txt", "content": "x\n"}),
    ));
    h.server.push(Reply::text("I left asked.txt alone."));

    let mut session = face.open(&h, Start::New);
    // In -p nobody can be asked, so the question is refused; on the terminal the user says No.
    session.say(&Step::new("Write asked.txt.", "I left asked.txt alone.").refusing_the_question());
    session.close();

    assert!(!h.path("asked.txt").exists(), "the write ran");
    let requests = h.server.wait_for_requests(2, WAIT);
    let mut result = the_tool_result(&requests[1]);
    let text = result["content"].take();
    assert_eq!(
        result,
        json!({"type": "tool_result", "tool_use_id": "write-1", "is_error": true,
               "content": null}),
        "an error result whose content is one text"
    );
    let text = text.as_str().expect("the refusal is one text");
    let why = match face.kind() {
        FaceKind::Headless => "This call needs approval, and nobody can be asked in cairn -p.",
        FaceKind::Interactive => "The user denied this tool call.",
    };
    assert!(text.contains(why), "{text:?} should say {why:?}");
    // Who refused is the one difference the model may see.
    sent(&h, &requests).masking(text, "<the refusal>")
}

fn a_pre_tool_use_hook_that_exits_2_blocks_the_call_with_its_message(face: &dyn Face) -> Sent {
    let h = Harness::new();
    h.user_settings(
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "echo 'no shell today' >&2; exit 2"}
        ]}]}}),
    );
    h.server.push(Reply::tool_use(
        "bash-1",
        "Bash",
        json!({"command": "touch hooked.txt"}),
    ));
    h.server.push(Reply::text("The hook stopped the command."));

    let mut session = face.open(&h, Start::New);
    // The hook decides before anyone would be asked.
    session.say(&Step::new(
        "Make the file.",
        "The hook stopped the command.",
    ));
    session.close();

    assert!(!h.path("hooked.txt").exists(), "the command ran");
    let requests = h.server.wait_for_requests(2, WAIT);
    assert_eq!(
        the_tool_result(&requests[1]),
        json!({"type": "tool_result", "tool_use_id": "bash-1", "is_error": true,
               "content": "A PreToolUse hook blocked this call: no shell today"})
    );
    sent(&h, &requests)
}

fn a_custom_command_sends_its_name_its_expansion_and_the_session_context(face: &dyn Face) -> Sent {
    let h = Harness::new();
    let commands = h.path(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(commands.join("greet.md"), "Say hello to $ARGUMENTS\n").unwrap();
    h.user_settings(json!({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": "echo 'The build uses make.'"}
    ]}]}}));
    h.server.push(Reply::text("Hello, Ada!"));

    let mut session = face.open(&h, Start::New);
    let turn = session.say(&Step::new("/greet Ada", "Hello, Ada!"));
    session.close();

    // The user sees the answer, not the expansion; the model gets the tag, the expansion
    // and the SessionStart hook's context as a reminder.
    assert!(!turn.shown.contains("Say hello to Ada"), "{}", turn.shown);
    let requests = h.server.wait_for_requests(1, WAIT);
    assert_eq!(requests.len(), 1);
    assert_eq!(
        texts_of(&requests[0], 0),
        [
            "<command-name>/greet</command-name>\n<command-args>Ada</command-args>",
            "Say hello to Ada",
            "<system-reminder>\nThe build uses make.\n</system-reminder>",
        ]
    );
    sent(&h, &requests)
}

fn compact_summarizes_and_the_next_request_carries_the_summary(face: &dyn Face) -> Sent {
    let h = Harness::new();
    h.server.reply_to_side_requests(vec![Reply::text(SUMMARY)]);
    // Answers long enough that a summary of them is the smaller (else there is nothing to
    // gain, and the conversation is kept).
    let more = " I will keep it in mind for the rest of this session.".repeat(12);
    let (number, colour) = (format!("Noted: 42.{more}"), format!("Noted: blue.{more}"));
    h.server.push(Reply::text(&number));
    h.server.push(Reply::text(&colour));
    h.server.push(Reply::text("It was 42."));

    let mut session = face.open(&h, Start::New);
    session.say(&Step::shows_each(
        "Remember the number 42.",
        &number,
        "Noted: 42.",
    ));
    session.say(&Step::shows_each(
        "And the colour blue.",
        &colour,
        "Noted: blue.",
    ));
    session.say(&Step::shows_each(
        "/compact",
        "The conversation was compacted.",
        "Conversation compacted (manual)",
    ));
    session.say(&Step::new("What was the number?", "It was 42."));
    session.close();

    let requests = h.server.wait_for_requests(4, WAIT);
    let summaries: Vec<bool> = requests.iter().map(is_summary).collect();
    assert_eq!(
        summaries,
        [false, false, true, false],
        "a summary between the turns"
    );
    let summarized = conversation(&requests[2]).join("\n");
    assert!(summarized.contains("Noted: 42."), "{summarized}");
    assert!(summarized.contains("Noted: blue."), "{summarized}");
    let after = conversation(&requests[3]);
    let text = after.join("\n");
    assert!(text.contains(SUMMARY), "the summary is sent: {after:#?}");
    // The user's words are carried over verbatim; the model's first answer is not.
    assert!(text.contains("Remember the number 42."), "{after:#?}");
    assert!(
        !text.contains("Noted: 42."),
        "the first answer is summarized away: {after:#?}"
    );
    assert_eq!(after.last().unwrap(), "What was the number?");
    sent(&h, &requests)
}

fn continue_carries_the_first_runs_messages_into_the_second(face: &dyn Face) -> Sent {
    continuing(face, face)
}

/// A session begun on `first` and continued with `-c` on `second`.
fn continuing(first: &dyn Face, second: &dyn Face) -> Sent {
    let h = Harness::new();
    h.server.push(Reply::text("Noted: 42."));
    h.server.push(Reply::text("It was 42."));

    let mut session = first.open(&h, Start::New);
    session.say(&Step::new("Remember the number 42.", "Noted: 42."));
    session.close();
    let mut session = second.open(&h, Start::Continue);
    session.say(&Step::new("What was the number?", "It was 42."));
    session.close();

    let requests = h.server.wait_for_requests(2, WAIT);
    assert_eq!(requests.len(), 2);
    assert_eq!(
        conversation(&requests[1]),
        [
            "Remember the number 42.",
            "Noted: 42.",
            "What was the number?"
        ]
    );
    sent(&h, &requests)
}

/// The faces share their sessions: one begun in either continues in the other, and the
/// model gets what it gets when one face does both.
#[test]
fn a_session_continues_from_one_face_in_the_other() {
    use support::faces::{Headless, Interactive};
    let same_face = continuing(&Headless, &Headless);
    assert_eq!(
        continuing(&Headless, &Interactive),
        same_face,
        "-p, then the UI"
    );
    assert_eq!(
        continuing(&Interactive, &Headless),
        same_face,
        "the UI, then -p"
    );
}
