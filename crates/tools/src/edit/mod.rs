//! `Edit` and `MultiEdit`: exact string replacements in a file the session has read.
//!
//! An edit names the text to replace by quoting it, so it either lands where the model meant
//! or fails with a message that says why: not read, changed on disk since, not found (with the
//! closest text), or found more than once. Those failures are found before the user is asked
//! to allow the edit ([`crate::Tool::validate`]), by the same code that makes the edit, and
//! again when it runs. What the model cannot see survives every edit:
//! CRLF line endings, a UTF-8 byte-order mark, whether the last line ends with a newline, and
//! the file's permissions. The file is written atomically, and a `MultiEdit` is all or
//! nothing.

mod multi;
mod near_match;
mod replace;
mod snippet;
mod text;

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::beneath::{self, BeneathError, JudgedPath, Walk};
use crate::write::{count_lines, plural, write_judged};
use crate::{
    Access, Concurrency, Destructiveness, FileTracker, Safety, Tool, ToolContext, ToolOutput,
};

pub use multi::MultiEditTool;
use near_match::{Closeness, find_near_match};
use replace::{ReplaceError, Replacement, Scope, replace};
use snippet::{ChangedRanges, render_changes};
use text::{NotText, TextFile};

/// Replaces one exact string in a file.
#[derive(Debug, Clone, Copy)]
pub struct EditTool;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    /// The absolute path of the file to change.
    file_path: String,
    /// The exact text to replace, copied from the file as Read shows it, without the
    /// line-number prefix, with the same indentation. It must occur exactly once unless
    /// replace_all is true.
    old_string: String,
    /// The text to put in its place. It must differ from old_string.
    new_string: String,
    /// Replace every occurrence of old_string instead of requiring exactly one (for renaming a
    /// variable, say). Defaults to false.
    replace_all: Option<bool>,
}

/// The write safety of the edit tools. An edit replaces only text the model quoted in
/// `old_string`, which stays in the conversation, so it can be undone by the reverse edit:
/// it writes, but it is not destructive the way overwriting a whole file is.
const EDIT_SAFETY: Safety = Safety {
    access: Access::Writes,
    destructive: Destructiveness::Harmless,
    concurrency: Concurrency::Exclusive,
};

#[async_trait]
impl Tool for EditTool {
    type Input = EditInput;

    fn name(&self) -> &'static str {
        "Edit"
    }

    fn description(&self) -> String {
        "Replaces exact text in a file. Read the file in this session first; an edit of a file \
         that was not read, or that changed on disk since it was read, is refused. old_string \
         must match the file exactly, including whitespace: copy it from Read's output, taking \
         only what follows the line-number prefix (spaces, the line number, a tab) and keeping \
         the indentation exactly as it appears there. old_string must occur exactly once; \
         include enough surrounding lines to make it unique, or set replace_all to replace \
         every occurrence. The file's line endings, byte-order mark, final newline and \
         permissions are kept. An empty old_string creates a new file with new_string as its \
         content. The result shows the changed lines with line numbers. For several changes \
         to one file, use MultiEdit."
            .into()
    }

    fn safety(&self, _input: &EditInput, _ctx: &ToolContext) -> Safety {
        EDIT_SAFETY
    }

    fn touched_paths(&self, input: &EditInput, ctx: &ToolContext) -> Vec<PathBuf> {
        ctx.written_paths(&input.file_path)
    }

    async fn validate(&self, input: &EditInput, ctx: &ToolContext) -> Result<(), String> {
        let target = ctx.write_target(&input.file_path);
        validate_edits(target, vec![input.edit()], EditKind::Single, ctx).await
    }

    async fn run(
        &self,
        input: EditInput,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        let target = ctx.write_target(&input.file_path);
        run_edits(target, vec![input.edit()], EditKind::Single, ctx, cancel).await
    }
}

impl EditInput {
    fn edit(&self) -> OwnedEdit {
        OwnedEdit {
            old: self.old_string.clone(),
            new: self.new_string.clone(),
            scope: Scope::from_replace_all(self.replace_all),
        }
    }
}

/// Which tool is editing: the messages differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EditKind {
    Single,
    Multi,
}

/// A replacement as it arrives in the input.
#[derive(Debug, Clone)]
struct OwnedEdit {
    old: String,
    new: String,
    scope: Scope,
}

impl OwnedEdit {
    fn as_replacement(&self) -> Replacement<'_> {
        Replacement {
            old: &self.old,
            new: &self.new,
            scope: self.scope,
        }
    }
}

/// Works the edits out in memory (on a blocking thread: it reads the file) and writes
/// nothing: the check that an edit can work, before anyone is asked to allow it.
async fn validate_edits(
    target: JudgedPath,
    edits: Vec<OwnedEdit>,
    kind: EditKind,
    ctx: &ToolContext,
) -> Result<(), String> {
    let session = Arc::clone(&ctx.session);
    let result =
        tokio::task::spawn_blocking(move || plan_edits(&target, &edits, kind, &session.files))
            .await;
    match result {
        Ok(planned) => planned.map(drop),
        Err(join) => Err(format!("Checking the edit stopped unexpectedly: {join}")),
    }
}

async fn run_edits(
    target: JudgedPath,
    edits: Vec<OwnedEdit>,
    kind: EditKind,
    ctx: &ToolContext,
    cancel: &CancellationToken,
) -> ToolOutput {
    if cancel.is_cancelled() {
        return ToolOutput::error("The edit was cancelled before it started; nothing was changed.");
    }
    let session = Arc::clone(&ctx.session);
    let result =
        tokio::task::spawn_blocking(move || edit_file(&target, &edits, kind, &session.files)).await;
    match result {
        Ok(Ok(text)) => ToolOutput::text(text),
        Ok(Err(message)) => ToolOutput::error(message),
        Err(join) => ToolOutput::error(format!("The edit stopped unexpectedly: {join}")),
    }
}

/// An edit worked out in memory and not yet written.
#[derive(Debug)]
struct PlannedEdit {
    /// The file as it was read; `None` when the edit creates it.
    original: Option<TextFile>,
    /// The whole new text, with the original's final-newline convention kept.
    text: String,
    changed: ChangedRanges,
    replacements: usize,
}

impl PlannedEdit {
    /// The bytes to write: the new text with the original's byte-order mark.
    fn bytes(&self) -> Vec<u8> {
        let new_file = TextFile::new_empty();
        self.original
            .as_ref()
            .unwrap_or(&new_file)
            .encode(&self.text)
    }
}

/// Loads, edits in memory, and writes back `path`; the report for the model, or why nothing
/// was written.
fn edit_file(
    target: &JudgedPath,
    edits: &[OwnedEdit],
    kind: EditKind,
    files: &FileTracker,
) -> Result<String, String> {
    let path = &target.path();
    let shown = path.display();
    let planned = plan_edits(target, edits, kind, files)?;
    write_judged(target, &planned.bytes())?;
    files.record(path);

    if planned.original.is_none() {
        return Ok(format!(
            "Created {shown} ({}).",
            plural(count_lines(&planned.text), "line")
        ));
    }
    let what = match kind {
        EditKind::Single => format!(
            "Edited {shown} ({})",
            plural(planned.replacements, "replacement")
        ),
        EditKind::Multi => format!(
            "Applied {} to {shown} ({})",
            plural(edits.len(), "edit"),
            plural(planned.replacements, "replacement")
        ),
    };
    Ok(format!(
        "{what}. The changed lines, numbered as in the file now:\n{}",
        render_changes(&planned.text, &planned.changed)
    ))
}

/// Loads `path` and applies the edits in memory: everything an edit checks (notebook,
/// directory, read and unchanged since, text, every `old_string` found as the edit asks,
/// a real change), and nothing written. Validation and execution share it.
fn plan_edits(
    target: &JudgedPath,
    edits: &[OwnedEdit],
    kind: EditKind,
    files: &FileTracker,
) -> Result<PlannedEdit, String> {
    let path = &target.path();
    let shown = path.display();
    if path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("ipynb"))
    {
        return Err(format!(
            "{shown} is a Jupyter notebook. Use NotebookEdit to change its cells."
        ));
    }
    let creates = edits.first().is_some_and(|edit| edit.old.is_empty());
    let original = match beneath::read(target, Walk::Kernel) {
        Ok(bytes) => {
            files.check_fresh(path).map_err(|err| err.to_string())?;
            Some(TextFile::decode(bytes).map_err(|why| match why {
                NotText::Binary => {
                    format!("{shown} is a binary file; Edit changes text files only.")
                }
                NotText::NotUtf8 => format!(
                    "{shown} is not UTF-8 text; Edit changes UTF-8 text files only. Use Bash \
                     (for example iconv or sed) for other encodings."
                ),
            })?)
        }
        Err(err) if err.kind() == ErrorKind::IsADirectory => {
            return Err(format!("{shown} is a directory, not a file."));
        }
        Err(err) if err.kind() == ErrorKind::NotFound && creates => None,
        Err(err) if err.kind() == ErrorKind::NotFound => {
            return Err(format!(
                "File does not exist: {shown}. To create a file, use Write, or Edit with an \
                 empty old_string."
            ));
        }
        Err(BeneathError::Io { source, .. }) => {
            return Err(format!("Cannot read {shown}: {source}"));
        }
        Err(other) => return Err(other.to_string()),
    };
    let new_file = TextFile::new_empty();
    let file = original.as_ref().unwrap_or(&new_file);

    let mut text = file.text.clone();
    let mut changed = ChangedRanges::default();
    let mut replacements = 0;
    for (index, edit) in edits.iter().enumerate() {
        match replace(&text, edit.as_replacement(), file.line_ending) {
            Ok((edited, splices)) => {
                changed.record(&splices);
                replacements += splices.len();
                text = edited;
            }
            Err(error) => {
                let why = describe_failure(&error, &text, edit, path, original.is_some());
                return Err(match kind {
                    EditKind::Single => why,
                    EditKind::Multi => format!(
                        "Edit {} of {} failed, so no edit was made and {shown} is unchanged. \
                         (Edits apply in order, each to the text the ones before it left.)\n{why}",
                        index + 1,
                        edits.len()
                    ),
                });
            }
        }
    }
    let text = file.keep_final_newline(text);
    if original
        .as_ref()
        .is_some_and(|original| original.text == text)
    {
        return Err(format!(
            "The edits leave {shown} exactly as it was, so nothing was written."
        ));
    }
    Ok(PlannedEdit {
        original,
        text,
        changed,
        replacements,
    })
}

/// Why one replacement failed, and what to do about it.
fn describe_failure(
    error: &ReplaceError,
    text: &str,
    edit: &OwnedEdit,
    path: &Path,
    file_exists: bool,
) -> String {
    let shown = path.display();
    match error {
        ReplaceError::Identical => "old_string and new_string are identical, so the edit would \
                                    change nothing. Put the replacement text in new_string."
            .to_string(),
        ReplaceError::EmptyOldString if file_exists => format!(
            "old_string is empty, but {shown} already has content. An empty old_string only \
             creates a new file (or fills an empty one); to change this file, quote the exact \
             text to replace."
        ),
        ReplaceError::EmptyOldString => format!(
            "old_string is empty, but earlier edits already gave {shown} content. Only the \
             first edit may have an empty old_string (to create the file)."
        ),
        ReplaceError::Ambiguous { lines } => {
            const LISTED: usize = 10;
            let mut listed = lines
                .iter()
                .take(LISTED)
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            if lines.len() > LISTED {
                listed.push_str(", …");
            }
            format!(
                "Found {} matches of old_string in {shown} (at lines {listed}), but replace_all \
                 is not set. Add surrounding lines to old_string so that it matches exactly one \
                 place, or set replace_all to true to replace every match.",
                lines.len()
            )
        }
        ReplaceError::NotFound => {
            let mut message = format!("old_string was not found in {shown}.");
            match find_near_match(text, &edit.old) {
                Some(near) => {
                    let place = match near.lines.len() {
                        1 => format!("line {}", near.first_line),
                        count => {
                            format!("lines {}-{}", near.first_line, near.first_line + count - 1)
                        }
                    };
                    let how = match near.closeness {
                        Closeness::WhitespaceOnly => {
                            format!(
                                " The text at {place} matches it except for whitespace \
                                 (indentation, tabs or line breaks):"
                            )
                        }
                        Closeness::Similar { percent } => format!(
                            " The most similar text is at {place} ({percent}% similar by \
                             character pairs):"
                        ),
                    };
                    message.push_str(&how);
                    message.push('\n');
                    for (offset, line) in near.lines.iter().enumerate() {
                        message
                            .push_str(&crate::read::numbered_line(near.first_line + offset, line));
                    }
                    message.push_str(
                        "Copy old_string exactly from the file, with the whitespace it has there \
                         (what follows the line-number prefix), or Read the file again.",
                    );
                }
                None => message.push_str(
                    " Nothing in the file is close to it. Read the file again to see its current \
                     content, then copy old_string exactly, whitespace included.",
                ),
            }
            message
        }
    }
}
