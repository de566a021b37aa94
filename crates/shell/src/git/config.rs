//! git's configuration: the keys `-c`/`--config-env` may set, and `git config` itself.

use std::path::PathBuf;

use super::listing::{CONFIG_GET, CONFIG_LEGACY, CONFIG_LIST};
use crate::classify::{Analyzer, Site};
use crate::globs::quoted_path;
use crate::options::{judge_options, parse_layers};
use crate::word::Word;

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

/// `git -c key=value` or `git --config-env key=VARIABLE`: a key that runs a program is a
/// disaster waiting (`-c core.pager='sh -c …'`); any other key not known to be harmless is
/// beyond judging.
pub(super) fn config_override(an: &mut Analyzer, option: &str, setting: &Word) {
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

/// `git config`: reading forms are read-only when every option is one the tables know; a
/// form that writes names the file it writes, so that protected files (`.git/config`) are
/// seen, and a key that runs a program is a disaster waiting.
pub(super) fn config(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = parse_layers(args, &[&CONFIG_LEGACY, &CONFIG_GET, &CONFIG_LIST]);
    judge_options(an, "git config", &parsed, site);
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
