//! git's own options, before the subcommand (`git -C dir -c k=v --no-pager log`), and where
//! they make git look for its repository.
//!
//! git reads these by hand in `git.c`, by full name only: `git --no-pag status` is refused.
//! Each is judged: `-c` and `--config-env` by the key they set, `-p`/`--paginate` and
//! `--exec-path=DIR` as options that run another program, and `-C`, `--git-dir` and
//! `--work-tree` by the repository they lead git to. A repository other than the one the
//! command starts in has a configuration cairn has not checked (`core.fsmonitor`,
//! `core.pager`, aliases): that is judged like an option that runs a program, which an allow
//! rule for `git` alone does not lift.

use std::path::{Path, PathBuf};

use super::config::config_override;
use crate::classify::{Analyzer, Site};
use crate::options::{Arity, Effect, LongMatch, Parsed, Table, flag, option, optional, value};
use crate::paths::{Resolved, canonicalize_existing_prefix};
use crate::word::Word;

/// git's options before the subcommand (`git help git`, `git.c`'s `handle_options`).
pub(super) const GLOBAL: Table = Table {
    options: &[
        value(&["-C"]),
        value(&["-c"]),
        value(&["--config-env"]),
        value(&["--git-dir"]),
        value(&["--work-tree"]),
        value(&["--namespace"]),
        // Alone it prints the directory; with a value it changes where git finds its programs.
        optional(&["--exec-path"]),
        flag(&["--html-path"]),
        flag(&["--man-path"]),
        flag(&["--info-path"]),
        option(&["-p", "--paginate"], Arity::Flag, Effect::Runs),
        flag(&["-P", "--no-pager"]),
        flag(&["--bare"]),
        flag(&["--no-replace-objects"]),
        flag(&["--no-lazy-fetch"]),
        flag(&["--no-optional-locks"]),
        flag(&["--no-advice"]),
        flag(&["--literal-pathspecs"]),
        flag(&["--no-literal-pathspecs"]),
        flag(&["--glob-pathspecs"]),
        flag(&["--noglob-pathspecs"]),
        flag(&["--icase-pathspecs"]),
        optional(&["--list-cmds"]),
        value(&["--attr-source"]),
        flag(&["-v"]),
        flag(&["--version"]),
        flag(&["-h"]),
        flag(&["--help"]),
    ],
    long: LongMatch::Exact,
    stop_at_operand: true,
    numeric: false,
};

/// What git's own options leave for the subcommand.
pub(super) struct Globals {
    /// Where the subcommand runs, after `-C`.
    pub(super) cwd: Option<PathBuf>,
    /// git only prints something (`--version`, `--exec-path`, `--list-cmds`) and runs no
    /// subcommand.
    pub(super) prints_only: bool,
}

/// Judges git's options in `parsed` (read against [`GLOBAL`]) as run from `site`.
pub(super) fn judge(an: &mut Analyzer, parsed: &Parsed, site: Site<'_>) -> Globals {
    crate::options::judge_options(an, "git", parsed, site);
    let own = own_repositories(an);
    let mut cwd = site.cwd.map(Path::to_path_buf);
    let mut moved = false;
    let mut prints_only = false;
    let mut git_dir = None;
    for given in &parsed.options {
        let name = given.def.canonical();
        match (name, &given.value) {
            ("-C", Some(target)) => {
                an.read_path(target, site);
                cwd = an.places.change_dir(cwd.as_deref(), target);
                moved = true;
            }
            ("-c" | "--config-env", Some(setting)) => config_override(an, name, setting),
            ("--git-dir", Some(target)) => {
                an.read_path(target, site);
                git_dir = Some((given, resolved(an, target, site)));
            }
            ("--work-tree", Some(target)) => {
                an.read_path(target, site);
                let tops: Vec<PathBuf> = own
                    .iter()
                    .filter_map(|git| git.parent().map(Path::to_path_buf))
                    .collect();
                if !resolved(an, target, site).is_some_and(|top| tops.contains(&top)) {
                    elsewhere(an, &given.written, name, &target.display());
                }
            }
            ("--exec-path", Some(_)) => an.runs_program("git", &given.written, name),
            ("--exec-path" | "--html-path" | "--man-path" | "--info-path", None)
            | ("--list-cmds" | "--version" | "--help", _) => prints_only = true,
            _ => {}
        }
    }
    let bare = parsed
        .options
        .iter()
        .find(|given| given.def.canonical() == "--bare");
    match (git_dir, bare) {
        (Some((given, target)), _) => {
            if !target.as_deref().is_some_and(|dir| is_own(&own, dir)) {
                let shown = given.value.as_ref().map(Word::display).unwrap_or_default();
                elsewhere(an, &given.written, "--git-dir", &shown);
            }
        }
        // `--bare` makes the directory git runs in its repository.
        (None, Some(given)) => {
            if !cwd.as_deref().is_some_and(|dir| is_own(&own, dir)) {
                let shown = cwd.as_deref().map(Path::display).map(|dir| dir.to_string());
                elsewhere(an, &given.written, "--bare", &shown.unwrap_or_default());
            }
        }
        (None, None) => discovered(an, &own, cwd.as_deref(), moved),
    }
    Globals { cwd, prints_only }
}

/// The repository git finds from where it runs, walking up. A `.git` inside the workspace
/// that is not the workspace's own is a nested repository, whose files cairn protects like
/// its own; a bare repository (a directory with `HEAD`, `objects/` and `refs/`) is three
/// files anyone can write, so git reading its configuration is beyond judging, and so is a
/// repository outside the workspace.
fn discovered(an: &mut Analyzer, own: &[PathBuf], cwd: Option<&Path>, moved: bool) {
    let Some(found) = cwd.and_then(repository_of) else {
        return;
    };
    if is_own(own, &found.git_dir) {
        return;
    }
    let inside = an.places.is_inside_workspace(&found.git_dir);
    if inside && !found.bare {
        return;
    }
    let what = if found.bare {
        "a bare repository"
    } else {
        "a repository outside the workspace"
    };
    let reason = format!(
        "git would run in {what} ({}), whose configuration cairn has not checked",
        found.git_dir.display()
    );
    if moved {
        an.runs_program("git", "-C", "-C");
        an.needs_approval(reason);
    } else {
        an.unanalysable(reason);
    }
}

/// An option leading git to a repository other than the workspace's own.
fn elsewhere(an: &mut Analyzer, written: &str, canonical: &str, target: &str) {
    an.runs_program("git", written, canonical);
    an.needs_approval(format!(
        "`git {canonical} {target}` leads git to a repository whose configuration cairn has \
         not checked"
    ));
}

fn resolved(an: &Analyzer, target: &Word, site: Site<'_>) -> Option<PathBuf> {
    match an.places.resolve(target, site.cwd) {
        Resolved::Path(path) => Some(canonicalize_existing_prefix(&path)),
        Resolved::Stream | Resolved::Unknown(_) => None,
    }
}

/// The git directories of the workspace's own repositories: those git finds from each root.
fn own_repositories(an: &Analyzer) -> Vec<PathBuf> {
    an.places
        .roots
        .iter()
        .filter_map(|root| repository_of(root))
        .map(|found| found.git_dir)
        .collect()
}

/// Whether `git_dir` is one of `own`, or a worktree's or submodule's directory inside one.
fn is_own(own: &[PathBuf], git_dir: &Path) -> bool {
    own.iter().any(|own| {
        git_dir == own
            || git_dir.starts_with(own.join("worktrees"))
            || git_dir.starts_with(own.join("modules"))
    })
}

/// A repository git finds.
pub(super) struct Found {
    /// Its git directory (a `.git` file followed to where it points).
    pub(super) git_dir: PathBuf,
    /// Whether it was found as a bare repository rather than through a `.git`.
    pub(super) bare: bool,
}

/// The repository git finds from `dir`, as git's discovery does: in each directory up from
/// `dir`, a `.git` (directory, or file naming the directory), else the directory itself if
/// it is a git directory.
pub(super) fn repository_of(dir: &Path) -> Option<Found> {
    for dir in dir.ancestors() {
        let dot_git = dir.join(".git");
        if dot_git.is_dir() {
            return Some(Found {
                git_dir: canonicalize_existing_prefix(&dot_git),
                bare: false,
            });
        }
        if dot_git.is_file() {
            let git_dir = gitfile_target(&dot_git).unwrap_or(dot_git);
            return Some(Found {
                git_dir: canonicalize_existing_prefix(&git_dir),
                bare: false,
            });
        }
        if is_git_directory(dir) {
            return Some(Found {
                git_dir: canonicalize_existing_prefix(dir),
                bare: true,
            });
        }
    }
    None
}

/// The directory a `.git` file names (`gitdir: ../.git/worktrees/x`).
fn gitfile_target(file: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    Some(file.parent()?.join(target))
}

/// What git's `is_git_directory` checks: `HEAD`, `objects/` and `refs/`.
fn is_git_directory(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}
