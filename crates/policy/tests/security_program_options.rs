//! Issue 21: an option that makes a command run another program (`sort --compress-program`,
//! `git grep --open-files-in-pager`, `rg --pre`) is judged apart from the command. An allow rule
//! for the command alone (`Bash(sort:*)`, `Bash(git:*)`) does not lift it, whatever spelling
//! the program accepts; only a rule that names the option as written does. Each case goes
//! through the real gate in `cairn -p`, where a question is a refusal.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod security_support;

use pretty_assertions::assert_eq;
use security_support::{World, kind};

/// (command, the allow rule in force, what the gate must answer in `-p`).
const CASES: &[(&str, &str, &str)] = &[
    // The command's own rule does not vouch for the program an option hands control to.
    (
        "sort --compress-program=gzip -S 1k data.txt",
        "Bash(sort:*)",
        "deny",
    ),
    ("sort --compress-prog gzip data.txt", "Bash(sort *)", "deny"),
    (
        "sort --compress-p=./run.sh data.txt",
        "Bash(sort:*)",
        "deny",
    ),
    ("rg --pre ./decode.sh needle", "Bash(rg:*)", "deny"),
    (
        "git grep --open-files-in-pager=./pager.sh -e needle",
        "Bash(git:*)",
        "deny",
    ),
    (
        "git grep --open=./pager.sh -e needle",
        "Bash(git grep:*)",
        "deny",
    ),
    // tar and npm run the program whichever prefix of the option names it (their own parsers
    // expand abbreviations): a destructive command, which no rule lifts.
    ("tar --to-comm='sh -c id' -xf a.tar", "Bash(tar:*)", "deny"),
    (
        "tar --use-compress-prog=./unpack.sh -xf a.tar",
        "Bash(tar:*)",
        "deny",
    ),
    (
        "tar --checkpoint=1 --checkpoint-act=exec=./run.sh -cf a.tar src",
        "Bash(tar:*)",
        "deny",
    ),
    ("npm test --script-sh=./evil.sh", "Bash(npm test:*)", "deny"),
    (
        "npm test --node-opt='--require ./x.js'",
        "Bash(npm test:*)",
        "deny",
    ),
    ("npm run build --userc ./npmrc", "Bash(npm run:*)", "deny"),
    // Options that only share a beginning are not the dangerous ones.
    ("tar --to-stdout -xf a.tar", "Bash(tar:*)", "allow"),
    // A rule that names the option, as written, is the user's word for it.
    (
        "sort --compress-program=gzip -S 1k data.txt",
        "Bash(sort --compress-program=gzip:*)",
        "allow",
    ),
    // Without the option the command's rule holds, and plain reads need none.
    ("sort -u data.txt", "Bash(sort:*)", "allow"),
    ("sort -u data.txt", "Bash(echo:*)", "allow"),
];

#[test]
fn program_options_are_lifted_only_by_a_rule_that_names_them() {
    let world = World::new();
    world.file("data.txt", "b\na\n");
    let mut failures = Vec::new();
    for (command, rule, expected) in CASES {
        let verdict = world.check(&[rule], command);
        if kind(&verdict) != *expected {
            failures.push(format!("{command} with {rule}: {verdict:?}"));
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}

/// GNU tar really takes the abbreviation: the program runs.
#[test]
fn tar_runs_the_program_an_abbreviated_option_names() {
    let world = World::new();
    world.file("src/a.txt", "a");
    let marker = world.workspace.join("ran");
    let status = std::process::Command::new("tar")
        .current_dir(&world.workspace)
        .args(["-cf", "a.tar", "src"])
        .status()
        .unwrap();
    assert!(status.success());
    let status = std::process::Command::new("tar")
        .current_dir(&world.workspace)
        .arg(format!("--to-comm=touch {}", marker.display()))
        .args(["-xf", "a.tar"])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(marker.exists(), "tar --to-comm ran no program");
}

#[test]
fn the_analysis_names_the_program_option_as_written_and_in_full() {
    let world = World::new();
    let analysis = world.analyze("sort --compress-prog=sh data.txt");
    let options: Vec<(String, String, String)> = analysis
        .program_options
        .iter()
        .map(|option| {
            (
                option.command.clone(),
                option.written.clone(),
                option.canonical.clone(),
            )
        })
        .collect();
    assert_eq!(
        options,
        [(
            "sort".to_owned(),
            "--compress-prog".to_owned(),
            "--compress-program".to_owned()
        )]
    );
}

/// The rule the refusal offers is one that would let the call run: for a program option, the
/// command as written (which names the option), never the command's prefix rule, which would
/// not lift it.
#[test]
fn the_rule_a_refusal_offers_lifts_the_program_option() {
    let world = World::new();
    world.file("data.txt", "b\na\n");
    let commands = [
        "git grep --open=./pager.sh -e needle",
        "sort --compress-prog=sh -S 1k data.txt",
        "rg --pre ./decode.sh needle",
    ];
    let mut failures = Vec::new();
    for command in commands {
        let verdict = world.check(&[], command);
        let reason = match &verdict {
            cairn_policy::Verdict::Deny { reason, .. } => reason.clone(),
            other => panic!("{command}: {other:?}"),
        };
        let Some(rule) = reason
            .split("add the rule `")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
        else {
            failures.push(format!("{command}: no rule offered in {reason:?}"));
            continue;
        };
        let with_rule = world.check(&[rule], command);
        if kind(&with_rule) != "allow" {
            failures.push(format!("{command}: the offered {rule} gives {with_rule:?}"));
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}
