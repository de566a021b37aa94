//! Tests of the tool cells, in a file of their own to keep `tool_cell.rs` to the code.
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn call(name: &str, input: Value, text: &str, is_error: bool) -> ToolCall {
    ToolCall {
        id: "t1".into(),
        name: name.into(),
        input: Some(input),
        result: Some(ToolOutcome {
            text: text.into(),
            is_error,
        }),
        file_before: None,
        awaiting_approval: false,
        sub_agent: None,
    }
}

fn plain(call: &ToolCall, width: u16) -> Vec<String> {
    render_tool_call_with(
        call,
        width,
        &Theme::plain(),
        Some(Path::new("/repo")),
        Detail::Compact,
    )
    .iter()
    .map(|line| line.to_string())
    .collect()
}

fn full(call: &ToolCall, width: u16) -> Vec<String> {
    render_tool_call_with(
        call,
        width,
        &Theme::plain(),
        Some(Path::new("/repo")),
        Detail::Full,
    )
    .iter()
    .map(|line| line.to_string())
    .collect()
}

#[test]
fn full_detail_shows_the_whole_result() {
    let output: Vec<String> = (1..=12).map(|n| format!("line {n}")).collect();
    let bash = call("Bash", json!({"command": "seq"}), &output.join("\n"), false);
    let compact = plain(&bash, 40);
    assert_eq!(compact[1], "  ⎿ … +7 lines", "{compact:?}");
    let whole = full(&bash, 40);
    assert_eq!(whole.len(), 14, "{whole:?}");
    assert_eq!(whole[1], "  ⎿ $ seq", "the whole command first");
    assert_eq!(whole[2], "    line 1");
    assert_eq!(whole[13], "    line 12");

    let failed = call(
        "Grep",
        json!({"pattern": "("}),
        "Invalid regex `(`: regex parse error:\n    (\n    ^\nerror: unclosed group",
        true,
    );
    let whole = full(&failed, 60);
    assert_eq!(
        whole
            .iter()
            .filter(|line| line.contains("Invalid regex"))
            .count(),
        1,
        "an error is shown once: {whole:?}"
    );
    assert!(
        whole.iter().any(|line| line.contains("unclosed group")),
        "{whole:?}"
    );

    let read = call(
        "Read",
        json!({"file_path": "/repo/a.txt"}),
        "     1\talpha\n     2\tbeta\n",
        false,
    );
    assert_eq!(
        full(&read, 40),
        vec![
            "● Read(a.txt)",
            "  ⎿ Read 2 lines",
            "         1    alpha",
            "         2    beta"
        ]
    );

    let mcp = call(
        "mcp__notes__search",
        json!({"query": "milk"}),
        "one\ntwo",
        false,
    );
    let whole = full(&mcp, 60);
    assert!(whole[1].contains(r#"Input: {"query":"milk"}"#), "{whole:?}");
    assert!(whole.iter().any(|line| line.trim() == "two"), "{whole:?}");
}

#[test]
fn a_write_over_a_file_shows_what_it_removes() {
    let mut write = call(
        "Write",
        json!({"file_path": "/repo/sample.rs", "content": "overwritten\n"}),
        "The file /repo/sample.rs has been updated.",
        false,
    );
    write.file_before = Some("one\ntwo\nthree\n".into());
    let shown = plain(&write, 60);
    assert_eq!(
        shown[1],
        "  ⎿ Updated sample.rs with 1 addition and 3 removals"
    );
    assert!(shown.iter().any(|line| line.contains("- one")), "{shown:?}");
    write.file_before = None;
    assert_eq!(plain(&write, 60)[1], "  ⎿ Wrote 1 line to sample.rs");
}

#[test]
fn an_edit_of_part_of_an_indented_line_is_numbered_where_it_is() {
    let snippet = "     4\tfn main() {\n     5\t    let x = 10;\n     6\t    let y = 2;\n";
    assert_eq!(snippet_start_line(snippet, "let x = 10;"), Some(5));
    assert_eq!(snippet_start_line(snippet, "fn main() {"), Some(4));
    assert_eq!(snippet_start_line(snippet, "absent"), None);
}

#[test]
fn output_cut_in_the_middle_counts_what_was_cut() {
    let text = "1\n2\n\n[… output too long: 300 characters (94279 lines) cut from the middle …]\n\n99996\n99997\n99998\n99999\n100000";
    let bash = call("Bash", json!({"command": "seq 1 100000"}), text, false);
    let shown = plain(&bash, 80);
    assert_eq!(
        shown[1], "  ⎿ … +94281 lines (the model got the start and the end)",
        "{shown:?}"
    );
    assert_eq!(shown.last().unwrap(), "    100000");
}

#[test]
fn reading_an_image_says_so() {
    let read = call("Read", json!({"file_path": "/repo/shot.PNG"}), "", false);
    assert_eq!(plain(&read, 40)[1], "  ⎿ Read image (png)");
}

#[test]
fn read_counts_the_lines_it_returned() {
    let text = "     1\tfn main() {\n     2\t}\n";
    let read = call(
        "Read",
        json!({"file_path": "/repo/src/main.rs"}),
        text,
        false,
    );
    assert_eq!(
        plain(&read, 40),
        vec!["● Read(src/main.rs)", "  ⎿ Read 2 lines"]
    );
}

#[test]
fn a_failed_command_shows_its_exit_code_and_output_tail() {
    let text = "Exit code 2\nerror: one\nerror: two";
    let bash = call("Bash", json!({"command": "make"}), text, true);
    assert_eq!(
        plain(&bash, 40),
        vec![
            "● Bash(make)",
            "  ⎿ Exit code 2",
            "    error: one",
            "    error: two"
        ]
    );
}

#[test]
fn grep_sums_up_by_mode() {
    assert_eq!(grep_summary("a.rs\nb.rs\nc.rs", ""), "Found 3 files");
    assert_eq!(
        grep_summary("a.rs:1:x\na.rs-2-y\n--\nb.rs:9:x\na.rs:5:x", "content"),
        "3 matches in 2 files"
    );
    assert_eq!(
        grep_summary("a.rs:2\nb.rs:1", "count"),
        "3 matches in 2 files"
    );
    assert_eq!(grep_summary("No matches found", ""), "No matches");
}

#[test]
fn an_edit_numbers_its_diff_from_the_returned_snippet() {
    let edit = call(
        "Edit",
        json!({"file_path": "/repo/a.rs", "old_string": "let x = 1;", "new_string": "let x = 2;"}),
        "The file a.rs has been updated:\n    41\tlet x = 2;\n    42\t}",
        false,
    );
    assert_eq!(
        plain(&edit, 60),
        vec![
            "● Edit(a.rs)",
            "  ⎿ Updated a.rs with 1 addition and 1 removal",
            "    41 - let x = 1;",
            "    41 + let x = 2;"
        ]
    );
}

#[test]
fn mcp_tools_show_server_and_tool() {
    let mcp = call(
        "mcp__github__get_issue",
        json!({"repo": "a/b"}),
        "{}",
        false,
    );
    assert_eq!(plain(&mcp, 40)[0], "● github:get_issue(a/b)");
}

#[test]
fn a_multi_line_argument_is_joined_in_the_title_not_glued() {
    let task = call(
        "mcp__tracker__update",
        json!({"summary": "Bump the port to 20002.\n\n  Update the docs"}),
        "done",
        false,
    );
    assert_eq!(
        plain(&task, 80)[0],
        "● tracker:update(Bump the port to 20002. ⏎ Update the docs)"
    );
}

#[test]
fn a_web_call_that_has_not_answered_says_what_it_looks_for() {
    let running = |name: &str, input: Value| {
        let mut call = call(name, input, "", false);
        call.result = None;
        plain(&call, 60).pop().unwrap()
    };
    assert_eq!(
        running("WebSearch", json!({"query": "rust\nrelease"})),
        "  ⎿ Searching: rust ⏎ release…"
    );
    assert_eq!(
        running(
            "WebFetch",
            json!({"url": "https://example.com/", "prompt": "?"})
        ),
        "  ⎿ Fetching: https://example.com/…"
    );
    assert_eq!(
        running("Read", json!({"file_path": "/repo/a"})),
        "  ⎿ Running…"
    );
}
