//! Slash commands in `cairn -p`, resolved by the table every face parses with: a report is
//! answered in plain text without a request, an interactive-only or unknown command is an
//! error naming it, a path is a message, and none of them is ever sent to the model.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::Value;

mod support;
use support::Harness;

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(h: &Harness, args: &[&str]) -> Run {
    let output = h.command().args(args).output().unwrap();
    Run {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

#[test]
fn reports_are_answered_without_a_request() {
    let h = Harness::new();
    let commands = h.path(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("greet.md"),
        "---\ndescription: say hello\n---\nSay hello.",
    )
    .unwrap();
    for (line, expected) in [
        (
            "/cost",
            vec!["Total cost: $0.0000", "Tokens: 0 input, 0 output"],
        ),
        ("/help", vec!["/compact", "/greet", "say hello", "/status"]),
        (
            "/status",
            vec![
                "Model: claude-sonnet-4-5",
                "Permission mode: default",
                "Session: ",
            ],
        ),
        (
            "/context",
            vec![
                "System prompt (static)",
                "Tool definitions",
                "Last request: none yet",
            ],
        ),
    ] {
        let run = run(&h, &["-p", line]);
        assert_eq!(run.code, Some(0), "{line}: {}", run.stderr);
        for text in expected {
            assert!(
                run.stdout.contains(text),
                "{line}: {text:?} in {}",
                run.stdout
            );
        }
    }
    assert_eq!(h.server.requests().len(), 0, "no report asks the model");
}

#[test]
fn a_report_in_json_is_the_result_object() {
    let h = Harness::new();
    let run = run(&h, &["-p", "/cost", "--output-format", "json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let result: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["num_turns"], 0);
    assert!(
        result["result"]
            .as_str()
            .unwrap()
            .starts_with("Total cost: $0.0000"),
        "{result}"
    );
    assert_eq!(h.server.requests().len(), 0);
}

#[test]
fn interactive_only_and_unknown_commands_are_errors_that_name_them() {
    let h = Harness::new();
    for (line, said) in [
        ("/model opus", "/model works only in cairn's interactive UI"),
        ("/clear", "/clear works only in cairn's interactive UI"),
        ("/quit", "/quit works only in cairn's interactive UI"),
        ("/nope now", "Unknown command: /nope"),
    ] {
        let run = run(&h, &["-p", line]);
        assert_eq!(run.code, Some(1), "{line}: {}", run.stdout);
        assert!(run.stderr.contains(said), "{line}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{line}");
    }
    assert_eq!(h.server.requests().len(), 0, "nothing reached the model");
}

#[test]
fn a_line_whose_first_word_is_a_path_is_a_message() {
    let h = Harness::new();
    h.server.push(Reply::text("Look at its shebang."));
    let run = run(&h, &["-p", "/usr/bin/env is broken"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, "Look at its shebang.\n");
    let requests = h.server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        support::terminal::last_user_text(&requests[0].body),
        "/usr/bin/env is broken"
    );
}
