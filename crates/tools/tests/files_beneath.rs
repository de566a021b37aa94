//! Writing beneath a root (`cairn_tools::beneath`): every case under both walks, the kernel's
//! (`openat2`) and the per-component `O_NOFOLLOW` fallback, asserting the result and the disk;
//! then the file tools through the executor: a legitimate link works, a link swapped in after
//! the call was prepared fails the call and nothing lands where it leads.

#![allow(
    clippy::unwrap_used,
    reason = "test setup: a step that fails should fail the test at once"
)]

mod files_support;

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use cairn_tools::beneath::{BeneathError, JudgedPath, Walk, write_atomically};
use cairn_tools::{CallContext, ToolCall, ToolExecutor};
use files_support::{Project, entries};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const WALKS: [Walk; 2] = [Walk::Kernel, Walk::Components];

/// A workspace and, beside it, a directory outside it that must stay as it is.
struct Scene {
    _dir: tempfile::TempDir,
    workspace: PathBuf,
    outside: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let workspace = base.join("workspace");
        let outside = base.join("outside");
        fs::create_dir(&workspace).unwrap();
        fs::create_dir(&outside).unwrap();
        Scene {
            _dir: dir,
            workspace,
            outside,
        }
    }

    fn judged(&self, relative: &str) -> JudgedPath {
        JudgedPath::resolve(
            &self.workspace.join(relative),
            std::slice::from_ref(&self.workspace),
        )
    }
}

#[test]
fn replaces_and_creates_leaving_no_temporary_file() {
    for walk in WALKS {
        let scene = Scene::new();
        fs::write(scene.workspace.join("a.txt"), "old").unwrap();
        write_atomically(&scene.judged("a.txt"), b"new", walk).unwrap();
        write_atomically(&scene.judged("deep/er/b.txt"), b"made", walk).unwrap();
        assert_eq!(
            fs::read_to_string(scene.workspace.join("a.txt")).unwrap(),
            "new"
        );
        assert_eq!(
            fs::read_to_string(scene.workspace.join("deep/er/b.txt")).unwrap(),
            "made"
        );
        assert_eq!(entries(&scene.workspace), vec!["a.txt", "deep"], "{walk:?}");
        assert_eq!(entries(&scene.workspace.join("deep/er")), vec!["b.txt"]);
    }
}

#[test]
fn a_failed_write_changes_nothing_and_removes_the_temporary_file() {
    for walk in WALKS {
        let scene = Scene::new();
        let taken = scene.workspace.join("taken");
        fs::create_dir(&taken).unwrap();
        fs::write(taken.join("inside"), "kept").unwrap();
        let error = write_atomically(&scene.judged("taken"), b"new", walk).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::IsADirectory, "{walk:?}");
        assert_eq!(entries(&scene.workspace), vec!["taken"]);
        assert_eq!(fs::read_to_string(taken.join("inside")).unwrap(), "kept");
    }
}

#[test]
fn an_existing_file_keeps_its_permissions() {
    for walk in WALKS {
        let scene = Scene::new();
        let script = scene.workspace.join("run.sh");
        fs::write(&script, "old").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o750)).unwrap();
        write_atomically(&scene.judged("run.sh"), b"new", walk).unwrap();
        let mode = fs::metadata(&script).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o750, "{walk:?}");
    }
}

#[test]
fn links_resolved_before_the_check_are_followed_and_stay_links() {
    for walk in WALKS {
        let scene = Scene::new();
        fs::write(scene.workspace.join("AGENTS.md"), "old").unwrap();
        symlink("AGENTS.md", scene.workspace.join("CLAUDE.md")).unwrap();
        fs::create_dir(scene.workspace.join("lib")).unwrap();
        symlink("lib", scene.workspace.join("src")).unwrap();

        let through_file = scene.judged("CLAUDE.md");
        assert_eq!(through_file.path(), scene.workspace.join("AGENTS.md"));
        write_atomically(&through_file, b"new", walk).unwrap();
        // A link to a file not there yet: writing through it creates its target.
        symlink("DRAFT.md", scene.workspace.join("NOTES.md")).unwrap();
        let dangling = scene.judged("NOTES.md");
        assert_eq!(dangling.path(), scene.workspace.join("DRAFT.md"));
        write_atomically(&dangling, b"draft", walk).unwrap();
        assert_eq!(
            fs::read_to_string(scene.workspace.join("NOTES.md")).unwrap(),
            "draft"
        );
        let through_dir = scene.judged("src/main.rs");
        assert_eq!(through_dir.path(), scene.workspace.join("lib/main.rs"));
        write_atomically(&through_dir, b"fn main() {}", walk).unwrap();

        assert!(
            fs::symlink_metadata(scene.workspace.join("CLAUDE.md"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            fs::read_to_string(scene.workspace.join("AGENTS.md")).unwrap(),
            "new"
        );
        assert_eq!(
            fs::read_to_string(scene.workspace.join("lib/main.rs")).unwrap(),
            "fn main() {}"
        );
    }
}

/// One way a link can appear on an already-judged path: its name, the path as judged, and
/// the swap, made after the judgement.
type SwapCase = (&'static str, JudgedPath, Box<dyn Fn()>);

fn swaps(scene: &Scene) -> Vec<SwapCase> {
    let ws = scene.workspace.clone();
    let out = scene.outside.clone();
    vec![
        (
            "a directory replaced by a link out",
            {
                fs::create_dir(ws.join("dir")).unwrap();
                scene.judged("dir/.bashrc")
            },
            Box::new({
                let (ws, out) = (ws.clone(), out.clone());
                move || {
                    fs::remove_dir(ws.join("dir")).unwrap();
                    symlink(&out, ws.join("dir")).unwrap();
                }
            }),
        ),
        (
            "a missing directory created as a link out",
            scene.judged("new/deeper/.bashrc"),
            Box::new({
                let (ws, out) = (ws.clone(), out.clone());
                move || symlink(&out, ws.join("new")).unwrap()
            }),
        ),
        (
            "the file itself replaced by a link out",
            {
                fs::write(ws.join("notes.txt"), "mine").unwrap();
                scene.judged("notes.txt")
            },
            Box::new({
                let (ws, out) = (ws.clone(), out.clone());
                move || {
                    fs::write(out.join("target"), "theirs").unwrap();
                    fs::remove_file(ws.join("notes.txt")).unwrap();
                    symlink(out.join("target"), ws.join("notes.txt")).unwrap();
                }
            }),
        ),
        (
            "a link to a directory inside swapped for a link out",
            {
                fs::create_dir(ws.join("real")).unwrap();
                symlink("real", ws.join("alias")).unwrap();
                // Judged through the link: the real directory, `real/x`.
                let judged = scene.judged("alias/x");
                assert_eq!(judged.path(), ws.join("real/x"));
                judged
            },
            Box::new({
                let (ws, out) = (ws.clone(), out.clone());
                move || {
                    fs::remove_dir(ws.join("real")).unwrap();
                    symlink(&out, ws.join("real")).unwrap();
                }
            }),
        ),
    ]
}

#[test]
fn a_link_that_appears_after_the_check_fails_the_write_and_nothing_lands_outside() {
    for walk in WALKS {
        let scene = Scene::new();
        for (case, judged, swap) in swaps(&scene) {
            swap();
            let error = write_atomically(&judged, b"export EVIL=1", walk).unwrap_err();
            assert!(
                matches!(&error, BeneathError::LinkAppeared { path } if *path == judged.path()),
                "{case} ({walk:?}): {error:?}"
            );
            let message = error.to_string();
            assert!(
                message.contains(&judged.path().display().to_string())
                    && message.contains("Nothing was written"),
                "{case}: {message}"
            );
        }
        let outside: Vec<(String, String)> = entries(&scene.outside)
            .into_iter()
            .map(|name| {
                let text = fs::read_to_string(scene.outside.join(&name)).unwrap();
                (name, text)
            })
            .collect();
        assert_eq!(
            outside,
            vec![("target".to_string(), "theirs".to_string())],
            "{walk:?}"
        );
    }
}

#[test]
fn a_path_that_climbs_out_of_its_root_is_refused() {
    for walk in WALKS {
        let scene = Scene::new();
        let judged = scene.judged("missing/../../outside/x");
        let error = write_atomically(&judged, b"x", walk).unwrap_err();
        assert!(matches!(error, BeneathError::Escapes { .. }), "{error:?}");
        assert_eq!(entries(&scene.outside), Vec::<String>::new());
    }
}

#[test]
fn new_directories_in_a_private_directory_are_private() {
    for walk in WALKS {
        let scene = Scene::new();
        let memory = scene.workspace.join("memory");
        fs::create_dir(&memory).unwrap();
        fs::set_permissions(&memory, fs::Permissions::from_mode(0o700)).unwrap();
        let open = scene.workspace.join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o755)).unwrap();
        write_atomically(&scene.judged("memory/topic/sub/note.md"), b"x", walk).unwrap();
        write_atomically(&scene.judged("open/src/lib.rs"), b"x", walk).unwrap();
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&memory.join("topic")), 0o700, "{walk:?}");
        assert_eq!(mode(&memory.join("topic/sub")), 0o700, "{walk:?}");
        // Elsewhere a new directory is as open as the umask allows, as with mkdir.
        assert_ne!(mode(&open.join("src")) & 0o055, 0, "{walk:?}");
    }
}

#[tokio::test]
async fn the_file_tools_write_through_links_that_were_there_when_the_call_was_checked() {
    let project = Project::new();
    project.put("AGENTS.md", "old\n");
    symlink("AGENTS.md", project.path("CLAUDE.md")).unwrap();
    fs::create_dir(project.path("lib")).unwrap();
    symlink("lib", project.path("src")).unwrap();

    // Read through the link, then change the file through it: the same file.
    project.read("CLAUDE.md").await;
    let edit = project
        .call(
            "Edit",
            json!({"file_path": project.arg("CLAUDE.md"), "old_string": "old", "new_string": "new"}),
        )
        .await;
    assert!(!edit.is_error, "{edit:?}");
    let write = project
        .call(
            "Write",
            json!({"file_path": project.arg("src/new.rs"), "content": "pub fn f() {}\n"}),
        )
        .await;
    assert!(!write.is_error, "{write:?}");

    assert_eq!(project.text("AGENTS.md"), "new\n");
    assert!(
        fs::symlink_metadata(project.path("CLAUDE.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(project.text("lib/new.rs"), "pub fn f() {}\n");
}

#[test]
fn a_call_through_a_link_declares_the_path_as_written_and_where_it_leads() {
    let project = Project::new();
    fs::create_dir(project.path("lib")).unwrap();
    symlink("lib", project.path("src")).unwrap();
    for tool in ["Write", "Edit", "MultiEdit", "NotebookEdit"] {
        let (field, name) = match tool {
            "NotebookEdit" => ("notebook_path", "src/a.ipynb"),
            _ => ("file_path", "src/a.txt"),
        };
        let input = match tool {
            "Write" => json!({field: project.arg(name), "content": ""}),
            "MultiEdit" => json!({field: project.arg(name), "edits": []}),
            "NotebookEdit" => json!({field: project.arg(name), "new_source": ""}),
            _ => json!({field: project.arg(name), "old_string": "", "new_string": ""}),
        };
        let prepared = project.prepare(tool, input);
        let resolved = project.path(&name.replace("src/", "lib/"));
        assert_eq!(prepared.paths, vec![project.path(name), resolved], "{tool}");
    }
}

#[tokio::test]
async fn a_link_swapped_in_between_the_check_and_the_write_fails_the_call() {
    let outside = tempfile::tempdir().unwrap();
    for tool in ["Write", "Edit", "NotebookEdit"] {
        let project = Project::new();
        fs::create_dir(project.path("dir")).unwrap();
        let (field, name) = match tool {
            "NotebookEdit" => ("notebook_path", "dir/n.ipynb"),
            _ => ("file_path", "dir/.bashrc"),
        };
        let input = match tool {
            "Write" => json!({field: project.arg(name), "content": "export EVIL=1\n"}),
            "NotebookEdit" => json!({field: project.arg(name), "new_source": "x"}),
            _ => json!({field: project.arg(name), "old_string": "old", "new_string": "EVIL"}),
        };
        let notebook = r#"{"cells": [{"cell_type": "code", "source": "old", "metadata": {}, "outputs": [], "execution_count": null}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}"#;
        match tool {
            "Write" => {}
            "NotebookEdit" => {
                project.put(name, notebook);
                project.read(name).await;
            }
            _ => {
                project.put(name, "old\n");
                project.read(name).await;
            }
        }
        let call = ToolCall {
            id: "c".into(),
            name: tool.into(),
            input,
        };
        let prepared = project.registry.prepare(&call).unwrap();
        // Between the gate's check and the run, the directory becomes a link out.
        fs::rename(project.path("dir"), project.path("dir.away")).unwrap();
        symlink(outside.path(), project.path("dir")).unwrap();
        let output = project
            .registry
            .execute(&prepared, &CallContext::detached(CancellationToken::new()))
            .await;
        assert!(output.is_error, "{tool}: {output:?}");
        let text = output.content.text();
        assert!(
            text.contains(&project.arg(name)) && text.contains("symbolic link"),
            "{tool}: {text}"
        );
        assert_eq!(entries(outside.path()), Vec::<String>::new(), "{tool}");
        fs::remove_file(project.path("dir")).unwrap();
    }
}

#[tokio::test]
async fn write_makes_new_directories_in_cairns_own_state_private() {
    let home = tempfile::tempdir().unwrap();
    let cairn_home = home.path().join(".cairn");
    // cairn's home as an older version may have left it: open to others.
    fs::create_dir(&cairn_home).unwrap();
    fs::set_permissions(&cairn_home, fs::Permissions::from_mode(0o755)).unwrap();
    let memory = cairn_home.join("projects/p/memory");
    let mut context = cairn_tools::ToolContext::new(home.path().to_path_buf());
    context.private_dirs = vec![cairn_home.clone()];
    let mut registry = cairn_tools::ToolRegistry::new(context);
    registry.register(cairn_tools::WriteTool);
    let call = ToolCall {
        id: "m".into(),
        name: "Write".into(),
        input: json!({"file_path": memory.join("topics/tests.md"), "content": "use pnpm\n"}),
    };
    let prepared = registry.prepare(&call).unwrap();
    let output = registry
        .execute(&prepared, &CallContext::detached(CancellationToken::new()))
        .await;
    assert!(!output.is_error, "{output:?}");
    assert_eq!(
        fs::read_to_string(memory.join("topics/tests.md")).unwrap(),
        "use pnpm\n"
    );
    for dir in [
        "projects",
        "projects/p",
        "projects/p/memory",
        "projects/p/memory/topics",
    ] {
        let mode = fs::metadata(cairn_home.join(dir))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o700, "{dir}");
    }
}

/// The verdict the real gate gives a Write prepared by the tools, as the engine asks it.
fn gate_verdict(project: &Project, rules: &[&str], name: &str) -> cairn_policy::Verdict {
    use cairn_policy::rules::{RuleKind, RuleOrigin, RuleSet};
    let workspace = project.dir.path().to_path_buf();
    let (rules, errors) = RuleSet::new(rules.iter().map(|text| {
        (
            RuleKind::Deny,
            text.to_string(),
            RuleOrigin::new("test", workspace.clone()),
        )
    }));
    assert!(errors.is_empty(), "{errors:?}");
    let gate = cairn_policy::PermissionGate::new(
        cairn_policy::PermissionMode::AcceptEdits,
        rules,
        vec![workspace.clone()],
        workspace.clone(),
        workspace.join("home"),
    );
    let prepared = project.prepare(
        "Write",
        json!({"file_path": project.arg(name), "content": "x"}),
    );
    gate.check(&cairn_policy::CallInfo {
        tool: &prepared.name,
        input: &prepared.input,
        paths: &prepared.paths,
        read_only: false,
        destructive: false,
        asking: cairn_policy::Asking::NonInteractive,
    })
}

#[test]
fn the_gate_judges_both_the_name_as_written_and_where_it_leads() {
    use cairn_policy::Verdict;
    let outside = tempfile::tempdir().unwrap();
    let project = Project::new();
    project.put("AGENTS.md", "x");
    symlink("AGENTS.md", project.path("CLAUDE.md")).unwrap();
    fs::create_dir(project.path("lib")).unwrap();
    symlink("lib", project.path("src")).unwrap();
    symlink(outside.path().join(".bashrc"), project.path("rc")).unwrap();
    #[derive(Debug)]
    enum Expect {
        DeniedByRule,
        Allowed,
        NotAllowed,
    }
    let cases: [(&[&str], &str, Expect); 5] = [
        (&["Edit(CLAUDE.md)"], "CLAUDE.md", Expect::DeniedByRule),
        (&["Edit(AGENTS.md)"], "CLAUDE.md", Expect::DeniedByRule),
        (&["Edit(lib/**)"], "src/x.rs", Expect::DeniedByRule),
        (&[], "src/x.rs", Expect::Allowed),
        // A link out of the workspace is a write outside it: not allowed by acceptEdits.
        (&[], "rc", Expect::NotAllowed),
    ];
    for (rules, name, expected) in cases {
        let verdict = gate_verdict(&project, rules, name);
        let held = match expected {
            Expect::DeniedByRule => matches!(verdict, Verdict::Deny { rule: Some(_), .. }),
            Expect::Allowed => matches!(verdict, Verdict::Allow { .. }),
            Expect::NotAllowed => !matches!(verdict, Verdict::Allow { .. }),
        };
        assert!(
            held,
            "{rules:?} {name}: expected {expected:?}, got {verdict:?}"
        );
    }
}

#[test]
fn a_hard_link_to_a_file_outside_is_replaced_not_written_through() {
    for walk in WALKS {
        let scene = Scene::new();
        let rc = scene.outside.join(".bashrc");
        fs::write(&rc, "mine\n").unwrap();
        fs::hard_link(&rc, scene.workspace.join("rc")).unwrap();
        write_atomically(&scene.judged("rc"), b"export EVIL=1\n", walk).unwrap();
        assert_eq!(fs::read_to_string(&rc).unwrap(), "mine\n", "{walk:?}");
        assert_eq!(
            fs::read_to_string(scene.workspace.join("rc")).unwrap(),
            "export EVIL=1\n"
        );
    }
}
