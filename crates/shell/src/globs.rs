//! Globs in a command's words (`cat k?y.txt`, `head src/ssh*/*`), expanded against the
//! filesystem the way Bash will expand them, so that each file they name is judged where it
//! really leads: a match that is a symlink out of the workspace is a path outside it.
//!
//! The expansion is bounded: past [`MAX_ENTRIES`] directory entries looked at, or
//! [`MAX_MATCHES`] matches, the glob is not expanded and its part of the command is
//! unanalysable (asked about even when a rule allows the command).

use std::fs;
use std::path::PathBuf;

use globset::{GlobBuilder, GlobMatcher};

use super::classify::{Analyzer, Site};
use super::word::Word;

/// Directory entries one glob may look at.
pub(crate) const MAX_ENTRIES: usize = 20_000;

/// Matches one glob may have and still be judged file by file.
const MAX_MATCHES: usize = 2_000;

/// What a glob pattern names on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expansion {
    /// The paths it matches, sorted, as Bash would list them (not resolved).
    Matches(Vec<PathBuf>),
    /// Nothing matches: Bash passes the word on as written.
    NoMatch,
    /// Too many entries or matches to look at.
    TooLarge,
}

/// The words a glob in `word` expands to (each quoted, so that it is not expanded again), or
/// `None` when the word is no glob or matches nothing and so stands for itself. A glob too
/// large to expand makes the command unanalysable and expands to nothing.
pub(crate) fn matches(an: &mut Analyzer, word: &Word, site: Site<'_>) -> Option<Vec<Word>> {
    let pattern = an.places.glob_pattern(word, site.cwd)?;
    match expand(&pattern) {
        Expansion::Matches(paths) => Some(
            paths
                .iter()
                .map(|path| quoted_path(&path.to_string_lossy()))
                .collect(),
        ),
        Expansion::NoMatch => None,
        Expansion::TooLarge => {
            an.unanalysable(format!(
                "the glob {} matches too many files to check where each leads (more than \
                 {MAX_ENTRIES} entries or {MAX_MATCHES} matches)",
                word.display()
            ));
            Some(Vec::new())
        }
    }
}

/// A word naming `path` exactly, exempt from globbing.
pub(crate) fn quoted_path(path: &str) -> Word {
    let mut word = Word::default();
    word.push_text(path, true);
    word
}

/// `text` with the glob characters (and backslashes) escaped by a backslash.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Expands an absolute glob pattern (quoted characters escaped with `\`) against the
/// filesystem. As in Bash without `dotglob`, a name starting with `.` is matched only by a
/// pattern that starts with a literal `.`; every component but the last must be a directory
/// (symlinks to directories count).
pub(crate) fn expand(pattern: &str) -> Expansion {
    let components: Vec<&str> = pattern.split('/').filter(|part| !part.is_empty()).collect();
    let last = components.len().saturating_sub(1);
    let mut current = vec![PathBuf::from("/")];
    let mut globbed = false;
    let mut budget = MAX_ENTRIES;
    for (index, component) in components.iter().enumerate() {
        let Some(glob) = component_glob(component) else {
            let name = unescape(component);
            current = current
                .into_iter()
                .map(|dir| dir.join(&name))
                .filter(|path| !globbed || fs::symlink_metadata(path).is_ok())
                .collect();
            if current.is_empty() {
                return Expansion::NoMatch;
            }
            continue;
        };
        globbed = true;
        let hidden_too = component.starts_with('.');
        let mut next = Vec::new();
        for dir in &current {
            let Ok(entries) = fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                if budget == 0 {
                    return Expansion::TooLarge;
                }
                budget -= 1;
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if (name.starts_with('.') && !hidden_too) || !glob.is_match(name.as_ref()) {
                    continue;
                }
                let path = entry.path();
                if index < last && !path.is_dir() {
                    continue;
                }
                next.push(path);
                if next.len() > MAX_MATCHES {
                    return Expansion::TooLarge;
                }
            }
        }
        if next.is_empty() {
            return Expansion::NoMatch;
        }
        current = next;
    }
    if !globbed {
        return Expansion::NoMatch;
    }
    current.sort();
    Expansion::Matches(current)
}

/// The matcher for one path component, when it has an unescaped glob character and is a
/// valid pattern (`a[b` is not, and Bash takes it literally).
fn component_glob(component: &str) -> Option<GlobMatcher> {
    let mut escaped = false;
    let mut has_meta = false;
    for c in component.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if matches!(c, '*' | '?' | '[') {
            has_meta = true;
        }
    }
    if !has_meta {
        return None;
    }
    // Bash's `[^a]` is globset's `[!a]`.
    let component = component.replace("[^", "[!");
    GlobBuilder::new(&component)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|glob| glob.compile_matcher())
}

fn unescape(component: &str) -> String {
    let mut out = String::with_capacity(component.len());
    let mut escaped = false;
    for c in component.chars() {
        if c == '\\' && !escaped {
            escaped = true;
            continue;
        }
        escaped = false;
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_bash() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        for name in ["key.txt", "kay.txt", ".hidden", "k*y.txt"] {
            fs::write(base.join(name), "x").unwrap();
        }
        fs::create_dir(base.join("sub")).unwrap();
        fs::write(base.join("sub/inner"), "x").unwrap();
        let root = escape(&base.to_string_lossy());
        let names = |pattern: &str| match expand(&format!("{root}/{pattern}")) {
            Expansion::Matches(paths) => paths
                .iter()
                .map(|path| {
                    path.strip_prefix(&base)
                        .map(|rest| rest.display().to_string())
                        .unwrap_or_default()
                })
                .collect(),
            other => vec![format!("{other:?}")],
        };
        assert_eq!(names("k?y.txt"), ["k*y.txt", "kay.txt", "key.txt"]);
        assert_eq!(names("k\\*y.txt"), ["NoMatch"]);
        assert_eq!(names("*"), ["k*y.txt", "kay.txt", "key.txt", "sub"]);
        assert_eq!(names(".h*"), [".hidden"]);
        assert_eq!(names("*/inner"), ["sub/inner"]);
        assert_eq!(names("*/missing"), ["NoMatch"]);
        assert_eq!(names("k[a]y.txt"), ["kay.txt"]);
        assert_eq!(names("k[^a]y.txt"), ["k*y.txt", "key.txt"]);
        assert_eq!(names("a[b"), ["NoMatch"]);
    }
}
