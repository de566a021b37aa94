//! Headless mode (`cairn -p`): one prompt in, the answer out, then exit.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use anyhow::Context;
use cairn_config::project_level::Face;
use cairn_core::assembly::{self, Turn};
use cairn_core::{EndReason, SessionInput, StartSource};
use cairn_protocol::{AgentAddress, AgentEvent, ContentBlock, EventEnvelope, NobodyToAsk, Op};
use cairn_tools::SessionState;
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::args::{Args, USAGE_STATUS, UsageError};
use crate::output::{Printer, print_error_result};
use crate::setup::{Prepared, prepare};

pub async fn run(args: Args) -> ExitCode {
    let started = Instant::now();
    // Nobody can answer a permission question in `-p`.
    let prepared = read_prompt(args.prompt.as_deref()).and_then(|prompt| {
        Ok((
            prompt,
            prepare(&args, Face::Headless, Arc::new(NobodyToAsk))?,
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
    let turn = command
        .turn
        .unwrap_or_else(|| Turn::message(vec![ContentBlock::text(prompt)]));
    // MCP servers get a short moment to connect before the first request.
    crate::mcp::settle(mcp.as_ref(), &mut info, args.verbose).await;
    let source = if resumed {
        StartSource::Resume
    } else {
        StartSource::Startup
    };
    let mut printer = Printer::new(args.output_format, args.verbose, info);
    printer.start();
    for message in instruction_warnings {
        printer.event(&EventEnvelope {
            from: AgentAddress::default(),
            event: AgentEvent::Warning { message },
        });
    }
    let mut session = host.start(source).await;
    let input = session.input();
    let stopped_by = watch_stop_signals(input.clone(), session.background_shells());
    let sent = match compact {
        Some(instructions) => input.compact(instructions),
        None => input.submit(turn),
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
    input: SessionInput,
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
