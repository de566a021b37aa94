//! Tool calls through the real binary: parallel reads, an edit after them, large results.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;

use cairn_test_support::{Reply, ScriptedBlock, ScriptedServer};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{WAIT, cairn};

fn tool_use(id: &str, name: &str, input: Value) -> ScriptedBlock {
    ScriptedBlock::ToolUse {
        id: id.into(),
        name: name.into(),
        input,
    }
}

/// Opens `fifo` for writing on another thread and writes `text`, or says it could not within
/// `WAIT`: opening a FIFO for writing blocks until a reader has it open.
fn feed_fifo(fifo: PathBuf, text: &'static str) -> Result<(), String> {
    let (done, wait) = mpsc::channel();
    let name = fifo.display().to_string();
    std::thread::spawn(move || {
        use std::io::Write;
        let result = std::fs::OpenOptions::new()
            .write(true)
            .open(&fifo)
            .and_then(|mut file| file.write_all(text.as_bytes()));
        let _ = done.send(result);
    });
    match wait.recv_timeout(WAIT) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(err)) => Err(format!("writing {name}: {err}")),
        Err(_) => Err(format!("nobody opened {name} for reading")),
    }
}

#[test]
fn three_reads_run_in_parallel_then_the_edit_and_results_keep_the_models_order() {
    let server = ScriptedServer::start();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("target.txt");
    std::fs::write(&target, "hello world\n").unwrap();
    for name in ["one", "two", "three"] {
        let status = Command::new("mkfifo")
            .arg(work.path().join(name))
            .status()
            .unwrap();
        assert!(status.success());
    }

    server.push(Reply::tool_use(
        "read_target",
        "Read",
        json!({"file_path": "target.txt"}),
    ));
    server.push(Reply::blocks(vec![
        // Read-only Bash commands, which run beside each other like any read; Read and Grep
        // refuse a FIFO at once rather than wait on it.
        tool_use("r1", "Bash", json!({"command": "cat one"})),
        tool_use("r2", "Bash", json!({"command": "cat two"})),
        tool_use("r3", "Bash", json!({"command": "cat three"})),
        tool_use(
            "e1",
            "Edit",
            json!({"file_path": "target.txt", "old_string": "hello", "new_string": "goodbye"}),
        ),
    ]));
    server.push(Reply::text("All done."));

    let child = cairn(&server, home.path(), work.path())
        .args([
            "-p",
            "read and edit",
            "--output-format",
            "json",
            "--allowedTools",
            "Edit",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    server.wait_for_requests(2, WAIT);
    // Each read blocks until its FIFO is written. Feeding them in reverse order only works if
    // all three reads are waiting at the same time: run one by one, the first read would hold
    // the others back and "three" would never be opened.
    for (name, text) in [("three", "3\n"), ("two", "2\n"), ("one", "1\n")] {
        feed_fifo(work.path().join(name), text)
            .unwrap_or_else(|err| panic!("the reads did not run in parallel: {err}"));
    }
    let output = child.wait_with_output().unwrap();
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["result"], json!("All done."), "{result}");

    let third = &server.wait_for_requests(3, WAIT)[2];
    let results = third.body["messages"][4]["content"].as_array().unwrap();
    let summary: Vec<(String, bool)> = results
        .iter()
        .map(|r| {
            (
                r["tool_use_id"].as_str().unwrap().to_string(),
                r["is_error"] == json!(true),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("r1".to_string(), false),
            ("r2".to_string(), false),
            ("r3".to_string(), false),
            ("e1".to_string(), false),
        ]
    );
    assert_eq!(results[0]["content"], json!("1"));
    assert_eq!(results[2]["content"], json!("3"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "goodbye world\n");
}

#[test]
fn a_large_result_is_spilled_to_the_session_directory_with_a_preview() {
    let server = ScriptedServer::start();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let line = "0123456789".repeat(10);
    let big: String = (0..1500).map(|n| format!("{n:05} {line}\n")).collect();
    std::fs::write(work.path().join("big.txt"), &big).unwrap();
    server.push(Reply::tool_use(
        "toolu_big",
        "Read",
        json!({"file_path": "big.txt"}),
    ));
    server.push(Reply::text("It is big."));
    let output = cairn(&server, home.path(), work.path())
        .args(["-p", "read big.txt"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");

    let second = &server.wait_for_requests(2, WAIT)[1];
    let result = second.body["messages"][2]["content"][0]["content"]
        .as_str()
        .unwrap();
    assert!(
        result.len() < 3_000,
        "the preview is short: {} bytes",
        result.len()
    );
    let spilled: Vec<PathBuf> = walk(&home.path().join(".cairn"))
        .into_iter()
        .filter(|path| path.file_name().is_some_and(|name| name == "toolu_big.txt"))
        .collect();
    assert_eq!(spilled.len(), 1, "one spill file under CAIRN_HOME");
    assert!(
        result.contains(&spilled[0].display().to_string()),
        "{result}"
    );
    let saved = std::fs::read_to_string(&spilled[0]).unwrap();
    assert!(
        saved.starts_with("     1\t00000 0123"),
        "the whole Read output is saved"
    );
    assert_eq!(saved.lines().count(), 1500);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn settings_env_reaches_commands_and_background_shells_die_with_cairn() {
    let server = ScriptedServer::start();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join(".claude")).unwrap();
    std::fs::write(
        work.path().join(".claude/settings.json"),
        r#"{"env": {"CAIRN_TEST_GREETING": "hello from settings"}}"#,
    )
    .unwrap();
    server.push(Reply::tool_use(
        "bg",
        "Bash",
        json!({"command": "echo $$ > pid; exec sleep 300", "run_in_background": true}),
    ));
    server.push(Reply::tool_use(
        "fg",
        "Bash",
        json!({"command": "while [ ! -s pid ]; do sleep 0.01; done; echo \"$CAIRN_TEST_GREETING\""}),
    ));
    server.push(Reply::text("done"));
    let output = cairn(&server, home.path(), work.path())
        .args(["-p", "go", "--allowedTools", "Bash"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");

    let third = &server.wait_for_requests(3, WAIT)[2];
    let greeting = &third.body["messages"][4]["content"][0]["content"];
    assert_eq!(greeting, &json!("hello from settings"));

    let pid = std::fs::read_to_string(work.path().join("pid")).unwrap();
    let stat = format!("/proc/{}/stat", pid.trim());
    // Killed processes may linger briefly as zombies until reaped; either way not running.
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let state = std::fs::read_to_string(&stat).ok();
        let running = state.as_deref().is_some_and(|s| {
            s.rsplit_once(") ")
                .is_some_and(|(_, rest)| !rest.starts_with('Z'))
        });
        if !running {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the background shell outlived cairn"
        );
        std::thread::yield_now();
    }
}
