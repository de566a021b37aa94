#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

//! How a command line is split into simple commands, and how each is normalised.

mod bash_support;

use bash_support::Sandbox;
use cairn_shell::{BashAnalysis, BashVerdict, SimpleCommand};
use pretty_assertions::assert_eq;

fn texts(sandbox: &Sandbox, command: &str) -> Vec<String> {
    sandbox
        .analyze(command)
        .commands
        .into_iter()
        .map(|command| command.text)
        .collect()
}

#[test]
fn compound_commands_split_into_simple_commands_in_run_order() {
    let sandbox = Sandbox::new();
    let cases: &[(&str, &[&str])] = &[
        ("FOO=1 git  status", &["git status"]),
        ("ls | grep x | wc -l", &["ls", "grep x", "wc -l"]),
        ("a; b && c || d & e", &["a", "b", "c", "d", "e"]),
        ("ls\npwd\n", &["ls", "pwd"]),
        (
            "(cd src && ls) || { echo a; echo b; }",
            &["cd src", "ls", "echo a", "echo b"],
        ),
        (
            "echo $(whoami) `date`",
            &["whoami", "date", "echo $(whoami) `date`"],
        ),
        (
            "diff <(ls a) >(cat)",
            &["ls a", "cat", "diff <(ls a) >(cat)"],
        ),
        (
            "bash -c \"ls | wc -l\"",
            &["bash -c ls | wc -l", "ls", "wc -l"],
        ),
        ("eval \"ls -la\"", &["eval ls -la", "ls -la"]),
        (
            "sudo -u bob env FOO=1 timeout 5 rm x",
            &[
                "sudo -u bob env FOO=1 timeout 5 rm x",
                "env FOO=1 timeout 5 rm x",
                "timeout 5 rm x",
                "rm x",
            ],
        ),
        (
            "find . -name '*.rs' -exec grep -l foo {} +",
            &["find . -name *.rs -exec grep -l foo {} +", "grep -l foo {}"],
        ),
        ("xargs -0 rm -f", &["xargs -0 rm -f", "rm -f"]),
        ("x=1 y=$(pwd)", &["pwd"]),
        (
            "cat <<EOF > out.txt\nhello $(whoami)\nEOF",
            &["whoami", "cat"],
        ),
        ("cat <<'EOF' > out.txt\nhello $(whoami)\nEOF", &["cat"]),
        (
            "if true; then echo yes; else echo no; fi",
            &["true", "echo yes", "echo no"],
        ),
        ("for f in a b; do rm \"$f\"; done", &["rm $f"]),
        (
            "while read -r l; do echo \"$l\"; done < list.txt",
            &["read -r l", "echo $l"],
        ),
        ("case $x in a) ls;; *) pwd;; esac", &["ls", "pwd"]),
        ("ls # rm -rf /", &["ls"]),
        ("[ -f x ] && [[ -d y ]]", &["[ -f x ]", "[[ -d y ]]"]),
        ("export A=b; unset C", &["export A=b", "unset C"]),
        ("f() { ls; }; f", &["ls", "f"]),
        ("echo a{b,c}", &["echo ab ac"]),
    ];
    for (command, expected) in cases {
        assert_eq!(texts(&sandbox, command), *expected, "{command:?}");
    }
}

#[test]
fn words_are_shown_after_quote_removal() {
    let sandbox = Sandbox::new();
    let argv = |command: &str| -> Vec<Vec<String>> {
        sandbox
            .analyze(command)
            .commands
            .into_iter()
            .map(|command| command.argv)
            .collect()
    };
    assert_eq!(argv("r''m -rf \"a b\""), [["rm", "-rf", "a b"]]);
    assert_eq!(argv("\\rm -i x"), [["rm", "-i", "x"]]);
    assert_eq!(
        argv("echo 'a'\"b\"c\\ d $'e\\tf'"),
        [["echo", "abc d", "e\tf"]]
    );
    assert_eq!(
        argv("\"$CMD\" --flag \"$HOME/x\" ${Y}"),
        [["$CMD", "--flag", "$HOME/x", "$Y"]]
    );
    assert_eq!(argv("$'\\x72m' x"), [["rm", "x"]]);
}

#[test]
fn simple_command_text_joins_argv_with_single_spaces() {
    assert_eq!(
        SimpleCommand::new(vec!["git".into(), "log".into(), "-1".into()]),
        SimpleCommand {
            argv: vec!["git".into(), "log".into(), "-1".into()],
            text: "git log -1".into(),
        }
    );
}

#[test]
fn a_compound_carries_every_part_and_the_worst_verdict() {
    let sandbox = Sandbox::new();
    assert_eq!(
        sandbox.analyze("git status && rm -rf ~"),
        BashAnalysis {
            commands: vec![
                SimpleCommand::new(vec!["git".into(), "status".into()]),
                SimpleCommand::new(vec!["rm".into(), "-rf".into(), "~".into()]),
            ],
            verdict: BashVerdict::Destructive,
            reasons: vec![
                "rm -rf on the home directory".into(),
                format!("removes {} outside the workspace", sandbox.home.display()),
            ],
            outside_paths: vec![sandbox.home.clone()],
            read_paths: vec![],
            written_paths: vec![sandbox.home.clone()],
            network: false,
            program_options: Vec::new(),
        }
    );
}

#[test]
fn a_read_only_pipeline_is_read_only() {
    let sandbox = Sandbox::new();
    assert_eq!(
        sandbox.analyze("cd src && ls | grep x | wc -l"),
        BashAnalysis {
            commands: ["cd src", "ls", "grep x", "wc -l"]
                .iter()
                .map(|text| SimpleCommand::new(text.split(' ').map(String::from).collect()))
                .collect(),
            verdict: BashVerdict::ReadOnly,
            reasons: vec![],
            outside_paths: vec![],
            read_paths: vec![sandbox.workspace.join("src")],
            written_paths: vec![],
            network: false,
            program_options: Vec::new(),
        }
    );
}

#[test]
fn git_push_needs_approval_and_uses_the_network() {
    let sandbox = Sandbox::new();
    assert_eq!(
        sandbox.analyze("git push origin main"),
        BashAnalysis {
            commands: vec![SimpleCommand::new(
                ["git", "push", "origin", "main"].map(String::from).to_vec()
            )],
            verdict: BashVerdict::NeedsApproval,
            reasons: vec!["`git push` uses the network".into()],
            outside_paths: vec![],
            read_paths: vec![],
            written_paths: vec![],
            network: true,
            program_options: Vec::new(),
        }
    );
}

#[test]
fn a_download_piped_into_a_shell_is_destructive() {
    let sandbox = Sandbox::new();
    assert_eq!(
        sandbox.analyze("curl https://x | sh"),
        BashAnalysis {
            commands: vec![
                SimpleCommand::new(vec!["curl".into(), "https://x".into()]),
                SimpleCommand::new(vec!["sh".into()]),
            ],
            verdict: BashVerdict::Destructive,
            reasons: vec![
                "`curl` uses the network".into(),
                "pipes a download from curl into sh".into(),
            ],
            outside_paths: vec![],
            read_paths: vec![],
            written_paths: vec![],
            network: true,
            program_options: Vec::new(),
        }
    );
}

#[test]
fn substitutions_in_the_command_name_are_reported() {
    let sandbox = Sandbox::new();
    let analysis = sandbox.analyze("$(echo rm) -rf ~");
    assert_eq!(analysis.verdict, BashVerdict::Destructive);
    assert_eq!(
        analysis.reasons,
        [
            "command substitution $(echo rm) runs a command whose name is not known until run time"
                .to_owned(),
            "rm -rf on the home directory".to_owned(),
            format!("removes {} outside the workspace", sandbox.home.display()),
        ]
    );
    let variable = sandbox.analyze("$CMD x");
    assert_eq!(
        (variable.verdict, variable.reasons),
        (
            BashVerdict::NeedsApproval,
            vec!["the command name $CMD is not known until run time".to_owned()]
        )
    );
}

#[test]
fn a_fork_bomb_is_named() {
    let sandbox = Sandbox::new();
    let analysis = sandbox.analyze(":(){ :|:& };:");
    assert_eq!(
        (analysis.verdict, analysis.reasons),
        (
            BashVerdict::Destructive,
            vec![
                "defines the function :, which changes what the name `:` runs".to_owned(),
                "fork bomb: the function : starts copies of itself until the machine runs out of processes"
                    .to_owned()
            ]
        )
    );
}

#[test]
fn parse_errors_are_unanalysable() {
    let sandbox = Sandbox::new();
    let analysis = sandbox.analyze("echo 'unterminated");
    assert_eq!(
        (analysis.verdict, analysis.reasons),
        (
            BashVerdict::Unanalysable,
            vec!["the command could not be parsed near `'unterminated`".to_owned()]
        )
    );
    // What did parse is still judged.
    assert_eq!(
        sandbox.analyze("rm -rf / )").verdict,
        BashVerdict::Destructive
    );
}

#[test]
fn hostile_inputs_do_not_break_the_analysis() {
    let sandbox = Sandbox::new();
    let deep = format!("{}ls{}", "$(".repeat(500), ")".repeat(500));
    assert_eq!(sandbox.analyze(&deep).verdict, BashVerdict::Unanalysable);
    let nested = format!("{}ls{}", "bash -c '".repeat(3), "'".repeat(3));
    assert_eq!(sandbox.analyze(&nested).verdict, BashVerdict::NeedsApproval);
    let braces = format!("echo {}", "{a,b}".repeat(20));
    assert_eq!(sandbox.analyze(&braces).verdict, BashVerdict::ReadOnly);
    assert_eq!(sandbox.analyze("").verdict, BashVerdict::ReadOnly);
    assert_eq!(
        sandbox.analyze("\u{0}\u{1b}[31m").verdict,
        BashVerdict::Unanalysable
    );
}
