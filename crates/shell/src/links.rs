//! Commands that walk a directory tree and follow the symbolic links they meet (`grep -R`,
//! `rg -L`, `find -L`, `cp -rL`, `chown -RL`, `tar -h`, `du -L`, `ls -RL`): the tree is walked
//! at analysis time, boundedly, and every link in it that leads out of the workspace is a
//! read (or a write) of where it leads.
//!
//! Past [`MAX_ENTRIES`] entries the walk stops and the command is unanalysable: it may reach
//! outside through a link not yet seen.

use std::collections::{HashSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};

use super::classify::{Analyzer, Site};
use super::globs::{self, quoted_path};
use super::paths::{Places, Resolved};
use super::word::Word;

/// Directory entries one walk may look at.
pub(crate) const MAX_ENTRIES: usize = 20_000;

/// What following a command's links does to where they lead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Reads,
    Writes,
}

/// What a walk from one directory found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reach {
    /// The links leading out of the workspace, each with where it leads.
    Links(Vec<(PathBuf, PathBuf)>),
    /// More entries than [`MAX_ENTRIES`].
    TooLarge,
}

/// `shown` (the command as named in reasons) walks the trees at `starts`, following links:
/// each link out of the workspace is judged as an access of its target.
pub(crate) fn follow(
    an: &mut Analyzer,
    shown: &str,
    starts: &[Word],
    site: Site<'_>,
    access: Access,
) {
    for start in starts {
        let paths = match globs::matches(an, start, site) {
            Some(words) => words
                .iter()
                .filter_map(|word| resolved(an, word, site))
                .collect(),
            None => resolved(an, start, site).into_iter().collect::<Vec<_>>(),
        };
        for path in paths {
            match links_leaving(&path, &an.places) {
                Reach::Links(links) => {
                    for (link, target) in links {
                        an.needs_approval(format!(
                            "`{shown}` follows the link {} to {}",
                            link.display(),
                            target.display()
                        ));
                        let target = quoted_path(&target.to_string_lossy());
                        match access {
                            Access::Reads => an.read_path(&target, site),
                            Access::Writes => an.write_path(&target, site),
                        }
                    }
                }
                Reach::TooLarge => an.unanalysable(format!(
                    "`{shown}` follows symbolic links under {}, which holds more than \
                     {MAX_ENTRIES} entries to check: it may reach outside the workspace",
                    path.display()
                )),
            }
        }
    }
}

fn resolved(an: &Analyzer, word: &Word, site: Site<'_>) -> Option<PathBuf> {
    match an.places.resolve(word, site.cwd) {
        Resolved::Path(path) => Some(path),
        // An unknown start is judged by the command's own read of it.
        Resolved::Stream | Resolved::Unknown(_) => None,
    }
}

/// Walks the tree under `start` (a resolved path) as a command following links would, and
/// lists the links whose targets are outside the workspace. Links to directories inside it
/// are walked too (once each), since the command goes through them.
pub(crate) fn links_leaving(start: &Path, places: &Places) -> Reach {
    let mut found = Vec::new();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut queue = VecDeque::new();
    if start.is_dir() {
        seen.insert(start.to_path_buf());
        queue.push_back(start.to_path_buf());
    }
    let mut budget = MAX_ENTRIES;
    while let Some(dir) = queue.pop_front() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut listed = Vec::new();
        for entry in entries.flatten() {
            if budget == 0 {
                return Reach::TooLarge;
            }
            budget -= 1;
            listed.push(entry);
        }
        // In name order, so that reasons come out the same on every filesystem.
        listed.sort_by_key(fs::DirEntry::file_name);
        for entry in listed {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                if seen.insert(path.clone()) {
                    queue.push_back(path);
                }
                continue;
            }
            if !kind.is_symlink() {
                continue;
            }
            // `link -> /proc/self/cwd` leads where the command is when it runs, which
            // canonicalising here would take for cairn's own directory: judged as itself.
            if super::paths::process_link_on(&path).is_some() {
                found.push((path.clone(), path));
                continue;
            }
            // A dangling link leads nowhere a reader can get to.
            let Ok(target) = fs::canonicalize(&path) else {
                continue;
            };
            if !places.is_inside_workspace(&target) {
                found.push((path, target));
            } else if target.is_dir() && seen.insert(target.clone()) {
                queue.push_back(target);
            }
        }
    }
    Reach::Links(found)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn links_out_are_found_through_links_in() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let workspace = base.join("work");
        let outside = base.join("outside");
        fs::create_dir_all(workspace.join("a/b")).unwrap();
        fs::create_dir_all(workspace.join("c")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        symlink(&outside, workspace.join("c/out")).unwrap();
        symlink(workspace.join("c"), workspace.join("a/b/to-c")).unwrap();
        symlink(workspace.join("a"), workspace.join("a/b/loop")).unwrap();
        let places = Places::new(&base.join("home"), std::slice::from_ref(&workspace));
        assert_eq!(
            links_leaving(&workspace.join("a"), &places),
            Reach::Links(vec![(workspace.join("c/out"), outside.clone())])
        );
        assert_eq!(
            links_leaving(&workspace.join("a/b"), &places),
            Reach::Links(vec![(workspace.join("c/out"), outside)])
        );
    }
}
