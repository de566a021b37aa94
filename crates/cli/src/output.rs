//! Printing the engine's events in the three headless formats.
//!
//! Field names follow Claude Code's `--output-format json|stream-json`, so scripts and the
//! Agent SDKs that read its output read cairn's.

use std::io::Write;
use std::time::Duration;

use cairn_protocol::{AgentEvent, EventEnvelope, TurnEnd, TurnSummary};
use serde_json::{Value, json};

use crate::args::OutputFormat;

/// What the `init` line tells about the session.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    pub session_id: String,
    pub cwd: String,
    pub model: String,
    pub tools: Vec<String>,
    /// The name of the variable the credential came from, never the credential.
    pub api_key_source: &'static str,
    pub permission_mode: &'static str,
    /// The MCP servers and their states (`connected`, `pending`, `failed`).
    pub mcp_servers: Vec<(String, &'static str)>,
}

#[derive(Debug)]
pub struct Printer {
    format: OutputFormat,
    verbose: bool,
    session: SessionInfo,
}

impl Printer {
    pub fn new(format: OutputFormat, verbose: bool, session: SessionInfo) -> Self {
        Printer {
            format,
            verbose,
            session,
        }
    }

    pub fn start(&mut self) {
        if self.format == OutputFormat::StreamJson {
            self.line(json!({
                "type": "system",
                "subtype": "init",
                "cwd": self.session.cwd,
                "session_id": self.session.session_id,
                "tools": self.session.tools,
                "mcp_servers": self
                    .session
                    .mcp_servers
                    .iter()
                    .map(|(name, status)| json!({"name": name, "status": status}))
                    .collect::<Vec<_>>(),
                "model": self.session.model,
                "permissionMode": self.session.permission_mode,
                "apiKeySource": self.session.api_key_source,
            }));
        }
    }

    /// Prints one event. A sub-agent's messages carry the `tool_use` id of the call that
    /// started it as `parent_tool_use_id`, as Claude Code's stream-json does.
    pub fn event(&mut self, envelope: &EventEnvelope) {
        let parent_tool_use_id = &envelope.from.parent_tool_use_id;
        match &envelope.event {
            AgentEvent::Retrying(notice) => {
                let seconds = notice.delay_ms as f64 / 1000.0;
                eprintln!(
                    "retrying in {seconds:.1}s ({}), attempt {} of {}",
                    notice.reason, notice.attempt, notice.max_attempts
                );
            }
            AgentEvent::Warning { message } => eprintln!("warning: {message}"),
            AgentEvent::Debug { message } => {
                if self.verbose {
                    eprintln!("debug: {message}");
                }
            }
            AgentEvent::AssistantMessage {
                message,
                id,
                model,
                stop_reason,
                usage,
                ..
            } => {
                if self.format == OutputFormat::StreamJson {
                    self.line(json!({
                        "type": "assistant",
                        "message": {
                            "id": id,
                            "type": "message",
                            "role": "assistant",
                            "model": model,
                            "content": message.content,
                            "stop_reason": stop_reason,
                            "stop_sequence": null,
                            "usage": usage,
                        },
                        "parent_tool_use_id": parent_tool_use_id,
                        "session_id": self.session.session_id,
                    }));
                }
            }
            AgentEvent::ToolResultsMessage { message } => {
                if self.format == OutputFormat::StreamJson {
                    self.line(json!({
                        "type": "user",
                        "message": message,
                        "parent_tool_use_id": parent_tool_use_id,
                        "session_id": self.session.session_id,
                    }));
                }
            }
            AgentEvent::ToolCallInputComplete { name, input, .. } => {
                if self.verbose {
                    eprintln!("tool: {name} {input}");
                }
            }
            AgentEvent::ToolCallResult {
                name,
                is_error: true,
                content,
                ..
            } => {
                if self.verbose {
                    eprintln!("tool {name} failed: {}", content.text());
                }
            }
            AgentEvent::TodosChanged { todos } => {
                if self.verbose {
                    for todo in todos {
                        eprintln!("todo [{:?}] {}", todo.status, todo.content);
                    }
                }
            }
            AgentEvent::PermissionDecided(decision) => {
                if self.verbose && !decision.allowed {
                    eprintln!(
                        "permission denied for {}: {}",
                        decision.tool,
                        decision.reason.as_deref().unwrap_or("no reason given")
                    );
                }
            }
            AgentEvent::UserMessage { .. }
            | AgentEvent::PermissionRequested { .. }
            | AgentEvent::ModelChanged { .. }
            | AgentEvent::PermissionModeChanged { .. }
            | AgentEvent::TextDelta { .. }
            | AgentEvent::ThinkingDelta { .. }
            | AgentEvent::ToolCallStarted { .. }
            | AgentEvent::ToolCallResult { .. }
            | AgentEvent::TurnFinished(_) => {}
            AgentEvent::Compacted(compaction) => {
                if self.verbose {
                    eprintln!(
                        "context: {} made the conversation {} tokens (was {})",
                        compaction.step, compaction.tokens_after, compaction.tokens_before
                    );
                }
                // A rewritten history is a boundary, as Claude Code's stream-json reports it.
                if self.format == OutputFormat::StreamJson && compaction.summary.is_some() {
                    self.line(json!({
                        "type": "system",
                        "subtype": "compact_boundary",
                        "session_id": self.session.session_id,
                        "compact_metadata": {
                            "trigger": if compaction.manual { "manual" } else { "auto" },
                            "pre_tokens": compaction.tokens_before,
                            "post_tokens": compaction.tokens_after,
                        },
                    }));
                }
            }
        }
    }

    /// Prints the end of the session; returns whether it ended in error.
    pub fn finish(&mut self, summary: &TurnSummary, elapsed: Duration) -> bool {
        let is_error = summary.end.is_error();
        let (subtype, result) = match &summary.end {
            TurnEnd::Completed | TurnEnd::MaxTokens => ("success", summary.result.clone()),
            TurnEnd::MaxRequests { limit } => (
                "error_max_turns",
                format!("Reached the maximum number of turns ({limit})."),
            ),
            TurnEnd::Interrupted => ("error_during_execution", "Interrupted by the user.".into()),
            TurnEnd::Failed { message } | TurnEnd::HookBlocked { message } => {
                ("error_during_execution", message.clone())
            }
        };
        if self.verbose {
            // A model without known prices has an unknown cost, never $0.
            let cost = summary
                .cost()
                .map_or_else(|| "unknown".to_string(), |usd| format!("${usd:.4}"));
            eprintln!(
                "usage: {} input, {} output tokens; cost {cost}",
                summary.usage.input_tokens, summary.usage.output_tokens
            );
        }
        match self.format {
            OutputFormat::Text => {
                if is_error {
                    eprintln!("error: {result}");
                } else {
                    let mut stdout = std::io::stdout().lock();
                    let _ = writeln!(stdout, "{result}");
                    let _ = stdout.flush();
                }
            }
            OutputFormat::Json | OutputFormat::StreamJson => {
                self.line(json!({
                    "type": "result",
                    "subtype": subtype,
                    "is_error": is_error,
                    "result": result,
                    "session_id": self.session.session_id,
                    // Claude Code's "turns" are cairn's model requests.
                    "num_turns": summary.requests,
                    "duration_ms": elapsed.as_millis() as u64,
                    "duration_api_ms": summary.duration_api_ms,
                    // null when some request's model has no known prices.
                    "total_cost_usd": summary.cost(),
                    "usage": summary.usage,
                }));
            }
        }
        is_error
    }

    fn line(&self, value: Value) {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{value}");
        let _ = stdout.flush();
    }
}

/// Reports a run that failed before its turn could start or finish (missing credentials, a
/// bad flag or settings file, no prompt): `error: …` on standard error and, in `json` and
/// `stream-json`, the `result` object a failed turn ends with on standard output, so that a
/// script reads every failure the same way, whatever stopped the run.
pub fn print_error_result(format: OutputFormat, message: &str, elapsed: Duration) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "error: {message}");
    match format {
        OutputFormat::Text => {}
        OutputFormat::Json | OutputFormat::StreamJson => {
            let result = json!({
                "type": "result",
                "subtype": "error_during_execution",
                "is_error": true,
                "result": message,
                // No session was started.
                "session_id": null,
                "num_turns": 0,
                "duration_ms": elapsed.as_millis() as u64,
                "duration_api_ms": 0,
                "total_cost_usd": 0.0,
                "usage": cairn_protocol::Usage::default(),
            });
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{result}");
            let _ = stdout.flush();
        }
    }
}
