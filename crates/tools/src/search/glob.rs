//! `Glob`: files whose paths match a glob pattern, newest first.
//!
//! The pattern is matched against each file's path relative to the search directory, with
//! `globset`'s shell-like rules: `*`, `?` and `[...]` stay within one path component, `**`
//! spans any number of them, `{a,b}` is either. Leading literal directories of the pattern
//! (`src/` in `src/**/*.rs`, or all of an absolute pattern's fixed prefix) become where the
//! walk starts, so a narrow pattern does not walk the whole tree.

use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::{Safety, Tool, ToolContext, ToolOutput};

/// At most this many paths are returned; the rest are counted.
const MAX_RESULTS: usize = 100;

/// Finds files by path pattern.
#[derive(Debug, Clone, Copy)]
pub struct GlobTool;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// The glob to match against paths relative to the search directory: `**/*.rs` (any
    /// depth), `src/**/*.{ts,tsx}`, `*.md` (top level only). `*` stays within one directory,
    /// `**` crosses any number.
    pattern: String,
    /// The directory to search. Defaults to the working directory; leave it out rather than
    /// passing "undefined" or "null".
    path: Option<String>,
}

#[async_trait]
impl Tool for GlobTool {
    type Input = GlobInput;

    fn name(&self) -> &'static str {
        "Glob"
    }

    fn description(&self) -> String {
        format!(
            "Finds files by path with a glob pattern such as `**/*.rs` or \
             `src/**/*.{{ts,tsx}}`, matched against paths relative to the search directory \
             (by default the working directory). `*` matches within one directory level and \
             `**` across any number, so `*.md` finds only top-level files. Hidden files and \
             whatever .gitignore excludes are skipped, unless the pattern itself names a \
             hidden path (`**/.env*`). Returns absolute paths, most recently modified first, \
             at most {MAX_RESULTS}. To search file contents, use Grep."
        )
    }

    fn safety(&self, _input: &GlobInput, _ctx: &ToolContext) -> Safety {
        Safety::READ_ONLY
    }

    fn touched_paths(&self, input: &GlobInput, ctx: &ToolContext) -> Vec<PathBuf> {
        vec![super::search_root(ctx, input.path.as_deref())]
    }

    async fn validate(&self, input: &GlobInput, ctx: &ToolContext) -> Result<(), String> {
        check_root(&super::search_root(ctx, input.path.as_deref()))
    }

    async fn run(
        &self,
        input: GlobInput,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        let root = super::search_root(ctx, input.path.as_deref());
        let cwd = ctx.cwd.clone();
        let cancel = cancel.clone();
        let task = tokio::task::spawn_blocking(move || glob(&input.pattern, &root, &cwd, &cancel));
        match task.await {
            Ok(Ok(text)) => ToolOutput::text(text),
            Ok(Err(message)) => ToolOutput::error(message),
            Err(err) => ToolOutput::error(format!("Glob stopped unexpectedly: {err}")),
        }
    }
}

/// The search directory exists and is a directory. Validation and execution share it.
fn check_root(root: &Path) -> Result<(), String> {
    super::require_directory(root, "Give Glob a directory to search.", "search")
}

fn glob(
    pattern: &str,
    root: &Path,
    cwd: &Path,
    cancel: &CancellationToken,
) -> Result<String, String> {
    check_root(root)?;
    let split = split_pattern(root, pattern);
    let matcher = GlobBuilder::new(&split.rest)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|err| format!("Invalid glob pattern `{pattern}`: {err}"))?
        .compile_matcher();
    if !split.walk_root.is_dir() {
        return Ok("No files found".into());
    }
    let mut builder = super::rg_walk_builder(&split.walk_root, cwd);
    if names_hidden_path(&split.rest) {
        // The pattern asks for hidden files, so let them through, but never git's own store.
        builder
            .hidden(false)
            .filter_entry(|entry| entry.file_name() != ".git");
    }
    let walk_root = split.walk_root.clone();
    let Some(collected) = super::collect_parallel(&builder, usize::MAX, cancel, |entry| {
        matching_file(entry, &walk_root, &matcher)
    }) else {
        return Err("Glob was cancelled before it finished.".into());
    };
    Ok(render(collected.items))
}

/// A file's path and modification time, if it is a file and matches.
fn matching_file(
    entry: &ignore::DirEntry,
    walk_root: &Path,
    matcher: &GlobMatcher,
) -> Option<(PathBuf, Option<SystemTime>)> {
    if !entry.file_type().is_some_and(|kind| kind.is_file()) {
        return None;
    }
    let relative = entry.path().strip_prefix(walk_root).ok()?;
    if !matcher.is_match(relative) {
        return None;
    }
    let modified = entry.metadata().ok().and_then(|meta| meta.modified().ok());
    Some((entry.path().to_path_buf(), modified))
}

/// Newest first (ties in path order), capped, with a note of what was left out.
fn render(mut files: Vec<(PathBuf, Option<SystemTime>)>) -> String {
    if files.is_empty() {
        return "No files found".into();
    }
    files.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let total = files.len();
    let mut text = files
        .iter()
        .take(MAX_RESULTS)
        .map(|(path, _)| path.to_string_lossy())
        .collect::<Vec<_>>()
        .join("\n");
    if total > MAX_RESULTS {
        text.push_str(&format!(
            "\n(Showing the {MAX_RESULTS} most recently modified of {total} files; {} more \
             not shown. Use a narrower pattern or path to see them.)",
            total - MAX_RESULTS
        ));
    }
    text
}

/// Where to walk from, and the rest of the pattern to match below it.
#[derive(Debug, PartialEq)]
struct SplitPattern {
    walk_root: PathBuf,
    rest: String,
}

/// Moves the pattern's leading literal directories onto the root. The last component always
/// stays in the pattern, since it names files.
fn split_pattern(root: &Path, pattern: &str) -> SplitPattern {
    let absolute = pattern.starts_with('/');
    let parts: Vec<&str> = pattern.split('/').filter(|part| !part.is_empty()).collect();
    let literal = parts
        .iter()
        .take(parts.len().saturating_sub(1))
        .take_while(|part| !part.contains(['*', '?', '[', ']', '{', '}', '\\']))
        .count();
    let mut walk_root = if absolute {
        PathBuf::from("/")
    } else {
        root.to_path_buf()
    };
    for part in &parts[..literal] {
        walk_root.push(part);
    }
    let walk_root = super::clean_path(&walk_root);
    let rest = parts[literal..].join("/");
    SplitPattern { walk_root, rest }
}

/// Whether some component of the pattern starts with a dot (`.env`, `.github`, `**/.*rc`).
fn names_hidden_path(pattern: &str) -> bool {
    pattern.split('/').any(|part| {
        part.starts_with('.')
            && !matches!(
                Path::new(part).components().next(),
                Some(Component::CurDir | Component::ParentDir)
            )
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn literal_leading_directories_become_the_walk_root() {
        let root = Path::new("/repo");
        let split = |pattern| split_pattern(root, pattern);
        assert_eq!(
            split("src/**/*.rs"),
            SplitPattern {
                walk_root: "/repo/src".into(),
                rest: "**/*.rs".into()
            }
        );
        assert_eq!(
            split("**/*.rs"),
            SplitPattern {
                walk_root: "/repo".into(),
                rest: "**/*.rs".into()
            }
        );
        assert_eq!(
            split("Cargo.toml"),
            SplitPattern {
                walk_root: "/repo".into(),
                rest: "Cargo.toml".into()
            }
        );
        assert_eq!(
            split("/elsewhere/crates/*/src/*.rs"),
            SplitPattern {
                walk_root: "/elsewhere/crates".into(),
                rest: "*/src/*.rs".into()
            }
        );
        assert_eq!(
            split("../sibling/{a,b}/x"),
            SplitPattern {
                walk_root: "/sibling".into(),
                rest: "{a,b}/x".into()
            }
        );
    }

    #[test]
    fn dot_components_mark_hidden_paths() {
        assert!(names_hidden_path("**/.env*"));
        assert!(names_hidden_path(".github/workflows/*.yml"));
        assert!(!names_hidden_path("**/*.rs"));
        assert!(!names_hidden_path("../x/*.rs"));
    }
}
