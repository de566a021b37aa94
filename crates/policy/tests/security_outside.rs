//! Issue 11, class 5: writes outside the workspace through every redirection form, and paths
//! known only at run time. Each instance is analysed (verdict and the paths it writes) and put
//! through the real gate in `cairn -p` with rules that allow the command itself: the gate must
//! refuse, because an allow rule for `echo` says nothing about where its output goes.
//!
//! `/tmp` is outside the workspace like any other directory (see `Places` in
//! `src/bash/paths.rs`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod security_support;

use std::path::PathBuf;

use cairn_shell::BashVerdict::{self, NeedsApproval, Unanalysable};
use pretty_assertions::assert_eq;
use security_support::{World, kind};

/// The allow rules of the issue's sandbox-off experiment; every case adds its own.
const ISSUE_RULES: &[&str] = &[
    "Bash(echo *)",
    "Bash(cat *)",
    "Bash(ls *)",
    "Bash(find *)",
    "Bash(git *)",
    "Bash(npm test:*)",
];

struct Case {
    command: &'static str,
    rule: &'static str,
    verdict: BashVerdict,
    /// Paths written, relative to the temp base (`outside/x`) or absolute.
    written: &'static [&'static str],
    /// Paths read outside the workspace, as above.
    read_outside: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        command: "echo planted >| ../../outside/clobber.txt",
        rule: "Bash(echo *)",
        verdict: NeedsApproval,
        written: &["outside/clobber.txt"],
        read_outside: &[],
    },
    Case {
        command: "echo planted &>> ../../outside/both.log",
        rule: "Bash(echo *)",
        verdict: NeedsApproval,
        written: &["outside/both.log"],
        read_outside: &[],
    },
    Case {
        // `<>` opens for reading and writing; tree-sitter-bash does not know it, so the command
        // is unanalysable, and the target is still recorded as read and written.
        command: "printf overwrite 1<> ../../outside/secret.txt",
        rule: "Bash(printf *)",
        verdict: Unanalysable,
        written: &["outside/secret.txt"],
        read_outside: &["outside/secret.txt"],
    },
    Case {
        command: "cat > ~/.bashrc <<'END'\nalias ls='rm -rf ~'\nEND",
        rule: "Bash(cat *)",
        verdict: NeedsApproval,
        written: &["home/.bashrc"],
        read_outside: &[],
    },
    Case {
        command: "tee -a \"$HOME/.profile\" <<< 'export PATH=.:$PATH'",
        rule: "Bash(tee *)",
        verdict: NeedsApproval,
        written: &["home/.profile"],
        read_outside: &[],
    },
    Case {
        // `src/out` is a symlink to the outside directory.
        command: "echo oops 2> src/out/errors.log",
        rule: "Bash(echo *)",
        verdict: NeedsApproval,
        written: &["outside/errors.log"],
        read_outside: &[],
    },
    Case {
        // `..` after a symlink is the parent of its target, as the kernel resolves it.
        command: "echo x > src/out/../outside/twice.txt",
        rule: "Bash(echo *)",
        verdict: NeedsApproval,
        written: &["outside/twice.txt"],
        read_outside: &[],
    },
    Case {
        command: "echo ssh-ed25519 AAAA >> ~mallory/.ssh/authorized_keys",
        rule: "Bash(echo *)",
        verdict: NeedsApproval,
        written: &["mallory/.ssh/authorized_keys"],
        read_outside: &[],
    },
    Case {
        command: "exec 7>>../../outside/fd.log; echo leak >&7",
        rule: "Bash(exec *)",
        verdict: NeedsApproval,
        written: &["outside/fd.log"],
        read_outside: &[],
    },
    Case {
        command: "{ echo a; echo b; } > ../../outside/group.txt",
        rule: "Bash(echo *)",
        verdict: NeedsApproval,
        written: &["outside/group.txt"],
        read_outside: &[],
    },
    Case {
        command: "sed -i s/s3cret/leaked/ ../../outside/secret.txt",
        rule: "Bash(sed *)",
        verdict: NeedsApproval,
        written: &["outside/secret.txt"],
        read_outside: &[],
    },
    Case {
        command: "echo x > /tmp/cairn-security-outside-probe.txt",
        rule: "Bash(echo *)",
        verdict: NeedsApproval,
        written: &["/tmp/cairn-security-outside-probe.txt"],
        read_outside: &[],
    },
    Case {
        // `$f` is given one literal value, so where it points is known.
        command: "f=../../outside/x; echo hi > \"$f\"",
        rule: "Bash(echo *)",
        verdict: NeedsApproval,
        written: &["outside/x"],
        read_outside: &[],
    },
    Case {
        // Where `$f` points is known only at run time.
        command: "f=$(cat name); echo hi > \"$f\"",
        rule: "Bash(echo *)",
        verdict: Unanalysable,
        written: &[],
        read_outside: &[],
    },
    Case {
        command: "cat $(git ls-files)",
        rule: "Bash(cat *)",
        verdict: Unanalysable,
        written: &[],
        read_outside: &[],
    },
    Case {
        command: "for f; do cat \"$f\"; done",
        rule: "Bash(cat *)",
        verdict: Unanalysable,
        written: &[],
        read_outside: &[],
    },
    Case {
        command: "rm -rf $DIR/",
        rule: "Bash(rm *)",
        verdict: Unanalysable,
        written: &[],
        read_outside: &[],
    },
];

fn world() -> World {
    let world = World::new();
    world.link("src/out", &world.outside);
    world
}

fn paths(world: &World, relative: &[&str]) -> Vec<PathBuf> {
    relative.iter().map(|path| world.base.join(path)).collect()
}

#[test]
fn writes_outside_are_seen_through_every_redirection_form() {
    let world = world();
    let mut wrong = Vec::new();
    for case in CASES {
        let analysis = world.analyze(case.command);
        let written = paths(&world, case.written);
        let mut outside = written.clone();
        for path in paths(&world, case.read_outside) {
            if !outside.contains(&path) {
                outside.insert(0, path);
            }
        }
        let seen = (
            analysis.verdict,
            analysis.written_paths.clone(),
            analysis.outside_paths.clone(),
        );
        if seen != (case.verdict, written.clone(), outside.clone()) {
            wrong.push(format!(
                "{:?}: got {seen:?} ({:?}), expected {:?}",
                case.command,
                analysis.reasons,
                (case.verdict, written, outside)
            ));
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

#[test]
fn the_gate_refuses_each_in_print_mode_although_a_rule_allows_the_command() {
    let world = world();
    let mut wrong = Vec::new();
    for case in CASES {
        let mut rules = ISSUE_RULES.to_vec();
        rules.push(case.rule);
        let verdict = world.check(&rules, case.command);
        if kind(&verdict) != "deny" {
            wrong.push(format!("{:?}: {verdict:?}", case.command));
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

#[test]
fn writes_inside_the_workspace_stay_with_the_rules() {
    let world = world();
    let analysis = world.analyze("echo x > src/notes.txt 2>> build.log");
    assert_eq!(
        (analysis.verdict, analysis.outside_paths),
        (NeedsApproval, vec![])
    );
    assert_eq!(
        analysis.written_paths,
        [
            world.workspace.join("src/notes.txt"),
            world.workspace.join("build.log")
        ]
    );
    assert_eq!(
        kind(&world.check(&["Bash(echo *)"], "echo x > src/notes.txt")),
        "allow"
    );
}
