//! Read access as an allow-list that leaves out the `deny_read` paths.
//!
//! Landlock can only grant: a right given on a directory holds for everything beneath it. So to
//! hide `/home/me/.ssh`, read is granted not on `/` but on each entry of `/` except `home`, each
//! entry of `/home` except `me`, and each entry of `/home/me` except `.ssh`. Listing directories
//! is granted everywhere, so hidden paths keep their names visible, not their contents.
//!
//! Limits, reported to the user rather than papered over:
//! - a hidden path inside a writable directory cannot be hidden (the write grant includes read);
//! - entries created in an expanded directory after the command starts are unreadable to it;
//! - symbolic links among those entries get no rule of their own (their target decides).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Where reading is granted, and what could not be hidden.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadPlan {
    /// Grant reading and executing beneath each of these.
    pub(crate) read_beneath: Vec<PathBuf>,
    /// Sentences for the user: hidden paths that stay readable, entries that became unreadable.
    pub(crate) notes: Vec<String>,
}

/// Plans read grants beneath `root` (`/` outside tests) that leave out `deny_read`.
///
/// All paths must be canonical (absolute, no symbolic links), as `std::fs::canonicalize` makes
/// them: the plan compares them component by component.
pub(crate) fn plan_reads(root: &Path, deny_read: &[PathBuf], writable: &[PathBuf]) -> ReadPlan {
    let mut notes = Vec::new();
    let mut hidden: BTreeSet<&Path> = BTreeSet::new();
    for path in deny_read {
        if path == root {
            notes.push(format!(
                "not hiding {}: without it no command could even start",
                path.display()
            ));
        } else if !path.starts_with(root) {
            notes.push(format!(
                "not hiding {}: it is outside {}",
                path.display(),
                root.display()
            ));
        } else if let Some(dir) = writable.iter().find(|dir| path.starts_with(dir)) {
            notes.push(format!(
                "not hiding {}: it is inside the writable directory {}, and Landlock cannot \
                 take back a right granted on a parent directory",
                path.display(),
                dir.display()
            ));
        } else {
            hidden.insert(path);
        }
    }
    // A path beneath another hidden one is hidden already; expanding it would expose the other.
    let hidden: BTreeSet<&Path> = hidden
        .iter()
        .copied()
        .filter(|path| {
            !hidden
                .iter()
                .any(|other| other != path && path.starts_with(other))
        })
        .collect();
    if hidden.is_empty() {
        return ReadPlan {
            read_beneath: vec![root.to_path_buf()],
            notes,
        };
    }

    let mut expanded: BTreeSet<&Path> = BTreeSet::new();
    for path in &hidden {
        for ancestor in path.ancestors().skip(1) {
            expanded.insert(ancestor);
            if ancestor == root {
                break;
            }
        }
    }
    let mut read_beneath = Vec::new();
    for dir in &expanded {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) => {
                notes.push(format!(
                    "cannot list {} ({error}), so its other entries are unreadable in the sandbox",
                    dir.display()
                ));
                continue;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let is_symlink = entry.file_type().map(|kind| kind.is_symlink());
            if hidden.contains(path.as_path())
                || expanded.contains(path.as_path())
                || is_symlink.unwrap_or(true)
            {
                continue;
            }
            read_beneath.push(path);
        }
    }
    read_beneath.sort();
    ReadPlan {
        read_beneath,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::fs;

    /// A fake root: `a/secret/key`, `a/public`, `a/link -> secret`, `b/inner`, `c`.
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(root.join("a/secret")).unwrap();
        fs::write(root.join("a/secret/key"), "k").unwrap();
        fs::write(root.join("a/public"), "p").unwrap();
        std::os::unix::fs::symlink("secret", root.join("a/link")).unwrap();
        fs::create_dir_all(root.join("b/inner")).unwrap();
        fs::write(root.join("c"), "c").unwrap();
        (dir, root)
    }

    #[test]
    fn nothing_hidden_grants_the_whole_root() {
        let (_dir, root) = tree();
        assert_eq!(
            plan_reads(&root, &[], &[]),
            ReadPlan {
                read_beneath: vec![root.clone()],
                notes: vec![],
            }
        );
    }

    #[test]
    fn a_hidden_path_leaves_out_itself_and_expands_its_ancestors() {
        let (_dir, root) = tree();
        let plan = plan_reads(&root, &[root.join("a/secret")], &[]);
        assert_eq!(
            plan,
            ReadPlan {
                read_beneath: vec![root.join("a/public"), root.join("b"), root.join("c")],
                notes: vec![],
            }
        );
    }

    #[test]
    fn nested_hidden_paths_do_not_expose_their_parent() {
        let (_dir, root) = tree();
        let plan = plan_reads(&root, &[root.join("a/secret/key"), root.join("a")], &[]);
        assert_eq!(plan.read_beneath, vec![root.join("b"), root.join("c")]);
    }

    #[test]
    fn paths_inside_writable_directories_are_reported_not_hidden() {
        let (_dir, root) = tree();
        let plan = plan_reads(&root, &[root.join("b/inner")], &[root.join("b")]);
        assert_eq!(
            plan,
            ReadPlan {
                read_beneath: vec![root.clone()],
                notes: vec![format!(
                    "not hiding {}: it is inside the writable directory {}, and Landlock cannot \
                     take back a right granted on a parent directory",
                    root.join("b/inner").display(),
                    root.join("b").display()
                )],
            }
        );
    }

    #[test]
    fn the_root_itself_is_never_hidden() {
        let (_dir, root) = tree();
        let plan = plan_reads(&root, std::slice::from_ref(&root), &[]);
        assert_eq!(plan.read_beneath, vec![root.clone()]);
        assert_eq!(plan.notes.len(), 1);
    }
}
