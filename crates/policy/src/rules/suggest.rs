//! Rules to offer when the user answers "yes, and don't ask again".
//!
//! A suggestion is as narrow as still makes it useful: a command's subcommand (`npm run
//! test:*`, `git status:*`) for tools known to have them, the program for a network client
//! whose arguments only say what to fetch or look up (`curl:*`), the exact command otherwise
//! (`rm -rf build` is never widened to `rm:*`); the directory a file is in (`Edit(src/**)`);
//! the host of a URL.

use std::path::{Path, PathBuf};

use super::domain_pattern::host_of_url;
use super::path_pattern::normalize;
use super::tool_selector::{EDIT_TOOLS, READ_TOOLS};
use super::wildcard;

/// Commands whose second word is a subcommand, so that `git status:*` is a meaningful rule.
const SUBCOMMAND_TOOLS: [&str; 17] = [
    "bun", "cargo", "deno", "docker", "gh", "git", "go", "kubectl", "make", "npm", "pip", "pip3",
    "pnpm", "poetry", "rustup", "uv", "yarn",
];

/// Network clients whose arguments say what to fetch or look up: one rule for the program is
/// what "don't ask again for curl" means. What such a command writes outside the workspace,
/// or pipes into a shell, is still asked about under the rule.
const PROGRAM_TOOLS: [&str; 11] = [
    "aria2c", "curl", "dig", "host", "http", "https", "nslookup", "ping", "wget", "whois", "xh",
];

/// Package managers whose `run` takes a script name as a third word (`npm run test`).
const SCRIPT_RUNNERS: [&str; 4] = ["bun", "npm", "pnpm", "yarn"];

pub(crate) fn allow_rules(call: &super::CallFacts<'_>) -> Vec<String> {
    let tool = call.tool;
    let mut rules = if tool == "Bash" {
        bash_rules(call)
    } else if EDIT_TOOLS.contains(&tool) || READ_TOOLS.contains(&tool) {
        path_rule(call).into_iter().collect()
    } else if tool == "WebFetch" {
        call.input
            .get("url")
            .and_then(serde_json::Value::as_str)
            .and_then(host_of_url)
            .filter(|host| !host.contains(':'))
            .map(|host| format!("WebFetch(domain:{host})"))
            .into_iter()
            .collect()
    } else {
        Vec::new()
    };
    if rules.is_empty() {
        rules.push(tool.to_owned());
    }
    rules
}

fn bash_rules(call: &super::CallFacts<'_>) -> Vec<String> {
    let whole;
    let commands: Vec<&str> = match call.bash_commands {
        Some(commands) if !commands.is_empty() => commands.iter().map(String::as_str).collect(),
        _ => {
            whole = call
                .input
                .get("command")
                .and_then(serde_json::Value::as_str)
                .map(|c| c.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_default();
            vec![whole.as_str()]
        }
    };
    let mut rules: Vec<String> = Vec::new();
    for command in commands.into_iter().filter(|c| !c.is_empty()) {
        let rule = command_rule(command);
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    rules
}

/// `Bash(git status:*)` for a known tool's subcommand, `Bash(curl:*)` for a network client,
/// else `Bash(<the command>)`.
fn command_rule(command: &str) -> String {
    let words: Vec<&str> = command.split(' ').collect();
    let is_subcommand = |word: &&str| {
        !word.is_empty()
            && !word.starts_with('-')
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'))
    };
    let depth = match words.as_slice() {
        [tool, "run" | "run-script", script, ..]
            if SCRIPT_RUNNERS.contains(tool) && is_subcommand(script) =>
        {
            3
        }
        [tool, sub, ..] if SUBCOMMAND_TOOLS.contains(tool) && is_subcommand(sub) => 2,
        [tool, ..] if PROGRAM_TOOLS.contains(tool) => 1,
        _ => 0,
    };
    if depth == 0 {
        format!("Bash({})", wildcard::escape(command))
    } else {
        format!("Bash({}:*)", words[..depth].join(" "))
    }
}

/// `Edit(<dir>/**)` or `Read(<dir>/**)` for the directory holding the call's files (for Glob,
/// Grep and LS, the directory searched).
fn path_rule(call: &super::CallFacts<'_>) -> Option<String> {
    let family = if EDIT_TOOLS.contains(&call.tool) {
        "Edit"
    } else {
        "Read"
    };
    let searches_directory = matches!(call.tool, "Glob" | "Grep" | "LS");
    let cwd = normalize(call.cwd, Path::new("/"));
    let home = normalize(call.home, &cwd);
    let dirs = call.paths.iter().map(|path| {
        let path = normalize(path, &cwd);
        match (searches_directory, path.parent()) {
            (false, Some(parent)) => parent.to_path_buf(),
            _ => path,
        }
    });
    let dir = common_ancestor(dirs)?;
    Some(format!(
        "{family}({})",
        directory_pattern(&dir, &cwd, &home)
    ))
}

fn common_ancestor(mut dirs: impl Iterator<Item = PathBuf>) -> Option<PathBuf> {
    let mut common = dirs.next()?;
    for dir in dirs {
        while !dir.starts_with(&common) {
            if !common.pop() {
                break;
            }
        }
    }
    Some(common)
}

/// The pattern for everything in `dir`, written relative to the working directory when it is
/// inside it, else to home, else from the root.
fn directory_pattern(dir: &Path, cwd: &Path, home: &Path) -> String {
    if let Ok(below) = dir.strip_prefix(cwd) {
        return match glob_of(below) {
            below if below.is_empty() => "./**".to_owned(),
            // `~x/**` would read as a home pattern.
            below if below.starts_with('~') => format!("./{below}/**"),
            below => format!("{below}/**"),
        };
    }
    if let Ok(below) = dir.strip_prefix(home) {
        return match glob_of(below) {
            below if below.is_empty() => "~/**".to_owned(),
            below => format!("~/{below}/**"),
        };
    }
    match glob_of(dir.strip_prefix("/").unwrap_or(dir)) {
        below if below.is_empty() => "//**".to_owned(),
        below => format!("//{below}/**"),
    }
}

/// A relative path as a glob that matches only it.
fn glob_of(path: &Path) -> String {
    let segments: Vec<String> = path
        .components()
        .map(|c| {
            let mut escaped = String::new();
            for ch in c.as_os_str().to_string_lossy().chars() {
                match ch {
                    '?' | '*' | '[' | ']' | '{' | '}' => {
                        escaped.push('[');
                        escaped.push(ch);
                        escaped.push(']');
                    }
                    '\\' => escaped.push_str("\\\\"),
                    ch => escaped.push(ch),
                }
            }
            escaped
        })
        .collect();
    segments.join("/")
}
