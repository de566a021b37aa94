//! Resuming a long session: wall time from starting `cairn -p --resume <id>` on a generated
//! 10,000-message transcript to the moment its first request reaches the (scripted) model
//! server, which is what a user waits for.
//!
//! `cargo bench -p cairn-cli --bench resume`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark reports on stdout and fails loudly"
)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn_protocol::{ContentBlock, Message, Role, Usage};
use cairn_session::{AssistantEntry, Entry, NewSession, SessionId, SessionStore};
use cairn_test_support::{Reply, ScriptedServer};
use serde_json::json;

const MESSAGES: usize = 10_000;
const RUNS: usize = 10;

fn main() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let cairn_home = home.path().join(".cairn");
    let id = generate(&cairn_home, work.path());
    let size = std::fs::metadata(SessionStore::new(&cairn_home).path(work.path(), &id))
        .unwrap()
        .len();

    let server = ScriptedServer::start();
    server.set_default_reply(Reply::text("ok"));
    let mut times = Vec::new();
    for run in 0..RUNS + 1 {
        let started = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .current_dir(work.path())
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env("ANTHROPIC_API_KEY", "bench-key")
            .env("ANTHROPIC_BASE_URL", server.url())
            .env("HOME", home.path())
            .env("CAIRN_HOME", &cairn_home)
            .args(["-p", "one more question", "--resume", &id.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let request = server.wait_for_requests(run + 1, Duration::from_secs(60));
        // The request's head arriving means cairn had the whole body ready to send.
        let elapsed = request[run].received_at.duration_since(started);
        assert!(child.wait().unwrap().success());
        let sent = request[run].body["messages"].as_array().unwrap().len();
        // The whole history, the answers of the earlier runs, and the new prompt.
        assert_eq!(sent, MESSAGES + 2 * run + 1);
        // The first run warms the page cache and is not counted.
        if run > 0 {
            times.push(elapsed);
        }
    }
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "resume of {MESSAGES} messages ({:.1} MB): median {:.1} ms to the first request \
         (min {:.1} ms, max {:.1} ms, {RUNS} runs)",
        size as f64 / 1e6,
        median.as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3
    );
}

/// Writes a realistic session: prompts, answers, and tool calls with results of a few KB.
fn generate(cairn_home: &Path, cwd: &Path) -> SessionId {
    let store = SessionStore::new(cairn_home);
    let id = SessionId::new();
    let mut writer = store
        .create(
            cwd,
            &id,
            NewSession {
                model: "claude-sonnet-4-5".into(),
                git_branch: None,
            },
        )
        .unwrap();
    let mut written = 0;
    let mut turn = 0;
    while written < MESSAGES {
        let entry = match written % 4 {
            0 => Entry::user(Message::user_text(format!(
                "Question {turn}: what does module {turn} do?"
            ))),
            1 => assistant(vec![
                ContentBlock::text(format!("Let me read module {turn}.")),
                ContentBlock::ToolUse {
                    id: format!("toolu_{turn}"),
                    name: "Read".into(),
                    input: json!({"file_path": format!("/project/src/module_{turn}.rs")}),
                },
            ]),
            2 => Entry::tool_results(Message {
                role: Role::User,
                content: vec![ContentBlock::tool_result(
                    format!("toolu_{turn}"),
                    (1..=60)
                        .map(|line| {
                            format!("{line:>6}\tpub fn item_{line}() -> usize {{ {line} }}\n")
                        })
                        .collect::<String>(),
                    false,
                )],
            }),
            _ => {
                turn += 1;
                assistant(vec![ContentBlock::text(
                    "Module {turn} defines sixty small functions that each return their own \
                     line number; nothing else depends on them."
                        .repeat(3),
                )])
            }
        };
        writer.append(&entry).unwrap();
        written += 1;
    }
    writer.sync().unwrap();
    id
}

fn assistant(content: Vec<ContentBlock>) -> Entry {
    Entry::Assistant(AssistantEntry {
        timestamp: 0,
        message: Message {
            role: Role::Assistant,
            content,
        },
        model: "claude-sonnet-4-5".into(),
        message_id: None,
        usage: Usage {
            input_tokens: 1000,
            output_tokens: 100,
            ..Usage::default()
        },
        cost_usd: 0.0045,
    })
}
