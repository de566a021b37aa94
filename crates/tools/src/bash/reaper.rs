//! Process groups recorded under `~/.cairn`, so that the commands of a cairn killed without a
//! chance to stop them (SIGKILL, the OOM killer, a crash) are stopped by the next cairn to
//! start, instead of running on indefinitely.
//!
//! Chosen over a parent-death signal set in the sandbox wrapper: that signal reaches only the
//! process it is set in (the shell), never the shell's children, and a command outside the
//! sandbox gets none at all. A record names a whole process group, sandboxed or not.
//!
//! Each cairn appends one line per command it starts to `process-groups/cairn-PID-START.jsonl`
//! (its own pid and start time, so that a live cairn's file is never touched) and removes the
//! file when it exits normally. At start, [`reap_orphaned_process_groups`] reads the files of
//! cairns that are gone and kills each recorded group with SIGKILL, but only when the group's
//! leader (the shell, whose pid is the group id) is still the process cairn started: same start
//! time and same command line. A recorded group whose leader no longer matches is left alone.
//!
//! What it does not cover:
//! - commands keep running until the next cairn starts; none is killed while no cairn runs;
//! - a group whose leader has exited (a shell that `exec`ed another program, or a command that
//!   finished and left a `&` job behind) cannot be told from a stranger's and is left alone;
//! - a process that left the group (`setsid`, a daemon) is not in it to be killed;
//! - `!` commands of the interactive UI, which it stops itself but does not record;
//! - platforms without `/proc` (everywhere but Linux): nothing is recorded.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use rustix::process::{Pid, Signal, kill_process_group};
use serde::{Deserialize, Serialize};

/// This process's record file, once [`reap_orphaned_process_groups`] has set it up.
static RECORDS: OnceLock<Records> = OnceLock::new();

#[derive(Debug)]
struct Records {
    path: PathBuf,
    file: Mutex<File>,
}

/// One command's process group, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct RecordedGroup {
    /// The group id: the pid of its leader, the shell cairn started.
    pgid: i32,
    /// The leader's start time, in clock ticks since boot (`/proc/PID/stat`, field 22).
    start: u64,
    /// The leader's command line, as the shell was started.
    argv: Vec<String>,
}

/// What [`reap_orphaned_process_groups`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reaped {
    /// The process groups killed: their ids.
    pub killed: Vec<i32>,
}

/// Kills the recorded process groups of cairns that are no longer running (see the module
/// doc for which), removes their records, and from now on records the groups this process
/// starts in `dir` (typically `~/.cairn/process-groups`). Call it once, at start.
///
/// # Errors
///
/// When `dir` cannot be created or this process's record file cannot be opened; commands
/// then run unrecorded.
pub fn reap_orphaned_process_groups(dir: &Path) -> io::Result<Reaped> {
    let mut reaped = Reaped::default();
    // cairn's own state: only the user may look (the home, this directory, the records).
    cairn_protocol::private_dir_builder().create(dir)?;
    for entry in fs::read_dir(dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // This process's own file, if any, is a running owner's too.
        let Some(owner) = parse_file_name(&name) else {
            continue;
        };
        if owner_is_running(owner) {
            continue;
        }
        let path = entry.path();
        let text = fs::read_to_string(&path).unwrap_or_default();
        for group in text
            .lines()
            .filter_map(|line| serde_json::from_str::<RecordedGroup>(line).ok())
        {
            if leader_matches(&group)
                && let Some(pgid) = Pid::from_raw(group.pgid)
                && kill_process_group(pgid, Signal::KILL).is_ok()
            {
                reaped.killed.push(group.pgid);
            }
        }
        let _ = fs::remove_file(&path);
    }
    let Some(start) = start_time(std::process::id()) else {
        return Ok(reaped);
    };
    let path = dir.join(format!("cairn-{}-{start}.jsonl", std::process::id()));
    let file = cairn_protocol::private_file_options()
        .create(true)
        .append(true)
        .open(&path)?;
    let _ = RECORDS.set(Records {
        path,
        file: Mutex::new(file),
    });
    Ok(reaped)
}

/// Removes this process's record file: its commands were stopped (or deliberately left
/// running) on the way out. Call it when cairn exits normally.
pub fn forget_recorded_process_groups() {
    if let Some(records) = RECORDS.get() {
        let _ = fs::remove_file(&records.path);
    }
}

/// Records the group led by `leader`, just started as `argv`, when recording is on. A group
/// that cannot be recorded runs anyway: the record only matters if cairn is killed.
pub(super) fn record_group(leader: u32, argv: Vec<String>) {
    let Some(records) = RECORDS.get() else { return };
    let Some(start) = start_time(leader) else {
        return;
    };
    let Ok(pgid) = i32::try_from(leader) else {
        return;
    };
    let Ok(mut line) = serde_json::to_string(&RecordedGroup { pgid, start, argv }) else {
        return;
    };
    line.push('\n');
    let mut file = records.file.lock().unwrap_or_else(PoisonError::into_inner);
    let _ = file.write_all(line.as_bytes());
}

/// The owner's pid and start time from a record file's name, `cairn-PID-START.jsonl`.
fn parse_file_name(name: &str) -> Option<(u32, u64)> {
    let rest = name.strip_prefix("cairn-")?.strip_suffix(".jsonl")?;
    let (pid, start) = rest.split_once('-')?;
    Some((pid.parse().ok()?, start.parse().ok()?))
}

/// Whether the cairn that wrote a record file still runs: its pid is taken by a process that
/// started when it did.
fn owner_is_running((pid, start): (u32, u64)) -> bool {
    start_time(pid) == Some(start)
}

/// Whether the recorded group's leader is still the shell cairn started.
fn leader_matches(group: &RecordedGroup) -> bool {
    let Ok(pid) = u32::try_from(group.pgid) else {
        return false;
    };
    start_time(pid) == Some(group.start) && command_line(pid).as_ref() == Some(&group.argv)
}

/// When process `pid` started, in clock ticks since boot; `None` if there is no such process
/// (or no `/proc`).
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name in parentheses may hold spaces and parentheses: fields follow the last.
    let (_, fields) = stat.rsplit_once(')')?;
    // `fields` starts at field 3 (the state); the start time is field 22.
    fields.split_whitespace().nth(19)?.parse().ok()
}

fn command_line(pid: u32) -> Option<Vec<String>> {
    let bytes = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(
        bytes
            .split(|&byte| byte == 0)
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect::<Vec<_>>()
            .split_last()
            .map(|(_, args)| args.to_vec())
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_record_file_name_carries_its_owner() {
        assert_eq!(
            parse_file_name("cairn-4242-981234.jsonl"),
            Some((4242, 981_234))
        );
        assert_eq!(parse_file_name("cairn-4242.jsonl"), None);
        assert_eq!(parse_file_name("notes.txt"), None);
    }

    #[test]
    fn this_process_is_running_and_a_changed_start_time_is_another_process() {
        let pid = std::process::id();
        let start = start_time(pid).unwrap_or_default();
        assert!(start > 0);
        assert!(owner_is_running((pid, start)));
        assert!(!owner_is_running((pid, start + 1)));
    }

    #[test]
    fn a_leader_whose_command_line_differs_is_not_ours() {
        let pid = std::process::id();
        let group = RecordedGroup {
            pgid: i32::try_from(pid).unwrap_or_default(),
            start: start_time(pid).unwrap_or_default(),
            argv: vec!["bash".into(), "-c".into(), "true".into()],
        };
        assert!(!leader_matches(&group));
        let ours = RecordedGroup {
            argv: command_line(pid).unwrap_or_default(),
            ..group
        };
        assert!(leader_matches(&ours));
    }
}
