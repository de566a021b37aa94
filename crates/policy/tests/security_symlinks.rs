//! Issue 11, class 6: symlinks reached through globs in a command's words, and through
//! recursive commands that follow the links they meet. Globs are expanded against the real
//! filesystem and each match resolved; link-following walks are made, bounded, looking for
//! links out of the workspace. Each instance is analysed (verdict and the outside paths it
//! reads or writes) and put through the real gate in `cairn -p` with a rule that allows the
//! command: the gate must refuse.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod security_support;

use std::fs;
use std::path::PathBuf;

use cairn_shell::BashVerdict::{self, NeedsApproval, ReadOnly, Unanalysable};
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

/// A workspace with links out planted where a glob or a walk finds them:
/// `keys/id.txt` → the outside secret, `src/vault` → the outside directory,
/// `docs/creds` → the secret among ordinary files, and `deep/a/b/c/door` → the outside
/// directory, three levels down.
fn world() -> World {
    let world = World::new();
    let secret = world.outside.join("secret.txt");
    world.link("keys/id.txt", &secret);
    world.link("src/vault", &world.outside);
    world.file("docs/guide.md", "# guide");
    world.file("docs/intro.md", "# intro");
    world.link("docs/creds", &secret);
    world.file("deep/a/readme.txt", "token");
    world.link("deep/a/b/c/door", &world.outside);
    world
}

/// (command, the rule that allows it, the verdict, the outside paths relative to the temp
/// base, whether they are written rather than read).
const CASES: &[(&str, &str, BashVerdict, &[&str], bool)] = &[
    (
        "cat ke?s/*",
        "Bash(cat *)",
        NeedsApproval,
        &["outside/secret.txt"],
        false,
    ),
    (
        "head -n 5 src/va*/*",
        "Bash(head *)",
        NeedsApproval,
        &["outside/secret.txt"],
        false,
    ),
    (
        "cat docs/*",
        "Bash(cat *)",
        NeedsApproval,
        &["outside/secret.txt"],
        false,
    ),
    (
        "wc -c docs/[c]reds",
        "Bash(wc *)",
        NeedsApproval,
        &["outside/secret.txt"],
        false,
    ),
    (
        "grep -R token deep",
        "Bash(grep *)",
        NeedsApproval,
        &["outside"],
        false,
    ),
    (
        // No operand: the whole workspace, where the walk meets every link out.
        "grep -R token",
        "Bash(grep *)",
        NeedsApproval,
        &["outside/secret.txt", "outside"],
        false,
    ),
    (
        "cat -n keys/id.txt",
        "Bash(cat *)",
        NeedsApproval,
        &["outside/secret.txt"],
        false,
    ),
    (
        "rg --follow token deep/a",
        "Bash(rg *)",
        NeedsApproval,
        &["outside"],
        false,
    ),
    (
        "find -L deep -name '*.txt'",
        "Bash(find *)",
        NeedsApproval,
        &["outside"],
        false,
    ),
    (
        "find deep -follow -type f",
        "Bash(find *)",
        NeedsApproval,
        &["outside"],
        false,
    ),
    (
        "ls -RL deep",
        "Bash(ls *)",
        NeedsApproval,
        &["outside"],
        false,
    ),
    (
        "du -L -s deep",
        "Bash(du *)",
        NeedsApproval,
        &["outside"],
        false,
    ),
    (
        "cp -rL deep backup",
        "Bash(cp *)",
        NeedsApproval,
        &["outside"],
        false,
    ),
    (
        "tar -chf deep.tar deep",
        "Bash(tar *)",
        NeedsApproval,
        &["outside"],
        false,
    ),
    (
        "chown -RL nobody deep",
        "Bash(chown *)",
        NeedsApproval,
        &["outside"],
        true,
    ),
    (
        // A `cd` through a glob goes where its one match leads.
        "cd src/v*lt && cat secret.txt",
        "Bash(cat *)",
        NeedsApproval,
        &["outside", "outside/secret.txt"],
        false,
    ),
    (
        "echo x > docs/cre*",
        "Bash(echo *)",
        NeedsApproval,
        &["outside/secret.txt"],
        true,
    ),
];

fn paths(world: &World, relative: &[&str]) -> Vec<PathBuf> {
    relative.iter().map(|path| world.base.join(path)).collect()
}

#[test]
fn globs_and_link_following_walks_reach_the_links_out() {
    let world = world();
    let mut wrong = Vec::new();
    for (command, _, verdict, outside, written) in CASES {
        let analysis = world.analyze(command);
        let outside = paths(&world, outside);
        let touched = if *written {
            &analysis.written_paths
        } else {
            &analysis.read_paths
        };
        let found = analysis.verdict == *verdict
            && analysis.outside_paths == outside
            && outside.iter().all(|path| touched.contains(path));
        if !found {
            wrong.push(format!(
                "{command:?}: got {:?}, outside {:?}, read {:?}, written {:?} ({:?})",
                analysis.verdict,
                analysis.outside_paths,
                analysis.read_paths,
                analysis.written_paths,
                analysis.reasons
            ));
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

#[test]
fn the_gate_refuses_each_in_print_mode_although_a_rule_allows_the_command() {
    let world = world();
    let mut wrong = Vec::new();
    for (command, rule, _, _, _) in CASES {
        let mut rules = ISSUE_RULES.to_vec();
        rules.push(rule);
        let verdict = world.check(&rules, command);
        if kind(&verdict) != "deny" {
            wrong.push(format!("{command:?}: {verdict:?}"));
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

#[test]
fn globs_and_walks_that_stay_inside_run_as_before() {
    let world = world();
    let cases = [
        // Matches only ordinary files in the workspace.
        ("cat docs/*.md", ReadOnly),
        // Matches nothing: Bash passes the word on as written.
        ("cat nothing-here*", ReadOnly),
        // A quoted `*` is no glob.
        ("cat 'docs/*'", ReadOnly),
        // `grep -r` follows only the links named on its command line.
        ("grep -r token deep", ReadOnly),
        ("find deep -name '*.txt'", ReadOnly),
        ("ls -R deep", ReadOnly),
        ("du -s deep", ReadOnly),
    ];
    let seen: Vec<(&str, BashVerdict)> = cases
        .iter()
        .map(|(command, _)| (*command, world.analyze(command).verdict))
        .collect();
    assert_eq!(seen, cases);
    assert_eq!(
        world.analyze("cat docs/*.md").read_paths,
        [
            world.workspace.join("docs/guide.md"),
            world.workspace.join("docs/intro.md")
        ]
    );
    assert_eq!(
        kind(&world.check(&["Bash(cat *)"], "cat docs/*.md")),
        "allow"
    );
}

#[test]
fn a_tree_too_large_to_walk_is_unanalysable() {
    let world = world();
    let crowd = world.workspace.join("crowd");
    fs::create_dir_all(&crowd).unwrap();
    for index in 0..20_001 {
        fs::File::create(crowd.join(index.to_string())).unwrap();
    }
    let walked = world.analyze("grep -R needle crowd");
    assert_eq!(walked.verdict, Unanalysable);
    assert_eq!(
        walked.reasons,
        [format!(
            "`grep -R` follows symbolic links under {}, which holds more than 20000 entries to \
             check: it may reach outside the workspace",
            crowd.display()
        )]
    );
    let globbed = world.analyze("cat crowd/*");
    assert_eq!(globbed.verdict, Unanalysable);
    assert_eq!(
        kind(&world.check(&["Bash(grep *)"], "grep -R needle crowd")),
        "deny"
    );
}
