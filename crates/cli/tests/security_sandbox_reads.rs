//! What the `Read(…)` deny rules deny, the sandbox hides from shell commands, even when the
//! permission gate cannot see the path a command reads.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]
#![allow(clippy::print_stderr, reason = "a skipped test says why")]

use std::path::PathBuf;

use cairn_policy::sandbox::{SandboxSupport, detect_support};
use cairn_test_support::{Reply, ScriptedServer};
use serde_json::{Value, json};

mod support;
use support::{WAIT, cairn};

/// A directory outside every place the sandbox leaves writable (temp dirs), for a HOME whose
/// files the sandbox can hide; `None` if there is none.
fn home_outside_temp() -> Option<tempfile::TempDir> {
    let temp_roots: Vec<PathBuf> = [
        std::env::temp_dir(),
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        PathBuf::from("/dev/shm"),
    ]
    .iter()
    .filter_map(|path| path.canonicalize().ok())
    .collect();
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .canonicalize()
        .ok()?;
    if temp_roots.iter().any(|root| scratch.starts_with(root)) {
        return None;
    }
    tempfile::tempdir_in(scratch).ok()
}

/// A command that reads `$HOME/<relative>` without naming the path anywhere the permission
/// gate can read it: the path is only put together when the shell runs.
fn hidden_read(relative: &str) -> String {
    format!(r#"sh -c "$(printf 'cat %s/{relative}' "$HOME")""#)
}

/// A scripted server, a HOME outside the temp dirs and a project.
struct Setup {
    server: ScriptedServer,
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Setup {
    /// Runs `cairn -p … extra` with the model calling Bash with `command`, and returns the
    /// tool result the model received.
    fn bash(&self, command: &str, extra: &[&str]) -> Value {
        let before = self.server.requests().len();
        self.server
            .push(Reply::tool_use("b", "Bash", json!({ "command": command })));
        self.server.push(Reply::text("done"));
        let output = cairn(&self.server, self.home.path(), self.work.path())
            .args(["-p", "read it", "--permission-mode", "bypassPermissions"])
            .args(extra)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let request = &self.server.wait_for_requests(before + 2, WAIT)[before + 1];
        let messages = request.body["messages"].as_array().unwrap();
        messages.last().unwrap()["content"][0].clone()
    }

    fn write_home_file(&self, relative: &str, text: &str) {
        let path = self.home.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| result["content"].to_string())
}

/// Asserts the command failed on the sandbox's refusal, with nothing of `secret` in its
/// output and no warning that a rule could not be hidden.
fn assert_hidden(result: &Value, secret: &str) {
    let text = text_of(result);
    assert_eq!(result["is_error"], json!(true), "{result}");
    assert!(!text.contains(secret), "the secret leaked: {text}");
    assert!(text.contains("Permission denied"), "{text}");
    assert!(!text.contains("cairn sandbox: warning"), "{text}");
}

#[test]
fn read_deny_rules_hide_files_from_commands_the_gate_cannot_see_into() {
    if let SandboxSupport::Unsupported { reason } = detect_support() {
        eprintln!("skipped: this kernel cannot sandbox: {reason}");
        return;
    }
    let Some(home) = home_outside_temp() else {
        eprintln!("skipped: no directory outside the temp directories for HOME");
        return;
    };
    let setup = Setup {
        server: ScriptedServer::start(),
        home,
        work: tempfile::tempdir().unwrap(),
    };
    setup.write_home_file("secret/key", "TOP-SECRET-KEY\n");
    setup.write_home_file("vault/token", "VAULT-TOKEN\n");
    setup.write_home_file("public/note", "PUBLIC-NOTE\n");

    // Without a rule the command reads the key: the read is the gate's blind spot.
    let before = setup.bash(&hidden_read("secret/key"), &[]);
    assert_eq!(before.get("is_error"), None, "{before}");
    assert!(text_of(&before).contains("TOP-SECRET-KEY"), "{before}");

    let claude = setup.work.path().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let settings = json!({"permissions": {"deny": ["Read(~/secret/**)"]}});
    std::fs::write(claude.join("settings.json"), settings.to_string()).unwrap();
    let flag = ["--disallowedTools", "Read(~/vault/token)"];

    assert_hidden(&setup.bash(&hidden_read("secret/key"), &flag), "TOP-SECRET");
    // A rule from --disallowedTools is hidden as well.
    assert_hidden(
        &setup.bash(&hidden_read("vault/token"), &flag),
        "VAULT-TOKEN",
    );

    // Next to them, what no rule names stays readable.
    let public = setup.bash(&hidden_read("public/note"), &flag);
    assert_eq!(public.get("is_error"), None, "{public}");
    assert_eq!(text_of(&public).trim(), "PUBLIC-NOTE");
}
