#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

//! git by allowlist: a git command is read-only only when every option it is given is one
//! git's tables know, spelled as git reads it, and harmless. The abbreviation class is
//! generated from the tables themselves; the rest are hand-written instances of each class,
//! and the everyday commands that must stay read-only. One test runs a few of the attacks for
//! real, to show that they do what the analysis refuses.

mod bash_support;

use std::path::Path;
use std::process::Command;

use bash_support::Sandbox;
use cairn_shell::git_tables::{self, Arity, Effect, Form};
use cairn_shell::{BashAnalysis, BashVerdict};
use pretty_assertions::assert_eq;

fn git_init(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let status = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success());
}

/// A sandbox whose workspace is a git repository, as cairn's usually is.
fn repository() -> Sandbox {
    let sandbox = Sandbox::new();
    git_init(&sandbox.workspace);
    sandbox
}

fn program_options(analysis: &BashAnalysis) -> Vec<String> {
    analysis
        .program_options
        .iter()
        .map(|option| option.canonical.clone())
        .collect()
}

/// Every long name of every option of a form, across its tables.
fn long_names(form: &Form) -> Vec<&'static str> {
    form.layers
        .iter()
        .flat_map(|layer| &layer.options)
        .flat_map(|option| option.names.iter().copied())
        .filter(|name| name.starts_with("--"))
        .collect()
}

/// The value an attack gives an option of this effect.
fn hostile_value(effect: Effect) -> &'static str {
    match effect {
        Effect::Runs => "'sh -c \"touch pwned\"'",
        Effect::Reads => "/etc/passwd",
        Effect::Writes | Effect::Changes | Effect::Harmless => "out.txt",
    }
}

/// Every unambiguous prefix of every option that writes, reads, runs or changes, of every
/// reading form, with `=`, separate and short spellings: none is read-only, and one that
/// runs a program, where git reads it as that option, is a program option.
#[test]
fn abbreviations_of_dangerous_options_are_never_read_only() {
    let sandbox = repository();
    let mut failures = Vec::new();
    let mut tried = 0;
    for form in git_tables::read_forms() {
        let longs = long_names(&form);
        // The rest of the command, read-only alone: the verdict is the option's doing.
        let rest = match form.words {
            "grep" => " -e x",
            "config" => " --list",
            _ => "",
        };
        let control = format!("git {}{rest}", form.words);
        if form.words != "difftool" {
            assert_eq!(
                sandbox.analyze(&control).verdict,
                BashVerdict::ReadOnly,
                "{control}"
            );
        }
        for layer in &form.layers {
            for option in &layer.options {
                if option.effect == Effect::Harmless {
                    continue;
                }
                let canonical = option
                    .names
                    .iter()
                    .find(|name| name.starts_with("--"))
                    .or(option.names.first())
                    .copied()
                    .unwrap();
                let value = hostile_value(option.effect);
                for name in option.names.iter().copied() {
                    let spellings: Vec<&str> = if name.starts_with("--") {
                        (3..=name.len())
                            .map(|end| &name[..end])
                            .filter(|prefix| {
                                longs
                                    .iter()
                                    .filter(|other| other.starts_with(prefix))
                                    .all(|other| option.names.contains(other))
                            })
                            .collect()
                    } else {
                        vec![name]
                    };
                    for spelling in spellings {
                        let reads_as_option = spelling == name || layer.prefixes;
                        let attached = if spelling.starts_with("--") {
                            format!("{spelling}={value}")
                        } else {
                            format!("{spelling}{value}")
                        };
                        let commands = match option.arity {
                            Arity::Flag => vec![spelling.to_owned()],
                            Arity::Value => vec![attached, format!("{spelling} {value}")],
                            Arity::Optional => vec![attached, spelling.to_owned()],
                        };
                        for arguments in commands {
                            let command = format!("git {} {arguments}{rest}", form.words);
                            tried += 1;
                            let analysis = sandbox.analyze(&command);
                            if analysis.verdict == BashVerdict::ReadOnly {
                                failures.push(format!("{command}: read-only"));
                            }
                            let listed = program_options(&analysis).contains(&canonical.into());
                            if option.effect == Effect::Runs && reads_as_option && !listed {
                                failures.push(format!("{command}: no program option"));
                            }
                        }
                    }
                }
            }
        }
    }
    assert_eq!(failures, Vec::<String>::new());
    assert!(tried > 300, "only {tried} attacks generated");
}

/// Hand-written instances, each with the verdict it must not get below and the program
/// option it must name (if any).
const ATTACKS: &[(&str, &[&str])] = &[
    // Abbreviations.
    (
        "git grep --open-files-in-p=vi -e TODO",
        &["--open-files-in-pager"],
    ),
    (
        "git grep --no-index --ope='sh -c id' -e x",
        &["--open-files-in-pager"],
    ),
    ("git grep -Ovim -n foo", &["--open-files-in-pager"]),
    ("git grep -nO -e foo", &["--open-files-in-pager"]),
    ("git grep --textc -e foo", &["--textconv"]),
    ("git blame --cont /etc/passwd README.md", &[]),
    ("git blame --ignore-revs-f ../../outside README.md", &[]),
    ("git ls-files --exclude-fr=/etc/shadow", &[]),
    ("git cat-file --filt --path=a HEAD:a", &["--filters"]),
    ("git range-diff --out=x.patch a...b", &[]),
    ("git range-diff --ext-d a...b", &["--ext-diff"]),
    // Abbreviations git refuses for log and diff, where the next argument still counts.
    ("git log --out=../x", &[]),
    ("git log --auth --output=out.txt", &[]),
    ("git diff --ext", &[]),
    ("git show --textc HEAD", &[]),
    // Full names that write, read or run.
    ("git log -p --ext-diff", &["--ext-diff"]),
    ("git show --textconv HEAD:a.bin", &["--textconv"]),
    ("git diff --output=notes.txt", &[]),
    ("git diff -O/etc/passwd", &[]),
    ("git log --show-signature -1", &["--show-signature"]),
    ("git tag -v v1", &["--verify"]),
    // Negations: turning a program off is harmless, but they hide nothing.
    ("git grep --no-index -O -e x", &["--open-files-in-pager"]),
    ("git grep --no-op --op=vi -e x", &["--open-files-in-pager"]),
    ("git grep --no-open=vi -e x", &[]),
    ("git grep --no- -e x", &[]),
    ("git diff --no-no-ext-diff", &[]),
    ("git log --no-ext-diff --ext-diff -p", &["--ext-diff"]),
    // git's own options.
    ("git -p log", &["--paginate"]),
    ("git --paginate status", &["--paginate"]),
    ("git --exec-path=/tmp/bin status", &["--exec-path"]),
    ("git --no-pag status", &[]),
    ("git --git-d=/tmp/x status", &[]),
    ("git -c core.pager='sh -c id' log", &[]),
    ("git --config-env=core.pager=EDITOR log", &[]),
    ("git -c alias.st='!id' st", &[]),
    // Another repository's configuration.
    ("git --git-dir=/tmp/evil/.git status", &["--git-dir"]),
    ("git --git-dir /tmp/evil log", &["--git-dir"]),
    ("git --git-dir=src/.git status", &["--git-dir"]),
    ("git --work-tree=/tmp status", &["--work-tree"]),
    ("git --work-tree=src diff", &["--work-tree"]),
    ("git -C /tmp status", &[]),
    ("git -C ../../evil status", &["-C"]),
    ("git -C src/bare log", &["-C"]),
    ("cd src/bare && git log -1", &[]),
    ("git --bare log", &["--bare"]),
    ("git --bare -C src status", &["--bare"]),
    ("GIT_DIR=/tmp/evil git status", &[]),
    ("env GIT_WORK_TREE=/tmp git status", &[]),
    // Pager and diff programs.
    ("git difftool -x 'sh -c id' HEAD", &["--extcmd"]),
    ("git difftool --extcmd=vimdiff", &["--extcmd"]),
    // difftool takes full names only: git refuses `--ext=`, and so is it asked about.
    ("git difftool --ext=cat", &[]),
    ("git difftool -t vimdiff", &["--tool"]),
    ("git difftool --tool=meld HEAD~1", &["--tool"]),
    ("git difftool --dir-diff", &["--dir-diff"]),
    // Subcommands that read the repository but write or run.
    ("git archive -o ../../release.tar HEAD", &[]),
    ("git archive --format=tgz HEAD", &[]),
    // Unknown options and options whose name is not known until run time.
    ("git status --frobnicate", &[]),
    ("git log --$OPT", &[]),
    ("git grep -$F x", &[]),
];

#[test]
fn hand_written_attacks_are_not_read_only() {
    let sandbox = repository();
    std::fs::create_dir_all(sandbox.workspace.join("src/.git")).unwrap();
    // A repository outside the workspace, and a bare one inside it (three plain files).
    git_init(&sandbox.base.join("evil"));
    let bare = sandbox.workspace.join("src/bare");
    std::fs::create_dir_all(bare.join("objects")).unwrap();
    std::fs::create_dir_all(bare.join("refs")).unwrap();
    std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let mut failures = Vec::new();
    for (command, programs) in ATTACKS {
        let analysis = sandbox.analyze(command);
        if analysis.verdict == BashVerdict::ReadOnly {
            failures.push(format!("{command}: read-only"));
        }
        let listed = program_options(&analysis);
        for program in *programs {
            if !listed.contains(&(*program).to_owned()) {
                failures.push(format!("{command}: {program} not in {listed:?}"));
            }
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}

/// What a developer types every day.
const EVERYDAY: &[&str] = &[
    "git status",
    "git status -sb",
    "git status --porcelain=v1",
    "git status --porc",
    "git log --oneline -5",
    "git log --oneline --graph --all --decorate",
    "git log -n 3 --stat",
    "git log -n5 --format='%h %s' --author=me --since=2.weeks",
    "git log -p -- src/",
    "git log --follow -p README.md",
    "git log -L 1,5:README.md",
    "git diff",
    "git diff --stat HEAD~1",
    "git diff --cached --name-only",
    "git diff --no-ext-diff --color=never HEAD",
    "git diff -U5 --word-diff main...HEAD",
    "git show HEAD:README.md",
    "git show --stat --oneline HEAD",
    "git grep -n foo",
    "git grep -niw --heading -e foo -- src",
    "git grep -5 foo",
    "git grep --no-op -e foo",
    "git grep --no-index -l foo",
    "git blame -L 1,5 README.md",
    "git blame -w -C -M README.md",
    "git blame --porc README.md",
    "git branch -a",
    "git branch -vv",
    "git branch --merged main",
    "git branch --list 'feat*'",
    "git branch --show-current",
    "git tag -l 'v*'",
    "git tag --sort=-creatordate",
    "git remote -v",
    "git remote get-url origin",
    "git stash list",
    "git stash show -p stash@{0}",
    "git worktree list --porcelain",
    "git rev-parse --show-toplevel",
    "git rev-parse --abbrev-ref HEAD",
    "git ls-files -m",
    "git ls-files --others --exclude-standard",
    "git cat-file -p HEAD",
    "git describe --tags --always",
    "git for-each-ref --format='%(refname)' refs/heads",
    "git shortlog -sn",
    "git shortlog --summ HEAD",
    "git config --get user.email",
    "git config get user.name",
    "git config --list --show-origin",
    "git reflog -5",
    "git reflog show main",
    "git rev-list --count HEAD",
    "git merge-base main HEAD",
    "git --no-pager log -1",
    "git -P diff",
    "git -C src status",
    "git --git-dir=.git status",
    "git -c color.ui=always log -1",
    "git submodule status",
    "git clean -n -d",
];

#[test]
fn everyday_commands_stay_read_only() {
    let sandbox = repository();
    let mut failures = Vec::new();
    for command in EVERYDAY {
        let analysis = sandbox.analyze(command);
        if analysis.verdict != BashVerdict::ReadOnly {
            failures.push(format!("{command}: {:?}", analysis.reasons));
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}

fn sh(dir: &Path, command: &str) {
    let output = Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    // Some of these make git fail after the damage is done (`--auth` is refused).
    let _ = output;
}

/// The attacks do what the analysis refuses: run here, in a scratch repository, they run a
/// program and write files.
#[test]
fn the_refused_commands_really_run_programs_and_write_files() {
    let sandbox = repository();
    let work = &sandbox.workspace;
    std::fs::write(work.join("a.txt"), "x marks the spot\n").unwrap();
    let attacks = [
        (
            "git grep --no-index --open='touch ran-pager' -e x",
            "ran-pager",
        ),
        ("git grep --no-index -O'touch ran-short' -e x", "ran-short"),
        (
            "git diff --no-index --output=wrote-diff a.txt /dev/null",
            "wrote-diff",
        ),
        ("git log --auth --output=wrote-log", "wrote-log"),
    ];
    for (command, marker) in attacks {
        let analysis = sandbox.analyze(command);
        assert_ne!(analysis.verdict, BashVerdict::ReadOnly, "{command}");
        assert!(!work.join(marker).exists(), "{marker} before {command}");
        sh(work, command);
        assert!(
            work.join(marker).exists(),
            "{command} did not make {marker}"
        );
    }
}
