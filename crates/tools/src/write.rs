//! `Write`: a whole file, created or replaced, and the atomic write every file-changing tool
//! uses.
//!
//! A file is never written in place: the new content goes to a temporary file in the same
//! directory, which is then renamed over the old one. Readers see the old file or the new one,
//! never half of each, and a failed write leaves the old file as it was and no temporary file
//! behind.

use std::fs;
use std::io::{self, ErrorKind, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

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
        vec![ctx.resolve(&input.file_path)]
    }

    async fn validate(&self, input: &WriteInput, ctx: &ToolContext) -> Result<(), String> {
        // Two `stat`s: cheap enough not to need a blocking thread.
        check_target(&ctx.resolve(&input.file_path), &ctx.session.files).map(drop)
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
        let path = ctx.resolve(&input.file_path);
        let session = Arc::clone(&ctx.session);
        let result =
            tokio::task::spawn_blocking(move || write_file(&path, &input.content, &session)).await;
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

fn write_file(path: &Path, content: &str, session: &SessionState) -> Result<String, String> {
    let target = check_target(path, &session.files)?;
    if target == Target::New
        && let Some(parent) = path.parent()
    {
        fs::create_dir_all(parent)
            .map_err(|err| format!("Cannot create the directory {}: {err}", parent.display()))?;
    }
    write_atomically(path, content.as_bytes()).map_err(|err| {
        format!(
            "Cannot write {}: {err}. The file was not changed.",
            path.display()
        )
    })?;
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

/// Replaces the file at `path` with `bytes` atomically: a temporary file in the same
/// directory, flushed to disk and renamed over the target.
///
/// An existing file keeps its permissions (and, where the process may, its owner); a new file
/// gets the usual `0o666` less the umask. A symbolic link is followed, so the link stays a link
/// and its target changes. On any error the target is untouched and the temporary file is
/// removed.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = follow_symlink(path);
    let dir = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let existing = match fs::metadata(&target) {
        Ok(metadata) => Some(metadata),
        Err(err) if err.kind() == ErrorKind::NotFound => None,
        Err(err) => return Err(err),
    };
    let name = target
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut builder = tempfile::Builder::new();
    let prefix = format!(".{name}.");
    builder.prefix(&prefix).suffix(".cairn-tmp");
    if existing.is_none() {
        ask_for_new_file_permissions(&mut builder);
    }
    // Dropping `temp` on an early return deletes it.
    let mut temp = builder.tempfile_in(dir)?;
    temp.write_all(bytes)?;
    if let Some(metadata) = &existing {
        temp.as_file().set_permissions(metadata.permissions())?;
        keep_owner(temp.as_file(), metadata);
    }
    temp.as_file().sync_all()?;
    temp.persist(&target).map_err(|err| err.error)?;
    Ok(())
}

/// The file a symbolic link points to; `path` itself when it is not a link or the link is
/// broken.
fn follow_symlink(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// Asks for `0o666` on a new file. It is passed to open(2), so the umask applies as for any
/// newly created file (the temporary file would otherwise be private, `0o600`).
#[cfg(unix)]
fn ask_for_new_file_permissions(builder: &mut tempfile::Builder<'_, '_>) {
    use std::os::unix::fs::PermissionsExt;
    builder.permissions(fs::Permissions::from_mode(0o666));
}

#[cfg(not(unix))]
fn ask_for_new_file_permissions(_builder: &mut tempfile::Builder<'_, '_>) {}

#[cfg(unix)]
fn keep_owner(file: &fs::File, original: &fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    let Ok(current) = file.metadata() else { return };
    if (current.uid(), current.gid()) != (original.uid(), original.gid()) {
        // Only a privileged process may give a file away; otherwise the writer owns it, as
        // with any editor that saves by renaming.
        let _ = std::os::unix::fs::fchown(file, Some(original.uid()), Some(original.gid()));
    }
}

#[cfg(not(unix))]
fn keep_owner(_file: &fs::File, _original: &fs::Metadata) {}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_content_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        fs::write(&path, "old").unwrap();
        write_atomically(&path, b"new").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(entries(dir.path()), vec!["a.txt".to_string()]);
    }

    #[test]
    fn a_failed_rename_removes_the_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("taken");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("inside"), "kept").unwrap();
        let error = write_atomically(&target, b"new").unwrap_err();
        assert!(
            matches!(
                error.kind(),
                ErrorKind::IsADirectory | ErrorKind::DirectoryNotEmpty
            ),
            "{error:?}"
        );
        assert_eq!(entries(dir.path()), vec!["taken".to_string()]);
        assert_eq!(fs::read_to_string(target.join("inside")).unwrap(), "kept");
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_stays_a_link_and_its_target_changes() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        let link = dir.path().join("link.txt");
        fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomically(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
    }
}
