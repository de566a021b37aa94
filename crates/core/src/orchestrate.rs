//! Running the tool calls of one assistant message (DESIGN.md §3e).
//!
//! Consecutive calls that are safe to run concurrently run together (at most
//! [`MAX_PARALLEL`] at once); every other call runs alone, in order. Before it runs, each call
//! is validated, then authorized (see [`Governance::authorize`]), in the state the calls
//! before it left. Results go back in the order the model asked, whatever order they finish
//! in. Every `tool_use` gets exactly one result, even when its input was malformed, its tool
//! panicked or the user interrupted, so the conversation stays valid for the API.

use std::path::Path;
use std::sync::Arc;

use cairn_llm::ModelResponse;
use cairn_protocol::{AgentEvent, ContentBlock};
use cairn_tools::spill::{SpillCandidate, Spilled, apply_budget};
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
    /// Answered without running: malformed input, unknown tool, invalid arguments, a call
    /// bound to fail, a refusal.
    Answered(ToolOutput),
    Run(PreparedCall),
}

/// A call as [`ToolExecutor::prepare`] left it: ready to be judged, or already answered.
type Prepared = Result<PreparedCall, ToolOutput>;

/// Runs the calls and returns one `tool_result` block per call, in the model's order.
///
/// The calls go in steps: a run of consecutive concurrency-safe calls, or one other call.
/// Each call of a step is validated and authorized when its step comes, after the steps
/// before it have run, so that its checks (was the file read, does `old_string` occur once)
/// and its permission question see the state the earlier calls left: a Write and then an
/// Edit of the same new file, in one message, both work.
pub async fn run_tool_calls(
    tools: &Arc<dyn ToolExecutor>,
    governance: &Governance,
    broker: &PermissionBroker,
    response: &ModelResponse,
    calls: &[ToolCall],
    sink: &mut dyn EventSink,
    cancel: &CancellationToken,
) -> Vec<ContentBlock> {
    let prepared = calls.iter().map(|call| {
        let malformed = response
            .malformed_tool_inputs
            .iter()
            .find(|bad| bad.id == call.id);
        match malformed {
            Some(bad) => Err(ToolOutput::error(bad.error.clone())),
            None => tools.prepare(call),
        }
    });

    let mut outputs: Vec<ToolOutput> = Vec::with_capacity(calls.len());
    let mut ran: Vec<bool> = Vec::with_capacity(calls.len());
    for step in steps(prepared) {
        let mut plans = Vec::with_capacity(step.len());
        for call in step {
            let plan = match call {
                Ok(call) => match governance
                    .authorize(tools, call, broker, sink, cancel)
                    .await
                {
                    Ok(allowed) => Plan::Run(allowed),
                    Err(refusal) => Plan::Answered(refusal),
                },
                Err(output) => Plan::Answered(output),
            };
            plans.push(plan);
        }
        ran.extend(plans.iter().map(|plan| matches!(plan, Plan::Run(_))));
        outputs.extend(execute_plans(tools, plans, cancel).await);
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

/// The calls grouped into the steps they go in: each run of consecutive concurrency-safe
/// calls is one step; every other call, including one already answered, is a step alone.
fn steps(prepared: impl Iterator<Item = Prepared>) -> Vec<Vec<Prepared>> {
    fn is_safe(call: &Prepared) -> bool {
        matches!(call, Ok(call) if call.safety.concurrency == Concurrency::Safe)
    }
    let mut steps: Vec<Vec<Prepared>> = Vec::new();
    for call in prepared {
        match steps.last_mut() {
            Some(step) if is_safe(&call) && step.first().is_some_and(is_safe) => step.push(call),
            _ => steps.push(vec![call]),
        }
    }
    steps
}

/// Runs the calls of one step that may run and returns an output for every plan, in order.
/// Consecutive concurrency-safe calls run together; any other call runs alone (a hook may
/// have rewritten a call of a safe step into one that is not).
async fn execute_plans(
    tools: &Arc<dyn ToolExecutor>,
    plans: Vec<Plan>,
    cancel: &CancellationToken,
) -> Vec<ToolOutput> {
    let mut outputs: Vec<ToolOutput> = Vec::with_capacity(plans.len());
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
    outputs
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
/// within budget. Returns the results as the model gets them, and what was spilled.
pub fn apply_result_budget(
    mut results: Vec<ContentBlock>,
    spill_dir: &Path,
) -> (Vec<ContentBlock>, Vec<Spilled>) {
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
    let spilled = apply_budget(&mut candidates, spill_dir);
    (results, spilled)
}
