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
use crate::paths::Resolved;
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
    let start = site.cwd.map(Path::to_path_buf);
    let own = start.as_deref().and_then(repository_of);
    let mut cwd = start.clone();
    let mut moved = false;
    let mut prints_only = false;
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
                if resolved(an, target, site) != own {
                    elsewhere(an, &given.written, name, target);
                }
            }
            ("--work-tree", Some(target)) => {
                an.read_path(target, site);
                let top = own.as_deref().and_then(Path::parent).map(Path::to_path_buf);
                if top.is_none() || resolved(an, target, site) != top {
                    elsewhere(an, &given.written, name, target);
                }
            }
            ("--exec-path", Some(_)) => an.runs_program("git", &given.written, name),
            ("--exec-path" | "--html-path" | "--man-path" | "--info-path", None)
            | ("--list-cmds" | "--version" | "--help", _) => prints_only = true,
            _ => {}
        }
    }
    if moved && cwd.is_some() && cwd.as_deref().and_then(repository_of) != own {
        an.runs_program("git", "-C", "-C");
        an.needs_approval(
            "`git -C` leads git to another repository, whose configuration cairn has not checked",
        );
    }
    Globals { cwd, prints_only }
}

/// `--git-dir` or `--work-tree` naming anything but the repository the command starts in.
fn elsewhere(an: &mut Analyzer, written: &str, canonical: &str, target: &Word) {
    an.runs_program("git", written, canonical);
    an.needs_approval(format!(
        "`git {canonical} {}` leads git to a repository whose configuration cairn has not checked",
        target.display()
    ));
}

fn resolved(an: &Analyzer, target: &Word, site: Site<'_>) -> Option<PathBuf> {
    match an.places.resolve(target, site.cwd) {
        Resolved::Path(path) => Some(path),
        Resolved::Stream | Resolved::Unknown(_) => None,
    }
}

/// The `.git` (directory or gitfile) git finds from `dir`, walking up.
pub(super) fn repository_of(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|dir| dir.join(".git"))
        .find(|git| git.exists())
}
