//! Where a path in a command really points, and whether that is inside the workspace.
//!
//! Paths are resolved the way the kernel would: relative to the command's directory, `~` to the
//! home directory, and symlinks followed by canonicalising the longest prefix that exists (the
//! rest, which does not exist yet, is normalised lexically).

use std::fs;
use std::path::{Component, Path, PathBuf};

use super::globs::{self, Expansion};
use super::word::{Piece, Word};

/// The directories that decide whether a path is inside the workspace, canonicalised once per
/// analysis.
///
/// Only the workspace roots are inside. `/tmp`, `/var/tmp` and `$TMPDIR` are outside like any
/// other directory, although the sandbox lets commands write there: the analysis must stand on
/// its own when there is no sandbox, and a temp directory is shared with every other program
/// (a file planted there, or a symlink in it, reaches anything).
#[derive(Debug)]
pub(crate) struct Places {
    pub(crate) home: PathBuf,
    pub(crate) roots: Vec<PathBuf>,
}

/// What a word names as a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// A resolved absolute path (it may end in a glob pattern such as `*`).
    Path(PathBuf),
    /// A pipe from process substitution, or `-` for standard input or output.
    Stream,
    /// Known only at run time; the text says what is unknown.
    Unknown(String),
}

/// Whether a word's quoted text stays as it is or is escaped for glob matching.
#[derive(Debug, Clone, Copy)]
enum Quoting {
    Removed,
    Escaped,
}

/// Why removing or rewriting a path wholesale would be a disaster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Protected {
    FilesystemRoot,
    Home,
    WorkspaceRoot,
    /// A directory that contains the home directory or a workspace root.
    AncestorOf(&'static str),
    /// A directory right under `/`, such as `/usr` or `/etc`.
    TopLevel(PathBuf),
}

impl Protected {
    pub(crate) fn describe(&self) -> String {
        match self {
            Protected::FilesystemRoot => "the root directory /".into(),
            Protected::Home => "the home directory".into(),
            Protected::WorkspaceRoot => "the workspace root".into(),
            Protected::AncestorOf(what) => format!("a directory containing {what}"),
            Protected::TopLevel(path) => format!("the system directory {}", path.display()),
        }
    }
}

impl Places {
    pub(crate) fn new(home: &Path, roots: &[PathBuf]) -> Places {
        Places {
            home: canonicalize_existing_prefix(home),
            roots: roots
                .iter()
                .map(|root| canonicalize_existing_prefix(root))
                .collect(),
        }
    }

    /// Resolves a word naming a path, for a command running in `cwd` (`None` when the
    /// directory is not known until run time).
    pub(crate) fn resolve(&self, word: &Word, cwd: Option<&Path>) -> Resolved {
        if word.is_process_substitution() {
            return Resolved::Stream;
        }
        let Some(raw) = self.expand(word, cwd) else {
            let unknown = word.first_unknown().unwrap_or_else(|| word.display());
            return Resolved::Unknown(unknown);
        };
        if raw == "-" {
            return Resolved::Stream;
        }
        let path = Path::new(&raw);
        // Device names are judged as written: `/dev/stderr` resolves through `/proc/self/fd`
        // to whatever this process's stderr happens to be, which says nothing about the
        // command.
        if is_harmless_device(path) {
            return Resolved::Path(path.to_path_buf());
        }
        let absolute = match cwd {
            _ if path.is_absolute() => path.to_path_buf(),
            Some(cwd) => cwd.join(path),
            None => {
                return Resolved::Unknown(format!(
                    "{raw} (the directory is not known until run time)"
                ));
            }
        };
        // `/proc/self/cwd` resolves here to cairn's own directory, not the shell's.
        if process_link_on(&absolute).is_some() {
            return Resolved::Unknown(format!(
                "{raw}, which goes through a link to the running process's own directory, root \
                 or open files"
            ));
        }
        Resolved::Path(canonicalize_existing_prefix(&absolute))
    }

    /// The absolute glob pattern a word is, when it has an unquoted `*`, `?` or `[`: the
    /// word expanded as for [`Places::resolve`], relative to `cwd`, with its quoted text
    /// backslash-escaped so that only what Bash would treat as a pattern is one.
    pub(crate) fn glob_pattern(&self, word: &Word, cwd: Option<&Path>) -> Option<String> {
        let globs = word.pieces().iter().any(|piece| {
            matches!(piece, Piece::Text { text, quoted: false } if text.contains(['*', '?', '[']))
        });
        if !globs || word.is_process_substitution() {
            return None;
        }
        let pattern = self.expand_as(word, cwd, Quoting::Escaped)?;
        if pattern.starts_with('/') {
            return Some(pattern);
        }
        let base = globs::escape(&cwd?.to_string_lossy());
        Some(format!("{base}/{pattern}"))
    }

    /// The word's text with tilde and `$HOME`/`$PWD` expanded; `None` when it depends on
    /// anything else known only at run time.
    fn expand(&self, word: &Word, cwd: Option<&Path>) -> Option<String> {
        self.expand_as(word, cwd, Quoting::Removed)
    }

    fn expand_as(&self, word: &Word, cwd: Option<&Path>, quoting: Quoting) -> Option<String> {
        let escape = |text: &str| match quoting {
            Quoting::Removed => text.to_owned(),
            Quoting::Escaped => globs::escape(text),
        };
        let mut out = String::new();
        for (index, piece) in word.pieces().iter().enumerate() {
            match piece {
                Piece::Text { text, quoted } => {
                    if index == 0 && !quoted && text.starts_with('~') {
                        let (base, rest) = self.expand_tilde(text, cwd)?;
                        out.push_str(&escape(&base.to_string_lossy()));
                        out.push_str(rest);
                    } else if *quoted {
                        out.push_str(&escape(text));
                    } else {
                        out.push_str(text);
                    }
                }
                Piece::Variable(name) if name == "HOME" => {
                    out.push_str(&escape(&self.home.to_string_lossy()));
                }
                Piece::Variable(name) if name == "PWD" => {
                    out.push_str(&escape(&cwd?.to_string_lossy()));
                }
                Piece::Variable(_) | Piece::Substitution { .. } => return None,
            }
        }
        Some(out)
    }

    /// `~`, `~+` or `~user` at the start of `text`: the directory it names, and the rest.
    fn expand_tilde<'t>(&self, text: &'t str, cwd: Option<&Path>) -> Option<(PathBuf, &'t str)> {
        let (user, rest) = match text.find('/') {
            Some(slash) => (text.get(1..slash)?, text.get(slash..)?),
            None => (text.get(1..)?, ""),
        };
        let base = match user {
            "" => self.home.clone(),
            "+" => cwd?.to_path_buf(),
            "-" => return None,
            // Another user's home: assume it sits beside ours, which is outside the workspace
            // either way.
            other => self.home.parent().unwrap_or(Path::new("/")).join(other),
        };
        Some((base, rest))
    }

    /// Resolves a `cd` target. A glob is where its one match leads (`cd lin*` through a link
    /// out is outside); with several matches `cd` fails, so where the shell is stays unknown.
    pub(crate) fn change_dir(&self, cwd: Option<&Path>, word: &Word) -> Option<PathBuf> {
        if let Some(pattern) = self.glob_pattern(word, cwd) {
            match globs::expand(&pattern) {
                Expansion::Matches(matches) => {
                    return match matches.as_slice() {
                        [only] => Some(canonicalize_existing_prefix(only)),
                        _ => None,
                    };
                }
                Expansion::TooLarge => return None,
                Expansion::NoMatch => {}
            }
        }
        match self.resolve(word, cwd) {
            Resolved::Path(path) => Some(path),
            Resolved::Stream | Resolved::Unknown(_) => None,
        }
    }

    pub(crate) fn is_inside_workspace(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(root))
    }

    /// Why `path` (or, for a trailing `*`, everything in its directory) must not be removed
    /// or rewritten recursively.
    pub(crate) fn protected(&self, path: &Path) -> Option<Protected> {
        let everything_in = matches!(
            path.file_name().and_then(|name| name.to_str()),
            Some("*" | ".*" | "*.*")
        );
        let target = if everything_in {
            path.parent().unwrap_or(path)
        } else {
            path
        };
        if target.parent().is_none() {
            return Some(Protected::FilesystemRoot);
        }
        if target == self.home {
            return Some(Protected::Home);
        }
        if self.roots.iter().any(|root| root == target) {
            return Some(Protected::WorkspaceRoot);
        }
        if self.roots.iter().any(|root| root.starts_with(target)) {
            return Some(Protected::AncestorOf("the workspace"));
        }
        if self.home.starts_with(target) {
            return Some(Protected::AncestorOf("the home directory"));
        }
        if target.parent() == Some(Path::new("/")) {
            return Some(Protected::TopLevel(target.to_path_buf()));
        }
        None
    }
}

/// Paths under `/dev` that are not files on disk and are harmless to read or write.
pub(crate) fn is_harmless_device(path: &Path) -> bool {
    const DEVICES: &[&str] = &[
        "/dev/null",
        "/dev/zero",
        "/dev/stdin",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/tty",
        "/dev/random",
        "/dev/urandom",
        "/dev/full",
    ];
    const STANDARD_STREAMS: &[&str] = &[
        "/dev/fd/0",
        "/dev/fd/1",
        "/dev/fd/2",
        "/proc/self/fd/0",
        "/proc/self/fd/1",
        "/proc/self/fd/2",
    ];
    DEVICES
        .iter()
        .chain(STANDARD_STREAMS)
        .any(|device| path == Path::new(device))
}

/// Symbolic links followed one path may go through, as the kernel allows (ELOOP past it).
const MAX_LINK_HOPS: usize = 40;

/// The first link on `path` (absolute) that names something of the process that follows it
/// — its directory, root, executable, open descriptors (`/proc/self/cwd`, `/proc/$$/root`,
/// `/proc/thread-self/fd/5`, `/dev/fd/6`, `/dev/stdin`) — found by resolving the path one
/// component at a time, through any symbolic link that leads there (`dir/link` →
/// `/proc/self/cwd`). Where such a link leads is the shell's business at run time, not
/// what it leads to for cairn now.
pub(crate) fn process_link_on(path: &Path) -> Option<PathBuf> {
    // The components still to walk, last first, so that a link's target goes on top.
    let mut pending: Vec<PathBuf> = Vec::new();
    push_components(&mut pending, path);
    let mut current = PathBuf::from("/");
    let mut hops = 0;
    while let Some(part) = pending.pop() {
        match part.components().next() {
            Some(Component::RootDir) => current = PathBuf::from("/"),
            Some(Component::ParentDir) => {
                current.pop();
            }
            Some(Component::Normal(name)) => {
                let next = current.join(name);
                if is_process_link(&next) {
                    return Some(next);
                }
                match fs::read_link(&next) {
                    // Past the kernel's limit the path does not resolve at all.
                    Ok(_) if hops >= MAX_LINK_HOPS => return None,
                    Ok(target) => {
                        hops += 1;
                        push_components(&mut pending, &target);
                    }
                    Err(_) => current = next,
                }
            }
            Some(Component::CurDir | Component::Prefix(_)) | None => {}
        }
    }
    None
}

fn push_components(pending: &mut Vec<PathBuf>, path: &Path) {
    let parts: Vec<PathBuf> = path
        .components()
        .map(|component| PathBuf::from(component.as_os_str()))
        .collect();
    pending.extend(parts.into_iter().rev());
}

/// `/proc/<pid>/{cwd,root,exe}`, `/proc/<pid>/{fd,map_files}/<n>` (also under
/// `task/<tid>/`), and `/dev/fd/<n>`, `/dev/stdin`, `/dev/stdout`, `/dev/stderr`.
fn is_process_link(path: &Path) -> bool {
    let parts: Vec<&str> = path
        .components()
        .filter_map(|component| match component {
            Component::Normal(name) => name.to_str(),
            Component::RootDir
            | Component::CurDir
            | Component::ParentDir
            | Component::Prefix(_) => None,
        })
        .collect();
    match parts.as_slice() {
        ["dev", "stdin" | "stdout" | "stderr"] | ["dev", "fd", _] => true,
        ["proc", process, rest @ ..] if is_process(process) => {
            let rest = match rest {
                ["task", thread, inner @ ..] if is_process(thread) => inner,
                _ => rest,
            };
            matches!(
                rest,
                ["cwd" | "root" | "exe"] | ["fd" | "map_files" | "fdinfo", _]
            )
        }
        _ => false,
    }
}

fn is_process(name: &str) -> bool {
    matches!(name, "self" | "thread-self")
        || (!name.is_empty() && name.chars().all(|c| c.is_ascii_digit()))
}

/// Disks and memory: writing to them destroys data below the filesystem.
pub(crate) fn is_block_device(path: &Path) -> bool {
    const PREFIXES: &[&str] = &[
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "md", "dm-", "loop", "sr",
        "nbd",
    ];
    let Ok(rest) = path.strip_prefix("/dev") else {
        return false;
    };
    let Some(first) = rest.components().next() else {
        return false;
    };
    let first = first.as_os_str().to_string_lossy();
    matches!(first.as_ref(), "mapper" | "mem" | "kmem" | "port")
        || PREFIXES.iter().any(|prefix| first.starts_with(prefix))
}

/// Canonicalises the longest prefix of `path` that exists, then appends the rest with `.`
/// and `..` applied lexically.
pub(crate) fn canonicalize_existing_prefix(path: &Path) -> PathBuf {
    if let Ok(canonical) = fs::canonicalize(path) {
        return canonical;
    }
    let components: Vec<Component<'_>> = path.components().collect();
    for keep in (1..components.len()).rev() {
        let prefix: PathBuf = components.iter().take(keep).collect();
        if let Ok(mut resolved) = fs::canonicalize(&prefix) {
            for component in components.iter().skip(keep) {
                push_lexically(&mut resolved, *component);
            }
            return resolved;
        }
    }
    let mut resolved = PathBuf::new();
    for component in components {
        push_lexically(&mut resolved, component);
    }
    resolved
}

fn push_lexically(path: &mut PathBuf, component: Component<'_>) {
    match component {
        Component::ParentDir => {
            path.pop();
        }
        Component::CurDir => {}
        Component::Prefix(_) | Component::RootDir | Component::Normal(_) => path.push(component),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_suffixes_are_normalised_lexically() {
        let base = std::env::temp_dir();
        let canonical_base = fs::canonicalize(&base).unwrap_or(base.clone());
        assert_eq!(
            canonicalize_existing_prefix(&base.join("no-such-dir-cairn/a/../b")),
            canonical_base.join("no-such-dir-cairn/b")
        );
        assert_eq!(
            canonicalize_existing_prefix(Path::new("/no-such-dir-cairn/x/../../etc")),
            PathBuf::from("/etc")
        );
    }

    #[test]
    fn block_devices_are_recognised() {
        assert!(is_block_device(Path::new("/dev/sda")));
        assert!(is_block_device(Path::new("/dev/nvme0n1p1")));
        assert!(is_block_device(Path::new("/dev/mapper/root")));
        assert!(!is_block_device(Path::new("/dev/null")));
        assert!(!is_block_device(Path::new("/etc/sda")));
    }
}
