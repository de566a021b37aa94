#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

//! Read-only by allowlist: a file reader is read-only only when every option it is given is
//! one its table knows, spelled so that the program reads it as that option, and harmless.
//! The abbreviation class is generated from each command's own table; hand-written instances
//! cover misread values, unlisted options and optional values; a disk test runs some of the
//! refused commands for real and shows they do change the disk.

mod bash_support;

use std::fs;
use std::process::Command;

use bash_support::Sandbox;
use cairn_shell::BashVerdict::{NeedsApproval, ReadOnly};
use cairn_shell::option_tables::{
    CommandTable, OptionArity, OptionEffect, OptionEntry, command_tables,
};
use pretty_assertions::assert_eq;

/// The commands whose first operand is a pattern.
fn operands(table: &CommandTable) -> &'static str {
    match table.command {
        "grep" | "egrep" | "fgrep" | "rg" => "x notes.txt",
        "date" | "hostname" => "",
        _ => "notes.txt",
    }
}

/// A value for an option with `effect` that makes the command do the dangerous thing.
fn dangerous_value(effect: OptionEffect, sandbox: &Sandbox) -> String {
    match effect {
        OptionEffect::Reads => sandbox.home.join(".ssh/id_rsa").display().to_string(),
        OptionEffect::Writes => "out.txt".into(),
        OptionEffect::Runs => "sh".into(),
        OptionEffect::Changes | OptionEffect::Harmless => "list.txt".into(),
    }
}

/// Every long name of `table` that starts with `prefix`, as the distinct options they name.
fn options_with_prefix(table: &CommandTable, prefix: &str) -> usize {
    table
        .options
        .iter()
        .filter(|entry| {
            entry
                .names
                .iter()
                .any(|name| name.starts_with("--") && name.starts_with(prefix))
        })
        .count()
}

/// `--compress-program`'s spellings the program reads as that option: the whole name, and
/// for programs that take prefixes every unambiguous one.
fn spellings(table: &CommandTable, entry: &OptionEntry, name: &str) -> Vec<String> {
    if table.exact || !name.starts_with("--") {
        return vec![name.to_owned()];
    }
    let named_by_another = |prefix: &str| {
        table
            .options
            .iter()
            .any(|other| other != entry && other.names.contains(&prefix))
    };
    (3..=name.len())
        .map(|end| &name[..end])
        .filter(|prefix| {
            entry.names.contains(prefix)
                || (options_with_prefix(table, prefix) == 1 && !named_by_another(prefix))
        })
        .map(str::to_owned)
        .collect()
}

/// One generated attack: the command line and whether it names a program option.
struct Attack {
    line: String,
    runs: Option<String>,
}

fn abbreviation_class(sandbox: &Sandbox) -> Vec<Attack> {
    let mut attacks = Vec::new();
    for table in command_tables() {
        for entry in &table.options {
            if entry.effect == OptionEffect::Harmless {
                continue;
            }
            let value = dangerous_value(entry.effect, sandbox);
            for name in &entry.names {
                for written in spellings(&table, entry, name) {
                    let short = !written.starts_with("--");
                    let forms: Vec<String> = match entry.arity {
                        OptionArity::Flag => vec![written.clone()],
                        OptionArity::Value if short => {
                            vec![format!("{written}{value}"), format!("{written} {value}")]
                        }
                        OptionArity::Value => {
                            vec![format!("{written}={value}"), format!("{written} {value}")]
                        }
                        OptionArity::Optional if short => vec![format!("{written}{value}")],
                        OptionArity::Optional => vec![format!("{written}={value}")],
                    };
                    for form in forms {
                        let line = format!("{} {form} {}", table.command, operands(&table));
                        let runs = (entry.effect == OptionEffect::Runs).then(|| written.clone());
                        attacks.push(Attack { line, runs });
                    }
                }
            }
        }
    }
    attacks
}

#[test]
fn every_spelling_of_every_dangerous_option_is_not_read_only() {
    let sandbox = Sandbox::new();
    let attacks = abbreviation_class(&sandbox);
    assert!(attacks.len() > 300, "only {} attacks", attacks.len());
    eprintln!("{} generated attacks", attacks.len());
    let mut held = Vec::new();
    for attack in &attacks {
        let analysis = sandbox.analyze(&attack.line);
        if analysis.verdict == ReadOnly {
            held.push(format!("{}: read-only", attack.line));
        }
        if let Some(written) = &attack.runs
            && !analysis
                .program_options
                .iter()
                .any(|option| &option.written == written)
        {
            held.push(format!(
                "{}: {written} not among the program options",
                attack.line
            ));
        }
    }
    assert_eq!(held, Vec::<String>::new());
}

#[test]
fn ambiguous_prefixes_and_unknown_options_are_not_read_only() {
    let sandbox = Sandbox::new();
    let mut lines = Vec::new();
    for table in command_tables() {
        let names = table.options.iter().flat_map(|entry| entry.names.iter());
        let known = |text: &str| table.options.iter().any(|e| e.names.contains(&text));
        if !table.exact {
            for name in names.filter(|name| name.starts_with("--")) {
                for end in 3..name.len() {
                    let prefix = &name[..end];
                    if options_with_prefix(&table, prefix) > 1 && !known(prefix) {
                        lines.push(format!("{} {prefix} {}", table.command, operands(&table)));
                    }
                }
            }
        }
        lines.push(format!(
            "{} --cairn-unknown {}",
            table.command,
            operands(&table)
        ));
        let unknown_letter = ('a'..='z')
            .chain('A'..='Z')
            .find(|letter| !known(&format!("-{letter}")))
            .unwrap();
        lines.push(format!(
            "{} -{unknown_letter} {}",
            table.command,
            operands(&table)
        ));
    }
    lines.sort();
    lines.dedup();
    assert!(lines.len() > 200, "only {} lines", lines.len());
    eprintln!("{} ambiguous or unknown", lines.len());
    let read_only: Vec<&String> = lines
        .iter()
        .filter(|line| sandbox.analyze(line).verdict == ReadOnly)
        .collect();
    assert_eq!(read_only, Vec::<&String>::new());
}

/// Fresh instances, by hand, of each class; none of them is read-only.
const REFUSED: &[(&str, &[&str])] = &[
    (
        "abbreviation",
        &[
            "sort --compress-prog=sh notes.txt",
            "sort --out=x notes.txt",
            "sort --temp=/tmp/x notes.txt",
            "wc --files0=list.txt",
            "du --files0-f list.txt",
            "grep --exclude-f=~/.ssh/id_rsa x .",
            "diff3 --diff-p=sh a b c",
            "sdiff --outp=merged a b",
            "shuf --rand=~/.ssh/id_rsa notes.txt",
            "less --log=out notes.txt",
            "less --LOG=out notes.txt",
            "less --lesskey-f=keys notes.txt",
            "date --se=now",
            "iconv --out=x notes.txt",
        ],
    ),
    (
        "misread arity",
        &[
            "uniq -c notes.txt out.txt",
            "uniq -f 1 notes.txt out.txt",
            "uniq --group notes.txt out.txt",
            "pr -S ~/.ssh/id_rsa",
            "pr --sep-string ~/.ssh/id_rsa",
            "od -w ~/.ssh/id_rsa",
            "xxd -ps ~/.ssh/id_rsa",
            "xxd -c8 notes.txt out.bin",
            "tail -f ~/.ssh/id_rsa",
            "ls --color ~/.ssh",
        ],
    ),
    (
        "unlisted option",
        &[
            "sort --presume-x notes.txt",
            "rg --no-follow x",
            "bat --generate-config-file",
            "bat --config-file x notes.txt",
            "tree --hyperlink",
            "less --header 3 notes.txt",
            "grep --cairn x notes.txt",
            "cat -q notes.txt",
            "bat cache --clear",
            "strings @args.txt",
        ],
    ),
    (
        "optional value and initial command",
        &[
            "diff --context ~/.ssh/a b",
            "df --output ~/.ssh",
            "od --strings ~/.ssh/id_rsa",
            "grep --color x ~/.ssh/id_rsa",
            "less '+!sh' notes.txt",
            "less '+|tee x' notes.txt",
            "less '+sout.txt' notes.txt",
            "tree -R -L 1 -H . src",
            "md5sum -c sums.txt",
            "file -C -m magic",
        ],
    ),
];

#[test]
fn hand_written_instances_of_each_class_are_refused() {
    let sandbox = Sandbox::new();
    let mut read_only = Vec::new();
    for (class, lines) in REFUSED {
        assert!(lines.len() >= 5, "{class}");
        for line in *lines {
            let analysis = sandbox.analyze(line);
            if analysis.verdict == ReadOnly {
                read_only.push(format!("{class}: {line}"));
            }
        }
    }
    assert_eq!(read_only, Vec::<String>::new());
}

#[test]
fn everyday_commands_stay_read_only() {
    let sandbox = Sandbox::new();
    let everyday = [
        "grep -rn foo src",
        "grep -E 'a|b' -C 3 notes.txt",
        "grep --include='*.rs' -rl TODO .",
        "sort -u notes.txt",
        "sort -t: -k2,2n notes.txt",
        "sort --rev notes.txt",
        "head -n 5 notes.txt",
        "head -5 notes.txt",
        "ls -la",
        "ls --col=never -1 src",
        "wc -l src/*.rs",
        "tail -f log.txt",
        "tail -n +3 notes.txt",
        "diff -u a.txt b.txt",
        "diff -ru src other",
        "rg -n foo",
        "rg -g '*.rs' --files",
        "cut -d, -f1 notes.txt",
        "uniq -c notes.txt",
        "nl -ba notes.txt",
        "od -An -tx1 notes.txt",
        "xxd -l 64 notes.txt",
        "xxd -ps notes.txt",
        "less -R notes.txt",
        "less +G notes.txt",
        "bat -n --paging=never notes.txt",
        "tree -L 2 src",
        "du -sh src",
        "stat -c %s notes.txt",
        "file -b notes.txt",
        "date +%s",
        "date -u --iso-8601=seconds",
        "pr -S: notes.txt",
        "md5sum notes.txt",
        "cmp -s a b",
        "comm -12 a b",
        "hostname -f",
    ];
    let refused: Vec<(&str, Vec<String>)> = everyday
        .iter()
        .map(|line| (*line, sandbox.analyze(line)))
        .filter(|(_, analysis)| analysis.verdict != ReadOnly)
        .map(|(line, analysis)| (line, analysis.reasons))
        .collect();
    assert_eq!(refused, Vec::<(&str, Vec<String>)>::new());
}

/// Runs `line` with `sh` in the workspace and returns the names of the files there after.
fn run_for_real(sandbox: &Sandbox, line: &str) -> Vec<String> {
    let status = Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(&sandbox.workspace)
        .status()
        .unwrap();
    assert!(status.success(), "{line}");
    let mut names: Vec<String> = fs::read_dir(&sandbox.workspace)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The refused commands do change the disk when run: the verdict was right to refuse.
#[test]
fn refused_readers_really_write() {
    let cases: &[(&str, &str)] = &[
        (
            "sort --compress-prog=./compress.sh -S 64k -T . input.txt > /dev/null",
            "ran-compressor",
        ),
        ("sort --out=sorted.txt input.txt", "sorted.txt"),
        ("uniq -c input.txt counted.txt", "counted.txt"),
        ("shuf --outp=shuffled.txt input.txt", "shuffled.txt"),
    ];
    for (line, created) in cases {
        let sandbox = Sandbox::new();
        let workspace = &sandbox.workspace;
        let lines: String = (0..60_000)
            .map(|n| format!("{}\n", n * 7919 % 60_000))
            .collect();
        fs::write(workspace.join("input.txt"), lines).unwrap();
        fs::write(
            workspace.join("compress.sh"),
            "#!/bin/sh\ntouch ran-compressor\nexec cat\n",
        )
        .unwrap();
        Command::new("chmod")
            .args(["+x", "compress.sh"])
            .current_dir(workspace)
            .status()
            .unwrap();
        let analysis = sandbox.analyze(line);
        assert_eq!(analysis.verdict, NeedsApproval, "{line}");
        let after = run_for_real(&sandbox, line);
        assert!(
            after.iter().any(|name| name == created),
            "{line} did not create {created}: {after:?}"
        );
    }
}
