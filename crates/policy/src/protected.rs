//! Files that decide what runs later, outside any sandbox: a project's `.claude/` settings,
//! hooks and commands, `.mcp.json`, and git's configuration and hooks.
//!
//! A write to one of them is not an edit like any other: `echo '{"hooks": …}' >
//! .claude/settings.local.json` makes the next `cairn -c` run a hook unsandboxed, and
//! `git config core.fsmonitor …` runs a program at cairn's next `git status`. So the gate asks
//! before every such write, whatever the allow rules and the mode say (only
//! `bypassPermissions` skips the question), and the sandbox mounts them read-only.

use std::path::{Component, Path, PathBuf};

/// What a protected path controls, for the sentence that asks about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protected {
    /// `.claude/` (settings, hooks, commands, agents, skills) or `.claude.json`.
    ProjectSettings,
    /// `.mcp.json`.
    McpServers,
    /// `.git/config`, `.git/hooks/`, `.git/info/`: what git runs.
    GitPrograms,
    /// The project directory or `.git` as a whole: moving, removing or filling them can replace
    /// any of the above.
    Container,
}

impl Protected {
    /// Why a write there needs the user, in words.
    pub fn what_it_controls(self) -> &'static str {
        match self {
            Protected::ProjectSettings => {
                "the project's settings, hooks and commands, which run later outside the sandbox"
            }
            Protected::McpServers => "the project's MCP servers, which cairn starts",
            Protected::GitPrograms => {
                "git's configuration and hooks, which name programs git runs (cairn's own git \
                 calls included)"
            }
            Protected::Container => {
                "a directory that holds the project's settings or git's configuration"
            }
        }
    }
}

/// The protected files directly in a workspace root: while one does not exist the sandbox
/// cannot mount it read-only, so a command that creates it has it removed afterwards (see
/// `CommandSandbox::guarded_files` in cairn-tools).
pub fn root_files(root: &Path) -> Vec<PathBuf> {
    [".mcp.json", ".claude.json"]
        .into_iter()
        .map(|name| root.join(name))
        .collect()
}

/// The directories and files under a workspace root that [`protection_of`] protects, as they
/// exist on disk now: what the sandbox mounts read-only.
pub fn protected_targets(root: &Path) -> Vec<PathBuf> {
    let candidates = [
        root.join(".claude"),
        root.join(".claude.json"),
        root.join(".mcp.json"),
        root.join(".git").join("config"),
        root.join(".git").join("config.worktree"),
        root.join(".git").join("hooks"),
        root.join(".git").join("info"),
        root.join(".git").join("modules"),
        root.join(".git").join("worktrees"),
    ];
    candidates
        .into_iter()
        .filter(|path| std::fs::symlink_metadata(path).is_ok())
        .collect()
}

/// Whether writing `path` (absolute, symlinks resolved) changes what runs later: it is one of
/// the protected files of a workspace root, lies beneath one, or is a directory that holds
/// them (the root itself, `.git`).
pub fn protection_of(path: &Path, roots: &[PathBuf]) -> Option<Protected> {
    roots.iter().find_map(|root| {
        let relative = path.strip_prefix(root).ok()?;
        classify(relative)
    })
}

fn classify(relative: &Path) -> Option<Protected> {
    let parts: Vec<&str> = relative
        .components()
        .filter_map(|component| match component {
            Component::Normal(part) => part.to_str(),
            Component::Prefix(_)
            | Component::RootDir
            | Component::CurDir
            | Component::ParentDir => None,
        })
        .collect();
    match parts.as_slice() {
        [] => Some(Protected::Container),
        [".claude", ..] | [".claude.json"] => Some(Protected::ProjectSettings),
        [".mcp.json"] => Some(Protected::McpServers),
        [".git"] => Some(Protected::Container),
        [".git", rest @ ..] => {
            let runs_programs = rest.iter().any(|part| matches!(*part, "hooks" | "info"))
                || rest
                    .last()
                    .is_some_and(|name| matches!(*name, "config" | "config.worktree"));
            runs_programs.then_some(Protected::GitPrograms)
        }
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a test should fail loudly")]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn protected_paths_are_recognised_below_any_root() {
        let roots = [PathBuf::from("/w/app"), PathBuf::from("/w/lib")];
        let cases = [
            (
                "/w/app/.claude/settings.local.json",
                Some(Protected::ProjectSettings),
            ),
            (
                "/w/lib/.claude/commands/x.md",
                Some(Protected::ProjectSettings),
            ),
            ("/w/app/.claude.json", Some(Protected::ProjectSettings)),
            ("/w/app/.mcp.json", Some(Protected::McpServers)),
            ("/w/app/.git/config", Some(Protected::GitPrograms)),
            ("/w/app/.git/hooks/pre-commit", Some(Protected::GitPrograms)),
            ("/w/app/.git/info/attributes", Some(Protected::GitPrograms)),
            (
                "/w/app/.git/modules/sub/config",
                Some(Protected::GitPrograms),
            ),
            (
                "/w/app/.git/modules/sub/hooks/post-checkout",
                Some(Protected::GitPrograms),
            ),
            ("/w/app/.git", Some(Protected::Container)),
            ("/w/app", Some(Protected::Container)),
            ("/w/app/.git/objects/ab/cdef", None),
            ("/w/app/.git/HEAD", None),
            ("/w/app/src/.mcp.json", None),
            ("/w/app/src/config", None),
            ("/w/app/docs/.claude.md", None),
            ("/elsewhere/.claude/settings.json", None),
        ];
        for (path, expected) in cases {
            assert_eq!(protection_of(Path::new(path), &roots), expected, "{path}");
        }
    }

    #[test]
    fn targets_are_what_exists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "").unwrap();
        std::fs::write(root.join(".mcp.json"), "{}").unwrap();
        assert_eq!(
            protected_targets(root),
            vec![
                root.join(".mcp.json"),
                root.join(".git/config"),
                root.join(".git/hooks"),
            ]
        );
    }
}
