//! The tool layer of cairn: what the model can do, behind one contract.
//!
//! The engine knows no business (DESIGN.md §1): it hands each `tool_use` the model writes to
//! a [`ToolExecutor`] and feeds the [`ToolOutput`] back. [`ToolRegistry`] is the executor that
//! holds the built-in tools by name; a tool is one type implementing [`Tool`].

mod read;
mod registry;

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use cairn_protocol::{ToolResultContent, ToolSpec};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use read::ReadTool;
pub use registry::ToolRegistry;

/// One tool call as the model wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Value,
}

/// What a tool call produced, for the model to read.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub content: ToolResultContent,
    pub is_error: bool,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: ToolResultContent::Text(text.into()),
            is_error: false,
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            content: ToolResultContent::Text(text.into()),
            is_error: true,
        }
    }
}

/// What every tool call may know about where it runs.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The session's working directory; relative paths resolve against it.
    pub cwd: PathBuf,
}

impl ToolContext {
    /// `path` made absolute against the working directory.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let path = Path::new(path);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        }
    }
}

/// Runs tool calls. The engine depends on this trait only, so tests can script it.
#[async_trait]
pub trait ToolExecutor: Send + Sync {
    /// The tools the model is offered, in a stable order.
    fn specs(&self) -> Vec<ToolSpec>;

    /// Runs one call. Never fails: every problem becomes an error output for the model.
    async fn execute(&self, call: &ToolCall, cancel: &CancellationToken) -> ToolOutput;
}

/// One built-in tool.
#[async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    /// The JSON Schema of the input object.
    fn input_schema(&self) -> Value;
    async fn run(&self, input: &Value, ctx: &ToolContext, cancel: &CancellationToken)
    -> ToolOutput;
}
