//! The fixture shared by the hooks tests: a temporary project with hooks configured, and
//! helpers to run them.

#![allow(dead_code, reason = "each test binary uses part of the fixture")]

use std::fs;
use std::path::PathBuf;

use cairn_policy::hooks::{HookCommon, HookConfig, HookEvent, HookOutcome, HookRunner};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// A temporary project directory whose hooks are `settings`.
pub struct Project {
    pub dir: TempDir,
    pub runner: HookRunner,
}

impl Project {
    pub fn new(settings: Value) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let (config, problems) = HookConfig::from_settings(&settings);
        assert_eq!(problems, Vec::<String>::new());
        let runner = HookRunner::new(config, dir.path().to_path_buf());
        Project { dir, runner }
    }

    /// A project whose only hooks are `commands`, at `event`, for every subject.
    pub fn with_hooks(event: HookEvent, commands: &[&str]) -> Project {
        let hooks: Vec<Value> = commands
            .iter()
            .map(|command| json!({ "type": "command", "command": command }))
            .collect();
        Project::new(json!({ event.as_str(): [{ "matcher": "*", "hooks": hooks }] }))
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes an executable shell script into the project.
    pub fn script(&self, name: &str, body: &str) {
        use std::os::unix::fs::PermissionsExt;
        let path = self.path(name);
        fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }

    pub async fn run(&self, event: HookEvent, subject: Option<&str>, input: Value) -> HookOutcome {
        let Value::Object(input) = input else {
            panic!("hook input must be an object");
        };
        self.runner
            .run(event, subject, &common(), input, &CancellationToken::new())
            .await
    }

    pub async fn pre_tool_use(&self, tool: &str) -> HookOutcome {
        self.run(
            HookEvent::PreToolUse,
            Some(tool),
            json!({ "tool_name": tool, "tool_input": { "command": "rm -rf build" } }),
        )
        .await
    }

    /// The lines of a file the hooks wrote, sorted (hooks run in parallel).
    pub fn lines(&self, name: &str) -> Vec<String> {
        let text = fs::read_to_string(self.path(name)).unwrap_or_default();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        lines.sort();
        lines
    }
}

pub fn common() -> HookCommon {
    HookCommon {
        session_id: "session-1".into(),
        transcript_path: "/home/someone/.cairn/sessions/session-1.jsonl".into(),
        cwd: "/work/project".into(),
        permission_mode: "default".into(),
    }
}

/// A command printing `reply` as JSON on stdout.
pub fn replying(reply: &Value) -> String {
    format!("printf '%s' '{reply}'")
}
