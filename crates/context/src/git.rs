//! Running git on cairn's own behalf without running any program the repository names.
//!
//! cairn runs git itself (the git context of the system prompt, the branch a session is
//! recorded on) outside the sandbox and before the user has been asked anything. A
//! repository's configuration can name programs that git then runs: a model that once wrote
//! `core.fsmonitor = "sh -c …"` into `.git/config` would have code run at cairn's next start.
//! [`Git::command`] therefore neutralises every key through which the commands cairn runs
//! (`rev-parse`, `branch`, `status`, `log`, `diff`, `config`) could start a program:
//!
//! | what                                  | how it is stopped                                   |
//! |---------------------------------------|-----------------------------------------------------|
//! | `core.fsmonitor` (status, diff)       | `-c core.fsmonitor=false`                           |
//! | hooks (`post-index-change`, …)        | `-c core.hooksPath=/dev/null`; the index is not written (`GIT_OPTIONAL_LOCKS=0`) |
//! | pagers (`core.pager`, `pager.<cmd>`)  | `--no-pager`                                        |
//! | clean/smudge/process filters, named by `.gitattributes` or `.git/info/attributes` | every `filter.<driver>` in the configuration is emptied, whatever its name |
//! | `diff.external`, `diff.<driver>.command`, `diff.<driver>.textconv` | `--no-ext-diff --no-textconv` ([`DIFF_WITHOUT_PROGRAMS`]) on every command that prints a diff |
//! | `gpg.program` through `log.showSignature` | `-c log.showSignature=false`                    |
//! | lazy fetches of a partial clone (`remote.<name>.url = ext::…`, ssh, credential helpers) | `GIT_NO_LAZY_FETCH=1`, `GIT_ALLOW_PROTOCOL=` (no transport), `-c credential.helper=`, `GIT_TERMINAL_PROMPT=0` |
//! | submodules (a child git with the submodule's own configuration) | `--ignore-submodules=all` ([`STATUS_WITHOUT_SUBMODULES`]) on `status` and `diff` |
//! | `GIT_*` variables in cairn's environment (`GIT_DIR`, `GIT_CONFIG_*`, `GIT_EXTERNAL_DIFF`, `GIT_PAGER`, `GIT_EXEC_PATH`, …) | removed, with cairn's credentials ([`cairn_protocol::child_environment`]) |
//!
//! Aliases need nothing: git never lets an alias replace a built-in command. The system and
//! global configuration are still read (a user's `safe.directory`, `init.defaultBranch`): the
//! keys above are neutralised whichever file sets them, so a filter such as git-lfs's does not
//! run for cairn's own reads either, which at worst shows a file whose stat data is stale as
//! modified.
//!
//! The overrides are command-line configuration, which outranks every configuration file.
//! None of them makes an older git refuse to run (a variable it does not know is ignored, and
//! `GIT_ALLOW_PROTOCOL` alone already stops a lazy fetch), except for a filter driver whose
//! name contains `=`: that one is emptied with `--config-env` (git 2.31), which an older git
//! rejects, failing safe.
//!
//! Not covered: `core.worktree` or a `.git` file pointing elsewhere make git describe another
//! directory. That runs nothing; it is for the permission gate to keep such writes out.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Flags for `git diff`, `git log -p` and `git show`: no external diff program, no textconv.
pub const DIFF_WITHOUT_PROGRAMS: [&str; 2] = ["--no-ext-diff", "--no-textconv"];

/// Flag for `git status` and `git diff`: do not look inside submodules, whose own
/// configuration could name programs the superproject's overrides do not cover.
pub const STATUS_WITHOUT_SUBMODULES: &str = "--ignore-submodules=all";

/// Configuration that turns off the programs git could run for a read-only command.
const FIXED_OVERRIDES: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "log.showSignature=false",
    "credential.helper=",
];

/// The filter keys that name a program; `required` is turned off so that an emptied filter is
/// not an error.
const FILTER_KEYS: &[(&str, &str)] = &[
    ("clean", ""),
    ("smudge", ""),
    ("process", ""),
    ("required", "false"),
];

/// Environment variables through which `--config-env` passes values it cannot put in `-c`.
const EMPTY_VALUE_VAR: &str = "CAIRN_GIT_EMPTY";
const FALSE_VALUE_VAR: &str = "CAIRN_GIT_FALSE";

/// git for one directory, set up so that the repository cannot make it run a program.
///
/// Reading the configuration's filter drivers costs one `git config` run; make one `Git` and
/// call [`command`](Git::command) for each git command in the same directory.
///
/// ```no_run
/// use cairn_context::git::{DIFF_WITHOUT_PROGRAMS, Git};
///
/// let git = Git::at(std::path::Path::new("."));
/// let diff = git.command().args(["diff", "HEAD"]).args(DIFF_WITHOUT_PROGRAMS).output();
/// ```
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
    /// `-c key=` / `--config-env=key=VAR` arguments emptying each filter driver.
    filter_overrides: Vec<OsString>,
}

impl Git {
    /// git in `dir`, with every filter driver its configuration defines emptied.
    pub fn at(dir: &Path) -> Git {
        let base = Git {
            dir: dir.to_path_buf(),
            filter_overrides: Vec::new(),
        };
        let drivers = filter_drivers(&base);
        Git {
            filter_overrides: drivers.iter().flat_map(|name| empty_filter(name)).collect(),
            ..base
        }
    }

    /// A `git` command in the directory with programs disabled; add the subcommand and its
    /// arguments. Standard input is closed. Commands that print diffs must add
    /// [`DIFF_WITHOUT_PROGRAMS`], and `status` and `diff` [`STATUS_WITHOUT_SUBMODULES`].
    pub fn command(&self) -> Command {
        let environment = cairn_protocol::child_environment()
            .into_iter()
            .filter(|(name, _)| !name.as_encoded_bytes().starts_with(b"GIT_"));
        let mut command = Command::new("git");
        command
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .env_clear()
            .envs(environment)
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_NO_LAZY_FETCH", "1")
            .env("GIT_ALLOW_PROTOCOL", "")
            .env(EMPTY_VALUE_VAR, "")
            .env(FALSE_VALUE_VAR, "false")
            .arg("--no-pager");
        for setting in FIXED_OVERRIDES {
            command.args(["-c", setting]);
        }
        command.args(&self.filter_overrides);
        command
    }
}

/// [`Git::at`]`(dir).`[`command`](Git::command)`()`: one git command in `dir` with programs
/// disabled.
pub fn git_command(dir: &Path) -> Command {
    Git::at(dir).command()
}

/// The names of the filter drivers the configuration of `git`'s directory defines
/// (`filter.<name>.<key>`), from every configuration file and its includes.
fn filter_drivers(git: &Git) -> BTreeSet<String> {
    let output = git
        .command()
        .args([
            "config",
            "--null",
            "--name-only",
            "--get-regexp",
            r"^filter\.",
        ])
        .stderr(Stdio::null())
        .output();
    let Ok(output) = output else {
        return BTreeSet::new();
    };
    String::from_utf8_lossy(&output.stdout)
        .split('\0')
        .filter_map(|key| key.strip_prefix("filter."))
        .filter_map(|rest| rest.rsplit_once('.'))
        .map(|(name, _key)| name.to_string())
        .collect()
}

/// The arguments emptying filter driver `name`. `-c` splits at the first `=`, so a name
/// containing one goes through `--config-env`, which splits at the last.
fn empty_filter(name: &str) -> Vec<OsString> {
    let mut args = Vec::new();
    for (key, value) in FILTER_KEYS {
        if name.contains('=') {
            let var = if value.is_empty() {
                EMPTY_VALUE_VAR
            } else {
                FALSE_VALUE_VAR
            };
            args.push(format!("--config-env=filter.{name}.{key}={var}").into());
        } else {
            args.push("-c".into());
            args.push(format!("filter.{name}.{key}={value}").into());
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_filter_is_emptied_with_c_and_one_whose_name_has_an_equals_sign_with_config_env() {
        let plain: Vec<OsString> = ["-c", "filter.lfs.clean=", "-c", "filter.lfs.smudge="]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(empty_filter("lfs")[..4], plain[..]);
        assert_eq!(
            empty_filter("a=b"),
            [
                "--config-env=filter.a=b.clean=CAIRN_GIT_EMPTY",
                "--config-env=filter.a=b.smudge=CAIRN_GIT_EMPTY",
                "--config-env=filter.a=b.process=CAIRN_GIT_EMPTY",
                "--config-env=filter.a=b.required=CAIRN_GIT_FALSE",
            ]
            .map(OsString::from)
        );
    }
}
