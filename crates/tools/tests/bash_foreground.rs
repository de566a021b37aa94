//! `Bash` run in the foreground: working directory, exit codes, timeouts, cancellation and
//! long output, with real processes.

// Helpers outside #[test] functions count as library code to clippy; here they are test code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bash_common;

use std::time::Instant;

use bash_common::{
    call, call_with, is_alive, pid_in, registry, sleeper_writing_pid, text, wait_until_dead,
};
use cairn_tools::{ToolCall, ToolExecutor, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn project() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let canonical = dir.path().canonicalize().unwrap();
    (dir, canonical)
}

#[tokio::test]
async fn cd_persists_across_calls_and_falls_back_when_the_directory_goes() {
    let (_dir, project) = project();
    std::fs::create_dir(project.join("sub dir")).unwrap();
    let registry = registry(&project);

    let moved = call(&registry, "Bash", json!({"command": "cd \"sub dir\""})).await;
    assert_eq!(moved, ToolOutput::text("(no output)"));
    let here = call(&registry, "Bash", json!({"command": "pwd"})).await;
    assert_eq!(
        here,
        ToolOutput::text(project.join("sub dir").display().to_string())
    );

    // The permission layer sees where the next command runs.
    let prepared = registry
        .prepare(&ToolCall {
            id: "t".into(),
            name: "Bash".into(),
            input: json!({"command": "ls"}),
        })
        .unwrap();
    assert_eq!(prepared.paths, vec![project.join("sub dir")]);

    // `exit` ends the command, and the directory it reached still sticks.
    let exited = call(&registry, "Bash", json!({"command": "cd .. && exit 4"})).await;
    assert_eq!(exited, ToolOutput::error("Exit code 4\n(no output)"));
    let back = call(&registry, "Bash", json!({"command": "pwd"})).await;
    assert_eq!(text(&back), project.display().to_string());

    call(&registry, "Bash", json!({"command": "cd 'sub dir'"})).await;
    std::fs::remove_dir(project.join("sub dir")).unwrap();
    let fallback = call(&registry, "Bash", json!({"command": "pwd"})).await;
    assert_eq!(
        fallback,
        ToolOutput::text(format!(
            "The shell's working directory {sub} no longer exists; the command ran in the project \
             directory {project} instead.\n{project}",
            sub = project.join("sub dir").display(),
            project = project.display()
        ))
    );
}

#[tokio::test]
async fn exit_codes_and_stderr_are_reported() {
    let (_dir, project) = project();
    let registry = registry(&project);
    let failed = call(
        &registry,
        "Bash",
        json!({"command": "echo out; echo err >&2; exit 3"}),
    )
    .await;
    assert_eq!(failed, ToolOutput::error("Exit code 3\nout\n[stderr]\nerr"));

    let warned = call(&registry, "Bash", json!({"command": "echo warning >&2"})).await;
    assert_eq!(warned, ToolOutput::text("[stderr]\nwarning"));

    let syntax = call(&registry, "Bash", json!({"command": "echo \"unterminated"})).await;
    assert!(syntax.is_error);
    assert!(
        text(&syntax).starts_with("Exit code 2\n[stderr]\n"),
        "{}",
        text(&syntax)
    );

    let env = call(
        &registry,
        "Bash",
        json!({"command": "echo $CAIRN $TERM; read line; echo read=$?"}),
    )
    .await;
    assert_eq!(env, ToolOutput::text("1 dumb\nread=1"));
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group() {
    let (_dir, project) = project();
    let registry = registry(&project);
    let command = format!(
        "echo started; {}; sleep 100; wait",
        sleeper_writing_pid("pid")
    );
    let started = Instant::now();
    let output = call(
        &registry,
        "Bash",
        json!({"command": command, "timeout": 1000}),
    )
    .await;
    assert!(
        started.elapsed().as_secs() < 5,
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        output,
        ToolOutput::error(
            "Command timed out after 1000 ms; it and every process it started were killed. \
             Output until then:\nstarted"
        )
    );
    // The `sleep` started with `&` belonged to the group, so it died too.
    let background_sleep = pid_in(&project.join("pid")).await;
    wait_until_dead(background_sleep).await;
}

#[tokio::test]
async fn timeouts_over_the_maximum_are_clamped_with_a_note() {
    let (_dir, project) = project();
    let registry = registry(&project);
    let output = call(
        &registry,
        "Bash",
        json!({"command": "echo hi", "timeout": 900_000}),
    )
    .await;
    assert_eq!(
        output,
        ToolOutput::text(
            "The timeout of 900000 ms is over the maximum of 600000 ms; used 600000 ms.\nhi"
        )
    );
}

#[tokio::test]
async fn cancellation_kills_a_running_command_promptly() {
    let (_dir, project) = project();
    let registry = registry(&project);
    let cancel = CancellationToken::new();
    let command = format!("{}; wait", sleeper_writing_pid("pid"));
    let pid_file = project.join("pid");
    let (output, pid) = tokio::join!(
        call_with(&registry, "Bash", json!({"command": command}), &cancel),
        async {
            let pid = pid_in(&pid_file).await;
            cancel.cancel();
            pid
        }
    );
    assert_eq!(
        output,
        ToolOutput::error(
            "Command was interrupted; it and every process it started were killed.\n(no output)"
        )
    );
    wait_until_dead(pid).await;
}

#[tokio::test]
async fn long_output_is_cut_in_the_middle() {
    let (_dir, project) = project();
    let registry = registry(&project);
    let output = call(&registry, "Bash", json!({"command": "seq 1 20000"})).await;

    let full: String = (1..=20_000).map(|n| format!("{n}\n")).collect();
    let full = full.trim_end();
    let chars: Vec<char> = full.chars().collect();
    let head: String = chars[..15_000].iter().collect();
    let middle: String = chars[15_000..chars.len() - 15_000].iter().collect();
    let tail: String = chars[chars.len() - 15_000..].iter().collect();
    let expected = format!(
        "{head}\n\n[… output too long: {} characters ({} lines) cut from the middle …]\n\n{tail}",
        middle.chars().count(),
        middle.matches('\n').count()
    );
    assert_eq!(output, ToolOutput::text(expected));
}

#[tokio::test]
async fn a_process_left_holding_the_output_does_not_block_the_result() {
    let (_dir, project) = project();
    let registry = registry(&project);
    let command = format!("echo done; {}", sleeper_writing_pid("pid"));
    let output = call(&registry, "Bash", json!({"command": command})).await;
    let pid = pid_in(&project.join("pid")).await;
    assert!(!output.is_error);
    assert!(
        text(&output).starts_with("done\n(The command left a process running"),
        "{}",
        text(&output)
    );
    // It was started deliberately with `&`, so it was left running; end it here.
    assert!(is_alive(pid));
    let leftover = rustix::process::Pid::from_raw(pid.cast_signed()).unwrap();
    rustix::process::kill_process(leftover, rustix::process::Signal::TERM).unwrap();
    wait_until_dead(pid).await;
}

#[tokio::test]
async fn an_interrupted_command_returns_its_output_then_the_note() {
    let (_dir, project) = project();
    let registry = registry(&project);
    let cancel = CancellationToken::new();
    let command = format!("echo started; {}; wait", sleeper_writing_pid("pid"));
    let pid_file = project.join("pid");
    let (output, pid) = tokio::join!(
        call_with(&registry, "Bash", json!({"command": command}), &cancel),
        async {
            let pid = pid_in(&pid_file).await;
            cancel.cancel();
            pid
        }
    );
    assert_eq!(
        output,
        ToolOutput::error(
            "started\nCommand was interrupted; it and every process it started were killed."
        )
    );
    wait_until_dead(pid).await;
}
