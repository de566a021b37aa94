//! Running the tool calls of one assistant message: validation, PreToolUse hooks, the gate,
//! execution, PostToolUse hooks, for each call.
//!
//! Consecutive calls that are safe to run concurrently run together (at most
//! [`MAX_PARALLEL`] at once); every other call runs alone, in order. Before it runs, each call
//! is validated, then authorized (see [`Governance::authorize`]), in the state the calls
//! before it left. Each call's PostToolUse hooks run as soon as it ends, before any later call
//! starts, and its result is reported then; the results go back to the model in the order it
//! asked. Every `tool_use` gets exactly one result, even when its input was malformed, its
//! tool panicked or the user interrupted, so the conversation stays valid for the API.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use cairn_llm::{MalformedToolInput, ModelResponse};
use cairn_protocol::{AgentEvent, ContentBlock, EventSender, PermissionBroker, PermissionMode};
use cairn_tools::{
    CallContext, Concurrency, PreparedCall, ToolCall, ToolEffect, ToolExecutor, ToolOutput,
};
use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::governance::Governance;

/// How many concurrency-safe calls run at the same time.
pub const MAX_PARALLEL: usize = 10;

/// Gives each `tool_use` block of `response` that repeats an earlier block's id an id of its
/// own, and lists it among the malformed calls, so that it is answered with an error and
/// never run.
///
/// The Anthropic API refuses a message whose `tool_use` ids are not unique, and two results
/// for one id, so the message as it is kept (history, session log, events) must carry unique
/// ids: the first call with an id runs and gets its own result; every later one gets an error
/// result under its new id, which tells the model what happened. The names are the ones
/// [`ToolUseIds`] gave the streamed events, so a face matches each result to its own call.
pub fn rename_duplicate_tool_use_ids(response: &mut ModelResponse) {
    let mut ids = ToolUseIds::default();
    let mut renamed = Vec::new();
    for block in &mut response.content {
        let ContentBlock::ToolUse { id, name, .. } = block else {
            continue;
        };
        let own = ids.started(id);
        if own == *id {
            continue;
        }
        renamed.push(MalformedToolInput {
            id: own.clone(),
            name: name.clone(),
            error: format!(
                "This tool call was not run: its id {id:?} is the id of an earlier tool call in \
                 the same message, and each call needs an id of its own. The earlier call ran \
                 and has its own result; make this call again if it is still needed."
            ),
        });
        *id = own;
    }
    response.malformed_tool_inputs.extend(renamed);
}

/// The ids of one message's tool calls as cairn keeps them, given in the order the calls
/// come: an id seen before in the message becomes `<id>_duplicate_<n>` (the first `n` not seen
/// either). The same sequence gives the same names whether it runs over the streamed events
/// or over the finished message.
#[derive(Debug, Default)]
pub struct ToolUseIds {
    seen: HashSet<String>,
    /// The name the latest call with each id the model wrote was given.
    latest: HashMap<String, String>,
}

impl ToolUseIds {
    /// The id cairn keeps for the next call, which the model gave `id`.
    pub fn started(&mut self, id: &str) -> String {
        let own = if self.seen.contains(id) {
            (1..)
                .map(|n| format!("{id}_duplicate_{n}"))
                .find(|candidate| !self.seen.contains(candidate))
                .unwrap_or_default()
        } else {
            id.to_owned()
        };
        self.seen.insert(own.clone());
        self.latest.insert(id.to_owned(), own.clone());
        own
    }

    /// The id cairn keeps for the call with `id` that started last (its input completes after
    /// it starts).
    pub fn current(&self, id: &str) -> String {
        self.latest
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_owned())
    }
}

/// What to do with one call.
enum Plan {
    /// Answered without running: malformed input, unknown tool, invalid arguments, a call
    /// bound to fail, a refusal.
    Answered(ToolOutput),
    Run(PreparedCall),
}

/// A call as [`ToolExecutor::prepare`] left it: ready to be judged, or already answered.
type Prepared = Result<PreparedCall, ToolOutput>;

/// What running one message's calls needs.
pub struct CallRunner<'a> {
    pub tools: &'a Arc<dyn ToolExecutor>,
    pub governance: &'a Governance,
    pub permissions: &'a Arc<dyn PermissionBroker>,
    pub events: &'a EventSender,
    pub cancel: &'a CancellationToken,
}

impl CallRunner<'_> {
    /// Runs the calls and returns one `tool_result` block per call, in the model's order,
    /// and the plan a call handed back to end the turn with, if one did.
    ///
    /// The calls go in steps: a run of consecutive concurrency-safe calls, or one other call.
    /// Each call of a step is validated and authorized when its step comes, after the steps
    /// before it have run (and their PostToolUse hooks), so that its checks (was the file
    /// read, does `old_string` occur once) and its permission question see the state the
    /// earlier calls left: a Write and then an Edit of the same new file, in one message,
    /// both work, and a formatter hook after an Edit has run before a later Bash reads it.
    pub async fn run(&self, response: &ModelResponse, calls: &[ToolCall]) -> CallResults {
        let prepared = calls.iter().map(|call| {
            let malformed = response
                .malformed_tool_inputs
                .iter()
                .find(|bad| bad.id == call.id);
            match malformed {
                Some(bad) => Err(ToolOutput::error(bad.error.clone())),
                None => self.tools.prepare(call),
            }
        });

        let mut outputs: Vec<Finished> = Vec::with_capacity(calls.len());
        for step in steps(prepared) {
            let mut plans = Vec::with_capacity(step.len());
            for call in step {
                let plan = match call {
                    Ok(call) => match self
                        .governance
                        .authorize(
                            self.tools,
                            call,
                            self.permissions.as_ref(),
                            self.events,
                            self.cancel,
                        )
                        .await
                    {
                        Ok(allowed) => Plan::Run(allowed),
                        Err(refusal) => Plan::Answered(refusal),
                    },
                    Err(output) => Plan::Answered(output),
                };
                plans.push(plan);
            }
            outputs.extend(self.execute_plans(plans).await);
        }
        for (call, output) in calls.iter().zip(&outputs) {
            if !output.reported {
                self.report(&call.id, &call.name, &output.output);
            }
        }
        let handed_back = outputs
            .iter()
            .find_map(|output| match &output.output.effect {
                Some(ToolEffect::PlanHandedBack { plan }) => Some(plan.clone()),
                Some(
                    ToolEffect::TodosChanged(_)
                    | ToolEffect::PlanApproved { .. }
                    | ToolEffect::PlanModeEntered
                    | ToolEffect::StructuredOutput { .. },
                )
                | None => None,
            });
        let structured = outputs
            .iter()
            .find_map(|output| match &output.output.effect {
                Some(ToolEffect::StructuredOutput { value }) => Some(value.clone()),
                _ => None,
            });
        let refused_structured = calls
            .iter()
            .zip(&outputs)
            .filter(|(call, output)| {
                call.name == crate::structured_output::STRUCTURED_OUTPUT_TOOL
                    && output.output.is_error
            })
            .count();
        let blocks = calls
            .iter()
            .zip(outputs)
            .map(|(call, output)| ContentBlock::ToolResult {
                tool_use_id: call.id.clone(),
                content: output.output.content,
                is_error: output.output.is_error,
            })
            .collect();
        CallResults {
            blocks,
            handed_back,
            structured,
            refused_structured: u32::try_from(refused_structured).unwrap_or(u32::MAX),
        }
    }

    /// Runs the calls of one step that may run and returns an output for every plan, in
    /// order. Consecutive concurrency-safe calls run together; any other call runs alone (a
    /// hook may have rewritten a call of a safe step into one that is not).
    async fn execute_plans(&self, plans: Vec<Plan>) -> Vec<Finished> {
        let mut outputs: Vec<Finished> = Vec::with_capacity(plans.len());
        let mut plans = plans.into_iter().peekable();
        while let Some(plan) = plans.next() {
            match plan {
                Plan::Answered(output) => outputs.push(Finished {
                    output,
                    reported: false,
                }),
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
                    let finished: Vec<Finished> = futures_util::stream::iter(batch)
                        .map(|call| self.run_one(call))
                        .buffered(MAX_PARALLEL)
                        .collect()
                        .await;
                    outputs.extend(finished);
                }
                Plan::Run(call) => outputs.push(self.run_one(call).await),
            }
        }
        outputs
    }

    /// One call from start to reported result: execution, then its PostToolUse hooks.
    async fn run_one(&self, call: PreparedCall) -> Finished {
        let cx = CallContext {
            cancel: self.cancel.clone(),
            events: self.events.clone(),
            permissions: self.permissions.clone(),
        };
        let mut output = execute_one(self.tools.clone(), &call, cx).await;
        self.governance
            .after_call(&call, &mut output, self.events, self.cancel)
            .await;
        self.report(&call.id, &call.name, &output);
        Finished {
            output,
            reported: true,
        }
    }

    /// Tells the face a call's result (and what it changed), and puts a mode the call agreed
    /// on in force.
    fn report(&self, id: &str, name: &str, output: &ToolOutput) {
        let gate = self.governance.gate();
        let mode = match &output.effect {
            Some(ToolEffect::TodosChanged(todos)) => {
                self.events.emit(AgentEvent::TodosChanged {
                    todos: todos.clone(),
                });
                None
            }
            // Approved without a mode chosen (an SDK host's plain "allow"): plan mode ends.
            Some(ToolEffect::PlanApproved { .. }) => {
                (gate.mode() == PermissionMode::Plan).then_some(PermissionMode::Default)
            }
            Some(ToolEffect::PlanModeEntered) => Some(PermissionMode::Plan),
            Some(ToolEffect::PlanHandedBack { .. } | ToolEffect::StructuredOutput { .. })
            | None => None,
        };
        if let Some(mode) = mode {
            gate.set_mode(mode);
            self.events.emit(AgentEvent::PermissionModeChanged { mode });
        }
        self.events.emit(AgentEvent::ToolCallResult {
            id: id.to_string(),
            name: name.to_string(),
            content: output.content.clone(),
            is_error: output.is_error,
        });
    }
}

/// What running one message's calls gave.
pub struct CallResults {
    /// One `tool_result` block per call, in the model's order.
    pub blocks: Vec<ContentBlock>,
    /// The plan an `ExitPlanMode` call handed back where nobody approves it (`cairn -p`): the
    /// turn ends with it as the result.
    pub handed_back: Option<String>,
    /// The value a `StructuredOutput` call handed over: the turn ends with it.
    pub structured: Option<serde_json::Value>,
    /// How many `StructuredOutput` calls of the message were refused (their value did not fit).
    pub refused_structured: u32,
}

/// A call's output, and whether its result was reported already.
struct Finished {
    output: ToolOutput,
    reported: bool,
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

/// Runs one call on its own task, so that a panic in a tool becomes an error result and an
/// interrupt stops waiting for it at once.
async fn execute_one(
    tools: Arc<dyn ToolExecutor>,
    call: &PreparedCall,
    cx: CallContext,
) -> ToolOutput {
    if cx.cancel.is_cancelled() {
        return ToolOutput::error("The user interrupted before this tool call ran.");
    }
    let name = call.name.clone();
    let cancel = cx.cancel.clone();
    let task_call = call.clone();
    let mut task = tokio::spawn(async move { tools.execute(&task_call, &cx).await });
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
            // A tool that watches the token (Bash kills its command's group) stops at once
            // and reports what it did until then; one that does not is dropped.
            match tokio::time::timeout(CANCEL_GRACE, &mut task).await {
                Ok(Ok(output)) => output,
                _ => {
                    task.abort();
                    ToolOutput::error("The user interrupted this tool call.")
                }
            }
        }
    }
}

/// How long an interrupted call may take to stop on its own and say what it had done (Bash's
/// output until the interrupt) before it is dropped.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

#[cfg(test)]
mod tests {
    use cairn_protocol::Usage;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn tool_use(id: &str, name: &str) -> ContentBlock {
        ContentBlock::ToolUse {
            id: id.to_string(),
            name: name.to_string(),
            input: json!({}),
        }
    }

    fn ids(response: &ModelResponse) -> Vec<&str> {
        response
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_repeated_id_gets_one_of_its_own_and_an_error() {
        let cases: [(&[&str], &[&str], &[&str]); 5] = [
            (&["a", "b"], &["a", "b"], &[]),
            (&["a", "a"], &["a", "a_duplicate_1"], &["a_duplicate_1"]),
            // A fresh id never takes one used before it; a later call that writes a name
            // given already is a duplicate in its turn.
            (
                &["a", "a_duplicate_1", "a", "a"],
                &["a", "a_duplicate_1", "a_duplicate_2", "a_duplicate_3"],
                &["a_duplicate_2", "a_duplicate_3"],
            ),
            (
                &["a", "a", "a_duplicate_1"],
                &["a", "a_duplicate_1", "a_duplicate_1_duplicate_1"],
                &["a_duplicate_1", "a_duplicate_1_duplicate_1"],
            ),
            (
                &["x", "y", "x"],
                &["x", "y", "x_duplicate_1"],
                &["x_duplicate_1"],
            ),
        ];
        for (given, expected, errors) in cases {
            let mut response = ModelResponse {
                id: "msg".to_string(),
                model: "m".to_string(),
                content: given.iter().map(|id| tool_use(id, "Read")).collect(),
                stop_reason: None,
                usage: Usage::default(),
                malformed_tool_inputs: vec![],
            };
            rename_duplicate_tool_use_ids(&mut response);
            assert_eq!(ids(&response), expected, "{given:?}");
            let answered: Vec<&str> = response
                .malformed_tool_inputs
                .iter()
                .map(|bad| bad.id.as_str())
                .collect();
            assert_eq!(answered, errors, "{given:?}");
            assert!(
                response
                    .malformed_tool_inputs
                    .iter()
                    .all(|bad| bad.error.contains("not run") && bad.name == "Read")
            );
            // The streamed events get the same names, started then completed one by one.
            let mut streamed = ToolUseIds::default();
            let names: Vec<(String, String)> = given
                .iter()
                .map(|id| (streamed.started(id), streamed.current(id)))
                .collect();
            let expected_pairs: Vec<(String, String)> = expected
                .iter()
                .map(|id| (id.to_string(), id.to_string()))
                .collect();
            assert_eq!(names, expected_pairs, "{given:?}");
        }
    }
}
