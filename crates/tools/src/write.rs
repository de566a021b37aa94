//! `Write`: a whole file, created or replaced, and the atomic write every file-changing tool
//! uses.
//!
//! A file is never written in place: the new content goes to a temporary file in the same
//! directory, which is then renamed over the old one. Readers see the old file or the new one,
//! never half of each, and a failed write leaves the old file as it was and no temporary file
//! behind. The write lands where the call was judged: see [`crate::beneath`].

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::beneath::{self, BeneathError, JudgedPath, Walk};
use crate::{
    Access, Concurrency, Destructiveness, FileTracker, Safety, SessionState, Tool, ToolContext,
    ToolOutput,
};

/// Writes a whole file.
#[derive(Debug, Clone, Copy)]
pub struct WriteTool;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    /// The absolute path of the file to write. Missing parent directories are created.
    file_path: String,
    /// The complete new content of the file, written exactly as given.
    content: String,
}

#[async_trait]
impl Tool for WriteTool {
    type Input = WriteInput;

    fn name(&self) -> &'static str {
        "Write"
    }

    fn description(&self) -> String {
        "Writes a file to the local filesystem, creating it (and any missing parent \
         directories) or replacing it entirely. file_path should be absolute. To replace an \
         existing file you must have Read it in this session, and it must not have changed \
         since; a new file needs no Read. Prefer Edit or MultiEdit for changes to an existing \
         file: they send only the changed text. Do not create documentation or README files \
         unless asked."
            .into()
    }

    fn safety(&self, input: &WriteInput, ctx: &ToolContext) -> Safety {
        // Replacing a file loses its old content; creating one loses nothing.
        let overwrites = ctx.resolve(&input.file_path).exists();
        Safety {
            access: Access::Writes,
            destructive: if overwrites {
                Destructiveness::Destructive
            } else {
                Destructiveness::Harmless
            },
            concurrency: Concurrency::Exclusive,
        }
    }

    fn touched_paths(&self, input: &WriteInput, ctx: &ToolContext) -> Vec<PathBuf> {
        ctx.written_paths(&input.file_path)
    }

    async fn validate(&self, input: &WriteInput, ctx: &ToolContext) -> Result<(), String> {
        // Two `stat`s: cheap enough not to need a blocking thread.
        check_target(
            &ctx.write_target(&input.file_path).path(),
            &ctx.session.files,
        )
        .map(drop)
    }

    async fn run(
        &self,
        input: WriteInput,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        if cancel.is_cancelled() {
            return ToolOutput::error(
                "Write was cancelled before it started; nothing was written.",
            );
        }
        let target = ctx.write_target(&input.file_path);
        let session = Arc::clone(&ctx.session);
        let result =
            tokio::task::spawn_blocking(move || write_file(&target, &input.content, &session))
                .await;
        match result {
            Ok(Ok(text)) => ToolOutput::text(text),
            Ok(Err(message)) => ToolOutput::error(message),
            Err(join) => ToolOutput::error(format!("Write stopped unexpectedly: {join}")),
        }
    }
}

/// Whether a Write creates its file or replaces one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    New,
    Existing,
}

/// What Write checks before writing `path`: it is not a directory, and a file that exists was
/// read in this session and has not changed since. Validation and execution share it.
fn check_target(path: &Path, files: &FileTracker) -> Result<Target, String> {
    match fs::metadata(path) {
        Ok(metadata) if metadata.is_dir() => Err(format!(
            "{} is a directory; Write writes files. Give the path of a file.",
            path.display()
        )),
        Ok(_) => {
            files.check_fresh(path).map_err(|err| err.to_string())?;
            Ok(Target::Existing)
        }
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(Target::New),
        Err(err) => Err(format!("Cannot write {}: {err}", path.display())),
    }
}

fn write_file(
    judged: &JudgedPath,
    content: &str,
    session: &SessionState,
) -> Result<String, String> {
    let path = &judged.path();
    let target = check_target(path, &session.files)?;
    write_judged(judged, content.as_bytes())?;
    session.files.record(path);
    let lines = count_lines(content);
    let verb = match target {
        Target::New => "Created",
        Target::Existing => "Updated",
    };
    Ok(format!(
        "{verb} {} ({}).",
        path.display(),
        plural(lines, "line")
    ))
}

/// Writes `bytes` to `judged` beneath its root (see [`crate::beneath`]); the error is the
/// call's result, in the words every file-changing tool uses.
pub(crate) fn write_judged(judged: &JudgedPath, bytes: &[u8]) -> Result<(), String> {
    let full = judged.path();
    beneath::write_atomically(judged, bytes, Walk::Kernel).map_err(|err| match err {
        BeneathError::Io { path, source } if path == full => format!(
            "Cannot write {}: {source}. The file was not changed.",
            full.display()
        ),
        BeneathError::Io { .. } => format!(
            "Cannot write {}: {err}. The file was not changed.",
            full.display()
        ),
        BeneathError::LinkAppeared { .. } | BeneathError::Escapes { .. } => err.to_string(),
    })
}

/// The number of lines `text` has, as an editor counts them (a final line without a newline
/// counts).
pub(crate) fn count_lines(text: &str) -> usize {
    text.lines().count()
}

/// `1 line`, `2 lines`.
pub(crate) fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
