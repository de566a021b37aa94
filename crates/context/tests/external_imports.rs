//! Imports from outside the project need the user's approval: each way an instruction file can
//! reach outside (home paths, absolute paths, `..`, symlinked files and directories, an
//! instruction file that is itself a link) is skipped and recorded until approved; the
//! project's own files, `~/.claude/` and what the user's own `~/.claude/CLAUDE.md` imports load
//! as before. Then the approval store: where it lives, its modes, what it keeps.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cairn_context::approvals::{ApprovalError, ImportApprovals, claude_code_approves};
use cairn_context::instructions::{
    ExternalApproval, ExternalImport, ImportScope, ImportStatus, InstructionSet, Reach,
};
use cairn_context::{PromptBuilder, PromptOptions, PromptSource};
use pretty_assertions::assert_eq;

const SECRET: &str = "-----BEGIN OPENSSH PRIVATE KEY----- secret-7f3a";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn symlink(target: &Path, link: &Path) {
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// A HOME, a project, and a directory elsewhere, each a temp dir of its own, the project
/// one level down so that `..` leads out of it.
struct World {
    home: tempfile::TempDir,
    root: tempfile::TempDir,
    elsewhere: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let world = World {
            home: tempfile::tempdir().unwrap(),
            root: tempfile::tempdir().unwrap(),
            elsewhere: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(world.project()).unwrap();
        world
    }

    fn home(&self) -> PathBuf {
        self.home.path().canonicalize().unwrap()
    }

    fn project(&self) -> PathBuf {
        self.root.path().canonicalize().unwrap().join("project")
    }

    fn elsewhere(&self) -> PathBuf {
        self.elsewhere.path().canonicalize().unwrap()
    }

    fn load(&self, external: ExternalApproval) -> InstructionSet {
        let scope = ImportScope {
            workspace_roots: Vec::new(),
            external,
        };
        InstructionSet::load(&self.project(), Some(&self.home()), &scope)
    }
}

/// One way of reaching outside: it lays out the files and says which external file it
/// reaches (its real path), from which file, and how.
struct Escape {
    name: &'static str,
    lay_out: fn(&World) -> (PathBuf, PathBuf, Reach),
}

const ESCAPES: &[Escape] = &[
    Escape {
        name: "a home path to a private key",
        lay_out: |w| {
            write(&w.home().join(".ssh/id_ed25519"), SECRET);
            write(&w.project().join("CLAUDE.md"), "Keys: @~/.ssh/id_ed25519");
            (
                w.home().join(".ssh/id_ed25519"),
                w.project().join("CLAUDE.md"),
                Reach::Import,
            )
        },
    },
    Escape {
        name: "an absolute path",
        lay_out: |w| {
            write(&w.elsewhere().join("token.txt"), SECRET);
            let text = format!("See @{}", w.elsewhere().join("token.txt").display());
            write(&w.project().join("CLAUDE.local.md"), &text);
            (
                w.elsewhere().join("token.txt"),
                w.project().join("CLAUDE.local.md"),
                Reach::Import,
            )
        },
    },
    Escape {
        name: "a relative path climbing out with ..",
        lay_out: |w| {
            write(&w.project().join("../sibling/.env"), SECRET);
            write(
                &w.project().join(".claude/CLAUDE.md"),
                "@../../sibling/.env",
            );
            (
                w.project().parent().unwrap().join("sibling/.env"),
                w.project().join(".claude/CLAUDE.md"),
                Reach::Import,
            )
        },
    },
    Escape {
        name: "a symlinked file inside the project",
        lay_out: |w| {
            write(&w.elsewhere().join("credentials"), SECRET);
            symlink(
                &w.elsewhere().join("credentials"),
                &w.project().join("docs/style.md"),
            );
            write(&w.project().join("AGENTS.md"), "Style: @docs/style.md");
            (
                w.elsewhere().join("credentials"),
                w.project().join("AGENTS.md"),
                Reach::Import,
            )
        },
    },
    Escape {
        name: "a symlinked directory inside the project",
        lay_out: |w| {
            write(&w.elsewhere().join("aws/credentials.md"), SECRET);
            symlink(&w.elsewhere().join("aws"), &w.project().join("vendor"));
            write(&w.project().join("CLAUDE.md"), "@vendor/credentials.md");
            (
                w.elsewhere().join("aws/credentials.md"),
                w.project().join("CLAUDE.md"),
                Reach::Import,
            )
        },
    },
    Escape {
        name: "an import of an import inside the project",
        lay_out: |w| {
            write(&w.home().join(".netrc.md"), SECRET);
            write(&w.project().join("CLAUDE.md"), "@docs/guide.md");
            write(&w.project().join("docs/guide.md"), "Also @~/.netrc.md");
            (
                w.home().join(".netrc.md"),
                w.project().join("docs/guide.md"),
                Reach::Import,
            )
        },
    },
    Escape {
        name: "an instruction file that is a symlink out of the project",
        lay_out: |w| {
            write(&w.home().join(".ssh/id_rsa"), SECRET);
            symlink(
                &w.home().join(".ssh/id_rsa"),
                &w.project().join("CLAUDE.md"),
            );
            (
                w.home().join(".ssh/id_rsa"),
                w.project().join("CLAUDE.md"),
                Reach::Symlink,
            )
        },
    },
    Escape {
        name: "a rule file that is a symlink out of the project",
        lay_out: |w| {
            write(&w.elsewhere().join("history.md"), SECRET);
            symlink(
                &w.elsewhere().join("history.md"),
                &w.project().join(".claude/rules/history.md"),
            );
            (
                w.elsewhere().join("history.md"),
                w.project().join(".claude/rules/history.md"),
                Reach::Symlink,
            )
        },
    },
];

#[test]
fn every_way_out_of_the_project_is_skipped_until_approved() {
    for escape in ESCAPES {
        let world = World::new();
        let (path, by, reach) = (escape.lay_out)(&world);
        let skipped = ExternalImport {
            path: path.clone(),
            by: by.clone(),
            reach,
            status: ImportStatus::Skipped,
        };

        let set = world.load(ExternalApproval::default());
        assert_eq!(set.external, vec![skipped.clone()], "{}", escape.name);
        assert!(!set.render().contains(SECRET), "{}", escape.name);
        assert_eq!(
            set.skipped_imports().collect::<Vec<_>>(),
            vec![&skipped],
            "{}",
            escape.name
        );

        // Approving another file does not let this one in.
        let other = BTreeSet::from([world.elsewhere().join("other.md")]);
        let set = world.load(ExternalApproval::Only(other));
        assert!(!set.render().contains(SECRET), "{}", escape.name);

        // Approving this one does.
        let set = world.load(ExternalApproval::Only(BTreeSet::from([path.clone()])));
        assert_eq!(
            set.external,
            vec![ExternalImport {
                status: ImportStatus::Included,
                ..skipped.clone()
            }],
            "{}",
            escape.name
        );
        assert!(set.render().contains(SECRET), "{}", escape.name);
        assert_eq!(set.skipped_imports().count(), 0, "{}", escape.name);

        let set = world.load(ExternalApproval::All);
        assert!(set.render().contains(SECRET), "{}", escape.name);
    }
}

#[test]
fn the_projects_own_files_and_the_users_claude_directory_need_no_approval() {
    let world = World::new();
    write(
        &world.project().join("CLAUDE.md"),
        "@docs/a.md @./b.md @~/.claude/shared.md",
    );
    write(&world.project().join("docs/a.md"), "project doc a");
    write(&world.project().join("b.md"), "project doc b");
    write(&world.home().join(".claude/shared.md"), "user shared");
    // The user's own file imports from elsewhere in HOME: the user's choice.
    write(&world.home().join(".claude/CLAUDE.md"), "@~/notes/mine.md");
    write(
        &world.home().join("notes/mine.md"),
        "my notes, and @private.md",
    );
    write(&world.home().join("notes/private.md"), "private notes");
    // A parent directory's file is not an import, and a symlink staying in the project is
    // the project's own.
    write(&world.root.path().join("AGENTS.md"), "parent agents");
    symlink(
        &world.project().join("docs/a.md"),
        &world.project().join("CLAUDE.local.md"),
    );

    let set = world.load(ExternalApproval::default());
    assert_eq!(set.external, Vec::new());
    let text = set.render();
    for expected in [
        "project doc a",
        "project doc b",
        "user shared",
        "my notes",
        "private notes",
        "parent agents",
    ] {
        assert!(text.contains(expected), "{expected} missing from:\n{text}");
    }
}

#[test]
fn a_user_import_that_leads_into_the_project_is_judged_as_the_projects() {
    let world = World::new();
    let project_file = world.project().join("notes.md");
    write(
        &world.home().join(".claude/CLAUDE.md"),
        &format!("@{}", project_file.display()),
    );
    write(&project_file, "in the project, importing @../outside.md");
    write(&world.root.path().join("outside.md"), SECRET);

    let set = world.load(ExternalApproval::default());
    assert_eq!(
        set.external,
        vec![ExternalImport {
            path: world.project().parent().unwrap().join("outside.md"),
            by: project_file,
            reach: Reach::Import,
            status: ImportStatus::Skipped,
        }]
    );
    assert!(!set.render().contains(SECRET));
}

#[test]
fn added_workspace_roots_are_the_projects_own() {
    let world = World::new();
    write(
        &world.elsewhere().join("shared/conventions.md"),
        "conventions",
    );
    let text = format!(
        "@{}",
        world.elsewhere().join("shared/conventions.md").display()
    );
    write(&world.project().join("CLAUDE.md"), &text);
    let scope = ImportScope {
        workspace_roots: vec![world.elsewhere().join("shared")],
        external: ExternalApproval::default(),
    };
    let set = InstructionSet::load(&world.project(), Some(&world.home()), &scope);
    assert_eq!(set.external, Vec::new());
    assert!(set.render().contains("conventions"));
}

#[test]
fn the_question_covers_imports_of_imports_and_leaves_out_what_is_approved() {
    let world = World::new();
    let first = world.elsewhere().join("team/style.md");
    let second = world.elsewhere().join("team/naming.md");
    let approved = world.elsewhere().join("approved.md");
    write(&first, "style, see @naming.md");
    write(&second, "naming");
    write(&approved, "approved before");
    write(
        &world.project().join("CLAUDE.md"),
        &format!("@{} @{}", first.display(), approved.display()),
    );
    let scope = ImportScope {
        workspace_roots: Vec::new(),
        external: ExternalApproval::Only(BTreeSet::from([approved.clone()])),
    };

    let pending = InstructionSet::unapproved_imports(&world.project(), Some(&world.home()), &scope);
    let skipped = |path: &Path, by: PathBuf| ExternalImport {
        path: path.to_path_buf(),
        by,
        reach: Reach::Import,
        status: ImportStatus::Skipped,
    };
    assert_eq!(
        pending,
        vec![
            skipped(&first, world.project().join("CLAUDE.md")),
            skipped(&second, first.clone()),
        ]
    );
    assert_eq!(
        pending[1].to_string(),
        format!("{} (imported by {})", second.display(), first.display())
    );

    // Approving only the first: its own import is still asked about.
    let scope = ImportScope {
        workspace_roots: Vec::new(),
        external: ExternalApproval::Only(BTreeSet::from([approved, first.clone()])),
    };
    let set = InstructionSet::load(&world.project(), Some(&world.home()), &scope);
    let text = set.render();
    assert!(
        text.contains("style, see") && !text.contains("\n\nnaming"),
        "{text}"
    );
    assert_eq!(
        set.skipped_imports().cloned().collect::<Vec<_>>(),
        vec![skipped(&second, first)]
    );
}

#[test]
fn the_prompt_builder_reports_what_it_skipped() {
    let world = World::new();
    write(&world.home().join(".ssh/id_rsa"), SECRET);
    write(&world.project().join("CLAUDE.md"), "Use @~/.ssh/id_rsa");
    let builder = PromptBuilder::new(PromptOptions {
        cwd: world.project(),
        home: Some(world.home()),
        model: "m".into(),
        ..PromptOptions::default()
    });
    let prompt = builder.system_prompt();
    assert!(prompt.dynamic_part.contains("Use @~/.ssh/id_rsa"));
    assert!(!prompt.dynamic_part.contains(SECRET));
    assert_eq!(
        builder.skipped_imports(),
        vec![ExternalImport {
            path: world.home().join(".ssh/id_rsa"),
            by: world.project().join("CLAUDE.md"),
            reach: Reach::Import,
            status: ImportStatus::Skipped,
        }]
    );
}

#[test]
fn approvals_are_kept_per_project_in_a_private_file() {
    use std::os::unix::fs::PermissionsExt;

    let cairn_home = tempfile::tempdir().unwrap();
    let state = cairn_home.path().join("state");
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    let store = ImportApprovals::new(&state);
    assert_eq!(store.path(), state.join("approvals.json"));
    assert_eq!(store.approved(one.path()).unwrap(), BTreeSet::new());

    store
        .approve(one.path(), &[PathBuf::from("/srv/team/style.md")])
        .unwrap();
    store
        .approve(one.path(), &[PathBuf::from("/srv/team/naming.md")])
        .unwrap();
    assert_eq!(
        store.approved(one.path()).unwrap(),
        BTreeSet::from([
            PathBuf::from("/srv/team/naming.md"),
            PathBuf::from("/srv/team/style.md"),
        ])
    );
    assert_eq!(store.approved(two.path()).unwrap(), BTreeSet::new());

    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&state), 0o700);
    assert_eq!(mode(store.path()), 0o600);
    // Written whole: nothing but the file itself is left beside it.
    let names: Vec<_> = std::fs::read_dir(&state)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("approvals.json")]);

    // Filed under the project's real path, however it was reached.
    let link = cairn_home.path().join("link-to-one");
    symlink(one.path(), &link);
    assert_eq!(store.approved(&link).unwrap().len(), 2);
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(store.path()).unwrap()).unwrap();
    let key = one.path().canonicalize().unwrap().display().to_string();
    assert_eq!(
        document["projects"][key.as_str()]["approvedExternalImports"],
        serde_json::json!(["/srv/team/naming.md", "/srv/team/style.md"])
    );
}

#[test]
fn a_damaged_approvals_file_is_reported_and_left_alone() {
    let cairn_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let store = ImportApprovals::new(cairn_home.path());
    std::fs::write(store.path(), "{ not json").unwrap();

    let error = store.approved(project.path()).unwrap_err();
    assert!(matches!(error, ApprovalError::Parse { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with(&format!("{} is not valid JSON", store.path().display())),
        "{error}"
    );
    assert!(
        store
            .approve(project.path(), &[PathBuf::from("/x.md")])
            .is_err()
    );
    assert_eq!(std::fs::read_to_string(store.path()).unwrap(), "{ not json");
}

#[test]
fn other_keys_in_the_approvals_file_survive_an_approval() {
    let cairn_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let store = ImportApprovals::new(cairn_home.path());
    std::fs::write(
        store.path(),
        r#"{"note": "kept", "projects": {"/elsewhere": {"approvedExternalImports": ["/a.md"]}}}"#,
    )
    .unwrap();
    store
        .approve(project.path(), &[PathBuf::from("/b.md")])
        .unwrap();
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(store.path()).unwrap()).unwrap();
    assert_eq!(document["note"], "kept");
    assert_eq!(
        document["projects"]["/elsewhere"]["approvedExternalImports"],
        serde_json::json!(["/a.md"])
    );
    assert_eq!(
        store.approved(Path::new("/elsewhere")).unwrap(),
        BTreeSet::from([PathBuf::from("/a.md")])
    );
}

#[test]
fn claude_codes_own_approval_is_read_for_the_project_only() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    assert!(!claude_code_approves(home.path(), project.path()));
    let record = serde_json::json!({"projects": {
        project.path().display().to_string(): {"hasClaudeMdExternalIncludesApproved": true},
        other.path().display().to_string(): {"hasClaudeMdExternalIncludesApproved": false},
    }});
    std::fs::write(home.path().join(".claude.json"), record.to_string()).unwrap();
    assert!(claude_code_approves(home.path(), project.path()));
    assert!(!claude_code_approves(home.path(), other.path()));
    assert!(!claude_code_approves(
        home.path(),
        Path::new("/somewhere/else")
    ));
}
