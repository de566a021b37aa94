#![cfg(feature = "interop")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

//! Each option table against the installed program: every option its `--help` (or manual)
//! lists is in the table with the arity the help shows, and, for programs built on GNU
//! `getopt_long`, the program itself is asked about every long-option prefix and every short
//! letter, so hidden options are found too and every table entry is one the program has, with
//! the arity it has. Needs the programs: coreutils, diffutils, grep, file, binutils, libc-bin,
//! bsdextrautils, util-linux, gzip, less, xxd, bat, ripgrep, tree.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

use cairn_shell::option_tables::{CommandTable, OptionArity, command_tables};
use pretty_assertions::assert_eq;

const BOGUS: &str = "--cairn-probe-no-such-option";

/// Runs `program args` in `dir` with no input and a time limit; returns what it printed.
fn run(dir: &Path, program: &str, args: &[&str]) -> String {
    let output = Command::new("timeout")
        .arg("5")
        .arg(program)
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .env("HOME", dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("run {program}: {error}"));
    let mut text = String::from_utf8_lossy(&output.stderr).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stdout));
    text
}

/// The program a command runs: `egrep` and `fgrep` are grep, `batcat` is bat.
fn program(command: &str) -> &str {
    match command {
        "bat" => "batcat",
        other => other,
    }
}

/// Programs built on GNU `getopt_long`, whose messages the probes read.
fn uses_getopt(command: &str) -> bool {
    !matches!(command, "less" | "bat" | "batcat" | "rg" | "tree" | "xxd")
}

fn long_names(table: &CommandTable) -> BTreeSet<&'static str> {
    table
        .options
        .iter()
        .flat_map(|entry| entry.names.iter().copied())
        .filter(|name| name.starts_with("--"))
        .collect()
}

fn arity_of(table: &CommandTable, name: &str) -> Option<OptionArity> {
    table
        .options
        .iter()
        .find(|entry| entry.names.contains(&name))
        .map(|entry| entry.arity)
}

/// The option names `--help` (or the manual) lists, with the arity shown where it shows one.
fn help_options(dir: &Path, command: &str) -> Vec<(String, Option<OptionArity>)> {
    let text = match command {
        "less" | "xxd" | "tree" => {
            let manual = Command::new("man")
                .args(["-P", "cat", command])
                .env("MANWIDTH", "200")
                .env("LC_ALL", "C")
                .output()
                .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
                .unwrap_or_default();
            let help = if command == "xxd" {
                run(dir, command, &["-h"])
            } else {
                run(dir, program(command), &["--help"])
            };
            if command == "less" { manual } else { help }
        }
        _ => run(dir, program(command), &["--help"]),
    };
    let mut found = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        if !line.starts_with('-') {
            continue;
        }
        let spec = line.split("  ").next().unwrap_or_default();
        for token in spec.split([',', ' ']) {
            let Some(rest) = token.strip_prefix("--") else {
                continue;
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if name.is_empty() || name.ends_with('-') || skipped(command, &name) {
                continue;
            }
            let after = &rest[name.len()..];
            let arity = if after.starts_with("[=") {
                Some(OptionArity::Optional)
            } else if after.starts_with('=')
                && !after[1..].starts_with(|c: char| c.is_ascii_lowercase())
            {
                Some(OptionArity::Value)
            } else {
                None
            };
            found.push((format!("--{name}"), arity));
        }
    }
    found
}

/// Words the help shows like options that are not (placeholders, other programs' options).
fn skipped(command: &str, name: &str) -> bool {
    matches!(
        (command, name),
        ("diff", "GTYPE-group-format" | "LTYPE-line-format")
            | (
                "tree",
                "gitfile" | "hintro" | "houtro" | "infofile" | "charset" | "timefmt" | "sort"
            )
            | ("bat", "paging" | "diff-context" | "style")
            | ("batcat", "paging" | "diff-context" | "style")
            | ("date", "rfc-3339" | "iso-8601")
            | ("sort", "check")
            | ("ls", "indicator-style")
            | ("du", "time")
    ) || name.chars().all(|c| c.is_ascii_uppercase() || c == '-') && command != "less"
}

/// What getopt_long says about `--prefix`.
enum Prefix {
    Unknown,
    Ambiguous(Vec<String>),
    Accepted,
}

fn probe_prefix(dir: &Path, command: &str, prefix: &str) -> Prefix {
    let text = run(dir, program(command), &[&format!("--{prefix}"), BOGUS]);
    if text.contains(&format!("unrecognized option '--{prefix}'")) {
        return Prefix::Unknown;
    }
    let marker = format!("option '--{prefix}' is ambiguous; possibilities:");
    if let Some(at) = text.find(&marker) {
        let list = text[at + marker.len()..].lines().next().unwrap_or_default();
        let names = list
            .split('\'')
            .filter(|part| part.starts_with("--"))
            .map(str::to_owned)
            .collect();
        return Prefix::Ambiguous(names);
    }
    Prefix::Accepted
}

/// The differences between `table` and what the getopt_long program itself accepts.
fn getopt_mismatches(dir: &Path, table: &CommandTable) -> Vec<String> {
    let command = table.command;
    let longs = long_names(table);
    let mut wrong = Vec::new();
    let characters = ('a'..='z').chain('A'..='Z').chain('0'..='9');
    for first in characters.clone() {
        let in_table: Vec<&&str> = longs
            .iter()
            .filter(|name| name[2..].starts_with(first))
            .collect();
        match probe_prefix(dir, command, &first.to_string()) {
            Prefix::Unknown if !in_table.is_empty() => {
                wrong.push(format!(
                    "{command}: has no --{first}…, the table has {in_table:?}"
                ));
            }
            Prefix::Ambiguous(names) => {
                for name in names {
                    if !longs.contains(name.as_str()) {
                        wrong.push(format!("{command}: the table misses {name}"));
                    }
                }
            }
            Prefix::Accepted if in_table.is_empty() => {
                wrong.push(format!("{command}: the table misses an option --{first}…"));
            }
            Prefix::Unknown | Prefix::Accepted => {}
        }
    }
    for name in &longs {
        let arity = arity_of(table, name).unwrap();
        let with_value = run(dir, program(command), &[&format!("{name}=x"), BOGUS]);
        if with_value.contains(&format!("unrecognized option '{name}")) {
            wrong.push(format!("{command}: has no option {name}"));
            continue;
        }
        let refuses_value =
            with_value.contains(&format!("option '{name}' doesn't allow an argument"));
        let needs_value = if arity == OptionArity::Value || !refuses_value {
            run(dir, program(command), &[name])
                .contains(&format!("option '{name}' requires an argument"))
        } else {
            false
        };
        let actual = match (refuses_value, needs_value) {
            (true, _) => OptionArity::Flag,
            (false, true) => OptionArity::Value,
            (false, false) => OptionArity::Optional,
        };
        if actual != arity && !exits_at_once(name) {
            wrong.push(format!(
                "{command} {name}: the program takes it as {actual:?}, the table as {arity:?}"
            ));
        }
    }
    for letter in characters {
        if table.numeric && letter.is_ascii_digit() {
            continue;
        }
        let short = format!("-{letter}");
        let text = run(dir, program(command), &[&short, BOGUS]);
        let known = !text.contains(&format!("invalid option -- '{letter}'"));
        match (known, arity_of(table, &short)) {
            (true, None) => wrong.push(format!("{command}: the table misses {short}")),
            (false, Some(_)) => wrong.push(format!("{command}: has no option {short}")),
            (true, Some(arity)) => {
                let needs_value = run(dir, program(command), &[&short])
                    .contains(&format!("requires an argument -- '{letter}'"));
                if needs_value != (arity == OptionArity::Value) {
                    wrong.push(format!("{command} {short}: the program needs a value: {needs_value}, the table says {arity:?}"));
                }
            }
            (false, None) => {}
        }
    }
    wrong
}

/// `--help` and `--version` print and exit before the rest of the line is read.
fn exits_at_once(name: &str) -> bool {
    matches!(
        name,
        "--help" | "--version" | "--usage" | "--license" | "--HANG"
    )
}

/// Table names a program without getopt's messages does not accept.
fn refused_names(dir: &Path, table: &CommandTable) -> Vec<String> {
    let mut wrong = Vec::new();
    for entry in &table.options {
        for name in &entry.names {
            if exits_at_once(name)
                || matches!(*name, "-h" | "-V" | "-v" | "-?" | "-help" | "-version")
            {
                continue;
            }
            let mut args = vec![name.to_string()];
            if entry.arity == OptionArity::Value {
                args.push("1".into());
            }
            args.push("/dev/null".into());
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let text = run(dir, program(table.command), &args);
            let refused = [
                "wasn't expected",
                "Invalid argument",
                "There is no",
                "unknown option",
                "is an ambiguous",
            ]
            .iter()
            .any(|marker| text.contains(marker));
            if refused {
                wrong.push(format!(
                    "{}: refuses {name}: {}",
                    table.command,
                    text.lines().next().unwrap_or_default()
                ));
            }
        }
    }
    wrong
}

#[test]
fn every_table_matches_its_program() {
    let dir = tempfile::tempdir().unwrap();
    let mut wrong = Vec::new();
    for table in command_tables() {
        let command = table.command;
        let shown = program(command);
        for (name, arity) in help_options(dir.path(), command) {
            match (arity_of(&table, &name), arity) {
                (None, _) => wrong.push(format!("{shown} --help lists {name}, the table does not")),
                (Some(have), Some(shows)) if have != shows && !exits_at_once(&name) => wrong.push(
                    format!("{shown} --help shows {name} as {shows:?}, the table has {have:?}"),
                ),
                (Some(_), _) => {}
            }
        }
        if uses_getopt(command) {
            wrong.extend(getopt_mismatches(dir.path(), &table));
        } else {
            wrong.extend(refused_names(dir.path(), &table));
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}
