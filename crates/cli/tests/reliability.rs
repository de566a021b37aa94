//! Faults and hostile input through the real binary (issue 13): streams that end oddly or
//! never end, sessions of folders that share a slug, two writers on one session, a damaged
//! first prompt, a full disk while spilling, and who may read what cairn writes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use cairn_test_support::{Reply, ScriptedServer};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT, cairn};

/// Runs `command` with `-p PROMPT --output-format json ARGS…`.
fn ask(mut command: Command, prompt: &str, args: &[&str]) -> Output {
    command
        .args(["-p", prompt, "--output-format", "json"])
        .args(args)
        .output()
        .unwrap()
}

fn result(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| panic!("{error}: {output:?}"))
}

/// The text of each message of a recorded request, tool blocks as `<type>`.
fn texts(request_body: &Value) -> Vec<String> {
    request_body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| match &message["content"] {
            Value::String(text) => text.clone(),
            content => content
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
                .join(" "),
        })
        .collect()
}

/// Every session file under `cairn_home`.
fn transcripts(cairn_home: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let projects = cairn_home.join("projects");
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

// Item 1: a last event without its closing blank line.

#[test]
fn an_answer_whose_last_event_lacks_its_blank_line_is_printed_once() {
    let h = Harness::new();
    h.server.push(
        Reply::text("All of it.")
            .without_last_bytes(1)
            .with_chunk_size(7),
    );
    h.server.push(Reply::text("A retry's answer."));
    let output = ask(h.command(), "hi", &[]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(result(&output)["result"], json!("All of it."));
    assert_eq!(h.server.requests().len(), 1);
}

// Item 2: streams that never end.

#[test]
fn endless_pings_end_with_a_retry_then_a_clear_error() {
    let h = Harness::new();
    h.server.set_default_reply(Reply::endless_pings());
    let mut command = h.command();
    command
        .env("API_TIMEOUT_MS", "300")
        .env("CAIRN_MAX_RETRIES", "1");
    let output = ask(command, "hi", &[]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let result = result(&output);
    assert_eq!(
        (&result["subtype"], &result["result"]),
        (
            &json!("error_during_execution"),
            &json!(
                "gave up after 2 attempts; last error: no complete answer within 0.3 s; the \
                 stream kept going without finishing (API_TIMEOUT_MS sets this limit)"
            )
        )
    );
    assert_eq!(h.server.requests().len(), 2);
}

// Item 5: one directory per real folder.

#[test]
fn folders_that_share_a_slug_continue_their_own_sessions() {
    let server = ScriptedServer::start();
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let dashed = root.path().join("ws-a");
    let underscored = root.path().join("ws_a");
    std::fs::create_dir(&dashed).unwrap();
    std::fs::create_dir(&underscored).unwrap();

    server.push(Reply::text("Noted for ws-a."));
    assert!(
        ask(cairn(&server, home.path(), &dashed), "I am ws-a.", &[])
            .status
            .success()
    );
    server.push(Reply::text("Noted for ws_a."));
    assert!(
        ask(cairn(&server, home.path(), &underscored), "I am ws_a.", &[])
            .status
            .success()
    );
    server.push(Reply::text("You are ws-a."));
    let output = ask(cairn(&server, home.path(), &dashed), "Who am I?", &["-c"]);
    assert!(output.status.success(), "{output:?}");

    let request = &server.wait_for_requests(3, WAIT)[2];
    assert_eq!(
        texts(&request.body),
        vec!["I am ws-a.", "Noted for ws-a.", "Who am I?"]
    );
    assert_eq!(transcripts(&home.path().join(".cairn")).len(), 2);
}

// Item 6: one writer per session.

#[test]
fn a_second_continue_while_the_first_runs_forks_instead_of_interleaving() {
    let h = Harness::new();
    h.server.push(Reply::text("First turn."));
    let first = result(&ask(h.command(), "Turn one.", &[]));
    let original_id = first["session_id"].as_str().unwrap().to_string();

    // A `-c` that stays in its turn, holding the session.
    h.server
        .push(Reply::text("This answer never finishes.").stall_after(150));
    let mut running = h
        .command()
        .args(["-p", "Turn two, first cairn.", "-c"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    h.server.wait_for_requests(2, WAIT);

    h.server.push(Reply::text("Second cairn's answer."));
    let second = ask(h.command(), "Turn two, second cairn.", &["-c"]);
    running.kill().unwrap();
    running.wait().unwrap();
    assert!(second.status.success(), "{second:?}");
    let second_id = result(&second)["session_id"].as_str().unwrap().to_string();
    assert_ne!(second_id, original_id);
    assert_eq!(
        String::from_utf8_lossy(&second.stderr).trim(),
        format!(
            "note: session {original_id} is in use by another cairn; continuing in a new \
             session {second_id} forked from its last finished turn"
        )
    );
    // The second run forked from the last finished turn: the first cairn's prompt, still in
    // flight, stays in its own session (no two user messages in a row, no unanswered
    // question), and the second wrote into its own file only.
    let request = &h.server.wait_for_requests(3, WAIT)[2];
    assert_eq!(
        texts(&request.body),
        vec!["Turn one.", "First turn.", "Turn two, second cairn."]
    );
    let forked = transcripts(&h.cairn_home())
        .into_iter()
        .find(|path| path.ends_with(format!("{second_id}.jsonl")))
        .unwrap();
    let forked = std::fs::read_to_string(forked).unwrap();
    assert!(!forked.contains("first cairn"), "{forked}");
    let original = transcripts(&h.cairn_home())
        .into_iter()
        .find(|path| path.ends_with(format!("{original_id}.jsonl")))
        .unwrap();
    let original = std::fs::read_to_string(original).unwrap();
    assert!(!original.contains("second cairn"), "{original}");
}

// Item 7: a damaged first prompt.

#[test]
fn a_session_whose_first_prompt_is_damaged_still_continues_with_a_user_message_first() {
    let h = Harness::new();
    h.server.push(Reply::text("Answer one."));
    assert!(
        ask(h.command(), "Secret first prompt.", &[])
            .status
            .success()
    );
    let file = transcripts(&h.cairn_home()).remove(0);
    let text = std::fs::read_to_string(&file).unwrap();
    let damaged = text.replacen("Secret first prompt.", "Secret\0\0\0\0\0\0 prompt.", 1);
    std::fs::write(&file, damaged).unwrap();

    h.server.push(Reply::text("Answer two."));
    let output = ask(h.command(), "Next.", &["-c"]);
    assert!(output.status.success(), "{output:?}");
    let request = &h.server.wait_for_requests(2, WAIT)[1];
    assert_eq!(
        texts(&request.body),
        vec![cairn_session::LOST_START, "Answer one.", "Next."]
    );
    assert_eq!(request.body["messages"][0]["role"], json!("user"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("line 2: skipped an incomplete entry"),
        "{stderr}"
    );
    assert!(
        stderr.contains("first prompt could not be read"),
        "{stderr}"
    );
}

// Item 8 and issue 11 item 7: what cairn writes under its home.

/// A Read of a 90 KB file in `work`, a result too large for the conversation, so it is
/// spilled.
fn large_output_call(work: &Path) -> Reply {
    let big = work.join("big.txt");
    std::fs::write(&big, format!("{}\n", "x".repeat(59)).repeat(1500)).unwrap();
    Reply::tool_use("toolu_big", "Read", json!({"file_path": big}))
}

/// The start of `text`, for a failure message that stays readable.
fn start_of(text: &str) -> String {
    text.chars().take(400).collect()
}

#[cfg(unix)]
#[test]
fn everything_under_cairn_home_is_the_users_alone_after_a_run() {
    use std::os::unix::fs::PermissionsExt;

    let h = Harness::new();
    h.server.push(large_output_call(h.work.path()));
    h.server.push(Reply::text("Saw it."));
    let output = ask(h.command(), "read it", &[]);
    assert!(output.status.success(), "{output:?}");
    let spilled = &h.server.wait_for_requests(2, WAIT)[1];
    assert!(
        spilled
            .body
            .to_string()
            .contains("The whole output is saved in"),
        "the result should have been spilled"
    );

    let mut wrong = Vec::new();
    let mut seen = (0, 0);
    let mut pending = vec![h.cairn_home()];
    while let Some(path) = pending.pop() {
        let metadata = std::fs::symlink_metadata(&path).unwrap();
        let mode = metadata.permissions().mode() & 0o777;
        if metadata.is_dir() {
            seen.0 += 1;
            if mode != 0o700 {
                wrong.push((path.clone(), mode));
            }
            pending.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            seen.1 += 1;
            if mode != 0o600 {
                wrong.push((path, mode));
            }
        }
    }
    assert_eq!(wrong, Vec::<(PathBuf, u32)>::new());
    // ~/.cairn, projects, the project, the session's spill directory; the transcript and the
    // spilled result.
    assert!(seen.0 >= 4 && seen.1 >= 2, "{seen:?}");
}

/// Whether this machine lets an unprivileged user mount a tmpfs in a user namespace.
fn can_mount_tmpfs() -> bool {
    Command::new("unshare")
        .args(["-rm", "sh", "-c", "mount -t tmpfs -o size=16k tmpfs /tmp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

#[test]
fn a_full_disk_while_spilling_leaves_no_partial_file() {
    if !can_mount_tmpfs() {
        eprintln!("skipped: `unshare -rm` cannot mount a tmpfs here");
        return;
    }
    let h = Harness::new();
    h.server.push(large_output_call(h.work.path()));
    h.server.push(Reply::text("Understood."));
    let id = "5f2b7a3e-8c1d-4e6f-9a0b-1c2d3e4f5a6b";
    let key = cairn_session::project_key(&std::fs::canonicalize(h.work.path()).unwrap());
    let spill_dir = h.cairn_home().join("projects").join(key).join(id);
    std::fs::create_dir_all(&spill_dir).unwrap();

    // cairn runs in a mount namespace where the session's spill directory is a 16 KiB disk:
    // the 90 KB result fills it part-way.
    let command = h.command();
    let program = command.get_program().to_owned();
    let mut script = Command::new("unshare");
    script
        .args(["-rm", "sh", "-c"])
        .arg(
            "mount -t tmpfs -o size=16k tmpfs \"$1\" || exit 90; shift; \"$@\"; status=$?; \
             echo \"left: [$(find \"$SPILL\" -type f)]\" >&2; exit $status",
        )
        .arg("sh")
        .arg(&spill_dir)
        .arg(program)
        .args([
            "-p",
            "read it",
            "--output-format",
            "json",
            "--session-id",
            id,
        ])
        .env("SPILL", &spill_dir)
        .current_dir(h.work.path())
        .stdin(Stdio::null());
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => script.env(name, value),
            None => script.env_remove(name),
        };
    }
    let output = script.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("left: []"), "{stderr}");

    let request = &h.server.wait_for_requests(2, WAIT)[1];
    let tool_result = &request.body["messages"][2]["content"][0];
    let text = tool_result["content"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| {
            tool_result["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        });
    assert!(
        text.contains("too large for the conversation, and saving it to")
            && text.contains("No space left on device"),
        "{}",
        start_of(&text)
    );
    assert_eq!(result(&output)["session_id"], json!(id));
}
