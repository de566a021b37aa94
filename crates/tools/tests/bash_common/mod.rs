//! Helpers shared by the `bash_*` integration tests: driving the tools through the registry,
//! and waiting for processes and files without sleeping for a fixed time.

#![allow(dead_code)]

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use cairn_tools::{ToolCall, ToolContext, ToolExecutor, ToolOutput, ToolRegistry};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// How long any awaited event may take before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(10);
/// How often a polled condition is checked again.
const POLL: Duration = Duration::from_millis(20);

pub fn registry(dir: &Path) -> ToolRegistry {
    ToolRegistry::with_builtins(ToolContext::new(dir.to_path_buf()))
}

pub async fn call(registry: &ToolRegistry, tool: &str, input: Value) -> ToolOutput {
    call_with(registry, tool, input, &CancellationToken::new()).await
}

pub async fn call_with(
    registry: &ToolRegistry,
    tool: &str,
    input: Value,
    cancel: &CancellationToken,
) -> ToolOutput {
    let call = ToolCall {
        id: "toolu_test".into(),
        name: tool.into(),
        input,
    };
    let prepared = registry
        .prepare(&call)
        .unwrap_or_else(|error| panic!("{error:?}"));
    registry
        .execute(
            &prepared,
            &cairn_tools::CallContext::detached(cancel.clone()),
        )
        .await
}

pub fn text(output: &ToolOutput) -> String {
    output.content.text()
}

/// Polls `check` until it returns `Some`, failing the test after [`PATIENCE`].
pub async fn wait_for<T, F: Future<Output = Option<T>>>(
    what: &str,
    mut check: impl FnMut() -> F,
) -> T {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "gave up waiting for {what}"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// The pid a command wrote to `file` (written whole with `mv`, so never half a number).
pub async fn pid_in(file: &Path) -> u32 {
    wait_for("the pid file", || async {
        std::fs::read_to_string(file)
            .ok()
            .and_then(|text| text.trim().parse().ok())
    })
    .await
}

/// Whether `pid` is a process that still runs (a zombie, killed and not yet reaped, is not).
pub fn is_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next());
    !matches!(state, Some('Z' | 'X') | None)
}

pub async fn wait_until_dead(pid: u32) {
    wait_for(&format!("process {pid} to die"), || async {
        (!is_alive(pid)).then_some(())
    })
    .await;
}

/// A shell snippet that starts `sleep 100` in the background and writes its pid to `file`.
pub fn sleeper_writing_pid(file: &str) -> String {
    format!("sleep 100 & echo $! > {file}.tmp && mv {file}.tmp {file}")
}
