//! The conversation as the user sees it: cells built from the engine's events.
//!
//! Cells are finished in order. A finished cell never changes again, so the UI writes it once
//! into the terminal's scrollback ([`Transcript::take_unflushed`]); everything still changing
//! (the end of the message being streamed, tool calls waiting for their results) is the live
//! region that is redrawn below it ([`Transcript::render_live`]).
//!
//! The message being streamed is finished as it streams, so a long answer reaches the
//! scrollback as it is written rather than all at once at its end: each cell once a later one
//! has started, and the answer's text a top-level Markdown block at a time, once the next one
//! has started. A tool call still waiting for its result holds back what follows it.

mod boundary;
mod cell;
mod render;
pub(crate) mod user_prompt;

use std::path::PathBuf;

use cairn_protocol::{AgentEvent, RetryNotice, TodoItem, TurnEnd};
use ratatui::text::{Line, Span};

use crate::markdown::{GrowingMarkdown, MarkdownPieces};
use crate::sub_agent::SubAgentProgress;
use crate::theme::Theme;
use crate::tool_cell::{Detail, ToolCall, ToolOutcome, render_tool_call_with};
use crate::wrap::{Prefix, sanitize, wrap_words};
use boundary::Boundary;
pub(crate) use boundary::is_opening;
use cell::{Cell, Stream, cells_of};
use render::{
    Piece, answer_width, bullet, hang, notice, render_answer, render_answer_from, render_thinking,
    render_user_prompt,
};
use user_prompt::UserPrompt;

/// Whether thinking shows whole or as its first line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThinkingDisplay {
    /// One line: the first line of the thinking, with ` …` when there is more (the default,
    /// so thinking does not push the answer out of view).
    #[default]
    Collapsed,
    /// The whole text, wrapped.
    Expanded,
}

/// The assistant message being streamed, from its first delta until it ends or a failed
/// request that is retried discards it.
#[derive(Debug, Clone, Default)]
struct Streamed {
    /// Where its cells start in `finished`, once one is there. It cannot be taken back from
    /// there: a retry that discards it says so instead.
    start: Option<usize>,
    /// How much of its growing text is complete blocks.
    text: GrowingMarkdown,
    /// The growing text is the last finished cell: its complete blocks are finished, the rest
    /// is live.
    open: bool,
    /// Cells that came while it streamed, once part of it was finished: they follow it.
    after: Vec<Cell>,
}

/// What the engine has said so far, as cells, fed one [`AgentEvent`] at a time.
///
/// ```
/// use cairn_protocol::AgentEvent;
/// use cairn_tui::{Theme, Transcript};
///
/// let mut transcript = Transcript::new();
/// transcript.apply(&AgentEvent::TextDelta { text: "Hello **there**".into() });
/// let live: Vec<String> = transcript
///     .render_live(40, &Theme::plain())
///     .iter()
///     .map(|line| line.to_string())
///     .collect();
/// assert_eq!(live, ["● Hello there"]);
/// assert!(transcript.render_finished(40, &Theme::plain()).is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    finished: Vec<Cell>,
    /// How many of `finished` [`Transcript::take_unflushed`] has handed out whole.
    flushed: usize,
    /// How far it got into the next one, an assistant message handed out in pieces.
    flushing: MarkdownPieces,
    /// Cells of complete messages, held back while a tool call among or before them runs.
    pending: Vec<Cell>,
    /// Cells of the message being streamed not finished yet: the last one may still grow, a
    /// tool call waits for its result, or something before them does.
    streaming: Vec<Cell>,
    /// The last streamed cell (the open text, if there is one) still grows with each delta.
    growing: bool,
    message: Option<Streamed>,
    retry: Option<RetryNotice>,
    thinking: ThinkingDisplay,
    todos: Vec<TodoItem>,
    cwd: Option<PathBuf>,
}

impl Transcript {
    /// An empty transcript, thinking collapsed and paths shown as they come.
    pub fn new() -> Transcript {
        Transcript::default()
    }

    /// Paths inside `cwd` are shown relative to it.
    pub fn set_working_dir(&mut self, cwd: impl Into<PathBuf>) {
        self.cwd = Some(cwd.into());
    }

    /// Whether cells of thinking drawn from now on show whole or as their first line.
    pub fn set_thinking_display(&mut self, display: ThinkingDisplay) {
        self.thinking = display;
    }

    /// The todo list as the last `TodosChanged` left it.
    pub fn todos(&self) -> &[TodoItem] {
        &self.todos
    }

    /// Whether anything is still live: a message streaming or a tool call running.
    pub fn is_busy(&self) -> bool {
        self.message.is_some() || !self.pending.is_empty() || self.retry.is_some()
    }

    /// Takes in one of the engine's events: deltas grow the live answer, tool calls become
    /// cells that wait for their results, a finished turn closes what is open, and events
    /// with nothing to show (debug lines, a permission mode change) are ignored.
    pub fn apply(&mut self, event: &AgentEvent) {
        match event {
            // The note after an interrupted answer is for the model; the turn's end says it.
            AgentEvent::UserMessage { message }
                if message.text() == cairn_core::INTERRUPTED_NOTE =>
            {
                self.finish_everything(None);
            }
            // A resumed session's opening after a compaction: not something the user typed.
            AgentEvent::UserMessage { message } if is_opening(message) => {
                self.finish_everything(None);
                if let Some(boundary) = Boundary::resumed(message) {
                    self.finished.push(Cell::Boundary(boundary));
                }
            }
            AgentEvent::UserMessage { message } => {
                self.finish_everything(None);
                let prompt = UserPrompt::of(message);
                if !prompt.is_empty() {
                    self.finished.push(Cell::User(prompt));
                }
            }
            AgentEvent::TextDelta { text } => {
                self.retry = None;
                self.grow(text, Stream::Text);
            }
            AgentEvent::ThinkingDelta { text } => {
                self.retry = None;
                self.grow(text, Stream::Thinking);
            }
            AgentEvent::ToolCallStarted { id, name } => {
                self.retry = None;
                self.stop_growing();
                self.stream_cell(Cell::Tool(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    input: None,
                    result: None,
                    file_before: None,
                    awaiting_approval: false,
                    sub_agent: None,
                }));
            }
            AgentEvent::ToolCallInputComplete { id, name, input } => {
                self.stop_growing();
                match self.tool_call(id) {
                    Some(call) => call.input = Some(input.clone()),
                    None => self.stream_cell(Cell::Tool(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        input: Some(input.clone()),
                        result: None,
                        file_before: None,
                        awaiting_approval: false,
                        sub_agent: None,
                    })),
                }
            }
            AgentEvent::ToolCallResult {
                id,
                name,
                content,
                is_error,
            } => {
                let outcome = ToolOutcome {
                    text: content.text(),
                    is_error: *is_error,
                };
                match self.tool_call(id) {
                    Some(call) => call.result = Some(outcome),
                    None => self.push_cell(Cell::Tool(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        input: None,
                        result: Some(outcome),
                        file_before: None,
                        awaiting_approval: false,
                        sub_agent: None,
                    })),
                }
            }
            AgentEvent::AssistantMessage { message, .. } => {
                self.retry = None;
                self.growing = false;
                match self.message.take() {
                    Some(streamed) => {
                        self.pending.append(&mut self.streaming);
                        self.pending.extend(streamed.after);
                    }
                    // Nothing was streamed (a provider that sends whole messages): use the message.
                    None => self.pending.extend(cells_of(message)),
                }
            }
            // The call's cell says it waits for the user until the answer comes (a sub-agent's
            // call has no cell here).
            AgentEvent::PermissionRequested { tool_use_id, .. } => {
                if let Some(call) = self.tool_call(tool_use_id) {
                    call.awaiting_approval = true;
                }
            }
            AgentEvent::PermissionDecided(decision) => {
                if let Some(call) = self.tool_call(&decision.tool_use_id) {
                    call.awaiting_approval = false;
                }
            }
            // The status line shows the mode; Shift+Tab would fill the transcript with it.
            AgentEvent::ToolResultsMessage { .. } | AgentEvent::PermissionModeChanged { .. } => {}
            AgentEvent::Retrying(notice) => {
                if notice.discard_partial {
                    self.discard_message(&notice.reason);
                }
                self.retry = Some(notice.clone());
            }
            AgentEvent::TodosChanged { todos } => self.todos = todos.clone(),
            AgentEvent::ModelChanged { model } => {
                self.push_info(format!("Model: {model}"));
            }
            AgentEvent::Warning { message } => self.push_warning(message.clone()),
            AgentEvent::Debug { .. } | AgentEvent::SideRequests(_) => {}
            AgentEvent::Compacted(compaction) => match Boundary::of(compaction) {
                Some(boundary) => self.push_cell(Cell::Boundary(boundary)),
                None => self.push_info(format!(
                    "Context: {} made the conversation about {} tokens (was {}).",
                    compaction.step, compaction.tokens_after, compaction.tokens_before
                )),
            },
            AgentEvent::TurnFinished(summary) => self.finish_everything(Some(&summary.end)),
        }
        self.advance();
    }

    /// Takes in one event of the sub-agent the `Agent` call `parent_tool_use_id` started: its
    /// cell shows the sub-agent's progress while it runs and sums it up once it ends. The
    /// sub-agent's own messages stay out of the transcript.
    /// Its cost is priced by `facts`.
    pub fn apply_sub_agent(
        &mut self,
        parent_tool_use_id: &str,
        event: &AgentEvent,
        facts: &crate::ModelFacts,
    ) {
        if let Some(call) = self.tool_call(parent_tool_use_id) {
            call.sub_agent
                .get_or_insert_with(|| Box::new(SubAgentProgress::starting_now()))
                .apply(event, facts);
        }
    }

    /// Remembers the file a Write call `id` is about to replace, as it is before the call, so
    /// its cell shows what the write removes as well as what it adds.
    pub fn set_file_before(&mut self, id: &str, text: String) {
        if let Some(call) = self.tool_call(id) {
            call.file_before = Some(text);
        }
    }

    /// Adds an error of the UI's own (a slash command that failed, say) after what is there.
    pub fn push_error(&mut self, message: impl Into<String>) {
        self.push_cell(Cell::Error(message.into()));
    }

    /// Adds a warning of the UI's own (a settings file that did not read, say) after what is
    /// there.
    pub fn push_warning(&mut self, message: impl Into<String>) {
        self.push_cell(Cell::Warning(message.into()));
    }

    /// Adds a plain notice (the welcome line, a slash command's report) after what is there.
    pub fn push_info(&mut self, message: impl Into<String>) {
        self.push_cell(Cell::Info(message.into()));
    }

    /// Every finished cell, each followed by an empty line; of an answer still being written,
    /// its complete blocks (the live region goes on from there).
    pub fn render_finished(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        match self.open_text() {
            Some((text, complete)) => {
                let closed = &self.finished[..self.finished.len() - 1];
                let mut lines = self.render_cells(closed, width, theme);
                lines.extend(render_answer(&text[..complete], width, theme));
                lines
            }
            None => self.render_cells(&self.finished, width, theme),
        }
    }

    /// The last `rows` lines of [`Transcript::render_finished`], rendering only the cells they
    /// come from: a resized screen is refilled with the conversation's end without rendering
    /// a long session whole.
    pub fn render_finished_tail(
        &self,
        width: u16,
        theme: &Theme,
        rows: usize,
    ) -> Vec<Line<'static>> {
        let (closed, mut open) = match self.open_text() {
            Some((text, complete)) => (
                &self.finished[..self.finished.len() - 1],
                render_answer(&text[..complete], width, theme),
            ),
            None => (&self.finished[..], Vec::new()),
        };
        let mut cells: Vec<Vec<Line<'static>>> = Vec::new();
        let mut count = open.len();
        for cell in closed.iter().rev() {
            if count >= rows {
                break;
            }
            let mut rendered = self.render_cell(cell, width, theme);
            if rendered.is_empty() {
                continue;
            }
            rendered.push(Line::default());
            count += rendered.len();
            cells.push(rendered);
        }
        let mut lines: Vec<Line<'static>> = cells.into_iter().rev().flatten().collect();
        lines.append(&mut open);
        let cut = lines.len().saturating_sub(rows);
        lines.drain(..cut);
        lines
    }

    /// The finished cells not handed out before, for writing into the scrollback once. A long
    /// assistant message comes a piece at a time (about 16 KB of its text per call, which
    /// renders in about a millisecond), so call this until
    /// [`Transcript::has_unflushed`] says nothing is left; the pieces' lines, one after
    /// another, are the lines of the whole. An answer being written comes as its blocks are
    /// complete.
    pub fn take_unflushed(&mut self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        self.take_unflushed_within(FLUSH_BYTES, width, theme)
    }

    /// Whether finished cells, or the rest of one, wait for [`Transcript::take_unflushed`].
    pub fn has_unflushed(&self) -> bool {
        match self.open_text() {
            Some((_, complete)) if self.flushed + 1 == self.finished.len() => {
                self.flushing.offset() < complete
            }
            Some(_) | None => self.flushed < self.finished.len(),
        }
    }

    /// [`Transcript::take_unflushed`] rendering about `budget` bytes of assistant text.
    fn take_unflushed_within(
        &mut self,
        mut budget: usize,
        width: u16,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let open_complete = self.open_text().map(|(_, complete)| complete);
        let mut lines = Vec::new();
        while budget > 0
            && let Some(cell) = self.finished.get(self.flushed)
        {
            let Cell::Assistant(text) = cell else {
                lines.extend(self.render_cells([cell], width, theme));
                self.flushed += 1;
                continue;
            };
            // Of the open text, only its complete blocks, and it stays unfinished.
            let open = open_complete.filter(|_| self.flushed + 1 == self.finished.len());
            let source = match open {
                Some(complete) => &text[..complete],
                None if text.trim().is_empty() => {
                    self.flushed += 1;
                    continue;
                }
                None => text.as_str(),
            };
            if open.is_some() && self.flushing.is_done(source) {
                break;
            }
            let start = self.flushing.offset();
            let piece = if self.flushing.has_shown() {
                Piece::Later
            } else {
                Piece::First
            };
            let body = self
                .flushing
                .next(source, budget, answer_width(width), theme);
            lines.extend(hang(body, bullet(theme), piece));
            budget = budget.saturating_sub(self.flushing.offset() - start);
            if open.is_none() && self.flushing.is_done(text) {
                if self.flushing.has_shown() {
                    lines.push(Line::default());
                }
                self.flushing = MarkdownPieces::default();
                self.flushed += 1;
            }
        }
        lines
    }

    /// What is still changing: the end of the answer being written, tool calls waiting for
    /// results, a retry in progress. Cells are separated by an empty line; there is none at
    /// the end.
    pub fn render_live(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        let mut add = |rendered: Vec<Line<'static>>| {
            if !rendered.is_empty() {
                lines.extend(rendered);
                lines.push(Line::default());
            }
        };
        if let Some((text, complete)) = self.open_text() {
            add(render_answer_from(text, complete, width, theme));
        }
        let after = self.message.iter().flat_map(|message| &message.after);
        for cell in self.pending.iter().chain(&self.streaming).chain(after) {
            add(match cell {
                // Only its end when it is long: this renders on every frame.
                Cell::Assistant(text) => render_answer_from(text, 0, width, theme),
                _ => self.render_cell(cell, width, theme),
            });
        }
        if let Some(notice) = &self.retry {
            let text = format!(
                "⟳ {} — retrying in {:.1}s (attempt {} of {})",
                sanitize(&notice.reason),
                notice.delay_ms as f64 / 1000.0,
                notice.attempt,
                notice.max_attempts
            );
            lines.extend(wrap_words(
                &[Span::styled(text, theme.warning)],
                usize::from(width),
                &Prefix::none(),
            ));
        } else {
            while lines.last().is_some_and(|line| line.width() == 0) {
                lines.pop();
            }
        }
        lines
    }

    /// The text of the answer being written, if it is the last finished cell, and how many
    /// bytes of it are complete blocks.
    fn open_text(&self) -> Option<(&str, usize)> {
        let message = self.message.as_ref().filter(|message| message.open)?;
        match self.finished.last() {
            Some(Cell::Assistant(text)) => Some((text, message.text.complete())),
            _ => None,
        }
    }

    /// Adds a cell of the UI's own or the engine's notice after what is there: after the
    /// message being streamed if part of it is finished, else before it, as it is shown.
    fn push_cell(&mut self, cell: Cell) {
        match &mut self.message {
            Some(message) if message.start.is_some() => message.after.push(cell),
            Some(_) | None => self.pending.push(cell),
        }
        self.advance();
    }

    /// Adds a cell to the message being streamed (a tool call).
    fn stream_cell(&mut self, cell: Cell) {
        self.message.get_or_insert_with(Streamed::default);
        self.streaming.push(cell);
    }

    /// Appends streamed text to the growing cell of its kind, or starts one.
    fn grow(&mut self, delta: &str, stream: Stream) {
        if self.growing {
            let open = self.message.as_ref().is_some_and(|message| message.open);
            let cell = if open {
                self.finished.last_mut()
            } else {
                self.streaming.last_mut()
            };
            if let Some(text) = cell.and_then(|cell| cell.stream_text(stream)) {
                text.push_str(delta);
                return;
            }
        }
        self.stop_growing();
        let message = self.message.get_or_insert_with(Streamed::default);
        message.text = GrowingMarkdown::default();
        self.streaming.push(match stream {
            Stream::Text => Cell::Assistant(delta.to_string()),
            Stream::Thinking => Cell::Thinking(delta.to_string()),
        });
        self.growing = true;
    }

    /// The last streamed cell is complete: a new one starts, or the message ends.
    fn stop_growing(&mut self) {
        self.growing = false;
        if let Some(message) = &mut self.message {
            message.open = false;
        }
    }

    fn tool_call(&mut self, id: &str) -> Option<&mut ToolCall> {
        self.streaming
            .iter_mut()
            .chain(self.pending.iter_mut())
            .filter_map(Cell::tool_call)
            .find(|call| call.id == id)
    }

    /// Finishes whatever nothing before it holds back: complete cells waiting in line, then
    /// those of the message being streamed, and of its growing text the complete blocks.
    fn advance(&mut self) {
        if let Some(message) = &mut self.message
            && message.open
        {
            if let Some(Cell::Assistant(text)) = self.finished.last() {
                message.text.grow(text);
            }
            return;
        }
        let complete = self
            .pending
            .iter()
            .position(|cell| !cell.is_complete())
            .unwrap_or(self.pending.len());
        self.finished.extend(self.pending.drain(..complete));
        let Some(message) = &mut self.message else {
            return;
        };
        if !self.pending.is_empty() {
            return;
        }
        let growing = self
            .streaming
            .len()
            .saturating_sub(usize::from(self.growing));
        let complete = self.streaming[..growing]
            .iter()
            .position(|cell| !cell.is_complete())
            .unwrap_or(growing);
        if complete > 0 {
            message.start.get_or_insert(self.finished.len());
            self.finished.extend(self.streaming.drain(..complete));
        }
        if self.growing
            && let [Cell::Assistant(text)] = self.streaming.as_slice()
        {
            message.text.grow(text);
            if message.text.complete() > 0 {
                message.start.get_or_insert(self.finished.len());
                self.finished.append(&mut self.streaming);
                message.open = true;
            }
        }
    }

    /// Drops the message being streamed, for a failed request that is retried from the
    /// start. What of it was handed out for the scrollback stays there: a warning after it
    /// says it was cut off.
    fn discard_message(&mut self, reason: &str) {
        let Some(message) = self.message.take() else {
            return;
        };
        self.streaming.clear();
        self.growing = false;
        if let Some(start) = message.start {
            let partly = self.flushing.offset() > 0;
            let handed_out = match self.flushed.cmp(&start) {
                std::cmp::Ordering::Less => false,
                std::cmp::Ordering::Equal => partly,
                std::cmp::Ordering::Greater => true,
            };
            if handed_out {
                // The answer being handed out in pieces ends where the last piece did.
                if partly && let Some(Cell::Assistant(text)) = self.finished.get_mut(self.flushed) {
                    text.truncate(self.flushing.offset());
                }
                self.finished.truncate(self.flushed + usize::from(partly));
                self.finished.push(Cell::Warning(format!(
                    "The answer above was cut off ({}) and is being retried from the start.",
                    reason.trim()
                )));
            } else {
                self.finished.truncate(start);
            }
        }
        self.pending.extend(message.after);
    }

    /// Ends the turn: whatever is live is finished as it stands, and how the turn ended, if
    /// not well, is said after it.
    fn finish_everything(&mut self, end: Option<&TurnEnd>) {
        self.retry = None;
        self.growing = false;
        let unfinished = match end {
            Some(TurnEnd::Interrupted) => "Interrupted",
            None
            | Some(
                TurnEnd::Completed
                | TurnEnd::MaxTokens
                | TurnEnd::MaxRequests { .. }
                | TurnEnd::Failed { .. }
                | TurnEnd::HookBlocked { .. }
                | TurnEnd::StructuredOutputRetries { .. },
            ) => "No result",
        };
        self.pending.append(&mut self.streaming);
        if let Some(message) = self.message.take() {
            self.pending.extend(message.after);
        }
        for cell in &mut self.pending {
            if let Cell::Tool(call) = cell
                && call.result.is_none()
            {
                call.result = Some(ToolOutcome {
                    text: unfinished.to_string(),
                    is_error: true,
                });
            }
        }
        self.finished.append(&mut self.pending);
        match end {
            None | Some(TurnEnd::Completed) => {}
            Some(TurnEnd::MaxTokens) => self.finished.push(Cell::Warning(
                "The answer was cut off: the model reached its output token limit.".into(),
            )),
            Some(TurnEnd::MaxRequests { limit }) => self.finished.push(Cell::Warning(format!(
                "Stopped after {limit} model requests (the max-turns limit)."
            ))),
            Some(TurnEnd::Interrupted) => {
                self.finished
                    .push(Cell::Warning("Interrupted by user".into()));
            }
            Some(TurnEnd::Failed { message } | TurnEnd::HookBlocked { message }) => {
                self.finished.push(Cell::Error(message.clone()));
            }
            Some(TurnEnd::StructuredOutputRetries { attempts }) => {
                self.finished.push(Cell::Error(format!(
                    "No answer fitting the schema in {attempts} attempts."
                )));
            }
        }
    }

    fn render_cells<'c>(
        &self,
        cells: impl IntoIterator<Item = &'c Cell>,
        width: u16,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        for cell in cells {
            let rendered = self.render_cell(cell, width, theme);
            if !rendered.is_empty() {
                lines.extend(rendered);
                lines.push(Line::default());
            }
        }
        lines
    }

    /// The whole conversation in full detail, for the transcript view: every cell, finished
    /// or still live, with thinking expanded and each tool's whole result.
    pub fn render_full(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        let cells = self
            .finished
            .iter()
            .chain(&self.pending)
            .chain(&self.streaming)
            .chain(self.message.iter().flat_map(|message| &message.after));
        for cell in cells {
            let rendered = self.render_cell_with(cell, width, theme, Detail::Full);
            if !rendered.is_empty() {
                lines.extend(rendered);
                lines.push(Line::default());
            }
        }
        lines
    }

    fn render_cell(&self, cell: &Cell, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        self.render_cell_with(cell, width, theme, Detail::Compact)
    }

    fn render_cell_with(
        &self,
        cell: &Cell,
        width: u16,
        theme: &Theme,
        detail: Detail,
    ) -> Vec<Line<'static>> {
        let columns = usize::from(width);
        match cell {
            Cell::User(prompt) => {
                let limit = match detail {
                    Detail::Compact => Some(PROMPT_LINES),
                    Detail::Full => None,
                };
                render_user_prompt(prompt, columns, theme, limit)
            }
            Cell::Assistant(text) => render_answer(text, width, theme),
            Cell::Thinking(text) => {
                let display = match detail {
                    Detail::Compact => self.thinking,
                    Detail::Full => ThinkingDisplay::Expanded,
                };
                render_thinking(text, display, columns, theme)
            }
            Cell::Tool(call) => {
                render_tool_call_with(call, width, theme, self.cwd.as_deref(), detail)
            }
            Cell::Error(message) => notice("✗ ", message, theme.error, columns),
            Cell::Warning(message) => notice("⚠ ", message, theme.warning, columns),
            Cell::Info(message) => notice("· ", message, theme.dim, columns),
            Cell::Boundary(boundary) => {
                boundary.render(matches!(detail, Detail::Full), columns, theme)
            }
        }
    }
}

/// The most lines of a prompt the scrollback shows (a long paste is not written out whole;
/// the transcript view shows all of it).
const PROMPT_LINES: usize = 20;

/// How much of a finished assistant message's text [`Transcript::take_unflushed`] renders per
/// call: rendering a whole long answer at once held keys up for tens of milliseconds.
const FLUSH_BYTES: usize = 16 * 1024;

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
