//! Sessions through the real binary: transcripts, continue, resume, fork, crash safety.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::{Path, PathBuf};
use std::process::Stdio;

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT};

/// What these tests do with a harness: ask in -p mode, find the transcripts.
trait SessionHarness {
    fn ask(&self, prompt: &str, args: &[&str]) -> Value;
    fn transcripts(&self) -> Vec<PathBuf>;
}

impl SessionHarness for Harness {
    /// Runs `cairn -p PROMPT --output-format json ARGS…`; the result object.
    fn ask(&self, prompt: &str, args: &[&str]) -> Value {
        let output = self
            .command()
            .args(["-p", prompt, "--output-format", "json"])
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        serde_json::from_slice(&output.stdout).unwrap()
    }

    fn transcripts(&self) -> Vec<PathBuf> {
        let projects = self.cairn_home().join("projects");
        let mut files = Vec::new();
        for project in std::fs::read_dir(projects).into_iter().flatten().flatten() {
            for file in std::fs::read_dir(project.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if file.path().extension().is_some_and(|ext| ext == "jsonl") {
                    files.push(file.path());
                }
            }
        }
        files.sort();
        files
    }
}

fn texts(request_body: &Value) -> Vec<String> {
    request_body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| {
            message["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|block| {
                    block["text"]
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("<{}>", block["type"].as_str().unwrap_or("?")))
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn a_session_is_written_as_it_goes_and_continue_picks_it_up() {
    let h = Harness::new();
    h.server.push(Reply::text("Noted: 42."));
    let first = h.ask("Remember the number 42.", &[]);
    let files = h.transcripts();
    assert_eq!(files.len(), 1);
    let id = first["session_id"].as_str().unwrap();
    assert!(files[0].ends_with(format!("{id}.jsonl")));
    let lines: Vec<Value> = std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let kinds: Vec<&str> = lines
        .iter()
        .map(|line| line["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, vec!["header", "user", "assistant"]);
    assert_eq!(lines[0]["format_version"], json!(1));
    assert!(
        !std::fs::read_to_string(&files[0])
            .unwrap()
            .contains("sk-test-key")
    );

    h.server.push(Reply::text("It was 42."));
    let second = h.ask("What was the number?", &["--continue"]);
    assert_eq!(second["session_id"], first["session_id"]);
    let request = &h.server.wait_for_requests(2, WAIT)[1];
    assert_eq!(
        texts(&request.body),
        vec![
            "Remember the number 42.",
            "Noted: 42.",
            "What was the number?"
        ]
    );
    assert_eq!(
        h.transcripts().len(),
        1,
        "continue appends to the same file"
    );
}

#[test]
fn resume_by_id_and_fork_leave_the_original_byte_identical() {
    let h = Harness::new();
    h.server.push(Reply::text("First answer."));
    let first = h.ask("First question.", &[]);
    let id = first["session_id"].as_str().unwrap().to_string();
    let original = h.transcripts()[0].clone();
    let before = std::fs::read(&original).unwrap();

    h.server.push(Reply::text("Forked answer."));
    let forked = h.ask("Forked question.", &["--resume", &id, "--fork-session"]);
    assert_ne!(forked["session_id"], json!(id));
    assert_eq!(
        std::fs::read(&original).unwrap(),
        before,
        "the original is untouched"
    );
    assert_eq!(h.transcripts().len(), 2);
    let request = &h.server.wait_for_requests(2, WAIT)[1];
    assert_eq!(
        texts(&request.body),
        vec!["First question.", "First answer.", "Forked question."]
    );

    let chosen = "0b5e7a6c-1f2d-4c3b-9a8e-7d6c5b4a3f21";
    h.server.push(Reply::text("ok"));
    let named = h.ask("hi", &["--session-id", chosen]);
    assert_eq!(named["session_id"], json!(chosen));
}

#[test]
fn resume_without_an_id_in_print_mode_and_bad_ids_are_clear_errors() {
    let h = Harness::new();
    // Usage errors exit 2.
    let output = h.command().args(["-p", "hi", "--resume"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("--resume needs a session id in -p mode"),
        "{stderr}"
    );

    let output = h
        .command()
        .args(["-p", "hi", "--session-id", "../../etc"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8(output.stderr)
            .unwrap()
            .contains("--session-id")
    );

    let output = h
        .command()
        .args(["-p", "hi", "--continue"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8(output.stderr)
            .unwrap()
            .contains("no session to continue")
    );
    assert!(h.server.requests().is_empty());
}

#[test]
fn kill_9_mid_stream_then_continue_keeps_the_earlier_turns() {
    let h = Harness::new();
    h.server.push(Reply::text("Turn one done."));
    h.ask("Turn one.", &[]);
    h.server
        .push(Reply::text("This answer never arrives in full.").stall_after(200));
    let mut child = h
        .command()
        .args(["-p", "Turn two.", "--continue"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    h.server.wait_for_requests(2, WAIT);
    child.kill().unwrap();
    child.wait().unwrap();

    h.server.push(Reply::text("Back."));
    h.ask("Turn three.", &["--continue"]);
    let request = &h.server.wait_for_requests(3, WAIT)[2];
    assert_eq!(
        texts(&request.body),
        vec!["Turn one.", "Turn one done.", "Turn two.", "Turn three."]
    );
}

#[test]
fn a_tool_call_cut_off_by_a_crash_is_answered_on_resume() {
    let h = Harness::new();
    h.server.push(Reply::tool_use(
        "toolu_cut",
        "Bash",
        json!({"command": "echo $$ > pid; touch started; exec sleep 30"}),
    ));
    let mut child = h
        .command()
        .args(["-p", "run it", "--allowedTools", "Bash"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let started = h.work.path().join("started");
    let deadline = std::time::Instant::now() + WAIT;
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        std::thread::yield_now();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    kill_leftover(&h.work.path().join("pid"));

    h.server.push(Reply::text("Understood."));
    h.ask("what happened?", &["--continue"]);
    let request = &h.server.wait_for_requests(2, WAIT)[1];
    let messages = request.body["messages"].as_array().unwrap();
    assert_eq!(messages[1]["content"][0]["id"], json!("toolu_cut"));
    let repair = &messages[2]["content"][0];
    assert_eq!(repair["type"], json!("tool_result"));
    assert_eq!(repair["tool_use_id"], json!("toolu_cut"));
    assert_eq!(repair["is_error"], json!(true));
}

fn kill_leftover(pid_file: &Path) {
    if let Ok(pid) = std::fs::read_to_string(pid_file)
        && let Ok(pid) = pid.trim().parse::<i32>()
        && let Some(pid) = rustix::process::Pid::from_raw(pid)
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}

#[test]
fn an_unwritable_cairn_home_warns_and_the_run_still_answers() {
    let h = Harness::new();
    let blocker = h.home.path().join("not-a-directory");
    std::fs::write(&blocker, "a file where a directory should be").unwrap();
    h.server.push(Reply::text("Still here."));
    let output = h
        .command()
        .env("CAIRN_HOME", blocker.join("cairn"))
        .args(["-p", "hi"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "Still here.\n");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
    assert!(stderr.contains("in memory"), "{stderr}");
}

#[test]
fn sessions_lists_this_projects_sessions() {
    let h = Harness::new();
    h.server.push(Reply::text("one"));
    let first = h.ask("The first prompt", &[]);
    let output = h.command().arg("sessions").output().unwrap();
    assert!(output.status.success());
    let listing = String::from_utf8(output.stdout).unwrap();
    let line = listing.lines().next().unwrap();
    assert!(
        line.starts_with(first["session_id"].as_str().unwrap()),
        "{listing}"
    );
    assert!(
        line.contains("2 messages") && line.contains("The first prompt"),
        "{listing}"
    );
}
