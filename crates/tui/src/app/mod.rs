//! The interactive app: reads keys and the engine's events, draws an inline viewport under
//! the shell's scrollback, and sends [`Op`]s.
//!
//! Finished transcript cells go into the scrollback once (with `insert_before`); the viewport
//! below holds what still changes: the live cells, a spinner while a turn runs, the input box
//! or a permission dialog, and the status line. There is no alternate screen, so the
//! conversation stays in the terminal after cairn exits.

mod command_menu;
mod composer;
mod context_usage;
mod doctor;
mod export;
mod history;
mod inline_backend;
mod input_aids;
mod local_settings;
mod memory;
mod mention;
mod pager;
mod permissions_view;
mod replay;
mod shell_escape;
mod slash;
mod terminal;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_context::PromptSource;
use cairn_context::commands::CustomCommand;
use cairn_policy::PermissionGate;
use cairn_protocol::{AgentEvent, ContentBlock, Message, Op, PermissionAnswer, ToolSpec, Usage};
use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use futures_util::StreamExt;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};
use ratatui::{Frame, Terminal, TerminalOptions, Viewport};
use tokio::signal::unix::SignalKind;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

pub use composer::{Composer, Edit};
use inline_backend::InlineBackend;
use input_aids::InputAids;
pub use slash::{SlashCommand, parse as parse_slash_command};

use crate::{Appearance, PermissionDialog, StatusLine, Theme, Transcript};

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
    pub version: String,
    pub model: String,
    /// As settings spell it: `default`, `acceptEdits`, …
    pub permission_mode: String,
    pub cwd: PathBuf,
    pub session_id: String,
    /// The settings files as they are now, for `/status` and `/config`.
    pub settings: Arc<dyn SettingsView>,
    pub commands: Vec<CustomCommand>,
    /// Sent as the first message (`cairn "prompt"`).
    pub initial_prompt: Option<String>,
    /// Context from SessionStart hooks, added to the first message.
    pub first_message_context: Vec<String>,
    /// Turns a model alias (`opus`) into the id the API takes.
    pub resolve_model: fn(&str) -> String,
    /// How many tokens a model's context window holds (`None`: unknown), for the status
    /// line's "% context"; asked again when the model changes.
    pub context_window: fn(&str) -> Option<u64>,
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
    #[error("terminal error: {0}")]
    Terminal(#[from] std::io::Error),
    #[error("the engine stopped unexpectedly")]
    EngineStopped,
}

/// Runs the interactive app until the user leaves. The terminal is put back (raw mode off,
/// bracketed paste off) on every way out, errors and panics included.
pub async fn run_app(
    config: AppConfig,
    ops: UnboundedSender<Op>,
    mut events: UnboundedReceiver<AgentEvent>,
) -> Result<AppExit, AppError> {
    let guard = terminal::TerminalGuard::enter()?;
    // A previous app's (after `/clear`) EventStream leaves a wake-up pending in crossterm's
    // reader when it is dropped; the cursor query below would take it for a timeout. A
    // zero-length poll consumes it (any keys read meanwhile stay queued).
    let _ = crossterm::event::poll(Duration::ZERO);
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
    ops: UnboundedSender<Op>,
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
    first_message_context: Vec<String>,
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
}

impl App {
    fn new(mut config: AppConfig, ops: UnboundedSender<Op>) -> App {
        let theme = Theme::from_env(
            Appearance::from_colorfgbg(std::env::var("COLORFGBG").ok().as_deref()),
            std::env::var_os("NO_COLOR").as_deref(),
        );
        let mut transcript = Transcript::new();
        transcript.set_working_dir(config.cwd.clone());
        transcript.push_info(format!(
            "Welcome to cairn {} · {} · {}\n/help for commands",
            config.version,
            config.model,
            config.cwd.display()
        ));
        let mut status = StatusLine::new(config.model.clone(), config.permission_mode.clone());
        status.context_window = (config.context_window)(&config.model);
        let first_message_context = config.first_message_context.clone();
        let mut input = InputAids::new(config.history_path.clone(), &config.cwd);
        input.set_commands(command_menu::entries(&config.commands));
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
            let system = config
                .system_prompt
                .as_ref()
                .map(|source| source.system_prompt());
            let estimate = context_usage::ContextUsage::estimate(
                system.as_ref(),
                &config.tool_specs,
                &conversation,
            );
            status.context_tokens = u64::try_from(estimate.total()).unwrap_or(u64::MAX);
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
            first_message_context,
            exit: None,
            started: Instant::now(),
            viewport: Rect::default(),
            input,
            conversation,
            last_request: None,
            edit_request: None,
            pick_request: None,
            pager: None,
            earlier,
            earlier_lines: None,
            resize_pending: false,
        }
    }

    async fn run(
        &mut self,
        terminal: &mut Terminal<InlineBackend>,
        events: &mut UnboundedReceiver<AgentEvent>,
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
                        resize(terminal)?;
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
                    Some(Ok(Event::Resize(_, _))) => resize(terminal)?,
                    Some(Ok(event)) => self.on_terminal_event(event),
                    // The terminal is gone (closed window, EIO): leave as on a hang-up, the
                    // turn stopped, rather than fail (nothing could show the error).
                    Some(Err(_)) | None => {
                        self.interrupt_if_running();
                        return Ok(AppExit::InputClosed);
                    }
                },
                event = events.recv() => match event {
                    Some(event) => {
                        self.on_agent_event(&event);
                        while let Ok(event) = events.try_recv() {
                            self.on_agent_event(&event);
                        }
                        draw_now = false;
                        draw_deferred = true;
                    }
                    None => return Err(AppError::EngineStopped),
                },
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

    fn on_agent_event(&mut self, event: &AgentEvent) {
        self.status.apply(event);
        if let AgentEvent::ModelChanged { .. } | AgentEvent::AssistantMessage { .. } = event {
            self.status.context_window = (self.config.context_window)(&self.status.model);
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
            AgentEvent::TurnFinished(_) => {
                self.turns_pending = self.turns_pending.saturating_sub(1);
                self.turn_started = self.is_running().then(Instant::now);
                self.turn_tokens = 0;
                self.streamed_bytes = 0;
                // A finished turn has no question waiting.
                self.dialogs.clear();
            }
            AgentEvent::UserMessage { message } => {
                // A queued message's turn has started: it can no longer come back.
                let typed = crate::transcript::user_prompt::UserPrompt::of(message).text;
                if self.queued.front().is_some_and(|queued| *queued == typed) {
                    self.queued.pop_front();
                }
                self.conversation.push(message.clone());
            }
            AgentEvent::ToolResultsMessage { message } => {
                for note in self.spill_notes(message) {
                    self.transcript.push_warning(note);
                }
                self.conversation.push(message.clone());
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
            | AgentEvent::Warning { .. } => {}
        }
    }

    fn on_terminal_event(&mut self, event: Event) {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.on_key(key),
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
                } else {
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
                // "Don't ask again" also holds for later sessions, as in Claude Code.
                if let PermissionAnswer::AllowAlways { rule } = &outcome.answer
                    && let Err(warning) = local_settings::save_allow_rule(&self.config.cwd, rule)
                {
                    self.transcript.push_warning(warning);
                }
                let _ = self.ops.send(outcome.into_op());
                self.dialogs.pop_front();
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
        if key.code == KeyCode::Esc {
            if !self.input.dismiss(&mut self.composer) {
                self.interrupt_if_running();
            }
            return;
        }
        if key.code == KeyCode::Char('/') && self.composer.is_empty() {
            // The menu is about to open: it lists the command files as they are now.
            self.config.commands = cairn_context::commands::discover_commands(
                &self.config.cwd,
                Some(&self.config.home),
            );
            self.input
                .set_commands(command_menu::entries(&self.config.commands));
        }
        if let Edit::Submitted(text) = self.input.handle_key(key, &mut self.composer) {
            self.submit(text);
        }
    }

    /// Runs a slash command or sends a message.
    fn submit(&mut self, text: String) {
        if text.trim().is_empty() {
            return;
        }
        if let Some(warning) = self.input.record(&text) {
            self.transcript.push_warning(warning);
        }
        if let Some(command) = text.trim_start().strip_prefix('!') {
            if let Err(message) = self.input.start_shell(command.trim()) {
                self.transcript.push_error(message);
            }
            return;
        }
        if !text.trim_start().starts_with('/') {
            self.send_message(text);
            return;
        }
        // Read again: a command file added while the session runs works at once.
        self.config.commands =
            cairn_context::commands::discover_commands(&self.config.cwd, Some(&self.config.home));
        let commands = std::mem::take(&mut self.config.commands);
        match slash::parse(&text, &commands) {
            SlashCommand::Help => self.transcript.push_info(slash::help_text(&commands)),
            SlashCommand::Exit => self.exit = Some(AppExit::UserQuit),
            SlashCommand::Clear => self.exit = Some(AppExit::Clear),
            SlashCommand::Model(None) => {
                self.transcript
                    .push_info(format!("Model: {}", self.status.model));
            }
            SlashCommand::Model(Some(name)) => {
                let model = (self.config.resolve_model)(name);
                if self.is_running() {
                    self.transcript
                        .push_info(format!("Switching to {model} after this turn"));
                }
                let _ = self.ops.send(Op::SetModel { model });
            }
            SlashCommand::Cost => self.transcript.push_info(self.cost_report()),
            SlashCommand::Status => self.transcript.push_info(self.status_report()),
            SlashCommand::Export(file) => self.export(file),
            SlashCommand::Doctor => self
                .transcript
                .push_info(doctor::render(&doctor::run_checks(&doctor::DoctorInputs {
                    version: &self.config.version,
                    home: &self.config.home,
                    cwd: &self.config.cwd,
                    credential_variable: &self.config.credential_variable,
                }))),
            SlashCommand::Context => self.transcript.push_info(self.context_report()),
            SlashCommand::AddDir(path) => self.add_dir(path),
            SlashCommand::Permissions(arguments) => self.permissions(arguments),
            SlashCommand::Memory(which) => {
                match memory::target(which, &self.config.cwd, &self.config.home) {
                    Ok(path) => self.edit_request = Some(path),
                    Err(message) => self.transcript.push_error(message),
                }
            }
            SlashCommand::Resume(session) => self.resume(session),
            SlashCommand::Config => match self.config.settings.read() {
                Ok((_, listing)) => self.transcript.push_info(format!("Settings:\n{listing}")),
                Err(message) => self.transcript.push_error(message),
            },
            SlashCommand::Init => self.send_message(slash::INIT_PROMPT.to_string()),
            SlashCommand::Custom(command, arguments) => {
                let prompt = command.expand(arguments, &self.config.cwd);
                let model = command
                    .model
                    .as_deref()
                    .map(|model| (self.config.resolve_model)(model));
                let allowed_tools = command.allowed_tools.clone();
                let invocation = Invocation {
                    name: command.name.clone(),
                    arguments: arguments.to_string(),
                    model,
                    allowed_tools,
                };
                self.send_prompt(prompt, Some(invocation));
            }
            SlashCommand::Unknown(name) => self.transcript.push_error(format!(
                "Unknown command: /{name}. Type /help for the list of commands."
            )),
        }
        self.config.commands = commands;
    }

    fn send_message(&mut self, text: String) {
        self.send_prompt(text, None);
    }

    /// Sends a message. For a custom command, `text` is its expansion: the model gets the
    /// command line (tagged as Claude Code does) before it, the transcript shows only the
    /// line, and the command's model and allowed tools hold for its turn.
    fn send_prompt(&mut self, text: String, command: Option<Invocation>) {
        let shown = match &command {
            Some(command) => command.line(),
            None => text.clone(),
        };
        let queued = self.is_running().then_some(shown);
        let expansion = text.clone();
        let mut content = self.input.message_content(text);
        let (model, allowed_tools) = match command {
            Some(command) => {
                let at = content
                    .iter()
                    .position(
                        |block| matches!(block, ContentBlock::Text { text } if *text == expansion),
                    )
                    .unwrap_or(0);
                content.insert(at, ContentBlock::text(command.tag()));
                (command.model, command.allowed_tools)
            }
            None => (None, Vec::new()),
        };
        for context in self.first_message_context.drain(..) {
            content.push(ContentBlock::text(format!(
                "<system-reminder>\n{context}\n</system-reminder>"
            )));
        }
        let op = if model.is_none() && allowed_tools.is_empty() {
            Op::UserMessage { content }
        } else {
            Op::CommandMessage {
                content,
                model,
                allowed_tools,
            }
        };
        if self.ops.send(op).is_err() {
            self.transcript
                .push_error("The engine has stopped; the message was not sent.");
            return;
        }
        self.turns_pending += 1;
        self.queued.extend(queued);
        if self.turn_started.is_none() {
            self.turn_started = Some(Instant::now());
        }
    }

    /// `/resume [id]`: leaves this session for another one, once it is sure there is one.
    /// What the model got instead of results too large for the conversation (the cells show
    /// the whole result): one note for each, naming the tool and where the whole was saved.
    fn spill_notes(&self, results: &Message) -> Vec<String> {
        let mut notes = Vec::new();
        for block in &results.content {
            let ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } = block
            else {
                continue;
            };
            let text = content.text();
            let Some(rest) = text.strip_prefix("This result was ") else {
                continue;
            };
            let Some((size, rest)) = rest.split_once(" characters, too large for the conversation")
            else {
                continue;
            };
            let tool = self
                .conversation
                .iter()
                .rev()
                .flat_map(|message| &message.content)
                .find_map(|block| match block {
                    ContentBlock::ToolUse { id, name, .. } if id == tool_use_id => {
                        Some(name.as_str())
                    }
                    _ => None,
                })
                .unwrap_or("A tool");
            let saved = rest
                .split_once("saved in ")
                .and_then(|(_, path)| path.split_once("; Read it"))
                .map(|(path, _)| format!("; the whole is saved in {path}"))
                .unwrap_or_default();
            notes.push(format!(
                "{tool}'s result ({size} characters) was too large for the conversation: the \
                 model got its beginning{saved}."
            ));
        }
        notes
    }

    /// The whole conversation in full detail for the transcript view: the messages a resume
    /// left out, then the transcript.
    fn full_transcript(&mut self, width: u16) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        if self.earlier > 0 {
            if self
                .earlier_lines
                .as_ref()
                .is_none_or(|(at, _)| *at != width)
            {
                let mut earlier = Transcript::new();
                earlier.set_working_dir(self.config.cwd.clone());
                replay::replay_all(&mut earlier, &self.conversation[..self.earlier]);
                self.earlier_lines = Some((width, earlier.render_full(width, &self.theme)));
            }
            if let Some((_, earlier)) = &self.earlier_lines {
                lines.extend(earlier.iter().cloned());
            }
        }
        lines.extend(self.transcript.render_full(width, &self.theme));
        lines
    }

    /// `/resume [id]`: leaves this session for the one named, or opens the list of the
    /// others (the app stays as it is if the user cancels).
    fn resume(&mut self, session: &str) {
        let others: Vec<crate::picker::PickerEntry> =
            (self.config.resumable_sessions)(&self.config.cwd)
                .into_iter()
                .filter(|entry| entry.id != self.config.session_id)
                .collect();
        if session == self.config.session_id {
            self.transcript
                .push_error(format!("{session} is this session."));
        } else if !session.is_empty() && !others.iter().any(|entry| entry.id == session) {
            self.transcript.push_error(format!(
                "No session {session} in this directory; /resume without an id lists them."
            ));
        } else if others.is_empty() {
            self.transcript
                .push_error("No other session to resume in this directory.");
        } else if session.is_empty() {
            self.pick_request = Some(others);
        } else {
            self.exit = Some(AppExit::Resume(session.to_string()));
        }
    }

    fn permissions(&mut self, arguments: &str) {
        let Some(gate) = &self.config.permission_gate else {
            self.transcript
                .push_error("This session runs without a permission gate.");
            return;
        };
        let outcome = match permissions_view::parse(arguments) {
            permissions_view::Action::List => {
                Ok(permissions_view::render(gate, &self.status.permission_mode))
            }
            permissions_view::Action::Add(kind, rule) => {
                permissions_view::add(gate, &self.config.cwd, kind, rule)
            }
            permissions_view::Action::Remove(rule) => permissions_view::remove(gate, rule),
            permissions_view::Action::Usage => Err(permissions_view::USAGE.to_string()),
        };
        match outcome {
            Ok(report) => self.transcript.push_info(report),
            Err(message) => self.transcript.push_error(message),
        }
    }

    fn cost_report(&self) -> String {
        let usage = &self.usage;
        format!(
            "Total cost: ${:.4}\nTokens: {} input, {} output, {} cache read, {} cache write\n\
             Session time: {}s",
            self.cost_usd,
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_input_tokens,
            usage.cache_creation_input_tokens,
            self.started.elapsed().as_secs()
        )
    }

    fn add_dir(&mut self, path: &str) {
        let Some(gate) = &self.config.permission_gate else {
            self.transcript
                .push_error("/add-dir needs the permission gate, which this session runs without.");
            return;
        };
        if path.is_empty() {
            self.transcript.push_error("Usage: /add-dir <path>");
            return;
        }
        let dir = resolve_path(path, &self.config.cwd, &self.config.home);
        match dir.canonicalize() {
            Ok(dir) if dir.is_dir() => {
                gate.add_workspace_root(dir.clone());
                self.transcript.push_info(format!(
                    "Added {} to the workspace for this session. (Sandboxed Bash commands \
                     still write only where they could at startup.)",
                    dir.display()
                ));
            }
            Ok(dir) => self
                .transcript
                .push_error(format!("{} is not a directory", dir.display())),
            Err(err) => self
                .transcript
                .push_error(format!("Cannot add {}: {err}", dir.display())),
        }
    }

    fn export(&mut self, file: &str) {
        let path = if file.trim().is_empty() {
            export::export_path(file, &self.config.cwd, &self.config.session_id)
        } else {
            resolve_path(file.trim(), &self.config.cwd, &self.config.home)
        };
        match export::write_export(&path, &self.conversation, &self.config.session_id) {
            Ok(()) => self
                .transcript
                .push_info(format!("Exported the conversation to {}", path.display())),
            Err(message) => self.transcript.push_error(message),
        }
    }

    fn context_report(&self) -> String {
        let system = self
            .config
            .system_prompt
            .as_ref()
            .map(|source| source.system_prompt());
        context_usage::ContextUsage::estimate(
            system.as_ref(),
            &self.config.tool_specs,
            &self.conversation,
        )
        .render(self.last_request.as_ref(), self.status.context_window)
    }

    fn status_report(&self) -> String {
        let sources = match self.config.settings.read() {
            Ok((sources, _)) if sources.is_empty() => "none".to_string(),
            Ok((sources, _)) => sources.join(", "),
            Err(message) => message,
        };
        let auth = if self.config.credential_variable.is_empty() {
            "none".to_string()
        } else {
            format!(
                "the {} environment variable",
                self.config.credential_variable
            )
        };
        format!(
            "cairn {}\nModel: {}\nAuth: {auth}\nPermission mode: {}\nWorking directory: {}\n\
             Session: {}\nSettings: {sources}",
            self.config.version,
            self.status.model,
            self.status.permission_mode,
            self.config.cwd.display(),
            self.config.session_id,
        )
    }

    /// What the viewport shows, from the top: the live cells, the spinner, the input box (or a
    /// permission dialog), completions and the status line, in at most `limit` rows. The
    /// live cells get what the rest leaves; a taller input scrolls in its box.
    fn plan(&self, width: u16, limit: u16) -> FramePlan {
        let theme = &self.theme;
        let status_rows = 1;
        let (box_rows, input) = match self.dialogs.front() {
            Some(dialog) => (dialog.height(width, theme), None),
            None => {
                // The text gets what the status line, a spinner line and the borders leave;
                // a taller text scrolls in the box to keep the cursor in view.
                let text_rows = limit.saturating_sub(status_rows + 1 + 2);
                let layout = self.composer.layout(width.saturating_sub(4), text_rows);
                let rows = u16::try_from(layout.rows.len()).unwrap_or(u16::MAX);
                (rows.saturating_add(2), Some(layout))
            }
        };
        let spinner =
            (self.is_running() || self.hint.is_some() || self.input.running_shell().is_some())
                .then(|| self.spinner_line());
        // The status line and the spinner always show; the box gets the rest if need be.
        let box_rows =
            box_rows.min(limit.saturating_sub(status_rows + u16::from(spinner.is_some())));
        let completions = match self.dialogs.front() {
            Some(_) => Vec::new(),
            None => self.input.completion_lines(theme),
        };
        let fixed = status_rows
            + box_rows
            + u16::try_from(completions.len()).unwrap_or(0)
            + u16::from(spinner.is_some());
        let live_room = usize::from(limit.saturating_sub(fixed));
        let mut live = self.transcript.render_live(width, theme);
        if live.len() > live_room {
            live.drain(..live.len() - live_room);
        }
        FramePlan {
            live,
            spinner,
            box_rows,
            input,
            completions,
            limit,
        }
    }

    fn draw(&self, frame: &mut Frame<'_>, plan: FramePlan) {
        let area = frame.area();
        let width = area.width;
        let theme = &self.theme;
        let live_rows = u16::try_from(plan.live.len()).unwrap_or(0);
        let mut y = area.y;
        if live_rows > 0 {
            frame.render_widget(
                Paragraph::new(plan.live),
                Rect::new(area.x, y, width, live_rows),
            );
            y += live_rows;
        }
        if let Some(spinner) = plan.spinner {
            frame.render_widget(Paragraph::new(spinner), Rect::new(area.x, y, width, 1));
            y += 1;
        }
        let box_rows = plan.box_rows.min(area.bottom().saturating_sub(y));
        let box_area = Rect::new(area.x, y, width, box_rows);
        match (self.dialogs.front(), plan.input) {
            (Some(dialog), _) => frame.render_widget(dialog.widget(theme), box_area),
            (None, Some(layout)) => {
                let (column, row) = layout.cursor;
                let first_row = layout.first_row;
                let lines: Vec<Line<'static>> = layout
                    .rows
                    .into_iter()
                    .enumerate()
                    .map(|(index, text)| {
                        let lead = if first_row + index == 0 { "> " } else { "  " };
                        Line::from(vec![Span::styled(lead, theme.dim), Span::raw(text)])
                    })
                    .collect();
                let block = Block::default()
                    .borders(Borders::TOP | Borders::BOTTOM)
                    .border_style(theme.dim);
                frame.render_widget(Paragraph::new(lines).block(block), box_area);
                let cursor_y = y + 1 + row;
                if cursor_y < box_area.bottom().saturating_sub(1) {
                    frame.set_cursor_position((area.x + 2 + column, cursor_y));
                }
            }
            (None, None) => {}
        }
        y += box_rows;
        let completion_rows = u16::try_from(plan.completions.len()).unwrap_or(0);
        if completion_rows > 0 && y + completion_rows < area.bottom() {
            frame.render_widget(
                Paragraph::new(plan.completions),
                Rect::new(area.x, y, width, completion_rows),
            );
            y += completion_rows;
        }
        if y < area.bottom() {
            frame.render_widget(self.status.widget(theme), Rect::new(area.x, y, width, 1));
        }
    }

    fn spinner_line(&self) -> Line<'static> {
        let theme = &self.theme;
        let mut spans = Vec::new();
        if let Some(started) = self.turn_started.filter(|_| self.is_running()) {
            let elapsed = started.elapsed();
            let frame = SPINNER[(elapsed.as_millis() / 100) as usize % SPINNER.len()];
            spans.push(Span::styled(format!("{frame} "), theme.status));
            // Tokens so far: what the API counted for finished requests, and about four bytes
            // a token for the one streaming.
            let tokens = self.turn_tokens + (self.streamed_bytes / 4) as u64;
            let tokens = if tokens > 0 {
                format!(" · ↓ {} tokens", compact_count(tokens))
            } else {
                String::new()
            };
            // The todo in progress says what is being done ("Running the tests…").
            let doing = self
                .transcript
                .todos()
                .iter()
                .find(|todo| todo.status == cairn_protocol::TodoStatus::InProgress)
                .map(|todo| todo.active_form.trim())
                .filter(|active| !active.is_empty())
                .map_or_else(
                    || "Working".to_string(),
                    |active| active.trim_end_matches('…').to_string(),
                );
            spans.push(Span::styled(
                format!(
                    "{doing}… ({}s{tokens} · esc to interrupt)",
                    elapsed.as_secs()
                ),
                theme.dim,
            ));
            let queued = self.turns_pending.saturating_sub(1);
            if queued > 0 {
                spans.push(Span::styled(format!(" · {queued} queued"), theme.dim));
            }
        }
        if let Some(command) = self.input.running_shell() {
            if !spans.is_empty() {
                spans.push(Span::raw("  "));
            }
            spans.push(Span::styled(
                format!("Running !{command}… (esc to stop)"),
                theme.dim,
            ));
        }
        if let Some(hint) = &self.hint {
            if !spans.is_empty() {
                spans.push(Span::raw("  "));
            }
            spans.push(Span::styled(hint.clone(), theme.dim));
        }
        Line::from(spans)
    }
}

/// A custom command as the user invoked it.
struct Invocation {
    name: String,
    arguments: String,
    model: Option<String>,
    allowed_tools: Vec<String>,
}

impl Invocation {
    /// `/name arguments`, as typed.
    fn line(&self) -> String {
        if self.arguments.is_empty() {
            format!("/{}", self.name)
        } else {
            format!("/{} {}", self.name, self.arguments)
        }
    }

    /// The block that goes before the expansion, in Claude Code's tags.
    fn tag(&self) -> String {
        format!(
            "<command-name>/{}</command-name>\n<command-args>{}</command-args>",
            self.name, self.arguments
        )
    }
}

/// Shows the session list where the viewport was and returns the id chosen (`None`:
/// cancelled). The caller has stopped reading keys; the viewport is drawn anew after.
async fn pick_session(
    terminal: &mut Terminal<InlineBackend>,
    sessions: Vec<crate::picker::PickerEntry>,
    theme: Theme,
) -> Result<Option<String>, String> {
    let terminal_error = |err: std::io::Error| format!("Terminal error around the list: {err}");
    terminal.clear().map_err(terminal_error)?;
    let chosen = tokio::task::spawn_blocking(move || {
        crate::picker::run_picker(&sessions, &theme)
            .map(|index| index.and_then(|index| sessions.get(index).map(|s| s.id.clone())))
    })
    .await;
    // The list leaves raw mode when it ends; the app needs it back.
    let _ = crossterm::terminal::enable_raw_mode();
    let _ = crossterm::event::poll(Duration::ZERO);
    terminal.clear().map_err(terminal_error)?;
    match chosen {
        Ok(Ok(id)) => Ok(id),
        Ok(Err(err)) => Err(format!("Cannot show the session list: {err}")),
        Err(err) => Err(format!("The session list stopped unexpectedly: {err}")),
    }
}

/// One frame of the viewport, laid out before it is drawn so the viewport can first be made
/// as tall as it needs.
struct FramePlan {
    live: Vec<Line<'static>>,
    spinner: Option<Line<'static>>,
    box_rows: u16,
    input: Option<composer::InputLayout>,
    completions: Vec<Line<'static>>,
    /// The most rows the frame could have had.
    limit: u16,
}

impl FramePlan {
    /// The rows it takes: live cells, spinner, box, completions and the status line.
    fn height(&self) -> u16 {
        let rows = self.live.len()
            + usize::from(self.spinner.is_some())
            + usize::from(self.box_rows)
            + self.completions.len()
            + 1;
        u16::try_from(rows)
            .unwrap_or(u16::MAX)
            .clamp(1, self.limit.max(1))
    }
}

/// The most rows the viewport may take on a terminal `rows` high: up to
/// [`MAX_VIEWPORT_ROWS`], or all the screen can give while a permission dialog asks (what
/// the user approves should be seen whole when it can be).
fn viewport_limit(rows: u16, asking: bool) -> u16 {
    let room = rows.saturating_sub(ROWS_KEPT_ABOVE).max(1);
    if asking {
        room
    } else {
        room.min(MAX_VIEWPORT_ROWS)
    }
}

/// Makes the viewport `height` rows, keeping its top where it is: its rows are cleared and a
/// new viewport is started there. A taller one that no longer fits below scrolls the screen
/// up, taking the lines above it along (into the scrollback), as printing would.
fn fit_viewport(terminal: &mut Terminal<InlineBackend>, height: u16) -> Result<(), AppError> {
    let area = terminal.get_frame().area();
    if area.height == height {
        return Ok(());
    }
    let top = ratatui::layout::Position::new(0, area.y);
    let backend = terminal.backend_mut();
    ratatui::backend::Backend::set_cursor_position(backend, top)?;
    ratatui::backend::Backend::clear_region(backend, ratatui::backend::ClearType::AfterCursor)?;
    *terminal = Terminal::with_options(
        InlineBackend::at(std::io::stdout(), top),
        TerminalOptions {
            viewport: Viewport::Inline(height),
        },
    )?;
    Ok(())
}

/// Rebuilds the inline viewport at the terminal's new size. The terminal has reflowed the
/// screen, so where the old viewport went is unknown: the screen is cleared (what was printed
/// stays in the scrollback) and the viewport starts again at the top, without asking the
/// terminal where the cursor is (see `inline_backend`).
fn resize(terminal: &mut Terminal<InlineBackend>) -> Result<(), AppError> {
    let size = terminal.size()?;
    terminal.backend_mut().reset_to_top()?;
    terminal.resize(Rect::new(0, 0, size.width, size.height))?;
    Ok(())
}

/// A path the user typed: `~` and `~/…` are in the home directory, a relative path is in the
/// working directory.
fn resolve_path(typed: &str, cwd: &std::path::Path, home: &std::path::Path) -> PathBuf {
    match typed.strip_prefix('~') {
        Some("") => home.to_path_buf(),
        Some(rest) if rest.starts_with('/') => home.join(rest.trim_start_matches('/')),
        _ => cwd.join(typed),
    }
}

/// `950`, `1.2k`, `34k`: a count short enough for the spinner line.
fn compact_count(count: u64) -> String {
    match count {
        0..1_000 => count.to_string(),
        1_000..10_000 => format!("{:.1}k", count as f64 / 1000.0),
        _ => format!("{}k", count / 1000),
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
    fn counts_are_short() {
        assert_eq!(compact_count(950), "950");
        assert_eq!(compact_count(1_234), "1.2k");
        assert_eq!(compact_count(34_567), "34k");
    }
}
