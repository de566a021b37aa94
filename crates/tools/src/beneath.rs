//! Writing a file exactly where the permission layer judged it: opened beneath a handle on
//! the root it lies under, with no symbolic link followed on the way.
//!
//! A file tool's path is resolved once, when the call is prepared ([`JudgedPath::resolve`]):
//! every link that exists then is followed, so `CLAUDE.md -> AGENTS.md` or a `src -> lib`
//! directory link inside the workspace works as it always did, and the resolved path is what
//! the gate judges. The write then walks that resolved path from the root without following
//! any link (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` on Linux, else one
//! component at a time with `O_NOFOLLOW`). A link swapped in after the check (a directory
//! replaced by a link to the home directory) makes the call fail with
//! [`BeneathError::LinkAppeared`]; it can never carry the write somewhere else.
//!
//! Every file-changing tool (Write, Edit, MultiEdit, NotebookEdit) writes through
//! [`write_atomically`]: the one place where a file tool opens a file for writing.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write as _};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// Where a path really leads: the one resolution the gate judges and the file tools write.
pub use cairn_shell::resolve_existing_prefix;

/// A path as the permission layer judged it: the root it lies under (a workspace root when
/// one holds it, else `/`) and the rest, every symbolic link that existed at the check
/// resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgedPath {
    root: PathBuf,
    relative: PathBuf,
    new_dirs: NewDirs,
}

/// The permissions of the directories a write creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NewDirs {
    /// `0o700` in a private directory, else `0o777` less the umask.
    LikeTheirParent,
    /// `0o700`: the path lies in cairn's own state.
    Private,
}

impl JudgedPath {
    /// Resolves `path` (absolute) now: its longest existing prefix with every link followed,
    /// the missing rest appended, as the permission gate resolves it; a link at the end that
    /// leads to a file not there yet is followed too, so writing through it creates its
    /// target. This is the one resolution a file tool's call gets.
    pub fn resolve(path: &Path, roots: &[PathBuf]) -> JudgedPath {
        let mut resolved = resolve_existing_prefix(path);
        // As many links as the kernel follows before it gives up (`ELOOP`).
        for _ in 0..40 {
            let Ok(target) = std::fs::read_link(&resolved) else {
                break;
            };
            let Some(parent) = resolved.parent() else {
                break;
            };
            resolved = resolve_existing_prefix(&parent.join(target));
        }
        JudgedPath::under_roots(&resolved, roots)
    }

    /// `resolved` (already resolved, and not resolved again) split at the deepest of `roots`
    /// that holds it; `/` when none does. A path outside every root is walked from `/`, so
    /// no link is followed anywhere on it either.
    pub fn under_roots(resolved: &Path, roots: &[PathBuf]) -> JudgedPath {
        let root = roots
            .iter()
            .map(|root| resolve_existing_prefix(root))
            .filter(|root| resolved.starts_with(root) && resolved != root)
            .max_by_key(|root| root.components().count())
            .unwrap_or_else(|| PathBuf::from("/"));
        let relative = resolved
            .strip_prefix(&root)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| resolved.to_path_buf());
        JudgedPath {
            root,
            relative,
            new_dirs: NewDirs::LikeTheirParent,
        }
    }

    /// This path, whose new directories are `0o700` when it lies under one of `dirs`
    /// (cairn's own state), as every directory cairn creates there is.
    pub fn private_under(mut self, dirs: &[PathBuf]) -> JudgedPath {
        let path = self.path();
        if dirs
            .iter()
            .any(|dir| path.starts_with(resolve_existing_prefix(dir)))
        {
            self.new_dirs = NewDirs::Private;
        }
        self
    }

    /// The whole path: the root and the rest.
    pub fn path(&self) -> PathBuf {
        self.root.join(&self.relative)
    }

    /// The root the path is opened beneath.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

/// How the path beneath the root is walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    /// The kernel walks it (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`), falling
    /// back to [`Walk::Components`] where `openat2` is refused (before Linux 5.6, under a
    /// seccomp profile) or does not exist (other systems).
    Kernel,
    /// One component at a time: each directory opened with `O_NOFOLLOW | O_DIRECTORY`
    /// relative to the one before, the file with `O_NOFOLLOW`.
    Components,
}

/// Why a file could not be written beneath its root.
#[derive(Debug, thiserror::Error)]
pub enum BeneathError {
    /// A symbolic link stands on the resolved path where there was none when the call was
    /// checked: following it could lead anywhere, so nothing was written.
    #[error(
        "{} changed after the call was checked: a symbolic link now stands on the way to it, \
         and the file tools do not follow links that appear after the check. Nothing was \
         written. Check the path (and what changed it) and try again.",
        path.display()
    )]
    LinkAppeared {
        /// The path the file tool was writing.
        path: PathBuf,
    },
    /// The path climbs out of its root (`..` after a directory that does not exist yet).
    #[error(
        "{} leaves the directory it was checked under (it goes up with `..`). Give the path \
         without `..`.",
        path.display()
    )]
    Escapes {
        /// The path as given.
        path: PathBuf,
    },
    /// Any other failure, with the path it concerns.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path the failed operation was on.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
}

impl BeneathError {
    /// The underlying I/O error kind, for callers that tell failures apart.
    pub fn kind(&self) -> io::ErrorKind {
        match self {
            BeneathError::LinkAppeared { .. } => io::ErrorKind::Other,
            BeneathError::Escapes { .. } => io::ErrorKind::PermissionDenied,
            BeneathError::Io { source, .. } => source.kind(),
        }
    }

    fn from_errno(path: &Path, errno: Errno) -> BeneathError {
        match errno {
            Errno::LOOP => BeneathError::LinkAppeared {
                path: path.to_path_buf(),
            },
            Errno::XDEV => BeneathError::Escapes {
                path: path.to_path_buf(),
            },
            other => BeneathError::Io {
                path: path.to_path_buf(),
                source: io::Error::from(other),
            },
        }
    }
}

/// Set once `openat2` answered `ENOSYS`: the kernel does not have it, so later calls go
/// straight to the component walk.
static KERNEL_LACKS_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Replaces (or creates) the file at `target` with `bytes` atomically, beneath its root: the
/// missing parent directories are created, the content goes to a temporary file in the same
/// directory, flushed and renamed over the target (`renameat` within one directory handle).
///
/// An existing file keeps its permissions (and, where the process may, its owner); a new file
/// gets `0o666` less the umask. A new directory gets `0o700` when the directory it is made in
/// is private (no access for group or others, as cairn's memory directory is), else `0o777`
/// less the umask. On any error the target is untouched and no temporary file is left.
pub fn write_atomically(target: &JudgedPath, bytes: &[u8], walk: Walk) -> Result<(), BeneathError> {
    let full = target.path();
    let err = |errno: Errno| BeneathError::from_errno(&full, errno);
    let (Some(name), parent) = (target.relative.file_name(), target.relative.parent()) else {
        return Err(err(Errno::ISDIR));
    };
    let parent = parent.unwrap_or(Path::new(""));
    let root =
        open_root(&target.root).map_err(|errno| BeneathError::from_errno(&target.root, errno))?;
    let dir = open_dir_creating(root.as_fd(), parent, target.new_dirs, walk).map_err(err)?;
    let existing = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Some(stat),
        Err(Errno::NOENT) => None,
        Err(errno) => return Err(err(errno)),
    };
    if let Some(stat) = &existing {
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Symlink => return Err(err(Errno::LOOP)),
            FileType::Directory => return Err(err(Errno::ISDIR)),
            _ => {}
        }
    }
    let (temp_name, temp) = create_temp(dir.as_fd(), name, existing.is_none()).map_err(err)?;
    let written = fill_temp(temp, bytes, existing.as_ref())
        .and_then(|()| rustix::fs::renameat(&dir, &temp_name, &dir, name).map_err(io::Error::from));
    if let Err(source) = written {
        let _ = rustix::fs::unlinkat(&dir, &temp_name, AtFlags::empty());
        return Err(BeneathError::Io { path: full, source });
    }
    Ok(())
}

/// The content of the regular file at `target`, read beneath its root with no link followed
/// (an edit reads what it will write back, from the same place). A directory is
/// `IsADirectory`; a FIFO, socket or device is refused without reading from it.
pub fn read(target: &JudgedPath, walk: Walk) -> Result<Vec<u8>, BeneathError> {
    use std::io::Read as _;
    let full = target.path();
    let err = |errno: Errno| BeneathError::from_errno(&full, errno);
    let root =
        open_root(&target.root).map_err(|errno| BeneathError::from_errno(&target.root, errno))?;
    let fd = open_beneath(
        root.as_fd(),
        &target.relative,
        OFlags::RDONLY | OFlags::NONBLOCK,
        Mode::empty(),
        walk,
    )
    .map_err(err)?;
    let stat = rustix::fs::fstat(&fd).map_err(err)?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => {}
        FileType::Directory => return Err(err(Errno::ISDIR)),
        _ => return Err(err(Errno::INVAL)),
    }
    let mut bytes = Vec::new();
    File::from(fd)
        .read_to_end(&mut bytes)
        .map_err(|source| BeneathError::Io {
            path: full.clone(),
            source,
        })?;
    Ok(bytes)
}

/// Opens the root itself. It was resolved when the call was checked; its own ancestors are
/// the user's directories, not the model's.
fn open_root(root: &Path) -> Result<OwnedFd, Errno> {
    rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// The directory `relative` beneath `root`, created (each missing component) when it does
/// not exist.
fn open_dir_creating(
    root: BorrowedFd<'_>,
    relative: &Path,
    new_dirs: NewDirs,
    walk: Walk,
) -> Result<OwnedFd, Errno> {
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY;
    match open_beneath(root, relative, dir_flags, Mode::empty(), walk) {
        Err(Errno::NOENT) => {}
        other => return other,
    }
    let mut current = rustix::io::dup(root)?;
    for part in components(relative)? {
        current = match open_beneath(
            current.as_fd(),
            Path::new(part),
            dir_flags,
            Mode::empty(),
            walk,
        ) {
            Err(Errno::NOENT) => {
                let mode = match new_dirs {
                    NewDirs::Private => Mode::from_raw_mode(0o700),
                    NewDirs::LikeTheirParent => new_dir_mode(current.as_fd()),
                };
                match rustix::fs::mkdirat(&current, part, mode) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(errno) => return Err(errno),
                }
                // Opened again without following links: whatever stands there now.
                open_beneath(
                    current.as_fd(),
                    Path::new(part),
                    dir_flags,
                    Mode::empty(),
                    walk,
                )?
            }
            other => other?,
        };
    }
    Ok(current)
}

/// `0o700` in a private directory, `0o777` (less the umask) elsewhere.
fn new_dir_mode(parent: BorrowedFd<'_>) -> Mode {
    match rustix::fs::fstat(parent) {
        Ok(stat) if stat.st_mode & 0o077 == 0 => Mode::from_raw_mode(0o700),
        _ => Mode::from_raw_mode(0o777),
    }
}

/// Opens `relative` beneath `dir` as `walk` says, following no symbolic link. `ELOOP` means
/// a link stands on the way; `EXDEV` that the path leaves `dir`.
pub(crate) fn open_beneath(
    dir: BorrowedFd<'_>,
    relative: &Path,
    flags: OFlags,
    mode: Mode,
    walk: Walk,
) -> Result<OwnedFd, Errno> {
    let flags = flags | OFlags::CLOEXEC;
    match walk {
        Walk::Kernel if !KERNEL_LACKS_OPENAT2.load(Ordering::Relaxed) => {
            match open_with_kernel(dir, relative, flags, mode) {
                Err(Errno::NOSYS) => {
                    KERNEL_LACKS_OPENAT2.store(true, Ordering::Relaxed);
                    open_by_components(dir, relative, flags, mode)
                }
                // A seccomp profile refusing the call, or a refusal the walk will report
                // itself.
                Err(Errno::PERM) => open_by_components(dir, relative, flags, mode),
                other => other,
            }
        }
        Walk::Kernel | Walk::Components => open_by_components(dir, relative, flags, mode),
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn open_with_kernel(
    dir: BorrowedFd<'_>,
    relative: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    use rustix::fs::ResolveFlags;
    let relative = if relative.as_os_str().is_empty() {
        Path::new(".")
    } else {
        relative
    };
    rustix::fs::openat2(
        dir,
        relative,
        flags,
        mode,
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
    )
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn open_with_kernel(
    _dir: BorrowedFd<'_>,
    _relative: &Path,
    _flags: OFlags,
    _mode: Mode,
) -> Result<OwnedFd, Errno> {
    Err(Errno::NOSYS)
}

/// The per-component walk: every directory with `O_NOFOLLOW | O_DIRECTORY`, the last
/// component with `flags | O_NOFOLLOW`. A component that is a link answers `ELOOP`, however
/// the system reports it (`O_DIRECTORY` on a link gives `ENOTDIR` on Linux).
pub(crate) fn open_by_components(
    dir: BorrowedFd<'_>,
    relative: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    let parts = components(relative)?;
    let Some((last, directories)) = parts.split_last() else {
        return rustix::fs::openat(dir, ".", flags, mode);
    };
    let mut current: Option<OwnedFd> = None;
    for part in directories {
        let at = current.as_ref().map_or(dir, AsFd::as_fd);
        let next = rustix::fs::openat(
            at,
            *part,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| link_or(at, part, errno))?;
        current = Some(next);
    }
    let at = current.as_ref().map_or(dir, AsFd::as_fd);
    rustix::fs::openat(at, *last, flags | OFlags::NOFOLLOW, mode)
        .map_err(|errno| link_or(at, last, errno))
}

/// `ELOOP` when `name` in `dir` is a symbolic link, else `errno` as it came. `O_DIRECTORY`
/// on a link answers `ENOTDIR` on Linux; a component that is a directory again by the time it
/// is looked at was swapped in between, which is a link appearing all the same.
fn link_or(dir: BorrowedFd<'_>, name: &OsStr, errno: Errno) -> Errno {
    match errno {
        Errno::LOOP => Errno::LOOP,
        Errno::NOTDIR => match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat)
                if matches!(
                    FileType::from_raw_mode(stat.st_mode),
                    FileType::Symlink | FileType::Directory
                ) =>
            {
                Errno::LOOP
            }
            _ => errno,
        },
        other => other,
    }
}

/// The names of `relative`, `.` dropped; `..`, a root or a prefix is `EXDEV`, as
/// `RESOLVE_BENEATH` answers a path that climbs out.
fn components(relative: &Path) -> Result<Vec<&OsStr>, Errno> {
    relative
        .components()
        .filter(|part| *part != Component::CurDir)
        .map(|part| match part {
            Component::Normal(name) => Ok(name),
            Component::ParentDir
            | Component::RootDir
            | Component::Prefix(_)
            | Component::CurDir => Err(Errno::XDEV),
        })
        .collect()
}

/// A new, empty temporary file beside `name` in `dir`, created exclusively.
fn create_temp(dir: BorrowedFd<'_>, name: &OsStr, new_file: bool) -> Result<(String, File), Errno> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // A new file asks for 0o666 so that the umask applies as for any new file; an existing
    // file's own permissions are set on the temporary file before it is renamed.
    let mode = Mode::from_raw_mode(if new_file { 0o666 } else { 0o600 });
    let mut attempts = 0;
    loop {
        let temp_name = format!(
            ".{}.{}.{}.cairn-tmp",
            name.to_string_lossy(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        match rustix::fs::openat(
            dir,
            temp_name.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            mode,
        ) {
            Ok(fd) => return Ok((temp_name, File::from(fd))),
            Err(Errno::EXIST) if attempts < 16 => attempts += 1,
            Err(errno) => return Err(errno),
        }
    }
}

/// Writes `bytes` to the temporary file, gives it the replaced file's permissions and owner,
/// and flushes it to disk.
fn fill_temp(mut temp: File, bytes: &[u8], existing: Option<&rustix::fs::Stat>) -> io::Result<()> {
    temp.write_all(bytes)?;
    if let Some(stat) = existing {
        // The permission bits alone: `Mode` holds no file type.
        rustix::fs::fchmod(&temp, Mode::from_raw_mode(stat.st_mode))?;
        keep_owner(&temp, stat);
    }
    temp.sync_all()
}

fn keep_owner(file: &File, original: &rustix::fs::Stat) {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(current) = file.metadata() else { return };
    if (current.uid(), current.gid()) != (original.st_uid, original.st_gid) {
        // Only a privileged process may give a file away; otherwise the writer owns it, as
        // with any editor that saves by renaming.
        let _ = std::os::unix::fs::fchown(file, Some(original.st_uid), Some(original.st_gid));
    }
}
