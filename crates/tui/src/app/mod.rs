//! The interactive app: reads keys and the engine's events, draws an inline viewport under
//! the shell's scrollback, and sends [`Op`]s.
//!
//! Finished transcript cells go into the scrollback once (with `insert_before`); the viewport
//! below holds what still changes: the live cells, a spinner while a turn runs, the input box
//! or a permission dialog, and the status line. There is no alternate screen, so the
//! conversation stays in the terminal after cairn exits.

mod command_menu;
mod commands;
mod composer;
mod context_usage;
mod export;
mod frame;
mod history;
mod inline_backend;
mod input_aids;
mod memory;
mod mention;
mod pager;
mod permissions_view;
mod replay;
mod shell_escape;
mod slash;
mod terminal;
mod watchdog;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_context::PromptSource;
use cairn_context::commands::CustomCommand;
use cairn_core::SessionInput;
use cairn_core::commands::CommandTable;
use cairn_policy::PermissionGate;
use cairn_protocol::{AgentEvent, EventEnvelope, Message, Op, PermissionMode, ToolSpec, Usage};
use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use futures_util::StreamExt;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};
use ratatui::{Terminal, TerminalOptions, Viewport};
use tokio::signal::unix::SignalKind;
use tokio::sync::mpsc::UnboundedReceiver;

pub(crate) use composer::{Composer, Edit};
use inline_backend::InlineBackend;
use input_aids::InputAids;

use crate::{Appearance, PermissionDialog, StatusLine, Theme, Transcript};
use commands::pick_session;
use frame::{fit_viewport, viewport_limit};

/// The spinner's frames, one per tick.
const SPINNER: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// The most rows the inline viewport takes; it is as tall as what it shows, up to this.
const MAX_VIEWPORT_ROWS: u16 = 20;
/// Rows the viewport leaves above it on a short terminal: putting finished lines into the
/// scrollback scrolls the region above the viewport, and a terminal ignores a scroll region
/// of a single row (the whole screen would scroll, the viewport with it).
const ROWS_KEPT_ABOVE: u16 = 2;
/// The shortest time between two redraws caused by the engine's events (about 60 a second).
const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// How long a first Ctrl+C waits for the second before it lapses.
const CTRL_C_WINDOW: Duration = Duration::from_secs(2);
/// Lines written into the scrollback per frame: a long finished answer goes out over several
/// frames, so keys typed meanwhile are not held up behind it.
const SCROLLBACK_BATCH: usize = 100;

/// What the app needs to know that only the caller can tell it.
#[derive(Debug, Clone)]
pub struct AppConfig {
    /// cairn's version, shown in the welcome line, `/status` and `/doctor`.
    pub version: String,
    /// The id of the model the session starts with (aliases already resolved): shown in the
    /// welcome and status lines, and asked for its context window.
    pub model: String,
    /// As settings spell it: `default`, `acceptEdits`, …
    pub permission_mode: String,
    /// The working directory: where `@` mentions, `/add-dir` and `/export` paths are resolved
    /// and slash commands are looked up, and which tool calls' paths are shown relative to.
    pub cwd: PathBuf,
    /// This session's id, for `/status`, the export's file name and the status command, and
    /// so that `/resume` does not offer the session already open.
    pub session_id: String,
    /// The settings files as they are now, for `/status` and `/config`.
    pub settings: Arc<dyn SettingsView>,
    /// The custom commands (`.claude/commands`) the `/` menu offers beside the built-in ones.
    pub commands: Vec<CustomCommand>,
    /// Sent as the first message (`cairn "prompt"`).
    pub initial_prompt: Option<String>,
    /// Turns a model alias (`opus`) into the id the API takes.
    pub resolve_model: fn(&str) -> String,
    /// What the session's provider knows of a model: its window for the status line's "%
    /// context" and `/context` (asked again when the model changes or a request ends), its
    /// prices for a sub-agent's cost.
    pub model_facts: crate::ModelFacts,
    /// The run's thinking switch, which Tab on an empty input turns on and off for the next
    /// request; `None` when the run has none to turn.
    pub thinking: Option<cairn_llm::thinking::Thinking>,
    /// Where sent prompts are kept across sessions (`~/.cairn/history.jsonl`); `None` keeps
    /// them in memory only.
    pub history_path: Option<PathBuf>,
    /// The home directory, for `/doctor`'s settings check.
    pub home: PathBuf,
    /// The environment variable the credential came from (never its value), for `/doctor`.
    pub credential_variable: String,
    /// The session's system prompt, for `/context`.
    pub system_prompt: Option<Arc<dyn PromptSource>>,
    /// The tools the model is offered, for `/context`.
    pub tool_specs: Vec<ToolSpec>,
    /// The session's permission gate, which `/add-dir` adds workspace roots to.
    pub permission_gate: Option<Arc<PermissionGate>>,
    /// The conversation so far, when the session was resumed: shown again and counted in
    /// `/export` and `/context`.
    pub history: Vec<Message>,
    /// The sessions of a directory that have messages, newest first, for `/resume`'s list
    /// and for checking an id before it leaves this session.
    pub resumable_sessions: fn(&std::path::Path) -> Vec<crate::picker::PickerEntry>,
    /// The `statusLine` setting's command, whose output replaces the status line.
    pub status_command: Option<String>,
    /// The run's memory directory, where `# <text>` saves and which `/memory` lists; `None`
    /// when memory is off (`autoMemoryEnabled: false`).
    pub memory_dir: Option<PathBuf>,
    /// What setting up the session found wrong (an instruction file, an agent file or an
    /// MCP server that could not be used), shown as warnings under the welcome line.
    pub startup_warnings: Vec<String>,
    /// Dimmed lines under the welcome line: what the project's files say that cairn reads but
    /// does not act on yet.
    pub startup_notes: Vec<String>,
    /// The session's MCP servers, for `/mcp`; `None` when it has none.
    pub mcp: Option<Arc<dyn cairn_core::commands::McpReport>>,
    /// The session's MCP servers' prompts (commands of the table), `@server:uri` mentions
    /// and resources (for `@` completion); `None` when it has none.
    pub mcp_face: Option<Arc<dyn crate::McpFace>>,
    /// Where the servers' elicitations arrive, each shown as a form; `None` when nobody
    /// sends them here.
    pub elicitations: Option<crate::elicitation_form::ElicitationInbox>,
}

/// The settings as they are on disk when asked (they change: `/permissions` writes them, so
/// may the user in another window).
pub trait SettingsView: Send + Sync + std::fmt::Debug {
    /// The files that were read, and the merged settings one `key = value (files)` line each,
    /// as `cairn config list` shows them; or why they could not be read.
    fn read(&self) -> Result<(Vec<String>, String), String>;
}

/// How the app ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppExit {
    /// `/exit`, Ctrl+D, or Ctrl+C twice.
    UserQuit,
    /// The terminal's input ended.
    InputClosed,
    /// `/clear`: the caller starts a fresh conversation in a new session (and a new app).
    Clear,
    /// `/resume`: the caller continues this session (one of the directory's, checked).
    Resume(String),
    /// SIGTERM or SIGHUP: the app put the terminal back and stopped.
    Terminated,
}

/// What can stop the app early.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// Reading from or writing to the terminal failed (including entering raw mode).
    #[error("terminal error: {0}")]
    Terminal(#[from] std::io::Error),
    /// The engine's event channel closed while the app was still running: the engine task
    /// ended or panicked, so nothing more can be shown or sent.
    #[error("the engine stopped unexpectedly")]
    EngineStopped,
}

/// Runs the interactive app until the user leaves. The terminal is put back (raw mode off,
/// bracketed paste off) on every way out, errors and panics included.
pub async fn run_app(
    config: AppConfig,
    ops: SessionInput,
    mut events: UnboundedReceiver<EventEnvelope>,
) -> Result<AppExit, AppError> {
    let guard = terminal::TerminalGuard::enter()?;
    watchdog::watch_terminal();
    // A previous app's (after `/clear`) key stream left a wake-up that the cursor query below
    // would take for a timeout.
    crate::event_reader::take_pending_wake();
    // As tall as the input box and the status line to begin with; it grows with what it shows.
    let mut terminal = Terminal::with_options(
        InlineBackend::new(std::io::stdout()),
        TerminalOptions {
            viewport: Viewport::Inline(4),
        },
    )?;
    // The rows the viewport takes may still hold what was printed before (a previous app's
    // notes); they are the app's now. (The cursor's place is known by now: no query.)
    terminal.clear()?;
    let mut app = App::new(config, ops);
    let result = app.run(&mut terminal, &mut events).await;
    // Whatever finished goes into the scrollback; the viewport is left empty, the cursor at
    // its top, for what the shell prints next. (No `Terminal::clear`: it asks the terminal
    // where the cursor is, and the answer would arrive after raw mode is off.)
    while let Ok(true) = app.flush(&mut terminal) {}
    let _ = terminal.draw(|frame| app.viewport = frame.area());
    let _ = terminal.set_cursor_position(app.viewport.as_position());
    let _ = terminal.show_cursor();
    drop(guard);
    result
}

struct App {
    config: AppConfig,
    /// Where what the user asks for goes: the session host carries SessionStart's context
    /// into the first message.
    ops: SessionInput,
    theme: Theme,
    transcript: Transcript,
    /// Finished lines not yet written into the scrollback.
    scrollback: std::collections::VecDeque<Line<'static>>,
    status: StatusLine,
    composer: Composer,
    dialogs: VecDeque<PermissionDialog>,
    /// Messages sent whose turn has not finished (the engine queues all but the first).
    turns_pending: usize,
    /// The texts of messages sent while a turn ran, until their own turn starts.
    queued: VecDeque<String>,
    turn_started: Option<Instant>,
    /// Output tokens of this turn's finished requests, as the API counted them.
    turn_tokens: u64,
    /// Bytes streamed since the last finished request, for an estimate of its tokens.
    streamed_bytes: usize,
    /// A Ctrl+C on an empty input was pressed; another one exits.
    ctrl_c_armed: bool,
    /// When the armed Ctrl+C (and its hint) lapses.
    ctrl_c_until: Option<Instant>,
    hint: Option<String>,
    usage: Usage,
    cost_usd: f64,
    /// Some request went to a model of unknown prices: `cost_usd` counts only the others.
    cost_unknown: bool,
    /// Each sub-agent's share of `usage` and `cost_usd`, by the `Agent` call that started
    /// it, in the order they started (for `/cost`).
    agent_costs: Vec<(String, cairn_core::reports::AgentCost)>,
    exit: Option<AppExit>,
    started: Instant,
    /// Where the last frame was drawn.
    viewport: Rect,
    /// History, `@` completions and `!` commands around the input box.
    input: InputAids,
    /// The conversation as the engine reported it, for `/export` and `/context`.
    conversation: Vec<Message>,
    /// The usage the API reported for the last request, for `/context`.
    last_request: Option<Usage>,
    /// `/memory` asked for this file to be opened in the editor.
    edit_request: Option<PathBuf>,
    /// `# <text>` waits for the user to say which type of memory it is.
    memory_choice: Option<crate::memory_dialog::MemoryTypeDialog>,
    /// `/resume` asked for a choice among these sessions.
    pick_request: Option<Vec<crate::picker::PickerEntry>>,
    /// The transcript view (Ctrl+O), while it is open.
    pager: Option<pager::Pager>,
    /// How many of a resumed conversation's first messages the transcript left out; the
    /// transcript view shows them, rendered once per width.
    earlier: usize,
    earlier_lines: Option<(u16, Vec<Line<'static>>)>,
    /// The terminal was resized while the transcript view was open; the inline viewport is
    /// rebuilt when it closes.
    resize_pending: bool,
    /// Shift+Tab changes sent whose `PermissionModeChanged` has not come back yet: until the
    /// last one does, the status line keeps the mode the user picked last.
    mode_changes_pending: usize,
    /// Since when a permission dialog has been waiting for the user: the spinner stops and the
    /// turn's clock does not count the wait.
    approval_wait: Option<Instant>,
    /// The keyboard shortcuts (`?` on an empty input) show under the input box.
    shortcuts_open: bool,
    /// MCP servers' forms waiting for the user, the first one shown.
    forms: VecDeque<crate::elicitation_form::ElicitationForm>,
    /// Where MCP work done off the UI (a prompt fetched, mentions read) reports back.
    mcp_done: tokio::sync::mpsc::UnboundedSender<commands::McpDone>,
    mcp_done_receiver: Option<UnboundedReceiver<commands::McpDone>>,
}

impl App {
    fn new(mut config: AppConfig, ops: SessionInput) -> App {
        let theme = Theme::from_env(
            Appearance::from_colorfgbg(std::env::var("COLORFGBG").ok().as_deref()),
            std::env::var_os("NO_COLOR").as_deref(),
        );
        let mut transcript = Transcript::new();
        transcript.set_working_dir(config.cwd.clone());
        transcript.push_info(format!(
            "Welcome to cairn {} · {} · {}\n/help for commands · ? for shortcuts",
            config.version,
            config.model,
            config.cwd.display()
        ));
        for note in &config.startup_notes {
            transcript.push_info(note.clone());
        }
        for warning in &config.startup_warnings {
            transcript.push_warning(warning.clone());
        }
        let mut status = StatusLine::new(config.model.clone(), config.permission_mode.clone());
        status.context_window = config.model_facts.window(&config.model);
        status.thinking = config
            .thinking
            .as_ref()
            .is_some_and(cairn_llm::thinking::Thinking::is_on);
        if let Some(command) = &config.status_command {
            status.show_command(crate::status_command::StatusCommand::start(
                command,
                crate::status_command::SessionFacts {
                    session_id: config.session_id.clone(),
                    version: config.version.clone(),
                    cwd: config.cwd.clone(),
                    project_dir: config.cwd.clone(),
                },
            ));
        }
        let mut input = InputAids::new(config.history_path.clone(), &config.cwd);
        input.set_commands(command_menu::entries(&CommandTable::with_custom(
            cairn_context::commands::CommandSet {
                commands: config.commands.clone(),
                unread: Vec::new(),
            },
        )));
        let (mcp_done, mcp_done_receiver) = tokio::sync::mpsc::unbounded_channel();
        let conversation = std::mem::take(&mut config.history);
        let mut earlier = 0;
        if !conversation.is_empty() {
            let skipped = replay::replay(&mut transcript, &conversation);
            earlier = skipped;
            let note = if skipped > 0 {
                format!(
                    "Resumed a conversation of {} messages ({skipped} earlier ones not shown; \
                     Ctrl+O shows them all)",
                    conversation.len()
                )
            } else {
                format!("Resumed a conversation of {} messages", conversation.len())
            };
            transcript.push_info(note);
            // Until the first request reports it, the gauge shows an estimate of what the
            // resumed conversation takes.
            status.context_tokens = context_usage::estimated_tokens(&config, &conversation);
        }
        App {
            config,
            ops,
            theme,
            transcript,
            scrollback: std::collections::VecDeque::new(),
            status,
            composer: Composer::default(),
            dialogs: VecDeque::new(),
            turns_pending: 0,
            queued: VecDeque::new(),
            turn_started: None,
            turn_tokens: 0,
            streamed_bytes: 0,
            ctrl_c_armed: false,
            ctrl_c_until: None,
            hint: None,
            usage: Usage::default(),
            cost_usd: 0.0,
            cost_unknown: false,
            agent_costs: Vec::new(),
            exit: None,
            started: Instant::now(),
            viewport: Rect::default(),
            input,
            conversation,
            last_request: None,
            edit_request: None,
            memory_choice: None,
            pick_request: None,
            pager: None,
            earlier,
            earlier_lines: None,
            resize_pending: false,
            mode_changes_pending: 0,
            approval_wait: None,
            shortcuts_open: false,
            forms: VecDeque::new(),
            mcp_done,
            mcp_done_receiver: Some(mcp_done_receiver),
        }
    }

    /// Starts or ends the approval wait as dialogs open and close; a finished wait moves the
    /// turn's start on by its length, so the elapsed time counts only the turn's own work.
    fn note_approval_wait(&mut self) {
        match (self.approval_wait, self.dialogs.is_empty()) {
            (None, false) => self.approval_wait = Some(Instant::now()),
            (Some(since), true) => {
                self.approval_wait = None;
                if let Some(started) = &mut self.turn_started {
                    *started += since.elapsed();
                }
            }
            (None, true) | (Some(_), false) => {}
        }
    }

    async fn run(
        &mut self,
        terminal: &mut Terminal<InlineBackend>,
        events: &mut UnboundedReceiver<EventEnvelope>,
    ) -> Result<AppExit, AppError> {
        let mut input = EventStream::new();
        let mut ticker = tokio::time::interval(Duration::from_millis(100));
        // Killed or hung up: leave as on /exit, so the terminal is put back (raw mode off, the
        // main screen back) and the session is written out.
        let mut terminate = tokio::signal::unix::signal(SignalKind::terminate())?;
        let mut hangup = tokio::signal::unix::signal(SignalKind::hangup())?;
        // A terminal closed without a hang-up reaching cairn reads as endless end-of-file,
        // which crossterm's reader never reports: a check each second sees it is gone.
        let mut liveness = tokio::time::interval(Duration::from_secs(1));
        let mut shell_results = self.input.take_shell_results();
        let mut mcp_done = self
            .mcp_done_receiver
            .take()
            .unwrap_or_else(|| tokio::sync::mpsc::unbounded_channel().1);
        let mut elicitations = self
            .config
            .elicitations
            .as_ref()
            .and_then(crate::elicitation_form::ElicitationInbox::take);
        let mut status_updates = self.status.command.as_ref().map_or_else(
            crate::status_command::StatusUpdates::none,
            crate::status_command::StatusCommand::updates,
        );
        self.input.start_file_index();
        if let Some(prompt) = self.config.initial_prompt.take() {
            self.submit(prompt);
        }
        // A fast stream is drawn at most once a frame and yields to keys (`biased`), so
        // keystrokes never wait behind a backlog of redraws.
        let mut last_draw = Instant::now();
        let mut draw_deferred = false;
        let mut draw_now = true;
        // Lines of a long finished answer still to be written into the scrollback.
        let mut scrollback_waiting = false;
        // The alternate screen, while the transcript view is open.
        let mut alt_screen: Option<pager::AltScreen> = None;
        loop {
            if self.pager.is_some() != alt_screen.is_some() {
                if self.pager.is_some() {
                    alt_screen = Some(pager::AltScreen::enter()?);
                } else {
                    // Back on the main screen, as it was: the viewport is drawn anew.
                    alt_screen = None;
                    if std::mem::take(&mut self.resize_pending) {
                        self.refill_screen_after_resize(terminal)?;
                    } else {
                        terminal.clear()?;
                    }
                }
                draw_now = true;
            }
            if draw_now || last_draw.elapsed() >= FRAME_INTERVAL {
                if let (Some(pager), Some(screen)) = (&mut self.pager, &mut alt_screen) {
                    // Nothing goes into the scrollback while the other screen is up.
                    screen
                        .terminal
                        .draw(|frame| pager.draw(frame, &self.theme))?;
                    scrollback_waiting = false;
                } else {
                    // Sized first, then the finished lines go in above: a viewport that
                    // shrank is pushed back down to the bottom by them, leaving no gap.
                    let size = terminal.size()?;
                    let limit = viewport_limit(size.height, !self.dialogs.is_empty());
                    let plan = self.plan(size.width, limit);
                    fit_viewport(terminal, plan.height())?;
                    let more = self.flush(terminal)?;
                    terminal.draw(|frame| {
                        self.viewport = frame.area();
                        self.draw(frame, plan);
                    })?;
                    scrollback_waiting = more;
                }
                last_draw = Instant::now();
                draw_deferred = false;
            }
            draw_now = true;
            if let Some(exit) = self.exit.take() {
                self.interrupt_if_running();
                return Ok(exit);
            }
            if let Some(path) = self.edit_request.take() {
                // The editor owns the terminal meanwhile: cairn stops reading keys (dropping
                // the stream stops crossterm's reader) and leaves raw mode until it exits.
                drop(input);
                let outcome = memory::edit(terminal, &path).await;
                input = EventStream::new();
                match outcome {
                    Ok(report) => self.transcript.push_info(report),
                    Err(message) => self.transcript.push_error(message),
                }
                continue;
            }
            if let Some(sessions) = self.pick_request.take() {
                // The list takes the keyboard as the editor does; cancelling it changes nothing.
                drop(input);
                let chosen = pick_session(terminal, sessions, self.theme.clone()).await;
                input = EventStream::new();
                match chosen {
                    Ok(Some(id)) => self.exit = Some(AppExit::Resume(id)),
                    Ok(None) => {}
                    Err(message) => self.transcript.push_error(message),
                }
                continue;
            }
            tokio::select! {
                biased;
                event = input.next() => match event {
                    Some(Ok(Event::Resize(width, _))) if self.pager.is_some() => {
                        self.resize_pending = true;
                        let lines = self.full_transcript(width);
                        if let Some(pager) = &mut self.pager {
                            pager.replace(lines);
                        }
                    }
                    Some(Ok(Event::Resize(_, _))) => self.refill_screen_after_resize(terminal)?,
                    Some(Ok(event)) => self.on_terminal_event(event),
                    // The terminal is gone (closed window, EIO): leave as on a hang-up, the
                    // turn stopped, rather than fail (nothing could show the error).
                    Some(Err(_)) | None => {
                        self.interrupt_if_running();
                        return Ok(AppExit::InputClosed);
                    }
                },
                event = events.recv() => match event {
                    Some(envelope) => {
                        self.on_envelope(&envelope);
                        while let Ok(envelope) = events.try_recv() {
                            self.on_envelope(&envelope);
                        }
                        draw_now = false;
                        draw_deferred = true;
                    }
                    None => return Err(AppError::EngineStopped),
                },
                // The status command printed a new line: the loop redraws.
                () = status_updates.changed() => {}
                Some(done) = mcp_done.recv() => self.on_mcp_done(done),
                Some(pending) = async {
                    match &mut elicitations {
                        Some(inbox) => inbox.recv().await,
                        None => std::future::pending().await,
                    }
                } => self.open_form(pending),
                Some(output) = shell_results.recv() => {
                    let notice = self.input.finish_shell(&output);
                    self.transcript.push_info(notice);
                }
                _ = terminate.recv() => self.exit = Some(AppExit::Terminated),
                () = tokio::time::sleep_until(
                    self.ctrl_c_until.unwrap_or_else(Instant::now).into()
                ), if self.ctrl_c_until.is_some() => {
                    self.ctrl_c_until = None;
                    self.ctrl_c_armed = false;
                    self.hint = None;
                }
                _ = hangup.recv() => self.exit = Some(AppExit::Terminated),
                _ = liveness.tick() => {
                    if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                        self.interrupt_if_running();
                        return Ok(AppExit::InputClosed);
                    }
                }
                _ = ticker.tick(), if self.is_running() || self.input.running_shell().is_some() => {}
                () = tokio::time::sleep_until((last_draw + FRAME_INTERVAL).into()), if draw_deferred => {}
                // Polled last: the next batch of scrollback goes out as soon as no key waits.
                () = std::future::ready(()), if scrollback_waiting => {}
            }
        }
    }

    fn is_running(&self) -> bool {
        self.turns_pending > 0
    }

    /// Stops the running turn; messages queued behind it are not sent but come back into
    /// the input box, to send again or change (the engine drops its queue on an interrupt).
    fn interrupt_if_running(&mut self) {
        if !self.is_running() {
            return;
        }
        let _ = self.ops.send(Op::Interrupt);
        if !self.queued.is_empty() {
            let mut texts: Vec<String> = self.queued.drain(..).collect();
            if !self.composer.is_empty() {
                texts.push(self.composer.text().to_string());
            }
            self.composer.set_text(&texts.join("\n"));
            self.turns_pending = 1;
        }
    }

    /// Writes the cells that finished since last time into the scrollback, at most
    /// [`SCROLLBACK_BATCH`] lines at a time; returns whether lines are still waiting.
    fn flush(&mut self, terminal: &mut Terminal<InlineBackend>) -> Result<bool, AppError> {
        let width = terminal.size()?.width;
        // A long answer renders a piece at a time, only as far as this batch needs.
        while self.scrollback.len() < SCROLLBACK_BATCH && self.transcript.has_unflushed() {
            self.scrollback
                .extend(self.transcript.take_unflushed(width, &self.theme));
        }
        if self.scrollback.is_empty() {
            return Ok(false);
        }
        let count = self.scrollback.len().min(SCROLLBACK_BATCH);
        let lines: Vec<Line<'static>> = self.scrollback.drain(..count).collect();
        let height = u16::try_from(lines.len()).unwrap_or(u16::MAX);
        terminal.insert_before(height, |buf| {
            Paragraph::new(lines).render(buf.area, buf);
        })?;
        Ok(!self.scrollback.is_empty() || self.transcript.has_unflushed())
    }

    /// One event from the engine. A sub-agent's work shows as progress under its `Agent`
    /// call's cell; what needs the user from it (a permission question, a warning) is drawn.
    fn on_envelope(&mut self, envelope: &EventEnvelope) {
        self.tally_agents(envelope);
        let for_the_user = matches!(
            envelope.event,
            AgentEvent::PermissionRequested { .. } | AgentEvent::Warning { .. }
        );
        if envelope.from.is_main() || for_the_user {
            self.on_agent_event(&envelope.event);
            self.note_approval_wait();
        }
        if let Some(parent) = &envelope.from.parent_tool_use_id {
            self.transcript
                .apply_sub_agent(parent, &envelope.event, &self.config.model_facts);
        }
    }

    /// Sub-agents' requests are paid for too: each one's usage and cost go into the session's
    /// totals and its own line of `/cost`, labelled by the `Agent` call that started it.
    fn tally_agents(&mut self, envelope: &EventEnvelope) {
        match (&envelope.event, &envelope.from.parent_tool_use_id) {
            (AgentEvent::ToolCallInputComplete { id, name, input }, _)
                if envelope.from.is_main() && matches!(name.as_str(), "Agent" | "Task") =>
            {
                let field = |key: &str| input.get(key).and_then(|v| v.as_str()).unwrap_or("");
                let role = match field("subagent_type") {
                    "" => "general-purpose",
                    role => role,
                };
                let label = match field("description") {
                    "" => role.to_string(),
                    description => format!("{role}: {description}"),
                };
                self.agent_costs.push((
                    id.clone(),
                    cairn_core::reports::AgentCost {
                        label,
                        requests: 0,
                        usage: Usage::default(),
                        cost_usd: Some(0.0),
                    },
                ));
            }
            (AgentEvent::AssistantMessage { usage, model, .. }, Some(parent))
                if !envelope.from.is_main() =>
            {
                let cost = self.config.model_facts.info(model).cost_usd(usage);
                self.usage += *usage;
                match cost {
                    Some(cost) => self.cost_usd += cost,
                    None => self.cost_unknown = true,
                }
                if let Some((_, agent)) = self.agent_costs.iter_mut().find(|(id, _)| id == parent) {
                    agent.requests += 1;
                    agent.usage += *usage;
                    agent.cost_usd = agent.cost_usd.zip(cost).map(|(a, b)| a + b);
                }
            }
            _ => {}
        }
    }

    fn on_agent_event(&mut self, event: &AgentEvent) {
        let earlier_mode_change = matches!(event, AgentEvent::PermissionModeChanged { .. })
            && self.mode_changes_pending > 1;
        if matches!(event, AgentEvent::PermissionModeChanged { .. }) {
            self.mode_changes_pending = self.mode_changes_pending.saturating_sub(1);
        }
        // The answer to an earlier Shift+Tab would show a mode the user has already left.
        if !earlier_mode_change {
            self.status.apply(event);
        }
        if let AgentEvent::ModelChanged { .. } | AgentEvent::AssistantMessage { .. } = event {
            self.status.context_window = self.config.model_facts.window(&self.status.model);
        }
        self.transcript.apply(event);
        let finishes_a_cell = matches!(
            event,
            AgentEvent::UserMessage { .. }
                | AgentEvent::AssistantMessage { .. }
                | AgentEvent::ToolCallResult { .. }
                | AgentEvent::TurnFinished(_)
        );
        if finishes_a_cell && self.pager.is_some() {
            let lines = self.full_transcript(self.viewport.width.max(1));
            if let Some(pager) = &mut self.pager {
                pager.replace(lines);
            }
        }
        match event {
            AgentEvent::PermissionRequested { tool, input, .. } => {
                // A question for the user is never hidden behind the transcript view.
                self.pager = None;
                if let Some(mut dialog) = PermissionDialog::from_event(event) {
                    // The call waits for the answer, so the file is still as it was.
                    if let Some(text) = file_before(tool, input, &self.config.cwd) {
                        dialog.set_file_before(text);
                    }
                    self.dialogs.push_back(dialog);
                }
            }
            AgentEvent::AssistantMessage {
                message,
                usage,
                cost_usd,
                ..
            } => {
                self.conversation.push(message.clone());
                self.last_request = Some(*usage);
                self.usage.input_tokens += usage.input_tokens;
                self.usage.output_tokens += usage.output_tokens;
                self.usage.cache_creation_input_tokens += usage.cache_creation_input_tokens;
                self.usage.cache_read_input_tokens += usage.cache_read_input_tokens;
                self.cost_usd += cost_usd;
                self.turn_tokens += usage.output_tokens;
                self.streamed_bytes = 0;
            }
            AgentEvent::TurnFinished(summary) => {
                self.cost_unknown |= summary.cost_unknown;
                self.turns_pending = self.turns_pending.saturating_sub(1);
                self.turn_started = self.is_running().then(Instant::now);
                self.turn_tokens = 0;
                self.streamed_bytes = 0;
                // A finished turn has no question waiting (and the next turn's clock starts
                // afresh).
                self.dialogs.clear();
                self.approval_wait = None;
            }
            AgentEvent::UserMessage { message } => {
                // A queued message's turn has started: it can no longer come back.
                let typed = crate::transcript::user_prompt::UserPrompt::of(message).text;
                if self.queued.front().is_some_and(|queued| *queued == typed) {
                    self.queued.pop_front();
                }
                if matches!(message.content.first(),
                    Some(cairn_protocol::ContentBlock::Text { text }) if text == cairn_core::commands::INIT_TAG)
                {
                    self.transcript.push_info(slash::INIT_NOTE);
                }
                self.conversation.push(message.clone());
            }
            AgentEvent::ToolResultsMessage { message } => {
                self.conversation.push(message.clone());
            }
            // Requests beside the conversation count in /cost like the others.
            AgentEvent::SideRequests(side) => {
                self.usage += side.usage;
                match side.cost_usd {
                    Some(cost) => self.cost_usd += cost,
                    None => self.cost_unknown = true,
                }
            }
            AgentEvent::TextDelta { text } | AgentEvent::ThinkingDelta { text } => {
                self.streamed_bytes += text.len();
            }
            AgentEvent::ToolCallInputComplete { id, name, input } => {
                self.streamed_bytes += input.to_string().len();
                // A Write that replaces a file shows what it removes too. The call runs only
                // after its message ends, so the file is normally still as it was; if the
                // write got there first, the text is already the new one and is not used.
                if name == "Write"
                    && let Some(before) = file_before(name, input, &self.config.cwd)
                    && Some(before.as_str()) != input.get("content").and_then(|c| c.as_str())
                {
                    self.transcript.set_file_before(id, before);
                }
            }
            AgentEvent::Retrying(notice) if notice.discard_partial => self.streamed_bytes = 0,
            AgentEvent::ToolCallStarted { .. }
            | AgentEvent::ToolCallResult { .. }
            | AgentEvent::Retrying(_)
            | AgentEvent::PermissionDecided(_)
            | AgentEvent::TodosChanged { .. }
            | AgentEvent::ModelChanged { .. }
            | AgentEvent::PermissionModeChanged { .. }
            | AgentEvent::Compacted(_)
            | AgentEvent::Debug { .. }
            | AgentEvent::Warning { .. } => {}
        }
    }

    fn on_terminal_event(&mut self, event: Event) {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => {
                self.on_key(key);
                self.note_approval_wait();
            }
            Event::Paste(text) => {
                if let Some(dialog) = self.dialogs.front_mut() {
                    if dialog.is_typing() {
                        // One line of feedback: line breaks and tabs become spaces.
                        let chars = text
                            .chars()
                            .map(|c| if c.is_whitespace() { ' ' } else { c })
                            .filter(|c| !c.is_control());
                        for c in chars {
                            dialog.handle_key(KeyEvent::from(KeyCode::Char(c)));
                        }
                    }
                } else if self.memory_choice.is_none() {
                    self.composer.paste(&text);
                    self.input.refresh(&self.composer);
                }
            }
            _ => {}
        }
    }

    fn on_key(&mut self, key: KeyEvent) {
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        if let Some(pager) = &mut self.pager {
            if pager.handle_key(key) {
                self.pager = None;
            }
            return;
        }
        if control && key.code == KeyCode::Char('o') {
            // Also while a dialog asks: the whole call is there to read before answering.
            let width = self.viewport.width.max(1);
            let lines = self.full_transcript(width);
            self.pager = Some(pager::Pager::new(lines));
            return;
        }
        if let Some(dialog) = self.dialogs.front_mut() {
            let escape = key.code == KeyCode::Esc && !dialog.is_typing();
            if (control && key.code == KeyCode::Char('c')) || escape {
                // Ctrl+C or Esc in a dialog refuses and stops the turn, as in Claude Code:
                // the user says what to do next in the input box.
                if let Some(outcome) = dialog.handle_key(KeyEvent::from(KeyCode::Esc)) {
                    let _ = self.ops.send(outcome.into_op());
                }
                self.dialogs.pop_front();
                self.interrupt_if_running();
                return;
            }
            if let Some(outcome) = dialog.handle_key(key) {
                // The engine keeps a "don't ask again" rule for later sessions too; a failure
                // to save it comes back as a warning event.
                let _ = self.ops.send(outcome.into_op());
                self.dialogs.pop_front();
            }
            return;
        }
        if let Some(form) = self.forms.front_mut() {
            if form.handle_key(key) {
                self.forms.pop_front();
            }
            return;
        }
        if let Some(choice) = &mut self.memory_choice {
            if let Some(answer) = choice.handle_key(key) {
                self.answer_memory_type(answer);
            }
            return;
        }
        if control && key.code == KeyCode::Char('c') {
            if !self.composer.is_empty() {
                self.composer.clear();
                self.input.close_completions();
                self.ctrl_c_armed = false;
                self.hint = None;
            } else if self.ctrl_c_armed {
                self.exit = Some(AppExit::UserQuit);
            } else {
                self.interrupt_if_running();
                self.ctrl_c_armed = true;
                self.ctrl_c_until = Some(Instant::now() + CTRL_C_WINDOW);
                self.hint = Some("Press Ctrl+C again to exit".into());
            }
            return;
        }
        self.ctrl_c_armed = false;
        self.ctrl_c_until = None;
        self.hint = None;
        if control && key.code == KeyCode::Char('d') {
            if self.composer.is_empty() {
                self.exit = Some(AppExit::UserQuit);
            }
            return;
        }
        // `?` on an empty input shows the keyboard shortcuts; the next key closes them (Esc
        // only closes them; a second `?` types one).
        let shortcuts_were_open = std::mem::take(&mut self.shortcuts_open);
        if shortcuts_were_open && key.code == KeyCode::Esc {
            return;
        }
        if key.code == KeyCode::Char('?') && self.composer.is_empty() && !shortcuts_were_open {
            self.shortcuts_open = true;
            return;
        }
        if key.code == KeyCode::Esc {
            if !self.input.dismiss(&mut self.composer) {
                self.interrupt_if_running();
            }
            return;
        }
        if key.code == KeyCode::BackTab {
            self.cycle_permission_mode();
            return;
        }
        // Tab on an empty input turns thinking on or off for the next request, as in Claude
        // Code; the status line says `thinking` while it is on.
        if key.code == KeyCode::Tab
            && self.composer.is_empty()
            && let Some(thinking) = &self.config.thinking
        {
            self.status.thinking = thinking.toggle();
            return;
        }

        if key.code == KeyCode::Char('@') {
            self.refresh_resources();
        }
        if key.code == KeyCode::Char('/') && self.composer.is_empty() {
            // The menu is about to open: it lists the command files as they are now.
            let table = self.command_table();
            self.input.set_commands(command_menu::entries(&table));
        }
        if let Edit::Submitted(text) = self.input.handle_key(key, &mut self.composer) {
            self.submit(text);
        }
    }
}

impl App {
    /// Shift+Tab: the next permission mode, in force for the engine's next decision and shown
    /// in the status line at once (the engine's `PermissionModeChanged` confirms it).
    fn cycle_permission_mode(&mut self) {
        let current = self
            .status
            .permission_mode
            .parse()
            .unwrap_or(PermissionMode::Default);
        let bypass_allowed =
            self.config.permission_mode == PermissionMode::BypassPermissions.as_str();
        let mode = next_permission_mode(current, bypass_allowed);
        if self.ops.send(Op::SetPermissionMode { mode }).is_ok() {
            self.mode_changes_pending += 1;
            self.status.permission_mode = mode.as_str().to_owned();
        }
    }
}

/// The mode Shift+Tab goes to from `current`, in Claude Code's order: default, acceptEdits,
/// plan, then bypassPermissions only for a session that started in it (its flag or settings
/// were the user's consent), and back to default. dontAsk is left for default.
fn next_permission_mode(current: PermissionMode, bypass_allowed: bool) -> PermissionMode {
    match current {
        PermissionMode::Default => PermissionMode::AcceptEdits,
        PermissionMode::AcceptEdits => PermissionMode::Plan,
        PermissionMode::Plan if bypass_allowed => PermissionMode::BypassPermissions,
        PermissionMode::Plan | PermissionMode::BypassPermissions | PermissionMode::DontAsk => {
            PermissionMode::Default
        }
    }
}

/// The largest file whose text is read to show what an edit or a write changes in it.
const MAX_FILE_BEFORE: u64 = 512 * 1024;

/// The text of the file an Edit, MultiEdit or Write call changes, as it is now (if it exists,
/// is text and is not too big to diff).
fn file_before(tool: &str, input: &serde_json::Value, cwd: &std::path::Path) -> Option<String> {
    if !matches!(tool, "Edit" | "MultiEdit" | "Write") {
        return None;
    }
    let path = cwd.join(input.get("file_path")?.as_str()?);
    if std::fs::metadata(&path).ok()?.len() > MAX_FILE_BEFORE {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

#[cfg(test)]
mod tests {
    use super::commands::resolve_path;
    use super::frame::compact_count;
    use super::*;

    #[test]
    fn typed_paths_expand_the_home_directory() {
        let (cwd, home) = (std::path::Path::new("/w"), std::path::Path::new("/h"));
        assert_eq!(resolve_path("~", cwd, home), PathBuf::from("/h"));
        assert_eq!(
            resolve_path("~/notes/a.md", cwd, home),
            PathBuf::from("/h/notes/a.md")
        );
        assert_eq!(
            resolve_path("~other", cwd, home),
            PathBuf::from("/w/~other")
        );
        assert_eq!(resolve_path("lib", cwd, home), PathBuf::from("/w/lib"));
        assert_eq!(resolve_path("/abs", cwd, home), PathBuf::from("/abs"));
    }

    #[test]
    fn shift_tab_cycles_the_modes_and_reaches_bypass_only_when_the_session_started_in_it() {
        let cycle = |start: PermissionMode, bypass_allowed: bool| {
            std::iter::successors(Some(start), |&mode| {
                Some(next_permission_mode(mode, bypass_allowed))
            })
            .take(5)
            .map(PermissionMode::as_str)
            .collect::<Vec<_>>()
        };
        assert_eq!(
            cycle(PermissionMode::Default, false),
            ["default", "acceptEdits", "plan", "default", "acceptEdits"]
        );
        assert_eq!(
            cycle(PermissionMode::BypassPermissions, true),
            [
                "bypassPermissions",
                "default",
                "acceptEdits",
                "plan",
                "bypassPermissions"
            ]
        );
        assert_eq!(
            cycle(PermissionMode::DontAsk, false),
            ["dontAsk", "default", "acceptEdits", "plan", "default"]
        );
    }

    #[test]
    fn counts_are_short() {
        assert_eq!(compact_count(950), "950");
        assert_eq!(compact_count(1_234), "1.2k");
        assert_eq!(compact_count(34_567), "34k");
    }
}
