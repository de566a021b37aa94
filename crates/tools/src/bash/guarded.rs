//! Files a sandboxed command may not create or change although they lie in a writable
//! directory ([`CommandSandbox::guarded_files`]): a project's `.mcp.json`, git's `commondir`
//! or `objects/info/alternates`, a new `.git` anywhere. The sandbox mounts the existing ones
//! read-only, but cannot mount one that does not exist yet (and mounts nothing where the
//! kernel refuses a mount namespace). So their state is recorded before every sandboxed
//! command, foreground or background, and what the command changed is undone as it ends:
//! a created file removed, a created `.git` directory moved aside (it may hold a clone's
//! history), changed content put back. The tool result says what was undone.
//!
//! A guarded file changed by something else while a command runs (another tool call the
//! user approved, during a long background command) is undone too: the check cannot tell
//! who changed it, and these files are only ever meant to change with the user's approval
//! outside the sandbox.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use crate::{CommandSandbox, GuardedList};

/// Content kept per file to put it back; a larger file is only watched (length and time).
const MAX_KEPT_BYTES: u64 = 1 << 20;

/// What a guarded path was, as far as undoing a change needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Absent,
    File {
        /// `None` when the file was larger than [`MAX_KEPT_BYTES`].
        content: Option<Vec<u8>>,
        len: u64,
        modified: Option<SystemTime>,
        mode: u32,
    },
    Dir,
    Link(PathBuf),
    /// A socket, a FIFO, a device.
    Other,
}

impl Entry {
    fn of(path: &Path) -> Entry {
        let Ok(meta) = fs::symlink_metadata(path) else {
            return Entry::Absent;
        };
        let kind = meta.file_type();
        if kind.is_dir() {
            Entry::Dir
        } else if kind.is_symlink() {
            fs::read_link(path).map_or(Entry::Other, Entry::Link)
        } else if kind.is_file() {
            let content = (meta.len() <= MAX_KEPT_BYTES)
                .then(|| fs::read(path).ok())
                .flatten();
            Entry::File {
                content,
                len: meta.len(),
                modified: meta.modified().ok(),
                mode: meta.permissions().mode(),
            }
        } else {
            Entry::Other
        }
    }

    /// Whether `now` differs from `self`, the state before.
    fn changed_to(&self, now: &Entry) -> bool {
        match (self, now) {
            (
                Entry::File {
                    content: Some(before),
                    mode: mode_before,
                    ..
                },
                Entry::File {
                    content: Some(after),
                    mode: mode_after,
                    ..
                },
            ) => before != after || mode_before != mode_after,
            (
                Entry::File { len, modified, .. },
                Entry::File {
                    len: len_now,
                    modified: modified_now,
                    ..
                },
            ) => len != len_now || modified != modified_now,
            (before, after) => before != after,
        }
    }
}

/// The guarded files' state before a command, to compare with after it.
pub(super) struct GuardSnapshot {
    list: Arc<dyn Fn() -> GuardedList + Send + Sync>,
    entries: BTreeMap<PathBuf, Entry>,
    complete: bool,
    started: SystemTime,
}

/// Records the guarded files' state, when the command runs in a sandbox.
pub(super) fn snapshot(sandbox: Option<&CommandSandbox>) -> Option<GuardSnapshot> {
    let list = Arc::clone(&sandbox?.guarded_files.list);
    let listed = list();
    let entries = listed
        .paths
        .into_iter()
        .map(|path| {
            let entry = Entry::of(&path);
            (path, entry)
        })
        .collect();
    Some(GuardSnapshot {
        list,
        entries,
        complete: listed.complete,
        started: SystemTime::now(),
    })
}

/// Undoes what the command changed among the guarded files, and says what, or `None` when
/// it changed nothing. The listing walks the workspace, so it runs on a blocking thread.
pub(super) async fn undo_changes(snapshot: Option<GuardSnapshot>) -> Option<String> {
    let snapshot = snapshot?;
    tokio::task::spawn_blocking(move || undo_changes_now(&snapshot))
        .await
        .unwrap_or_else(|error| {
            Some(format!(
                "The sandbox could not check its guarded files: {error}"
            ))
        })
}

fn undo_changes_now(snapshot: &GuardSnapshot) -> Option<String> {
    let mut paths: Vec<PathBuf> = (snapshot.list)().paths;
    paths.extend(snapshot.entries.keys().cloned());
    paths.sort();
    paths.dedup();
    let before_of = |path: &Path| match snapshot.entries.get(path) {
        Some(before) => Some(before.clone()),
        // Found only now: created by the command, unless the first listing stopped before
        // reaching it, in which case only what changed since the command started counts.
        None if snapshot.complete || changed_since(path, snapshot.started) => Some(Entry::Absent),
        None => None,
    };
    let changes: Vec<(&PathBuf, Entry, Entry)> = paths
        .iter()
        .filter_map(|path| {
            let before = before_of(path)?;
            let now = Entry::of(path);
            before.changed_to(&now).then_some((path, before, now))
        })
        .collect();
    // A new `.git` directory is moved aside whole, with what is in it.
    let new_repositories: Vec<&PathBuf> = changes
        .iter()
        .filter(|(path, before, now)| {
            is_git_entry(path) && *before == Entry::Absent && *now == Entry::Dir
        })
        .map(|(path, _, _)| *path)
        .collect();
    let mut done = Vec::new();
    // Deepest first: the files a command put in a new directory go before the directory.
    for (path, before, now) in changes.iter().rev() {
        let in_new_repository = new_repositories
            .iter()
            .any(|repository| path.starts_with(repository) && path != repository);
        // A new directory other than a `.git` holds nothing by itself (the sandbox creates
        // empty `hooks` and `info` to mount them); what was put in it is listed on its own.
        let new_plain_dir = *before == Entry::Absent && *now == Entry::Dir && !is_git_entry(path);
        if !in_new_repository && !new_plain_dir {
            done.push(undo(path, before, now));
        }
    }
    (!done.is_empty()).then(|| {
        done.reverse();
        format!(
            "The sandbox {}: commands may not create or change the files that decide which \
             programs cairn and git run, or where a git repository is. Write them with the \
             Write tool, which asks the user.",
            done.join(", ")
        )
    })
}

fn is_git_entry(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.eq_ignore_ascii_case(".git"))
}

fn changed_since(path: &Path, started: SystemTime) -> bool {
    use std::os::unix::fs::MetadataExt;
    fs::symlink_metadata(path).is_ok_and(|meta| {
        let changed = std::time::UNIX_EPOCH
            + std::time::Duration::new(
                u64::try_from(meta.ctime()).unwrap_or(0),
                u32::try_from(meta.ctime_nsec()).unwrap_or(0),
            );
        changed >= started
    })
}

/// Puts `path` back as it was, and says what was done, for the tool result.
fn undo(path: &Path, before: &Entry, now: &Entry) -> String {
    let shown = path.display();
    // Never act through a directory a command replaced with a link: that would remove or
    // write files wherever the link leads.
    if path
        .parent()
        .is_some_and(|parent| fs::canonicalize(parent).ok().as_deref() != Some(parent))
    {
        return format!("could not undo a change to {shown} (a directory on its way is a link)");
    }
    let cleared = match now {
        Entry::Absent => Ok(None),
        Entry::Dir => set_aside(path).map(Some),
        Entry::File { .. } | Entry::Link(_) | Entry::Other => fs::remove_file(path).map(|()| None),
    };
    let aside = match cleared {
        Ok(aside) => aside,
        Err(error) => return format!("could not undo a change to {shown} ({error})"),
    };
    let restored = match before {
        Entry::Absent => Ok(false),
        Entry::File {
            content: Some(content),
            mode,
            ..
        } => recreate(path, content, *mode).map(|()| true),
        Entry::Link(target) => std::os::unix::fs::symlink(target, path).map(|()| true),
        Entry::File { content: None, .. } | Entry::Dir | Entry::Other => {
            return format!("found {shown} changed and could not put it back");
        }
    };
    match (restored, aside) {
        (Err(error), _) => format!("could not put {shown} back ({error})"),
        (Ok(true), _) => format!("restored {shown}"),
        (Ok(false), Some(aside)) => format!("moved {shown} aside to {}", aside.display()),
        (Ok(false), None) => format!("removed {shown}"),
    }
}

/// Renames a directory a command created (a new `.git`) to a name nothing reads, and returns
/// that name: removing it could lose a repository the user wanted.
fn set_aside(path: &Path) -> std::io::Result<PathBuf> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    for attempt in 1..100 {
        let suffix = if attempt == 1 {
            String::new()
        } else {
            format!("-{attempt}")
        };
        let aside = path.with_file_name(format!("{name}.removed-by-cairn{suffix}"));
        if fs::symlink_metadata(&aside).is_err() {
            fs::rename(path, &aside)?;
            return Ok(aside);
        }
    }
    Err(std::io::Error::other("no free name to move it aside to"))
}

/// Writes `content` as a new file at `path`, never through a link (`create_new` refuses
/// anything already there, a link included).
fn recreate(path: &Path, content: &[u8], mode: u32) -> std::io::Result<()> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode & 0o7777)
        .open(path)?;
    file.write_all(content)?;
    file.set_permissions(fs::Permissions::from_mode(mode & 0o7777))
}
