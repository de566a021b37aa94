//! `git`: which subcommands only read, which use the network, and which rewrite history or
//! throw work away.

use std::path::PathBuf;

use super::classify::{Analyzer, Site};
use super::globs::quoted_path;
use super::options::{Args, OptionSpec, parse_args};
use super::word::Word;

/// Subcommands that only read the repository.
const READ_ONLY: &[&str] = &[
    "status",
    "log",
    "show",
    "diff",
    "shortlog",
    "whatchanged",
    "diff-tree",
    "diff-files",
    "diff-index",
    "range-diff",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "blame",
    "annotate",
    "cat-file",
    "describe",
    "show-ref",
    "for-each-ref",
    "rev-list",
    "merge-base",
    "name-rev",
    "count-objects",
    "check-ignore",
    "check-attr",
    "check-ref-format",
    "var",
    "version",
    "help",
    "cherry",
    "show-branch",
    "grep",
];

/// Subcommands that talk to a remote.
const NETWORK: &[&str] = &[
    "push",
    "fetch",
    "pull",
    "clone",
    "ls-remote",
    "fetch-pack",
    "send-pack",
    "send-email",
    "archive",
];

/// Configuration sections whose keys only change how git shows things (`color.ui`,
/// `advice.detachedHead`): no key in them names a program or a file git reads.
const HARMLESS_SECTIONS: &[&str] = &["color", "advice", "column", "i18n"];

/// Single configuration keys that only change how git shows things or what it records.
const HARMLESS_KEYS: &[&str] = &[
    "core.quotepath",
    "core.abbrev",
    "diff.noprefix",
    "diff.renames",
    "diff.mnemonicprefix",
    "diff.relative",
    "log.date",
    "log.decorate",
    "log.abbrevcommit",
    "log.follow",
    "status.short",
    "status.branch",
    "user.name",
    "user.email",
    "init.defaultbranch",
];

/// Whether a configuration key (lower-cased) can make git run a program of the setter's
/// choosing: at once (`core.pager`, `alias.x=!cmd`) or at the next git command in this
/// repository (`core.fsmonitor`, `core.hooksPath`), cairn's own included.
fn runs_a_program(key: &str) -> bool {
    const KEYS: &[&str] = &[
        "core.pager",
        "core.editor",
        "core.sshcommand",
        "core.fsmonitor",
        "core.hookspath",
        "core.askpass",
        "core.gitproxy",
        "core.worktree",
        "diff.external",
        "sequence.editor",
        "gpg.program",
        "credential.helper",
        "uploadpack.packobjectshook",
        "interactive.difffilter",
        "include.path",
        "init.templatedir",
        "web.browser",
        "ssh.variant",
    ];
    const SECTIONS: &[&str] = &[
        "alias.",
        "filter.",
        "pager.",
        "includeif.",
        "protocol.",
        "mergetool.",
        "difftool.",
        "merge.",
        "browser.",
        "man.",
        "sendemail.",
        "url.",
        "remote.",
        "submodule.",
        "tar.",
        "gpg.",
        "credential.",
    ];
    const SUFFIXES: &[&str] = &[".textconv", ".command", ".driver", ".cmd", ".program"];
    KEYS.contains(&key)
        || SECTIONS.iter().any(|section| key.starts_with(section))
        || SUFFIXES.iter().any(|suffix| key.ends_with(suffix))
}

/// Whether a configuration key (lower-cased) is known to be harmless to set.
fn is_harmless(key: &str) -> bool {
    HARMLESS_KEYS.contains(&key)
        || key
            .split_once('.')
            .is_some_and(|(section, rest)| HARMLESS_SECTIONS.contains(&section) && !rest.is_empty())
}

pub(crate) fn judge(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let mut index = 0;
    let mut dir: Option<Option<PathBuf>> = None;
    while let Some(word) = args.get(index) {
        let Some(text) = word.literal() else {
            break;
        };
        match text.as_str() {
            "-C" => {
                if let Some(target) = args.get(index + 1) {
                    an.read_path(target, site);
                    let base = dir.clone().unwrap_or_else(|| site.cwd.map(PathBuf::from));
                    dir = Some(an.places.change_dir(base.as_deref(), target));
                }
                index += 2;
            }
            "-c" => {
                if let Some(setting) = args.get(index + 1) {
                    config_override(an, "-c", setting);
                }
                index += 2;
            }
            "--config-env" => {
                if let Some(setting) = args.get(index + 1) {
                    config_override(an, "--config-env", setting);
                }
                index += 2;
            }
            _ if text.starts_with("--config-env=") => {
                if let Some(setting) = word.without_prefix("--config-env=".len()) {
                    config_override(an, "--config-env", &setting);
                }
                index += 1;
            }
            "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" => {
                if let Some(target) = args.get(index + 1) {
                    an.read_path(target, site);
                }
                index += 2;
            }
            "--version" | "-v" | "--help" | "-h" | "--html-path" | "--man-path" | "--info-path"
            | "--exec-path" => return,
            _ if text.starts_with("--git-dir=") || text.starts_with("--work-tree=") => {
                if let Some(target) = text.find('=').and_then(|at| word.without_prefix(at + 1)) {
                    an.read_path(&target, site);
                }
                index += 1;
            }
            _ if text.starts_with("--exec-path=") => {
                an.unanalysable(format!("`git {text}` changes which programs git runs"));
                index += 1;
            }
            _ if text.starts_with('-') => index += 1,
            _ => break,
        }
    }
    let site = match &dir {
        Some(dir) => Site {
            cwd: dir.as_deref(),
            ..site
        },
        None => site,
    };
    let Some(subcommand) = args.get(index) else {
        return;
    };
    let Some(subcommand) = subcommand.literal() else {
        an.needs_approval(format!(
            "the git subcommand {} is not known until run time",
            subcommand.display()
        ));
        return;
    };
    let rest = args.get(index + 1..).unwrap_or_default();
    for arg in rest {
        an.argument_path("git", arg, site);
    }
    let sub = subcommand.as_str();
    if NETWORK.contains(&sub) && (sub != "archive" || has_word_prefix(rest, "--remote")) {
        an.uses_network(&format!("git {sub}"));
    }
    match sub {
        "push" => push(an, rest),
        "reset" => {
            if parse(rest, &[]).has(&["--hard"]) {
                an.destructive("git reset --hard discards uncommitted changes");
            } else {
                changes(an, sub);
            }
        }
        "clean" => {
            let parsed = parse(rest, &["-e", "--exclude"]);
            if parsed.has(&["-n", "--dry-run"]) {
                return;
            }
            // Without `-f` it deletes too when `clean.requireForce` is false.
            an.destructive("git clean deletes untracked files");
        }
        "checkout" => checkout(an, rest, site),
        "restore" => {
            let parsed = parse(rest, &["-s", "--source", "--pathspec-from-file"]);
            let worktree = parsed.has(&["-W", "--worktree"]) || !parsed.has(&["-S", "--staged"]);
            if worktree {
                an.destructive("git restore discards uncommitted changes to the files");
            } else {
                changes(an, sub);
            }
        }
        "switch" => {
            let parsed = parse(
                rest,
                &["-c", "-C", "--create", "--force-create", "--orphan"],
            );
            if parsed.has(&["-f", "--force", "--discard-changes"]) {
                an.destructive("git switch --discard-changes throws away uncommitted changes");
            } else {
                changes(an, sub);
            }
        }
        "branch" => branch(an, rest),
        "tag" => tag(an, rest),
        "remote" => remote(an, rest),
        "config" => config(an, rest, site),
        "stash" => match first_operand(rest).as_deref() {
            Some(action @ ("drop" | "clear")) => {
                an.destructive(format!("git stash {action} throws away stashed changes"));
            }
            _ => list_or_show(an, sub, rest, &["list", "show"]),
        },
        "worktree" => list_or_show(an, sub, rest, &["list"]),
        "notes" => list_or_show(an, sub, rest, &["list", "show"]),
        "submodule" => submodule(an, rest),
        "reflog" => {
            let action = first_operand(rest);
            if matches!(action.as_deref(), Some("expire" | "delete" | "drop")) {
                changes(an, &format!("reflog {}", action.unwrap_or_default()));
            }
        }
        _ if READ_ONLY.contains(&sub) => read_only_options(an, sub, rest, site),
        _ if NETWORK.contains(&sub) => {}
        _ => changes(an, sub),
    }
}

fn parse(args: &[Word], with_value: &[&str]) -> Args {
    parse_args(
        args,
        OptionSpec {
            with_value,
            stop_at_operand: false,
        },
    )
}

fn first_operand(args: &[Word]) -> Option<String> {
    args.iter()
        .filter_map(Word::literal)
        .find(|text| !text.starts_with('-'))
}

fn has_word_prefix(args: &[Word], prefix: &str) -> bool {
    args.iter()
        .filter_map(Word::literal)
        .any(|text| text.starts_with(prefix))
}

fn changes(an: &mut Analyzer, sub: &str) {
    an.needs_approval(format!(
        "`git {sub}` changes the repository or the working tree"
    ));
}

/// `git -c key=value` or `git --config-env key=VARIABLE`: a key that runs a program is a
/// disaster waiting (`-c core.pager='sh -c …'`); any other key not known to be harmless is
/// beyond judging.
fn config_override(an: &mut Analyzer, option: &str, setting: &Word) {
    let Some(text) = setting.literal() else {
        an.unanalysable(format!(
            "git {option} {} sets configuration not known until run time",
            setting.display()
        ));
        return;
    };
    let key = text
        .split('=')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if runs_a_program(&key) {
        an.destructive(format!(
            "git {option} {key} makes git run a program given on the command line"
        ));
    } else if !is_harmless(&key) {
        an.unanalysable(format!(
            "git {option} {key} changes git's configuration in a way cairn cannot judge"
        ));
    }
}

/// Reading subcommands that can still write a file or run another program.
fn read_only_options(an: &mut Analyzer, sub: &str, args: &[Word], site: Site<'_>) {
    let parsed = parse(args, &["--output", "-O", "--open-files-in-pager"]);
    for output in parsed.values(&["--output"]) {
        an.write_path(output, site);
    }
    if parsed.has(&["--ext-diff"]) {
        an.needs_approval(format!(
            "git {sub} --ext-diff runs an external diff program"
        ));
    }
    if sub == "grep" && parsed.has(&["-O", "--open-files-in-pager"]) {
        an.needs_approval("git grep -O runs a pager program");
    }
}

fn push(an: &mut Analyzer, args: &[Word]) {
    let parsed = parse(
        args,
        &["--repo", "-o", "--push-option", "--receive-pack", "--exec"],
    );
    let forced = parsed.has(&["-f", "--force", "--force-with-lease", "--force-if-includes"])
        || parsed
            .operands
            .iter()
            .skip(1)
            .filter_map(Word::literal)
            .any(|refspec| refspec.starts_with('+'));
    if forced {
        an.destructive("git push --force rewrites history on the remote");
    }
    if parsed.has(&["--receive-pack", "--exec"]) {
        an.needs_approval("git push --receive-pack runs a program on the remote");
    }
    if parsed.has(&["--mirror"]) {
        an.destructive("git push --mirror overwrites and deletes every ref on the remote");
    }
    if parsed.has(&["-d", "--delete", "--prune"])
        || parsed
            .operands
            .iter()
            .skip(1)
            .filter_map(Word::literal)
            .any(|refspec| refspec.starts_with(':'))
    {
        an.destructive("git push deletes branches on the remote");
    }
}

/// `git checkout` of files (`-- paths`, `.`, a path that exists, `-f`) overwrites their
/// uncommitted changes; of a branch it only moves HEAD.
fn checkout(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = parse(args, &["-b", "-B", "--orphan", "--pathspec-from-file"]);
    let has_separator = args
        .iter()
        .any(|arg| arg.literal().as_deref() == Some("--"));
    let names_a_file = parsed.operands.iter().any(|operand| {
        operand
            .literal()
            .is_none_or(|text| text == "." || site.cwd.is_some_and(|cwd| cwd.join(&text).exists()))
    });
    if has_separator
        || names_a_file
        || parsed.has(&["-f", "--force", "--pathspec-from-file", "-p", "--patch"])
    {
        an.destructive("git checkout of files discards their uncommitted changes");
    } else {
        changes(an, "checkout");
    }
}

fn branch(an: &mut Analyzer, args: &[Word]) {
    let parsed = parse(
        args,
        &[
            "--sort",
            "--format",
            "--contains",
            "--no-contains",
            "--merged",
            "--no-merged",
            "--points-at",
            "-u",
            "--set-upstream-to",
            "--abbrev",
        ],
    );
    const CHANGES: &[&str] = &[
        "-d",
        "-D",
        "--delete",
        "-m",
        "-M",
        "--move",
        "-c",
        "-C",
        "--copy",
        "-u",
        "--set-upstream-to",
        "--unset-upstream",
        "--edit-description",
        "-f",
        "--force",
        "-t",
        "--track",
        "--no-track",
        "--create-reflog",
    ];
    if let Some(option) = parsed
        .options
        .iter()
        .find(|option| CHANGES.contains(&option.name.as_str()))
    {
        an.needs_approval(format!("`git branch {}` changes branches", option.name));
    } else if !parsed.operands.is_empty() && !parsed.has(&["-l", "--list", "--show-current"]) {
        an.needs_approval("`git branch NAME` creates a branch");
    }
}

fn tag(an: &mut Analyzer, args: &[Word]) {
    let parsed = parse(
        args,
        &[
            "--sort",
            "--format",
            "--contains",
            "--no-contains",
            "--merged",
            "--no-merged",
            "--points-at",
            "-m",
            "--message",
            "-F",
            "--file",
            "-u",
            "--local-user",
            "--cleanup",
        ],
    );
    const CHANGES: &[&str] = &[
        "-a",
        "--annotate",
        "-s",
        "--sign",
        "-u",
        "--local-user",
        "-f",
        "--force",
        "-d",
        "--delete",
        "-m",
        "--message",
        "-F",
        "--file",
    ];
    if let Some(option) = parsed
        .options
        .iter()
        .find(|option| CHANGES.contains(&option.name.as_str()))
    {
        an.needs_approval(format!("`git tag {}` changes tags", option.name));
    } else if !parsed.operands.is_empty() && !parsed.has(&["-l", "--list", "-v", "--verify"]) {
        an.needs_approval("`git tag NAME` creates a tag");
    }
}

fn remote(an: &mut Analyzer, args: &[Word]) {
    match first_operand(args).as_deref() {
        None | Some("get-url") => {}
        Some("show") => {
            if !parse(args, &[]).has(&["-n"]) {
                an.uses_network("git remote show");
            }
        }
        Some(action @ ("update" | "prune")) => {
            an.uses_network(&format!("git remote {action}"));
            changes(an, &format!("remote {action}"));
        }
        Some(action) => changes(an, &format!("remote {action}")),
    }
}

fn config(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = parse(
        args,
        &["-f", "--file", "--blob", "--type", "--default", "--comment"],
    );
    for file in parsed.values(&["-f", "--file"]) {
        an.read_path(file, site);
    }
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--list",
        "-l",
        "--get-color",
        "--get-colorbool",
    ];
    const WRITES: &[&str] = &[
        "--add",
        "--unset",
        "--unset-all",
        "--replace-all",
        "--rename-section",
        "--remove-section",
        "-e",
        "--edit",
        "--edit-global",
    ];
    let first = parsed.operands.first().and_then(Word::literal);
    let reads = match first.as_deref() {
        Some("get" | "list") => true,
        Some("set" | "unset" | "rename-section" | "remove-section" | "edit") => false,
        _ if parsed.has(WRITES) => false,
        _ if parsed.has(READS) => true,
        _ => parsed.operands.len() == 1,
    };
    if reads {
        return;
    }
    an.needs_approval("`git config` changes git's configuration");
    let subcommand = matches!(
        first.as_deref(),
        Some("set" | "unset" | "rename-section" | "remove-section" | "edit")
    );
    let key = parsed
        .operands
        .get(usize::from(subcommand))
        .and_then(Word::literal)
        .map(|key| key.to_ascii_lowercase());
    if let Some(key) = key.filter(|key| runs_a_program(key)) {
        an.destructive(format!(
            "git config {key} makes every later git command in the repository run a program, \
             cairn's own included"
        ));
    }
    // The file the setting goes to, so that protected files (`.git/config`) are seen.
    let file = if parsed.has(&["-f", "--file"]) {
        for file in parsed.values(&["-f", "--file"]) {
            an.write_path(file, site);
        }
        return;
    } else if parsed.has(&["--global"]) {
        Some(an.places.home.join(".gitconfig"))
    } else if parsed.has(&["--system"]) {
        Some(PathBuf::from("/etc/gitconfig"))
    } else {
        site.cwd.map(|cwd| {
            let top = cwd
                .ancestors()
                .find(|dir| dir.join(".git").exists())
                .unwrap_or(cwd);
            let name = if parsed.has(&["--worktree"]) {
                "config.worktree"
            } else {
                "config"
            };
            top.join(".git").join(name)
        })
    };
    match file {
        Some(file) => an.write_path(&quoted_path(&file.to_string_lossy()), site),
        None => an.unanalysable("`git config` writes to a repository not known until run time"),
    }
}

fn list_or_show(an: &mut Analyzer, sub: &str, args: &[Word], reading: &[&str]) {
    match first_operand(args) {
        Some(action) if reading.contains(&action.as_str()) => {}
        Some(action) => changes(an, &format!("{sub} {action}")),
        None => changes(an, sub),
    }
}

fn submodule(an: &mut Analyzer, args: &[Word]) {
    match first_operand(args).as_deref() {
        Some("status" | "summary") => {}
        Some("foreach") => {
            an.needs_approval("git submodule foreach runs a command in each submodule")
        }
        Some(action @ ("update" | "add" | "sync")) => {
            an.uses_network(&format!("git submodule {action}"));
            changes(an, &format!("submodule {action}"));
        }
        Some(action) => changes(an, &format!("submodule {action}")),
        None => {}
    }
}
