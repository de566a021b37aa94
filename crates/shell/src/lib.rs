//! Syntax-level analysis of Bash commands: what a command line runs, what it touches, and
//! whether it can run without asking.
//!
//! It sits below the two crates that judge commands: `cairn-policy`'s permission gate decides
//! with it whether a command may run, and `cairn-tools`' `Bash` declares with it whether a
//! command may run beside others. It depends on nothing of cairn, and it must not run the
//! command or decide permissions: it reports, and the gate decides.
//!
//! The command is parsed with tree-sitter-bash, not matched with regular expressions. Lists
//! (`&&`, `||`, `;`, `&`, newlines), pipelines, subshells and groups are split into simple
//! commands, each judged on its own; the commands inside `$(…)`, backticks, `<(…)`,
//! `bash -c '…'`, `eval`, `xargs` and `find -exec` are found and judged too. Wrappers such as
//! `sudo`, `env`, `timeout` and `command` are looked through, and quoting tricks (`r''m`, `\rm`,
//! `$'\x72m'`) are undone by quote removal. Paths in arguments and redirections are resolved
//! (`..`, `~`, symlinks) and compared with the workspace roots.
//!
//! The result is a [`BashAnalysis`]: the simple commands found (for permission rules to match),
//! a [`BashVerdict`], the reasons for it in plain sentences, the paths outside the workspace,
//! and whether the command uses the network.
//!
//! ```
//! use std::path::{Path, PathBuf};
//! use cairn_shell::{BashContext, BashVerdict, analyze};
//!
//! let roots = [PathBuf::from("/work/project")];
//! let ctx = BashContext {
//!     cwd: Path::new("/work/project"),
//!     workspace_roots: &roots,
//!     home: Path::new("/home/me"),
//! };
//! assert_eq!(analyze("ls | grep x | wc -l", &ctx).verdict, BashVerdict::ReadOnly);
//! let analysis = analyze("git status && rm -rf ~", &ctx);
//! assert_eq!(analysis.verdict, BashVerdict::Destructive);
//! assert_eq!(analysis.commands.len(), 2);
//! ```

#![deny(missing_docs)]

mod classify;
mod commands;
mod declarations;
mod destructive;
mod evaluated;
mod find;
mod git;
mod globs;
mod links;
mod loops;
mod names;
mod network;
mod options;
mod parse;
mod paths;
mod readers;
mod runners;
mod scripts;
mod tables;
mod variables;
mod word;

/// git's option tables as data, for the tests that check them against the git installed.
#[doc(hidden)]
pub use git::export as git_tables;
/// The option tables of the read-only commands, as data: for the crate's own tests.
#[doc(hidden)]
pub use tables::listing as option_tables;

use std::path::{Path, PathBuf};

/// Where a command would run.
#[derive(Debug, Clone, Copy)]
pub struct BashContext<'a> {
    /// The shell's working directory.
    pub cwd: &'a Path,
    /// The project directory and any additional directories the session may use.
    pub workspace_roots: &'a [PathBuf],
    /// What `~` and `$HOME` expand to.
    pub home: &'a Path,
}

/// What a command line runs and touches, and the verdict on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashAnalysis {
    /// Every simple command found, in the order they run, including those inside
    /// substitutions, subshells, `bash -c` strings, `xargs` and `find -exec`. A wrapped command
    /// is listed both with its wrapper (`sudo rm x`) and alone (`rm x`).
    pub commands: Vec<SimpleCommand>,
    /// The worst verdict of any part.
    pub verdict: BashVerdict,
    /// Why the verdict is not [`BashVerdict::ReadOnly`], one sentence per finding.
    pub reasons: Vec<String>,
    /// Paths the command reads or writes outside the workspace roots, resolved (`..`, `~`,
    /// symlinks).
    pub outside_paths: Vec<PathBuf>,
    /// Every path the command reads, inside the workspace or not, resolved (`..`, `~`,
    /// symlinks): Read deny rules and the sandbox's hidden paths are judged against these.
    pub read_paths: Vec<PathBuf>,
    /// Every path the command creates, changes or removes, resolved: Edit deny rules and the
    /// protected files (`.claude/settings.json`, `.git/hooks/`, …) are judged against these.
    pub written_paths: Vec<PathBuf>,
    /// Whether any part uses the network (`curl`, `ssh`, `git push`, `npm install`, …).
    pub network: bool,
    /// Options that make a command run another program (`sort --compress-program`, `git grep
    /// --open-files-in-pager`, `git difftool -x`): an allow rule for the command alone
    /// (`Bash(sort:*)`) does not lift them, only one whose text names the option as written.
    pub program_options: Vec<ProgramOption>,
}

/// An option that makes a command run another program, as written in the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramOption {
    /// The command it was given to (`sort`, `git grep`).
    pub command: String,
    /// The option as written, without its value (`--compress-prog`, `-x`).
    pub written: String,
    /// Its full name (`--compress-program`, `--extcmd`).
    pub canonical: String,
}

/// One simple command, as permission rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The words after quote removal and brace expansion; variable prefixes (`FOO=1`) and
    /// redirections are left out. Variables and substitutions appear as written (`$HOME`).
    pub argv: Vec<String>,
    /// `argv` joined by single spaces, for rule matching.
    pub text: String,
}

impl SimpleCommand {
    /// A simple command from its words; `text` is derived from them.
    pub fn new(argv: Vec<String>) -> SimpleCommand {
        let text = argv.join(" ");
        SimpleCommand { argv, text }
    }
}

/// How much care a command needs, ordered from least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BashVerdict {
    /// Only reads, inside the workspace: it can run without asking.
    ReadOnly,
    /// Writes, runs unknown programs, uses the network or reaches outside the workspace.
    NeedsApproval,
    /// Changes what later names in the command mean (`hash -p`, `alias`, a function shadowing
    /// a builtin, `PATH=…`, `source`) or has Bash evaluate text as code (an array subscript in
    /// an arithmetic context): the rest cannot be judged, so it is asked about even when a rule
    /// allows the command.
    Unanalysable,
    /// Matches a known disaster (`rm -rf ~`, `curl … | sh`, `git push --force`, a fork bomb):
    /// ask even when a rule allows the command.
    Destructive,
}

/// Analyses a Bash command line. Never fails: whatever cannot be parsed or understood makes
/// the verdict at least [`BashVerdict::NeedsApproval`], with a reason.
pub fn analyze(command: &str, ctx: &BashContext<'_>) -> BashAnalysis {
    classify::analyze(command, ctx)
}

/// `path` with its longest existing prefix resolved (symbolic links followed) and the rest
/// appended as written: where a path really leads, as far as the disk can tell today. The
/// permission gate judges a file tool's path by it, and the file tools write the same
/// resolved path, so both must use this one function.
pub fn resolve_existing_prefix(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            return rest
                .into_iter()
                .rev()
                .fold(canonical, |acc, part| acc.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}
