//! Permission rules the user adds while cairn runs ("Yes, and don't ask again", `/permissions
//! allow|ask|deny`) are kept in the project's `.claude/settings.local.json`, so later sessions
//! apply them too; `/permissions remove` takes a rule out of the settings file it came from.
//!
//! Every face saves rules through here: the engine when the user answers "don't ask again",
//! the TUI's `/permissions` view when the user adds or removes one.
//!
//! The file is personal (its rules name the user's commands and paths), so when cairn creates
//! it inside a git work tree that does not already ignore it, it adds
//! `**/.claude/settings.local.json` to the user's global git ignore file, as Claude Code does
//! ([`keep_out_of_git`]).

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::regular_file::{MAX_SETTINGS_BYTES, RegularFileError, read_regular_file};

/// Why a rule was not saved to, or removed from, a settings file. The message names the rule,
/// the file and what went wrong, ready to show as a warning:
///
/// ```text
/// Could not save the rule Edit to /proj/.claude/settings.local.json: it is not valid JSON: key must be a string at line 1 column 2
/// ```
#[derive(Debug, thiserror::Error)]
pub enum RulesFileError {
    /// Adding a rule failed.
    #[error("Could not save the rule {rule} to {}: {problem}", path.display())]
    Save {
        /// The rule, or the rules saved together, joined by commas.
        rule: String,
        /// The settings file written to.
        path: PathBuf,
        /// What went wrong.
        problem: RulesFileProblem,
    },
    /// Removing a rule failed.
    #[error("Could not remove the rule {rule} from {}: {problem}", path.display())]
    Remove {
        /// The rule.
        rule: String,
        /// The settings file it was to be removed from.
        path: PathBuf,
        /// What went wrong.
        problem: RulesFileProblem,
    },
}

/// What is wrong with a settings file that a rule could not be written to. The file itself is
/// left as it was.
#[derive(Debug, thiserror::Error)]
pub enum RulesFileProblem {
    /// The existing file could not be read (or is not a regular file).
    #[error("cannot read it: {0}")]
    Unreadable(#[from] RegularFileError),
    /// The existing file is not JSON; cairn does not overwrite it.
    #[error("it is not valid JSON: {0}")]
    InvalidJson(serde_json::Error),
    /// The existing file is JSON but not an object.
    #[error("it is not a JSON object; fix or remove it")]
    NotAnObject,
    /// The file's `permissions` is something other than an object.
    #[error("`permissions` is not an object; fix it by hand")]
    PermissionsNotAnObject,
    /// The list the rule belongs in is something other than an array.
    #[error("`permissions.{list}` is not a list; fix it by hand")]
    NotAList {
        /// `allow`, `ask` or `deny`.
        list: String,
    },
    /// The edited settings could not be turned back into JSON.
    #[error("cannot encode it: {0}")]
    Encode(serde_json::Error),
    /// The directory for the file (`.claude/`) could not be created.
    #[error("cannot create {}: {source}", dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
    /// Writing the new content to a temporary file beside it failed.
    #[error("cannot write: {0}")]
    Write(io::Error),
    /// Renaming the temporary file over the old one failed; the old one is unchanged.
    #[error("cannot replace it: {0}")]
    Replace(io::Error),
}

/// The project's local settings file, where rules the user adds from the UI are kept.
pub fn local_settings_path(cwd: &Path) -> PathBuf {
    cwd.join(".claude").join("settings.local.json")
}

/// Adds each of `rules` to `permissions.allow` in `<cwd>/.claude/settings.local.json`: what
/// "Yes, and don't ask again" keeps. See [`save_rules`].
///
/// A compound command's suggestion is a list of rules in one string; split it first
/// (`cairn_policy::rules::split_rule_list`), so that each rule is its own entry:
///
/// ```
/// use cairn_config::rules_file::{local_settings_path, save_allow_rules};
///
/// let project = tempfile::tempdir()?;
/// let path = save_allow_rules(project.path(), ["Bash(npm test:*)", "Read"])?;
/// assert_eq!(path, local_settings_path(project.path()));
/// let settings: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
/// assert_eq!(
///     settings,
///     serde_json::json!({"permissions": {"allow": ["Bash(npm test:*)", "Read"]}})
/// );
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// ```
pub fn save_allow_rules(
    cwd: &Path,
    rules: impl IntoIterator<Item = impl AsRef<str>>,
) -> Result<PathBuf, RulesFileError> {
    save_rules(cwd, "allow", rules)
}

/// Adds each of `rules` to `permissions.<list>` (`allow`, `ask` or `deny`) in
/// `<cwd>/.claude/settings.local.json`, creating the file and its directory when needed and
/// keeping every other key; a rule the list has already is not added twice. The file is
/// replaced atomically (a temp file renamed over it), so a crash never leaves half a file,
/// and several rules are saved all or none.
///
/// Returns the file's path.
pub fn save_rules(
    cwd: &Path,
    list: &str,
    rules: impl IntoIterator<Item = impl AsRef<str>>,
) -> Result<PathBuf, RulesFileError> {
    let rules: Vec<String> = rules
        .into_iter()
        .map(|rule| rule.as_ref().to_string())
        .collect();
    let path = local_settings_path(cwd);
    let edited = edit_rule_lists(&path, IfMissing::Create, |permissions| {
        let entries = permissions
            .entry(list)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(entries) = entries else {
            return Err(RulesFileProblem::NotAList {
                list: list.to_string(),
            });
        };
        for rule in &rules {
            if !entries
                .iter()
                .any(|existing| existing.as_str() == Some(rule.as_str()))
            {
                entries.push(Value::String(rule.clone()));
            }
        }
        Ok(())
    })
    .map_err(|problem| RulesFileError::Save {
        rule: rules.join(", "),
        path: path.clone(),
        problem,
    })?;
    if edited == Edited::Created
        && let Some(git) = GitUser::from_env()
    {
        // Best effort, as in Claude Code: the rules are saved whether or not git can be told.
        let _ = keep_out_of_git(&path, &git);
    }
    Ok(path)
}

/// The line cairn adds to the user's global git ignore file, the one Claude Code adds: every
/// project's local settings, wherever the repository is.
pub const GIT_IGNORE_LINE: &str = "**/.claude/settings.local.json";

/// Whose git configuration [`keep_out_of_git`] reads and writes: the home directory and
/// `$XDG_CONFIG_HOME`, as git finds its global files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitUser {
    /// The user's home directory, where `~/.gitconfig` is.
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME` when set: git's global files are then under it rather than under
    /// `~/.config`.
    pub xdg_config_home: Option<PathBuf>,
}

impl GitUser {
    /// The user this process runs as (`None` without a home directory).
    pub fn from_env() -> Option<GitUser> {
        Some(GitUser {
            home: std::env::home_dir()?,
            xdg_config_home: std::env::var_os("XDG_CONFIG_HOME")
                .filter(|value| !value.is_empty())
                .map(PathBuf::from),
        })
    }

    /// Git's global ignore file when `core.excludesFile` is not set:
    /// `$XDG_CONFIG_HOME/git/ignore`, else `~/.config/git/ignore`.
    fn default_ignore_file(&self) -> PathBuf {
        match &self.xdg_config_home {
            Some(config) => config.join("git").join("ignore"),
            None => self.home.join(".config").join("git").join("ignore"),
        }
    }

    /// git for the two questions asked here (`check-ignore`, `config --get`), with none of
    /// cairn's credentials in its environment and the programs a repository's configuration
    /// could name turned off, as for every git call cairn makes on its own behalf.
    fn git(&self, dir: &Path) -> std::process::Command {
        let mut command = std::process::Command::new("git");
        command
            .env_clear()
            .envs(cairn_protocol::child_environment())
            .args([
                "--no-pager",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.hooksPath=/dev/null",
            ])
            .current_dir(dir)
            .env("HOME", &self.home)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        match &self.xdg_config_home {
            Some(config) => command.env("XDG_CONFIG_HOME", config),
            None => command.env_remove("XDG_CONFIG_HOME"),
        };
        command
    }
}

/// What [`keep_out_of_git`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitIgnoreOutcome {
    /// The file is not in a git work tree (or git is not installed): nothing to ignore.
    NotInARepository,
    /// Git already ignores it (the repository's `.gitignore`, or an earlier run).
    AlreadyIgnored,
    /// [`GIT_IGNORE_LINE`] was added to this global ignore file.
    Added(PathBuf),
}

/// Makes sure git ignores the local settings file at `path`, as Claude Code does when it
/// creates one: personal rules (and the paths in them) are not for committing. When git does
/// not already ignore it, [`GIT_IGNORE_LINE`] goes into the user's global ignore file
/// (`core.excludesFile`, else `~/.config/git/ignore`), so the repository's own files stay
/// untouched.
pub fn keep_out_of_git(path: &Path, user: &GitUser) -> io::Result<GitIgnoreOutcome> {
    // Git runs where the file is, or its nearest directory that exists.
    let dir = path
        .ancestors()
        .skip(1)
        .find(|dir| dir.is_dir())
        .unwrap_or(Path::new("."));
    let Ok(checked) = user
        .git(dir)
        .arg("check-ignore")
        .arg("-q")
        .arg(path)
        .status()
    else {
        return Ok(GitIgnoreOutcome::NotInARepository);
    };
    match checked.code() {
        Some(0) => return Ok(GitIgnoreOutcome::AlreadyIgnored),
        Some(1) => {}
        // 128: not in a work tree (or git failed): there is nothing to keep it out of.
        _ => return Ok(GitIgnoreOutcome::NotInARepository),
    }
    let configured = user
        .git(dir)
        .args(["config", "--get", "--path", "core.excludesFile"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_string())
        .filter(|file| !file.is_empty())
        .map(PathBuf::from);
    let file = configured.unwrap_or_else(|| user.default_ignore_file());
    let mut text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err),
    };
    if text.lines().any(|line| line.trim() == GIT_IGNORE_LINE) {
        return Ok(GitIgnoreOutcome::AlreadyIgnored);
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(GIT_IGNORE_LINE);
    text.push('\n');
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&file, text)?;
    Ok(GitIgnoreOutcome::Added(file))
}

/// Removes `rule` from every permission list (`allow`, `ask`, `deny`) of the settings file at
/// `path`, keeping everything else. Returns whether the file had it; a missing file has
/// nothing to remove.
pub fn remove_rule(path: &Path, rule: &str) -> Result<bool, RulesFileError> {
    let mut found = false;
    let edited = edit_rule_lists(path, IfMissing::Skip, |permissions| {
        for list in ["allow", "ask", "deny"] {
            if let Some(Value::Array(entries)) = permissions.get_mut(list) {
                let before = entries.len();
                entries.retain(|entry| entry.as_str().map(str::trim) != Some(rule.trim()));
                found |= entries.len() < before;
            }
        }
        Ok(())
    })
    .map_err(|problem| RulesFileError::Remove {
        rule: rule.to_string(),
        path: path.to_path_buf(),
        problem,
    })?;
    Ok(edited == Edited::Written && found)
}

/// What [`edit_rule_lists`] does when the settings file does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IfMissing {
    /// Start from an empty object and write the file.
    Create,
    /// Leave it absent: there is nothing to edit.
    Skip,
}

/// Whether [`edit_rule_lists`] wrote the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edited {
    /// The file was there and was rewritten.
    Written,
    /// There was no file; it was created.
    Created,
    Absent,
}

/// Reads the settings file at `path`, lets `edit` change its `permissions` object, and writes
/// it back atomically (a temp file renamed over it). A file that is not a JSON object, or
/// that is not a regular file at all, is left alone.
fn edit_rule_lists(
    path: &Path,
    if_missing: IfMissing,
    edit: impl FnOnce(&mut Map<String, Value>) -> Result<(), RulesFileProblem>,
) -> Result<Edited, RulesFileProblem> {
    let mut created = false;
    let mut settings = match read_regular_file(path, MAX_SETTINGS_BYTES)? {
        Some(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Map::new(),
        Some(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(RulesFileProblem::NotAnObject),
            Err(err) => return Err(RulesFileProblem::InvalidJson(err)),
        },
        None => match if_missing {
            IfMissing::Create => {
                created = true;
                Map::new()
            }
            IfMissing::Skip => return Ok(Edited::Absent),
        },
    };
    let permissions = settings
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(permissions) = permissions else {
        return Err(RulesFileProblem::PermissionsNotAnObject);
    };
    edit(permissions)?;
    let mut text =
        serde_json::to_string_pretty(&Value::Object(settings)).map_err(RulesFileProblem::Encode)?;
    text.push('\n');
    replace_file(path, &text)?;
    Ok(if created {
        Edited::Created
    } else {
        Edited::Written
    })
}

/// Puts `text` in place as the file at `path`, creating its directory: written to a temp file
/// beside it, then renamed over it, so the file is the old one or the new one, never half.
pub(crate) fn replace_file(path: &Path, text: &str) -> Result<(), RulesFileProblem> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|source| RulesFileProblem::CreateDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let name = path
        .file_name()
        .map_or_else(|| "settings".into(), |name| name.to_string_lossy());
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    if let Err(err) = std::fs::write(&temp, text) {
        let _ = std::fs::remove_file(&temp);
        return Err(RulesFileProblem::Write(err));
    }
    if let Err(err) = std::fs::rename(&temp, path) {
        let _ = std::fs::remove_file(&temp);
        return Err(RulesFileProblem::Replace(err));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::FileTypeExt;

    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn read(cwd: &Path) -> Value {
        let text = std::fs::read_to_string(cwd.join(".claude/settings.local.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn creates_the_file_and_keeps_other_keys_on_the_next_save() {
        let cwd = tempfile::tempdir().unwrap();
        save_allow_rules(cwd.path(), ["Bash(npm test:*)"]).unwrap();
        assert_eq!(
            read(cwd.path()),
            json!({"permissions": {"allow": ["Bash(npm test:*)"]}})
        );
        let path = cwd.path().join(".claude/settings.local.json");
        std::fs::write(
            &path,
            json!({"model": "opus", "permissions": {"allow": ["Read"], "deny": ["Bash(rm:*)"]}})
                .to_string(),
        )
        .unwrap();
        save_allow_rules(cwd.path(), ["Edit"]).unwrap();
        save_allow_rules(cwd.path(), ["Edit", "Bash(touch:*)"]).unwrap();
        assert_eq!(
            read(cwd.path()),
            json!({"model": "opus", "permissions": {"allow": ["Read", "Edit", "Bash(touch:*)"], "deny": ["Bash(rm:*)"]}})
        );
    }

    /// A git repository in a temp dir and a user whose home is another temp dir.
    fn repository_and_user() -> (tempfile::TempDir, tempfile::TempDir, GitUser) {
        let repo = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let user = GitUser {
            home: home.path().to_path_buf(),
            xdg_config_home: None,
        };
        let init = user.git(repo.path()).args(["init", "-q"]).status().unwrap();
        assert!(init.success());
        (repo, home, user)
    }

    fn ignored_by_git(path: &Path, user: &GitUser) -> bool {
        let dir = path.parent().unwrap();
        user.git(dir)
            .args(["check-ignore", "-q"])
            .arg(path)
            .status()
            .unwrap()
            .success()
    }

    #[test]
    fn a_new_local_settings_file_is_ignored_through_the_global_ignore_file() {
        let (repo, home, user) = repository_and_user();
        let path = local_settings_path(repo.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{}").unwrap();
        assert!(!ignored_by_git(&path, &user));
        let global = home.path().join(".config/git/ignore");
        assert_eq!(
            keep_out_of_git(&path, &user).unwrap(),
            GitIgnoreOutcome::Added(global.clone())
        );
        assert_eq!(
            std::fs::read_to_string(&global).unwrap(),
            "**/.claude/settings.local.json\n"
        );
        assert!(ignored_by_git(&path, &user), "git now ignores it");
        assert_eq!(
            keep_out_of_git(&path, &user).unwrap(),
            GitIgnoreOutcome::AlreadyIgnored,
            "asked again, nothing is added twice"
        );
        assert_eq!(
            std::fs::read_to_string(&global).unwrap(),
            "**/.claude/settings.local.json\n"
        );
    }

    #[test]
    fn a_configured_excludes_file_is_the_one_appended_to() {
        let (repo, home, user) = repository_and_user();
        let excludes = home.path().join("my-ignores");
        std::fs::write(&excludes, "*.swp").unwrap();
        std::fs::write(
            home.path().join(".gitconfig"),
            "[core]\n\texcludesFile = ~/my-ignores\n",
        )
        .unwrap();
        let path = local_settings_path(repo.path());
        assert_eq!(
            keep_out_of_git(&path, &user).unwrap(),
            GitIgnoreOutcome::Added(excludes.clone())
        );
        assert_eq!(
            std::fs::read_to_string(&excludes).unwrap(),
            "*.swp\n**/.claude/settings.local.json\n"
        );
        assert!(!home.path().join(".config/git/ignore").exists());
    }

    #[test]
    fn a_file_the_repository_ignores_or_outside_git_changes_nothing() {
        let (repo, home, user) = repository_and_user();
        std::fs::write(
            repo.path().join(".gitignore"),
            ".claude/settings.local.json\n",
        )
        .unwrap();
        let path = local_settings_path(repo.path());
        assert_eq!(
            keep_out_of_git(&path, &user).unwrap(),
            GitIgnoreOutcome::AlreadyIgnored
        );
        let elsewhere = tempfile::tempdir().unwrap();
        assert_eq!(
            keep_out_of_git(&local_settings_path(elsewhere.path()), &user).unwrap(),
            GitIgnoreOutcome::NotInARepository
        );
        assert!(!home.path().join(".config").exists());
    }

    #[test]
    fn a_broken_file_is_left_alone_and_named() {
        let cwd = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(cwd.path().join(".claude")).unwrap();
        let path = cwd.path().join(".claude/settings.local.json");
        std::fs::write(&path, "{not json").unwrap();
        let error = save_allow_rules(cwd.path(), ["Edit", "Bash(touch:*)"]).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "Could not save the rule Edit, Bash(touch:*) to {}: it is not valid JSON: key must be a string at line 1 column 2",
                path.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
        let error = remove_rule(&path, "Edit").unwrap_err();
        assert!(
            matches!(
                error,
                RulesFileError::Remove {
                    problem: RulesFileProblem::InvalidJson(_),
                    ..
                }
            ),
            "{error}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
    }

    #[test]
    fn a_fifo_in_place_of_the_file_is_refused_without_waiting_for_a_writer() {
        let cwd = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(cwd.path().join(".claude")).unwrap();
        let path = cwd.path().join(".claude/settings.local.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let error = save_allow_rules(cwd.path(), ["Edit"]).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "Could not save the rule Edit to {}: cannot read it: it is a FIFO, not a regular file",
                path.display()
            )
        );
        assert!(
            std::fs::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_fifo()
        );
    }

    #[test]
    fn rules_of_every_kind_are_saved_and_removed() {
        let cwd = tempfile::tempdir().unwrap();
        save_rules(cwd.path(), "deny", ["Bash(rm:*)"]).unwrap();
        save_rules(cwd.path(), "ask", ["WebFetch"]).unwrap();
        let path = save_allow_rules(cwd.path(), ["Read"]).unwrap();
        assert_eq!(
            read(cwd.path()),
            json!({"permissions": {"deny": ["Bash(rm:*)"], "ask": ["WebFetch"], "allow": ["Read"]}})
        );
        assert!(remove_rule(&path, "Bash(rm:*)").unwrap());
        assert!(!remove_rule(&path, "Bash(rm:*)").unwrap(), "already gone");
        assert_eq!(
            read(cwd.path()),
            json!({"permissions": {"deny": [], "ask": ["WebFetch"], "allow": ["Read"]}})
        );
        assert!(!remove_rule(&cwd.path().join("absent.json"), "Read").unwrap());
        assert!(!cwd.path().join("absent.json").exists());
    }

    #[test]
    fn a_list_that_is_not_a_list_is_named_and_nothing_is_saved() {
        let cwd = tempfile::tempdir().unwrap();
        let path = local_settings_path(cwd.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let before = json!({"permissions": {"allow": "Read"}}).to_string();
        std::fs::write(&path, &before).unwrap();
        let error = save_allow_rules(cwd.path(), ["Edit"]).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "Could not save the rule Edit to {}: `permissions.allow` is not a list; fix it by hand",
                path.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    }
}
