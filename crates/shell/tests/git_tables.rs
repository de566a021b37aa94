#![cfg(feature = "interop")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

//! git's option tables against the git installed: every option git's own completion helper
//! lists (`git <cmd> --git-completion-helper-all`, which unlike `-h` includes hidden options
//! and every negation) must be in the table, and one git lists as taking a value (`--output=`)
//! must take one there too. git's own options are checked against its usage text. Needs
//! git; run with `cargo test -p cairn-shell --features interop --test git_tables`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use cairn_shell::git_tables::{self, Arity, Layer};
use pretty_assertions::assert_eq;

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    text
}

/// Every long name in `layers`, with its arity.
fn arities(layers: &[Layer]) -> BTreeMap<&'static str, Arity> {
    let mut names = BTreeMap::new();
    for option in layers.iter().flat_map(|layer| &layer.options) {
        for name in option.names {
            names.entry(*name).or_insert(option.arity);
        }
    }
    names
}

#[test]
fn every_option_git_lists_is_in_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let mut missing = Vec::new();
    let mut checked = 0;
    for form in git_tables::checked() {
        let known = arities(&form.layers);
        let mut args: Vec<&str> = form.words.split(' ').collect();
        args.push("--git-completion-helper-all");
        let listed = git(dir.path(), &args);
        let names: Vec<&str> = listed
            .split_whitespace()
            .filter(|word| word.starts_with("--") && *word != "--")
            .collect();
        assert!(
            !names.is_empty(),
            "git {} lists nothing: {listed}",
            form.words
        );
        for listed in names {
            checked += 1;
            let name = listed.trim_end_matches('=');
            match known.get(name) {
                None => missing.push(format!("git {} {name}: not in the table", form.words)),
                Some(arity) if listed.ends_with('=') && *arity != Arity::Value => {
                    missing.push(format!(
                        "git {} {name}: takes a value, the table says {arity:?}",
                        form.words
                    ))
                }
                Some(_) => {}
            }
        }
    }
    assert_eq!(missing, Vec::<String>::new());
    assert!(checked > 500, "only {checked} options checked");
}

#[test]
fn every_option_git_itself_takes_is_in_the_global_table() {
    let dir = tempfile::tempdir().unwrap();
    let usage = git(dir.path(), &[]);
    let usage = usage.split("<command>").next().unwrap();
    let known = arities(&[git_tables::global()]);
    let mut missing = Vec::new();
    for word in usage.split(|c: char| c.is_whitespace() || "[]|".contains(c)) {
        if !word.starts_with('-') || word.len() < 2 {
            continue;
        }
        let name = word.split('=').next().unwrap();
        if !known.contains_key(name) {
            missing.push(name.to_owned());
        }
    }
    assert_eq!(missing, Vec::<String>::new());
}
