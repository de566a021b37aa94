//! A tool written outside the crate: the shape the compile-fail doc test of `Tool` uses,
//! complete. It compiles, so that doc test fails for the missing `safety` alone.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::PathBuf;

use cairn_tools::{Safety, Tool, ToolCall, ToolContext, ToolExecutor, ToolOutput, ToolRegistry};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Input {
    /// Where to look.
    path: String,
}

struct Careful;

#[async_trait::async_trait]
impl Tool for Careful {
    type Input = Input;
    fn name(&self) -> &'static str {
        "Careful"
    }
    fn description(&self) -> String {
        "states its safety".into()
    }
    fn safety(&self, _: &Input, _: &ToolContext) -> Safety {
        Safety::READ_ONLY
    }
    fn touched_paths(&self, input: &Input, ctx: &ToolContext) -> Vec<PathBuf> {
        vec![ctx.resolve(&input.path)]
    }
    async fn run(&self, input: Input, _: &ToolContext, _: &CancellationToken) -> ToolOutput {
        ToolOutput::text(format!("looked at {}", input.path))
    }
}

#[tokio::test]
async fn a_custom_tool_registers_with_its_schema_and_runs() {
    let mut registry = ToolRegistry::new(ToolContext::new(PathBuf::from("/project")));
    registry.register(Careful);
    let spec = &registry.specs()[0];
    assert_eq!(
        spec.input_schema["properties"]["path"]["description"],
        json!("Where to look.")
    );
    let call = ToolCall {
        id: "t".into(),
        name: "careful".into(),
        input: json!({"path": "a"}),
    };
    let prepared = registry.prepare(&call).unwrap();
    assert_eq!(prepared.paths, vec![PathBuf::from("/project/a")]);
    // A tool that does not override `validate` has nothing to check before it runs.
    assert_eq!(registry.validate(&prepared).await, Ok(()));
    let output = registry
        .execute(
            &prepared,
            &cairn_tools::CallContext::detached(CancellationToken::new()),
        )
        .await;
    assert_eq!(output, ToolOutput::text("looked at a"));
}
