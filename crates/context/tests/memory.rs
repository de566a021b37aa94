//! Memory recall over real HTTP: `MemoryRecall` asks the scripted server through
//! `AnthropicClient`, as a session's side model would, over memory files in a temp dir.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use cairn_context::memory::{MemoryRecall, Recall, RecallOutcome};
use cairn_llm::{AnthropicClient, AnthropicConfig, Credential, RetryPolicy, SideModel};
use cairn_test_support::{RecordedRequest, Reply, ScriptedServer};
use pretty_assertions::assert_eq;

const WAIT: Duration = Duration::from_secs(10);
const DAY: Duration = Duration::from_secs(86_400);

fn recall_for(server: &ScriptedServer, directory: &Path) -> MemoryRecall {
    let mut config = AnthropicConfig::new(Credential::ApiKey("test-key".to_owned()));
    config.base_url = server.url();
    config.retry = RetryPolicy::never();
    let client = AnthropicClient::new(config).unwrap();
    MemoryRecall::new(directory, SideModel::new(Arc::new(client), "haiku"))
}

/// A memory file of `lines` lines in all: five of front matter, then body lines that each
/// say which file and which line of it they are (`m07 line 6`).
fn memory_text(tag: &str, lines: usize) -> String {
    let mut text =
        format!("---\nname: {tag}\ndescription: what {tag} is about\ntype: project\n---\n");
    for line in 6..=lines {
        text.push_str(&format!("{tag} line {line}\n"));
    }
    text
}

fn write_memory(directory: &Path, tag: &str, lines: usize, age: Duration) -> String {
    let path = directory.join(format!("{tag}.md"));
    let text = memory_text(tag, lines);
    std::fs::write(&path, &text).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(SystemTime::now() - age)
        .unwrap();
    text
}

/// The text of the recall request's one user message.
fn request_text(request: &RecordedRequest) -> String {
    let messages = request.body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{messages:?}");
    let content = &messages[0]["content"];
    match content.as_str() {
        Some(text) => text.to_owned(),
        None => content
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect(),
    }
}

fn reminder(directory: &Path, tag: &str, when: &str, text: &str) -> String {
    format!(
        "A memory recalled for this message, from {} (project memory{when}):\n\n{}",
        directory.join(format!("{tag}.md")).display(),
        text.trim_end()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn fifty_files_send_heads_only_and_the_chosen_file_comes_back_whole_with_its_age() {
    let dir = tempfile::tempdir().unwrap();
    let mut texts = Vec::new();
    for n in 0..50 {
        texts.push(write_memory(dir.path(), &format!("m{n:02}"), 45, DAY / 2));
    }
    let chosen = write_memory(dir.path(), "m07", 45, 10 * DAY + Duration::from_secs(60));
    let server = ScriptedServer::start();
    server.push(Reply::text(
        "Relevant:\n```json\n{\"selected_memories\": [\"m07.md\"]}\n```",
    ));
    let recall = recall_for(&server, dir.path());

    let pending = recall.start("How should the m07 rollout go?".to_owned());
    // Nothing is read or sent until the engine polls the future.
    assert_eq!(server.requests().len(), 0);
    let outcome = pending.await;

    assert_eq!(
        outcome,
        RecallOutcome {
            reminders: vec![reminder(
                dir.path(),
                "m07",
                ", written 10 days ago — it may be out of date",
                &chosen
            )],
            failure: None,
        }
    );
    assert!(outcome.reminders[0].contains("m07 line 45"));
    let requests = server.wait_for_requests(1, WAIT);
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["model"], "claude-haiku-4-5");
    assert_eq!(requests[0].body["tools"].as_array().map_or(0, Vec::len), 0);
    let sent = request_text(&requests[0]);
    assert!(sent.starts_with("<user_message>\nHow should the m07 rollout go?\n</user_message>"));
    for n in 0..50 {
        let tag = format!("m{n:02}");
        assert!(sent.contains(&format!("<memory_file name=\"{tag}.md\"")));
        assert!(sent.contains(&format!("description: what {tag} is about")));
        assert!(
            sent.contains(&format!("{tag} line 30\n")),
            "{tag}'s head is whole"
        );
        for line in 31..=45 {
            assert!(
                !sent.contains(&format!("{tag} line {line}\n")),
                "line {line} of {tag} was sent"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_injected_file_is_not_offered_again_until_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_memory(dir.path(), "a", 8, Duration::ZERO);
    let b = write_memory(dir.path(), "b", 8, Duration::ZERO);
    let server = ScriptedServer::start();
    server.push(Reply::text(r#"{"selected_memories": ["a.md"]}"#));
    server.push(Reply::text(r#"{"selected_memories": ["b.md"]}"#));
    server.push(Reply::text(r#"{"selected_memories": ["a.md", "b.md"]}"#));
    let recall = recall_for(&server, dir.path());

    let first = recall.start("one".to_owned()).await;
    let second = recall.start("two".to_owned()).await;
    std::fs::write(dir.path().join("a.md"), format!("{a}one more line\n")).unwrap();
    let third = recall.start("three".to_owned()).await;

    assert_eq!(first.reminders, vec![reminder(dir.path(), "a", "", &a)]);
    assert_eq!(second.reminders, vec![reminder(dir.path(), "b", "", &b)]);
    assert_eq!(
        third.reminders,
        vec![reminder(dir.path(), "a", "", &format!("{a}one more line"))]
    );
    let requests = server.wait_for_requests(3, WAIT);
    let offered = |request: &RecordedRequest| {
        let text = request_text(request);
        ["a.md", "b.md"]
            .into_iter()
            .filter(|name| text.contains(&format!("name=\"{name}\"")))
            .collect::<Vec<_>>()
    };
    assert_eq!(offered(&requests[0]), ["a.md", "b.md"]);
    assert_eq!(offered(&requests[1]), ["b.md"]);
    // b was injected and has not changed; a changed, so it is offered again.
    assert_eq!(offered(&requests[2]), ["a.md"]);
    // b.md was not offered: naming it anyway is passed over quietly.
    assert_eq!(third.failure, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn after_forgetting_an_injected_file_may_come_back() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_memory(dir.path(), "a", 8, Duration::ZERO);
    let server = ScriptedServer::start();
    server.set_default_reply(Reply::text(r#"{"selected_memories": ["a.md"]}"#));
    let recall = recall_for(&server, dir.path());

    assert_eq!(recall.start("one".to_owned()).await.reminders.len(), 1);
    // Nothing left to offer: no request at all.
    assert_eq!(
        recall.start("two".to_owned()).await,
        RecallOutcome::default()
    );
    assert_eq!(server.requests().len(), 1);
    recall.forget_injected();
    assert_eq!(
        recall.start("three".to_owned()).await.reminders,
        vec![reminder(dir.path(), "a", "", &a)]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_error_gives_no_reminders_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    write_memory(dir.path(), "a", 8, Duration::ZERO);
    let server = ScriptedServer::start();
    server.push(Reply::error(500, "api_error", "Internal server error"));
    let recall = recall_for(&server, dir.path());

    assert_eq!(
        recall.start("hello".to_owned()).await,
        RecallOutcome {
            reminders: vec![],
            failure: Some("server error 500: Internal server error".to_owned()),
        }
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn garbage_instead_of_json_gives_no_reminders_and_quotes_it() {
    let dir = tempfile::tempdir().unwrap();
    write_memory(dir.path(), "a", 8, Duration::ZERO);
    let server = ScriptedServer::start();
    server.push(Reply::text("a.md seems relevant {selected: a.md"));
    let recall = recall_for(&server, dir.path());

    assert_eq!(
        recall.start("hello".to_owned()).await,
        RecallOutcome {
            reminders: vec![],
            failure: Some(
                "the model's answer has no {\"selected_memories\": [...]} in it: \
                 `a.md seems relevant {selected: a.md`"
                    .to_owned()
            ),
        }
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn names_that_are_not_memory_files_are_ignored_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let memory = dir.path().join("memory");
    std::fs::create_dir(&memory).unwrap();
    write_memory(&memory, "a", 8, Duration::ZERO);
    std::fs::write(dir.path().join("secret.md"), memory_text("secret", 8)).unwrap();
    let server = ScriptedServer::start();
    server.push(Reply::text(
        r#"{"selected_memories": ["../secret.md", "MEMORY.md", "nope.md"]}"#,
    ));
    let recall = recall_for(&server, &memory);

    assert_eq!(
        recall.start("hello".to_owned()).await,
        RecallOutcome {
            reminders: vec![],
            failure: Some(
                "the model named files that are not memories (ignored): `../secret.md`, \
                 `MEMORY.md`, `nope.md`"
                    .to_owned()
            ),
        }
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn at_most_five_files_are_injected_in_the_order_chosen() {
    let dir = tempfile::tempdir().unwrap();
    for n in 0..7 {
        write_memory(dir.path(), &format!("f{n}"), 6, Duration::ZERO);
    }
    let server = ScriptedServer::start();
    server.push(Reply::text(
        r#"{"selected_memories": ["f6.md", "f5.md", "f5.md", "f4.md", "f3.md", "f2.md", "f1.md"]}"#,
    ));
    let recall = recall_for(&server, dir.path());

    let outcome = recall.start("everything".to_owned()).await;

    let injected: Vec<String> = outcome
        .reminders
        .iter()
        .map(|reminder| reminder.lines().nth(3).unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        injected,
        ["name: f6", "name: f5", "name: f4", "name: f3", "name: f2"]
    );
    assert_eq!(outcome.failure, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_memory_file_is_named_once_and_the_others_are_still_recalled() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_memory(dir.path(), "good", 8, Duration::ZERO);
    std::fs::write(dir.path().join("bad.md"), "no front matter here").unwrap();
    let server = ScriptedServer::start();
    server.push(Reply::text(r#"{"selected_memories": ["good.md"]}"#));
    server.push(Reply::text(r#"{"selected_memories": []}"#));
    let recall = recall_for(&server, dir.path());
    std::fs::write(dir.path().join("late.md"), memory_text("late", 8)).unwrap();

    let first = recall.start("one".to_owned()).await;
    let second = recall.start("two".to_owned()).await;

    assert_eq!(
        first,
        RecallOutcome {
            reminders: vec![reminder(dir.path(), "good", "", &good)],
            failure: Some(format!(
                "{} was skipped: it has no front matter (a `---` line first)",
                dir.path().join("bad.md").display()
            )),
        }
    );
    assert_eq!(second, RecallOutcome::default());
    let requests = server.wait_for_requests(2, WAIT);
    assert!(!request_text(&requests[0]).contains("no front matter here"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recall_dropped_before_its_end_leaves_the_bad_file_to_be_named_next_time() {
    let dir = tempfile::tempdir().unwrap();
    write_memory(dir.path(), "good", 8, Duration::ZERO);
    std::fs::write(dir.path().join("bad.md"), "no front matter here").unwrap();
    let server = Arc::new(ScriptedServer::start());
    server.push(Reply::text(r#"{"selected_memories": []}"#).with_delay(Duration::from_secs(60)));
    server.push(Reply::text(r#"{"selected_memories": []}"#));
    let recall = recall_for(&server, dir.path());

    // The engine drops a recall still running when the next message comes.
    let late = tokio::spawn(recall.start("one".to_owned()));
    let waiting = Arc::clone(&server);
    tokio::task::spawn_blocking(move || waiting.wait_for_requests(1, WAIT))
        .await
        .unwrap();
    late.abort();
    let next = recall.start("two".to_owned()).await;

    assert_eq!(
        next,
        RecallOutcome {
            reminders: vec![],
            failure: Some(format!(
                "{} was skipped: it has no front matter (a `---` line first)",
                dir.path().join("bad.md").display()
            )),
        }
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_memory_files_nothing_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("MEMORY.md"), "- nothing yet\n").unwrap();
    let server = ScriptedServer::start();
    let recall = recall_for(&server, &dir.path().join("missing"));

    assert_eq!(
        recall.start("hello".to_owned()).await,
        RecallOutcome::default()
    );
    let recall = recall_for(&server, dir.path());
    assert_eq!(
        recall.start("hello".to_owned()).await,
        RecallOutcome::default()
    );
    assert_eq!(server.requests().len(), 0);
}
