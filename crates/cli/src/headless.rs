//! Headless mode (`cairn -p`): one prompt in, the answer out, then exit.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use cairn_core::{Engine, EngineConfig};
use cairn_llm::{AnthropicClient, AnthropicConfig, models};
use cairn_protocol::{AgentEvent, ContentBlock, Op};
use cairn_tools::{ToolContext, ToolExecutor, ToolRegistry};
use tokio::sync::mpsc;

use crate::args::Args;
use crate::output::{Printer, SessionInfo};

/// A short identity until the context layer builds the full system prompt.
const SYSTEM_PROMPT: &str = "You are cairn, a coding agent working in the user's terminal. \
Use the tools you are given to read the code before you answer, and answer concisely.";

const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 32_000;

pub async fn run(args: Args) -> ExitCode {
    let started = Instant::now();
    if !args.print {
        eprintln!(
            "cairn: the interactive terminal UI is not built yet. Run `cairn -p \"your prompt\"` \
             for headless mode (see `cairn --help`)."
        );
        return ExitCode::from(2);
    }
    let (engine, session, prompt) = match prepare(&args) {
        Ok(prepared) => prepared,
        Err(err) => {
            eprintln!("error: {err:#}");
            return ExitCode::FAILURE;
        }
    };
    let (ops, op_receiver) = mpsc::unbounded_channel();
    let (events, mut event_receiver) = mpsc::unbounded_channel::<AgentEvent>();
    tokio::spawn(async move {
        let mut sink = events;
        engine.run(op_receiver, &mut sink).await
    });
    watch_interrupts(ops.clone());
    if ops
        .send(Op::UserMessage {
            content: vec![ContentBlock::text(prompt)],
        })
        .is_err()
    {
        eprintln!("error: the engine stopped before the prompt was sent");
        return ExitCode::FAILURE;
    }

    let mut printer = Printer::new(args.output_format, args.verbose, session);
    printer.start();
    while let Some(event) = event_receiver.recv().await {
        if let AgentEvent::TurnFinished(summary) = &event {
            let failed = printer.finish(summary, started.elapsed());
            return if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
        printer.event(&event);
    }
    eprintln!("error: the engine stopped without finishing the turn");
    ExitCode::FAILURE
}

/// Everything a headless run needs before the first request: the prompt, the credentials,
/// the tools and the engine.
fn prepare(args: &Args) -> anyhow::Result<(Engine, SessionInfo, String)> {
    let prompt = read_prompt(args.prompt.as_deref())?;
    let config = AnthropicConfig::from_env()?;
    let api_key_source = config.credential.variable();
    let client = AnthropicClient::new(config)?;
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let model = models::resolve_model(
        &args
            .model
            .clone()
            .or_else(|| std::env::var("ANTHROPIC_MODEL").ok())
            .unwrap_or_else(|| models::DEFAULT_MODEL.to_string()),
    );
    let max_output_tokens = match std::env::var("CLAUDE_CODE_MAX_OUTPUT_TOKENS") {
        Ok(value) => value.trim().parse().with_context(|| {
            format!("CLAUDE_CODE_MAX_OUTPUT_TOKENS must be a whole number of tokens, not {value:?}")
        })?,
        Err(_) => DEFAULT_MAX_OUTPUT_TOKENS,
    };
    let tools = ToolRegistry::with_builtins(ToolContext { cwd: cwd.clone() });
    let session = SessionInfo {
        session_id: uuid::Uuid::new_v4().to_string(),
        cwd: cwd.display().to_string(),
        model: model.clone(),
        tools: tools.specs().into_iter().map(|spec| spec.name).collect(),
        api_key_source,
    };
    let engine = Engine::new(
        Arc::new(client),
        Arc::new(tools),
        EngineConfig {
            model,
            system_prompt: SYSTEM_PROMPT.to_string(),
            max_turns: args.max_turns,
            max_output_tokens,
        },
    );
    Ok((engine, session, prompt))
}

/// Turns the first Ctrl-C into an interrupt of the running turn (which then reports and
/// exits); a second one leaves at once. The handler is registered before this returns, so a
/// signal that arrives while the first request is in flight is never missed.
fn watch_interrupts(ops: mpsc::UnboundedSender<Op>) {
    #[cfg(unix)]
    let mut signals = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
    {
        Ok(signals) => signals,
        Err(err) => {
            eprintln!("warning: cannot watch for Ctrl-C: {err}");
            return;
        }
    };
    tokio::spawn(async move {
        let mut interrupted = false;
        loop {
            #[cfg(unix)]
            let received = signals.recv().await.is_some();
            #[cfg(not(unix))]
            let received = tokio::signal::ctrl_c().await.is_ok();
            if !received {
                return;
            }
            if interrupted {
                std::process::exit(130);
            }
            interrupted = true;
            let _ = ops.send(Op::Interrupt);
        }
    });
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
