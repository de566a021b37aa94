//! `Edit` on real files: exact replacements, the file's conventions kept, and refusals that
//! say what to do.

mod files_support;

use cairn_tools::{Access, Concurrency, Destructiveness, Safety, ToolOutput};
use files_support::Project;
use pretty_assertions::assert_eq;
use serde_json::json;

async fn edit(project: &Project, name: &str, old: &str, new: &str) -> ToolOutput {
    project
        .call(
            "Edit",
            json!({"file_path": project.arg(name), "old_string": old, "new_string": new}),
        )
        .await
}

#[tokio::test]
async fn a_unique_match_is_replaced_and_the_changed_lines_are_shown() {
    let project = Project::new();
    let text: String = (1..=12).map(|n| format!("line {n}\n")).collect();
    project.put("a.txt", &text);
    project.read("a.txt").await;

    let output = edit(
        &project,
        "a.txt",
        "line 6\nline 7\n",
        "six\nseven\nseven and a half\n",
    )
    .await;

    let path = project.arg("a.txt");
    assert_eq!(
        output,
        ToolOutput::text(format!(
            "Edited {path} (1 replacement). The changed lines, numbered as in the file now:\n\
             \x20    3\tline 3\n     4\tline 4\n     5\tline 5\n     6\tsix\n     7\tseven\n\
             \x20    8\tseven and a half\n     9\tline 8\n    10\tline 9\n    11\tline 10\n"
        ))
    );
    let expected: String = text.replace("line 6\nline 7\n", "six\nseven\nseven and a half\n");
    assert_eq!(project.text("a.txt"), expected);
}

#[tokio::test]
async fn crlf_line_endings_survive_byte_for_byte() {
    let project = Project::new();
    project.put("win.txt", "one\r\ntwo\r\nthree\r\n");
    project.read("win.txt").await;

    // The model saw the lines without `\r` and writes plain `\n`.
    let output = edit(&project, "win.txt", "one\ntwo", "uno\ndos\nextra").await;

    assert!(!output.is_error, "{output:?}");
    assert_eq!(
        project.bytes("win.txt"),
        b"uno\r\ndos\r\nextra\r\nthree\r\n".to_vec()
    );
}

#[tokio::test]
async fn a_byte_order_mark_and_crlf_together_survive() {
    let project = Project::new();
    project.put("bom.txt", b"\xef\xbb\xbfalpha\r\nbeta\r\n");
    project.read("bom.txt").await;

    let output = edit(&project, "bom.txt", "alpha", "ALPHA").await;

    assert!(!output.is_error, "{output:?}");
    assert_eq!(
        project.bytes("bom.txt"),
        b"\xef\xbb\xbfALPHA\r\nbeta\r\n".to_vec()
    );
}

#[tokio::test]
async fn multi_byte_characters_around_the_edit_are_kept() {
    let project = Project::new();
    project.put("u.txt", "naïve café 日本語 🎉 fin\nñ\n");
    project.read("u.txt").await;

    let output = edit(&project, "u.txt", "café 日本語", "coffee ☕ 中文").await;

    let path = project.arg("u.txt");
    assert_eq!(
        output,
        ToolOutput::text(format!(
            "Edited {path} (1 replacement). The changed lines, numbered as in the file now:\n\
             \x20    1\tnaïve coffee ☕ 中文 🎉 fin\n     2\tñ\n"
        ))
    );
    assert_eq!(project.text("u.txt"), "naïve coffee ☕ 中文 🎉 fin\nñ\n");
}

#[tokio::test]
async fn no_match_and_nothing_close_says_so() {
    let project = Project::new();
    project.put("a.txt", "alpha\nbeta\n");
    project.read("a.txt").await;

    let output = edit(&project, "a.txt", "completely different", "x").await;

    let path = project.arg("a.txt");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "old_string was not found in {path}. Nothing in the file is close to it. Read the \
             file again to see its current content, then copy old_string exactly, whitespace \
             included."
        ))
    );
    assert_eq!(project.text("a.txt"), "alpha\nbeta\n");
}

#[tokio::test]
async fn no_match_shows_the_text_that_differs_only_in_whitespace() {
    let project = Project::new();
    project.put("m.rs", "fn main() {\n\tlet x = 1;\n\tlet y = 2;\n}\n");
    project.read("m.rs").await;

    let output = edit(
        &project,
        "m.rs",
        "    let x = 1;\n    let y = 2;",
        "let z = 3;",
    )
    .await;

    let path = project.arg("m.rs");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "old_string was not found in {path}. The text at lines 2-3 matches it except for \
             whitespace (indentation, tabs or line breaks):\n     2\t\tlet x = 1;\n     3\t\tlet y = 2;\n\
             Copy old_string exactly from the file, with the whitespace it has there (what \
             follows the line-number prefix), or Read the file again."
        ))
    );
}

#[tokio::test]
async fn no_match_shows_the_most_similar_line() {
    let project = Project::new();
    project.put("p.py", "import os\ntotal = price * count\nprint(total)\n");
    project.read("p.py").await;

    let output = edit(&project, "p.py", "total = price * amount", "total = 0").await;

    let path = project.arg("p.py");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "old_string was not found in {path}. The most similar text is at line 2 (88% \
             similar by character pairs):\n     2\ttotal = price * count\n\
             Copy old_string exactly from the file, with the whitespace it has there (what \
             follows the line-number prefix), or Read the file again."
        ))
    );
}

#[tokio::test]
async fn several_matches_are_refused_with_their_lines() {
    let project = Project::new();
    project.put("a.txt", "x = 1\ny = 2\nx = 1\nx = 1\n");
    project.read("a.txt").await;

    let output = edit(&project, "a.txt", "x = 1", "x = 9").await;

    let path = project.arg("a.txt");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "Found 3 matches of old_string in {path} (at lines 1, 3, 4), but replace_all is not \
             set. Add surrounding lines to old_string so that it matches exactly one place, or \
             set replace_all to true to replace every match."
        ))
    );
    assert_eq!(project.text("a.txt"), "x = 1\ny = 2\nx = 1\nx = 1\n");
}

#[tokio::test]
async fn replace_all_replaces_every_match() {
    let project = Project::new();
    let mut text: String = (1..=20).map(|n| format!("filler {n}\n")).collect();
    text.insert_str(0, "old_name()\n");
    text.push_str("old_name()\n");
    project.put("a.txt", &text);
    project.read("a.txt").await;

    let output = project
        .call(
            "Edit",
            json!({"file_path": project.arg("a.txt"), "old_string": "old_name",
                   "new_string": "new_name", "replace_all": true}),
        )
        .await;

    let path = project.arg("a.txt");
    assert_eq!(
        output,
        ToolOutput::text(format!(
            "Edited {path} (2 replacements). The changed lines, numbered as in the file now:\n\
             \x20    1\tnew_name()\n     2\tfiller 1\n     3\tfiller 2\n     4\tfiller 3\n...\n\
             \x20   19\tfiller 18\n    20\tfiller 19\n    21\tfiller 20\n    22\tnew_name()\n"
        ))
    );
    assert_eq!(project.text("a.txt"), text.replace("old_name", "new_name"));
}

#[tokio::test]
async fn identical_strings_are_refused() {
    let project = Project::new();
    project.put("a.txt", "same\n");
    project.read("a.txt").await;

    let output = edit(&project, "a.txt", "same", "same").await;

    assert_eq!(
        output,
        ToolOutput::error(
            "old_string and new_string are identical, so the edit would change nothing. Put the \
             replacement text in new_string."
        )
    );
}

#[tokio::test]
async fn a_file_not_read_in_this_session_is_refused() {
    let project = Project::new();
    project.put("a.txt", "content\n");

    let output = edit(&project, "a.txt", "content", "changed").await;

    let path = project.arg("a.txt");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "{path} has not been read in this session. Read it first, then change it."
        ))
    );
    assert_eq!(project.text("a.txt"), "content\n");
}

#[tokio::test]
async fn a_file_changed_on_disk_since_it_was_read_is_refused() {
    let project = Project::new();
    project.put("a.txt", "content\n");
    project.read("a.txt").await;
    project.put("a.txt", "content changed by the user\n");

    let output = edit(&project, "a.txt", "content", "changed").await;

    let path = project.arg("a.txt");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "{path} has changed on disk since it was last read (by the user, a formatter or \
             another tool). Read it again before changing it."
        ))
    );
    assert_eq!(project.text("a.txt"), "content changed by the user\n");
}

#[tokio::test]
async fn consecutive_edits_need_no_new_read() {
    let project = Project::new();
    project.put("a.txt", "one two\n");
    project.read("a.txt").await;

    assert!(!edit(&project, "a.txt", "one", "1").await.is_error);
    let second = edit(&project, "a.txt", "two", "2").await;

    assert!(!second.is_error, "{second:?}");
    assert_eq!(project.text("a.txt"), "1 2\n");
}

#[cfg(unix)]
#[tokio::test]
async fn permissions_are_kept() {
    use std::os::unix::fs::PermissionsExt;
    let project = Project::new();
    let path = project.put("run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    project.read("run.sh").await;

    let output = edit(&project, "run.sh", "echo hi", "echo bye").await;

    assert!(!output.is_error, "{output:?}");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o755);
    assert_eq!(project.entries(), vec!["run.sh".to_string()]);
}

#[tokio::test]
async fn a_missing_final_newline_stays_missing() {
    let project = Project::new();
    project.put("a.txt", "a\nb");
    project.read("a.txt").await;

    let output = edit(&project, "a.txt", "b", "b\nc\n").await;

    assert!(!output.is_error, "{output:?}");
    assert_eq!(project.bytes("a.txt"), b"a\nb\nc".to_vec());
}

#[tokio::test]
async fn a_present_final_newline_stays_present() {
    let project = Project::new();
    project.put("a.txt", "a\r\nb\r\n");
    project.read("a.txt").await;

    let output = edit(&project, "a.txt", "b\n", "c").await;

    assert!(!output.is_error, "{output:?}");
    assert_eq!(project.bytes("a.txt"), b"a\r\nc\r\n".to_vec());
}

#[tokio::test]
async fn an_empty_old_string_creates_a_new_file() {
    let project = Project::new();

    let output = edit(&project, "new/dir/f.txt", "", "hello\nworld\n").await;

    let path = project.arg("new/dir/f.txt");
    assert_eq!(
        output,
        ToolOutput::text(format!("Created {path} (2 lines)."))
    );
    assert_eq!(project.text("new/dir/f.txt"), "hello\nworld\n");
}

#[tokio::test]
async fn an_empty_old_string_on_a_file_with_content_is_refused() {
    let project = Project::new();
    project.put("a.txt", "content\n");
    project.read("a.txt").await;

    let output = edit(&project, "a.txt", "", "more").await;

    let path = project.arg("a.txt");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "old_string is empty, but {path} already has content. An empty old_string only \
             creates a new file (or fills an empty one); to change this file, quote the exact \
             text to replace."
        ))
    );
}

#[tokio::test]
async fn a_missing_file_and_a_notebook_are_refused_with_directions() {
    let project = Project::new();
    let missing = edit(&project, "nope.txt", "a", "b").await;
    let path = project.arg("nope.txt");
    assert_eq!(
        missing,
        ToolOutput::error(format!(
            "File does not exist: {path}. To create a file, use Write, or Edit with an empty \
             old_string."
        ))
    );

    project.put("n.ipynb", "{}");
    let notebook = edit(&project, "n.ipynb", "a", "b").await;
    let path = project.arg("n.ipynb");
    assert_eq!(
        notebook,
        ToolOutput::error(format!(
            "{path} is a Jupyter notebook. Use NotebookEdit to change its cells."
        ))
    );
}

#[tokio::test]
async fn edit_writes_but_is_not_destructive() {
    let project = Project::new();
    let prepared = project.prepare(
        "Edit",
        json!({"file_path": "a.txt", "old_string": "a", "new_string": "b"}),
    );
    assert_eq!(
        prepared.safety,
        Safety {
            access: Access::Writes,
            destructive: Destructiveness::Harmless,
            concurrency: Concurrency::Exclusive,
        }
    );
    assert_eq!(prepared.paths, vec![project.path("a.txt")]);
}
