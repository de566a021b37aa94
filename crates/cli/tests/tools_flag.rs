//! `--tools` through the real binary: it chooses which built-in tools the session offers
//! (`default` all of them, `""` none, else the names in any spelling); a call of one left out
//! is refused as unknown; a name that is no built-in tool stops the run naming the ones there
//! are.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::process::{Output, Stdio};

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::json;

mod support;
use support::{Harness, tool_result};

fn run(harness: &Harness, tools: &str) -> Output {
    harness
        .command()
        .args(["-p", "look around", "--tools", tools])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn offered(harness: &Harness, request: usize) -> Vec<String> {
    harness.server.requests()[request].body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|tool| tool["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn named_tools_are_the_only_built_in_ones_offered_and_another_is_refused() {
    let harness = Harness::new();
    harness.server.push(Reply::tool_use(
        "toolu_1",
        "Bash",
        json!({"command": "touch made"}),
    ));
    harness.server.push(Reply::text("Done."));
    let output = run(&harness, "Read,grep");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(offered(&harness, 0), ["Read", "Grep"]);
    let (is_error, text) = tool_result(&harness.server.requests(), 1);
    assert!(is_error && text.contains("Bash"), "{text}");
    assert!(!harness.path("made").exists());
}

#[test]
fn an_empty_list_offers_no_tool_and_default_offers_them_all() {
    let harness = Harness::new();
    harness.server.push(Reply::text("None."));
    harness.server.push(Reply::text("All."));
    assert!(run(&harness, "").status.success());
    assert!(run(&harness, "default").status.success());
    assert_eq!(offered(&harness, 0), Vec::<String>::new());
    let all = offered(&harness, 1);
    assert!(
        all.iter().any(|name| name == "Agent") && all.iter().any(|name| name == "Bash"),
        "{all:?}"
    );
}

#[test]
fn a_name_that_is_no_built_in_tool_stops_the_run_naming_them() {
    let harness = Harness::new();
    let output = run(&harness, "Read,Teleport");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "--tools: there is no built-in tool \"Teleport\"; the built-in tools are Agent, Bash"
        ),
        "{stderr}"
    );
    assert!(harness.server.requests().is_empty());
}
