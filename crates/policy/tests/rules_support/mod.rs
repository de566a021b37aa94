//! Calls and origins shared by the `rules_*` tests: a user `ann` with home `/home/ann` and a
//! project at `/home/ann/proj`. All paths are made up; nothing touches the filesystem.

#![allow(dead_code, reason = "each test file uses part of the fixture")]

use std::path::{Path, PathBuf};

use cairn_policy::rules::{CallFacts, RuleOrigin};
use serde_json::{Value, json};

pub const HOME: &str = "/home/ann";
pub const PROJECT: &str = "/home/ann/proj";

/// `<project>/.claude/settings.json`: `/path` is anchored at the project.
pub fn project() -> RuleOrigin {
    RuleOrigin::new(format!("{PROJECT}/.claude/settings.json"), PROJECT)
}

/// `~/.claude/settings.json`: `/path` is anchored at `~/.claude`.
pub fn user() -> RuleOrigin {
    RuleOrigin::new(
        format!("{HOME}/.claude/settings.json"),
        format!("{HOME}/.claude"),
    )
}

/// `--allowedTools` given in `cwd`: `/path` is anchored at the working directory.
pub fn flag(cwd: &str) -> RuleOrigin {
    RuleOrigin::new("--allowedTools", cwd)
}

/// A tool call with owned facts, lent out as [`CallFacts`].
#[derive(Debug, Clone)]
pub struct Call {
    pub tool: String,
    pub input: Value,
    pub paths: Vec<PathBuf>,
    pub commands: Option<Vec<String>>,
    pub cwd: PathBuf,
}

impl Call {
    pub fn facts(&self) -> CallFacts<'_> {
        CallFacts {
            tool: &self.tool,
            input: &self.input,
            paths: &self.paths,
            bash_commands: self.commands.as_deref(),
            home: Path::new(HOME),
            cwd: &self.cwd,
        }
    }

    /// The same call made from another working directory.
    pub fn in_dir(mut self, cwd: &str) -> Call {
        self.cwd = PathBuf::from(cwd);
        self
    }
}

fn call(tool: &str, input: Value) -> Call {
    Call {
        tool: tool.to_owned(),
        input,
        paths: Vec::new(),
        commands: None,
        cwd: PathBuf::from(PROJECT),
    }
}

/// A Bash call whose command line parsed into these simple commands, joined by `&&`.
pub fn bash(commands: &[&str]) -> Call {
    let mut call = call("Bash", json!({ "command": commands.join(" && ") }));
    call.commands = Some(commands.iter().map(|c| (*c).to_owned()).collect());
    call
}

/// A Bash call whose command line was not split into simple commands.
pub fn bash_unparsed(command: &str) -> Call {
    call("Bash", json!({ "command": command }))
}

/// A Bash call with the whole line and its simple commands given separately.
pub fn bash_line(line: &str, commands: &[&str]) -> Call {
    let mut call = call("Bash", json!({ "command": line }));
    call.commands = Some(commands.iter().map(|c| (*c).to_owned()).collect());
    call
}

/// A call of a file tool on these paths (relative ones under the project).
pub fn on(tool: &str, paths: &[&str]) -> Call {
    let mut call = call(tool, json!({}));
    call.paths = paths.iter().map(|p| Path::new(PROJECT).join(p)).collect();
    call
}

pub fn fetch(url: &str) -> Call {
    call("WebFetch", json!({ "url": url, "prompt": "summarise" }))
}

pub fn tool(name: &str) -> Call {
    call(name, json!({}))
}
