//! A hand-written file of format version 1 must load in every later version of cairn. Do not
//! edit the fixture or the expected value when the format changes: add a migration instead.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::{Path, PathBuf};

use cairn_protocol::{
    ContentBlock, Message, Role, TodoItem, TodoStatus, ToolResultBlock, ToolResultContent, Usage,
};
use cairn_session::{
    CompactionEntry, LoadedSession, PermissionEntry, PermissionOutcome, SessionHeader, SessionId,
    SessionStore, load_file,
};
use pretty_assertions::assert_eq;
use serde_json::json;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1-session.jsonl")
}

fn expected(path: PathBuf) -> LoadedSession {
    LoadedSession {
        path,
        header: SessionHeader {
            format_version: 1,
            cairn_version: "0.1.0".to_owned(),
            session_id: SessionId::parse("7d3c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d").unwrap(),
            cwd: "/work/demo".to_owned(),
            git_branch: Some("main".to_owned()),
            model: "claude-sonnet-4-5".to_owned(),
            started_at: 1_760_000_000_000,
            forked_from: None,
        },
        // The compaction boundary replaced the first two exchanges by its summary.
        messages: vec![
            Message::user_text(
                "Earlier: parse_empty fails because the lexer emits an EOF token for empty input.",
            ),
            Message::user_text("Fix it, then."),
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "toolu_02".to_owned(),
                    name: "Edit".to_owned(),
                    input: json!({
                        "file_path": "/work/demo/src/lexer.rs",
                        "old_string": "tokens.push(Token::Eof);",
                        "new_string": ""
                    }),
                }],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "toolu_02".to_owned(),
                    content: ToolResultContent::Blocks(vec![ToolResultBlock::Text {
                        text: "The user refused this edit.".to_owned(),
                    }]),
                    is_error: true,
                }],
            },
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::text("Understood; I left lexer.rs unchanged.")],
            },
        ],
        todos: vec![TodoItem {
            content: "Fix parse_empty".to_owned(),
            status: TodoStatus::Completed,
            active_form: "Fixing parse_empty".to_owned(),
        }],
        model: "claude-opus-4-1".to_owned(),
        usage: Usage {
            input_tokens: 1200 + 1400 + 3300 + 3500,
            output_tokens: 40 + 25 + 60 + 12,
            cache_creation_input_tokens: 1000,
            cache_read_input_tokens: 1000 + 3000,
        },
        cost_usd: 0.0045 + 0.0012 + 0.054 + 0.0531,
        permissions: vec![
            PermissionEntry {
                timestamp: 1_760_000_002_100,
                tool_name: "Bash".to_owned(),
                tool_use_id: "toolu_01".to_owned(),
                decision: PermissionOutcome::Allow,
                rule: Some("Bash(cargo test:*)".to_owned()),
                reason: None,
            },
            PermissionEntry {
                timestamp: 1_760_000_012_500,
                tool_name: "Edit".to_owned(),
                tool_use_id: "toolu_02".to_owned(),
                decision: PermissionOutcome::Deny,
                rule: None,
                reason: Some("the user refused".to_owned()),
            },
        ],
        last_compaction: Some(CompactionEntry {
            timestamp: 1_760_000_009_000,
            summary:
                "Earlier: parse_empty fails because the lexer emits an EOF token for empty input."
                    .to_owned(),
            tokens_before: 152_000,
            tokens_after: 3100,
            // Written before compactions kept their opening: the summary alone is resumed.
            opening: Vec::new(),
        }),
        collapsed_through: None,
        approved_plan: None,
        last_answer_at: Some(1_760_000_015_000),
        repair: None,
        warnings: vec![],
    }
}

#[test]
fn the_version_1_fixture_loads() {
    let loaded = load_file(&fixture()).unwrap();
    assert_eq!(loaded, expected(fixture()));
}

#[test]
fn the_version_1_fixture_resumes_through_the_store() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let cwd = Path::new("/work/demo");
    let id = SessionId::parse("7d3c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d").unwrap();
    let path = store.path(cwd, &id);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::copy(fixture(), &path).unwrap();

    assert_eq!(store.load(cwd, &id).unwrap(), expected(path.clone()));
    let summaries = store.list(cwd).unwrap();
    assert_eq!(
        summaries
            .iter()
            .map(|s| (s.id, s.first_prompt.as_str(), s.message_count, s.started_at))
            .collect::<Vec<_>>(),
        vec![(id, "Why does the parser test fail?", 8, 1_760_000_000_000)]
    );
    assert!((summaries[0].cost_usd - expected(path).cost_usd).abs() < 1e-12);
}
