//! Custom slash commands, Claude Code's way: Markdown files under `.claude/commands/`
//! (project) and `~/.claude/commands/` (user), named by their path (`git/commit.md` is
//! `/git:commit`), with optional front matter (`description`, `argument-hint`,
//! `allowed-tools`, `model`). Expanding one substitutes `$ARGUMENTS` and `$1`…`$9`, runs the
//! `` !`command` `` lines and inlines their output, and inlines `@file` references.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::UnreadFile;
use crate::project_file::read_text;

/// Where a command was defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandScope {
    /// The project's `.claude/commands/`.
    Project,
    /// The user's `~/.claude/commands/`.
    User,
}

/// One custom command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// `commit`, or `git:commit` for `git/commit.md`.
    pub name: String,
    /// Whose directory it was found in.
    pub scope: CommandScope,
    /// The Markdown file that defines it.
    pub path: PathBuf,
    /// The front matter's `description`, shown in the command list; `None` when not given.
    pub description: Option<String>,
    /// The front matter's `argument-hint` (`<message>`), shown after the name.
    pub argument_hint: Option<String>,
    /// The front matter's `allowed-tools`: permission rules that hold during the command's
    /// turn only; empty when not given.
    pub allowed_tools: Vec<String>,
    /// The front matter's `model`, for the command's turn only; `None` keeps the session's.
    pub model: Option<String>,
    /// The body, after the front matter.
    pub template: String,
}

/// The largest command file read (and the largest `@file` a command inlines): far above any
/// real prompt template. A larger one is skipped with a warning.
pub const MAX_COMMAND_BYTES: u64 = 1024 * 1024;

/// The custom commands of a project, and the command files that could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandSet {
    /// By name; a project command wins over a user command with the same name.
    pub commands: Vec<CustomCommand>,
    /// Files under a commands directory that were skipped (a FIFO, a link to a device, too
    /// large, not UTF-8): warnings for the user, never a reason to stop.
    pub unread: Vec<UnreadFile>,
}

/// Every custom command for a project; a project command wins over a user command with the
/// same name. [`load_commands`] also tells which files were skipped.
pub fn discover_commands(project: &Path, home: Option<&Path>) -> Vec<CustomCommand> {
    load_commands(project, home).commands
}

/// Every custom command for a project, with the command files that could not be read.
pub fn load_commands(project: &Path, home: Option<&Path>) -> CommandSet {
    let mut found: BTreeMap<String, CustomCommand> = BTreeMap::new();
    let mut unread = Vec::new();
    if let Some(home) = home {
        collect(
            &home.join(".claude/commands"),
            CommandScope::User,
            &mut found,
            &mut unread,
        );
    }
    collect(
        &project.join(".claude/commands"),
        CommandScope::Project,
        &mut found,
        &mut unread,
    );
    CommandSet {
        commands: found.into_values().collect(),
        unread,
    }
}

fn collect(
    root: &Path,
    scope: CommandScope,
    found: &mut BTreeMap<String, CustomCommand>,
    unread: &mut Vec<UnreadFile>,
) {
    let mut stack = vec![root.to_path_buf()];
    // Each directory once, by its real path: a link back up the tree is not a loop.
    let mut visited = HashSet::new();
    while let Some(dir) = stack.pop() {
        if !dir.canonicalize().is_ok_and(|real| visited.insert(real)) {
            continue;
        }
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "md") {
                continue;
            }
            let text = match read_text(&path, MAX_COMMAND_BYTES) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(problem) => {
                    unread.push(problem);
                    continue;
                }
            };
            let Ok(relative) = path
                .with_extension("")
                .strip_prefix(root)
                .map(Path::to_path_buf)
            else {
                continue;
            };
            let name = relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(":");
            let (front, template) = split_front_matter(&text);
            found.insert(
                name.clone(),
                CustomCommand {
                    name,
                    scope,
                    path,
                    description: front.get("description").cloned(),
                    argument_hint: front.get("argument-hint").cloned(),
                    allowed_tools: front
                        .get("allowed-tools")
                        .map(|tools| {
                            tools
                                .split(',')
                                .map(|tool| tool.trim().to_string())
                                .filter(|tool| !tool.is_empty())
                                .collect()
                        })
                        .unwrap_or_default(),
                    model: front.get("model").cloned(),
                    template: template.to_string(),
                },
            );
        }
    }
}

/// Simple `key: value` front matter between `---` lines; quotes around values are dropped.
pub(crate) fn split_front_matter(text: &str) -> (BTreeMap<String, String>, &str) {
    let mut fields = BTreeMap::new();
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (fields, text);
    };
    let Some(end) = rest.find("\n---") else {
        return (fields, text);
    };
    for line in rest[..end].lines() {
        if let Some((key, value)) = line.split_once(':') {
            let value = value.trim().trim_matches('"').trim_matches('\'');
            fields.insert(key.trim().to_string(), value.to_string());
        }
    }
    let body = rest[end + 4..].trim_start_matches(['\r', '\n']);
    (fields, body)
}

impl CustomCommand {
    /// The block that goes to the model before the expansion, naming the command as it was
    /// invoked, in Claude Code's tags: `<command-name>/name</command-name>` and its arguments.
    pub fn invocation_tag(&self, arguments: &str) -> String {
        format!(
            "<command-name>/{}</command-name>\n<command-args>{arguments}</command-args>",
            self.name
        )
    }

    /// The prompt this command sends for `arguments`, run in `cwd`.
    pub fn expand(&self, arguments: &str, cwd: &Path) -> String {
        let words: Vec<&str> = arguments.split_whitespace().collect();
        let mut text = self.template.replace("$ARGUMENTS", arguments);
        for index in (1..=9).rev() {
            let value = words.get(index - 1).copied().unwrap_or("");
            text = text.replace(&format!("${index}"), value);
        }
        text.lines()
            .map(|line| expand_line(line, cwd))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// `` !`command` `` → the command's output; `@path` → the file's contents.
fn expand_line(line: &str, cwd: &Path) -> String {
    let trimmed = line.trim_start();
    if let Some(command) = trimmed
        .strip_prefix("!`")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        return run_command(command, cwd);
    }
    line.split(' ')
        .map(|word| match word.strip_prefix('@') {
            Some(path) if !path.is_empty() => match read_text(&cwd.join(path), MAX_COMMAND_BYTES) {
                Ok(Some(contents)) => {
                    format!("\nContents of {path}:\n```\n{}\n```\n", contents.trim_end())
                }
                Ok(None) => word.to_string(),
                Err(problem) => format!("{word} ({})", problem.reason),
            },
            _ => word.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn run_command(command: &str, cwd: &Path) -> String {
    match Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        // Its output goes into the prompt: cairn's credentials must not be in its reach.
        .env_clear()
        .envs(cairn_protocol::child_environment())
        .stdin(Stdio::null())
        .output()
    {
        Ok(output) => {
            let mut text = String::from_utf8_lossy(&output.stdout)
                .trim_end()
                .to_string();
            let stderr = String::from_utf8_lossy(&output.stderr);
            if !stderr.trim().is_empty() {
                text.push_str(&format!("\n{}", stderr.trim_end()));
            }
            text
        }
        Err(err) => format!("(running `{command}` failed: {err})"),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn commands_are_found_namespaced_and_expanded() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        write(
            &project.path().join(".claude/commands/git/commit.md"),
            "---\ndescription: \"Commit the work\"\nargument-hint: <message>\nallowed-tools: Bash(git add:*), Bash(git commit:*)\n---\nCommit with message: $ARGUMENTS (first word $1)\nStatus:\n!`echo clean`\nNotes: @notes.txt\n",
        );
        write(
            &home.path().join(".claude/commands/review.md"),
            "Review $ARGUMENTS",
        );
        write(
            &home.path().join(".claude/commands/git/commit.md"),
            "user version, shadowed",
        );
        write(&project.path().join("notes.txt"), "remember the tests");

        let commands = discover_commands(project.path(), Some(home.path()));
        let names: Vec<(&str, CommandScope)> = commands
            .iter()
            .map(|c| (c.name.as_str(), c.scope))
            .collect();
        assert_eq!(
            names,
            vec![
                ("git:commit", CommandScope::Project),
                ("review", CommandScope::User)
            ]
        );
        let commit = &commands[0];
        assert_eq!(commit.description.as_deref(), Some("Commit the work"));
        assert_eq!(commit.argument_hint.as_deref(), Some("<message>"));
        assert_eq!(
            commit.allowed_tools,
            vec!["Bash(git add:*)", "Bash(git commit:*)"]
        );
        assert_eq!(
            commit.expand("fix the parser", project.path()),
            "Commit with message: fix the parser (first word fix)\nStatus:\nclean\nNotes: \nContents of notes.txt:\n```\nremember the tests\n```\n"
        );
    }
}
