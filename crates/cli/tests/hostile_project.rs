//! `cairn -p` in a hostile repository: a FIFO named `CLAUDE.md`, rule and command files that
//! link to `/dev/zero`. cairn must not hang or grow without end; it skips them and answers.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;

mod support;
use support::{Harness, WAIT};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Runs `command` to its end, at most [`WAIT`]: a hang fails the test.
fn output_within_deadline(mut command: Command) -> Output {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(child.wait_with_output());
    });
    match receiver.recv_timeout(WAIT) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            if let Some(pid) = rustix::process::Pid::from_raw(pid.cast_signed()) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            panic!("cairn -p did not finish within {WAIT:?}");
        }
    }
}

#[test]
fn a_project_with_a_fifo_and_links_to_dev_zero_still_gets_its_answer() {
    let h = Harness::new();
    let status = Command::new("mkfifo")
        .arg(h.path("CLAUDE.md"))
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::create_dir_all(h.path(".claude/rules")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", h.path(".claude/rules/endless.md")).unwrap();
    std::fs::create_dir_all(h.path(".claude/commands")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", h.path(".claude/commands/endless.md")).unwrap();
    write(&h.path("AGENTS.md"), "Always answer in one line.");
    write(
        &h.path(".claude/commands/greet.md"),
        "Say hello to $ARGUMENTS.",
    );
    h.server.push(Reply::text("Hello, world."));

    let mut command = h.command();
    command.args(["-p", "/greet world"]);
    let output = output_within_deadline(command);

    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    for skipped in ["CLAUDE.md was skipped", "endless.md was skipped"] {
        assert!(
            stderr.contains(skipped),
            "the warning names the file: {stderr}"
        );
    }
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "Hello, world.\n");
    let requests = h.server.requests();
    assert_eq!(requests.len(), 1);
    let system = requests[0].body["system"].to_string();
    assert!(
        system.contains("Always answer in one line."),
        "the readable instruction file is in the prompt: {system}"
    );
    assert!(
        !system.contains("CLAUDE.md"),
        "the FIFO is not in the prompt: {system}"
    );
    let messages = &requests[0].body["messages"];
    let user = messages[messages.as_array().unwrap().len() - 1].to_string();
    assert!(
        user.contains("Say hello to world."),
        "the readable command ran: {user}"
    );
}
