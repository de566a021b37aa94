//! The git subcommands that change the repository or the working tree: which of them throw
//! work away or rewrite history (asked about even when a rule allows `git`). They are never
//! read-only, so their options are split only as far as that judgement needs.

use crate::classify::{Analyzer, Site};
use crate::options::{Args, OptionSpec, parse_args};
use crate::word::Word;

pub(super) fn parse(args: &[Word], with_value: &[&str]) -> Args {
    parse_args(
        args,
        OptionSpec {
            with_value,
            stop_at_operand: false,
        },
    )
}

pub(super) fn changes(an: &mut Analyzer, sub: &str) {
    an.needs_approval(format!(
        "`git {sub}` changes the repository or the working tree"
    ));
}

pub(super) fn reset(an: &mut Analyzer, args: &[Word]) {
    if parse(args, &[]).has(&["--hard"]) {
        an.destructive("git reset --hard discards uncommitted changes");
    } else {
        changes(an, "reset");
    }
}

pub(super) fn restore(an: &mut Analyzer, args: &[Word]) {
    let parsed = parse(args, &["-s", "--source", "--pathspec-from-file"]);
    let worktree = parsed.has(&["-W", "--worktree"]) || !parsed.has(&["-S", "--staged"]);
    if worktree {
        an.destructive("git restore discards uncommitted changes to the files");
    } else {
        changes(an, "restore");
    }
}

pub(super) fn switch(an: &mut Analyzer, args: &[Word]) {
    let parsed = parse(
        args,
        &["-c", "-C", "--create", "--force-create", "--orphan"],
    );
    if parsed.has(&["-f", "--force", "--discard-changes"]) {
        an.destructive("git switch --discard-changes throws away uncommitted changes");
    } else {
        changes(an, "switch");
    }
}

pub(super) fn push(an: &mut Analyzer, args: &[Word]) {
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
pub(super) fn checkout(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
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
