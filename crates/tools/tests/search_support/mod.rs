//! What the search tools' integration tests share: a temp tree, a way to call a tool the way
//! the engine does, and the real `rg` to compare with.
// Not every test file uses every helper; panicking on a broken fixture is the point.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use cairn_tools::{ToolCall, ToolContext, ToolExecutor, ToolOutput, ToolRegistry};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A temp directory to build a file tree in.
pub struct Tree {
    dir: tempfile::TempDir,
    /// Every file written gets a distinct modification time, a minute apart, in write order,
    /// so "newest first" is known without sleeping.
    next_mtime: SystemTime,
}

impl Tree {
    pub fn new() -> Tree {
        Tree {
            dir: tempfile::tempdir().unwrap(),
            next_mtime: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn root_str(&self) -> &str {
        self.root().to_str().unwrap()
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    /// Writes `relative` (creating its directories) with the next modification time.
    pub fn write(&mut self, relative: &str, contents: impl AsRef<[u8]>) -> &mut Tree {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        self.next_mtime += Duration::from_secs(60);
        set_mtime(&path, self.next_mtime);
        self
    }

    pub fn mkdir(&mut self, relative: &str) -> &mut Tree {
        std::fs::create_dir_all(self.path(relative)).unwrap();
        self
    }
}

pub fn set_mtime(path: &Path, time: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

/// Calls tool `name` through the registry, as the engine would: prepare, then execute.
pub async fn call(cwd: &Path, name: &str, input: Value) -> ToolOutput {
    let registry = ToolRegistry::with_builtins(ToolContext::new(cwd.to_path_buf()));
    let call = ToolCall {
        id: "toolu_1".into(),
        name: name.into(),
        input,
    };
    let prepared = match registry.prepare(&call) {
        Ok(prepared) => prepared,
        Err(output) => return output,
    };
    registry.execute(&prepared, &CancellationToken::new()).await
}

/// The text of a successful call; panics with the output otherwise.
pub async fn call_ok(cwd: &Path, name: &str, input: Value) -> String {
    let output = call(cwd, name, input).await;
    assert!(!output.is_error, "{name} failed: {output:?}");
    output.content.text().to_string()
}

/// What `rg ARGS` prints, run from `dir`, without its trailing newline. Panics if rg is not
/// installed, saying so: these tests are about matching it.
pub fn rg(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("rg")
        .arg("--no-config")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|err| {
            panic!(
                "cannot run `rg` ({err}). These tests compare Grep with ripgrep's own output: \
                 install ripgrep (`apt-get install ripgrep`, `brew install ripgrep`); CI does."
            )
        });
    // 0: matches, 1: none; 2 is an error.
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "rg {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    text.strip_suffix('\n').unwrap_or(&text).to_string()
}

/// The lines of `text`, sorted: for comparing outputs whose order is documented to differ.
pub fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines
}
