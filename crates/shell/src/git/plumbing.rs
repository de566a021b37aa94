//! The options of git's plumbing and listing readers, from git 2.47 (`git <cmd> -h` and
//! `git <cmd> --git-completion-helper-all`); checked by `crates/shell/tests/git_tables.rs`.

use crate::options::{Arity, Effect, LongMatch, Table, flag, option, optional, reads, value};

/// `git ls-files`'s options.
pub(super) const LS_FILES: Table = Table {
    options: &[
        flag(&["-c", "--cached"]),
        flag(&["-d", "--deleted"]),
        flag(&["-m", "--modified"]),
        flag(&["-o", "--others"]),
        flag(&["-i", "--ignored"]),
        flag(&["-s", "--stage"]),
        flag(&["-k", "--killed"]),
        flag(&["--directory"]),
        flag(&["--eol"]),
        flag(&["--empty-directory"]),
        flag(&["-u", "--unmerged"]),
        flag(&["--resolve-undo"]),
        value(&["-x", "--exclude"]),
        reads(&["-X", "--exclude-from"]),
        value(&["--exclude-per-directory"]),
        flag(&["--exclude-standard"]),
        flag(&["--full-name"]),
        flag(&["--recurse-submodules"]),
        flag(&["--error-unmatch"]),
        value(&["--with-tree"]),
        optional(&["--abbrev"]),
        flag(&["--debug"]),
        flag(&["--deduplicate"]),
        flag(&["--sparse"]),
        value(&["--format"]),
        flag(&["--no-cached"]),
        flag(&["--no-deleted"]),
        flag(&["--no-modified"]),
        flag(&["--no-others"]),
        flag(&["--no-ignored"]),
        flag(&["--no-stage"]),
        flag(&["--no-killed"]),
        flag(&["--no-directory"]),
        flag(&["--no-eol"]),
        flag(&["--no-empty-directory"]),
        flag(&["--no-unmerged"]),
        flag(&["--no-resolve-undo"]),
        flag(&["--no-exclude-per-directory"]),
        flag(&["--no-recurse-submodules"]),
        flag(&["--no-error-unmatch"]),
        flag(&["--no-with-tree"]),
        flag(&["--no-abbrev"]),
        flag(&["--no-debug"]),
        flag(&["--no-deduplicate"]),
        flag(&["--no-sparse"]),
        flag(&["-z"]),
        flag(&["-t"]),
        flag(&["-v"]),
        flag(&["-f"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git ls-tree`'s options.
pub(super) const LS_TREE: Table = Table {
    options: &[
        flag(&["-l", "--long"]),
        flag(&["--name-only"]),
        flag(&["--name-status"]),
        flag(&["--object-only"]),
        flag(&["--full-name"]),
        flag(&["--full-tree"]),
        value(&["--format"]),
        optional(&["--abbrev"]),
        flag(&["--no-full-name"]),
        flag(&["--no-full-tree"]),
        flag(&["--no-abbrev"]),
        flag(&["-d"]),
        flag(&["-r"]),
        flag(&["-t"]),
        flag(&["-z"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git cat-file`'s options.
pub(super) const CAT_FILE: Table = Table {
    options: &[
        flag(&["--allow-unknown-type"]),
        flag(&["--use-mailmap"]),
        flag(&["--mailmap"]),
        optional(&["--batch"]),
        optional(&["--batch-check"]),
        optional(&["--batch-command"]),
        flag(&["--batch-all-objects"]),
        flag(&["--buffer"]),
        flag(&["--follow-symlinks"]),
        flag(&["--unordered"]),
        option(&["--textconv"], Arity::Flag, Effect::Runs),
        option(&["--filters"], Arity::Flag, Effect::Runs),
        value(&["--path"]),
        flag(&["--no-allow-unknown-type"]),
        flag(&["--no-use-mailmap"]),
        flag(&["--no-mailmap"]),
        flag(&["--no-buffer"]),
        flag(&["--no-follow-symlinks"]),
        flag(&["--no-unordered"]),
        flag(&["--no-path"]),
        flag(&["-e"]),
        flag(&["-p"]),
        flag(&["-t"]),
        flag(&["-s"]),
        flag(&["-Z"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git describe`'s options.
pub(super) const DESCRIBE: Table = Table {
    options: &[
        flag(&["--contains"]),
        flag(&["--debug"]),
        flag(&["--all"]),
        flag(&["--tags"]),
        flag(&["--long"]),
        flag(&["--first-parent"]),
        optional(&["--abbrev"]),
        flag(&["--exact-match"]),
        value(&["--candidates"]),
        value(&["--match"]),
        value(&["--exclude"]),
        flag(&["--always"]),
        optional(&["--dirty"]),
        optional(&["--broken"]),
        flag(&["--no-contains"]),
        flag(&["--no-debug"]),
        flag(&["--no-all"]),
        flag(&["--no-tags"]),
        flag(&["--no-long"]),
        flag(&["--no-first-parent"]),
        flag(&["--no-abbrev"]),
        flag(&["--no-exact-match"]),
        flag(&["--no-candidates"]),
        flag(&["--no-match"]),
        flag(&["--no-exclude"]),
        flag(&["--no-always"]),
        flag(&["--no-dirty"]),
        flag(&["--no-broken"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git show-ref`'s options.
pub(super) const SHOW_REF: Table = Table {
    options: &[
        flag(&["--tags"]),
        flag(&["--branches"]),
        optional(&["--heads"]),
        flag(&["--exists"]),
        flag(&["--verify"]),
        flag(&["--head"]),
        flag(&["-d", "--dereference"]),
        optional(&["-s", "--hash"]),
        optional(&["--abbrev"]),
        flag(&["-q", "--quiet"]),
        optional(&["--exclude-existing"]),
        flag(&["--no-tags"]),
        flag(&["--no-branches"]),
        flag(&["--no-heads"]),
        flag(&["--no-exists"]),
        flag(&["--no-verify"]),
        flag(&["--no-head"]),
        flag(&["--no-dereference"]),
        flag(&["--no-hash"]),
        flag(&["--no-abbrev"]),
        flag(&["--no-quiet"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git for-each-ref`'s options.
pub(super) const FOR_EACH_REF: Table = Table {
    options: &[
        flag(&["-s", "--shell"]),
        flag(&["-p", "--perl"]),
        flag(&["--python"]),
        flag(&["--tcl"]),
        flag(&["--omit-empty"]),
        value(&["--count"]),
        value(&["--format"]),
        optional(&["--color"]),
        value(&["--exclude"]),
        value(&["--sort"]),
        value(&["--points-at"]),
        value(&["--merged"]),
        value(&["--no-merged"]),
        value(&["--contains"]),
        value(&["--no-contains"]),
        flag(&["--ignore-case"]),
        flag(&["--stdin"]),
        flag(&["--include-root-refs"]),
        flag(&["--no-shell"]),
        flag(&["--no-perl"]),
        flag(&["--no-python"]),
        flag(&["--no-tcl"]),
        flag(&["--no-omit-empty"]),
        flag(&["--no-count"]),
        flag(&["--no-format"]),
        flag(&["--no-color"]),
        flag(&["--no-exclude"]),
        flag(&["--no-sort"]),
        flag(&["--no-points-at"]),
        flag(&["--no-ignore-case"]),
        flag(&["--no-stdin"]),
        flag(&["--no-include-root-refs"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git merge-base`'s options.
pub(super) const MERGE_BASE: Table = Table {
    options: &[
        flag(&["-a", "--all"]),
        flag(&["--octopus"]),
        flag(&["--independent"]),
        flag(&["--is-ancestor"]),
        flag(&["--fork-point"]),
        flag(&["--no-all"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git name-rev`'s options.
pub(super) const NAME_REV: Table = Table {
    options: &[
        flag(&["--name-only"]),
        flag(&["--tags"]),
        value(&["--refs"]),
        value(&["--exclude"]),
        flag(&["--all"]),
        optional(&["--stdin"]),
        flag(&["--annotate-stdin"]),
        flag(&["--undefined"]),
        flag(&["--always"]),
        optional(&["--peel-tag"]),
        flag(&["--no-name-only"]),
        flag(&["--no-tags"]),
        flag(&["--no-refs"]),
        flag(&["--no-exclude"]),
        flag(&["--no-all"]),
        flag(&["--no-stdin"]),
        flag(&["--no-annotate-stdin"]),
        flag(&["--no-undefined"]),
        flag(&["--no-always"]),
        flag(&["--no-peel-tag"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git count-objects`'s options.
pub(super) const COUNT_OBJECTS: Table = Table {
    options: &[
        flag(&["-v", "--verbose"]),
        flag(&["-H", "--human-readable"]),
        flag(&["--no-verbose"]),
        flag(&["--no-human-readable"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git check-ignore`'s options.
pub(super) const CHECK_IGNORE: Table = Table {
    options: &[
        flag(&["-q", "--quiet"]),
        flag(&["-v", "--verbose"]),
        flag(&["--stdin"]),
        flag(&["-n", "--non-matching"]),
        flag(&["--no-index"]),
        flag(&["--index"]),
        flag(&["--no-quiet"]),
        flag(&["--no-verbose"]),
        flag(&["--no-stdin"]),
        flag(&["--no-non-matching"]),
        flag(&["-z"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git check-attr`'s options.
pub(super) const CHECK_ATTR: Table = Table {
    options: &[
        flag(&["-a", "--all"]),
        flag(&["--cached"]),
        flag(&["--stdin"]),
        value(&["--source"]),
        flag(&["--no-all"]),
        flag(&["--no-cached"]),
        flag(&["--no-stdin"]),
        flag(&["--no-source"]),
        flag(&["-z"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git cherry`'s options.
pub(super) const CHERRY: Table = Table {
    options: &[
        optional(&["--abbrev"]),
        flag(&["-v", "--verbose"]),
        flag(&["--no-abbrev"]),
        flag(&["--no-verbose"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git show-branch`'s options.
pub(super) const SHOW_BRANCH: Table = Table {
    options: &[
        flag(&["-a", "--all"]),
        flag(&["-r", "--remotes"]),
        optional(&["--color"]),
        optional(&["--more"]),
        flag(&["--list"]),
        flag(&["--no-name"]),
        flag(&["--current"]),
        flag(&["--sha1-name"]),
        flag(&["--merge-base"]),
        flag(&["--independent"]),
        flag(&["--topo-order"]),
        flag(&["--topics"]),
        flag(&["--sparse"]),
        flag(&["--date-order"]),
        optional(&["-g", "--reflog"]),
        flag(&["--name"]),
        flag(&["--no-all"]),
        flag(&["--no-remotes"]),
        flag(&["--no-color"]),
        flag(&["--no-more"]),
        flag(&["--no-list"]),
        flag(&["--no-current"]),
        flag(&["--no-sha1-name"]),
        flag(&["--no-merge-base"]),
        flag(&["--no-independent"]),
        flag(&["--no-topics"]),
        flag(&["--no-sparse"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git version`'s options.
pub(super) const VERSION: Table = Table {
    options: &[flag(&["--build-options"]), flag(&["--no-build-options"])],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git help`'s options.
pub(super) const HELP: Table = Table {
    options: &[
        flag(&["-a", "--all"]),
        flag(&["--external-commands"]),
        flag(&["--aliases"]),
        optional(&["--exclude-guides"]),
        flag(&["-m", "--man"]),
        option(&["-w", "--web"], Arity::Flag, Effect::Runs),
        flag(&["-i", "--info"]),
        flag(&["-v", "--verbose"]),
        flag(&["-g", "--guides"]),
        flag(&["--user-interfaces"]),
        flag(&["--developer-interfaces"]),
        flag(&["-c", "--config"]),
        optional(&["--config-for-completion"]),
        optional(&["--config-sections-for-completion"]),
        flag(&["--no-external-commands"]),
        flag(&["--no-aliases"]),
        flag(&["--no-exclude-guides"]),
        flag(&["--no-man"]),
        flag(&["--no-web"]),
        flag(&["--no-info"]),
        flag(&["--no-verbose"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git worktree list`'s options.
pub(super) const WORKTREE_LIST: Table = Table {
    options: &[
        flag(&["--porcelain"]),
        flag(&["-v", "--verbose"]),
        value(&["--expire"]),
        flag(&["--no-porcelain"]),
        flag(&["--no-verbose"]),
        flag(&["--no-expire"]),
        flag(&["-z"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

/// `git remote get-url`'s options.
pub(super) const REMOTE_GET_URL: Table = Table {
    options: &[
        flag(&["--push"]),
        flag(&["--all"]),
        flag(&["--no-push"]),
        flag(&["--no-all"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: false,
    numeric: false,
};

// Written from the manuals: these take no part in git's completion helper.

/// `git var`'s options.
pub(super) const VAR: Table = Table::gnu(&[flag(&["-l"])]);

/// `git check-ref-format`'s options.
pub(super) const CHECK_REF_FORMAT: Table = Table {
    options: &[
        flag(&["--normalize"]),
        flag(&["--print"]),
        flag(&["--allow-onelevel"]),
        flag(&["--no-allow-onelevel"]),
        flag(&["--refspec-pattern"]),
        flag(&["--branch"]),
    ],
    long: LongMatch::Exact,
    stop_at_operand: false,
    numeric: false,
};

/// `git remote`'s own options (before its action).
pub(super) const REMOTE: Table = Table::gnu(&[flag(&["-v", "--verbose"]), flag(&["--no-verbose"])]);

/// `git remote show`'s options.
pub(super) const REMOTE_SHOW: Table = Table::gnu(&[flag(&["-n"])]);

/// `git notes`' own options (before its action).
pub(super) const NOTES: Table = Table::gnu(&[value(&["--ref"]), flag(&["--no-ref"])]);

/// `git submodule status` and `summary`'s options, and `git submodule`'s own `--quiet`.
pub(super) const SUBMODULE_READ: Table = Table::gnu(&[
    flag(&["-q"]),
    flag(&["--quiet"]),
    flag(&["--cached"]),
    flag(&["--recursive"]),
    flag(&["--files"]),
    value(&["-n", "--summary-limit"]),
]);

/// `git clean`'s options: read-only only with `-n` and without `-i`.
pub(super) const CLEAN: Table = Table::gnu(&[
    flag(&["-d"]),
    flag(&["-f"]),
    flag(&["--force"]),
    flag(&["-n"]),
    flag(&["--dry-run"]),
    flag(&["-q"]),
    flag(&["--quiet"]),
    flag(&["-x"]),
    flag(&["-X"]),
    option(
        &["-i", "--interactive"],
        Arity::Flag,
        Effect::Changes("deletes files interactively"),
    ),
    value(&["-e", "--exclude"]),
]);

/// `git reflog exists`' options (none).
pub(super) const NONE: Table = Table::gnu(&[]);
