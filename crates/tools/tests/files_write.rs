//! `Write`: new files freely, existing files only after a fresh Read, always atomically.

mod files_support;

use cairn_tools::{Access, Concurrency, Destructiveness, Safety, ToolOutput};
use files_support::Project;
use pretty_assertions::assert_eq;
use serde_json::json;

async fn write(project: &Project, name: &str, content: &str) -> ToolOutput {
    project
        .call(
            "Write",
            json!({"file_path": project.arg(name), "content": content}),
        )
        .await
}

#[tokio::test]
async fn a_new_file_needs_no_read_and_gets_its_directories() {
    let project = Project::new();

    let output = write(&project, "src/deep/new.rs", "fn main() {}\n// end\n").await;

    let path = project.arg("src/deep/new.rs");
    assert_eq!(
        output,
        ToolOutput::text(format!("Created {path} (2 lines)."))
    );
    assert_eq!(project.text("src/deep/new.rs"), "fn main() {}\n// end\n");
    assert_eq!(
        files_support::entries(&project.path("src/deep")),
        vec!["new.rs".to_string()]
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_new_file_gets_the_usual_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let project = Project::new();
    // What any program creating a file gets: 0o666 less the umask.
    let usual = project.put("usual.txt", "x");

    write(&project, "new.txt", "x").await;

    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode();
    assert_eq!(mode(&project.path("new.txt")), mode(&usual));
}

#[tokio::test]
async fn an_existing_file_not_read_is_not_overwritten() {
    let project = Project::new();
    project.put("a.txt", "precious\n");

    let output = write(&project, "a.txt", "gone\n").await;

    let path = project.arg("a.txt");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "{path} has not been read in this session. Read it first, then change it."
        ))
    );
    assert_eq!(project.text("a.txt"), "precious\n");
}

#[tokio::test]
async fn an_existing_file_read_first_is_replaced() {
    let project = Project::new();
    project.put("a.txt", "old\n");
    project.read("a.txt").await;

    let output = write(&project, "a.txt", "new\ncontent").await;

    let path = project.arg("a.txt");
    assert_eq!(
        output,
        ToolOutput::text(format!("Updated {path} (2 lines)."))
    );
    assert_eq!(project.text("a.txt"), "new\ncontent");
    assert_eq!(project.entries(), vec!["a.txt".to_string()]);
}

#[tokio::test]
async fn a_file_changed_since_it_was_read_is_not_overwritten() {
    let project = Project::new();
    project.put("a.txt", "old\n");
    project.read("a.txt").await;
    project.put("a.txt", "the user's newer text\n");

    let output = write(&project, "a.txt", "mine\n").await;

    let path = project.arg("a.txt");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "{path} has changed on disk since it was last read (by the user, a formatter or \
             another tool). Read it again before changing it."
        ))
    );
    assert_eq!(project.text("a.txt"), "the user's newer text\n");
}

#[cfg(unix)]
#[tokio::test]
async fn overwriting_keeps_the_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let project = Project::new();
    let path = project.put("run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    project.read("run.sh").await;

    write(&project, "run.sh", "#!/bin/sh\necho hi\n").await;

    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o755);
}

#[tokio::test]
async fn a_file_just_written_can_be_edited_without_a_read() {
    let project = Project::new();
    write(&project, "a.txt", "draft\n").await;

    let output = project
        .call(
            "Edit",
            json!({"file_path": project.arg("a.txt"), "old_string": "draft", "new_string": "final"}),
        )
        .await;

    assert!(!output.is_error, "{output:?}");
    assert_eq!(project.text("a.txt"), "final\n");
}

#[tokio::test]
async fn a_directory_is_not_written() {
    let project = Project::new();
    std::fs::create_dir(project.path("sub")).unwrap();

    let output = write(&project, "sub", "x").await;

    let path = project.arg("sub");
    assert_eq!(
        output,
        ToolOutput::error(format!(
            "{path} is a directory; Write writes files. Give the path of a file."
        ))
    );
}

#[tokio::test]
async fn overwriting_is_destructive_and_creating_is_not() {
    let project = Project::new();
    project.put("exists.txt", "x");
    let safety = |name: &str| {
        project
            .prepare(
                "Write",
                json!({"file_path": project.arg(name), "content": ""}),
            )
            .safety
    };
    let writes = |destructive| Safety {
        access: Access::Writes,
        destructive,
        concurrency: Concurrency::Exclusive,
    };
    assert_eq!(safety("exists.txt"), writes(Destructiveness::Destructive));
    assert_eq!(safety("new.txt"), writes(Destructiveness::Harmless));
    // A relative path is judged where it leads from the project directory.
    let relative = |name: &str| {
        project
            .prepare("Write", json!({"file_path": name, "content": ""}))
            .safety
    };
    assert_eq!(relative("exists.txt"), writes(Destructiveness::Destructive));
    assert_eq!(relative("new.txt"), writes(Destructiveness::Harmless));
}
