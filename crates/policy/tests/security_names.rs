//! Issue 11, class 1: commands that change what a later name in the same command line runs
//! (`hash -p`, `BASH_CMDS`, aliases, functions, `PATH`/`BASH_ENV`, `source`, `trap`).
//!
//! Each instance is first run by the real bash in a temp workspace, to prove it really runs
//! the hidden `touch pwned`; then it goes through the analysis (Unanalysable) and the real
//! gate, which refuses it in `cairn -p` even with rules allowing the names it uses, and in
//! plan mode.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod security_support;

use cairn_shell::BashVerdict;
use pretty_assertions::assert_eq;
use security_support::World;

mod evaluation_support;
use evaluation_support::{harmless_instances, not_refused, not_unanalysable};

/// (command, allow rules naming the words it uses)
const CASES: &[(&str, &[&str])] = &[
    (
        "hash -p /usr/bin/touch head; head pwned",
        &["Bash(hash:*)", "Bash(head:*)"],
    ),
    ("BASH_CMDS[wc]=/usr/bin/touch; wc pwned", &["Bash(wc:*)"]),
    (
        "shopt -s expand_aliases\nalias ls=touch\nls pwned",
        &["Bash(shopt:*)", "Bash(alias:*)", "Bash(ls:*)"],
    ),
    ("echo() { touch \"$@\"; }; echo pwned", &["Bash(echo:*)"]),
    (
        "function grep { touch \"$1\"; }; grep pwned",
        &["Bash(grep:*)"],
    ),
    ("cd() { touch pwned; }; cd src", &["Bash(cd:*)"]),
    ("PATH=./tools:$PATH ls", &["Bash(ls:*)"]),
    (
        "export PATH=./tools:$PATH; ls",
        &["Bash(export:*)", "Bash(ls:*)"],
    ),
    (
        "env PATH=./tools:/usr/bin:/bin ls",
        &["Bash(env:*)", "Bash(ls:*)"],
    ),
    ("BASH_ENV=./evil.sh bash -c true", &["Bash(bash:*)"]),
    ("source ./evil.sh", &["Bash(source:*)"]),
    (". ./evil.sh && ls", &["Bash(.:*)", "Bash(ls:*)"]),
    (
        "trap 'touch pwned' EXIT; true",
        &["Bash(trap:*)", "Bash(true)"],
    ),
    (
        "builtin hash -p /usr/bin/touch cat; cat pwned",
        &["Bash(builtin:*)", "Bash(cat:*)"],
    ),
];

#[test]
fn every_instance_really_runs_the_hidden_command() {
    assert_eq!(harmless_instances(CASES), Vec::<&str>::new());
}

#[test]
fn the_analysis_calls_each_unanalysable_with_a_reason() {
    assert_eq!(not_unanalysable(CASES), Vec::<String>::new());
}

#[test]
fn the_gate_refuses_each_in_print_mode_with_allow_rules_and_in_plan_mode() {
    assert_eq!(not_refused(CASES), Vec::<String>::new());
}

#[test]
fn the_reasons_say_which_name_changes() {
    let world = World::new();
    assert_eq!(
        world.analyze("hash -p /bin/rm cat").reasons,
        [
            "`hash -p` makes a command name run another program, so later names may run something else"
        ]
    );
    assert_eq!(
        world.analyze("pwd() { echo /; }").reasons,
        ["defines the function pwd, which changes what the name `pwd` runs"]
    );
    assert_eq!(
        world.analyze("GIT_SSH_COMMAND=evil git status").reasons,
        ["sets GIT_SSH_COMMAND, which changes what the commands run"]
    );
}

/// Listing and forgetting leave every name meaning what it meant.
#[test]
fn what_only_lists_or_forgets_stays_read_only() {
    let world = World::new();
    let still_fine = [
        "hash",
        "hash -r",
        "hash -t ls",
        "hash -d ls",
        "alias",
        "alias ll",
        "type cat",
        "command -v git",
        "set -euo pipefail",
        "set -x; ls",
        "set +o history",
        "shopt -s nullglob globstar",
        "shopt extglob",
        "export LANG=C.UTF-8",
        "LC_ALL=C git status",
        "GIT_AUTHOR_NAME=me git log -1",
        "export PATH",
        "unset FOO",
        "exec 2>&1; ls",
    ];
    let changed: Vec<String> = still_fine
        .iter()
        .filter_map(|command| {
            let analysis = world.analyze(command);
            (analysis.verdict != BashVerdict::ReadOnly)
                .then(|| format!("{command:?}: {:?} {:?}", analysis.verdict, analysis.reasons))
        })
        .collect();
    assert_eq!(changed, Vec::<String>::new());
}
