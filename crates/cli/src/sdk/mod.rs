//! The Agent SDK face (`-p --input-format stream-json --output-format stream-json`): the
//! protocol the official SDKs (Python `claude-agent-sdk`, TypeScript
//! `@anthropic-ai/claude-agent-sdk`) speak with the CLI they start.
//!
//! Standard input carries one JSON object per line: user messages, which run as turns one
//! after another on one session, and the control protocol both ways (the host's
//! `initialize`, `interrupt`, `set_permission_mode`, …; the answers to cairn's `can_use_tool`
//! and `hook_callback`). Standard output carries the stream-json lines of the other faces
//! (the [`wire`](crate::wire) types), a `result` after every turn, and cairn's control lines.
//!
//! ```text
//! stdin ──► input codec ──► SessionInput (turns, interrupts, modes)
//!              │                  │
//!              └─ responses ─► Channel ◄── HostBroker (can_use_tool), HostHooks (hook_callback)
//! Session events ──► Printer + partial stream events ──► stdout
//! ```
//!
//! The session is built once the host's `initialize` arrived (its hooks, agents and system
//! prompt are part of it), or at the first user message when the host sends none.

pub(crate) mod broker;
mod control;
mod host_requests;
mod partial;

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use cairn_config::project_level::Face;
use cairn_core::assembly::Turn;
use cairn_core::{EndReason, Session, SessionInput, StartSource};
use cairn_policy::hooks::{CallbackHooks, HookCallback};
use cairn_protocol::{
    AgentEvent, EventEnvelope, Message, NobodyToAsk, PermissionBroker, Role, TurnEnd, TurnSummary,
};

use crate::args::{Args, OutputFormat, USAGE_STATUS};
use crate::output::{Printer, SessionInfo, print_error_result, print_line};
use crate::wire::{
    ApiRetry, InputLine, Line, ResultSubtype, StreamEventLine, SystemLine, UserInput, UserLine,
    line_uuid,
};

use self::broker::{HostBroker, HostHooks, HostMcp};
use self::control::Channel;
use self::partial::PartialMessages;

/// Runs the SDK face until standard input closes and the last turn has ended.
pub async fn run(args: Args) -> std::process::ExitCode {
    let started = Instant::now();
    if args.output_format != OutputFormat::StreamJson {
        print_error_result(
            args.output_format,
            "--input-format stream-json needs --output-format stream-json",
            started.elapsed(),
        );
        return std::process::ExitCode::from(USAGE_STATUS);
    }
    let mut face = SdkFace::new(args);
    for flag in face.args.ignored_flags() {
        face.debug(&format!("{flag}: accepted; cairn has no use for it"));
    }
    let mut lines = stdin_lines(face.channel.clone());
    let mut line_number = 0usize;
    let mut stdin_open = true;
    loop {
        if !stdin_open && face.turns_left == 0 {
            break;
        }
        tokio::select! {
            line = lines.recv(), if stdin_open => match line {
                Some(Ok(line)) => {
                    line_number += 1;
                    face.input_line(line_number, &line).await;
                }
                Some(Err(err)) => {
                    eprintln!("error: cannot read standard input: {err}");
                    stdin_open = false;
                    face.channel.close();
                }
                None => {
                    stdin_open = false;
                    face.channel.close();
                }
            },
            event = next_event(&mut face.running) => match event {
                Some(envelope) => face.event(envelope),
                None => {
                    eprintln!("error: the engine stopped before the session ended");
                    face.failed = true;
                    break;
                }
            },
        }
    }
    if let Some(running) = face.running.take() {
        for warning in running.session.end(EndReason::Other).await {
            eprintln!("warning: {warning}");
        }
    }
    if face.failed {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}

/// Standard input's lines, read on a thread of their own: a blocking read there never holds
/// up the session, and leaving does not wait for it. The host's answers to cairn's requests
/// go to `channel` at once, so that they arrive while the face itself waits on one (an SDK MCP
/// server's handshake during `initialize`).
fn stdin_lines(
    channel: Arc<Channel>,
) -> tokio::sync::mpsc::UnboundedReceiver<std::io::Result<String>> {
    let (sender, lines) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::stdin().lock().lines() {
            if let Ok(text) = &line
                && let Ok(InputLine::ControlResponse(response)) = serde_json::from_str(text)
            {
                if !channel.answer(response.response) {
                    eprintln!("warning: a control_response answered no open request; ignored");
                }
                continue;
            }
            let failed = line.is_err();
            if sender.send(line).is_err() || failed {
                return;
            }
        }
    });
    lines
}

/// The next event of the session; never, while there is none.
async fn next_event(running: &mut Option<Running>) -> Option<EventEnvelope> {
    match running {
        Some(running) => running.session.next_event().await,
        None => std::future::pending().await,
    }
}

/// A started session and what its turns report.
struct Running {
    session: Session,
    input: SessionInput,
    info: SessionInfo,
    /// What the running turn's `result` reports.
    printer: Printer,
    turn_started: Instant,
    partial: PartialMessages,
    /// The session's cost so far, every agent's requests included.
    spent_usd: f64,
    /// The main agent's last request: the tokens its context held.
    context_tokens: u64,
    /// `--max-budget-usd` was reached: the running turn was interrupted for it.
    over_budget: bool,
    /// The cairn commands (`/help`, …) and custom commands, for `initialize`'s answer.
    commands: Vec<cairn_core::commands::CommandEntry>,
    /// The sub-agents, for `initialize`'s answer.
    agents: Vec<(String, String)>,
    /// The run's model client: what `get_context_usage` asks for a model's window.
    client: Arc<dyn cairn_llm::ModelClient>,
    /// The run's thinking switch, which `set_max_thinking_tokens` sets.
    thinking: cairn_llm::thinking::Thinking,
    /// The run's MCP servers, for `mcp_status`, `mcp_reconnect` and `mcp_toggle`.
    mcp: Option<Arc<cairn_mcp::McpTools>>,
}

/// The face's state across lines.
struct SdkFace {
    args: Args,
    channel: Arc<Channel>,
    /// The session's input for the broker, once it started.
    input_slot: Arc<OnceLock<SessionInput>>,
    /// The run's MCP servers, once started, for a `--permission-prompt-tool` of theirs.
    mcp_slot: Arc<OnceLock<Arc<cairn_mcp::McpTools>>>,
    broker: Arc<dyn PermissionBroker>,
    /// The hooks the host registered in `initialize`.
    hooks: CallbackHooks,
    running: Option<Running>,
    /// Why the session could not be built, once it failed: every turn reports it.
    setup_error: Option<String>,
    /// Turns sent and not yet ended.
    turns_left: usize,
    failed: bool,
}

impl SdkFace {
    fn new(args: Args) -> SdkFace {
        let channel = Arc::new(Channel::default());
        let input_slot = Arc::new(OnceLock::new());
        let mcp_slot = Arc::new(OnceLock::new());
        let broker: Arc<dyn PermissionBroker> = match args.permission_prompt_tool.as_deref() {
            Some("stdio") => Arc::new(HostBroker::new(channel.clone(), input_slot.clone())),
            other => broker::prompt_tool_broker(other, &mcp_slot).unwrap_or(Arc::new(NobodyToAsk)),
        };
        SdkFace {
            args,
            channel,
            input_slot,
            mcp_slot,
            broker,
            hooks: CallbackHooks::default(),
            running: None,
            setup_error: None,
            turns_left: 0,
            failed: false,
        }
    }

    /// A debug line on standard error (`--debug`, `--verbose`) and in `--debug-file`.
    fn debug(&self, message: &str) {
        if self.args.debug.is_some() || self.args.verbose || self.args.debug_to_stderr {
            eprintln!("debug: {message}");
        }
        if let Some(path) = &self.args.debug_file {
            use std::io::Write;
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut file| writeln!(file, "{message}"));
            if let Err(err) = written {
                eprintln!(
                    "warning: cannot write --debug-file {}: {err}",
                    path.display()
                );
            }
        }
    }

    async fn input_line(&mut self, number: usize, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        let parsed = match serde_json::from_str::<InputLine>(line) {
            Ok(parsed) => parsed,
            Err(err) => {
                eprintln!(
                    "error: standard input line {number} is not a stream-json message ({err}); \
                     expected one JSON object per line with \"type\": \"user\", \
                     \"control_request\" or \"control_response\". The line was skipped."
                );
                return;
            }
        };
        match parsed {
            InputLine::User(user) => self.user_message(user).await,
            InputLine::ControlRequest(request) => {
                let answer = self.host_request(&request.request).await;
                control::respond(&request.request_id, answer);
            }
            // Answered on the reading thread already (see `stdin_lines`).
            InputLine::ControlResponse(_) => {}
            // The host's requests are answered at once; there is nothing left to cancel.
            InputLine::ControlCancelRequest(_) | InputLine::KeepAlive => {}
        }
    }

    /// Builds and starts the session, with the hooks the host registered.
    async fn start_session(&mut self) -> Result<(), String> {
        if self.running.is_some() {
            return Ok(());
        }
        if let Some(error) = &self.setup_error {
            return Err(error.clone());
        }
        let callbacks = (!self.hooks.is_empty()).then(|| {
            let caller: Arc<dyn HookCallback> = Arc::new(HostHooks::new(self.channel.clone()));
            (std::mem::take(&mut self.hooks), caller)
        });
        let prepared = crate::setup::prepare_for_host(
            &self.args,
            Face::Headless,
            self.broker.clone(),
            crate::setup::HostParts {
                callbacks,
                sdk_mcp: Some(Arc::new(HostMcp::new(self.channel.clone()))),
                elicitation: None,
            },
        );
        let mut prepared = match prepared {
            Ok(prepared) => prepared,
            Err(err) => {
                let error = format!("{err:#}");
                eprintln!("error: {error}");
                self.setup_error = Some(error.clone());
                self.failed = true;
                return Err(error);
            }
        };
        crate::mcp::settle(
            prepared.mcp.as_ref(),
            &mut prepared.session,
            self.args.verbose,
        )
        .await;
        for warning in &prepared.instruction_warnings {
            eprintln!("warning: {warning}");
        }
        let commands = cairn_core::commands::CommandTable::load(&prepared.cwd, &prepared.home)
            .entries()
            .to_vec();
        let agents = prepared
            .host
            .agents()
            .map(|catalog| {
                catalog
                    .profiles()
                    .iter()
                    .map(|profile| (profile.name.clone(), profile.description.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let source = if prepared.resumed {
            StartSource::Resume
        } else {
            StartSource::Startup
        };
        let session = prepared.host.start(source).await;
        let input = session.input();
        let _ = self.input_slot.set(input.clone());
        if let Some(mcp) = &prepared.mcp {
            let _ = self.mcp_slot.set(mcp.clone());
        }
        let info = prepared.session;
        self.running = Some(Running {
            printer: Printer::new(OutputFormat::StreamJson, self.args.verbose, info.clone())
                .with_client(prepared.client.clone()),
            session,
            input,
            info,
            turn_started: Instant::now(),
            partial: PartialMessages::default(),
            spent_usd: 0.0,
            context_tokens: 0,
            over_budget: false,
            commands,
            agents,
            client: prepared.client,
            thinking: prepared.thinking,
            mcp: prepared.mcp,
        });
        Ok(())
    }

    async fn user_message(&mut self, user: UserInput) {
        if let Err(error) = self.start_session().await {
            print_line(&Line::Result(failed_result(&error)));
            return;
        }
        let Some(running) = self.running.as_mut() else {
            return;
        };
        let content = user.message.content.into_blocks();
        if self.args.replay_user_messages {
            print_line(&Line::User(UserLine {
                message: Message {
                    role: Role::User,
                    content: content.clone(),
                },
                parent_tool_use_id: user.parent_tool_use_id,
                session_id: running.info.session_id.clone(),
                uuid: line_uuid(),
            }));
        }
        if user.message.role != Role::User {
            eprintln!(
                "warning: a stream-json user line's message has role assistant; sent as the user's"
            );
        }
        if running.input.submit(Turn::message(content)).is_err() {
            eprintln!("error: the engine stopped before the message was sent");
            self.failed = true;
            return;
        }
        if self.turns_left == 0 {
            running.printer.start();
            running.turn_started = Instant::now();
        }
        self.turns_left += 1;
    }

    fn event(&mut self, envelope: EventEnvelope) {
        let Some(running) = self.running.as_mut() else {
            return;
        };
        if self.args.include_partial_messages {
            for event in running.partial.events(&envelope, &running.info.model) {
                print_line(&Line::StreamEvent(StreamEventLine {
                    event,
                    parent_tool_use_id: envelope.from.parent_tool_use_id.clone(),
                    session_id: running.info.session_id.clone(),
                    uuid: line_uuid(),
                }));
            }
        }
        match &envelope.event {
            AgentEvent::TurnFinished(summary) if envelope.from.is_main() => {
                self.turn_finished(summary);
                return;
            }
            AgentEvent::AssistantMessage {
                cost_usd, usage, ..
            } => {
                running.spent_usd += cost_usd;
                if envelope.from.is_main() {
                    running.context_tokens = usage.input_tokens
                        + usage.cache_read_input_tokens
                        + usage.cache_creation_input_tokens
                        + usage.output_tokens;
                }
                if let Some(budget) = self.args.max_budget_usd
                    && running.spent_usd >= budget
                    && !running.over_budget
                {
                    running.over_budget = true;
                    let _ = running.input.send(cairn_protocol::Op::Interrupt);
                }
            }
            AgentEvent::Retrying(notice) if envelope.from.is_main() => {
                print_line(&Line::System(SystemLine::ApiRetry(ApiRetry {
                    attempt: notice.attempt,
                    max_retries: notice.max_attempts,
                    retry_delay_ms: notice.delay_ms,
                    error_status: None,
                    error: notice.reason.clone(),
                    session_id: running.info.session_id.clone(),
                    uuid: line_uuid(),
                })));
            }
            AgentEvent::ModelChanged { model } => running.info.model = model.clone(),
            AgentEvent::PermissionModeChanged { mode } => {
                running.info.permission_mode = mode.as_str();
            }
            _ => {}
        }
        running.printer.event(&envelope);
    }

    fn turn_finished(&mut self, summary: &TurnSummary) {
        let Some(running) = self.running.as_mut() else {
            return;
        };
        let mut line = running
            .printer
            .result_line(summary, running.turn_started.elapsed());
        if running.over_budget
            && let Some(budget) = self.args.max_budget_usd
        {
            line.subtype = ResultSubtype::ErrorMaxBudgetUsd;
            line.is_error = true;
            line.result = format!("Reached the maximum budget (${budget}).");
            line.errors = vec![line.result.clone()];
        }
        print_line(&Line::Result(line));
        self.turns_left = self.turns_left.saturating_sub(1);
        running.printer = Printer::new(
            OutputFormat::StreamJson,
            self.args.verbose,
            running.info.clone(),
        );
        if self.turns_left > 0 {
            running.printer.start();
            running.turn_started = Instant::now();
        }
    }
}

/// The `result` of a turn that could not run because the session could not be built.
fn failed_result(error: &str) -> crate::wire::ResultLine {
    let summary = TurnSummary {
        op_id: String::new(),
        end: TurnEnd::Failed {
            message: error.to_owned(),
        },
        result: String::new(),
        requests: 0,
        usage: Default::default(),
        cost_usd: 0.0,
        cost_unknown: false,
        duration_api_ms: 0,
    };
    let info = SessionInfo {
        session_id: String::new(),
        cwd: String::new(),
        model: String::new(),
        tools: Vec::new(),
        api_key_source: "none",
        permission_mode: "default",
        mcp_servers: Vec::new(),
        slash_commands: Vec::new(),
        agents: Vec::new(),
        skills: Vec::new(),
    };
    let mut line = Printer::new(OutputFormat::StreamJson, false, info)
        .result_line(&summary, std::time::Duration::ZERO);
    line.session_id = None;
    line
}
