//! The executor that dispatches calls to built-in tools by name.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_protocol::ToolSpec;
use tokio_util::sync::CancellationToken;

use crate::{Tool, ToolCall, ToolContext, ToolExecutor, ToolOutput};

/// Built-in tools by name, in registration order.
#[derive(Clone)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    context: ToolContext,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .field("context", &self.context)
            .finish()
    }
}

impl ToolRegistry {
    pub fn new(context: ToolContext) -> Self {
        ToolRegistry {
            tools: Vec::new(),
            context,
        }
    }

    /// The registry with every built-in tool cairn ships.
    pub fn with_builtins(context: ToolContext) -> Self {
        let mut registry = ToolRegistry::new(context);
        registry.register(Arc::new(crate::ReadTool));
        registry
    }

    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.push(tool);
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|tool| tool.name()).collect()
    }

    fn find(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|tool| tool.name() == name)
    }
}

#[async_trait]
impl ToolExecutor for ToolRegistry {
    fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .map(|tool| ToolSpec {
                name: tool.name().to_string(),
                description: tool.description().to_string(),
                input_schema: tool.input_schema(),
            })
            .collect()
    }

    async fn execute(&self, call: &ToolCall, cancel: &CancellationToken) -> ToolOutput {
        match self.find(&call.name) {
            Some(tool) => tool.run(&call.input, &self.context, cancel).await,
            None => ToolOutput::error(format!(
                "No tool named \"{}\". Available tools: {}.",
                call.name,
                self.names().join(", ")
            )),
        }
    }
}
