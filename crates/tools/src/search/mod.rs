//! The search tools, `Grep`, `Glob` and `LS`, built on ripgrep's own libraries.
//!
//! All three see a directory tree the way `rg` does by default, so what the model finds with
//! them is what a developer finds with `rg` in a terminal: hidden files and directories are
//! skipped; `.gitignore` (only inside a git repository, like rg without `--no-require-git`),
//! `.git/info/exclude`, git's global excludes file, `.ignore` and `.rgignore` are honoured, in
//! the search root and in its parents; symbolic links are not followed. Every path in their
//! output is absolute, so the model can hand it to `Read` or `Edit` unchanged whatever
//! directory it searched.

mod glob;
mod grep;
mod grep_search;
mod ls;

use std::num::NonZeroUsize;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use ignore::{DirEntry, WalkBuilder, WalkState};
use tokio_util::sync::CancellationToken;

pub use glob::GlobTool;
pub use grep::GrepTool;
pub use ls::LsTool;

/// `path` made absolute against `ctx`'s working directory and cleaned lexically (`.` dropped,
/// `..` applied), so printed paths read `/repo/src/a.rs` rather than `/repo/./x/../src/a.rs`.
/// Symbolic links are left alone: the model should see the paths it asked for.
fn search_root(ctx: &crate::ToolContext, path: Option<&str>) -> PathBuf {
    let path = match path {
        Some(path) if !path.trim().is_empty() => ctx.resolve(path),
        _ => ctx.cwd.clone(),
    };
    clean_path(&path)
}

/// Checks that `root` is a directory that can be walked. `for_a_file` says what to do when it
/// is a file; `verb` is what the tool was going to do ("search", "list").
fn require_directory(root: &Path, for_a_file: &str, verb: &str) -> Result<(), String> {
    match std::fs::metadata(root) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(format!(
            "{} is a file, not a directory. {for_a_file}",
            root.display()
        )),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("Directory does not exist: {}", root.display()))
        }
        Err(err) => Err(format!("Cannot {verb} {}: {err}", root.display())),
    }
}

/// Lexical normalisation: `.` components go, `..` pops the previous normal component.
fn clean_path(path: &Path) -> PathBuf {
    let mut clean = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match clean.components().next_back() {
                Some(Component::Normal(_)) => {
                    clean.pop();
                }
                // `/..` is `/`.
                Some(Component::RootDir | Component::Prefix(_)) => {}
                Some(Component::ParentDir | Component::CurDir) | None => clean.push(".."),
            },
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                clean.push(component);
            }
        }
    }
    clean
}

/// A walker over `root` with rg's default filters (see the module docs). `cwd` is what git's
/// global excludes are matched relative to; it is given so the process's own working
/// directory never matters.
fn rg_walk_builder(root: &Path, cwd: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .current_dir(cwd)
        .hidden(true)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(true)
        .follow_links(false)
        .threads(walk_threads());
    builder.add_custom_ignore_filename(".rgignore");
    builder
}

/// As many threads as rg uses: one per core, at most 12.
fn walk_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(12)
}

/// What a parallel walk kept.
#[derive(Debug)]
struct Collected<T> {
    /// In no particular order: threads finish when they finish.
    items: Vec<T>,
    /// False when the walk stopped at its limit before seeing everything.
    complete: bool,
}

/// Walks `builder`'s tree on several threads and keeps what `keep` returns for each entry, up
/// to `limit` items. `None` when `cancel` fired first.
fn collect_parallel<T, F>(
    builder: &WalkBuilder,
    limit: usize,
    cancel: &CancellationToken,
    keep: F,
) -> Option<Collected<T>>
where
    T: Send,
    F: Fn(&DirEntry) -> Option<T> + Sync,
{
    let shared = Mutex::new(Vec::new());
    let kept = AtomicUsize::new(0);
    let stopped = AtomicBool::new(false);
    builder.build_parallel().run(|| {
        let mut local = ThreadItems {
            items: Vec::new(),
            shared: &shared,
        };
        let (keep, kept, stopped) = (&keep, &kept, &stopped);
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            // Unreadable directories and broken ignore files are skipped, as rg skips them.
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if let Some(item) = keep(&entry) {
                if kept.fetch_add(1, Ordering::Relaxed) >= limit {
                    stopped.store(true, Ordering::Relaxed);
                    return WalkState::Quit;
                }
                local.items.push(item);
            }
            WalkState::Continue
        })
    });
    if cancel.is_cancelled() {
        return None;
    }
    Some(Collected {
        items: shared.into_inner().unwrap_or_else(PoisonError::into_inner),
        complete: !stopped.load(Ordering::Relaxed),
    })
}

/// One thread's items, handed over when the thread's visitor is dropped.
struct ThreadItems<'a, T> {
    items: Vec<T>,
    shared: &'a Mutex<Vec<T>>,
}

impl<T> Drop for ThreadItems<'_, T> {
    fn drop(&mut self) {
        let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        shared.append(&mut self.items);
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn clean_path_drops_dots_and_applies_parents() {
        assert_eq!(clean_path(Path::new("/a/./b/../c/")), PathBuf::from("/a/c"));
        assert_eq!(clean_path(Path::new("/a/b/../../..")), PathBuf::from("/"));
        assert_eq!(clean_path(Path::new("../a/../..")), PathBuf::from("../.."));
    }

    #[test]
    fn the_root_defaults_to_the_working_directory() {
        let ctx = crate::ToolContext::new(PathBuf::from("/work/repo"));
        assert_eq!(search_root(&ctx, None), PathBuf::from("/work/repo"));
        assert_eq!(search_root(&ctx, Some("")), PathBuf::from("/work/repo"));
        assert_eq!(
            search_root(&ctx, Some("src/../lib")),
            PathBuf::from("/work/repo/lib")
        );
        assert_eq!(search_root(&ctx, Some("/etc/")), PathBuf::from("/etc"));
    }
}
