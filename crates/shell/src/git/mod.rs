//! `git`: which subcommands only read, which use the network, and which rewrite history or
//! throw work away.
//!
//! A reading subcommand is read-only only when every option it is given is in its tables
//! (git's own lists: `history.rs`, `plumbing.rs`, `listing.rs`, `diff_options.rs`, and the
//! revision options git parses by hand in `revisions.rs`), spelled the way git reads it, and
//! harmless. The tables are read in git's order: a subcommand's own parser first (unambiguous
//! prefixes and `--no-` negations count, `git grep --open` is `--open-files-in-pager`), then
//! the revision and diff parsers, which take full names only. An option that writes a file
//! (`--output`) is judged like any written path; one that runs a program (`--ext-diff`,
//! `--textconv`, `git grep -O`, `difftool -x`, `git -p`) is a program option, which an allow
//! rule for `git` alone does not lift.

mod changing;
mod config;
mod diff_options;
pub mod export;
mod globals;
mod history;
mod listing;
mod plumbing;
mod revisions;

use self::changing::{changes, checkout, push, reset, restore, switch};
use self::diff_options::{DIFF, RANGE_DIFF, RANGE_DIFF_DIFF};
use self::history::{BLAME_OWN, DIFFTOOL_OWN, GREP, LOG_OWN, SHORTLOG_OWN, STASH_SHOW_OWN, STATUS};
use self::listing::{BRANCH, CONFIG_GET, CONFIG_LEGACY, CONFIG_LIST, TAG};
use self::plumbing::{
    CAT_FILE, CHECK_ATTR, CHECK_IGNORE, CHECK_REF_FORMAT, CHERRY, CLEAN, COUNT_OBJECTS, DESCRIBE,
    FOR_EACH_REF, HELP, LS_FILES, LS_TREE, MERGE_BASE, NAME_REV, NONE, NOTES, REMOTE,
    REMOTE_GET_URL, REMOTE_SHOW, SHOW_BRANCH, SHOW_REF, SUBMODULE_READ, VAR, VERSION,
    WORKTREE_LIST,
};
use self::revisions::{DIFF_CMD, DIFF_FILES, DIFF_INDEX, DIFF_TREE, REV_LIST, REV_PARSE, REVISION};
use super::classify::{Analyzer, Site};
use super::options::{Parsed, Table, judge_options, parse, parse_layers};
use super::word::Word;

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

const LOG: &[&Table] = &[&LOG_OWN, &REVISION, &DIFF];
const DIFFS: &[&Table] = &[&DIFF_CMD, &DIFF, &REVISION];
const BLAME: &[&Table] = &[&BLAME_OWN, &REVISION, &DIFF];
const CONFIG: &[&Table] = &[&CONFIG_LEGACY, &CONFIG_GET, &CONFIG_LIST];

/// Every reading form of git (the words that name it) and the tables its options are read
/// against, in the order git reads them. `git config` and the `branch`/`tag` forms are read
/// against their tables too, and judged further by what they change.
pub(crate) const READ_FORMS: &[(&str, &[&Table])] = &[
    ("status", &[&STATUS]),
    ("log", LOG),
    ("show", LOG),
    ("whatchanged", LOG),
    ("diff", DIFFS),
    ("diff-tree", &[&DIFF_TREE, &DIFF, &REVISION]),
    ("diff-index", &[&DIFF_INDEX, &DIFF, &REVISION]),
    ("diff-files", &[&DIFF_FILES, &DIFF, &REVISION]),
    ("range-diff", &[&RANGE_DIFF, &RANGE_DIFF_DIFF]),
    ("shortlog", &[&SHORTLOG_OWN, &REVISION, &DIFF]),
    ("blame", BLAME),
    ("annotate", BLAME),
    ("rev-list", &[&REV_LIST, &REVISION, &DIFF]),
    ("rev-parse", &[&REV_PARSE]),
    ("ls-files", &[&LS_FILES]),
    ("ls-tree", &[&LS_TREE]),
    ("cat-file", &[&CAT_FILE]),
    ("describe", &[&DESCRIBE]),
    ("show-ref", &[&SHOW_REF]),
    ("for-each-ref", &[&FOR_EACH_REF]),
    ("merge-base", &[&MERGE_BASE]),
    ("name-rev", &[&NAME_REV]),
    ("count-objects", &[&COUNT_OBJECTS]),
    ("check-ignore", &[&CHECK_IGNORE]),
    ("check-attr", &[&CHECK_ATTR]),
    ("check-ref-format", &[&CHECK_REF_FORMAT]),
    ("var", &[&VAR]),
    ("version", &[&VERSION]),
    ("help", &[&HELP]),
    ("cherry", &[&CHERRY]),
    ("show-branch", &[&SHOW_BRANCH]),
    ("grep", &[&GREP]),
    ("branch", &[&BRANCH]),
    ("tag", &[&TAG]),
    ("config", CONFIG),
    ("stash list", LOG),
    ("stash show", &[&STASH_SHOW_OWN, &DIFF, &REVISION]),
    ("worktree list", &[&WORKTREE_LIST]),
    ("notes list", &[&NONE]),
    ("notes show", &[&NONE]),
    ("remote", &[&REMOTE]),
    ("remote get-url", &[&REMOTE_GET_URL]),
    ("reflog", LOG),
    ("reflog show", LOG),
    ("reflog list", &[&NONE]),
    ("reflog exists", &[&NONE]),
    ("submodule status", &[&SUBMODULE_READ]),
    ("difftool", &[&DIFFTOOL_OWN, &DIFF, &REVISION]),
];

/// The tables git's completion helper lists (`git <words> --git-completion-helper-all`),
/// each with the tables that together must hold every option it names.
pub(crate) const CHECKED: &[(&str, &[&Table])] = &[
    ("status", &[&STATUS]),
    ("log", &[&LOG_OWN]),
    ("diff", &[&DIFF, &DIFF_CMD]),
    ("range-diff", &[&RANGE_DIFF, &RANGE_DIFF_DIFF]),
    ("shortlog", &[&SHORTLOG_OWN]),
    ("blame", &[&BLAME_OWN]),
    ("ls-files", &[&LS_FILES]),
    ("ls-tree", &[&LS_TREE]),
    ("cat-file", &[&CAT_FILE]),
    ("describe", &[&DESCRIBE]),
    ("show-ref", &[&SHOW_REF]),
    ("for-each-ref", &[&FOR_EACH_REF]),
    ("merge-base", &[&MERGE_BASE]),
    ("name-rev", &[&NAME_REV]),
    ("count-objects", &[&COUNT_OBJECTS]),
    ("check-ignore", &[&CHECK_IGNORE]),
    ("check-attr", &[&CHECK_ATTR]),
    ("cherry", &[&CHERRY]),
    ("show-branch", &[&SHOW_BRANCH]),
    ("grep", &[&GREP]),
    ("version", &[&VERSION]),
    ("help", &[&HELP]),
    ("branch", &[&BRANCH]),
    ("tag", &[&TAG]),
    ("config get", &[&CONFIG_GET]),
    ("config list", &[&CONFIG_LIST]),
    ("stash show", &[&STASH_SHOW_OWN]),
    ("worktree list", &[&WORKTREE_LIST]),
    ("remote get-url", &[&REMOTE_GET_URL]),
    ("difftool", &[&DIFFTOOL_OWN]),
];

/// git's own options, before the subcommand.
pub(crate) const GLOBAL: &Table = &globals::GLOBAL;

pub(crate) fn judge(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = parse(args, GLOBAL);
    let globals = globals::judge(an, &parsed, site);
    if globals.prints_only {
        return;
    }
    let site = Site {
        cwd: globals.cwd.as_deref(),
        ..site
    };
    let Some(index) = parsed.first_operand_index else {
        return;
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
    let remote_archive = rest
        .iter()
        .filter_map(Word::literal)
        .any(|text| text.starts_with("--remote"));
    if NETWORK.contains(&sub) && (sub != "archive" || remote_archive) {
        an.uses_network(&format!("git {sub}"));
    }
    match sub {
        "push" => push(an, rest),
        "reset" => reset(an, rest),
        "restore" => restore(an, rest),
        "switch" => switch(an, rest),
        "checkout" => checkout(an, rest, site),
        "clean" => clean(an, rest, site),
        "branch" => branch(an, rest, site),
        "tag" => tag(an, rest, site),
        "config" => config::config(an, rest, site),
        "difftool" => {
            read(an, "difftool", rest, site);
            changes(an, sub);
        }
        "reflog" => reflog(an, rest, site),
        "stash" | "worktree" | "notes" | "remote" | "submodule" => {
            with_action(an, sub, rest, site);
        }
        // It writes where `-o` says and runs `tar.<format>.command`: not a reader.
        "archive" => an.not_read_only("git archive"),
        _ if NETWORK.contains(&sub) => {}
        _ if form(sub).is_some() => {
            read(an, sub, rest, site);
        }
        _ => changes(an, sub),
    }
}

/// The tables of a reading form (`log`, `stash list`).
fn form(words: &str) -> Option<&'static [&'static Table]> {
    READ_FORMS
        .iter()
        .find(|(name, _)| *name == words)
        .map(|(_, layers)| *layers)
}

/// Reads `args` against the tables of the form `words` and judges every option.
fn read(an: &mut Analyzer, words: &str, args: &[Word], site: Site<'_>) -> Parsed {
    let layers = form(words).unwrap_or(&[]);
    let parsed = parse_layers(args, layers);
    judge_options(an, &format!("git {words}"), &parsed, site);
    parsed
}

/// Subcommands with an action (`git stash list`, `git remote -v show origin`): the options
/// before the action are the subcommand's own, the rest the action's.
fn with_action(an: &mut Analyzer, sub: &str, args: &[Word], site: Site<'_>) {
    let own = match sub {
        "notes" => NOTES,
        "remote" => REMOTE,
        "submodule" => SUBMODULE_READ,
        _ => NONE,
    };
    let before = parse(
        args,
        &Table {
            stop_at_operand: true,
            ..own
        },
    );
    judge_options(an, &format!("git {sub}"), &before, site);
    let (action, after) = match before.first_operand_index {
        Some(index) => (
            args.get(index).and_then(Word::literal),
            args.get(index + 1..).unwrap_or_default(),
        ),
        None => (None, &[][..]),
    };
    let Some(action) = action else {
        match (sub, before.first_operand_index) {
            // `git remote` and `git submodule` alone list; `git stash` alone makes a stash.
            ("remote" | "submodule", None) => {}
            _ => changes(an, sub),
        }
        return;
    };
    let words = format!("{sub} {action}");
    match (sub, action.as_str()) {
        ("stash", "drop" | "clear") => {
            an.destructive(format!("git stash {action} throws away stashed changes"));
        }
        ("remote", "show") => {
            let parsed = parse(after, &REMOTE_SHOW);
            judge_options(an, "git remote show", &parsed, site);
            if !parsed.has(&["-n"]) {
                an.uses_network("git remote show");
            }
        }
        ("remote", "update" | "prune") | ("submodule", "update" | "add" | "sync") => {
            an.uses_network(&format!("git {words}"));
            changes(an, &words);
        }
        ("submodule", "summary") => {
            read(an, "submodule status", after, site);
        }
        ("submodule", "foreach") => {
            an.needs_approval("git submodule foreach runs a command in each submodule");
        }
        _ if form(&words).is_some() => {
            read(an, &words, after, site);
        }
        _ => changes(an, &words),
    }
}

/// `git reflog [show] [log options]` reads; `expire`, `delete` and `drop` change the reflog.
fn reflog(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let action = args.first().and_then(Word::literal);
    match action.as_deref() {
        Some(action @ ("show" | "list" | "exists")) => {
            let after = args.get(1..).unwrap_or_default();
            read(an, &format!("reflog {action}"), after, site);
        }
        Some(action @ ("expire" | "delete" | "drop")) => changes(an, &format!("reflog {action}")),
        _ => {
            read(an, "reflog", args, site);
        }
    }
}

/// `git clean` deletes untracked files, but for `-n`.
fn clean(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = parse(args, &CLEAN);
    judge_options(an, "git clean", &parsed, site);
    if !parsed.has(&["-n", "--dry-run"]) {
        // Without `-f` it deletes too when `clean.requireForce` is false.
        an.destructive("git clean deletes untracked files");
    }
}

/// `git branch` lists, but for the options that change branches and a name without `--list`.
fn branch(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = read(an, "branch", args, site);
    if !parsed.operands.is_empty() && !parsed.has(&["-l", "--list", "--show-current"]) {
        an.needs_approval("`git branch NAME` creates a branch");
    }
}

/// `git tag` lists, but for the options that change tags and a name without `--list`.
fn tag(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = read(an, "tag", args, site);
    if !parsed.operands.is_empty() && !parsed.has(&["-l", "--list", "-v", "--verify"]) {
        an.needs_approval("`git tag NAME` creates a tag");
    }
}
