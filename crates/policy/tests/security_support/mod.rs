//! A real temp world for the Bash security suites: a workspace, a home, and a directory
//! outside both holding a secret, with symlinks planted in the workspace pointing out; and
//! the real permission gate over it, in default mode with nobody to ask (`cairn -p`).

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "each suite uses a different part; a test should fail loudly"
)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use cairn_policy::rules::{RuleKind, RuleOrigin, RuleSet};
use cairn_policy::{Asking, CallInfo, PermissionGate, PermissionMode, Verdict};
use cairn_shell::{BashAnalysis, BashContext, analyze};
use serde_json::json;

pub struct World {
    _dir: tempfile::TempDir,
    pub base: PathBuf,
    pub home: PathBuf,
    pub workspace: PathBuf,
    /// Beside the workspace; holds `secret.txt`.
    pub outside: PathBuf,
}

impl World {
    /// `base/home`, `base/work/project` (with `src/`) and `base/outside/secret.txt`, all
    /// canonical.
    pub fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let home = base.join("home");
        let workspace = base.join("work/project");
        let outside = base.join("outside");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(workspace.join("src")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret.txt"), "s3cret").unwrap();
        World {
            _dir: dir,
            base,
            home,
            workspace,
            outside,
        }
    }

    /// A file in the workspace, with its directories.
    pub fn file(&self, relative: &str, contents: &str) {
        let path = self.workspace.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    }

    /// A symlink in the workspace at `relative`, pointing to `target`.
    pub fn link(&self, relative: &str, target: &Path) {
        let path = self.workspace.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        symlink(target, path).unwrap();
    }

    pub fn analyze(&self, command: &str) -> BashAnalysis {
        let roots = [self.workspace.clone()];
        analyze(
            command,
            &BashContext {
                cwd: &self.workspace,
                workspace_roots: &roots,
                home: &self.home,
            },
        )
    }

    /// The gate in default mode with these allow rules, as `cairn -p` runs it.
    pub fn gate(&self, allow: &[&str]) -> TestGate {
        let rules: Vec<(RuleKind, &str)> =
            allow.iter().map(|text| (RuleKind::Allow, *text)).collect();
        gate_over(
            &self.workspace,
            &self.home,
            PermissionMode::Default,
            &rules,
            Asking::NonInteractive,
        )
    }

    /// The gate's verdict on a Bash call running `command` in the workspace.
    pub fn check(&self, allow: &[&str], command: &str) -> Verdict {
        let input = json!({ "command": command });
        let paths = [self.workspace.clone()];
        let gate = self.gate(allow);
        gate.check(&CallInfo {
            tool: "Bash",
            input: &input,
            paths: &paths,
            read_only: false,
            destructive: true,
            asking: gate.asking,
        })
    }
}

/// A gate and whether someone can answer its questions, which in a session follows from the
/// engine's broker and reaches the gate with each call.
pub struct TestGate {
    pub gate: PermissionGate,
    pub asking: Asking,
}

impl std::ops::Deref for TestGate {
    type Target = PermissionGate;

    fn deref(&self) -> &PermissionGate {
        &self.gate
    }
}

/// The real gate over `workspace` (its one root and working directory) and `home`, with
/// `rules` from a test settings file in the workspace.
pub fn gate_over(
    workspace: &Path,
    home: &Path,
    mode: PermissionMode,
    rules: &[(RuleKind, &str)],
    asking: Asking,
) -> TestGate {
    let (rules, errors) = RuleSet::new(rules.iter().map(|(kind, text)| {
        (
            *kind,
            text.to_string(),
            RuleOrigin::new("test settings", workspace.to_path_buf()),
        )
    }));
    assert!(errors.is_empty(), "{errors:?}");
    let gate = PermissionGate::new(
        mode,
        rules,
        vec![workspace.to_path_buf()],
        workspace.to_path_buf(),
        home.to_path_buf(),
    );
    TestGate { gate, asking }
}

/// The verdict's kind, for table comparisons.
pub fn kind(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Allow { .. } => "allow",
        Verdict::Ask { .. } => "ask",
        Verdict::Deny { .. } => "deny",
    }
}
