//! Work-tree files that a repository's own configuration makes git read as configuration or
//! run as hooks: `core.hooksPath` (husky's `.husky/_`, a shared `.githooks/`) and
//! `include.path` / `includeIf.<condition>.path` (a shared `.gitconfig` in the project).
//! Writing one is like writing `.git/hooks` or `.git/config`.
//!
//! Only the repository's `config` and `config.worktree` are read, with a reader that knows
//! sections, keys, quotes and comments (enough for these keys); the user's global
//! configuration is the user's own. Other keys can name a program in the work tree too
//! (`core.fsmonitor = ./watch.sh`, a filter driver's script): their values are commands, not
//! paths, and are not followed here.

use std::path::{Path, PathBuf};

/// The paths below `root` that `root/.git`'s configuration names as hooks or configuration.
pub(crate) fn named_by_config(root: &Path) -> Vec<PathBuf> {
    let git_dir = root.join(".git");
    ["config", "config.worktree"]
        .iter()
        .filter_map(|name| std::fs::read_to_string(git_dir.join(name)).ok())
        .flat_map(|text| named_paths(&text, root, &git_dir))
        .filter(|path| path.starts_with(root) && path != root)
        .collect()
}

/// The hooks directory and included files one configuration file names. A relative
/// `core.hooksPath` is relative to the work tree; a relative include to the file's directory.
fn named_paths(text: &str, work_tree: &Path, config_dir: &Path) -> Vec<PathBuf> {
    let mut section = String::new();
    let mut found = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            let name = header
                .split([']', ' ', '"', '.'])
                .next()
                .unwrap_or_default();
            section = name.to_ascii_lowercase();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = unquote(value);
        let base = match (section.as_str(), key.as_str()) {
            ("core", "hookspath") => work_tree,
            ("include" | "includeif", "path") => config_dir,
            _ => continue,
        };
        if value.is_empty() || value.starts_with('~') {
            continue;
        }
        found.push(normalise(&base.join(value)));
    }
    found
}

/// A value without its comment and surrounding quotes.
fn unquote(value: &str) -> String {
    let value = value.trim();
    match value.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next().unwrap_or_default().to_owned(),
        None => value
            .split(['#', ';'])
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned(),
    }
}

/// `path` with `.` and `..` taken out, without touching the disk.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a test should fail loudly")]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn hooks_paths_and_includes_are_found() {
        let root = Path::new("/w");
        let text = "[core]\n\trepositoryformatversion = 0\n\thooksPath = .husky/_ ; husky\n\
                    [include]\n\tpath = ../shared.gitconfig\n\
                    [includeIf \"gitdir:/w/\"]\n\tpath = \"../team config\"\n\
                    [remote \"origin\"]\n\tpath = ignored\n\
                    [include]\n\tpath = ~/elsewhere\n";
        assert_eq!(
            named_paths(text, root, &root.join(".git")),
            vec![
                PathBuf::from("/w/.husky/_"),
                PathBuf::from("/w/shared.gitconfig"),
                PathBuf::from("/w/team config"),
            ]
        );
    }
}
