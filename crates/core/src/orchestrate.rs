//! Running the tool calls of one assistant message (DESIGN.md §3e).
//!
//! Consecutive calls that are safe to run concurrently run together (at most
//! [`MAX_PARALLEL`] at once); every other call runs alone, in order. Results go back in the
//! order the model asked, whatever order they finish in. Every `tool_use` gets exactly one
//! result, even when its input was malformed, its tool panicked or the user interrupted, so
//! the conversation stays valid for the API.

use std::path::Path;
use std::sync::Arc;

use cairn_llm::ModelResponse;
use cairn_protocol::{AgentEvent, ContentBlock};
use cairn_tools::spill::{SpillCandidate, apply_budget};
use cairn_tools::{Concurrency, PreparedCall, ToolCall, ToolEffect, ToolExecutor, ToolOutput};
use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::EventSink;
use crate::governance::Governance;
use crate::permission::PermissionBroker;

/// How many concurrency-safe calls run at the same time.
pub const MAX_PARALLEL: usize = 10;

/// What to do with one call.
enum Plan {
    /// Answered without running: malformed input, unknown tool, invalid arguments.
    Answered(ToolOutput),
    Run(PreparedCall),
}

/// Runs the calls and returns one `tool_result` block per call, in the model's order.
pub async fn run_tool_calls(
    tools: &Arc<dyn ToolExecutor>,
    governance: &Governance,
    broker: &PermissionBroker,
    response: &ModelResponse,
    calls: &[ToolCall],
    sink: &mut dyn EventSink,
    cancel: &CancellationToken,
) -> Vec<ContentBlock> {
    let mut plans: Vec<Plan> = Vec::with_capacity(calls.len());
    for call in calls {
        let malformed = response
            .malformed_tool_inputs
            .iter()
            .find(|bad| bad.id == call.id);
        let plan = match malformed {
            Some(bad) => Plan::Answered(ToolOutput::error(bad.error.clone())),
            None => match tools.prepare(call) {
                Ok(prepared) => {
                    match governance
                        .authorize(tools, prepared, broker, sink, cancel)
                        .await
                    {
                        Ok(allowed) => Plan::Run(allowed),
                        Err(refusal) => Plan::Answered(refusal),
                    }
                }
                Err(output) => Plan::Answered(output),
            },
        };
        plans.push(plan);
    }
    let ran: Vec<bool> = plans
        .iter()
        .map(|plan| matches!(plan, Plan::Run(_)))
        .collect();

    let mut outputs: Vec<ToolOutput> = Vec::with_capacity(calls.len());
    let mut plans = plans.into_iter().peekable();
    while let Some(plan) = plans.next() {
        match plan {
            Plan::Answered(output) => outputs.push(output),
            Plan::Run(call) if call.safety.concurrency == Concurrency::Safe => {
                let mut batch = vec![call];
                while let Some(Plan::Run(next)) = plans.peek() {
                    if next.safety.concurrency != Concurrency::Safe {
                        break;
                    }
                    if let Some(Plan::Run(next)) = plans.next() {
                        batch.push(next);
                    }
                }
                let finished: Vec<ToolOutput> = futures_util::stream::iter(batch)
                    .map(|call| execute_one(tools.clone(), call, cancel.clone()))
                    .buffered(MAX_PARALLEL)
                    .collect()
                    .await;
                outputs.extend(finished);
            }
            Plan::Run(call) => outputs.push(execute_one(tools.clone(), call, cancel.clone()).await),
        }
    }

    for ((call, output), ran) in calls.iter().zip(outputs.iter_mut()).zip(&ran) {
        if *ran {
            governance.after_call(call, output, sink, cancel).await;
        }
    }
    calls
        .iter()
        .zip(outputs)
        .map(|(call, output)| {
            if let Some(ToolEffect::TodosChanged(todos)) = &output.effect {
                sink.emit(AgentEvent::TodosChanged {
                    todos: todos.clone(),
                });
            }
            sink.emit(AgentEvent::ToolCallResult {
                id: call.id.clone(),
                name: call.name.clone(),
                content: output.content.clone(),
                is_error: output.is_error,
            });
            ContentBlock::ToolResult {
                tool_use_id: call.id.clone(),
                content: output.content,
                is_error: output.is_error,
            }
        })
        .collect()
}

/// Runs one call on its own task, so that a panic in a tool becomes an error result and an
/// interrupt stops waiting for it at once.
async fn execute_one(
    tools: Arc<dyn ToolExecutor>,
    call: PreparedCall,
    cancel: CancellationToken,
) -> ToolOutput {
    if cancel.is_cancelled() {
        return ToolOutput::error("The user interrupted before this tool call ran.");
    }
    let name = call.name.clone();
    let task_cancel = cancel.clone();
    let mut task = tokio::spawn(async move { tools.execute(&call, &task_cancel).await });
    tokio::select! {
        joined = &mut task => match joined {
            Ok(output) => output,
            Err(err) if err.is_panic() => {
                let panic = err.into_panic();
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|text| text.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "no message".into());
                ToolOutput::error(format!(
                    "The {name} tool failed unexpectedly ({message}). This is a bug in cairn, not \
                     in your input; the session goes on."
                ))
            }
            Err(_) => ToolOutput::error(format!("The {name} tool call was cancelled.")),
        },
        _ = cancel.cancelled() => {
            task.abort();
            ToolOutput::error("The user interrupted this tool call.")
        }
    }
}

/// Context pipeline step 1: spills results that are too large, so one message's results stay
/// within budget.
pub fn apply_result_budget(mut results: Vec<ContentBlock>, spill_dir: &Path) -> Vec<ContentBlock> {
    let mut candidates: Vec<SpillCandidate<'_>> = results
        .iter_mut()
        .filter_map(|block| match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => Some(SpillCandidate {
                tool_use_id: tool_use_id.as_str(),
                content,
            }),
            _ => None,
        })
        .collect();
    apply_budget(&mut candidates, spill_dir);
    results
}
