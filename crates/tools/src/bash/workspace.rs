//! [`WorkspaceRoots`]: the directories a shell may stay in between commands.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The directories of the workspace: the project directory and every added directory
/// (`permissions.additionalDirectories`, `--add-dir`, `/add-dir`). A `cd` out of all of them
/// does not carry over to the next command: the shell goes back to the project directory,
/// as in Claude Code.
///
/// The roots are read each time they are needed, because `/add-dir` adds one while the
/// session runs. The project directory always counts, whether listed or not.
///
/// ```
/// use cairn_tools::WorkspaceRoots;
/// use std::path::{Path, PathBuf};
///
/// let roots = WorkspaceRoots::fixed(vec![PathBuf::from("/srv/shared")]);
/// let project = Path::new("/work/app");
/// assert_eq!(
///     roots.root_holding(project, Path::new("/srv/shared/docs")),
///     Some(PathBuf::from("/srv/shared/docs"))
/// );
/// assert_eq!(roots.root_holding(project, Path::new("/etc")), None);
/// ```
#[derive(Clone, Default)]
pub struct WorkspaceRoots {
    /// `None`: the project directory alone.
    current: Option<Arc<dyn Fn() -> Vec<PathBuf> + Send + Sync>>,
}

impl fmt::Debug for WorkspaceRoots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.current {
            Some(current) => f.debug_tuple("WorkspaceRoots").field(&current()).finish(),
            None => f.write_str("WorkspaceRoots(project directory only)"),
        }
    }
}

impl WorkspaceRoots {
    /// Roots that do not change during the session.
    pub fn fixed(roots: Vec<PathBuf>) -> Self {
        WorkspaceRoots::live(move || roots.clone())
    }

    /// Roots read from `current` each time, for a list that grows while the session runs
    /// (the permission gate's, which `/add-dir` extends).
    pub fn live(current: impl Fn() -> Vec<PathBuf> + Send + Sync + 'static) -> Self {
        WorkspaceRoots {
            current: Some(Arc::new(current)),
        }
    }

    /// Every root as it stands now, the project directory first.
    pub fn all(&self, project_dir: &Path) -> Vec<PathBuf> {
        let mut roots = vec![project_dir.to_path_buf()];
        for root in self
            .current
            .as_ref()
            .map(|current| current())
            .unwrap_or_default()
        {
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
        roots
    }

    /// `dir` (a real path, symbolic links resolved) spelled from the workspace root that holds
    /// it, or `None` when no root does. A root reached through a symbolic link keeps its own
    /// spelling, so the directory reads as inside it wherever it was reached from.
    pub fn root_holding(&self, project_dir: &Path, dir: &Path) -> Option<PathBuf> {
        let listed = self.current.as_ref().map(|current| current());
        std::iter::once(project_dir)
            .chain(listed.iter().flatten().map(PathBuf::as_path))
            .find_map(|root| {
                let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
                let inside = dir.strip_prefix(&real_root).ok()?;
                Some(if inside.as_os_str().is_empty() {
                    root.to_path_buf()
                } else {
                    root.join(inside)
                })
            })
    }
}
