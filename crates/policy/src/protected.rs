//! Files that decide what runs later, outside any sandbox: a project's `.claude/` settings,
//! hooks and commands, `.mcp.json`, and git's own control files (its configuration, hooks,
//! and the files that say where the repository is), in the root's `.git` and in any `.git`
//! below it.
//!
//! A write to one of them is not an edit like any other: `echo '{"hooks": …}' >
//! .claude/settings.local.json` makes the next `cairn -c` run a hook unsandboxed, and
//! `git config core.fsmonitor …` — or a `.git/commondir` naming a directory whose `config`
//! sets it — runs a program at the user's next `git status`. So the gate asks before every
//! such write, whatever the allow rules and the mode say (only `bypassPermissions` skips the
//! question), the sandbox mounts the ones that exist read-only, and a sandboxed command that
//! creates or changes one anyway has that undone as it ends ([`guarded_files`]). Which of
//! git's files are protected, and why the rest are not, is in `git.rs`.

mod git;
mod layout;
mod named;

pub use git::git_command_writing_control_files;
pub use layout::{GitLayout, MAX_DIRECTORIES};

use std::path::{Component, Path, PathBuf};

/// What a protected path controls, for the sentence that asks about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protected {
    /// `.claude/` (settings, hooks, commands, agents, skills) or `.claude.json`.
    ProjectSettings,
    /// `.mcp.json`.
    McpServers,
    /// `.git/config`, `config.worktree`, `.git/hooks/`, `.git/info/`, `.gitmodules`, and the
    /// same in submodules and worktrees: what git runs.
    GitPrograms,
    /// `commondir`, `gitdir`, `objects/info/alternates`: where git finds the rest of the
    /// repository, its configuration and hooks included.
    GitLocation,
    /// A `.git` below the workspace root (a directory, or a file saying `gitdir: …`): git run
    /// in that directory uses its configuration and hooks.
    NestedRepository,
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
            Protected::GitLocation => {
                "a pointer to where git finds the repository, its configuration and hooks \
                 included"
            }
            Protected::NestedRepository => {
                "a git repository whose configuration and hooks git uses in that directory"
            }
            Protected::Container => {
                "a directory that holds the project's settings or git's configuration"
            }
        }
    }
}

/// The protected files directly in a workspace root: while one does not exist the sandbox
/// cannot mount it read-only, so a command that creates it has it removed afterwards (see
/// [`guarded_files`]).
pub fn root_files(root: &Path) -> Vec<PathBuf> {
    [".mcp.json", ".claude.json"]
        .into_iter()
        .map(|name| root.join(name))
        .collect()
}

/// What the sandbox mounts for a workspace root, as it exists on disk now.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MountPlan {
    /// Git directories bound onto themselves (writable), so that they cannot be renamed away
    /// and replaced with their read-only mounts: every git directory, in the order to mount.
    pub pinned: Vec<PathBuf>,
    /// The protected directories and files that [`protection_of`] protects and that exist:
    /// bound read-only, after the pins.
    pub read_only: Vec<PathBuf>,
}

/// The mounts that protect `root` (canonical): `.claude`, `.claude.json`, `.mcp.json`, and
/// the control files of every git directory found below it ([`GitLayout`]). Data files of
/// git (objects, refs, the index, a worktree's `HEAD`) stay writable, so `git commit` works
/// in the sandbox. `.gitmodules` is left writable too: a checkout rewrites it, and git
/// refuses what could run from it (`update = !command`, `ext::` URLs).
pub fn mount_plan(root: &Path) -> MountPlan {
    mount_plan_of(root, &GitLayout::of(root))
}

/// [`mount_plan`] from a layout already found.
pub fn mount_plan_of(root: &Path, layout: &GitLayout) -> MountPlan {
    let mut read_only: Vec<PathBuf> = [".claude", ".claude.json", ".mcp.json"]
        .into_iter()
        .map(|name| root.join(name))
        .filter(|path| std::fs::symlink_metadata(path).is_ok())
        .collect();
    read_only.extend(layout.existing_control_paths());
    MountPlan {
        pinned: layout
            .git_dirs
            .iter()
            .filter(|dir| dir.is_dir())
            .cloned()
            .collect(),
        read_only,
    }
}

/// What a sandboxed command must leave as it found it below `root` (canonical), existing or
/// not: the root files ([`root_files`]), the root's `.git`, every `.git` found below it, and
/// each git directory's control files. The caller records their state before the command and
/// undoes any change after it, foreground or background, because a bind mount cannot cover a
/// file that does not exist yet (`commondir`, `objects/info/alternates`, a new `.git`).
/// `complete` is false when the walk stopped early ([`MAX_DIRECTORIES`]).
pub fn guarded_files(root: &Path) -> (Vec<PathBuf>, bool) {
    let layout = GitLayout::of(root);
    let mut paths = root_files(root);
    paths.push(root.join(".git"));
    paths.extend(layout.guarded_paths());
    // A hooks directory or included file in the work tree is not mounted (husky rewrites its
    // `.husky/_` at every `npm install`), but a change to it is undone all the same.
    for named in named::named_by_config(root) {
        paths.extend(layout::files_below(&named, 1_000));
        paths.push(named);
    }
    paths.sort();
    paths.dedup();
    (paths, layout.complete)
}

/// Whether writing `path` (absolute, symlinks resolved) changes what runs later: it is one of
/// the protected files of a workspace root, lies beneath one, or is a directory that holds
/// them (the root itself, `.git`).
///
/// git's data inside a `.git` is not protected, but only while that `.git` is a directory:
/// writing `src/.git/HEAD` where there is no `src/.git` creates a repository.
pub fn protection_of(path: &Path, roots: &[PathBuf]) -> Option<Protected> {
    roots.iter().find_map(|root| {
        let relative = path.strip_prefix(root).ok()?;
        classify(relative)
            .or_else(|| creates_git_dir(root, relative))
            .or_else(|| hard_link_to_protected(path, root))
            .or_else(|| in_bare_repository(path, root))
            .or_else(|| {
                named::named_by_config(root)
                    .iter()
                    .any(|named| path.starts_with(named))
                    .then_some(Protected::GitPrograms)
            })
    })
}

/// Whether writing `path` writes a control file of a bare repository below `root`, or
/// completes one: git run in a directory holding `HEAD`, `objects/` and `refs/` takes that
/// directory for a repository and uses its `config` (its pager, its fsmonitor), even without
/// a `.git` (unless the user set `safe.bareRepository=explicit`).
fn in_bare_repository(path: &Path, root: &Path) -> Option<Protected> {
    let inside_a_git_entry = path
        .strip_prefix(root)
        .ok()?
        .components()
        .any(|part| part.as_os_str().to_str().is_some_and(git::is_git_entry));
    if inside_a_git_entry {
        return None;
    }
    let makes_it = ["HEAD", "objects", "refs"];
    let name = path.file_name()?.to_str()?;
    let dir = path.parent()?;
    let completes = makes_it.contains(&name)
        && dir != root
        && dir.starts_with(root)
        && makes_it
            .iter()
            .all(|part| *part == name || std::fs::symlink_metadata(dir.join(part)).is_ok());
    if completes {
        return Some(Protected::NestedRepository);
    }
    path.ancestors()
        .skip(1)
        .take_while(|dir| *dir != root && dir.starts_with(root))
        .find(|dir| {
            makes_it
                .iter()
                .all(|part| std::fs::symlink_metadata(dir.join(part)).is_ok())
        })
        .and_then(|dir| classify(&Path::new(".git").join(path.strip_prefix(dir).ok()?)))
        .filter(|found| *found != Protected::Container)
}

/// Whether `path` is another name (a hard link) for a protected file of `root`: writing it
/// writes that file. Looked for only when the file has more than one name.
fn hard_link_to_protected(path: &Path, root: &Path) -> Option<Protected> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.nlink() < 2 {
        return None;
    }
    let same_file = |candidate: &Path| {
        std::fs::symlink_metadata(candidate)
            .is_ok_and(|other| other.dev() == meta.dev() && other.ino() == meta.ino())
    };
    let (git_files, _) = guarded_files(root);
    let claude = layout::files_below(&root.join(".claude"), 10_000);
    git_files
        .iter()
        .chain(&claude)
        .filter(|candidate| candidate.as_path() != path && same_file(candidate))
        .find_map(|candidate| classify(candidate.strip_prefix(root).ok()?))
}

/// Whether writing `relative` creates the `.git` directory it lies in.
fn creates_git_dir(root: &Path, relative: &Path) -> Option<Protected> {
    let mut git_dir = root.to_path_buf();
    for component in relative.components() {
        git_dir.push(component);
        if component
            .as_os_str()
            .to_str()
            .is_some_and(git::is_git_entry)
        {
            let exists = std::fs::symlink_metadata(&git_dir).is_ok_and(|meta| meta.is_dir());
            return match (exists, git_dir.parent() == Some(root)) {
                (true, _) => None,
                (false, true) => Some(Protected::Container),
                (false, false) => Some(Protected::NestedRepository),
            };
        }
    }
    None
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
        parts => git::classify_git(parts),
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
            // No `.git` directory exists there: writing into it creates one.
            ("/w/app/.git/objects/ab/cdef", Some(Protected::Container)),
            ("/w/app/src/.git/HEAD", Some(Protected::NestedRepository)),
            ("/w/app/src/.mcp.json", None),
            ("/w/app/src/config", None),
            ("/w/app/src/sub/.git", Some(Protected::NestedRepository)),
            ("/w/app/src/sub/.git/config", Some(Protected::GitPrograms)),
            ("/w/app/.git/commondir", Some(Protected::GitLocation)),
            ("/w/app/docs/.claude.md", None),
            ("/elsewhere/.claude/settings.json", None),
        ];
        for (path, expected) in cases {
            assert_eq!(protection_of(Path::new(path), &roots), expected, "{path}");
        }
    }

    #[test]
    fn git_data_is_writable_only_inside_an_existing_git_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join(".git/objects")).unwrap();
        std::fs::create_dir_all(root.join("sub/.git")).unwrap();
        std::fs::create_dir_all(root.join("other")).unwrap();
        std::fs::write(root.join("other/.git"), "gitdir: /elsewhere\n").unwrap();
        let roots = [root.clone()];
        let cases = [
            (".git/HEAD", None),
            (".git/objects/ab/cdef", None),
            ("sub/.git/index", None),
            ("other/.git/HEAD", Some(Protected::NestedRepository)),
            ("new/.git/HEAD", Some(Protected::NestedRepository)),
        ];
        for (path, expected) in cases {
            assert_eq!(protection_of(&root.join(path), &roots), expected, "{path}");
        }
    }

    #[test]
    fn the_mount_plan_is_what_exists() {
        let dir = tempfile::tempdir().unwrap();
        let root = &std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("src/sub/.git/objects/info")).unwrap();
        std::fs::write(root.join(".git/config"), "").unwrap();
        std::fs::write(root.join("src/sub/.git/objects/info/alternates"), "").unwrap();
        std::fs::write(root.join(".mcp.json"), "{}").unwrap();
        assert_eq!(
            mount_plan(root),
            MountPlan {
                pinned: vec![root.join(".git"), root.join("src/sub/.git")],
                read_only: vec![
                    root.join(".mcp.json"),
                    root.join(".git/config"),
                    root.join(".git/hooks"),
                    root.join("src/sub/.git/objects/info/alternates"),
                ],
            }
        );
    }
}
