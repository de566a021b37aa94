//! Printing the engine's events in the three headless formats.
//!
//! `json` and `stream-json` print the [`wire`](crate::wire) types, whose field names are
//! Claude Code's, so scripts and the Agent SDKs that read its output read cairn's.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use cairn_core::structured_output::STRUCTURED_OUTPUT_TOOL;
use cairn_protocol::{AgentEvent, EventEnvelope, Role, StopReason, TurnEnd, TurnSummary, Usage};

use crate::args::OutputFormat;
use crate::wire::{
    ApiMessage, ApiMessageKind, AssistantLine, CompactBoundary, CompactMetadata, CompactTrigger,
    Init, Line, McpServerStatus, ModelUsage, PermissionDenial, ResultLine, ResultSubtype,
    SystemLine, UserLine, line_uuid,
};

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
    /// The slash commands a prompt may start with, without their `/`.
    pub slash_commands: Vec<String>,
    /// The sub-agent types the `Agent` tool may start.
    pub agents: Vec<String>,
    /// The skills found at the start, by name.
    pub skills: Vec<String>,
}

impl SessionInfo {
    /// The `system/init` line for this session.
    pub fn init_line(&self) -> Init {
        Init {
            cwd: self.cwd.clone(),
            session_id: self.session_id.clone(),
            tools: self.tools.clone(),
            mcp_servers: self
                .mcp_servers
                .iter()
                .map(|(name, status)| McpServerStatus {
                    name: name.clone(),
                    status: (*status).to_owned(),
                })
                .collect(),
            model: self.model.clone(),
            permission_mode: self.permission_mode.to_owned(),
            slash_commands: self.slash_commands.clone(),
            agents: self.agents.clone(),
            skills: self.skills.clone(),
            api_key_source: self.api_key_source.to_owned(),
            output_style: "default".to_owned(),
            claude_code_version: env!("CARGO_PKG_VERSION").to_owned(),
            uuid: line_uuid(),
        }
    }
}

/// Prints a run's events as they come, and keeps what its `result` reports besides the
/// turn's totals: the refused calls, the usage of each model, the last stop reason.
#[derive(Debug)]
pub struct Printer {
    format: OutputFormat,
    verbose: bool,
    session: SessionInfo,
    denials: Vec<PermissionDenial>,
    /// The summed usage of each model the run's messages and side requests came from.
    usage_by_model: BTreeMap<String, Usage>,
    /// The server-side web searches each model ran.
    web_searches_by_model: BTreeMap<String, u64>,
    /// The main agent's last stop reason.
    stop_reason: Option<StopReason>,
    /// What the sub-agents' requests cost, in USD, at the registry's prices; the main turn's
    /// summary does not count them.
    sub_agents_cost: f64,
    /// A sub-agent's request went to a model of unknown prices.
    sub_agents_cost_unknown: bool,
    /// The run's model client: what it knows of each model (prices, window) and how many
    /// tool calls it read from text; without one, the registry's table.
    client: Option<RunClient>,
}

/// The run's model client, as a printer holds it.
struct RunClient(Arc<dyn cairn_llm::ModelClient>);

impl std::fmt::Debug for RunClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunClient")
    }
}

/// A refused call in a few words: the tool and what it was given that matters most (the
/// command, the file, the pattern), cut to a line.
fn refused_call(tool: &str, input: &serde_json::Value) -> String {
    const MAX: usize = 100;
    let subject = [
        "command",
        "file_path",
        "notebook_path",
        "path",
        "pattern",
        "url",
    ]
    .iter()
    .find_map(|key| input.get(*key).and_then(serde_json::Value::as_str));
    let Some(subject) = subject else {
        return tool.to_string();
    };
    let one_line = subject.split_whitespace().collect::<Vec<_>>().join(" ");
    let shown: String = if one_line.chars().count() > MAX {
        let cut: String = one_line.chars().take(MAX - 1).collect();
        format!("{cut}…")
    } else {
        one_line
    };
    format!("{tool}({shown})")
}

impl Printer {
    pub fn new(format: OutputFormat, verbose: bool, session: SessionInfo) -> Self {
        Printer {
            format,
            verbose,
            session,
            denials: Vec::new(),
            usage_by_model: BTreeMap::new(),
            web_searches_by_model: BTreeMap::new(),
            stop_reason: None,
            sub_agents_cost: 0.0,
            sub_agents_cost_unknown: false,
            client: None,
        }
    }

    /// The printer of a run whose requests go through `client`.
    pub fn with_client(mut self, client: Arc<dyn cairn_llm::ModelClient>) -> Self {
        self.client = Some(RunClient(client));
        self
    }

    /// What the run's provider knows of `model`.
    fn model_info(&self, model: &str) -> cairn_llm::ModelInfo {
        match &self.client {
            Some(RunClient(client)) => client.model_info(model),
            None => cairn_llm::registry::lookup(model),
        }
    }

    /// The session's cost: the main turn's (side requests included) and its sub-agents'.
    /// `None` when part of it is unknown.
    fn total_cost(&self, summary: &TurnSummary) -> Option<f64> {
        let main = summary.cost()?;
        (!self.sub_agents_cost_unknown).then_some(main + self.sub_agents_cost)
    }

    pub fn start(&mut self) {
        if self.format == OutputFormat::StreamJson {
            print_line(&Line::System(SystemLine::Init(self.session.init_line())));
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
                // Every agent's requests count in the run's usage by model.
                *self.usage_by_model.entry(model.clone()).or_default() += *usage;
                if !envelope.from.is_main() {
                    match self.model_info(model).cost_usd(usage) {
                        Some(cost) => self.sub_agents_cost += cost,
                        None => self.sub_agents_cost_unknown = true,
                    }
                }
                if envelope.from.is_main() {
                    self.stop_reason = *stop_reason;
                }
                if self.format == OutputFormat::StreamJson {
                    print_line(&Line::Assistant(AssistantLine {
                        message: ApiMessage {
                            id: id.clone(),
                            kind: ApiMessageKind::Message,
                            role: Role::Assistant,
                            model: model.clone(),
                            content: message.content.clone(),
                            stop_reason: *stop_reason,
                            stop_sequence: None,
                            usage: *usage,
                        },
                        parent_tool_use_id: parent_tool_use_id.clone(),
                        session_id: self.session.session_id.clone(),
                        uuid: line_uuid(),
                    }));
                }
            }
            AgentEvent::SideRequests(side) => {
                // Their usage and cost are in the turn's summary already (the main agent's)
                // or, for a sub-agent's, nowhere yet.
                *self.usage_by_model.entry(side.model.clone()).or_default() += side.usage;
                *self
                    .web_searches_by_model
                    .entry(side.model.clone())
                    .or_default() += side.web_search_requests;
                if !envelope.from.is_main() {
                    match side.cost_usd {
                        Some(cost) => self.sub_agents_cost += cost,
                        None => self.sub_agents_cost_unknown = true,
                    }
                }
            }
            AgentEvent::ToolResultsMessage { message } => {
                if self.format == OutputFormat::StreamJson {
                    print_line(&Line::User(UserLine {
                        message: message.clone(),
                        parent_tool_use_id: parent_tool_use_id.clone(),
                        session_id: self.session.session_id.clone(),
                        uuid: line_uuid(),
                    }));
                }
            }
            AgentEvent::ToolCallInputComplete { name, input, .. } => {
                if self.verbose {
                    eprintln!("tool: {name} {input}");
                }
            }
            AgentEvent::ToolCallResult {
                id,
                name,
                is_error: true,
                content,
            } => {
                // A refusal was said once already, when it was decided.
                let refused = self.denials.iter().any(|denial| denial.tool_use_id == *id);
                if self.verbose && !refused {
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
                if !decision.allowed {
                    self.denials.push(PermissionDenial::from(decision));
                    // In text the answer alone would leave no trace of it; the json formats
                    // list it in the result's `permission_denials`.
                    if self.verbose || self.format == OutputFormat::Text {
                        eprintln!(
                            "refused: {}: {}",
                            refused_call(&decision.tool, &decision.input),
                            decision.reason.as_deref().unwrap_or("no reason given")
                        );
                    }
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
                    let trigger = if compaction.manual {
                        CompactTrigger::Manual
                    } else {
                        CompactTrigger::Auto
                    };
                    print_line(&Line::System(SystemLine::CompactBoundary(
                        CompactBoundary {
                            session_id: self.session.session_id.clone(),
                            compact_metadata: CompactMetadata {
                                trigger,
                                pre_tokens: compaction.tokens_before,
                                post_tokens: compaction.tokens_after,
                            },
                            uuid: line_uuid(),
                        },
                    )));
                }
            }
        }
    }

    /// The `result` object for the turn that ended with `summary`.
    pub fn result_line(&self, summary: &TurnSummary, elapsed: Duration) -> ResultLine {
        let is_error = summary.end.is_error();
        let result = match &summary.end {
            TurnEnd::Completed | TurnEnd::MaxTokens => summary.result.clone(),
            TurnEnd::MaxRequests { limit } => {
                format!("Reached the maximum number of turns ({limit}).")
            }
            TurnEnd::Interrupted => "Interrupted by the user.".into(),
            TurnEnd::Failed { message } | TurnEnd::HookBlocked { message } => message.clone(),
            TurnEnd::StructuredOutputRetries { attempts } => format!(
                "The model gave no answer fitting the --json-schema schema in {attempts} attempts."
            ),
        };
        // A run that asks for structured output offers StructuredOutput, and a turn that
        // completed ended with the value, as JSON, for its result.
        let structured_output = (summary.end == TurnEnd::Completed
            && self
                .session
                .tools
                .iter()
                .any(|tool| tool == STRUCTURED_OUTPUT_TOOL))
        .then(|| serde_json::from_str(&summary.result).ok())
        .flatten();
        ResultLine {
            subtype: ResultSubtype::from(&summary.end),
            is_error,
            errors: if is_error {
                vec![result.clone()]
            } else {
                Vec::new()
            },
            result,
            stop_reason: self.stop_reason,
            session_id: Some(self.session.session_id.clone()),
            num_turns: summary.requests,
            duration_ms: millis(elapsed),
            duration_api_ms: summary.duration_api_ms,
            total_cost_usd: self.total_cost(summary),
            usage: summary.usage,
            model_usage: self
                .usage_by_model
                .iter()
                .map(|(model, usage)| {
                    let info = self.model_info(model);
                    let mut model_usage = ModelUsage::new(usage, &info);
                    let searches = self.web_searches_by_model.get(model).copied().unwrap_or(0);
                    model_usage.web_search_requests = searches;
                    model_usage.cost_usd = model_usage
                        .cost_usd
                        .map(|cost| cost + searches as f64 * cairn_llm::side::WEB_SEARCH_USD);
                    (model.clone(), model_usage)
                })
                .collect(),
            permission_denials: self.denials.clone(),
            structured_output,
            cairn_tool_calls_from_text: self
                .client
                .as_ref()
                .map_or(0, |RunClient(client)| client.tool_calls_from_text()),
            uuid: line_uuid(),
        }
    }

    /// Prints the end of the session; returns whether it ended in error.
    pub fn finish(&mut self, summary: &TurnSummary, elapsed: Duration) -> bool {
        let line = self.result_line(summary, elapsed);
        if self.verbose {
            // A model without known prices has an unknown cost, never $0.
            let cost = self
                .total_cost(summary)
                .map_or_else(|| "unknown".to_string(), |usd| format!("${usd:.4}"));
            eprintln!(
                "usage: {} input, {} output tokens; cost {cost}",
                summary.usage.input_tokens, summary.usage.output_tokens
            );
        }
        let is_error = line.is_error;
        match self.format {
            OutputFormat::Text => {
                if is_error {
                    eprintln!("error: {}", line.result);
                } else {
                    let mut stdout = std::io::stdout().lock();
                    let _ = writeln!(stdout, "{}", line.result);
                    let _ = stdout.flush();
                }
            }
            OutputFormat::Json | OutputFormat::StreamJson => print_line(&Line::Result(line)),
        }
        is_error
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
            print_line(&Line::Result(setup_failure(message, elapsed)));
        }
    }
}

/// The `result` of a run that stopped before any session started: nothing was asked of a
/// model, so nothing was spent.
fn setup_failure(message: &str, elapsed: Duration) -> ResultLine {
    ResultLine {
        subtype: ResultSubtype::ErrorDuringExecution,
        is_error: true,
        result: message.to_owned(),
        stop_reason: None,
        session_id: None,
        num_turns: 0,
        duration_ms: millis(elapsed),
        duration_api_ms: 0,
        total_cost_usd: Some(0.0),
        usage: Usage::default(),
        model_usage: BTreeMap::new(),
        permission_denials: Vec::new(),
        errors: vec![message.to_owned()],
        structured_output: None,
        cairn_tool_calls_from_text: 0,
        uuid: line_uuid(),
    }
}

fn millis(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}

/// Writes one line of JSON output and flushes it, so that a reader sees each line as it
/// happens.
pub(crate) fn print_line(line: &Line) {
    match serde_json::to_string(line) {
        Ok(text) => {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{text}");
            let _ = stdout.flush();
        }
        // The wire types have string keys and no custom serializers: this cannot happen,
        // but a line lost must not pass in silence.
        Err(err) => eprintln!("error: cannot write a stream-json line: {err}"),
    }
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{AgentAddress, ContentBlock, DecisionSource, Message, PermissionDecision};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn session() -> SessionInfo {
        SessionInfo {
            session_id: "s-1".into(),
            cwd: "/work".into(),
            model: "claude-sonnet-4-5".into(),
            tools: vec!["Read".into()],
            api_key_source: "ANTHROPIC_API_KEY",
            permission_mode: "default",
            mcp_servers: Vec::new(),
            slash_commands: Vec::new(),
            agents: Vec::new(),
            skills: Vec::new(),
        }
    }

    fn summary(end: TurnEnd) -> TurnSummary {
        TurnSummary {
            op_id: String::new(),
            end,
            result: "the answer".into(),
            requests: 2,
            usage: Usage::default(),
            cost_usd: 0.0,
            cost_unknown: false,
            duration_api_ms: 7,
        }
    }

    fn from(agent: Option<&str>, event: AgentEvent) -> EventEnvelope {
        EventEnvelope {
            from: AgentAddress {
                agent_id: agent.map(str::to_owned),
                parent_tool_use_id: agent.map(|_| "toolu_agent".to_owned()),
            },
            event,
        }
    }

    fn assistant(
        model: &str,
        stop_reason: StopReason,
        input_tokens: u64,
        output_tokens: u64,
    ) -> AgentEvent {
        AgentEvent::AssistantMessage {
            message: Message {
                role: Role::Assistant,
                content: vec![ContentBlock::text("hi")],
            },
            id: "msg_1".into(),
            model: model.into(),
            stop_reason: Some(stop_reason),
            usage: Usage {
                input_tokens,
                output_tokens,
                ..Usage::default()
            },
            cost_usd: 0.0,
        }
    }

    fn decided(id: &str, allowed: bool) -> AgentEvent {
        AgentEvent::PermissionDecided(PermissionDecision {
            tool_use_id: id.into(),
            tool: "Bash".into(),
            allowed,
            source: DecisionSource::Rule,
            rule: None,
            reason: None,
            input: json!({"command": id}),
        })
    }

    #[test]
    fn each_turn_end_has_claude_codes_subtype() {
        let printer = Printer::new(OutputFormat::Json, false, session());
        let ends = [
            (TurnEnd::Completed, ResultSubtype::Success, false),
            (TurnEnd::MaxTokens, ResultSubtype::Success, false),
            (
                TurnEnd::MaxRequests { limit: 3 },
                ResultSubtype::ErrorMaxTurns,
                true,
            ),
            (
                TurnEnd::Interrupted,
                ResultSubtype::ErrorDuringExecution,
                true,
            ),
            (
                TurnEnd::Failed {
                    message: "overloaded".into(),
                },
                ResultSubtype::ErrorDuringExecution,
                true,
            ),
            (
                TurnEnd::HookBlocked {
                    message: "no".into(),
                },
                ResultSubtype::ErrorDuringExecution,
                true,
            ),
        ];
        for (end, subtype, is_error) in ends {
            let line = printer.result_line(&summary(end.clone()), Duration::ZERO);
            assert_eq!(
                (line.subtype, line.is_error),
                (subtype, is_error),
                "{end:?}"
            );
            let errors = if is_error {
                vec![line.result.clone()]
            } else {
                Vec::new()
            };
            assert_eq!(line.errors, errors, "{end:?}");
        }
    }

    #[test]
    fn the_result_lists_refusals_and_sums_usage_by_model_across_agents() {
        let mut printer = Printer::new(OutputFormat::Json, false, session());
        for envelope in [
            from(
                None,
                assistant("claude-sonnet-4-5", StopReason::ToolUse, 100_000, 25_000),
            ),
            from(None, decided("toolu_allowed", true)),
            from(None, decided("toolu_refused", false)),
            from(
                Some("agent-1"),
                assistant("claude-haiku-4-5", StopReason::EndTurn, 250_000, 50_000),
            ),
            from(Some("agent-1"), decided("toolu_sub_refused", false)),
            from(
                None,
                assistant("claude-sonnet-4-5", StopReason::MaxTokens, 150_000, 25_000),
            ),
            from(
                None,
                assistant("my-proxy-model", StopReason::EndTurn, 10, 1_000),
            ),
        ] {
            printer.event(&envelope);
        }
        let mut line = printer.result_line(&summary(TurnEnd::Completed), Duration::from_millis(42));
        line.uuid.clear();
        let model_usage =
            |input_tokens: u64, output_tokens: u64, cost_usd, window, output| ModelUsage {
                input_tokens,
                output_tokens,
                cache_read_input_tokens: 0,
                cache_creation_input_tokens: 0,
                web_search_requests: 0,
                cost_usd,
                context_window: window,
                max_output_tokens: output,
            };
        assert_eq!(
            line,
            ResultLine {
                subtype: ResultSubtype::Success,
                is_error: false,
                result: "the answer".into(),
                // The main agent's last message, not the sub-agent's.
                stop_reason: Some(StopReason::EndTurn),
                session_id: Some("s-1".into()),
                num_turns: 2,
                duration_ms: 42,
                duration_api_ms: 7,
                // The main turn's summary (none here) plus the sub-agent's haiku request.
                total_cost_usd: Some(0.5),
                usage: Usage::default(),
                model_usage: BTreeMap::from([
                    // 250,000 input tokens at $1 and 50,000 output tokens at $5 per million.
                    (
                        "claude-haiku-4-5".to_owned(),
                        model_usage(250_000, 50_000, Some(0.5), Some(200_000), Some(64_000)),
                    ),
                    // 250,000 input tokens at $3 and 50,000 output tokens at $15 per million.
                    (
                        "claude-sonnet-4-5".to_owned(),
                        model_usage(250_000, 50_000, Some(1.5), Some(200_000), Some(64_000)),
                    ),
                    // Unknown prices: an unknown cost, not $0.
                    (
                        "my-proxy-model".to_owned(),
                        model_usage(10, 1_000, None, None, None),
                    ),
                ]),
                permission_denials: vec![
                    PermissionDenial {
                        tool_name: "Bash".into(),
                        tool_use_id: "toolu_refused".into(),
                        tool_input: json!({"command": "toolu_refused"}),
                    },
                    PermissionDenial {
                        tool_name: "Bash".into(),
                        tool_use_id: "toolu_sub_refused".into(),
                        tool_input: json!({"command": "toolu_sub_refused"}),
                    },
                ],
                errors: Vec::new(),
                structured_output: None,
                cairn_tool_calls_from_text: 0,
                uuid: String::new(),
            }
        );
    }
}
