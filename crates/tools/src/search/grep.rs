//! `Grep`: a regular-expression search of file contents, printed the way `rg` prints it.
//!
//! The output of each mode is what `rg` prints for the same query when given the absolute
//! search root (`rg [flags] PATTERN /abs/root`), without colour, with these differences, each
//! for the model's sake:
//!
//! - files are in a stable order: path order for `content` and `count` (what `rg --sort path`
//!   prints), newest first by modification time for `files_with_matches`, where recently
//!   touched files are the likely subject (rg prints files as its threads finish them);
//! - lines longer than 500 bytes are cut with a note, as with rg's
//!   `--max-columns 500 --max-columns-preview`;
//! - line numbers are on by default in `content` mode, as in Claude Code (`rg -n`);
//! - the trailing newline is dropped, and `head_limit` cuts the output like `| head -N`, with
//!   a closing note of how much was left out.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::SearcherBuilder;
use ignore::overrides::{Override, OverrideBuilder};
use ignore::types::{Types, TypesBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::grep_search::{FileHit, FileNames, GrepQuery, Report, run_search};
use crate::{Safety, Tool, ToolContext, ToolOutput};

/// Searches file contents with ripgrep's libraries, in-process.
#[derive(Debug, Clone, Copy)]
pub struct GrepTool;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// The regular expression to look for, in Rust regex syntax (ripgrep's): `log.*Error`,
    /// `fn\s+\w+`. Escape metacharacters meant literally: `interface\{\}`, `foo\(`.
    pattern: String,
    /// The file or directory to search. Defaults to the working directory.
    path: Option<String>,
    /// Only search files matching this glob, as ripgrep's --glob: `*.js`, `*.{ts,tsx}`,
    /// `src/**/*.rs` (relative to the searched directory); a leading `!` excludes. Several
    /// globs may be separated by spaces or commas.
    glob: Option<String>,
    /// Only search files of this type, as ripgrep's --type: `rust`, `py`, `js`, `ts`, `go`,
    /// `java`, `c`, `cpp`, `md`, `json`, `yaml`… Quicker than a glob for common languages.
    #[serde(rename = "type")]
    file_type: Option<String>,
    /// What to return. `files_with_matches` (the default): the paths of files with a match,
    /// most recently modified first. `content`: the matching lines as `path:line:text`, with
    /// context if asked. `count`: `path:count`, the number of matching lines per file.
    output_mode: Option<OutputMode>,
    /// Ignore case.
    #[serde(rename = "-i")]
    case_insensitive: Option<bool>,
    /// Line numbers in `content` mode: on unless this is false. Ignored in other modes.
    #[serde(rename = "-n")]
    line_numbers: Option<bool>,
    /// Lines of context after each match (`content` mode only).
    #[serde(rename = "-A")]
    after_context: Option<usize>,
    /// Lines of context before each match (`content` mode only).
    #[serde(rename = "-B")]
    before_context: Option<usize>,
    /// Lines of context before and after each match (`content` mode only); -A and -B, when
    /// given, take precedence on their side.
    #[serde(rename = "-C")]
    context: Option<usize>,
    /// Let a match span lines: `.` matches newlines too and the pattern may contain `\n`
    /// (ripgrep's `-U --multiline-dotall`). Slower, since files are read whole.
    multiline: Option<bool>,
    /// Return only the first N lines (`content`, `count`) or paths (`files_with_matches`),
    /// like `| head -N`. Absent or 0: everything.
    head_limit: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum OutputMode {
    Content,
    FilesWithMatches,
    Count,
}

#[async_trait]
impl Tool for GrepTool {
    type Input = GrepInput;

    fn name(&self) -> &'static str {
        "Grep"
    }

    fn description(&self) -> String {
        "Searches the contents of files for a regular expression, with ripgrep's engine. Use it \
         instead of running grep or rg through Bash. The pattern uses Rust regex syntax, as \
         ripgrep does: escape literal metacharacters such as `{`, `(` and `.`. It searches a \
         directory (by default the working directory) or a single file, skipping hidden files, \
         binary files and whatever .gitignore excludes; narrow it with `glob` (`*.tsx`) or \
         `type` (`py`). output_mode `files_with_matches` (the default) lists matching files, \
         most recently modified first; `content` shows matching lines as `path:line:text`, \
         with -A/-B/-C lines of context; `count` gives matching lines per file. Matches stay \
         within one line unless `multiline` is true. Use head_limit to keep long results \
         short. Paths in the output are absolute."
            .into()
    }

    fn safety(&self, _input: &GrepInput, _ctx: &ToolContext) -> Safety {
        Safety::READ_ONLY
    }

    fn touched_paths(&self, input: &GrepInput, ctx: &ToolContext) -> Vec<PathBuf> {
        vec![super::search_root(ctx, input.path.as_deref())]
    }

    async fn validate(&self, input: &GrepInput, ctx: &ToolContext) -> Result<(), String> {
        root_metadata(&super::search_root(ctx, input.path.as_deref())).map(drop)
    }

    async fn run(
        &self,
        input: GrepInput,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        let root = super::search_root(ctx, input.path.as_deref());
        let cwd = ctx.cwd.clone();
        let cancel = cancel.clone();
        let task = tokio::task::spawn_blocking(move || grep(&input, root, cwd, &cancel));
        match task.await {
            Ok(Ok(text)) => ToolOutput::text(text),
            Ok(Err(message)) => ToolOutput::error(message),
            Err(err) => ToolOutput::error(format!("Grep stopped unexpectedly: {err}")),
        }
    }
}

/// The search path (a file or a directory) exists. Validation and execution share it.
fn root_metadata(root: &Path) -> Result<std::fs::Metadata, String> {
    std::fs::metadata(root).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => format!("Path does not exist: {}", root.display()),
        _ => format!("Cannot search {}: {err}", root.display()),
    })
}

/// The whole call, on a blocking thread: checks the input, searches, renders.
fn grep(
    input: &GrepInput,
    root: PathBuf,
    cwd: PathBuf,
    cancel: &CancellationToken,
) -> Result<String, String> {
    let metadata = root_metadata(&root)?;
    let mode = input.output_mode.unwrap_or(OutputMode::FilesWithMatches);
    let report = match mode {
        OutputMode::Content => Report::Content,
        OutputMode::FilesWithMatches => Report::FilesWithMatches,
        OutputMode::Count => Report::Count,
    };
    let multiline = input.multiline.unwrap_or(false);
    let (before, after) = match mode {
        OutputMode::Content => (
            input.before_context.or(input.context).unwrap_or(0),
            input.after_context.or(input.context).unwrap_or(0),
        ),
        OutputMode::FilesWithMatches | OutputMode::Count => (0, 0),
    };
    let line_numbers = mode == OutputMode::Content && input.line_numbers.unwrap_or(true);
    let overrides_root = if metadata.is_dir() {
        root.clone()
    } else {
        root.parent().map_or_else(|| root.clone(), PathBuf::from)
    };
    let query = GrepQuery {
        matcher: build_matcher(
            &input.pattern,
            input.case_insensitive.unwrap_or(false),
            multiline,
        )?,
        searcher: SearcherBuilder::new()
            .line_number(line_numbers)
            .multi_line(multiline)
            .before_context(before)
            .after_context(after)
            .build(),
        report,
        file_names: if metadata.is_dir() {
            FileNames::Shown
        } else {
            FileNames::Hidden
        },
        overrides: build_overrides(&overrides_root, input.glob.as_deref())?,
        types: build_types(input.file_type.as_deref())?,
        root,
        cwd,
    };
    let Some(hits) = run_search(&query, cancel) else {
        return Err("Grep was cancelled before it finished.".into());
    };
    let separator = if before > 0 || after > 0 {
        Separator::Context
    } else {
        Separator::None
    };
    Ok(render(hits, report, separator, input.head_limit))
}

/// The matcher rg builds for the same flags: `^`/`$` match at line ends, and outside
/// multi-line mode the regex may never match a line terminator (rg's fast path).
fn build_matcher(
    pattern: &str,
    case_insensitive: bool,
    multiline: bool,
) -> Result<RegexMatcher, String> {
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(case_insensitive)
        .multi_line(true)
        .unicode(true)
        .octal(false);
    if multiline {
        builder.dot_matches_new_line(true);
    } else {
        builder
            .line_terminator(Some(b'\n'))
            .dot_matches_new_line(false);
    }
    builder.build(pattern).map_err(|err| {
        let mut message = format!("Invalid regex `{pattern}`: {err}");
        if !multiline && message.contains("not allowed") && message.contains("literal") {
            message.push_str("\nTo match across lines, set `multiline` to true.");
        }
        message
    })
}

/// `glob` as rg's `--glob` flags. Spaces separate globs, and so do commas outside braces, the
/// way models write lists (`*.ts,*.tsx`).
fn build_overrides(root: &std::path::Path, glob: Option<&str>) -> Result<Override, String> {
    let Some(glob) = glob.filter(|glob| !glob.trim().is_empty()) else {
        return Ok(Override::empty());
    };
    let mut builder = OverrideBuilder::new(root);
    for pattern in split_globs(glob) {
        builder
            .add(&pattern)
            .map_err(|err| format!("Invalid glob `{pattern}` in Grep's `glob`: {err}"))?;
    }
    builder
        .build()
        .map_err(|err| format!("Invalid `glob` for Grep: {err}"))
}

fn split_globs(spec: &str) -> Vec<String> {
    spec.split_whitespace()
        .flat_map(|token| {
            if token.contains('{') {
                vec![token.to_string()]
            } else {
                token
                    .split(',')
                    .filter(|part| !part.is_empty())
                    .map(str::to_string)
                    .collect()
            }
        })
        .collect()
}

/// `type` as rg's `--type` flag, over rg's built-in type definitions.
fn build_types(file_type: Option<&str>) -> Result<Types, String> {
    let Some(name) = file_type.map(str::trim).filter(|name| !name.is_empty()) else {
        return Ok(Types::empty());
    };
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    builder.select(name);
    builder.build().map_err(|_| {
        format!(
            "Unknown file type `{name}` in Grep's `type`. Use one of ripgrep's type names \
             (rust, py, js, ts, go, java, c, cpp, md, json, yaml, …), or `glob` instead."
        )
    })
}

/// What goes between two files' output: rg separates files with `--` when it shows context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Separator {
    None,
    Context,
}

/// The hits in their stable order, as text, cut to `head_limit` lines.
fn render(
    mut hits: Vec<FileHit>,
    report: Report,
    separator: Separator,
    head_limit: Option<usize>,
) -> String {
    if hits.is_empty() {
        return "No matches found".into();
    }
    let mut bytes = Vec::new();
    let unit = match report {
        Report::Content | Report::Count => {
            // `Path`'s order compares component by component, which is rg's `--sort path`.
            hits.sort_unstable_by(|a, b| a.path.cmp(&b.path));
            for (index, hit) in hits.iter().enumerate() {
                if index > 0 && separator == Separator::Context {
                    bytes.extend_from_slice(b"--\n");
                }
                bytes.extend_from_slice(&hit.output);
            }
            "lines"
        }
        Report::FilesWithMatches => {
            hits.sort_unstable_by(|a, b| {
                b.modified
                    .cmp(&a.modified)
                    .then_with(|| a.path.cmp(&b.path))
            });
            for hit in &hits {
                bytes.extend_from_slice(hit.path.as_os_str().as_encoded_bytes());
                bytes.push(b'\n');
            }
            "files"
        }
    };
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    let text = String::from_utf8_lossy(&bytes);
    head(&text, head_limit, unit)
}

/// The first `limit` lines of `text`, with a note of what was left out.
fn head(text: &str, limit: Option<usize>, unit: &str) -> String {
    let Some(limit) = limit.filter(|&limit| limit > 0) else {
        return text.to_string();
    };
    let total = text.split('\n').count();
    if total <= limit {
        return text.to_string();
    }
    let kept: Vec<&str> = text.split('\n').take(limit).collect();
    format!(
        "{}\n\n[Showing the first {limit} of {total} {unit} (head_limit). Narrow the search or \
         raise head_limit to see more.]",
        kept.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::input::{parse_input, schema_for};

    #[test]
    fn the_schema_uses_claude_codes_field_names() {
        let schema = schema_for::<GrepInput>();
        let mut names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        names.sort();
        assert_eq!(
            names,
            [
                "-A",
                "-B",
                "-C",
                "-i",
                "-n",
                "glob",
                "head_limit",
                "multiline",
                "output_mode",
                "path",
                "pattern",
                "type"
            ]
        );
        assert_eq!(schema["required"], json!(["pattern"]));
        assert_eq!(
            schema["properties"]["output_mode"]["enum"],
            json!(["content", "files_with_matches", "count"])
        );
        let line_numbers = schema["properties"]["-n"]["description"].as_str().unwrap();
        assert!(
            line_numbers.contains("on unless this is false"),
            "{line_numbers}"
        );
    }

    #[test]
    fn unknown_fields_are_refused() {
        let error =
            parse_input::<GrepInput>("Grep", &json!({"pattern": "x", "-w": true})).unwrap_err();
        assert!(
            error.starts_with(
                "Invalid input for Grep: field `-w`: unknown field `-w`, expected one of"
            ),
            "{error}"
        );
    }

    #[test]
    fn globs_split_on_spaces_and_commas_outside_braces() {
        assert_eq!(
            split_globs("*.ts,*.tsx  *.{js,jsx} !vendor/**"),
            ["*.ts", "*.tsx", "*.{js,jsx}", "!vendor/**"]
        );
    }

    #[test]
    fn a_literal_newline_outside_multiline_mode_suggests_multiline() {
        let error = build_matcher("a\nb", false, false).unwrap_err();
        assert!(error.starts_with("Invalid regex `a\nb`: "), "{error}");
        assert!(error.ends_with("set `multiline` to true."), "{error}");
        assert!(build_matcher("a\nb", false, true).is_ok());
    }

    #[test]
    fn head_keeps_the_first_lines_and_says_how_many_there_were() {
        assert_eq!(
            head("a\nb\nc", Some(2), "lines"),
            "a\nb\n\n[Showing the first 2 of 3 lines (head_limit). Narrow the search or raise head_limit to see more.]"
        );
        assert_eq!(head("a\nb", Some(2), "lines"), "a\nb");
        assert_eq!(head("a\nb", Some(0), "lines"), "a\nb");
    }

    #[test]
    fn unknown_types_say_what_to_use() {
        let error = build_types(Some("klingon")).unwrap_err();
        assert!(error.starts_with("Unknown file type `klingon`"), "{error}");
        assert!(build_types(Some("rust")).is_ok());
    }
}
