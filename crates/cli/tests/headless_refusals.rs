//! What `cairn -p` says of a refused call: in text a line on standard error naming the call
//! and how to allow it (the answer alone would leave no trace of it), once even with
//! `--verbose`; in json the result's `permission_denials` carries it instead.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::json;

mod support;
use support::Harness;

/// A run where the model asks to delete `doomed/`, which needs approval nobody can give.
fn refused_run(extra: &[&str]) -> (Harness, std::process::Output) {
    let h = Harness::new();
    std::fs::create_dir_all(h.path("doomed")).unwrap();
    h.server.push(Reply::tool_use(
        "toolu_rm",
        "Bash",
        json!({"command": "rm -rf doomed"}),
    ));
    h.server.push(Reply::text("I could not delete it."));
    let mut args = vec!["-p", "delete doomed"];
    args.extend_from_slice(extra);
    let output = h.command().args(&args).output().unwrap();
    (h, output)
}

fn refusal_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|line| line.starts_with("refused:"))
        .collect()
}

#[test]
fn a_refusal_in_text_is_one_line_on_stderr_naming_the_call_and_how_to_allow_it() {
    let (h, output) = refused_run(&[]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "I could not delete it.\n");
    let lines = refusal_lines(&stderr);
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with("refused: Bash(rm -rf doomed): "),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains("To allow it"), "{}", lines[0]);
    assert!(h.path("doomed").is_dir(), "nothing was deleted");
}

#[test]
fn verbose_says_a_refusal_once() {
    let (_h, output) = refused_run(&["--verbose"]);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(refusal_lines(&stderr).len(), 1, "{stderr}");
    assert!(
        !stderr.contains("tool Bash failed"),
        "the refusal is not said again as a failure: {stderr}"
    );
}

#[test]
fn in_json_the_refusal_is_in_the_result_not_on_stderr() {
    let (_h, output) = refused_run(&["--output-format", "json"]);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(refusal_lines(&stderr), Vec::<&str>::new(), "{stderr}");
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["permission_denials"][0]["tool_use_id"], "toolu_rm");
}
