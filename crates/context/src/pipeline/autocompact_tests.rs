#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use cairn_protocol::{ContentBlock, Message, Role};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;
use crate::pipeline::PipelineSettings;

fn call(id: &str, name: &str, input: Value) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![ContentBlock::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
        }],
    }
}

fn result(id: &str, text: &str) -> Message {
    Message {
        role: Role::User,
        content: vec![ContentBlock::tool_result(id, text, false)],
    }
}

fn answer(text: &str) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![ContentBlock::text(text)],
    }
}

/// The first line of each file block of the opening.
fn attached(rebuilt: &[Message]) -> Vec<String> {
    rebuilt[0]
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } if text.starts_with(FILE_HEADER_PREFIX) => {
                text.lines().next().map(str::to_string)
            }
            _ => None,
        })
        .collect()
}

const MANUAL: Trigger = Trigger::Manual { instructions: None };

/// One turn: the prompt, a whole read of `path`, an edit of it, and the answer.
fn read_and_edit(path: &str, text: &str) -> Vec<Message> {
    vec![
        Message::user_text("Rename the parser's entry point."),
        call("read", "Read", json!({"file_path": path})),
        result("read", text),
        call(
            "edit",
            "Edit",
            json!({"file_path": path, "old_string": "parse", "new_string": "parse_all"}),
        ),
        result("edit", "The file was edited."),
        answer("Renamed it."),
    ]
}

#[test]
fn a_file_the_kept_turn_read_whole_is_not_attached_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parser.rs");
    let text = "fn parse_all() {}\n".repeat(50);
    std::fs::write(&path, &text).unwrap();
    let path = path.display().to_string();
    let conversation = read_and_edit(&path, &text);
    let limits = PipelineSettings::default().limits(Some(200_000));

    let rebuilt = rebuild(&conversation, "summary", &MANUAL, limits);
    // The whole turn is kept, its read included: the file is there once.
    assert_eq!(&rebuilt[1..], &conversation[1..]);
    assert_eq!(attached(&rebuilt), Vec::<String>::new());

    // Read with a limit, the kept turn shows part of it: the file comes whole.
    let mut partly = conversation.clone();
    partly[1] = call("read", "Read", json!({"file_path": path, "limit": 3}));
    let rebuilt = rebuild(&partly, "summary", &MANUAL, limits);
    assert_eq!(
        attached(&rebuilt),
        vec![format!("[File {path}{FILE_EDITED_SUFFIX}")]
    );
}

#[test]
fn the_rebuilt_conversation_stays_under_the_ceiling() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parser.rs");
    // The file on disk has grown far past what the conversation showed of it.
    std::fs::write(&path, "fn parse_all() {}\n".repeat(2_000)).unwrap();
    let path = path.display().to_string();
    let mut conversation = read_and_edit(&path, &"fn parse() {}\n".repeat(400));
    conversation[1] = call("read", "Read", json!({"file_path": path, "limit": 400}));
    let limits = PipelineSettings::default().limits(Some(200_000));
    let before = messages_tokens(&conversation);

    let unbounded = rebuild(&conversation, "summary", &MANUAL, limits);
    assert!(
        messages_tokens(&unbounded) > before,
        "without a ceiling it grows"
    );

    let rebuilt = rebuild_within(&conversation, "summary", &MANUAL, limits, before);
    assert!(
        messages_tokens(&rebuilt) < before,
        "{} tokens, was {before}",
        messages_tokens(&rebuilt)
    );
    assert_eq!(attached(&rebuilt), Vec::<String>::new());
    // What fits of the turn is kept, from a message of the model's.
    assert_eq!(rebuilt.last(), conversation.last());
    assert_eq!(rebuilt[1].role, Role::Assistant);
}
