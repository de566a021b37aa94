//! What the `files_*` tests share: a temporary project directory and a registry holding the
//! file tools, driven through the public executor API as the engine drives it.

#![allow(
    dead_code,
    reason = "each test file uses a different part of the support"
)]
#![allow(
    clippy::unwrap_used,
    reason = "test setup: a step that fails should fail the test at once"
)]

use std::path::{Path, PathBuf};

use cairn_tools::{
    EditTool, MultiEditTool, NotebookEditTool, PreparedCall, ReadTool, ToolCall, ToolContext,
    ToolExecutor, ToolOutput, ToolRegistry, WriteTool,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub struct Project {
    pub dir: tempfile::TempDir,
    pub registry: ToolRegistry,
}

impl Project {
    pub fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let mut registry = ToolRegistry::new(ToolContext::new(dir.path().to_path_buf()));
        registry.register(ReadTool);
        registry.register(WriteTool);
        registry.register(EditTool);
        registry.register(MultiEditTool);
        registry.register(NotebookEditTool);
        Project { dir, registry }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The absolute path as a string, as the model writes it.
    pub fn arg(&self, name: &str) -> String {
        self.path(name).to_str().unwrap().to_string()
    }

    pub fn put(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    pub fn bytes(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.path(name)).unwrap()
    }

    pub fn text(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap()
    }

    pub fn prepare(&self, tool: &str, input: Value) -> PreparedCall {
        let call = ToolCall {
            id: "call-1".into(),
            name: tool.into(),
            input,
        };
        self.registry.prepare(&call).unwrap()
    }

    /// What the engine's check before the permission question says of the call: `Err` is
    /// the result it gets without running.
    pub async fn validate(&self, tool: &str, input: Value) -> Result<(), ToolOutput> {
        let prepared = self.prepare(tool, input);
        self.registry.validate(&prepared).await
    }

    /// Prepares and runs the call, without validating it first.
    pub async fn call(&self, tool: &str, input: Value) -> ToolOutput {
        let call = ToolCall {
            id: "call-1".into(),
            name: tool.into(),
            input,
        };
        match self.registry.prepare(&call) {
            Ok(prepared) => {
                self.registry
                    .execute(
                        &prepared,
                        &cairn_tools::CallContext::detached(CancellationToken::new()),
                    )
                    .await
            }
            Err(refused) => refused,
        }
    }

    /// Reads `name` with the Read tool, so the session may change it.
    pub async fn read(&self, name: &str) -> ToolOutput {
        let output = self
            .call("Read", serde_json::json!({"file_path": self.arg(name)}))
            .await;
        assert!(!output.is_error, "{output:?}");
        output
    }

    /// The names in the project directory, sorted (temporary files would show here).
    pub fn entries(&self) -> Vec<String> {
        entries(self.dir.path())
    }
}

pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
