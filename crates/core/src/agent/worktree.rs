//! `isolation: worktree`: a sub-agent that works in a git worktree of its own, on a new
//! branch from the project's `HEAD`, under cairn's home (`~/.cairn/worktrees/<project>/<id>`)
//! rather than anywhere in the project (its `.claude/` is protected). When the agent is done,
//! a worktree it changed nothing in is removed with its branch; otherwise the branch stays
//! and the result names it.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// A worktree made for one sub-agent.
#[derive(Debug)]
pub(crate) struct Worktree {
    repo: PathBuf,
    pub(crate) path: PathBuf,
    pub(crate) branch: String,
    base: String,
}

/// Runs `git` with `args` in `dir`; its trimmed stdout, or its stderr as the error.
async fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let output = tokio::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|err| format!("cannot run git: {err}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
    }
}

impl Worktree {
    /// A new worktree of the repository holding `project`, under `root`, for agent `id`.
    pub(crate) async fn create(project: &Path, root: &Path, id: &str) -> Result<Worktree, String> {
        let repo = git(project, &["rev-parse", "--show-toplevel"])
            .await
            .map(PathBuf::from)
            .map_err(|err| {
                format!(
                    "isolation: worktree needs a git repository, and {} is not in one ({err}).",
                    project.display()
                )
            })?;
        let base = git(&repo, &["rev-parse", "--verify", "HEAD"])
            .await
            .map_err(|err| {
                format!(
                    "isolation: worktree needs a commit to start from, and {} has none yet \
                     ({err}).",
                    repo.display()
                )
            })?;
        let project_name = repo.file_name().map_or_else(
            || "project".into(),
            |name| name.to_string_lossy().into_owned(),
        );
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        let unique = format!("{id}-{}-{stamp:x}", std::process::id());
        let path = root.join(&project_name).join(&unique);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|err| {
                format!(
                    "isolation: worktree: cannot create {}: {err}",
                    parent.display()
                )
            })?;
        }
        let branch = format!("cairn/{unique}");
        let shown = path.display().to_string();
        git(
            &repo,
            &["worktree", "add", "--quiet", "-b", &branch, &shown, &base],
        )
        .await
        .map_err(|err| format!("isolation: worktree: git worktree add failed: {err}"))?;
        Ok(Worktree {
            repo,
            path,
            branch,
            base,
        })
    }

    /// What the agent's result says of its worktree once it is done: removed, with its
    /// branch, when nothing changed (no commit, nothing modified or new); kept otherwise.
    pub(crate) async fn finish(self) -> String {
        let status = git(&self.path, &["status", "--porcelain"]).await;
        let head = git(&self.path, &["rev-parse", "HEAD"]).await;
        let unchanged = matches!((&status, &head), (Ok(status), Ok(head)) if status.is_empty() && *head == self.base);
        if unchanged {
            let shown = self.path.display().to_string();
            let removed = git(&self.repo, &["worktree", "remove", "--force", &shown]).await;
            let deleted = git(&self.repo, &["branch", "-D", &self.branch]).await;
            return match removed.and(deleted) {
                Ok(_) => "(It changed nothing in its git worktree, which was removed.)".into(),
                Err(err) => format!(
                    "(It changed nothing in its git worktree {shown}, but removing it failed: \
                     {err})"
                ),
            };
        }
        format!(
            "Its changes are in the git worktree {} on branch {} (from {}).",
            self.path.display(),
            self.branch,
            &self.base[..self.base.len().min(12)]
        )
    }
}
