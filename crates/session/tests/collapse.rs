//! The context pipeline's collapse mark in the session file: each collapse the engine reports
//! is written as a `collapse` entry, and loading gives back the last mark after the last
//! compaction boundary, so a resumed session shows the same collapsed view.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::Path;

use cairn_protocol::{AgentEvent, Compaction, ContentBlock, Message, Role, Usage};
use cairn_session::{
    AssistantEntry, CollapseEntry, Entry, NewSession, SessionId, SessionStore, entry_for,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const CWD: &str = "/work/app";

fn answer(text: &str) -> Entry {
    Entry::Assistant(AssistantEntry {
        timestamp: 2,
        message: Message {
            role: Role::Assistant,
            content: vec![ContentBlock::text(text)],
        },
        model: "claude-sonnet-4-5".to_owned(),
        message_id: None,
        usage: Usage::default(),
        cost_usd: 0.0,
    })
}

/// What the engine reports when the pipeline collapses the view through `through`.
fn collapsed(through: u64, before: u64, after: u64) -> AgentEvent {
    AgentEvent::Compacted(Compaction {
        step: "collapse".into(),
        manual: false,
        tokens_before: before,
        tokens_after: after,
        summary: None,
        opening: Vec::new(),
        collapsed_through: Some(through),
    })
}

/// Writes `entries` to a new session file and returns the store, the id and the file's path.
fn write_session(entries: &[Entry]) -> (tempfile::TempDir, SessionStore, SessionId) {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let id = SessionId::new();
    let mut writer = store
        .create(
            Path::new(CWD),
            &id,
            NewSession {
                model: "claude-sonnet-4-5".to_owned(),
                git_branch: None,
            },
        )
        .unwrap();
    for entry in entries {
        writer.append(entry).unwrap();
    }
    writer.sync().unwrap();
    (home, store, id)
}

fn turns(count: usize) -> Vec<Entry> {
    (0..count)
        .flat_map(|turn| {
            [
                Entry::user(Message::user_text(format!("prompt {turn}"))),
                answer(&format!("answer {turn}")),
            ]
        })
        .collect()
}

#[test]
fn a_collapse_is_written_as_its_own_line_and_a_resume_gets_the_last_mark() {
    let first = entry_for(&collapsed(4, 150_412, 98_650)).unwrap();
    let Entry::Collapse(CollapseEntry { timestamp, .. }) = first else {
        panic!("a collapse is recorded as a collapse entry: {first:?}")
    };
    let mut entries = turns(3);
    entries.push(first);
    entries.extend(turns(3));
    entries.push(entry_for(&collapsed(8, 151_000, 99_000)).unwrap());
    let (_home, store, id) = write_session(&entries);

    let text = std::fs::read_to_string(store.path(Path::new(CWD), &id)).unwrap();
    let line: Value = serde_json::from_str(text.lines().nth(7).unwrap()).unwrap();
    assert_eq!(
        line,
        json!({
            "type": "collapse",
            "timestamp": timestamp,
            "collapsed_through": 4,
            "tokens_before": 150_412,
            "tokens_after": 98_650,
        })
    );

    let loaded = store.load(Path::new(CWD), &id).unwrap();
    assert_eq!(loaded.collapsed_through, Some(8));
    // The history itself is whole: collapse only changes what requests show.
    let expected: Vec<Message> = (0..3)
        .chain(0..3)
        .flat_map(|turn| {
            [
                Message::user_text(format!("prompt {turn}")),
                Message {
                    role: Role::Assistant,
                    content: vec![ContentBlock::text(format!("answer {turn}"))],
                },
            ]
        })
        .collect();
    assert_eq!(loaded.messages, expected);
    assert_eq!(loaded.warnings, Vec::new());
}

#[test]
fn a_compaction_boundary_ends_the_collapse_before_it() {
    let summary = AgentEvent::Compacted(Compaction {
        step: "autocompact".into(),
        manual: false,
        tokens_before: 167_000,
        tokens_after: 20_000,
        summary: Some("The user asked for a report.".into()),
        opening: vec![Message::user_text("The summary, and the state.")],
        collapsed_through: None,
    });
    let mut entries = turns(3);
    entries.push(entry_for(&collapsed(4, 150_000, 99_000)).unwrap());
    entries.push(entry_for(&summary).unwrap());
    let (_home, store, id) = write_session(&entries);
    let loaded = store.load(Path::new(CWD), &id).unwrap();
    assert_eq!(loaded.collapsed_through, None);
    assert_eq!(
        loaded.messages,
        vec![Message::user_text("The summary, and the state.")]
    );

    // A collapse after the boundary counts from the compacted opening.
    entries.extend(turns(2));
    entries.push(entry_for(&collapsed(2, 150_000, 99_000)).unwrap());
    let (_home, store, id) = write_session(&entries);
    assert_eq!(
        store.load(Path::new(CWD), &id).unwrap().collapsed_through,
        Some(2)
    );
}

#[test]
fn lighter_steps_leave_no_line() {
    let snip = AgentEvent::Compacted(Compaction {
        step: "microcompact".into(),
        manual: false,
        tokens_before: 160_000,
        tokens_after: 120_000,
        summary: None,
        opening: Vec::new(),
        collapsed_through: None,
    });
    assert_eq!(entry_for(&snip), None);
}
