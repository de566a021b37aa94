//! `Read`: a text file as numbered lines, in the `cat -n` style the model expects.

use std::io::ErrorKind;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::{Tool, ToolContext, ToolOutput};

const DEFAULT_LINE_LIMIT: usize = 2000;
const MAX_LINE_CHARS: usize = 2000;
/// How much of a file's start is checked for NUL bytes to call it binary.
const BINARY_SNIFF_BYTES: usize = 8192;

/// Reads a file from the local filesystem.
#[derive(Debug, Clone, Copy)]
pub struct ReadTool;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadInput {
    file_path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

#[async_trait]
impl Tool for ReadTool {
    fn name(&self) -> &'static str {
        "Read"
    }

    fn description(&self) -> &'static str {
        "Reads a file from the local filesystem. file_path should be absolute; relative paths \
         resolve against the working directory. By default up to 2000 lines are returned from \
         the start; use offset (1-based line number) and limit for long files. Lines are \
         numbered like `cat -n`, and lines longer than 2000 characters are cut."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "The absolute path of the file to read"},
                "offset": {"type": "integer", "minimum": 1, "description": "The line number to start reading from"},
                "limit": {"type": "integer", "minimum": 1, "description": "The number of lines to read"}
            },
            "required": ["file_path"],
            "additionalProperties": false
        })
    }

    async fn run(
        &self,
        input: &Value,
        ctx: &ToolContext,
        _cancel: &CancellationToken,
    ) -> ToolOutput {
        let input: ReadInput = match serde_json::from_value(input.clone()) {
            Ok(input) => input,
            Err(err) => return ToolOutput::error(format!("Invalid input for Read: {err}")),
        };
        let path = ctx.resolve(&input.file_path);
        let bytes = match tokio::fs::read(&path).await {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == ErrorKind::IsADirectory => {
                return ToolOutput::error(format!(
                    "{} is a directory, not a file. Use LS to list a directory.",
                    path.display()
                ));
            }
            Err(err) if err.kind() == ErrorKind::NotFound => {
                return ToolOutput::error(format!("File does not exist: {}", path.display()));
            }
            Err(err) => {
                return ToolOutput::error(format!("Cannot read {}: {err}", path.display()));
            }
        };
        let sniff = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
        if sniff.contains(&0) {
            return ToolOutput::error(format!(
                "{} looks like a binary file ({} bytes); Read shows text files only.",
                path.display(),
                bytes.len()
            ));
        }
        if bytes.is_empty() {
            return ToolOutput::text(format!("(the file {} is empty)", path.display()));
        }
        let text = String::from_utf8_lossy(&bytes);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let offset = input.offset.unwrap_or(1).max(1);
        let limit = input.limit.unwrap_or(DEFAULT_LINE_LIMIT);
        ToolOutput::text(numbered_lines(text, offset, limit))
    }
}

/// Lines `offset..offset+limit` (1-based) as `cat -n` prints them, with a note when more
/// lines follow.
fn numbered_lines(text: &str, offset: usize, limit: usize) -> String {
    let total = text.lines().count();
    if offset > total {
        return format!("(the file has {total} lines; offset {offset} is past its end)");
    }
    let mut out = String::new();
    for (index, line) in text.lines().enumerate().skip(offset - 1).take(limit) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let shown: String = line.chars().take(MAX_LINE_CHARS).collect();
        out.push_str(&format!("{:>6}\t{shown}", index + 1));
        if shown.len() < line.len() {
            out.push_str(" [line cut at 2000 characters]");
        }
        out.push('\n');
    }
    let last_shown = (offset - 1 + limit).min(total);
    if last_shown < total {
        out.push_str(&format!(
            "(showing lines {offset}-{last_shown} of {total}; use offset and limit to read more)\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use pretty_assertions::assert_eq;

    use super::*;

    fn context(dir: &std::path::Path) -> ToolContext {
        ToolContext {
            cwd: PathBuf::from(dir),
        }
    }

    async fn read(dir: &std::path::Path, input: Value) -> ToolOutput {
        ReadTool
            .run(&input, &context(dir), &CancellationToken::new())
            .await
    }

    #[tokio::test]
    async fn numbers_lines_and_strips_crlf_and_bom() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "\u{feff}one\r\ntwo\r\n").unwrap();
        let output = read(dir.path(), json!({"file_path": "a.txt"})).await;
        assert_eq!(output, ToolOutput::text("     1\tone\n     2\ttwo\n"));
    }

    #[tokio::test]
    async fn offset_and_limit_select_lines_and_say_what_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=10).map(|n| format!("line {n}\n")).collect();
        std::fs::write(dir.path().join("a.txt"), text).unwrap();
        let output = read(
            dir.path(),
            json!({"file_path": "a.txt", "offset": 3, "limit": 2}),
        )
        .await;
        assert_eq!(
            output,
            ToolOutput::text(
                "     3\tline 3\n     4\tline 4\n(showing lines 3-4 of 10; use offset and limit to read more)\n"
            )
        );
    }

    #[tokio::test]
    async fn refuses_binary_directories_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bin"), [0u8, 1, 2, 3]).unwrap();
        let binary = read(dir.path(), json!({"file_path": "bin"})).await;
        assert!(binary.is_error);
        assert!(binary.content.text().contains("binary file"), "{binary:?}");

        let directory = read(
            dir.path(),
            json!({"file_path": dir.path().to_str().unwrap()}),
        )
        .await;
        assert!(directory.is_error);
        assert!(directory.content.text().contains("Use LS"), "{directory:?}");

        let missing = read(dir.path(), json!({"file_path": "nope.txt"})).await;
        assert!(missing.is_error);
        assert!(
            missing.content.text().starts_with("File does not exist"),
            "{missing:?}"
        );
    }

    #[tokio::test]
    async fn empty_file_says_so_and_bad_input_names_the_field() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("empty"), "").unwrap();
        let empty = read(dir.path(), json!({"file_path": "empty"})).await;
        assert!(!empty.is_error);
        assert!(empty.content.text().contains("is empty"));

        let bad = read(dir.path(), json!({"path": "x"})).await;
        assert!(bad.is_error);
        assert!(bad.content.text().contains("file_path"), "{bad:?}");
    }

    #[test]
    fn long_lines_are_cut_with_a_note() {
        let long = "x".repeat(2500);
        let out = numbered_lines(&long, 1, 10);
        assert!(out.ends_with("[line cut at 2000 characters]\n"));
        assert_eq!(out.matches('x').count(), 2000);
    }
}
