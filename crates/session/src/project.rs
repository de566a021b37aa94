//! Which directory holds a project's sessions: one per real working directory, exactly.
//!
//! A project's directory is named by its key: a readable slug of the working directory's real
//! path and a short hash of that path. The slug alone cannot tell `/x/ws-a` from `/x/ws_a`,
//! and earlier cairns named directories by it alone, so `cairn -c` in one continued the
//! other's session. Those older directories are still read, never written: a session there
//! belongs to a project only when its header's `cwd` is that project's directory (every
//! header records it), so a directory shared by two paths is never mixed up. Its files stay
//! where they are, so the paths of results spilled beside them stay true.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::decode::decode_header;

/// Slugs longer than this are cut (the hash keeps them distinct), to stay under file-name
/// limits.
const MAX_SLUG_LEN: usize = 200;

/// Hex digits of the path's hash in a key: 48 bits.
const HASH_DIGITS: usize = 12;

/// The longest header read to tell whose a session is (a real one is < 1 KB).
const MAX_HEADER_BYTES: u64 = 64 * 1024;

/// The directory name of the project in `cwd`: a slug of its real path (every character that
/// is not an ASCII letter or digit becomes `-`) and a hash of that path (FNV-1a, stable across
/// Rust versions), so that two directories never share one.
///
/// ```
/// use std::path::Path;
/// use cairn_session::project_key;
///
/// assert_eq!(project_key(Path::new("/no/such/ws-a")), "-no-such-ws-a-fe5e07bd70b4");
/// assert_ne!(project_key(Path::new("/no/such/ws-a")), project_key(Path::new("/no/such/ws_a")));
/// ```
pub fn project_key(cwd: &Path) -> String {
    let real = real_path(cwd);
    let text = real.to_string_lossy();
    let mut slug = slug(&text);
    // The slug is ASCII, so any byte index is a character boundary.
    slug.truncate(MAX_SLUG_LEN);
    let hash = format!("{:016x}", fnv1a(text.as_bytes()));
    format!("{slug}-{}", &hash[..HASH_DIGITS])
}

/// The names older cairns gave the project's directory (the slug of the path as given, and of
/// its real path when that differs).
pub(crate) fn legacy_names(cwd: &Path) -> Vec<String> {
    let mut names = vec![legacy_slug(&cwd.to_string_lossy())];
    let real = legacy_slug(&real_path(cwd).to_string_lossy());
    if !names.contains(&real) {
        names.push(real);
    }
    names
}

/// Whether the session file at `path`, found in a directory an older cairn named, was
/// started in `cwd`. A file whose header cannot be read belongs to no one.
pub(crate) fn belongs_to(path: &Path, cwd: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let mut first_line = Vec::new();
    if BufReader::new(file.take(MAX_HEADER_BYTES))
        .read_until(b'\n', &mut first_line)
        .is_err()
    {
        return false;
    }
    let Ok(header) = decode_header(path, &first_line) else {
        return false;
    };
    let recorded = Path::new(&header.cwd);
    recorded == cwd || real_path(recorded) == real_path(cwd)
}

/// `path` with symbolic links and `..` resolved, or as given when it cannot be (it is gone).
fn real_path(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn slug(path: &str) -> String {
    path.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The directory name cairn used before keys had a hash: the slug, and a hash only when the
/// slug was too long.
fn legacy_slug(path: &str) -> String {
    let slug = slug(path);
    if slug.len() <= MAX_SLUG_LEN {
        return slug;
    }
    format!("{}-{:016x}", &slug[..MAX_SLUG_LEN], fnv1a(path.as_bytes()))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn keys_differ_where_slugs_agree() {
        let dashed = project_key(Path::new("/x/ws-a"));
        let underscored = project_key(Path::new("/x/ws_a"));
        assert!(dashed.starts_with("-x-ws-a-"), "{dashed}");
        assert!(underscored.starts_with("-x-ws-a-"), "{underscored}");
        assert_ne!(dashed, underscored);
        assert_eq!(dashed.len(), "-x-ws-a-".len() + HASH_DIGITS);
    }

    #[test]
    fn keys_are_of_the_real_path() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        #[cfg(unix)]
        assert_eq!(project_key(&dir.path().join("link")), project_key(&real));
        assert_eq!(
            project_key(&real.join("..").join("real")),
            project_key(&real)
        );
    }

    #[test]
    fn long_paths_are_cut_and_stay_distinct() {
        let deep = format!("/no-such/{}", "a".repeat(300));
        let key = project_key(Path::new(&deep));
        assert_eq!(key.len(), MAX_SLUG_LEN + 1 + HASH_DIGITS);
        assert_ne!(key, project_key(Path::new(&format!("{deep}b"))));
    }

    #[test]
    fn legacy_names_are_the_old_slugs() {
        assert_eq!(
            legacy_names(Path::new("/no-such/my app")),
            vec!["-no-such-my-app".to_string()]
        );
        assert_eq!(legacy_slug("/home/zoë/src_1.x"), "-home-zo--src-1-x");
        let deep = format!("/{}", "a".repeat(300));
        assert_eq!(legacy_slug(&deep).len(), MAX_SLUG_LEN + 17);
    }
}
