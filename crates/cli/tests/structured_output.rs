//! `--json-schema` through the real binary: the model hands its answer over through a
//! `StructuredOutput` tool whose input schema is the given one; a value that does not fit is
//! refused naming what is wrong and the model tries again; an answer without the tool is sent
//! back; the run ends with the value in `structured_output` (and as JSON text in `result`),
//! or, after too many failed attempts, with `error_max_structured_output_retries`. A schema
//! that is not one stops the run before any request.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::process::{Output, Stdio};

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{Harness, tool_result};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"count": {"type": "integer"}, "files": {"type": "array", "items": {"type": "string"}}},
        "required": ["count", "files"]
    })
}

fn run(harness: &Harness, schema: &str) -> Output {
    harness
        .command()
        .args([
            "-p",
            "How many Rust files are there?",
            "--output-format",
            "json",
            "--json-schema",
            schema,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn result(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "{err}: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn structured(id: &str, input: Value) -> Reply {
    Reply::tool_use(id, "StructuredOutput", input)
}

#[test]
fn a_value_that_does_not_fit_is_refused_and_the_one_that_fits_is_the_result() {
    let harness = Harness::new();
    harness
        .server
        .push(structured("toolu_1", json!({"count": "two", "files": []})));
    harness.server.push(structured(
        "toolu_2",
        json!({"count": 2, "files": ["a.rs", "b.rs"]}),
    ));
    let output = run(&harness, &schema().to_string());
    let line = result(&output);
    assert!(output.status.success(), "{line}");
    assert_eq!(
        (
            &line["subtype"],
            &line["is_error"],
            &line["structured_output"]
        ),
        (
            &json!("success"),
            &json!(false),
            &json!({"count": 2, "files": ["a.rs", "b.rs"]})
        )
    );
    let text: Value = serde_json::from_str(line["result"].as_str().unwrap()).unwrap();
    assert_eq!(text, json!({"count": 2, "files": ["a.rs", "b.rs"]}));

    let requests = harness.server.requests();
    // The value handed over ends the turn: no request after it.
    assert_eq!(requests.len(), 2);
    let tool = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "StructuredOutput")
        .expect("StructuredOutput is offered")
        .clone();
    assert_eq!(tool["input_schema"], schema());
    let (is_error, text) = tool_result(&requests, 1);
    assert!(is_error, "{text}");
    assert!(text.contains("at /count:"), "{text}");
}

#[test]
fn an_answer_without_the_tool_is_sent_back_and_a_schema_that_is_not_an_object_is_wrapped() {
    let harness = Harness::new();
    harness.server.push(Reply::text("There are two."));
    harness
        .server
        .push(structured("toolu_1", json!({"output": ["a.rs", "b.rs"]})));
    let output = run(
        &harness,
        r#"{"type": "array", "items": {"type": "string"}}"#,
    );
    let line = result(&output);
    assert_eq!(line["structured_output"], json!(["a.rs", "b.rs"]), "{line}");
    let requests = harness.server.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(
        last.contains("You have not given your final answer through the StructuredOutput tool"),
        "{last}"
    );
}

#[test]
fn five_failed_attempts_end_the_run_with_the_retries_subtype() {
    let harness = Harness::new();
    for n in 0..5 {
        harness
            .server
            .push(structured(&format!("toolu_{n}"), json!({"count": -1.5})));
    }
    let output = run(&harness, &schema().to_string());
    let line = result(&output);
    assert!(!output.status.success(), "{line}");
    assert_eq!(
        (
            &line["subtype"],
            &line["is_error"],
            &line["structured_output"]
        ),
        (
            &json!("error_max_structured_output_retries"),
            &json!(true),
            &Value::Null
        )
    );
    assert_eq!(harness.server.requests().len(), 5);
}

#[test]
fn a_schema_that_is_not_one_stops_the_run_before_any_request() {
    let harness = Harness::new();
    for (schema, says) in [
        ("{not json", "--json-schema: not JSON"),
        (r#"{"type": 12}"#, "--json-schema: not a valid JSON Schema"),
    ] {
        let output = run(&harness, schema);
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{stderr}");
    }
    assert!(harness.server.requests().is_empty());
}
