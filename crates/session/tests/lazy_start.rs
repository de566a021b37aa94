//! Sessions that are sessions: a new session's file appears with its first message, a
//! session whose turns failed before any answer is listed as failed, and the list shows the
//! prompt as typed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::fs;
use std::path::Path;

use cairn_protocol::{ContentBlock, Message, Role, Usage};
use cairn_session::{
    AssistantEntry, Entry, NewSession, Persistence, SessionId, SessionStore, read_entries,
};
use pretty_assertions::assert_eq;

fn new_session() -> NewSession {
    NewSession {
        model: "claude-sonnet-4-5".to_owned(),
        git_branch: None,
    }
}

fn answer(text: &str) -> Entry {
    Entry::Assistant(AssistantEntry {
        timestamp: 2,
        message: Message {
            role: Role::Assistant,
            content: vec![ContentBlock::text(text)],
        },
        model: "claude-sonnet-4-5-20250929".to_owned(),
        message_id: None,
        usage: Usage::default(),
        cost_usd: 0.01,
    })
}

/// The `type` of each line of a session file.
fn line_types(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            value["type"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn a_session_in_which_nothing_was_said_leaves_nothing_behind() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let cwd = Path::new("/work/app");
    let id = SessionId::new();

    let mut log = store.start(cwd, &id, new_session());
    // A model switch alone (`/model opus`, then Ctrl+D) is not a conversation either.
    log.append(&Entry::model_change("claude-opus-4-1"));
    log.sync();
    assert_eq!(log.persistence(), Persistence::NotStarted);
    assert_eq!(log.path(), None);
    drop(log);

    assert!(!home.path().join("projects").exists(), "no directory made");
    assert_eq!(store.latest(cwd).unwrap(), None);
    assert_eq!(store.list(cwd).unwrap(), vec![]);
}

#[test]
fn the_first_message_writes_the_header_and_what_waited_for_it() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let cwd = Path::new("/work/app");
    let id = SessionId::new();

    let mut log = store.start(cwd, &id, new_session());
    log.append(&Entry::model_change("claude-opus-4-1"));
    assert!(!store.path(cwd, &id).exists());
    log.append(&Entry::user(Message::user_text("fix the bug")));
    log.append(&answer("fixed"));
    log.sync();
    assert_eq!(log.persistence(), Persistence::OnDisk);
    assert_eq!(log.path(), Some(store.path(cwd, &id).as_path()));
    assert_eq!(log.take_warning().map(|warning| warning.to_string()), None);

    assert_eq!(
        line_types(&store.path(cwd, &id)),
        ["header", "model_change", "user", "assistant"]
    );
    let loaded = store.load(cwd, &id).unwrap();
    assert_eq!(loaded.model, "claude-opus-4-1");
    assert_eq!(loaded.header.session_id, id);
    assert_eq!(loaded.messages.len(), 2);
    assert_eq!(store.latest(cwd).unwrap(), Some(id));
}

#[test]
fn a_fork_is_copied_with_its_first_message_and_not_at_all_without_one() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let cwd = Path::new("/work/app");
    let original = SessionId::new();
    let mut log = store.start(cwd, &original, new_session());
    log.append(&Entry::user(Message::user_text("the question")));
    log.append(&answer("the answer"));
    log.sync();
    drop(log);
    let before = fs::read(store.path(cwd, &original)).unwrap();

    // Forked, then left before anything was said: no copy.
    let idle = SessionId::new();
    let log = store.start_fork(cwd, &original, &idle).unwrap();
    assert_eq!(log.persistence(), Persistence::NotStarted);
    drop(log);
    assert!(!store.path(cwd, &idle).exists());
    assert_eq!(store.list(cwd).unwrap().len(), 1);

    // Forked, repaired and continued: the copy, the repair, then the new message.
    let forked = SessionId::new();
    let mut log = store.start_fork(cwd, &original, &forked).unwrap();
    log.append_to_history(&Entry::model_change("claude-opus-4-1"));
    assert!(!store.path(cwd, &forked).exists());
    log.append(&Entry::user(Message::user_text("and then?")));
    log.sync();
    assert_eq!(log.take_warning().map(|warning| warning.to_string()), None);
    drop(log);
    assert_eq!(
        line_types(&store.path(cwd, &forked)),
        ["header", "user", "assistant", "model_change", "user"]
    );
    let loaded = store.load(cwd, &forked).unwrap();
    assert_eq!(loaded.header.forked_from, Some(original));
    assert_eq!(loaded.messages.len(), 3);
    assert_eq!(fs::read(store.path(cwd, &original)).unwrap(), before);

    // Onto an existing id: refused at once.
    assert_eq!(
        store
            .start_fork(cwd, &original, &forked)
            .err()
            .map(|error| error.to_string()),
        Some(format!(
            "the session file {} already exists",
            store.path(cwd, &forked).display()
        ))
    );
}

#[test]
fn starting_a_session_whose_file_exists_keeps_it_in_memory_and_says_so() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let cwd = Path::new("/work/app");
    let id = SessionId::new();
    let mut first = store.start(cwd, &id, new_session());
    first.append(&Entry::user(Message::user_text("the first")));
    first.sync();
    drop(first);
    let before = fs::read(store.path(cwd, &id)).unwrap();

    let mut second = store.start(cwd, &id, new_session());
    assert_eq!(second.persistence(), Persistence::MemoryOnly);
    assert_eq!(
        second.take_warning().map(|warning| warning.to_string()),
        Some(format!(
            "the session file {} already exists; this session continues in memory only and \
             will not be resumable",
            store.path(cwd, &id).display()
        ))
    );
    second.append(&Entry::user(Message::user_text("the second")));
    assert_eq!(fs::read(store.path(cwd, &id)).unwrap(), before);
}

#[test]
fn a_session_that_failed_before_any_answer_is_listed_as_failed() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let cwd = Path::new("/work/app");
    let refused = "gave up after 3 attempts; last error: connection error: nothing is listening \
                   at http://127.0.0.1:9 (connection refused)";

    let failed = SessionId::new();
    let mut log = store.start(cwd, &failed, new_session());
    log.append(&Entry::user(Message::user_text("hello?")));
    log.append(&Entry::turn_failed(refused));
    log.sync();
    drop(log);

    // A failure after answers, and answers after a failure, are not "failed".
    let recovered = SessionId::new();
    let mut log = store.start(cwd, &recovered, new_session());
    log.append(&Entry::user(Message::user_text("first try")));
    log.append(&Entry::turn_failed(refused));
    log.append(&Entry::user(Message::user_text("second try")));
    log.append(&answer("here"));
    log.append(&Entry::user(Message::user_text("and again")));
    log.append(&Entry::turn_failed(refused));
    log.sync();
    drop(log);

    let mut summaries: Vec<_> = store
        .list(cwd)
        .unwrap()
        .into_iter()
        .map(|s| (s.id, s.first_prompt, s.message_count, s.failure))
        .collect();
    summaries.sort_by_key(|(id, ..)| *id != failed);
    assert_eq!(
        summaries,
        vec![
            (failed, "hello?".to_owned(), 1, Some(refused.to_owned())),
            (recovered, "first try".to_owned(), 4, None),
        ]
    );

    // The failure is not part of the conversation: resuming sends the prompt alone, and the
    // file reads back without a warning.
    let loaded = store.load(cwd, &failed).unwrap();
    assert_eq!(loaded.messages, vec![Message::user_text("hello?")]);
    assert_eq!(loaded.warnings, vec![]);
    let entries = read_entries(&store.path(cwd, &failed)).unwrap();
    assert!(
        matches!(&entries.entries[1], Entry::TurnFailed(entry) if entry.message == refused),
        "{:?}",
        entries.entries
    );
}

#[test]
fn the_list_shows_the_prompt_as_typed_not_the_attached_files() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let cwd = Path::new("/work/app");
    let id = SessionId::new();
    let mut log = store.start(cwd, &id, new_session());
    log.append(&Entry::user(Message {
        role: Role::User,
        content: vec![
            ContentBlock::text(
                "<bash-input>git status</bash-input>\n<bash-stdout> M a.rs</bash-stdout>\n\
                 <bash-stderr></bash-stderr>",
            ),
            ContentBlock::text("summarize @README.md please"),
            ContentBlock::text("Contents of README.md:\n```\n# A long readme\n```"),
            ContentBlock::text("<system-reminder>\nhook context\n</system-reminder>"),
        ],
    }));
    log.sync();
    drop(log);

    let prompts: Vec<String> = store
        .list(cwd)
        .unwrap()
        .into_iter()
        .map(|s| s.first_prompt)
        .collect();
    assert_eq!(prompts, ["summarize @README.md please"]);
}

/// A session another cairn is in the middle of: its last prompt has a tool call answered and
/// no final answer yet. A fork of what settled ends with the last answer, so the in-flight
/// prompt and its tool round stay in that session alone.
#[test]
fn a_fork_of_what_settled_leaves_out_the_turn_still_in_flight() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let cwd = Path::new("/work/app");
    let original = SessionId::new();
    let mut log = store.start(cwd, &original, new_session());
    log.append(&Entry::user(Message::user_text("the question")));
    log.append(&answer("the answer"));
    log.append(&Entry::user(Message::user_text("the other's prompt")));
    let mut calling = answer("reading");
    if let Entry::Assistant(entry) = &mut calling {
        entry.message.content.push(ContentBlock::ToolUse {
            id: "toolu_1".into(),
            name: "Read".into(),
            input: serde_json::json!({"file_path": "a"}),
        });
    }
    log.append(&calling);
    log.append(&Entry::tool_results(Message {
        role: Role::User,
        content: vec![ContentBlock::tool_result("toolu_1", "contents", false)],
    }));
    log.sync();
    drop(log);

    let forked = SessionId::new();
    let (mut log, loaded) = store
        .start_fork_of_settled(cwd, &original, &forked)
        .unwrap();
    assert_eq!(loaded.messages.len(), 2, "{:?}", loaded.messages);
    log.append(&Entry::user(Message::user_text("mine")));
    log.sync();
    drop(log);
    assert_eq!(
        line_types(&store.path(cwd, &forked)),
        ["header", "user", "assistant", "user"]
    );
    let copy = fs::read_to_string(store.path(cwd, &forked)).unwrap();
    assert!(!copy.contains("the other's prompt"), "{copy}");
}
