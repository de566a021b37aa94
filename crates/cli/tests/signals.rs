//! Signals to `cairn -p` while a Bash command runs: SIGTERM and SIGHUP stop the command's
//! whole process group and still print the result; after SIGKILL the command runs on only
//! until the next cairn starts, which stops it (and only what is verifiably cairn's).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use rustix::io::Errno;
use rustix::process::{
    Pid, Signal, getpgid, kill_process, test_kill_process, test_kill_process_group,
};
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT};

/// A Bash command with a child (`sh`) and a grandchild (`sleep`), both meant to run for five
/// minutes, that first writes their pids into the FIFO `pids`.
const FAMILY: &str = "sh -c 'sleep 300 & echo \"$$ $!\" > pids; sleep 300'";

/// The processes of the running [`FAMILY`] command.
#[derive(Debug)]
struct Family {
    child: Pid,
    grandchild: Pid,
    /// The group the command's shell leads.
    group: Pid,
}

/// Starts `cairn -p` running [`FAMILY`] and returns once the command is running.
fn start_family(h: &Harness) -> (Child, Family) {
    let fifo = h.path("pids");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    h.server.push(Reply::tool_use(
        "family",
        "Bash",
        json!({ "command": FAMILY }),
    ));
    let cairn = h
        .command()
        .args([
            "-p",
            "go",
            "--allowedTools",
            "Bash",
            "--output-format",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pids = read_fifo(&fifo);
    let pids: Vec<Pid> = pids
        .split_whitespace()
        .map(|pid| Pid::from_raw(pid.parse().unwrap()).unwrap())
        .collect();
    let [child, grandchild] = pids[..] else {
        panic!("expected two pids, got {pids:?}");
    };
    let group = getpgid(Some(child)).unwrap();
    assert_eq!(getpgid(Some(grandchild)).unwrap(), group);
    assert_ne!(
        group,
        getpgid(None).unwrap(),
        "the command shares the test's group"
    );
    (
        cairn,
        Family {
            child,
            grandchild,
            group,
        },
    )
}

/// What the command writes into the FIFO at `path`: opening it waits for the writer. Fails
/// the test if nothing comes within [`WAIT`].
fn read_fifo(path: &Path) -> String {
    let (sender, receiver) = mpsc::channel();
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let mut text = String::new();
        let read = std::fs::File::open(path).and_then(|mut fifo| fifo.read_to_string(&mut text));
        let _ = sender.send(read.map(|_| text));
    });
    receiver
        .recv_timeout(WAIT)
        .expect("the command never wrote its pids")
        .unwrap()
}

/// Waits (at most [`WAIT`]) until no process is left in `group`: killed processes linger as
/// zombies until their new parent reaps them.
fn assert_group_ends(group: Pid) {
    let deadline = Instant::now() + WAIT;
    loop {
        match test_kill_process_group(group) {
            Err(Errno::SRCH) => return,
            Ok(()) => assert!(
                Instant::now() < deadline,
                "process group {group:?} still has processes"
            ),
            Err(err) => panic!("cannot check process group {group:?}: {err}"),
        }
        std::thread::yield_now();
    }
}

/// Kills the group at the end of a test that failed half-way, so no `sleep 300` outlives it.
struct KillGroup(Pid);

impl Drop for KillGroup {
    fn drop(&mut self) {
        let _ = rustix::process::kill_process_group(self.0, Signal::KILL);
    }
}

fn stop_with(signal: Signal) {
    let h = Harness::new();
    let (mut cairn, family) = start_family(&h);
    let _cleanup = KillGroup(family.group);
    kill_process(Pid::from_child(&cairn), signal).unwrap();
    let exit = cairn.wait().unwrap();
    let mut stdout = String::new();
    cairn
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert_eq!(exit.code(), Some(143), "stdout: {stdout}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (&result["subtype"], &result["is_error"]),
        (&json!("error_during_execution"), &json!(true)),
        "{result}"
    );
    assert_group_ends(family.group);
    for pid in [family.child, family.grandchild] {
        assert_eq!(
            test_kill_process(pid),
            Err(Errno::SRCH),
            "{pid:?} still runs"
        );
    }
}

#[test]
fn sigterm_stops_the_running_commands_whole_group_and_prints_the_result() {
    stop_with(Signal::TERM);
}

#[test]
fn sighup_stops_the_running_commands_whole_group_and_prints_the_result() {
    stop_with(Signal::HUP);
}

#[test]
fn after_sigkill_the_next_cairn_stops_the_commands_group() {
    let h = Harness::new();
    let (mut cairn, family) = start_family(&h);
    let _cleanup = KillGroup(family.group);
    kill_process(Pid::from_child(&cairn), Signal::KILL).unwrap();
    cairn.wait().unwrap();
    // Nothing stopped it: cairn had no chance.
    assert_eq!(test_kill_process_group(family.group), Ok(()));

    h.server.push(Reply::text("Hello again."));
    let output = h.command().args(["-p", "hi"]).output().unwrap();
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!(
            "cairn: stopped commands that a cairn killed earlier left running (process groups \
             {})\n",
            family.group.as_raw_nonzero()
        )
    );
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "Hello again.\n");
    assert_group_ends(family.group);
    // The record is gone with the group: a third start stops nothing.
    h.server.push(Reply::text("Once more."));
    let output = h.command().args(["-p", "hi"]).output().unwrap();
    assert_eq!(String::from_utf8(output.stderr).unwrap(), "");
}

#[test]
fn a_recorded_group_whose_leader_is_not_the_recorded_process_is_left_alone() {
    let h = Harness::new();
    // A process group of the test's own, recorded by a cairn long gone (no pid is that high)
    // as if it were one of its commands: once with another start time, once with another
    // command line.
    let mut stranger = Command::new("sleep")
        .arg("300")
        .process_group(0)
        .spawn()
        .unwrap();
    let group = Pid::from_child(&stranger);
    let _cleanup = KillGroup(group);
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", stranger.id())).unwrap();
    let start: u64 = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap();
    let records = h.cairn_home().join("process-groups");
    std::fs::create_dir_all(&records).unwrap();
    let lines = [
        json!({"pgid": stranger.id(), "start": start + 1, "argv": ["sleep", "300"]}),
        json!({"pgid": stranger.id(), "start": start, "argv": ["bash", "-c", "sleep 300", "bash"]}),
    ];
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let file = records.join("cairn-999999999-1.jsonl");
    std::fs::write(&file, text).unwrap();

    h.server.push(Reply::text("Hello."));
    let output = h.command().args(["-p", "hi"]).output().unwrap();
    assert_eq!(String::from_utf8(output.stderr).unwrap(), "");
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "Hello.\n");
    assert_eq!(
        stranger.try_wait().unwrap(),
        None,
        "the stranger was killed"
    );
    assert!(!file.exists(), "the dead cairn's records were kept");
}

/// Ctrl-C while a Bash command runs: the command's group is killed, and its tool result
/// holds what it had printed, then the interruption note (not a bare "interrupted").
#[test]
fn an_interrupted_bash_call_keeps_what_the_command_printed() {
    let h = Harness::new();
    let fifo = h.path("ready");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    h.server.push(Reply::tool_use(
        "slow",
        "Bash",
        json!({ "command": "echo compiled 3 of 9; echo $$ > ready; sleep 300" }),
    ));
    let cairn = h
        .command()
        .args(["-p", "go", "--allowedTools", "Bash"])
        .args(["--output-format", "stream-json", "--verbose"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let shell = Pid::from_raw(read_fifo(&fifo).trim().parse().unwrap()).unwrap();
    let _cleanup = KillGroup(getpgid(Some(shell)).unwrap());
    kill_process(Pid::from_child(&cairn), Signal::INT).unwrap();
    let output = cairn.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["type"] == "user")
        .flat_map(|line| {
            line["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|block| block["tool_use_id"] == "slow")
        .unwrap_or_else(|| panic!("no tool result for the call: {stdout}"));
    let text = result["content"].to_string();
    let printed = text.find("compiled 3 of 9").expect(&text);
    let note = text.find("Command was interrupted").expect(&text);
    assert!(printed < note, "the output comes before the note: {text}");
    assert_eq!(result["is_error"], json!(true));
}
