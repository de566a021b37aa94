//! Telling a sandbox refusal apart from an ordinary failure, from a command's stderr.
//!
//! Landlock refuses with `EACCES` ("Permission denied"), for files and for TCP alike, never with
//! `EROFS`. A permission error counts as the sandbox's when it names a path in `deny_read` or
//! outside `writable` (and that cairn itself may read: otherwise the user's own permissions
//! refused it), or when it is about a connection while the network is denied. A write that the
//! user's permissions forbid anyway (`/etc/hosts`) is still blamed on the sandbox, hence
//! "probably".

use std::path::{Path, PathBuf};

use cairn_shell::resolve_existing_prefix;

use super::{NetworkAccess, SandboxPolicy};

/// How many lines above a pathless "Permission denied" to look for the path (cargo puts a blank
/// line and `Caused by:` in between).
const LOOK_BACK_LINES: usize = 3;

/// Recognises a failure caused by the sandbox in a command's stderr, and returns the sentence
/// for the tool result: what was blocked, and to ask the user for an unsandboxed run.
///
/// `None` when the command succeeded or nothing points at the sandbox.
///
/// ```
/// use std::path::PathBuf;
/// use cairn_policy::sandbox::{NetworkAccess, SandboxPolicy, explain_failure};
///
/// let policy = SandboxPolicy {
///     writable: vec![PathBuf::from("/work")],
///     deny_read: vec![],
///     network: NetworkAccess::Allowed,
///     protected_roots: vec![],
/// };
/// let stderr = "touch: cannot touch '/etc/motd': Permission denied\n";
/// let sentence = explain_failure(&policy, Some(1), stderr).unwrap_or_default();
/// assert!(sentence.starts_with("The sandbox probably blocked this: `/etc/motd` is outside"));
/// assert_eq!(explain_failure(&policy, Some(1), "make: *** [all] Error 2\n"), None);
/// ```
pub fn explain_failure(
    policy: &SandboxPolicy,
    exit_code: Option<i32>,
    stderr: &str,
) -> Option<String> {
    if exit_code == Some(0) {
        return None;
    }
    let network_denied = match policy.network {
        NetworkAccess::Denied => true,
        NetworkAccess::Allowed => false,
    };
    let lines: Vec<&str> = stderr.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        let lower = line.to_lowercase();
        let denied = is_access_denial(&lower);
        if network_denied && is_network_failure(&lower, denied) {
            return Some(network_sentence());
        }
        if !denied {
            continue;
        }
        let mut paths = absolute_paths(line);
        if paths.is_empty() && !mentions_socket(&lower) {
            let start = index.saturating_sub(LOOK_BACK_LINES);
            paths = lines[start..index]
                .iter()
                .rev()
                .flat_map(|earlier| absolute_paths(earlier))
                .collect();
        }
        for path in paths {
            if let Some(sentence) = blame_path(policy, Path::new(&path), network_denied) {
                return Some(sentence);
            }
        }
    }
    None
}

/// The sentence for a permission error on `path`, if the policy explains it.
fn blame_path(policy: &SandboxPolicy, path: &Path, network_denied: bool) -> Option<String> {
    if path.starts_with("/dev/tcp") || path.starts_with("/dev/udp") {
        // Bash's pseudo-files for sockets: a connection, not a file.
        return network_denied.then(network_sentence);
    }
    if let Some(hidden) = find_enclosing(path, &policy.deny_read) {
        return Some(format!(
            "The sandbox blocked this: `{}` is hidden from sandboxed commands ({} is in the \
             sandbox's deny-read list). Do not try to work around it; ask the user to run the \
             command without the sandbox.",
            path.display(),
            hidden.display()
        ));
    }
    if unreadable_to_cairn(path) {
        // The user's own permissions forbid even reading it: that, not the sandbox, failed it.
        return None;
    }
    if find_enclosing(path, &policy.writable).is_none() {
        return Some(format!(
            "The sandbox probably blocked this: `{}` is outside the directories sandboxed \
             commands may write. Do not try to work around it; ask the user to run the command \
             without the sandbox, or to make that directory writable.",
            path.display()
        ));
    }
    None
}

/// Whether `path` is an existing file or directory that this (unsandboxed) process may not read.
fn unreadable_to_cairn(path: &Path) -> bool {
    let refused = |result: std::io::Result<()>| {
        result.is_err_and(|error| error.kind() == std::io::ErrorKind::PermissionDenied)
    };
    match std::fs::metadata(path) {
        // Only regular files and directories: opening a FIFO or a device could block or act.
        Ok(metadata) if metadata.is_file() => refused(std::fs::File::open(path).map(drop)),
        Ok(metadata) if metadata.is_dir() => refused(std::fs::read_dir(path).map(drop)),
        Ok(_) | Err(_) => false,
    }
}

fn network_sentence() -> String {
    "The sandbox probably blocked this: sandboxed commands have no network access. Do not try \
     to work around it; ask the user to run the command without the sandbox."
        .to_owned()
}

fn is_access_denial(lower: &str) -> bool {
    ["permission denied", "eacces", "errno 13", "os error 13"]
        .iter()
        .any(|needle| lower.contains(needle))
}

fn mentions_socket(lower: &str) -> bool {
    [
        "connect",
        "bind",
        "listen",
        "socket",
        "/dev/tcp/",
        "/dev/udp/",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

/// A refused connection or bind: `EACCES` next to a socket word, or curl's wording (which
/// hides the errno).
fn is_network_failure(lower: &str, denied: bool) -> bool {
    (denied && mentions_socket(lower))
        || lower.contains("couldn't connect to server")
        || lower.contains("failed to connect to")
}

/// The entry of `dirs` that `path` is or lies beneath, comparing both as written and resolved.
fn find_enclosing<'a>(path: &Path, dirs: &'a [PathBuf]) -> Option<&'a PathBuf> {
    let resolved = resolve_existing_prefix(path);
    dirs.iter().find(|dir| {
        path.starts_with(dir) || resolved.starts_with(resolve_existing_prefix(dir.as_path()))
    })
}

/// Quote pairs that tools put around paths: GNU's `‘…’` and `` `…' ``, `“…”`, `'…'`, `"…"`.
/// Asymmetric pairs come first, so that `'…'` does not pair a `` `…' `` quote's end.
const QUOTES: &[(char, char)] = &[
    ('‘', '’'),
    ('“', '”'),
    ('`', '\''),
    ('\'', '\''),
    ('"', '"'),
];

/// Characters that end an unquoted path in a message (`/x/y: Permission denied`).
const PATH_TERMINATORS: &[char] = &[':', ',', ')', ']', '>', '\'', '"', '’', '”'];

/// Absolute paths in `line`: quoted ones whole (they may hold spaces), then bare words.
fn absolute_paths(line: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    let mut unquoted = line.to_owned();
    for &(open, close) in QUOTES {
        let mut search_from = 0;
        while let Some(start) = unquoted[search_from..].find(open).map(|i| i + search_from) {
            let inner_start = start + open.len_utf8();
            let Some(end) = unquoted[inner_start..].find(close).map(|i| i + inner_start) else {
                break;
            };
            let inner = &unquoted[inner_start..end];
            if is_absolute_path(inner) {
                paths.push(inner.to_owned());
            }
            // Blank the quoted text out so that the bare-word pass does not cut it at spaces.
            let blank = " ".repeat(end + close.len_utf8() - start);
            unquoted.replace_range(start..end + close.len_utf8(), &blank);
            search_from = start + blank.len();
        }
    }
    for word in unquoted.split_whitespace() {
        let word = word.trim_start_matches(['(', '[', '{', '<', '=']);
        let word = word.split(PATH_TERMINATORS).next().unwrap_or_default();
        if is_absolute_path(word) {
            paths.push(word.to_owned());
        }
    }
    paths.dedup();
    paths
}

/// An absolute path, not `/` alone nor a URL's `//host` part.
fn is_absolute_path(text: &str) -> bool {
    text.len() > 1 && text.starts_with('/') && !text.starts_with("//")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_file_unreadable_to_cairn_itself_is_not_blamed_on_the_sandbox() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let locked = dir.path().join("locked");
        std::fs::write(&locked, "x").unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        let policy = SandboxPolicy {
            writable: vec![],
            deny_read: vec![],
            network: NetworkAccess::Allowed,
            protected_roots: vec![],
        };
        let stderr = format!("cat: {}: Permission denied\n", locked.display());
        // As root nothing is unreadable, and the sandbox is the only suspect left.
        let cairn_can_read = std::fs::File::open(&locked).is_ok();
        assert_eq!(
            explain_failure(&policy, Some(1), &stderr).is_some(),
            cairn_can_read
        );
    }

    #[test]
    fn paths_are_found_bare_and_quoted() {
        assert_eq!(
            absolute_paths("sh: 1: cannot create /out/file: Permission denied"),
            vec!["/out/file"]
        );
        assert_eq!(
            absolute_paths("touch: cannot touch '/my dir/f': Permission denied"),
            vec!["/my dir/f"]
        );
        assert_eq!(
            absolute_paths("mkdir: cannot create directory ‘/x/y’: Permission denied"),
            vec!["/x/y"]
        );
        assert_eq!(
            absolute_paths("PermissionError: [Errno 13] Permission denied: '/etc/hosts'"),
            vec!["/etc/hosts"]
        );
        assert_eq!(
            absolute_paths("fatal: unable to access 'https://example.com/r.git/': denied"),
            Vec::<String>::new()
        );
        assert_eq!(
            absolute_paths("npm ERR! Error: EACCES: permission denied, mkdir '/h/.npm/_cacache'"),
            vec!["/h/.npm/_cacache"]
        );
    }
}
