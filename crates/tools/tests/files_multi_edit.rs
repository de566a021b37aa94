//! `MultiEdit`: replacements applied in order, in memory, all or nothing.

mod files_support;

use cairn_tools::ToolOutput;
use files_support::Project;
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test]
async fn edits_apply_in_order_each_to_the_result_of_the_last() {
    let project = Project::new();
    project.put(
        "a.py",
        "def area(w, h):\n    return w * h\n\nprint(area(2, 3))\n",
    );
    project.read("a.py").await;

    let output = project
        .call(
            "MultiEdit",
            json!({"file_path": project.arg("a.py"), "edits": [
                {"old_string": "area", "new_string": "surface", "replace_all": true},
                // Sees the text the first edit left.
                {"old_string": "def surface(w, h):", "new_string": "def surface(w: int, h: int) -> int:"},
                {"old_string": "print(surface(2, 3))", "new_string": "print(surface(4, 5))"}
            ]}),
        )
        .await;

    let path = project.arg("a.py");
    assert_eq!(
        output,
        ToolOutput::text(format!(
            "Applied 3 edits to {path} (4 replacements). The changed lines, numbered as in the \
             file now:\n     1\tdef surface(w: int, h: int) -> int:\n     2\t    return w * h\n\
             \x20    3\t\n     4\tprint(surface(4, 5))\n"
        ))
    );
    assert_eq!(
        project.text("a.py"),
        "def surface(w: int, h: int) -> int:\n    return w * h\n\nprint(surface(4, 5))\n"
    );
}

#[tokio::test]
async fn a_failing_edit_leaves_the_file_byte_identical() {
    let project = Project::new();
    let original = b"\xef\xbb\xbfkeep\r\nthis\r\nfile\r\n".to_vec();
    project.put("a.txt", &original);
    project.read("a.txt").await;

    let output = project
        .call(
            "MultiEdit",
            json!({"file_path": project.arg("a.txt"), "edits": [
                {"old_string": "keep", "new_string": "KEEP"},
                {"old_string": "this\nfile", "new_string": "THIS\nFILE"},
                {"old_string": "not there", "new_string": "x"}
            ]}),
        )
        .await;

    let path = project.arg("a.txt");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "Edit 3 of 3 failed, so no edit was made and {path} is unchanged. (Edits apply in \
             order, each to the text the ones before it left.)\nold_string was not found in \
             {path}. Nothing in the file is close to it. Read the file again to see its current \
             content, then copy old_string exactly, whitespace included."
        ))
    );
    assert_eq!(project.bytes("a.txt"), original);
    assert_eq!(project.entries(), vec!["a.txt".to_string()]);
}

#[tokio::test]
async fn an_ambiguous_edit_is_named_by_its_number() {
    let project = Project::new();
    project.put("a.txt", "x\nx\n");
    project.read("a.txt").await;

    let output = project
        .call(
            "MultiEdit",
            json!({"file_path": project.arg("a.txt"), "edits": [
                {"old_string": "x", "new_string": "y", "replace_all": false}
            ]}),
        )
        .await;

    let path = project.arg("a.txt");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "Edit 1 of 1 failed, so no edit was made and {path} is unchanged. (Edits apply in \
             order, each to the text the ones before it left.)\nFound 2 matches of old_string \
             in {path} (at lines 1, 2), but replace_all is not set. Add surrounding lines to \
             old_string so that it matches exactly one place, or set replace_all to true to \
             replace every match."
        ))
    );
}

#[tokio::test]
async fn a_first_edit_with_an_empty_old_string_creates_the_file() {
    let project = Project::new();

    let output = project
        .call(
            "MultiEdit",
            json!({"file_path": project.arg("new.txt"), "edits": [
                {"old_string": "", "new_string": "alpha\nbeta\n"},
                {"old_string": "beta", "new_string": "gamma"}
            ]}),
        )
        .await;

    let path = project.arg("new.txt");
    assert_eq!(
        output,
        ToolOutput::text(format!("Created {path} (2 lines)."))
    );
    assert_eq!(project.text("new.txt"), "alpha\ngamma\n");
}

#[tokio::test]
async fn an_empty_edit_list_is_refused_before_running() {
    let project = Project::new();
    project.put("a.txt", "x\n");
    project.read("a.txt").await;

    let output = project
        .call(
            "MultiEdit",
            json!({"file_path": project.arg("a.txt"), "edits": []}),
        )
        .await;

    assert_eq!(
        output,
        ToolOutput::error("MultiEdit needs at least one edit in `edits`.")
    );
    assert_eq!(project.text("a.txt"), "x\n");
}
