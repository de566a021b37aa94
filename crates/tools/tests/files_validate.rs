//! The check the engine makes before it asks whether a file call may run: a call bound to fail
//! fails there, with the very result running it would give, and a call that can work passes
//! without anything being written.

#![allow(clippy::unwrap_used, reason = "a test should fail loudly")]

mod files_support;

use cairn_tools::ToolOutput;
use files_support::Project;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const NOTEBOOK: &str = include_str!("fixtures/files/analysis.ipynb");

/// Validates a call that must be refused, then runs it unvalidated: both give the same error
/// and neither changes a byte of the project. Returns the error's text.
async fn refused(project: &Project, tool: &str, input: Value) -> String {
    let before = snapshot(project);
    let validated = project.validate(tool, input.clone()).await;
    let Err(refusal) = validated else {
        panic!("{tool} {input} passed validation");
    };
    assert!(refusal.is_error, "{refusal:?}");
    assert_eq!(snapshot(project), before, "validation changed the project");
    let ran = project.call(tool, input).await;
    assert_eq!(ran, refusal, "running the call fails the same way");
    assert_eq!(
        snapshot(project),
        before,
        "the refused call changed the project"
    );
    refusal.content.text()
}

/// Validates a call that can work: it passes, and nothing is written.
async fn passes(project: &Project, tool: &str, input: Value) {
    let before = snapshot(project);
    assert_eq!(project.validate(tool, input).await, Ok(()));
    assert_eq!(snapshot(project), before, "validation changed the project");
}

/// Every file under the project, with its bytes.
fn snapshot(project: &Project) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut dirs = vec![project.dir.path().to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files.push((path.display().to_string(), Vec::new()));
                dirs.push(path);
            } else {
                files.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

fn edit(project: &Project, name: &str, old: &str, new: &str) -> Value {
    json!({"file_path": project.arg(name), "old_string": old, "new_string": new})
}

#[tokio::test]
async fn an_edit_whose_old_string_is_not_unique_is_refused_before_it_runs() {
    let project = Project::new();
    project.put("README.md", "# Title\n- item\n- item\n- item\n");
    project.read("README.md").await;

    let text = refused(
        &project,
        "Edit",
        edit(&project, "README.md", "- item", "- x"),
    )
    .await;

    assert_eq!(
        text,
        format!(
            "Found 3 matches of old_string in {} (at lines 2, 3, 4), but replace_all is not set. \
             Add surrounding lines to old_string so that it matches exactly one place, or set \
             replace_all to true to replace every match.",
            project.arg("README.md")
        )
    );
    let mut all = edit(&project, "README.md", "- item", "- x");
    all["replace_all"] = json!(true);
    passes(&project, "Edit", all).await;
}

#[tokio::test]
async fn edits_that_cannot_work_are_refused_as_running_them_would_be() {
    let project = Project::new();
    project.put("a.txt", "alpha\nbeta\n");
    project.put("unread.txt", "alpha\n");
    project.put("changed.txt", "alpha\n");
    project.read("a.txt").await;
    project.read("changed.txt").await;
    project.put("changed.txt", "alpha, changed by someone else\n");
    std::fs::create_dir(project.path("dir")).unwrap();

    let not_found = refused(&project, "Edit", edit(&project, "a.txt", "gamma", "x")).await;
    assert!(
        not_found.starts_with(&format!(
            "old_string was not found in {}.",
            project.arg("a.txt")
        )),
        "{not_found}"
    );
    let identical = refused(&project, "Edit", edit(&project, "a.txt", "beta", "beta")).await;
    assert!(identical.starts_with("old_string and new_string are identical"));
    assert_eq!(
        refused(&project, "Edit", edit(&project, "unread.txt", "alpha", "x")).await,
        format!(
            "{} has not been read in this session. Read it first, then change it.",
            project.arg("unread.txt")
        )
    );
    assert_eq!(
        refused(
            &project,
            "Edit",
            edit(&project, "changed.txt", "alpha", "x")
        )
        .await,
        format!(
            "{} has changed on disk since it was last read (by the user, a formatter or another \
             tool). Read it again before changing it.",
            project.arg("changed.txt")
        )
    );
    assert_eq!(
        refused(
            &project,
            "Edit",
            edit(&project, "missing.txt", "alpha", "x")
        )
        .await,
        format!(
            "File does not exist: {}. To create a file, use Write, or Edit with an empty \
             old_string.",
            project.arg("missing.txt")
        )
    );
    assert_eq!(
        refused(&project, "Edit", edit(&project, "dir", "alpha", "x")).await,
        format!("{} is a directory, not a file.", project.arg("dir"))
    );
    let nonempty = refused(&project, "Edit", edit(&project, "a.txt", "", "x")).await;
    assert!(
        nonempty.starts_with("old_string is empty, but"),
        "{nonempty}"
    );

    passes(&project, "Edit", edit(&project, "a.txt", "beta", "gamma")).await;
    // Creating a file: valid, and neither the file nor its directory is made by the check.
    passes(&project, "Edit", edit(&project, "new/b.txt", "", "hello\n")).await;
}

#[tokio::test]
async fn a_multi_edit_is_refused_when_any_of_its_edits_would_fail() {
    let project = Project::new();
    project.put("a.txt", "one\ntwo\n");
    project.read("a.txt").await;
    let path = project.arg("a.txt");
    let edits = |second_old: &str| {
        json!({"file_path": path, "edits": [
            {"old_string": "one", "new_string": "uno"},
            {"old_string": second_old, "new_string": "dos"},
        ]})
    };

    let text = refused(&project, "MultiEdit", edits("three")).await;
    assert!(
        text.starts_with(&format!(
            "Edit 2 of 2 failed, so no edit was made and {path} is unchanged."
        )),
        "{text}"
    );
    assert_eq!(
        refused(
            &project,
            "MultiEdit",
            json!({"file_path": path, "edits": []})
        )
        .await,
        "MultiEdit needs at least one edit in `edits`."
    );
    // The second edit sees the text the first left.
    passes(&project, "MultiEdit", edits("two")).await;
}

#[tokio::test]
async fn a_write_over_a_file_not_read_or_changed_since_is_refused_and_a_new_file_passes() {
    let project = Project::new();
    project.put("unread.txt", "old\n");
    std::fs::create_dir(project.path("dir")).unwrap();
    let write = |name: &str| json!({"file_path": project.arg(name), "content": "new\n"});

    assert_eq!(
        refused(&project, "Write", write("unread.txt")).await,
        format!(
            "{} has not been read in this session. Read it first, then change it.",
            project.arg("unread.txt")
        )
    );
    assert_eq!(
        refused(&project, "Write", write("dir")).await,
        format!(
            "{} is a directory; Write writes files. Give the path of a file.",
            project.arg("dir")
        )
    );
    passes(&project, "Write", write("deep/new/file.txt")).await;
    project.read("unread.txt").await;
    passes(&project, "Write", write("unread.txt")).await;
}

#[tokio::test]
async fn a_notebook_edit_of_a_cell_that_is_not_there_is_refused() {
    let project = Project::new();
    project.put("analysis.ipynb", NOTEBOOK);
    let path = project.arg("analysis.ipynb");
    let replace =
        |cell: &str| json!({"notebook_path": path, "cell_id": cell, "new_source": "x = 1"});

    let unread = refused(&project, "NotebookEdit", replace("load")).await;
    assert!(
        unread.contains("has not been read in this session"),
        "{unread}"
    );
    project.read("analysis.ipynb").await;
    let missing = refused(&project, "NotebookEdit", replace("nope")).await;
    assert!(
        missing.starts_with("No cell has the id \"nope\"."),
        "{missing}"
    );
    let no_type = refused(
        &project,
        "NotebookEdit",
        json!({"notebook_path": path, "new_source": "x", "edit_mode": "insert"}),
    )
    .await;
    assert_eq!(
        no_type,
        "cell_type is required to insert a cell: \"code\" or \"markdown\"."
    );
    passes(&project, "NotebookEdit", replace("load")).await;
}

#[tokio::test]
async fn a_read_of_a_missing_file_or_a_directory_is_refused() {
    let project = Project::new();
    project.put("here.txt", "hello\n");
    std::fs::create_dir(project.path("dir")).unwrap();
    let read = |name: &str| json!({"file_path": project.arg(name)});

    assert_eq!(
        refused(&project, "Read", read("gone.txt")).await,
        format!("File does not exist: {}", project.arg("gone.txt"))
    );
    assert_eq!(
        refused(&project, "Read", read("dir")).await,
        format!(
            "{} is a directory, not a file. Use LS to list a directory.",
            project.arg("dir")
        )
    );
    passes(&project, "Read", read("here.txt")).await;
}

#[tokio::test]
async fn a_valid_edit_still_runs_after_validation() {
    let project = Project::new();
    project.put("a.txt", "alpha\n");
    project.read("a.txt").await;
    let input = edit(&project, "a.txt", "alpha", "beta");

    passes(&project, "Edit", input.clone()).await;
    let output: ToolOutput = project.call("Edit", input).await;

    assert!(!output.is_error, "{output:?}");
    assert_eq!(project.text("a.txt"), "beta\n");
}
