//! `LS`: a directory as an indented tree.
//!
//! A big tree is cut to [`MAX_ENTRIES`] entries, shallowest first: the model learns the
//! layout of the whole directory and can list a subdirectory for more, rather than seeing
//! every file of the first subdirectory and nothing of the rest.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use globset::{Glob, GlobSet, GlobSetBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::{Safety, Tool, ToolContext, ToolOutput};

/// At most this many entries are shown.
const MAX_ENTRIES: usize = 1000;
/// The walk stops after this many entries, so listing `/` or a home directory ends quickly.
const MAX_SCANNED: usize = 100_000;

/// Lists a directory's tree.
#[derive(Debug, Clone, Copy)]
pub struct LsTool;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LsInput {
    /// The absolute path of the directory to list (a relative path resolves against the
    /// working directory).
    path: String,
    /// Glob patterns of entries to leave out, matched against each entry's name and its path
    /// relative to the listed directory: `node_modules`, `*.log`, `build/**`.
    ignore: Option<Vec<String>>,
}

#[async_trait]
impl Tool for LsTool {
    type Input = LsInput;

    fn name(&self) -> &'static str {
        "LS"
    }

    fn description(&self) -> String {
        format!(
            "Lists a directory as an indented tree; directories end with `/`. path should be \
             absolute. Hidden entries and whatever .gitignore excludes are left out, and \
             `ignore` takes more glob patterns to leave out (`node_modules`, `*.log`). A large \
             tree is cut to {MAX_ENTRIES} entries, shallowest levels first; list a \
             subdirectory to see deeper. When you know what you are looking for, Glob and \
             Grep are quicker."
        )
    }

    fn safety(&self, _input: &LsInput, _ctx: &ToolContext) -> Safety {
        Safety::READ_ONLY
    }

    fn touched_paths(&self, input: &LsInput, ctx: &ToolContext) -> Vec<PathBuf> {
        vec![super::search_root(ctx, Some(&input.path))]
    }

    async fn validate(&self, input: &LsInput, ctx: &ToolContext) -> Result<(), String> {
        check_root(&super::search_root(ctx, Some(&input.path)))
    }

    async fn run(
        &self,
        input: LsInput,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        let root = super::search_root(ctx, Some(&input.path));
        let cwd = ctx.cwd.clone();
        let cancel = cancel.clone();
        let ignore = input.ignore.unwrap_or_default();
        let task = tokio::task::spawn_blocking(move || list(&root, &ignore, &cwd, &cancel));
        match task.await {
            Ok(Ok(text)) => ToolOutput::text(text),
            Ok(Err(message)) => ToolOutput::error(message),
            Err(err) => ToolOutput::error(format!("LS stopped unexpectedly: {err}")),
        }
    }
}

/// One listed entry.
#[derive(Debug)]
struct Entry {
    path: PathBuf,
    depth: usize,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Directory,
    Other,
}

/// The directory to list exists and is a directory. Validation and execution share it.
fn check_root(root: &Path) -> Result<(), String> {
    super::require_directory(root, "Use Read to see a file's contents.", "list")
}

fn list(
    root: &Path,
    ignore: &[String],
    cwd: &Path,
    cancel: &CancellationToken,
) -> Result<String, String> {
    check_root(root)?;
    let left_out = ignore_set(ignore)?;
    let mut builder = super::rg_walk_builder(root, cwd);
    let filter_root = root.to_path_buf();
    builder.filter_entry(move |entry| {
        entry.depth() == 0 || !is_left_out(&left_out, &filter_root, entry.path())
    });
    let Some(collected) = super::collect_parallel(&builder, MAX_SCANNED, cancel, |entry| {
        (entry.depth() > 0).then(|| Entry {
            path: entry.path().to_path_buf(),
            depth: entry.depth(),
            kind: if entry.file_type().is_some_and(|kind| kind.is_dir()) {
                Kind::Directory
            } else {
                Kind::Other
            },
        })
    }) else {
        return Err("LS was cancelled before it finished.".into());
    };
    Ok(render(root, collected.items, collected.complete))
}

/// The `ignore` globs as one set. A trailing `/` (`node_modules/`) is dropped: it is how people
/// write "this directory", and the set matches names, not paths ending in a slash.
fn ignore_set(patterns: &[String]) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let trimmed = pattern.trim().trim_end_matches('/');
        if trimmed.is_empty() {
            continue;
        }
        let glob = Glob::new(trimmed)
            .map_err(|err| format!("Invalid glob `{pattern}` in LS's `ignore`: {err}"))?;
        builder.add(glob);
    }
    builder
        .build()
        .map_err(|err| format!("Invalid `ignore` globs for LS: {err}"))
}

fn is_left_out(set: &GlobSet, root: &Path, path: &Path) -> bool {
    if set.is_empty() {
        return false;
    }
    let name_matches = path.file_name().is_some_and(|name| set.is_match(name));
    name_matches
        || path
            .strip_prefix(root)
            .is_ok_and(|relative| set.is_match(relative))
}

fn render(root: &Path, mut entries: Vec<Entry>, complete: bool) -> String {
    let mut text = format!("- {}/\n", root.display().to_string().trim_end_matches('/'));
    if entries.is_empty() {
        text.push_str(
            "  (nothing to list: the directory is empty, or all of it is hidden or ignored)",
        );
        return text;
    }
    let found = entries.len();
    // Shallowest first, so a cut keeps the top of the tree; every kept entry's parent is kept,
    // since it is shallower.
    entries.sort_unstable_by(|a, b| a.depth.cmp(&b.depth).then_with(|| a.path.cmp(&b.path)));
    entries.truncate(MAX_ENTRIES);
    entries.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    for entry in &entries {
        let name = entry
            .path
            .file_name()
            .map(|name| name.to_string_lossy())
            .unwrap_or_default();
        let slash = match entry.kind {
            Kind::Directory => "/",
            Kind::Other => "",
        };
        text.push_str(&format!("{}- {name}{slash}\n", "  ".repeat(entry.depth)));
    }
    if found > MAX_ENTRIES || !complete {
        let total = if complete {
            found.to_string()
        } else {
            format!("more than {MAX_SCANNED}")
        };
        text.push_str(&format!(
            "(Showing {MAX_ENTRIES} of {total} entries, the shallowest levels first. List a \
             subdirectory, add `ignore` globs, or use Glob to see more.)"
        ));
    } else {
        text.pop();
    }
    text
}
