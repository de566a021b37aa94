//! Writing entries and reading them back: round trips, torn and damaged lines, format
//! versions, and the repair of tool calls left without results.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use cairn_protocol::{ContentBlock, Message, Role, TodoItem, TodoStatus, Usage};
use cairn_session::{
    AssistantEntry, CompactionEntry, Entry, INTERRUPTED_TOOL_RESULT, LOST_START, LoadWarning,
    LoadWarningKind, LoadedSession, MessageEntry, ModelChangeEntry, NewSession, PermissionEntry,
    PermissionOutcome, SessionEntries, SessionError, SessionId, SessionStore, TodosEntry,
    TurnFailedEntry, load_file, now_ms, read_entries,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use tempfile::TempDir;

const CWD: &str = "/work/app";

struct Session {
    _home: TempDir,
    store: SessionStore,
    id: SessionId,
    path: PathBuf,
}

fn new_session(entries: &[Entry]) -> Session {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let id = SessionId::new();
    let new = NewSession {
        model: "claude-sonnet-4-5".to_owned(),
        git_branch: Some("main".to_owned()),
    };
    let mut writer = store.create(Path::new(CWD), &id, new).unwrap();
    for entry in entries {
        writer.append(entry).unwrap();
    }
    writer.sync().unwrap();
    let path = writer.path().to_owned();
    Session {
        _home: home,
        store,
        id,
        path,
    }
}

impl Session {
    fn load(&self) -> Result<LoadedSession, SessionError> {
        self.store.load(Path::new(CWD), &self.id)
    }

    fn append_raw(&self, bytes: &[u8]) {
        fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
    }

    fn warning(&self, line: usize, kind: LoadWarningKind) -> LoadWarning {
        LoadWarning {
            path: self.path.clone(),
            line,
            kind,
        }
    }
}

fn assistant(timestamp: u64, content: Vec<ContentBlock>, cost_usd: f64) -> AssistantEntry {
    AssistantEntry {
        timestamp,
        message: Message {
            role: Role::Assistant,
            content,
        },
        model: "claude-sonnet-4-5-20250929".to_owned(),
        message_id: Some(format!("msg_{timestamp}")),
        usage: Usage {
            input_tokens: 100,
            output_tokens: 20,
            cache_creation_input_tokens: 5,
            cache_read_input_tokens: 50,
        },
        cost_usd,
    }
}

fn tool_use(id: &str) -> ContentBlock {
    ContentBlock::ToolUse {
        id: id.to_owned(),
        name: "Bash".to_owned(),
        input: json!({"command": "ls"}),
    }
}

fn results(blocks: Vec<ContentBlock>) -> Message {
    Message {
        role: Role::User,
        content: blocks,
    }
}

fn interrupted(id: &str) -> ContentBlock {
    ContentBlock::tool_result(id, INTERRUPTED_TOOL_RESULT, true)
}

fn every_entry_type() -> Vec<Entry> {
    vec![
        Entry::User(MessageEntry {
            timestamp: 1,
            message: Message::user_text("list the files — all of them ✓"),
        }),
        Entry::Assistant(assistant(
            2,
            vec![
                ContentBlock::Thinking {
                    thinking: "ls will do".to_owned(),
                    signature: "sig".to_owned(),
                },
                ContentBlock::text("Listing."),
                tool_use("toolu_1"),
            ],
            0.25,
        )),
        Entry::Permission(PermissionEntry {
            timestamp: 3,
            tool_name: "Bash".to_owned(),
            tool_use_id: "toolu_1".to_owned(),
            decision: PermissionOutcome::Ask,
            rule: Some("Bash(ls:*)".to_owned()),
            reason: Some("asked the user".to_owned()),
        }),
        Entry::ToolResults(MessageEntry {
            timestamp: 4,
            message: results(vec![ContentBlock::tool_result("toolu_1", "a\nb\n", false)]),
        }),
        Entry::Todos(TodosEntry {
            timestamp: 5,
            todos: vec![TodoItem {
                content: "List files".to_owned(),
                status: TodoStatus::InProgress,
                active_form: "Listing files".to_owned(),
            }],
        }),
        Entry::ModelChange(ModelChangeEntry {
            timestamp: 6,
            model: "claude-opus-4-1".to_owned(),
        }),
        Entry::Assistant(assistant(7, vec![ContentBlock::text("Two files.")], 0.5)),
        Entry::Compaction(CompactionEntry {
            timestamp: 8,
            summary: "The user listed the files: a and b.".to_owned(),
            tokens_before: 1000,
            tokens_after: 100,
            opening: compacted_opening(),
        }),
        Entry::User(MessageEntry {
            timestamp: 9,
            message: Message::user_text("thanks"),
        }),
        // Not part of the conversation: resuming leaves it out.
        Entry::TurnFailed(TurnFailedEntry {
            timestamp: 10,
            message: "the API is overloaded (529)".to_owned(),
        }),
    ]
}

/// What a compacted conversation starts with: the summary and the re-injected state.
fn compacted_opening() -> Vec<Message> {
    vec![Message::user_text(
        "Summary: the user listed the files: a and b.\n\nThe user said: List files",
    )]
}

#[test]
fn every_entry_type_round_trips() {
    let before = now_ms();
    let entries = every_entry_type();
    let session = new_session(&entries);
    let after = now_ms();

    let transcript = read_entries(&session.path).unwrap();
    let started_at = transcript.header.started_at;
    assert!((before..=after).contains(&started_at));
    assert_eq!(
        transcript,
        SessionEntries {
            header: cairn_session::SessionHeader {
                format_version: 1,
                cairn_version: env!("CARGO_PKG_VERSION").to_owned(),
                session_id: session.id,
                cwd: CWD.to_owned(),
                git_branch: Some("main".to_owned()),
                model: "claude-sonnet-4-5".to_owned(),
                started_at,
                forked_from: None,
            },
            entries: entries.clone(),
            warnings: vec![],
        }
    );

    let Entry::Permission(permission) = entries[2].clone() else {
        unreachable!()
    };
    assert_eq!(
        session.load().unwrap(),
        LoadedSession {
            path: session.path.clone(),
            header: transcript.header,
            // A resume continues from the compacted conversation's opening, not the summary.
            messages: vec![compacted_opening()[0].clone(), Message::user_text("thanks")],
            todos: vec![TodoItem {
                content: "List files".to_owned(),
                status: TodoStatus::InProgress,
                active_form: "Listing files".to_owned(),
            }],
            model: "claude-opus-4-1".to_owned(),
            usage: Usage {
                input_tokens: 200,
                output_tokens: 40,
                cache_creation_input_tokens: 10,
                cache_read_input_tokens: 100,
            },
            cost_usd: 0.75,
            permissions: vec![permission],
            last_compaction: Some(CompactionEntry {
                timestamp: 8,
                summary: "The user listed the files: a and b.".to_owned(),
                tokens_before: 1000,
                tokens_after: 100,
                opening: compacted_opening(),
            }),
            collapsed_through: None,
            approved_plan: None,
            last_answer_at: Some(7),
            repair: None,
            warnings: vec![],
        }
    );
}

#[test]
fn the_file_is_one_json_line_per_entry_with_the_type_first() {
    let session = new_session(&every_entry_type());
    let text = fs::read_to_string(&session.path).unwrap();
    let types: Vec<&str> = text
        .lines()
        .map(|line| {
            let rest = line.strip_prefix(r#"{"type":""#).unwrap();
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    assert_eq!(
        types,
        [
            "header",
            "user",
            "assistant",
            "permission",
            "tool_results",
            "todos",
            "model_change",
            "assistant",
            "compaction",
            "user",
            "turn_failed"
        ]
    );
    assert!(text.ends_with("}\n"));
}

#[test]
fn a_file_cut_at_every_byte_of_its_last_line_keeps_everything_before_it() {
    let first = Entry::User(MessageEntry {
        timestamp: 1,
        message: Message::user_text("first"),
    });
    let answer = assistant(2, vec![ContentBlock::text("réponse complète — ✓ 🦀")], 0.1);
    let last = Entry::User(MessageEntry {
        timestamp: 3,
        message: Message::user_text("second, with \"quotes\" and é"),
    });
    let session = new_session(&[first, Entry::Assistant(answer.clone()), last]);
    let full = fs::read(&session.path).unwrap();
    let last_start = full[..full.len() - 1]
        .iter()
        .rposition(|&byte| byte == b'\n')
        .unwrap()
        + 1;
    let before = vec![Message::user_text("first"), answer.message];
    let mut complete = before.clone();
    complete.push(Message::user_text("second, with \"quotes\" and é"));

    for cut in last_start..=full.len() {
        fs::write(&session.path, &full[..cut]).unwrap();
        let loaded = session
            .load()
            .unwrap_or_else(|error| panic!("cut at {cut}: {error}"));
        let whole = cut >= full.len() - 1;
        let (messages, warnings) = if whole {
            (complete.clone(), vec![])
        } else if cut == last_start {
            (before.clone(), vec![])
        } else {
            (
                before.clone(),
                vec![session.warning(4, LoadWarningKind::TornLine)],
            )
        };
        assert_eq!(
            (loaded.messages, loaded.warnings, loaded.repair),
            (messages, warnings, None),
            "cut at byte {cut} of {}",
            full.len()
        );
    }
}

#[test]
fn a_damaged_line_in_the_middle_is_skipped_with_a_warning_naming_file_and_line() {
    let session = new_session(&[Entry::user(Message::user_text("one"))]);
    session.append_raw(b"{\"type\":\"user\",\"timestamp\":oops}\n");
    session.append_raw(b"{\"type\":\"user\",\"timestamp\":3,\"message\":{\"role\":\"user\",\"content\":\"three\"}}\n");

    let loaded = session.load().unwrap();
    let warning = session.warning(
        3,
        LoadWarningKind::DamagedLine {
            column: 28,
            message: "expected value".to_owned(),
        },
    );
    assert_eq!(
        warning.to_string(),
        format!(
            "{} line 3: skipped a damaged entry (column 28: expected value); the conversation \
             is missing whatever it held",
            session.path.display()
        )
    );
    assert_eq!(
        (loaded.messages, loaded.warnings),
        (
            vec![Message::user_text("one"), Message::user_text("three")],
            vec![warning]
        )
    );
}

#[test]
fn a_complete_line_of_the_wrong_shape_is_skipped_even_at_the_end() {
    let session = new_session(&[Entry::user(Message::user_text("one"))]);
    session.append_raw(b"{\"type\":\"assistant\",\"timestamp\":2,\"message\":{\"role\":\"assistant\",\"content\":[]}}\n");

    let loaded = session.load().unwrap();
    assert_eq!(
        (loaded.messages, loaded.warnings),
        (
            vec![Message::user_text("one")],
            vec![session.warning(
                3,
                LoadWarningKind::DamagedLine {
                    column: 78,
                    message: "missing field `model`".to_owned(),
                }
            )]
        )
    );
}

#[test]
fn a_damaged_first_prompt_leaves_a_history_that_still_starts_with_the_user() {
    let session = new_session(&[]);
    // The first prompt, with blocks a power loss left unwritten.
    session.append_raw(
        b"{\"type\":\"user\",\"timestamp\":1,\"message\":{\"role\":\"user\",\0\0\0\0}}\n",
    );
    let done = vec![ContentBlock::text("Done.")];
    let answer = Entry::Assistant(assistant(2, done.clone(), 0.01));
    let next = Entry::user(Message::user_text("and now?"));
    for entry in [&answer, &next] {
        session.append_raw(format!("{}\n", serde_json::to_string(entry).unwrap()).as_bytes());
    }

    let loaded = session.load().unwrap();
    assert_eq!(
        (loaded.messages, loaded.warnings),
        (
            vec![
                Message::user_text(LOST_START),
                Message {
                    role: Role::Assistant,
                    content: done,
                },
                Message::user_text("and now?"),
            ],
            vec![
                session.warning(2, LoadWarningKind::TornLine),
                session.warning(3, LoadWarningKind::LostStart),
            ]
        )
    );
}

#[test]
fn torn_lines_from_earlier_crashes_are_skipped_anywhere() {
    let session = new_session(&[Entry::user(Message::user_text("one"))]);
    // Cut short by a crash, then resumed: the torn line ends up in the middle.
    session.append_raw(b"{\"type\":\"assistant\",\"timestamp\":2,\"mess\n");
    // Blocks a power loss left unwritten.
    session.append_raw(b"{\"type\":\"user\",\0\0\0\0\0\0\n");
    session.append_raw(b"\n");
    session.append_raw(b"{\"type\":\"user\",\"timestamp\":3,\"message\":{\"role\":\"user\",\"content\":\"two\"}}\n");

    let loaded = session.load().unwrap();
    assert_eq!(
        (loaded.messages, loaded.warnings),
        (
            vec![Message::user_text("one"), Message::user_text("two")],
            vec![
                session.warning(3, LoadWarningKind::TornLine),
                session.warning(4, LoadWarningKind::TornLine),
            ]
        )
    );
}

#[test]
fn unknown_entry_types_are_skipped_with_a_warning() {
    let session = new_session(&[Entry::user(Message::user_text("one"))]);
    session.append_raw(b"{\"type\":\"bookmark\",\"timestamp\":2,\"label\":\"here\"}\n");
    session.append_raw(b"{\"timestamp\":3,\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"two\"},\"mood\":\"new field\"}\n");

    let loaded = session.load().unwrap();
    assert_eq!(
        (loaded.messages, loaded.warnings),
        (
            vec![Message::user_text("one"), Message::user_text("two")],
            vec![session.warning(
                3,
                LoadWarningKind::UnknownEntryType {
                    entry_type: "bookmark".to_owned()
                }
            )]
        )
    );
}

#[test]
fn a_file_of_a_newer_format_version_is_refused() {
    let session = new_session(&[]);
    let text = fs::read_to_string(&session.path).unwrap();
    let newer = text.replace("\"format_version\":1,", "\"format_version\":2,");
    // A version-2 file may hold anything; it must not be read as version 1.
    fs::write(
        &session.path,
        format!("{newer}{{\"type\":\"user\",\"text\":\"hi\"}}\n"),
    )
    .unwrap();

    let message = format!(
        "{} was written in session format version 2, newer than this cairn reads (up to \
         version 1); upgrade cairn to open it",
        session.path.display()
    );
    assert_eq!(session.load().unwrap_err().to_string(), message);
    assert_eq!(
        session
            .store
            .open_append(Path::new(CWD), &session.id)
            .unwrap_err()
            .to_string(),
        message
    );
    // Nothing was written to it.
    assert_eq!(
        fs::read_to_string(&session.path).unwrap(),
        format!("{newer}{{\"type\":\"user\",\"text\":\"hi\"}}\n")
    );
}

#[test]
fn a_file_without_a_header_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    fs::write(
        &path,
        "{\"type\":\"user\",\"timestamp\":1,\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    )
    .unwrap();
    assert_eq!(
        load_file(&path).unwrap_err().to_string(),
        format!(
            "{}: line 1 is not a valid session header: its type is `user`, expected `header`",
            path.display()
        )
    );
    fs::write(&path, "").unwrap();
    assert_eq!(
        load_file(&path).unwrap_err().to_string(),
        format!(
            "{}: line 1 is not a valid session header: the line is empty",
            path.display()
        )
    );
}

#[test]
fn dangling_tool_calls_at_the_end_are_answered_as_interrupted() {
    let call = assistant(
        2,
        vec![
            ContentBlock::text("Two commands."),
            tool_use("a"),
            tool_use("b"),
        ],
        0.1,
    );
    let session = new_session(&[
        Entry::user(Message::user_text("go")),
        Entry::Assistant(call.clone()),
    ]);

    let loaded = session.load().unwrap();
    let repair = results(vec![interrupted("a"), interrupted("b")]);
    assert_eq!(
        (loaded.messages, loaded.repair.clone(), loaded.warnings),
        (
            vec![
                Message::user_text("go"),
                call.message.clone(),
                repair.clone()
            ],
            Some(repair.clone()),
            vec![session.warning(
                3,
                LoadWarningKind::InterruptedToolCalls {
                    tool_use_ids: vec!["a".to_owned(), "b".to_owned()]
                }
            )]
        )
    );

    // Written back, the repair makes the file agree: nothing left to repair.
    let mut writer = session
        .store
        .open_append(Path::new(CWD), &session.id)
        .unwrap();
    writer
        .append(&Entry::tool_results(loaded.repair.unwrap()))
        .unwrap();
    let reloaded = session.load().unwrap();
    assert_eq!(
        (reloaded.messages, reloaded.repair, reloaded.warnings),
        (
            vec![Message::user_text("go"), call.message, repair],
            None,
            vec![]
        )
    );
}

#[test]
fn partly_answered_tool_calls_get_the_missing_results_in_the_same_message() {
    let call = assistant(2, vec![tool_use("a"), tool_use("b")], 0.1);
    let done = ContentBlock::tool_result("a", "ok", false);
    let session = new_session(&[
        Entry::user(Message::user_text("go")),
        Entry::Assistant(call.clone()),
        Entry::tool_results(results(vec![done.clone()])),
    ]);

    let loaded = session.load().unwrap();
    let expected = vec![
        Message::user_text("go"),
        call.message,
        results(vec![done, interrupted("b")]),
    ];
    assert_eq!(
        (loaded.messages, loaded.repair.clone()),
        (expected.clone(), Some(results(vec![interrupted("b")])))
    );

    let mut writer = session
        .store
        .open_append(Path::new(CWD), &session.id)
        .unwrap();
    writer
        .append(&Entry::tool_results(loaded.repair.unwrap()))
        .unwrap();
    let reloaded = session.load().unwrap();
    assert_eq!(
        (reloaded.messages, reloaded.repair, reloaded.warnings),
        (expected, None, vec![])
    );
}

#[test]
fn dangling_tool_calls_in_the_middle_are_answered_before_the_next_message() {
    let call = assistant(2, vec![tool_use("a")], 0.1);
    let session = new_session(&[
        Entry::user(Message::user_text("go")),
        Entry::Assistant(call.clone()),
        Entry::user(Message::user_text("never mind")),
    ]);

    let loaded = session.load().unwrap();
    assert_eq!(
        (loaded.messages, loaded.repair, loaded.warnings),
        (
            vec![
                Message::user_text("go"),
                call.message,
                results(vec![interrupted("a")]),
                Message::user_text("never mind"),
            ],
            None,
            vec![session.warning(
                3,
                LoadWarningKind::InterruptedToolCalls {
                    tool_use_ids: vec!["a".to_owned()]
                }
            )]
        )
    );
}

#[test]
fn tool_results_that_answer_no_call_are_dropped() {
    let call = assistant(2, vec![tool_use("a")], 0.1);
    let answer = ContentBlock::tool_result("a", "ok", false);
    let session = new_session(&[
        Entry::user(Message::user_text("go")),
        Entry::tool_results(results(vec![ContentBlock::tool_result(
            "early", "?", false,
        )])),
        Entry::Assistant(call.clone()),
        Entry::tool_results(results(vec![
            answer.clone(),
            ContentBlock::tool_result("zzz", "stray", false),
        ])),
        Entry::tool_results(results(vec![ContentBlock::tool_result(
            "a", "again", false,
        )])),
    ]);

    let loaded = session.load().unwrap();
    let unmatched = |line, id: &str| {
        session.warning(
            line,
            LoadWarningKind::UnmatchedToolResults {
                tool_use_ids: vec![id.to_owned()],
            },
        )
    };
    assert_eq!(
        (loaded.messages, loaded.repair, loaded.warnings),
        (
            vec![
                Message::user_text("go"),
                call.message,
                results(vec![answer])
            ],
            None,
            vec![
                unmatched(3, "early"),
                unmatched(5, "zzz"),
                unmatched(6, "a")
            ]
        )
    );
}

#[test]
fn a_history_ending_with_two_user_messages_is_kept_as_it_is() {
    let answer = assistant(2, vec![ContentBlock::text("hi")], 0.1);
    let session = new_session(&[
        Entry::user(Message::user_text("one")),
        Entry::Assistant(answer.clone()),
        Entry::user(Message::user_text("two")),
        Entry::user(Message::user_text("three")),
    ]);

    let loaded = session.load().unwrap();
    assert_eq!(
        (loaded.messages, loaded.repair, loaded.warnings),
        (
            vec![
                Message::user_text("one"),
                answer.message,
                Message::user_text("two"),
                Message::user_text("three"),
            ],
            None,
            vec![]
        )
    );
}

#[test]
fn a_missing_session_is_not_found() {
    let session = new_session(&[]);
    let other = SessionId::new();
    assert_eq!(
        session
            .store
            .load(Path::new(CWD), &other)
            .unwrap_err()
            .to_string(),
        format!(
            "no session {other} for this project (looked for {})",
            session.store.path(Path::new(CWD), &other).display()
        )
    );
}
