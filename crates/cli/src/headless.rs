//! Headless mode (`cairn -p`): one prompt in, the answer out, then exit.

use std::io::{IsTerminal, Read};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context;
use cairn_config::project_level::Face;
use cairn_core::assembly::Turn;
use cairn_core::commands::{CommandTable, CommandTurn, Report, Resolved};
use cairn_core::reports::{self, ContextFacts, CostFacts, StatusFacts, doctor};
use cairn_core::{BackgroundShells, EndReason, SessionHost, SessionInput, StartSource};
use cairn_protocol::{
    AgentAddress, AgentEvent, ContentBlock, EventEnvelope, NobodyToAsk, Op, TurnEnd, TurnSummary,
    Usage,
};
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::args::{Args, USAGE_STATUS, UsageError};
use crate::output::{Printer, SessionInfo, print_error_result};
use crate::setup::{Prepared, prepare};

pub async fn run(args: Args) -> ExitCode {
    let started = Instant::now();
    // Nobody can answer a permission question in `-p`, unless `--permission-prompt-tool`
    // names an MCP tool to ask (`stdio` needs the SDK face).
    let mcp_slot = Arc::new(OnceLock::new());
    let broker = match args.permission_prompt_tool.as_deref() {
        Some("stdio") => None,
        other => crate::sdk::broker::prompt_tool_broker(other, &mcp_slot),
    };
    let prepared = read_prompt(args.prompt.as_deref()).and_then(|prompt| {
        Ok((
            prompt,
            prepare(
                &args,
                Face::Headless,
                broker.unwrap_or_else(|| Arc::new(NobodyToAsk)),
            )?,
        ))
    });
    let (
        prompt,
        Prepared {
            host,
            session: mut info,
            resumed,
            cwd,
            home,
            instruction_warnings,
            mcp,
            settings_sources,
            unsupported,
            client,
            ..
        },
    ) = match prepared {
        Ok(prepared) => prepared,
        Err(err) => {
            print_error_result(args.output_format, &format!("{err:#}"), started.elapsed());
            return if err.is::<UsageError>() {
                ExitCode::from(USAGE_STATUS)
            } else {
                ExitCode::FAILURE
            };
        }
    };
    if let Some(mcp) = &mcp {
        let _ = mcp_slot.set(mcp.clone());
    }
    // A slash line is resolved by the table every face parses with: the engine's work (a
    // compaction, a custom command's turn), a report answered here, or an error; never a
    // prompt for the model.
    let table = crate::mcp::command_table(&prompt, &cwd, &home, mcp.as_ref()).await;
    let work = match table.resolve(&prompt, &cwd) {
        Resolved::Message => Work::Message(Turn::message(vec![ContentBlock::text(prompt)])),
        Resolved::McpPrompt(call) => match (call.error(), mcp.as_ref()) {
            (None, Some(_)) => Work::McpPrompt(call),
            (Some(error), _) => {
                print_error_result(args.output_format, &error.to_string(), started.elapsed());
                return ExitCode::FAILURE;
            }
            (None, None) => {
                print_error_result(args.output_format, "no MCP servers", started.elapsed());
                return ExitCode::FAILURE;
            }
        },
        Resolved::Turn(CommandTurn::Prompt { turn, .. }) => Work::Turn(turn),
        // `/compact [instructions]` compacts the session (continued with -c or --resume).
        Resolved::Turn(CommandTurn::Compact { instructions }) => Work::Compact(instructions),
        // `/mcp [reconnect|enable|disable <server>]`: the report, or the action's outcome.
        Resolved::Report {
            report: Report::Mcp,
            arguments,
        } => {
            return match crate::mcp::run_command(mcp.as_ref(), &arguments).await {
                Ok(text) => print_report(&args, info.clone(), &text, started),
                Err(message) => {
                    print_error_result(args.output_format, &message, started.elapsed());
                    ExitCode::FAILURE
                }
            };
        }
        // `/doctor`: the installation's checks, then each MCP server's once its start ended.
        Resolved::Report {
            report: Report::Doctor,
            ..
        } => {
            let mut checks = doctor::run_checks(&doctor::DoctorFacts {
                version: env!("CARGO_PKG_VERSION"),
                home: &home,
                cwd: &cwd,
                credential_variable: info.api_key_source,
            });
            checks.extend(crate::mcp::doctor_checks(mcp.as_ref(), &args, &cwd, &home).await);
            return print_report(&args, info.clone(), &doctor::render(&checks), started);
        }
        Resolved::Report { report, .. } => {
            let facts = RunFacts {
                mcp: mcp.as_ref(),
                client: client.as_ref(),
                host: &host,
                info: &info,
                cwd: &cwd,
                home: &home,
                settings_sources: &settings_sources,
                elapsed: started.elapsed(),
            };
            return print_report(&args, info.clone(), &report_text(report, &facts), started);
        }
        refused @ (Resolved::Interactive { .. } | Resolved::Unknown { .. }) => {
            if let Resolved::Unknown { warnings, .. } = &refused {
                for warning in warnings {
                    eprintln!("warning: {warning}");
                }
            }
            let message = refused.error().map_or_else(
                || "this command cannot run here".to_string(),
                |e| e.to_string(),
            );
            print_error_result(args.output_format, &message, started.elapsed());
            return ExitCode::FAILURE;
        }
    };
    // MCP servers get a short moment to connect before the first request.
    crate::mcp::settle(mcp.as_ref(), &mut info, args.verbose).await;
    let mut mcp_warnings = Vec::new();
    let work = match work {
        Work::Message(mut turn) => {
            mcp_warnings = crate::mcp::attach_mentions(mcp.as_ref(), &mut turn).await;
            Ready::Turn(turn)
        }
        Work::McpPrompt(call) => {
            let fetched = match mcp.as_ref() {
                Some(mcp) => {
                    crate::mcp::prompt_turn(mcp, &call, tokio_util::sync::CancellationToken::new())
                        .await
                        .map_err(|err| format!("{}: {err}", call.shown))
                }
                None => Err(format!("{}: no MCP servers", call.shown)),
            };
            match fetched {
                Ok(turn) => Ready::Turn(turn),
                Err(message) => {
                    print_error_result(args.output_format, &message, started.elapsed());
                    return ExitCode::FAILURE;
                }
            }
        }
        Work::Turn(turn) => Ready::Turn(turn),
        Work::Compact(instructions) => Ready::Compact(instructions),
    };
    let source = if resumed {
        StartSource::Resume
    } else {
        StartSource::Startup
    };
    let mut printer = Printer::new(args.output_format, args.verbose, info).with_client(client);
    printer.start();
    if let Some(note) = unsupported.filter(|_| args.verbose) {
        eprintln!("note: {note}");
    }
    for message in instruction_warnings.into_iter().chain(mcp_warnings) {
        printer.event(&EventEnvelope {
            from: AgentAddress::default(),
            event: AgentEvent::Warning { message },
        });
    }
    let mut session = host.start(source).await;
    let input = session.input();
    let stopped_by = watch_stop_signals(input.clone(), session.background_shells());
    let sent = match work {
        Ready::Turn(turn) => input.submit(turn),
        Ready::Compact(instructions) => input.compact(instructions),
    };
    let mut code = None;
    if sent.is_err() {
        eprintln!("error: the engine stopped before the prompt was sent");
        code = Some(ExitCode::FAILURE);
    }
    while code.is_none()
        && let Some(envelope) = session.next_event().await
    {
        // The main agent's turn ends the run; a sub-agent's ends only its own call.
        if let (true, AgentEvent::TurnFinished(summary)) =
            (envelope.from.is_main(), &envelope.event)
        {
            let failed = printer.finish(summary, started.elapsed());
            code = Some(if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            });
            break;
        }
        printer.event(&envelope);
    }
    for warning in session.end(EndReason::Other).await {
        eprintln!("warning: {warning}");
    }
    if let Some(status) = stopped_by.get().and_then(|signal| signal.exit_status()) {
        return ExitCode::from(status);
    }
    code.unwrap_or_else(|| {
        eprintln!("error: the engine stopped without finishing the turn");
        ExitCode::FAILURE
    })
}

/// What a `-p` run's line asks the engine for.
enum Work {
    Turn(Turn),
    /// A message, whose `@server:uri` mentions are attached once the servers had their moment.
    Message(Turn),
    /// An MCP prompt, fetched from its server once the servers had their moment.
    McpPrompt(cairn_core::commands::McpPromptCall),
    Compact(Option<String>),
}

/// What the engine is sent, once mentions are attached and an MCP prompt fetched.
enum Ready {
    Turn(Turn),
    Compact(Option<String>),
}

/// What a `-p` run knows when a report is asked for, before any request.
struct RunFacts<'a> {
    host: &'a SessionHost,
    /// The run's model client: what it knows of the model's window.
    client: &'a dyn cairn_llm::ModelClient,
    mcp: Option<&'a Arc<cairn_mcp::McpTools>>,
    info: &'a SessionInfo,
    cwd: &'a Path,
    home: &'a Path,
    settings_sources: &'a [String],
    elapsed: Duration,
}

/// The text of `report` for this run, written by the same code as the interactive UI's. A
/// `-p` run has made no request yet, so `/cost` reports none and `/context` estimates.
fn report_text(report: Report, facts: &RunFacts<'_>) -> String {
    match report {
        Report::Help => reports::help_text(&CommandTable::load(facts.cwd, facts.home)),
        Report::Cost => reports::cost_report(&CostFacts {
            usage: Usage::default(),
            cost_usd: 0.0,
            cost_unknown: false,
            session_time: facts.elapsed,
            agents: &[],
        }),
        Report::Context => {
            let config = facts.host.engine().config();
            let system_prompt = config.system_prompt.system_prompt();
            reports::context_report(&ContextFacts {
                system_prompt: Some(&system_prompt),
                tools: &facts.host.spawner().tools().specs(),
                conversation: facts.host.engine().messages(),
                last_request: None,
                window: facts.client.model_info(&config.model).context_window,
            })
        }
        Report::Status => reports::status_report(&StatusFacts {
            version: env!("CARGO_PKG_VERSION"),
            model: &facts.info.model,
            credential_variable: facts.info.api_key_source,
            permission_mode: facts.info.permission_mode,
            cwd: facts.cwd,
            session_id: &facts.info.session_id,
            settings_sources: Ok(facts.settings_sources),
        }),
        Report::Agents => reports::agents_report(facts.host.agents()),
        Report::Doctor => doctor::render(&doctor::run_checks(&doctor::DoctorFacts {
            version: env!("CARGO_PKG_VERSION"),
            home: facts.home,
            cwd: facts.cwd,
            credential_variable: facts.info.api_key_source,
        })),
        Report::Skills => cairn_core::skill::skills_report(facts.cwd, facts.home),
        Report::Mcp => facts.mcp.map_or_else(
            || "No MCP servers are configured here.".to_string(),
            |mcp| mcp.report_text(),
        ),
    }
}

/// Prints a report as the run's answer: the text on standard output, or in json and
/// stream-json the result object (after the init line) that a turn would end with.
fn print_report(args: &Args, info: SessionInfo, text: &str, started: Instant) -> ExitCode {
    let mut printer = Printer::new(args.output_format, args.verbose, info);
    printer.start();
    let summary = TurnSummary {
        op_id: String::new(),
        end: TurnEnd::Completed,
        result: text.to_string(),
        requests: 0,
        usage: Usage::default(),
        cost_usd: 0.0,
        cost_unknown: false,
        duration_api_ms: 0,
    };
    printer.finish(&summary, started.elapsed());
    ExitCode::SUCCESS
}

/// The exit status after SIGTERM or SIGHUP, as the interactive UI exits and as a shell
/// reports a process killed by SIGTERM.
const TERMINATED_STATUS: u8 = 143;
/// The exit status when a second Ctrl-C leaves at once.
const INTERRUPTED_STATUS: u8 = 130;

/// A signal that stops a `-p` run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StopSignal {
    /// SIGINT: Ctrl-C.
    Interrupt,
    /// SIGTERM, or SIGHUP (the terminal closed).
    Terminate,
}

impl StopSignal {
    /// The exit status a run stopped by this signal ends with, once its result is printed;
    /// `None` keeps the run's own (1: the turn ended in an error).
    fn exit_status(self) -> Option<u8> {
        match self {
            StopSignal::Interrupt => None,
            StopSignal::Terminate => Some(TERMINATED_STATUS),
        }
    }
}

/// Turns the first SIGINT, SIGTERM or SIGHUP into an interrupt of the running turn: the
/// running command's whole process group is killed, and the turn reports and exits (see
/// [`StopSignal::exit_status`]). A second one kills the background shells and leaves at once.
/// The handlers are registered before this returns, so a signal that arrives while the first
/// request is in flight is never missed. Returns the first signal once it has come.
fn watch_stop_signals(input: SessionInput, shells: BackgroundShells) -> Arc<OnceLock<StopSignal>> {
    let first = Arc::new(OnceLock::new());
    let mut signals = match StopSignals::register() {
        Ok(signals) => signals,
        Err(err) => {
            eprintln!("warning: cannot watch for Ctrl-C, SIGTERM and SIGHUP: {err}");
            return first;
        }
    };
    let seen = Arc::clone(&first);
    tokio::spawn(async move {
        while let Some(signal) = signals.next().await {
            if let Some(earlier) = seen.get() {
                shells.kill_all();
                let status = match (earlier, signal) {
                    (StopSignal::Interrupt, StopSignal::Interrupt) => INTERRUPTED_STATUS,
                    (StopSignal::Terminate, _) | (_, StopSignal::Terminate) => TERMINATED_STATUS,
                };
                std::process::exit(i32::from(status));
            }
            let _ = seen.set(signal);
            let _ = input.send(Op::Interrupt);
        }
    });
    first
}

/// The signals that stop a `-p` run, registered together.
struct StopSignals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl StopSignals {
    fn register() -> std::io::Result<StopSignals> {
        Ok(StopSignals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// The next signal; `None` once none can come.
    async fn next(&mut self) -> Option<StopSignal> {
        tokio::select! {
            received = self.interrupt.recv() => received.map(|()| StopSignal::Interrupt),
            received = self.terminate.recv() => received.map(|()| StopSignal::Terminate),
            received = self.hangup.recv() => received.map(|()| StopSignal::Terminate),
        }
    }
}

/// The prompt from the argument and, when standard input is piped, from standard input.
fn read_prompt(argument: Option<&str>) -> anyhow::Result<String> {
    let mut piped = String::new();
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        stdin
            .lock()
            .read_to_string(&mut piped)
            .context("cannot read standard input")?;
    }
    let parts: Vec<&str> = [argument.unwrap_or(""), piped.trim_end()]
        .into_iter()
        .filter(|part| !part.trim().is_empty())
        .collect();
    if parts.is_empty() {
        anyhow::bail!("no prompt: give one as an argument (cairn -p \"…\") or on standard input");
    }
    Ok(parts.join("\n\n"))
}
