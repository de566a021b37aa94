//! Issue 11, class 2: text Bash evaluates although it looks like data. An array subscript
//! reached in an arithmetic context, or in a name a builtin takes, is expanded, and a `$(…)`
//! in it runs, even from single-quoted text or a variable's value.
//!
//! Each instance is first run by the real bash in a temp workspace, to prove it really runs
//! the hidden `touch pwned`; then it goes through the analysis (Unanalysable) and the real
//! gate, which refuses it in `cairn -p` even with a rule allowing its first word, and in
//! plan mode. Ordinary arithmetic and names stay read-only.

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

/// (command, allow rules naming its first word)
const CASES: &[(&str, &[&str])] = &[
    ("let 'n[$(touch pwned)] = 2'", &["Bash(let:*)"]),
    (
        "v='k[$(touch pwned)]'; echo $(( v + 1 ))",
        &["Bash(echo:*)"],
    ),
    ("v='k[$(touch pwned)]'; (( v > 0 ))", &["Bash(echo:*)"]),
    ("[[ 'k[$(touch pwned)]' -ge 1 ]]", &["Bash([[:*)"]),
    ("w='k[$(touch pwned)]'; [[ 1 -ne $w ]]", &["Bash([[:*)"]),
    ("printf -v 'k[$(touch pwned)]' %s x", &["Bash(printf:*)"]),
    ("read 'k[$(touch pwned)]' <<< x", &["Bash(read:*)"]),
    ("declare 'k[$(touch pwned)]=1'", &["Bash(declare:*)"]),
    ("test -v 'k[$(touch pwned)]'", &["Bash(test:*)"]),
    ("[ -v 'k[$(touch pwned)]' ]", &["Bash([:*)"]),
    ("p='k[$(touch pwned)]'; echo ${!p}", &["Bash(echo:*)"]),
    (
        "a=(1); i='k[$(touch pwned)]'; echo ${a[i]}",
        &["Bash(echo:*)"],
    ),
    (
        "s=abc; o='k[$(touch pwned)]'; echo ${s:o}",
        &["Bash(echo:*)"],
    ),
    ("declare -i n; n='k[$(touch pwned)]'", &["Bash(declare:*)"]),
    (
        "cat seed.txt | { read -r v; echo $((v)); }",
        &["Bash(cat:*)", "Bash(read:*)", "Bash(echo:*)"],
    ),
    (
        "x='k[$(touch pwned)]'; for ((i = 0; i < x; i++)); do :; done",
        &["Bash(for:*)"],
    ),
    (
        "while read -r line; do echo $(( line * 2 )); done < seed.txt",
        &["Bash(read:*)", "Bash(echo:*)"],
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
fn the_reason_names_the_variable_and_where_its_value_comes_from() {
    let world = World::new();
    assert_eq!(
        world.analyze("n=$(cat count.txt); echo $((n + 1))").reasons,
        [
            "Bash evaluates `$((n + 1))` as arithmetic, and n is the output of $(cat count.txt): an array subscript in it could run a command"
        ]
    );
    assert_eq!(
        world.analyze("read -r n < count.txt; (( n > 3 ))").reasons,
        [
            "Bash evaluates `(( n > 3 ))` as arithmetic, and n is set by `read`: an array subscript in it could run a command"
        ]
    );
}

/// A loop that assigns a variable after using it is judged by every value it takes.
#[test]
fn a_value_assigned_later_in_a_loop_counts() {
    let world = World::new();
    let analysis = world.analyze("n=1; for f in a b; do echo $((n)); n=$(cat \"$f\"); done");
    assert_eq!(analysis.verdict, BashVerdict::Unanalysable);
}

/// Plain numbers and names, and variables set to them (or never set here: they come from
/// the environment cairn starts the shell with), evaluate nothing.
#[test]
fn ordinary_arithmetic_and_names_stay_read_only() {
    let world = World::new();
    world.file("notes.txt", "x\n");
    let still_fine = [
        "(( 1 + 2 ))",
        "[[ 3 -lt 4 ]]",
        "[[ $# -eq 0 ]]",
        "[ \"$x\" -eq 1 ]",
        "i=$((i+1))",
        "i=0; i=$((i + 1)); echo $i",
        "for i in 1 2 3; do echo $((i * 2)); done",
        "for ((i = 0; i < 3; i++)); do echo $i; done",
        "c=0; for f in *.rs; do c=$((c+1)); done; echo $c",
        "let i++",
        "echo $((16#ff + 0x10))",
        "arr=(a b c); echo ${#arr[@]} $(( ${#arr[@]} - 1 )) ${arr[1]}",
        "s=hello; n=2; echo ${s:1:n}",
        "read line < notes.txt",
        "read -r a b <<< 'x y'",
        "declare x=1",
        "declare -i n=5",
        "local_name=abc; echo ${local_name^^}",
        "printf -v name '%s' x",
        "printf '%s\\n' \"$HOME\"",
        "test -f notes.txt",
        "[ -v HOME ]",
        "unset name",
        "echo ${x:-$(pwd)}",
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
