//! The store's operations on sessions as files: resume, fork, list, latest, cleanup, and what
//! happens when the directory cannot be written.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

use cairn_protocol::{ContentBlock, Message, Role, Usage};
use cairn_session::{
    AssistantEntry, CleanupScope, Entry, LoadWarning, LoadWarningKind, NewSession, Persistence,
    SessionError, SessionId, SessionLog, SessionStore, read_entries,
};
use pretty_assertions::assert_eq;

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

fn new_session() -> NewSession {
    NewSession {
        model: "claude-sonnet-4-5".to_owned(),
        git_branch: None,
    }
}

fn answer(text: &str, cost_usd: f64) -> Entry {
    Entry::Assistant(AssistantEntry {
        timestamp: 2,
        message: Message {
            role: Role::Assistant,
            content: vec![ContentBlock::text(text)],
        },
        model: "claude-sonnet-4-5-20250929".to_owned(),
        message_id: None,
        usage: Usage::default(),
        cost_usd,
    })
}

/// Writes a session with the given prompts (each answered) and sets its file's mtime.
fn write_session(
    store: &SessionStore,
    cwd: &Path,
    prompts: &[&str],
    cost_usd: f64,
    modified: SystemTime,
) -> SessionId {
    let id = SessionId::new();
    let mut writer = store.create(cwd, &id, new_session()).unwrap();
    for prompt in prompts {
        writer
            .append(&Entry::user(Message::user_text(*prompt)))
            .unwrap();
        writer.append(&answer("ok", cost_usd)).unwrap();
    }
    drop(writer);
    File::options()
        .write(true)
        .open(store.path(cwd, &id))
        .unwrap()
        .set_modified(modified)
        .unwrap();
    id
}

#[test]
fn resuming_after_a_torn_write_starts_the_next_entry_on_a_fresh_line() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let cwd = Path::new("/work/app");
    let id = SessionId::new();
    let mut writer = store.create(cwd, &id, new_session()).unwrap();
    writer
        .append(&Entry::user(Message::user_text("one")))
        .unwrap();
    drop(writer);
    let path = store.path(cwd, &id);
    let torn = b"{\"type\":\"assistant\",\"timestamp\":2,\"message\":{\"ro";
    File::options()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(torn)
        .unwrap();
    let before = fs::read(&path).unwrap();

    let mut writer = store.open_append(cwd, &id).unwrap();
    writer
        .append(&Entry::user(Message::user_text("two")))
        .unwrap();
    writer.sync().unwrap();

    let after = fs::read(&path).unwrap();
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "the torn line stays where it is"
    );
    assert_eq!(after[before.len()], b'\n');
    let loaded = store.load(cwd, &id).unwrap();
    assert_eq!(
        (loaded.messages, loaded.warnings),
        (
            vec![Message::user_text("one"), Message::user_text("two")],
            vec![LoadWarning {
                path: path.clone(),
                line: 3,
                kind: LoadWarningKind::TornLine
            }]
        )
    );
}

#[test]
fn fork_copies_the_history_and_leaves_the_original_byte_identical() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let cwd = Path::new("/work/app");
    let from = SessionId::new();
    let mut writer = store.create(cwd, &from, new_session()).unwrap();
    writer
        .append(&Entry::user(Message::user_text("one")))
        .unwrap();
    writer.append(&answer("two", 0.5)).unwrap();
    writer
        .append(&Entry::model_change("claude-opus-4-1"))
        .unwrap();
    drop(writer);
    let original = fs::read(store.path(cwd, &from)).unwrap();

    let to = SessionId::new();
    let mut fork = store.fork(cwd, &from, &to).unwrap();
    fork.append(&Entry::user(Message::user_text("three")))
        .unwrap();

    assert_eq!(fs::read(store.path(cwd, &from)).unwrap(), original);
    let source = read_entries(&store.path(cwd, &from)).unwrap();
    let copy = read_entries(&store.path(cwd, &to)).unwrap();
    let mut expected_entries = source.entries.clone();
    expected_entries.push(Entry::user(Message::user_text("three")));
    // The new entry's timestamp is "now": compare it from the copy.
    if let (Some(Entry::User(expected)), Some(Entry::User(actual))) =
        (expected_entries.last_mut(), copy.entries.last())
    {
        expected.timestamp = actual.timestamp;
    }
    assert_eq!(copy.entries, expected_entries);
    assert_eq!(
        copy.header,
        cairn_session::SessionHeader {
            session_id: to,
            forked_from: Some(from),
            started_at: copy.header.started_at,
            ..source.header
        }
    );
    let loaded = store.load(cwd, &to).unwrap();
    assert_eq!(loaded.model, "claude-opus-4-1");
    assert_eq!(loaded.cost_usd, 0.5);

    // Forking onto an existing id refuses and changes nothing.
    assert_eq!(
        store.fork(cwd, &to, &from).unwrap_err().to_string(),
        format!(
            "the session file {} already exists",
            store.path(cwd, &from).display()
        )
    );
    assert_eq!(fs::read(store.path(cwd, &from)).unwrap(), original);
}

#[test]
fn list_and_latest_order_sessions_by_modification_newest_first() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let cwd = Path::new("/work/app");
    let now = SystemTime::now();
    assert_eq!(store.latest(cwd).unwrap(), None);
    assert_eq!(store.list(cwd).unwrap(), vec![]);

    let old = write_session(&store, cwd, &["fix the\n  login bug"], 0.25, now - 3 * DAY);
    let long_prompt = "x".repeat(120);
    let newest = write_session(&store, cwd, &[&long_prompt, "and more"], 1.0, now - DAY);
    // A header alone (what an older cairn left when nothing was said) is newest, but it is
    // neither listed nor continued.
    write_session(&store, cwd, &[], 0.0, now);
    // Another project's session, and files that are not sessions, are not listed.
    write_session(&store, Path::new("/work/other"), &["elsewhere"], 9.0, now);
    let dir = store.project_dir(cwd);
    fs::write(dir.join("notes.txt"), "x").unwrap();
    fs::write(dir.join("not-a-uuid.jsonl"), "x").unwrap();
    // A file with no header (a crash at creation) is left out of the list.
    let headerless = dir.join(format!("{}.jsonl", SessionId::new()));
    fs::write(&headerless, "").unwrap();
    File::options()
        .write(true)
        .open(&headerless)
        .unwrap()
        .set_modified(now - 10 * DAY)
        .unwrap();

    assert_eq!(store.latest(cwd).unwrap(), Some(newest));
    let summaries: Vec<_> = store
        .list(cwd)
        .unwrap()
        .into_iter()
        .map(|s| {
            (
                s.id,
                s.first_prompt,
                s.message_count,
                s.cost_usd,
                s.modified,
            )
        })
        .collect();
    assert_eq!(
        summaries,
        vec![
            (newest, format!("{}…", "x".repeat(79)), 4, 2.0, now - DAY),
            (old, "fix the login bug".to_owned(), 2, 0.25, now - 3 * DAY),
        ]
    );
}

#[test]
fn cleanup_removes_sessions_older_than_the_period_but_never_the_kept_one() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let app = Path::new("/work/app");
    let other = Path::new("/work/other");
    let now = SystemTime::now();
    let stale = write_session(&store, app, &["a"], 0.0, now - 40 * DAY);
    let kept = write_session(&store, app, &["b"], 0.0, now - 50 * DAY);
    let fresh = write_session(&store, app, &["c"], 0.0, now - DAY);
    let elsewhere = write_session(&store, other, &["d"], 0.0, now - 40 * DAY);
    let spilled = store.project_dir(app).join(stale.to_string());
    fs::create_dir_all(&spilled).unwrap();
    fs::write(spilled.join("toolu_1.txt"), "big output").unwrap();
    fs::write(store.project_dir(app).join("notes.txt"), "kept").unwrap();

    let removed = store
        .cleanup(CleanupScope::Project(app), 30 * DAY, &kept)
        .unwrap();
    assert_eq!(removed, 1);
    assert!(!store.path(app, &stale).exists());
    assert!(!spilled.exists());
    assert!(store.path(app, &kept).exists());
    assert!(store.path(app, &fresh).exists());
    assert!(store.path(other, &elsewhere).exists());
    assert!(store.project_dir(app).join("notes.txt").exists());

    let removed = store
        .cleanup(CleanupScope::AllProjects, 30 * DAY, &kept)
        .unwrap();
    assert_eq!(removed, 1);
    assert!(!store.path(other, &elsewhere).exists());
    assert_eq!(store.list(app).unwrap().len(), 2);
}

#[test]
fn an_unwritable_directory_is_an_error_and_the_log_carries_on_in_memory() {
    let home = tempfile::tempdir().unwrap();
    // Tests run as root, so permissions would not stop the write: a file in the way does.
    let blocker = home.path().join("blocker");
    fs::write(&blocker, "").unwrap();
    let store = SessionStore::new(blocker.join("cairn"));
    let cwd = Path::new("/work/app");
    let id = SessionId::new();

    let error = store.create(cwd, &id, new_session()).unwrap_err();
    let expected = format!(
        "cannot create the session directory {}: Not a directory (os error 20)",
        store.project_dir(cwd).display()
    );
    assert_eq!(error.to_string(), expected);
    assert!(matches!(error, SessionError::CreateDir { .. }));

    let mut log = SessionLog::new(store.create(cwd, &id, new_session()));
    for text in ["one", "two", "three"] {
        log.append(&Entry::user(Message::user_text(text)));
    }
    log.sync();
    assert_eq!(log.persistence(), Persistence::MemoryOnly);
    assert_eq!(
        log.take_warning().map(|warning| warning.to_string()),
        Some(format!(
            "{expected}; this session continues in memory only and will not be resumable"
        ))
    );
    assert_eq!(log.take_warning().map(|warning| warning.to_string()), None);
}

#[test]
fn a_working_log_writes_every_entry() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let cwd = Path::new("/work/app");
    let id = SessionId::new();
    let mut log = SessionLog::new(store.create(cwd, &id, new_session()));
    log.append(&Entry::user(Message::user_text("one")));
    log.sync();
    assert_eq!(log.persistence(), Persistence::OnDisk);
    assert_eq!(log.path(), Some(store.path(cwd, &id).as_path()));
    assert_eq!(log.take_warning().map(|warning| warning.to_string()), None);
    assert_eq!(
        store.load(cwd, &id).unwrap().messages,
        vec![Message::user_text("one")]
    );
}

#[test]
fn ids_given_by_users_must_be_uuids() {
    assert_eq!(
        SessionId::parse("../../etc/passwd")
            .unwrap_err()
            .to_string(),
        "\"../../etc/passwd\" is not a session id: session ids are UUIDs such as \
         3f2b8c1e-9a4d-4c6b-8e2f-1a2b3c4d5e6f (`cairn --resume` without an id lists them)"
    );
}
