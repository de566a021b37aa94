//! Headless mode (`cairn -p`): one prompt in, the answer out, then exit.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use anyhow::Context;
use cairn_core::ChannelSink;
use cairn_core::assembly::{self, Turn};
use cairn_policy::Asking;
use cairn_policy::hooks::HookEvent;
use cairn_protocol::{AgentAddress, AgentEvent, ContentBlock, EventEnvelope, EventSender, Op};
use cairn_tools::SessionState;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::mpsc;

use crate::args::{Args, USAGE_STATUS, UsageError};
use crate::output::{Printer, print_error_result};
use crate::setup::{Prepared, prepare, run_session_hook};

pub async fn run(args: Args) -> ExitCode {
    let started = Instant::now();
    let prepared = read_prompt(args.prompt.as_deref())
        .and_then(|prompt| Ok((prompt, prepare(&args, Asking::NonInteractive)?)));
    let (
        prompt,
        Prepared {
            engine,
            session,
            tool_state,
            governance,
            resumed,
            cwd,
            home,
            instruction_warnings,
            mcp,
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
    // `/compact [instructions]` compacts the session (continued with -c or --resume).
    let compact = assembly::compact_request(&prompt);
    // `/name args` runs the project's or the user's custom command of that name.
    let command = assembly::custom_command_turn(&prompt, &cwd, &home);
    for warning in &command.warnings {
        eprintln!("warning: {warning}");
    }
    let mut turn = command
        .turn
        .unwrap_or_else(|| Turn::message(vec![ContentBlock::text(prompt)]));
    // SessionStart hooks may add context to the first prompt.
    let source = if resumed { "resume" } else { "startup" };
    let mut input = serde_json::Map::new();
    input.insert("source".into(), source.into());
    turn.add_context(
        run_session_hook(&governance, HookEvent::SessionStart, Some(source), input).await,
    );
    // MCP servers get a short moment to connect before the first request.
    let mut session = session;
    crate::mcp::settle(mcp.as_ref(), &mut session, args.verbose).await;
    let (ops, op_receiver) = mpsc::unbounded_channel();
    let (events, mut event_receiver) = mpsc::unbounded_channel::<EventEnvelope>();
    tokio::spawn(engine.run(op_receiver, EventSender::new(Arc::new(ChannelSink(events)))));
    let stopped_by = watch_stop_signals(ops.clone(), tool_state.clone());
    let op = match compact {
        Some(instructions) => Op::compact(instructions),
        None => turn.into_op(),
    };
    if ops.send(op).is_err() {
        eprintln!("error: the engine stopped before the prompt was sent");
        return ExitCode::FAILURE;
    }

    let mut printer = Printer::new(args.output_format, args.verbose, session);
    printer.start();
    for message in instruction_warnings {
        printer.event(&EventEnvelope {
            from: AgentAddress::default(),
            event: AgentEvent::Warning { message },
        });
    }
    let mut code = None;
    while let Some(envelope) = event_receiver.recv().await {
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
    // Background shells do not outlive cairn.
    tool_state.shells.kill_all();
    let mut input = serde_json::Map::new();
    input.insert("reason".into(), "other".into());
    run_session_hook(&governance, HookEvent::SessionEnd, Some("other"), input).await;
    if let Some(status) = stopped_by.get().and_then(|signal| signal.exit_status()) {
        return ExitCode::from(status);
    }
    code.unwrap_or_else(|| {
        eprintln!("error: the engine stopped without finishing the turn");
        ExitCode::FAILURE
    })
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
fn watch_stop_signals(
    ops: mpsc::UnboundedSender<Op>,
    tool_state: Arc<SessionState>,
) -> Arc<OnceLock<StopSignal>> {
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
                tool_state.shells.kill_all();
                let status = match (earlier, signal) {
                    (StopSignal::Interrupt, StopSignal::Interrupt) => INTERRUPTED_STATUS,
                    (StopSignal::Terminate, _) | (_, StopSignal::Terminate) => TERMINATED_STATUS,
                };
                std::process::exit(i32::from(status));
            }
            let _ = seen.set(signal);
            let _ = ops.send(Op::Interrupt);
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
