//! `Bash` with `run_in_background`, `BashOutput` and `KillShell`, with real processes.

// Helpers outside #[test] functions count as library code to clippy; here they are test code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bash_common;

use bash_common::{call, pid_in, registry, sleeper_writing_pid, text, wait_for, wait_until_dead};
use cairn_tools::{ToolOutput, ToolRegistry};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// Reads `shell` (with `filter`) until its status line is no longer "running", returning
/// what every read returned.
async fn read_until_done(
    registry: &ToolRegistry,
    shell: &str,
    filter: Option<&str>,
) -> Vec<String> {
    let mut reads = Vec::new();
    let mut input = json!({"bash_id": shell});
    if let Some(filter) = filter {
        input["filter"] = Value::from(filter);
    }
    let deadline = tokio::time::Instant::now() + bash_common::PATIENCE;
    loop {
        let read = text(&call(registry, "BashOutput", input.clone()).await);
        let done = !read
            .lines()
            .next()
            .unwrap_or_default()
            .ends_with(": running");
        reads.push(read);
        if done {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{shell} never finished: {reads:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    reads
}

/// The output lines of one BashOutput result, without its status line and empty-read notes.
fn output_lines(read: &str) -> Vec<&str> {
    read.lines()
        .skip(1)
        .filter(|line| !line.starts_with("(no new output"))
        .collect()
}

#[tokio::test]
async fn output_is_read_once_and_each_read_returns_only_what_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let started = call(
        &registry,
        "Bash",
        json!({
            "command": "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second; echo oops >&2",
            "description": "Wait for go",
            "run_in_background": true,
        }),
    )
    .await;
    assert_eq!(
        started,
        ToolOutput::text(format!(
            "Started in the background as shell bash_1, in {}. Read its output with BashOutput \
             (bash_id \"bash_1\") and stop it with TaskStop (task_id \"bash_1\").",
            dir.path().display()
        ))
    );

    let first = wait_for("the first line", || async {
        let read = text(&call(&registry, "BashOutput", json!({"bash_id": "bash_1"})).await);
        read.contains("first").then_some(read)
    })
    .await;
    assert_eq!(first, "Shell bash_1 (Wait for go): running\nfirst");
    let nothing_new = call(&registry, "BashOutput", json!({"bash_id": "bash_1"})).await;
    assert_eq!(
        nothing_new,
        ToolOutput::text("Shell bash_1 (Wait for go): running\n(no new output)")
    );

    std::fs::write(dir.path().join("go"), "").unwrap();
    let reads = read_until_done(&registry, "bash_1", None).await;
    let lines: Vec<&str> = reads.iter().flat_map(|read| output_lines(read)).collect();
    assert_eq!(lines, vec!["second", "[stderr]", "oops"]);
    assert_eq!(
        reads.last().unwrap().lines().next().unwrap(),
        "Shell bash_1 (Wait for go): exited with code 0"
    );
}

#[tokio::test]
async fn kill_shell_stops_the_group_and_the_status_says_killed() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let command = format!("{}; wait", sleeper_writing_pid("pid"));
    call(
        &registry,
        "Bash",
        json!({"command": command, "run_in_background": true}),
    )
    .await;
    let pid = pid_in(&dir.path().join("pid")).await;

    let killed = call(&registry, "KillShell", json!({"shell_id": "bash_1"})).await;
    assert_eq!(
        killed,
        ToolOutput::text(format!(
            "Killed shell bash_1 ({command}) and every process it started."
        ))
    );
    wait_until_dead(pid).await;
    let status = call(&registry, "BashOutput", json!({"bash_id": "bash_1"})).await;
    assert_eq!(
        status,
        ToolOutput::text(format!("Shell bash_1 ({command}): killed\n(no new output)"))
    );
    let again = call(&registry, "KillShell", json!({"shell_id": "bash_1"})).await;
    assert_eq!(
        again,
        ToolOutput::text(format!(
            "Shell bash_1 ({command}) was no longer running (killed); nothing to kill."
        ))
    );
}

#[tokio::test]
async fn a_filter_keeps_only_matching_lines_and_a_bad_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    call(
        &registry,
        "Bash",
        json!({"command": "printf 'apple\\nbanana\\napricot\\n'; exit 2", "run_in_background": true}),
    )
    .await;
    let reads = read_until_done(&registry, "bash_1", Some("^a")).await;
    let lines: Vec<&str> = reads.iter().flat_map(|read| output_lines(read)).collect();
    assert_eq!(lines, vec!["apple", "apricot"]);
    assert!(
        reads.last().unwrap().contains("exited with code 2"),
        "{reads:?}"
    );

    let bad = call(
        &registry,
        "BashOutput",
        json!({"bash_id": "bash_1", "filter": "(unclosed"}),
    )
    .await;
    assert!(bad.is_error);
    assert!(
        text(&bad).starts_with("Invalid input for BashOutput: field `filter`: \"(unclosed\" is not a valid regular expression"),
        "{}",
        text(&bad)
    );
}

#[tokio::test]
async fn unknown_ids_are_errors_that_list_the_shells() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let none = call(&registry, "BashOutput", json!({"bash_id": "bash_9"})).await;
    assert_eq!(
        none,
        ToolOutput::error(
            "No background shell with id \"bash_9\": none has been started in this session. \
             Start one with Bash and run_in_background: true."
        )
    );
    call(
        &registry,
        "Bash",
        json!({"command": "true", "run_in_background": true}),
    )
    .await;
    call(
        &registry,
        "Bash",
        json!({"command": "true", "run_in_background": true}),
    )
    .await;
    let unknown = call(&registry, "KillShell", json!({"shell_id": "bash_9"})).await;
    assert_eq!(
        unknown,
        ToolOutput::error(
            "No background shell with id \"bash_9\". The shells in this session are: bash_1, bash_2."
        )
    );
}

#[tokio::test]
async fn ending_the_session_kills_running_background_shells() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let command = format!("{}; wait", sleeper_writing_pid("pid"));
    call(
        &registry,
        "Bash",
        json!({"command": command, "run_in_background": true}),
    )
    .await;
    let pid = pid_in(&dir.path().join("pid")).await;
    assert!(bash_common::is_alive(pid));
    // The registry holds the only reference to the session, and so to its shells.
    drop(registry);
    wait_until_dead(pid).await;
}

#[test]
fn the_schemas_use_claude_codes_field_names() {
    let registry = registry(std::path::Path::new("/"));
    let specs = cairn_tools::ToolExecutor::specs(&registry);
    let fields = |tool: &str| -> Vec<String> {
        let spec = specs.iter().find(|spec| spec.name == tool).unwrap();
        assert!(!spec.description.is_empty(), "{tool}");
        let mut names: Vec<String> = spec.input_schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        fields("Bash"),
        [
            "command",
            "dangerouslyDisableSandbox",
            "description",
            "run_in_background",
            "timeout"
        ]
    );
    assert_eq!(fields("BashOutput"), ["bash_id", "filter"]);
    assert_eq!(fields("TaskStop"), ["shell_id", "task_id"]);
    assert!(specs.iter().all(|spec| spec.name != "KillShell"));
}

/// Runs `tool` with `input` through any executor (a sub-agent's).
async fn call_on(tools: &dyn cairn_tools::ToolExecutor, tool: &str, input: Value) -> ToolOutput {
    let call = cairn_tools::ToolCall {
        id: "t1".into(),
        name: tool.into(),
        input,
    };
    match tools.prepare(&call) {
        Ok(prepared) => {
            let detached =
                cairn_tools::CallContext::detached(tokio_util::sync::CancellationToken::new());
            tools.execute(&prepared, &detached).await
        }
        Err(refused) => refused,
    }
}

#[tokio::test]
async fn a_sub_agents_shell_moves_alone_and_shares_the_background_tasks() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let parent = registry(dir.path());
    let agent = cairn_tools::ToolExecutor::for_agent(&parent, None).unwrap();

    let moved = call_on(
        agent.as_ref(),
        "Bash",
        json!({"command": "cd sub && pwd -P"}),
    )
    .await;
    assert!(!moved.is_error, "{moved:?}");
    let here = call_on(agent.as_ref(), "Bash", json!({"command": "pwd -P"})).await;
    let sub = dir.path().join("sub").canonicalize().unwrap();
    assert_eq!(text(&here).lines().next(), Some(sub.to_str().unwrap()));
    let parents = call(&parent, "Bash", json!({"command": "pwd -P"})).await;
    let root = dir.path().canonicalize().unwrap();
    assert_eq!(text(&parents).lines().next(), Some(root.to_str().unwrap()));

    // A file the parent read is not read for the agent.
    std::fs::write(dir.path().join("notes.txt"), "old\n").unwrap();
    call(&parent, "Read", json!({"file_path": "notes.txt"})).await;
    let edit = call_on(
        agent.as_ref(),
        "Edit",
        json!({"file_path": dir.path().join("notes.txt"), "old_string": "old", "new_string": "new"}),
    )
    .await;
    assert!(
        edit.is_error && text(&edit).contains("has not been read"),
        "{edit:?}"
    );

    // A command the agent started in the background: the parent stops it by its task id, and
    // KillShell, the older name, still answers.
    let command = format!("{}; wait", sleeper_writing_pid("pid"));
    call_on(
        agent.as_ref(),
        "Bash",
        json!({"command": command, "run_in_background": true}),
    )
    .await;
    let pid = pid_in(&dir.path().join("sub/pid")).await;
    let stopped = call(&parent, "TaskStop", json!({"task_id": "bash_1"})).await;
    assert_eq!(
        stopped,
        ToolOutput::text(format!(
            "Killed shell bash_1 ({command}) and every process it started."
        ))
    );
    wait_until_dead(pid).await;
    let again = call_on(agent.as_ref(), "KillShell", json!({"shell_id": "bash_1"})).await;
    assert!(
        text(&again).contains("was no longer running (killed)"),
        "{again:?}"
    );
    let neither = call(&parent, "TaskStop", json!({})).await;
    assert!(
        neither.is_error && text(&neither).contains("`task_id`"),
        "{neither:?}"
    );
}

#[tokio::test]
async fn task_output_waits_for_a_shell_to_end_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    call(
        &registry,
        "Bash",
        json!({"command": "echo one; echo two", "description": "Two lines", "run_in_background": true}),
    )
    .await;
    let output = call(&registry, "TaskOutput", json!({"task_id": "bash_1"})).await;
    assert_eq!(
        output,
        ToolOutput::text("Task bash_1 (Two lines): exited with code 0\none\ntwo")
    );

    let command = format!("{}; wait", sleeper_writing_pid("pid"));
    call(
        &registry,
        "Bash",
        json!({"command": command, "description": "Sleeps", "run_in_background": true}),
    )
    .await;
    let pid = pid_in(&dir.path().join("pid")).await;
    let running = call(
        &registry,
        "TaskOutput",
        json!({"task_id": "bash_2", "block": false}),
    )
    .await;
    assert_eq!(
        running,
        ToolOutput::text("Task bash_2 (Sleeps): running\n(no new output)")
    );
    call(&registry, "TaskStop", json!({"task_id": "bash_2"})).await;
    wait_until_dead(pid).await;
    let unknown = call(&registry, "TaskOutput", json!({"task_id": "bash_9"})).await;
    assert!(unknown.is_error, "{unknown:?}");
}
