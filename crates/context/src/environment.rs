//! The environment and git sections of the dynamic half.

use std::path::Path;
use std::process::Stdio;

use crate::git::{DIFF_WITHOUT_PROGRAMS, Git, STATUS_WITHOUT_SUBMODULES};

/// Cap on `git status --short` in the prompt.
const STATUS_CAP_CHARS: usize = 2_000;
/// Cap on the uncommitted diff in the prompt.
const DIFF_CAP_CHARS: usize = 4_000;
const RECENT_COMMITS: &str = "5";

/// What the environment section states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// The working directory, as displayed.
    pub cwd: String,
    /// Whether the working directory is inside a git work tree.
    pub is_git_repo: bool,
    /// Rust's name for the operating system (`linux`, `macos`).
    pub platform: &'static str,
    /// The operating system and, on Linux, the kernel release (`linux 6.8.0`).
    pub os_version: String,
    /// Today's date in UTC, `YYYY-MM-DD`.
    pub date: String,
    /// The session's model.
    pub model: String,
}

impl Environment {
    /// The environment of `cwd` now.
    pub fn detect(cwd: &Path, model: &str, is_git_repo: bool) -> Self {
        Environment {
            cwd: cwd.display().to_string(),
            is_git_repo,
            platform: std::env::consts::OS,
            os_version: os_version(),
            date: crate::date::today_utc(),
            model: model.to_string(),
        }
    }

    /// The section's text, as the prompt carries it.
    pub fn render(&self) -> String {
        format!(
            "# Environment\nWorking directory: {}\nIs a git repository: {}\nPlatform: {}\n\
             OS version: {}\nToday's date (UTC): {}\nModel: {}",
            self.cwd,
            if self.is_git_repo { "yes" } else { "no" },
            self.platform,
            self.os_version,
            self.date,
            self.model
        )
    }
}

fn os_version() -> String {
    // Linux exposes the kernel release without running `uname`.
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|release| format!("{} {}", std::env::consts::OS, release.trim()))
        .unwrap_or_else(|_| std::env::consts::OS.to_string())
}

/// The git state of a working directory, read once at the start of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitContext {
    /// The current branch, or `(detached HEAD)`.
    pub branch: String,
    /// The branch pull requests usually target (`main`, `master`); empty when none is found.
    pub main_branch: String,
    /// `git status --short`, capped; empty for a clean tree.
    pub status: String,
    /// The last few commits, one line each.
    pub recent_commits: String,
    /// The uncommitted changes against `HEAD`, capped.
    pub diff: String,
}

impl GitContext {
    /// Reads the git context of `cwd`; `None` outside a git work tree or without git.
    /// The git commands run at the same time, none of them running a program the repository's
    /// configuration names (see [`crate::git`]).
    pub fn read(cwd: &Path) -> Option<GitContext> {
        let git = &Git::at(cwd);
        let inside = run(git, &["rev-parse", "--is-inside-work-tree"])?;
        if inside.trim() != "true" {
            return None;
        }
        let (branch, main_branch, status, recent_commits, diff) = std::thread::scope(|scope| {
            let branch = scope.spawn(|| run(git, &["branch", "--show-current"]));
            let main = scope.spawn(|| main_branch(git));
            let status =
                scope.spawn(|| run(git, &["status", "--short", STATUS_WITHOUT_SUBMODULES]));
            let log = scope.spawn(|| run(git, &["log", "--oneline", "-n", RECENT_COMMITS]));
            let diff = scope.spawn(|| {
                let [no_external, no_textconv] = DIFF_WITHOUT_PROGRAMS;
                let args = [
                    "diff",
                    "HEAD",
                    STATUS_WITHOUT_SUBMODULES,
                    no_external,
                    no_textconv,
                ];
                run(git, &args)
            });
            (
                branch.join().ok().flatten(),
                main.join().ok().flatten(),
                status.join().ok().flatten(),
                log.join().ok().flatten(),
                diff.join().ok().flatten(),
            )
        });
        Some(GitContext {
            branch: branch
                .map(|b| b.trim().to_string())
                .filter(|b| !b.is_empty())
                .unwrap_or_else(|| "(detached HEAD)".into()),
            main_branch: main_branch.unwrap_or_default(),
            status: cap(status.unwrap_or_default().trim_end(), STATUS_CAP_CHARS),
            recent_commits: recent_commits.unwrap_or_default().trim_end().to_string(),
            diff: cap(diff.unwrap_or_default().trim_end(), DIFF_CAP_CHARS),
        })
    }

    /// The section's text, as the prompt carries it.
    pub fn render(&self) -> String {
        let mut text = format!("# Git\nCurrent branch: {}\n", self.branch);
        if !self.main_branch.is_empty() {
            text.push_str(&format!(
                "Main branch (usually the base for pull requests): {}\n",
                self.main_branch
            ));
        }
        text.push_str("This is the state at the start of the conversation; it is not updated.\n");
        let status = if self.status.is_empty() {
            "(clean)"
        } else {
            &self.status
        };
        text.push_str(&format!("\nStatus:\n{status}\n"));
        if !self.recent_commits.is_empty() {
            text.push_str(&format!("\nRecent commits:\n{}\n", self.recent_commits));
        }
        if !self.diff.is_empty() {
            text.push_str(&format!(
                "\nUncommitted changes (git diff HEAD):\n```diff\n{}\n```\n",
                self.diff
            ));
        }
        text.trim_end().to_string()
    }
}

/// `origin/HEAD`'s branch, else `main` or `master` when such a branch exists.
fn main_branch(git: &Git) -> Option<String> {
    if let Some(head) = run(git, &["rev-parse", "--abbrev-ref", "origin/HEAD"]) {
        let head = head.trim();
        if let Some(branch) = head.strip_prefix("origin/") {
            return Some(branch.to_string());
        }
    }
    ["main", "master"].into_iter().find_map(|name| {
        run(
            git,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{name}"),
            ],
        )
        .map(|_| name.to_string())
    })
}

/// Runs one git command; its stdout when it succeeds.
fn run(git: &Git, args: &[&str]) -> Option<String> {
    let output = git
        .command()
        .args(args)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `text` cut to `limit` characters (at a line end where possible), saying how much was left out.
fn cap(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let cut: String = text.chars().take(limit).collect();
    let cut = match cut.rfind('\n') {
        Some(end) if end > limit / 2 => cut[..end].to_string(),
        _ => cut,
    };
    let left_out = text.chars().count() - cut.chars().count();
    format!("{cut}\n… ({left_out} more characters not shown)")
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use pretty_assertions::assert_eq;

    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn reads_branch_status_log_and_diff_of_a_real_repository() {
        let dir = tempfile::tempdir().unwrap();
        run(dir.path(), &["init", "-q", "-b", "main"]);
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        run(dir.path(), &["add", "a.txt"]);
        run(dir.path(), &["commit", "-q", "-m", "first commit"]);
        std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
        std::fs::write(dir.path().join("new.txt"), "x").unwrap();

        let git = GitContext::read(dir.path()).unwrap();
        assert_eq!(git.branch, "main");
        assert_eq!(git.main_branch, "main");
        assert_eq!(git.status, " M a.txt\n?? new.txt");
        assert!(
            git.recent_commits.ends_with("first commit"),
            "{}",
            git.recent_commits
        );
        assert!(git.diff.contains("-one\n+two"), "{}", git.diff);
        let text = git.render();
        assert!(text.starts_with("# Git\nCurrent branch: main\n"), "{text}");
    }

    #[test]
    fn outside_a_repository_there_is_no_git_context() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(GitContext::read(dir.path()), None);
    }

    #[test]
    fn caps_say_how_much_was_left_out() {
        let text = "line\n".repeat(1_000);
        let capped = cap(text.trim_end(), 100);
        assert!(capped.len() < 160, "{capped}");
        assert!(capped.ends_with("more characters not shown)"), "{capped}");
    }
}
