//! `TodoWrite`: the model's task list for the session, shown to the user as it changes.

use std::path::PathBuf;

use async_trait::async_trait;
use cairn_protocol::{TodoItem, TodoStatus};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::{Safety, Tool, ToolContext, ToolEffect, ToolOutput};

/// Replaces the session's todo list.
#[derive(Debug, Clone, Copy)]
pub struct TodoWriteTool;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteInput {
    /// The whole updated list.
    todos: Vec<TodoItem>,
}

#[async_trait]
impl Tool for TodoWriteTool {
    type Input = TodoWriteInput;

    fn name(&self) -> &'static str {
        "TodoWrite"
    }

    fn description(&self) -> String {
        "Creates or updates the task list for this session. Use it for work of three or more \
         steps: write every step, mark one in_progress before starting it and completed as soon \
         as it is done. Send the whole list each time."
            .into()
    }

    fn safety(&self, _input: &TodoWriteInput, _ctx: &ToolContext) -> Safety {
        // It changes only cairn's own session state; two updates at once would race.
        Safety {
            access: crate::Access::ReadOnly,
            destructive: crate::Destructiveness::Harmless,
            concurrency: crate::Concurrency::Exclusive,
        }
    }

    fn touched_paths(&self, _input: &TodoWriteInput, _ctx: &ToolContext) -> Vec<PathBuf> {
        Vec::new()
    }

    async fn run(
        &self,
        input: TodoWriteInput,
        ctx: &ToolContext,
        _cancel: &CancellationToken,
    ) -> ToolOutput {
        let todos = input.todos;
        let in_progress = todos
            .iter()
            .filter(|todo| todo.status == TodoStatus::InProgress)
            .count();
        *ctx.session
            .todos
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = todos.clone();
        let done = todos
            .iter()
            .filter(|todo| todo.status == TodoStatus::Completed)
            .count();
        let mut text = format!(
            "Todo list updated: {} items, {done} completed, {in_progress} in progress.",
            todos.len()
        );
        if in_progress > 1 {
            text.push_str(" Keep exactly one item in progress at a time.");
        }
        ToolOutput {
            effect: Some(ToolEffect::TodosChanged(todos)),
            ..ToolOutput::text(text)
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::input::parse_input;

    #[tokio::test]
    async fn replaces_the_list_and_reports_the_change() {
        let ctx = ToolContext::new(std::env::temp_dir());
        let input: TodoWriteInput = parse_input(
            "TodoWrite",
            &json!({"todos": [
                {"content": "Run tests", "status": "in_progress", "activeForm": "Running tests"},
                {"content": "Fix bug", "status": "pending", "activeForm": "Fixing bug"}
            ]}),
        )
        .unwrap();
        let output = TodoWriteTool
            .run(input, &ctx, &CancellationToken::new())
            .await;
        assert_eq!(
            output.content.text(),
            "Todo list updated: 2 items, 0 completed, 1 in progress."
        );
        let Some(ToolEffect::TodosChanged(todos)) = output.effect else {
            panic!("expected a todo change")
        };
        assert_eq!(todos[0].active_form, "Running tests");
        assert_eq!(ctx.session.todos.lock().unwrap().len(), 2);
    }

    #[test]
    fn an_unknown_status_names_the_field() {
        let error = parse_input::<TodoWriteInput>(
            "TodoWrite",
            &json!({"todos": [{"content": "x", "status": "done", "activeForm": "x"}]}),
        )
        .unwrap_err();
        assert_eq!(
            error,
            "Invalid input for TodoWrite: field `todos[0].status`: unknown variant `done`, expected one of `pending`, `in_progress`, `completed`."
        );
    }
}
