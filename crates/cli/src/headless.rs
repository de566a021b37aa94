//! Headless mode (`cairn -p`): one prompt in, the answer out, then exit.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use cairn_context::PromptBuilder;
use cairn_core::{Engine, EngineConfig, Governance};
use cairn_llm::{AnthropicClient, AnthropicConfig, models};
use cairn_policy::hooks::HookEvent;
use cairn_protocol::{AgentEvent, ContentBlock, Op};
use cairn_session::{SessionLog, entry_for};
use cairn_tools::{SessionState, ToolContext, ToolExecutor, ToolRegistry};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use cairn_config::{LoadedSettings, PermissionMode};

use crate::args::Args;
use crate::governance::{GovernanceInputs, build_governance};
use crate::output::{Printer, SessionInfo};
use crate::prompt::prompt_options;
use crate::session::{open_session, start_cleanup};
use crate::settings::load_settings;

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
    let Prepared {
        engine,
        session,
        prompt,
        tool_state,
        mut log,
        governance,
        resumed,
    } = match prepare(&args) {
        Ok(prepared) => prepared,
        Err(err) => {
            eprintln!("error: {err:#}");
            return ExitCode::FAILURE;
        }
    };
    // SessionStart hooks may add context to the first prompt.
    let mut content = vec![ContentBlock::text(prompt)];
    let source = if resumed { "resume" } else { "startup" };
    let mut input = serde_json::Map::new();
    input.insert("source".into(), source.into());
    for context in run_session_hook(&governance, HookEvent::SessionStart, Some(source), input).await
    {
        content.push(ContentBlock::text(format!(
            "<system-reminder>\n{context}\n</system-reminder>"
        )));
    }
    let (ops, op_receiver) = mpsc::unbounded_channel();
    let (events, mut event_receiver) = mpsc::unbounded_channel::<AgentEvent>();
    tokio::spawn(async move {
        let mut sink = events;
        engine.run(op_receiver, &mut sink).await
    });
    watch_interrupts(ops.clone(), tool_state.clone());
    if ops.send(Op::UserMessage { content }).is_err() {
        eprintln!("error: the engine stopped before the prompt was sent");
        return ExitCode::FAILURE;
    }

    let mut printer = Printer::new(args.output_format, args.verbose, session);
    printer.start();
    let mut code = None;
    while let Some(event) = event_receiver.recv().await {
        if let Some(entry) = entry_for(&event) {
            log.append(&entry);
        }
        if let AgentEvent::TurnFinished(summary) = &event {
            log.sync();
            let failed = printer.finish(summary, started.elapsed());
            code = Some(if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            });
            break;
        }
        printer.event(&event);
    }
    if let Some(warning) = log.take_warning() {
        eprintln!("warning: {warning}; the rest of this session is kept in memory only");
    }
    // Background shells do not outlive cairn.
    tool_state.shells.kill_all();
    let mut input = serde_json::Map::new();
    input.insert("reason".into(), "other".into());
    run_session_hook(&governance, HookEvent::SessionEnd, Some("other"), input).await;
    code.unwrap_or_else(|| {
        eprintln!("error: the engine stopped without finishing the turn");
        ExitCode::FAILURE
    })
}

/// What a headless run is made of.
struct Prepared {
    engine: Engine,
    session: SessionInfo,
    prompt: String,
    /// The tools' session state, for stopping background shells on the way out.
    tool_state: Arc<SessionState>,
    /// The transcript every event that matters is appended to.
    log: SessionLog,
    /// For the session hooks the CLI runs itself (SessionStart, SessionEnd).
    governance: Governance,
    /// The run continues an earlier session.
    resumed: bool,
}

/// Runs SessionStart or SessionEnd hooks, printing what they say for the user; returns the
/// context they add.
async fn run_session_hook(
    governance: &Governance,
    event: HookEvent,
    subject: Option<&str>,
    input: serde_json::Map<String, serde_json::Value>,
) -> Vec<String> {
    let mut notes: Vec<AgentEvent> = Vec::new();
    let outcome = governance
        .run_hooks(event, subject, input, &mut notes, &CancellationToken::new())
        .await;
    for note in notes {
        if let AgentEvent::Warning { message } = note {
            eprintln!("warning: {message}");
        }
    }
    outcome
        .map(|outcome| outcome.additional_context)
        .unwrap_or_default()
}

/// The model the flags, environment and settings ask for (in that order), aliases resolved.
pub fn chosen_model(args: &Args, settings: &LoadedSettings) -> String {
    models::resolve_model(
        &args
            .model
            .clone()
            .or_else(|| std::env::var("ANTHROPIC_MODEL").ok())
            .or_else(|| settings.settings().model.clone())
            .unwrap_or_else(|| models::DEFAULT_MODEL.to_string()),
    )
}

/// Everything a headless run needs before the first request: the prompt, the credentials,
/// the tools and the engine.
fn prepare(args: &Args) -> anyhow::Result<Prepared> {
    let prompt = read_prompt(args.prompt.as_deref())?;
    let config = AnthropicConfig::from_env()?;
    let api_key_source = config.credential.variable();
    let client = AnthropicClient::new(config)?;
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let settings = load_settings(args, &cwd)?;
    let model = chosen_model(args, &settings);
    let max_output_tokens = match std::env::var("CLAUDE_CODE_MAX_OUTPUT_TOKENS") {
        Ok(value) => value.trim().parse().with_context(|| {
            format!("CLAUDE_CODE_MAX_OUTPUT_TOKENS must be a whole number of tokens, not {value:?}")
        })?,
        Err(_) => DEFAULT_MAX_OUTPUT_TOKENS,
    };
    let opened = open_session(args, &cwd, &model)?;
    let resumed = !opened.history.is_empty();
    if args.verbose {
        eprintln!(
            "session {} in {}",
            opened.id,
            opened.transcript_path.display()
        );
    }
    start_cleanup(settings.settings().cleanup_period_days, opened.id);
    let session_id = opened.id.to_string();
    let spill_dir = opened.dir.join("tool-results");
    let permission_mode = if args.dangerously_skip_permissions {
        PermissionMode::BypassPermissions
    } else {
        args.permission_mode
            .or(settings.settings().permissions.default_mode)
            .unwrap_or(PermissionMode::Default)
    };
    let home = std::env::home_dir().context("cannot find the home directory: set HOME")?;
    let governance = build_governance(&GovernanceInputs {
        args,
        settings: &settings,
        cwd: &cwd,
        home: &home,
        mode: permission_mode,
        session_id: &session_id,
        transcript_path: &opened.transcript_path,
    })?;
    let mut tool_context = ToolContext::new(cwd.clone());
    tool_context.env = settings.env().clone().into_iter().collect();
    tool_context.sandbox = governance.sandbox;
    let tool_state = tool_context.session.clone();
    let tools = ToolRegistry::with_builtins(tool_context);
    let session = SessionInfo {
        session_id,
        cwd: cwd.display().to_string(),
        model: model.clone(),
        tools: tools.specs().into_iter().map(|spec| spec.name).collect(),
        api_key_source,
        permission_mode: permission_mode.as_str(),
    };
    let engine = Engine::new(
        Arc::new(client),
        Arc::new(tools),
        EngineConfig {
            system_prompt: Arc::new(PromptBuilder::new(prompt_options(args, &cwd, &model)?)),
            model,
            max_turns: args.max_turns,
            max_output_tokens,
            spill_dir,
            governance: governance.governance.clone(),
        },
    );
    let engine = engine.with_history(opened.history);
    Ok(Prepared {
        engine,
        session,
        prompt,
        tool_state,
        log: opened.log,
        governance: governance.governance,
        resumed,
    })
}

/// Turns the first Ctrl-C into an interrupt of the running turn (which then reports and
/// exits); a second one leaves at once. The handler is registered before this returns, so a
/// signal that arrives while the first request is in flight is never missed.
fn watch_interrupts(ops: mpsc::UnboundedSender<Op>, tool_state: Arc<SessionState>) {
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
                tool_state.shells.kill_all();
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
