//! Sub-agents' transcripts: one file each under `<session-id>/subagents/`, written like the
//! session's own and linked from it, invisible to resuming and listing the session.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::os::unix::fs::PermissionsExt;

use cairn_protocol::Message;
use cairn_session::{
    Entry, NewSession, SessionId, SessionLog, SessionStore, SubAgentEntry, SubAgentStart,
    load_file, read_entries,
};
use pretty_assertions::assert_eq;

fn start(agent_id: &str, tool_use_id: &str) -> SubAgentStart {
    SubAgentStart {
        agent_id: agent_id.to_owned(),
        agent_type: Some("Explore".to_owned()),
        description: Some("find the loader".to_owned()),
        tool_use_id: tool_use_id.to_owned(),
    }
}

/// The link entries of a session file, their timestamps zeroed.
fn links(path: &std::path::Path) -> Vec<SubAgentEntry> {
    read_entries(path)
        .unwrap()
        .entries
        .into_iter()
        .filter_map(|entry| match entry {
            Entry::SubAgent(link) => Some(SubAgentEntry {
                timestamp: 0,
                ..link
            }),
            _ => None,
        })
        .collect()
}

#[test]
fn a_sub_agent_gets_a_private_file_beside_the_session_linked_from_it() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let id = SessionId::new();
    let new = NewSession {
        model: "claude-sonnet-4-5".into(),
        git_branch: None,
    };
    let mut log = store.start(project.path(), &id, new);

    // Nothing said yet: there is no session file to put a sub-agent's beside.
    let mut early = log.start_sub_agent(start("agent_0", "toolu_0"));
    early.append(&Entry::user(Message::user_text("lost")));
    assert_eq!(early.path(), None);

    log.append(&Entry::user(Message::user_text("Where is the loader?")));
    let mut sub = log.start_sub_agent(start("agent_1", "toolu_1"));
    sub.append(&Entry::user(Message::user_text("Find the loader.")));
    sub.sync();
    log.sync();

    let session_file = store.path(project.path(), &id);
    let expected = store
        .session_dir(project.path(), &id)
        .join("subagents/agent-agent_1.jsonl");
    assert_eq!(sub.path(), Some(expected.as_path()));
    let mode = std::fs::metadata(&expected).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(
        links(&session_file),
        vec![SubAgentEntry {
            timestamp: 0,
            agent_id: "agent_1".into(),
            agent_type: Some("Explore".into()),
            description: Some("find the loader".into()),
            tool_use_id: "toolu_1".into(),
            file: format!("{id}/subagents/agent-agent_1.jsonl"),
        }]
    );

    // The sub-agent's file is a session file of its own; the session's holds its messages only.
    let loaded = load_file(&expected).unwrap();
    assert_eq!(
        loaded.messages,
        vec![Message::user_text("Find the loader.")]
    );
    assert_eq!(loaded.header.session_id, id);
    let parent = store.load(project.path(), &id).unwrap();
    assert_eq!(
        parent.messages,
        vec![Message::user_text("Where is the loader?")]
    );
    assert_eq!(parent.warnings, vec![]);
    assert_eq!(store.latest(project.path()).unwrap(), Some(id));
    assert_eq!(store.list(project.path()).unwrap().len(), 1);

    // Resumed, the session numbers its sub-agents from 1 again: the new file gets another name.
    drop(log);
    let mut resumed = SessionLog::new(store.open_append(project.path(), &id));
    let again = resumed.start_sub_agent(start("agent_1", "toolu_9"));
    assert_eq!(
        again.path(),
        Some(
            store
                .session_dir(project.path(), &id)
                .join("subagents/agent-agent_1-2.jsonl")
                .as_path()
        )
    );
    let files: Vec<String> = links(&session_file)
        .into_iter()
        .map(|link| link.file)
        .collect();
    assert_eq!(
        files,
        vec![
            format!("{id}/subagents/agent-agent_1.jsonl"),
            format!("{id}/subagents/agent-agent_1-2.jsonl"),
        ]
    );
}
