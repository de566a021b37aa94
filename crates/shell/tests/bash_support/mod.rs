//! A throwaway home and workspace for the Bash analysis tests, so that no test depends on the
//! machine's HOME or current directory.

#![allow(
    dead_code,
    reason = "each test crate uses a different part of the sandbox"
)]

use std::fs;
use std::path::{Path, PathBuf};

use cairn_shell::{BashAnalysis, BashContext, analyze};
use tempfile::TempDir;

pub struct Sandbox {
    _dir: TempDir,
    pub base: PathBuf,
    pub home: PathBuf,
    pub workspace: PathBuf,
    pub roots: Vec<PathBuf>,
}

impl Sandbox {
    /// `base/home` and `base/work/project` (with `src/`), all canonical.
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().expect("create a temp dir");
        let base = fs::canonicalize(dir.path()).expect("canonicalize the temp dir");
        let home = base.join("home");
        let workspace = base.join("work/project");
        fs::create_dir_all(&home).expect("create home");
        fs::create_dir_all(workspace.join("src")).expect("create the workspace");
        Sandbox {
            _dir: dir,
            roots: vec![workspace.clone()],
            base,
            home,
            workspace,
        }
    }

    pub fn analyze(&self, command: &str) -> BashAnalysis {
        self.analyze_in(&self.workspace, command)
    }

    pub fn analyze_in(&self, cwd: &Path, command: &str) -> BashAnalysis {
        let ctx = BashContext {
            cwd,
            workspace_roots: &self.roots,
            home: &self.home,
        };
        analyze(command, &ctx)
    }
}
