//! git's own files: which entries of a git directory decide what git runs or where the
//! repository is (the control files), and which are its data.
//!
//! The list comes from gitrepository-layout(5), git-worktree(1), gitmodules(5) and githooks(5).
//! Protected, because git reads them to decide what to run or which repository to use:
//!
//! - `config`, `config.worktree`: every program git runs (`core.fsmonitor`, `core.hooksPath`,
//!   `core.pager`, filters, diff drivers, aliases, credential helpers);
//! - `commondir` (the repository's shared part lives there: its `config` and hooks) and
//!   `gitdir` (a linked worktree's way back to its `.git` file, which `git worktree repair`
//!   rewrites);
//! - `objects/info/alternates` and `objects/info/http-alternates`: object stores git reads
//!   from, anywhere on disk or on the web;
//! - `hooks/`, programs git runs; `info/` (attributes select the filters and diff drivers of
//!   the configuration, `exclude`, `grafts`, `sparse-checkout`);
//! - `branches/` and `remotes/`: legacy shorthands that decide where `git fetch` and
//!   `git push` go; git never writes them itself, so protecting them costs nothing;
//! - the same files of every submodule's git directory (`modules/<name>/`, names may contain
//!   `/`) and of every linked worktree's administrative directory (`worktrees/<id>/`), whose
//!   `config` becomes the repository's own if its `commondir` goes;
//! - the todo list of a rebase or cherry-pick in progress (`rebase-merge/git-rebase-todo`,
//!   `sequencer/todo`), whose `exec` lines `git rebase --continue` runs: asked about when
//!   written directly, but not watched in the sandbox, because git itself rewrites them at
//!   every step of a rebase;
//! - `.gitmodules` in a work tree (where submodules are cloned from) and any `.git` below the
//!   workspace root, directory or `gitdir:` file: git run in that directory uses it.
//!
//! Left writable, because `git add`, `git commit`, `git fetch` and a linked worktree's own
//! commits write them, and nothing in them names a program or another repository: `HEAD` and
//! the other `*_HEAD` files, `index` and `sharedindex.*`, `objects/` (but the alternates),
//! `refs/`, `packed-refs`, `logs/`, `*.lock`, `shallow` (it only hides history, and
//! `git fetch --depth` rewrites it), `COMMIT_EDITMSG` and the other message files, `common/`,
//! `description`, and a worktree's `locked`.

use super::Protected;

/// The names that make a directory a git directory, or a file a `gitdir:` pointer, when a
/// work tree holds them. Compared without case: on case-insensitive file systems (macOS,
/// Windows) git finds `.GIT` as `.git`.
pub(super) fn is_git_entry(name: &str) -> bool {
    name.eq_ignore_ascii_case(".git")
}

/// Control files directly in a git directory.
pub(crate) const CONTROL_FILES: [&str; 4] = ["config", "config.worktree", "commondir", "gitdir"];

/// Control directories directly in a git directory: everything beneath them is protected.
pub(crate) const CONTROL_DIRS: [&str; 4] = ["hooks", "info", "branches", "remotes"];

/// Control files in a git directory's `objects/info/`.
pub(crate) const ALTERNATES: [&str; 2] = ["alternates", "http-alternates"];

/// What writing `parts` (relative to a work tree, split in components) does to git, if it
/// touches git's control files: the first `.git` entry decides whose they are.
pub(super) fn classify_git(parts: &[&str]) -> Option<Protected> {
    let Some(at) = parts.iter().position(|part| is_git_entry(part)) else {
        return match parts.last() {
            Some(name) if name.eq_ignore_ascii_case(".gitmodules") => Some(Protected::GitPrograms),
            _ => None,
        };
    };
    let nested = at > 0;
    match in_git_dir(&parts[at + 1..])? {
        Protected::Container if nested => Some(Protected::NestedRepository),
        found => Some(found),
    }
}

/// What an entry of a git directory controls, from its path inside it: `None` for git's data.
/// `Container` for the directory itself and the directories that hold control files, whose
/// moving or replacing would replace them.
fn in_git_dir(rest: &[&str]) -> Option<Protected> {
    match rest {
        [] | ["objects"] | ["objects", "info"] | ["worktrees"] | ["worktrees", _] | ["modules"] => {
            Some(Protected::Container)
        }
        [name] if matches!(*name, "config" | "config.worktree") => Some(Protected::GitPrograms),
        [name] if matches!(*name, "commondir" | "gitdir") => Some(Protected::GitLocation),
        [dir, ..] if CONTROL_DIRS.contains(dir) => Some(Protected::GitPrograms),
        ["rebase-merge", "git-rebase-todo"] | ["sequencer", "todo"] => Some(Protected::GitPrograms),
        ["objects", "info", name] if ALTERNATES.contains(name) => Some(Protected::GitLocation),
        ["worktrees", _, inner @ ..] => in_git_dir(inner),
        ["modules", inner @ ..] => in_modules(inner),
        _ => None,
    }
}

/// An entry below `modules/`: a submodule's name may span several components
/// (`modules/libs/json/config`), so every split into a name and a path inside the
/// submodule's git directory is tried; a split whose name holds one of git's data entries
/// (`objects`, `refs`, `HEAD`…) is no submodule's name. The strongest finding wins, so a
/// control file is never taken for the module's directory.
fn in_modules(inner: &[&str]) -> Option<Protected> {
    (1..=inner.len())
        .filter(|&split| !inner[..split].iter().any(|part| is_git_data(part)))
        .filter_map(|split| in_git_dir(&inner[split..]))
        .max_by_key(|found| match found {
            Protected::Container => 0,
            _ => 1,
        })
}

/// Entries git writes as data at the top of a git directory (so not a submodule's name).
fn is_git_data(name: &str) -> bool {
    matches!(
        name,
        "objects"
            | "refs"
            | "logs"
            | "index"
            | "packed-refs"
            | "shallow"
            | "description"
            | "rebase-merge"
            | "rebase-apply"
            | "sequencer"
            | "rr-cache"
            | "lost-found"
    ) || name.starts_with("sharedindex.")
        || name.ends_with(".lock")
        || (!name.is_empty() && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))
}

/// Whether a git command line (`argv`, program first) creates a repository or rewrites the
/// control files of one, which the analysis of its words cannot see as written paths: `init`
/// and `clone` make a `.git` (`--separate-git-dir` a `gitdir:` file), `worktree` writes
/// `worktrees/<id>/gitdir` and `commondir`, `submodule` clones into `modules/` and writes
/// `gitdir:` files, `lfs install` writes hooks, `maintenance register` the user's
/// configuration. Their read-only forms (`worktree list`, `submodule status`) are left alone.
/// Returns the subcommand, for the question.
pub fn git_command_writing_control_files(argv: &[String]) -> Option<String> {
    let program = argv.first()?;
    if program.rsplit('/').next() != Some("git") {
        return None;
    }
    let mut words = argv[1..].iter().map(String::as_str);
    let subcommand = loop {
        let word = words.next()?;
        match word {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
            | "--super-prefix" => {
                words.next()?;
            }
            _ if word.starts_with('-') => {}
            _ => break word,
        }
    };
    let action = words.find(|word| !word.starts_with('-'));
    let writes = match subcommand {
        "init" | "clone" => true,
        "worktree" => action != Some("list"),
        "submodule" => !matches!(action, None | Some("status" | "summary")),
        "lfs" => matches!(action, Some("install" | "update")),
        "maintenance" => matches!(action, Some("register" | "start")),
        _ => false,
    };
    writes.then(|| match action {
        Some(action) if subcommand != "init" && subcommand != "clone" => {
            format!("git {subcommand} {action}")
        }
        _ => format!("git {subcommand}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn of(path: &str) -> Option<Protected> {
        let parts: Vec<&str> = path.split('/').collect();
        classify_git(&parts)
    }

    #[test]
    fn git_commands_that_write_control_files() {
        let cases = [
            ("git init", Some("git init")),
            ("git -C src init --separate-git-dir=x", Some("git init")),
            ("/usr/bin/git clone . copy", Some("git clone")),
            ("git -c x=y worktree add w", Some("git worktree add")),
            ("git submodule update --init", Some("git submodule update")),
            ("git lfs install", Some("git lfs install")),
            ("git maintenance register", Some("git maintenance register")),
            ("git worktree list", None),
            ("git submodule", None),
            ("git submodule status", None),
            ("git commit -m init", None),
            ("git status", None),
            ("echo git init", None),
        ];
        for (command, expected) in cases {
            let argv: Vec<String> = command.split(' ').map(String::from).collect();
            assert_eq!(
                git_command_writing_control_files(&argv).as_deref(),
                expected,
                "{command}"
            );
        }
    }

    #[test]
    fn control_files_data_files_and_containers() {
        use Protected::{Container, GitLocation, GitPrograms, NestedRepository};
        let cases = [
            (".git", Some(Container)),
            (".git/config", Some(GitPrograms)),
            (".git/config.worktree", Some(GitPrograms)),
            (".git/commondir", Some(GitLocation)),
            (".git/gitdir", Some(GitLocation)),
            (".git/objects/info/alternates", Some(GitLocation)),
            (".git/objects/info/http-alternates", Some(GitLocation)),
            (".git/objects/info", Some(Container)),
            (".git/objects", Some(Container)),
            (".git/hooks/pre-commit", Some(GitPrograms)),
            (".git/info/attributes", Some(GitPrograms)),
            (".git/branches/origin", Some(GitPrograms)),
            (".git/remotes/origin", Some(GitPrograms)),
            (".git/worktrees", Some(Container)),
            (".git/worktrees/w", Some(Container)),
            (".git/worktrees/w/gitdir", Some(GitLocation)),
            (".git/worktrees/w/commondir", Some(GitLocation)),
            (".git/worktrees/w/config.worktree", Some(GitPrograms)),
            (".git/worktrees/w/config", Some(GitPrograms)),
            (".git/modules/sub/config", Some(GitPrograms)),
            (".git/modules/libs/json/config", Some(GitPrograms)),
            (
                ".git/modules/libs/json/hooks/post-checkout",
                Some(GitPrograms),
            ),
            (".git/modules/sub/commondir", Some(GitLocation)),
            (".git/modules/sub", Some(Container)),
            (".git/modules", Some(Container)),
            (".git/rebase-merge/git-rebase-todo", Some(GitPrograms)),
            (".git/sequencer/todo", Some(GitPrograms)),
            (
                ".git/worktrees/w/rebase-merge/git-rebase-todo",
                Some(GitPrograms),
            ),
            (".git/rebase-merge/done", None),
            (".git/modules/sub/modules/inner/config", Some(GitPrograms)),
            (".GIT/config", Some(GitPrograms)),
            ("src/sub/.git", Some(NestedRepository)),
            ("src/sub/.git/config", Some(GitPrograms)),
            ("src/sub/.git/objects/info/alternates", Some(GitLocation)),
            ("src/sub/.Git", Some(NestedRepository)),
            (".gitmodules", Some(GitPrograms)),
            ("vendor/lib/.gitmodules", Some(GitPrograms)),
            // git's data stays writable.
            (".git/HEAD", None),
            (".git/index", None),
            (".git/index.lock", None),
            (".git/ORIG_HEAD", None),
            (".git/FETCH_HEAD", None),
            (".git/COMMIT_EDITMSG", None),
            (".git/packed-refs", None),
            (".git/shallow", None),
            (".git/refs/heads/main", None),
            (".git/refs/heads/feature/x", None),
            (".git/logs/HEAD", None),
            (".git/objects/ab/cdef", None),
            (".git/objects/pack/pack-1.pack", None),
            (".git/objects/info/packs", None),
            (".git/objects/info/commit-graph", None),
            (".git/worktrees/w/HEAD", None),
            (".git/worktrees/w/index", None),
            (".git/worktrees/w/logs/HEAD", None),
            (".git/worktrees/w/refs/bisect/bad", None),
            (".git/worktrees/w/locked", None),
            (".git/modules/sub/HEAD", None),
            (".git/modules/sub/index", None),
            (".git/modules/sub/objects/ab/cdef", None),
            (".git/modules/sub/refs/heads/main", None),
            ("src/sub/.git/index", None),
            ("src/gitconfig", None),
            ("src/.gitignore", None),
            ("src/config", None),
        ];
        for (path, expected) in cases {
            assert_eq!(of(path), expected, "{path}");
        }
    }
}
