//! Running real hook commands: matchers, timeouts and cancellation, parallelism,
//! de-duplication, the input on stdin and the environment.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod hooks_support;

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use cairn_policy::hooks::{HookCommon, HookConfig, HookEvent, HookOutcome, HookRunner};
use hooks_support::{Project, common};
use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn timeout_kills_the_hook_and_warns() {
    let project = Project::new(json!({ "PreToolUse": [{ "hooks": [
        { "type": "command", "command": "sleep 5", "timeout": 1 }
    ] }] }));
    let started = Instant::now();
    let outcome = project.pre_tool_use("Bash").await;
    let took = started.elapsed();
    assert_eq!(
        outcome,
        HookOutcome {
            warnings: vec![
                "hook `sleep 5` (PreToolUse) timed out after 1 s and was stopped".into()
            ],
            ..HookOutcome::default()
        }
    );
    assert!(took >= Duration::from_secs(1), "returned after {took:?}");
    assert!(
        took < Duration::from_millis(2500),
        "returned after {took:?}"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn timeout_kills_what_the_hook_started() {
    let project = Project::new(json!({ "Notification": [{ "hooks": [
        { "type": "command", "command": "sleep 30 & echo $! > child.pid; wait", "timeout": 0.5 }
    ] }] }));
    let outcome = project.run(HookEvent::Notification, None, json!({})).await;
    assert_eq!(outcome.warnings.len(), 1, "{outcome:?}");
    let pid = fs::read_to_string(project.path("child.pid")).unwrap();
    let stat = Path::new("/proc").join(pid.trim()).join("stat");
    // SIGKILL has been sent to the group; wait (bounded) for the kernel to finish it.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let state = fs::read_to_string(&stat).ok().and_then(|stat| {
            stat.rsplit(") ")
                .next()
                .and_then(|rest| rest.chars().next())
        });
        match state {
            None | Some('Z' | 'X') => break,
            Some(state) => assert!(
                Instant::now() < deadline,
                "the hook's background process is still alive in state {state}"
            ),
        }
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn cancelling_stops_running_hooks() {
    let project = Project::with_hooks(
        HookEvent::PreToolUse,
        &["echo started > started.fifo; sleep 30"],
    );
    let fifo = project.path("started.fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let cancel = CancellationToken::new();
    let Value::Object(input) = json!({ "tool_name": "Bash" }) else {
        unreachable!()
    };
    let common = common();
    let run = project
        .runner
        .run(HookEvent::PreToolUse, Some("Bash"), &common, input, &cancel);
    let cancel_once_started = async {
        // Opening a FIFO for reading returns once the hook opens it for writing.
        tokio::task::spawn_blocking(move || fs::read_to_string(fifo))
            .await
            .unwrap()
            .unwrap();
        cancel.cancel();
    };
    let (outcome, ()) = tokio::time::timeout(Duration::from_secs(10), async {
        tokio::join!(run, cancel_once_started)
    })
    .await
    .expect("cancelling should end the run promptly");
    assert_eq!(
        outcome,
        HookOutcome {
            warnings: vec![
                "hook `echo started > started.fifo; sleep 30` (PreToolUse) was cancelled".into()
            ],
            ..HookOutcome::default()
        }
    );
}

#[tokio::test]
async fn matchers_select_hooks_by_subject() {
    let group = |matcher: Option<&str>, tag: &str| {
        let hooks = json!([{ "type": "command", "command": format!("echo {tag} >> ran.log") }]);
        match matcher {
            Some(matcher) => json!({ "matcher": matcher, "hooks": hooks }),
            None => json!({ "hooks": hooks }),
        }
    };
    let project = Project::new(json!({ "PreToolUse": [
        group(Some("Edit|Write"), "edit-or-write"),
        group(Some("mcp__.*"), "mcp"),
        group(Some("*"), "star"),
        group(Some(""), "empty"),
        group(None, "absent"),
    ] }));
    let ran = |tool: &'static str| {
        let project = &project;
        async move {
            let _ = fs::remove_file(project.path("ran.log"));
            assert_eq!(project.pre_tool_use(tool).await, HookOutcome::default());
            project.lines("ran.log")
        }
    };
    assert_eq!(
        ran("Write").await,
        ["absent", "edit-or-write", "empty", "star"]
    );
    assert_eq!(
        ran("Edit").await,
        ["absent", "edit-or-write", "empty", "star"]
    );
    assert_eq!(ran("NotebookEdit").await, ["absent", "empty", "star"]);
    assert_eq!(
        ran("mcp__github__create_issue").await,
        ["absent", "empty", "mcp", "star"]
    );
    assert_eq!(ran("Read").await, ["absent", "empty", "star"]);
}

#[tokio::test]
async fn identical_commands_run_once() {
    let project = Project::new(json!({ "PreToolUse": [
        { "matcher": "Bash", "hooks": [{ "type": "command", "command": "echo ran >> count.log" }] },
        { "matcher": "*", "hooks": [
            { "type": "command", "command": "  echo ran >> count.log  " },
            { "type": "command", "command": "echo ran >> count.log", "timeout": 5 }
        ] }
    ] }));
    assert_eq!(project.pre_tool_use("Bash").await, HookOutcome::default());
    assert_eq!(project.lines("count.log"), ["ran"]);
}

#[tokio::test]
async fn hooks_run_in_parallel() {
    // Each waits for the other's marker: both finish only if they run at the same time;
    // run one after the other, the first would time out.
    let waits_for = |mine: &str, theirs: &str| {
        json!({
            "type": "command",
            "command": format!("touch {mine}; while [ ! -e {theirs} ]; do sleep 0.02; done; echo done >> finished.log"),
            "timeout": 10
        })
    };
    let project = Project::new(json!({ "PreToolUse": [
        { "matcher": "Bash", "hooks": [waits_for("a.marker", "b.marker")] },
        { "matcher": "Bash", "hooks": [waits_for("b.marker", "a.marker")] }
    ] }));
    assert_eq!(project.pre_tool_use("Bash").await, HookOutcome::default());
    assert_eq!(project.lines("finished.log"), ["done", "done"]);
}

#[tokio::test]
async fn stdin_carries_the_event_and_common_fields() {
    let project = Project::with_hooks(HookEvent::PreToolUse, &["cat > input.json"]);
    let outcome = project
        .run(
            HookEvent::PreToolUse,
            Some("Bash"),
            json!({
                "tool_name": "Bash",
                "tool_input": { "command": "cargo test", "description": "Run the tests" },
                "tool_use_id": "toolu_01",
                "hook_event_name": "overridden by the runner"
            }),
        )
        .await;
    assert_eq!(outcome, HookOutcome::default());
    let input: Value =
        serde_json::from_str(&fs::read_to_string(project.path("input.json")).unwrap()).unwrap();
    assert_eq!(
        input,
        json!({
            "session_id": "session-1",
            "transcript_path": "/home/someone/.cairn/sessions/session-1.jsonl",
            "cwd": "/work/project",
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": { "command": "cargo test", "description": "Run the tests" },
            "tool_use_id": "toolu_01"
        })
    );
}

#[tokio::test]
async fn runs_in_the_project_with_claude_project_dir_set() {
    let project = Project::with_hooks(
        HookEvent::Stop,
        &[r#"printf '%s' "$CLAUDE_PROJECT_DIR" > env.txt; pwd -P > pwd.txt"#],
    );
    let outcome = project
        .run(HookEvent::Stop, None, json!({ "stop_hook_active": false }))
        .await;
    assert_eq!(outcome, HookOutcome::default());
    assert_eq!(
        fs::read_to_string(project.path("env.txt")).unwrap(),
        project.dir.path().to_str().unwrap()
    );
    assert_eq!(
        fs::read_to_string(project.path("pwd.txt"))
            .unwrap()
            .trim_end(),
        project.dir.path().canonicalize().unwrap().to_str().unwrap()
    );
}

#[tokio::test]
async fn no_matching_hooks_run_nothing() {
    let project = Project::with_hooks(HookEvent::PostToolUse, &["echo ran >> ran.log"]);
    assert_eq!(project.pre_tool_use("Bash").await, HookOutcome::default());
    assert_eq!(project.lines("ran.log"), Vec::<String>::new());
}

#[tokio::test]
async fn a_hook_that_ignores_its_input_is_fine() {
    // Big input, and a hook that exits without reading it: a broken pipe is not an error.
    let project = Project::with_hooks(HookEvent::PostToolUse, &["exit 0"]);
    let outcome = project
        .run(
            HookEvent::PostToolUse,
            Some("Read"),
            json!({ "tool_name": "Read", "tool_response": "x".repeat(4 * 1024 * 1024) }),
        )
        .await;
    assert_eq!(outcome, HookOutcome::default());
}

#[tokio::test]
async fn empty_input_map_is_accepted() {
    let project = Project::with_hooks(HookEvent::SessionEnd, &["cat > input.json"]);
    let outcome = project
        .runner
        .run(
            HookEvent::SessionEnd,
            None,
            &HookCommon::default(),
            Map::new(),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome, HookOutcome::default());
    let input: Value =
        serde_json::from_str(&fs::read_to_string(project.path("input.json")).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "SessionEnd");
}

#[tokio::test]
async fn a_missing_project_directory_is_a_warning() {
    let (config, _) = HookConfig::from_settings(&json!({ "Stop": [{ "hooks": [
        { "type": "command", "command": "true" }
    ] }] }));
    let runner = HookRunner::new(config, "/nonexistent/cairn-project".into());
    let outcome = runner
        .run(
            HookEvent::Stop,
            None,
            &common(),
            Map::new(),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(
        outcome,
        HookOutcome {
            warnings: vec![
                "hook `true` (Stop) could not run: its directory /nonexistent/cairn-project \
                 does not exist (No such file or directory (os error 2))"
                    .into()
            ],
            ..HookOutcome::default()
        }
    );
}

#[test]
fn running_hooks_can_move_between_threads() {
    fn assert_send<T: Send>(_: &T) {}
    let project = Project::with_hooks(HookEvent::Stop, &["true"]);
    let common = common();
    let cancel = CancellationToken::new();
    let run = project
        .runner
        .run(HookEvent::Stop, None, &common, Map::new(), &cancel);
    assert_send(&run);
}
