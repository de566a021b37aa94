//! The conversation as the user sees it: cells built from the engine's events.
//!
//! Cells are finished in order. A finished cell never changes again, so the UI writes it once
//! into the terminal's scrollback ([`Transcript::take_unflushed`]); everything still changing
//! (the message being streamed, tool calls waiting for their results) is the live region that
//! is redrawn below it ([`Transcript::render_live`]).

pub(crate) mod user_prompt;

use std::path::PathBuf;

use cairn_protocol::{AgentEvent, ContentBlock, Message, RetryNotice, TodoItem, TurnEnd};
use ratatui::text::{Line, Span};

use crate::markdown::{MarkdownPieces, render_markdown};
use crate::theme::Theme;
use crate::tool_cell::{Detail, ToolCall, ToolOutcome, render_tool_call_with};
use crate::wrap::{Prefix, sanitize, text_width, truncate, wrap_words};
use user_prompt::UserPrompt;

/// Whether thinking shows whole or as its first line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThinkingDisplay {
    #[default]
    Collapsed,
    Expanded,
}

/// What a delta streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Text,
    Thinking,
}

/// One entry of the transcript.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    User(UserPrompt),
    Assistant(String),
    Thinking(String),
    Tool(ToolCall),
    Error(String),
    Warning(String),
    Info(String),
}

impl Cell {
    /// The text a delta of `stream` adds to, if this cell is of its kind.
    fn stream_text(&mut self, stream: Stream) -> Option<&mut String> {
        match (self, stream) {
            (Cell::Assistant(text), Stream::Text) | (Cell::Thinking(text), Stream::Thinking) => {
                Some(text)
            }
            (Cell::Assistant(_), Stream::Thinking)
            | (Cell::Thinking(_), Stream::Text)
            | (
                Cell::User(_) | Cell::Tool(_) | Cell::Error(_) | Cell::Warning(_) | Cell::Info(_),
                Stream::Text | Stream::Thinking,
            ) => None,
        }
    }

    fn tool_call(&mut self) -> Option<&mut ToolCall> {
        match self {
            Cell::Tool(call) => Some(call),
            Cell::User(_)
            | Cell::Assistant(_)
            | Cell::Thinking(_)
            | Cell::Error(_)
            | Cell::Warning(_)
            | Cell::Info(_) => None,
        }
    }

    /// Whether nothing more will change in it: only a tool call waits, for its result.
    fn is_complete(&self) -> bool {
        match self {
            Cell::Tool(call) => call.result.is_some(),
            Cell::User(_)
            | Cell::Assistant(_)
            | Cell::Thinking(_)
            | Cell::Error(_)
            | Cell::Warning(_)
            | Cell::Info(_) => true,
        }
    }
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
    /// Cells of the assistant message being streamed. A failed request that is retried
    /// discards them, so they stay live until the message is complete.
    streaming: Vec<Cell>,
    /// The last streaming cell still grows with each delta.
    growing: bool,
    retry: Option<RetryNotice>,
    thinking: ThinkingDisplay,
    todos: Vec<TodoItem>,
    cwd: Option<PathBuf>,
}

impl Transcript {
    pub fn new() -> Transcript {
        Transcript::default()
    }

    /// Paths inside `cwd` are shown relative to it.
    pub fn set_working_dir(&mut self, cwd: impl Into<PathBuf>) {
        self.cwd = Some(cwd.into());
    }

    pub fn set_thinking_display(&mut self, display: ThinkingDisplay) {
        self.thinking = display;
    }

    /// The todo list as the last `TodosChanged` left it.
    pub fn todos(&self) -> &[TodoItem] {
        &self.todos
    }

    /// Whether anything is still live: a message streaming or a tool call running.
    pub fn is_busy(&self) -> bool {
        !self.pending.is_empty() || !self.streaming.is_empty() || self.retry.is_some()
    }

    pub fn apply(&mut self, event: &AgentEvent) {
        match event {
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
                self.growing = false;
                self.streaming.push(Cell::Tool(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    input: None,
                    result: None,
                    file_before: None,
                }));
            }
            AgentEvent::ToolCallInputComplete { id, name, input } => {
                self.growing = false;
                match self.tool_call(id) {
                    Some(call) => call.input = Some(input.clone()),
                    None => self.streaming.push(Cell::Tool(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        input: Some(input.clone()),
                        result: None,
                        file_before: None,
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
                    None => self.pending.push(Cell::Tool(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        input: None,
                        result: Some(outcome),
                        file_before: None,
                    })),
                }
                self.settle();
            }
            AgentEvent::AssistantMessage { message, .. } => {
                self.retry = None;
                if self.streaming.is_empty() {
                    // Nothing was streamed (a provider that sends whole messages): use the message.
                    self.streaming = cells_of(message);
                }
                self.growing = false;
                self.pending.append(&mut self.streaming);
                self.settle();
            }
            AgentEvent::ToolResultsMessage { .. }
            | AgentEvent::PermissionRequested { .. }
            | AgentEvent::PermissionDecided(_) => {}
            AgentEvent::Retrying(notice) => {
                if notice.discard_partial {
                    self.streaming.clear();
                    self.growing = false;
                }
                self.retry = Some(notice.clone());
            }
            AgentEvent::TodosChanged { todos } => self.todos = todos.clone(),
            AgentEvent::ModelChanged { model } => {
                self.push_info(format!("Model: {model}"));
            }
            AgentEvent::Warning { message } => self.push_warning(message.clone()),
            AgentEvent::TurnFinished(summary) => self.finish_everything(Some(&summary.end)),
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

    pub fn push_warning(&mut self, message: impl Into<String>) {
        self.push_cell(Cell::Warning(message.into()));
    }

    pub fn push_info(&mut self, message: impl Into<String>) {
        self.push_cell(Cell::Info(message.into()));
    }

    /// Every finished cell, each followed by an empty line.
    pub fn render_finished(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        self.render_cells(&self.finished, width, theme)
    }

    /// The finished cells not handed out before, for writing into the scrollback once. A long
    /// assistant message comes a piece at a time (about 16 KB of its text per call, which
    /// renders in about a millisecond), so call this until
    /// [`Transcript::has_unflushed`] says nothing is left; the pieces' lines, one after
    /// another, are the lines of the whole.
    pub fn take_unflushed(&mut self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        self.take_unflushed_within(FLUSH_BYTES, width, theme)
    }

    /// Whether finished cells, or the rest of one, wait for [`Transcript::take_unflushed`].
    pub fn has_unflushed(&self) -> bool {
        self.flushed < self.finished.len()
    }

    /// [`Transcript::take_unflushed`] rendering about `budget` bytes of assistant text.
    fn take_unflushed_within(
        &mut self,
        mut budget: usize,
        width: u16,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        while budget > 0
            && let Some(cell) = self.finished.get(self.flushed)
        {
            let Cell::Assistant(text) = cell else {
                lines.extend(self.render_cells([cell], width, theme));
                self.flushed += 1;
                continue;
            };
            if text.trim().is_empty() {
                self.flushed += 1;
                continue;
            }
            let start = self.flushing.offset();
            let piece = if self.flushing.has_shown() {
                Piece::Later
            } else {
                Piece::First
            };
            let body = self
                .flushing
                .next(text, budget, width.saturating_sub(2).max(1), theme);
            lines.extend(hang(
                body,
                Span::styled("● ", theme.assistant_bullet),
                piece,
            ));
            budget = budget.saturating_sub(self.flushing.offset() - start);
            if self.flushing.is_done(text) {
                if self.flushing.has_shown() {
                    lines.push(Line::default());
                }
                self.flushing = MarkdownPieces::default();
                self.flushed += 1;
            }
        }
        lines
    }

    /// What is still changing: tool calls waiting for results, the message being streamed, a
    /// retry in progress. Cells are separated by an empty line; there is none at the end.
    pub fn render_live(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        // The live region is at most a viewport high, so a long streaming message renders only
        // its tail: re-rendering all of it on every frame made the UI fall ever further behind.
        let mut lines = Vec::new();
        for cell in self.pending.iter().chain(&self.streaming) {
            let rendered = if let Cell::Assistant(text) = cell
                && text.len() > LIVE_TAIL_BYTES
            {
                self.render_cell(&Cell::Assistant(live_tail(text)), width, theme)
            } else {
                self.render_cell(cell, width, theme)
            };
            if !rendered.is_empty() {
                lines.extend(rendered);
                lines.push(Line::default());
            }
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

    fn push_cell(&mut self, cell: Cell) {
        if self.pending.is_empty() && self.streaming.is_empty() {
            self.finished.push(cell);
        } else {
            self.pending.push(cell);
        }
    }

    /// Appends streamed text to the growing cell of its kind, or starts one.
    fn grow(&mut self, delta: &str, stream: Stream) {
        if self.growing
            && let Some(text) = self
                .streaming
                .last_mut()
                .and_then(|cell| cell.stream_text(stream))
        {
            text.push_str(delta);
            return;
        }
        self.streaming.push(match stream {
            Stream::Text => Cell::Assistant(delta.to_string()),
            Stream::Thinking => Cell::Thinking(delta.to_string()),
        });
        self.growing = true;
    }

    fn tool_call(&mut self, id: &str) -> Option<&mut ToolCall> {
        self.streaming
            .iter_mut()
            .chain(self.pending.iter_mut())
            .filter_map(Cell::tool_call)
            .find(|call| call.id == id)
    }

    /// Moves complete cells from the front of the queue to the finished ones.
    fn settle(&mut self) {
        let complete = self
            .pending
            .iter()
            .position(|cell| !cell.is_complete())
            .unwrap_or(self.pending.len());
        self.finished.extend(self.pending.drain(..complete));
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
                | TurnEnd::MaxTurns { .. }
                | TurnEnd::Failed { .. },
            ) => "No result",
        };
        self.pending.append(&mut self.streaming);
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
            Some(TurnEnd::MaxTurns { limit }) => self.finished.push(Cell::Warning(format!(
                "Stopped after {limit} model requests (the max-turns limit)."
            ))),
            Some(TurnEnd::Interrupted) => {
                self.finished
                    .push(Cell::Warning("Interrupted by user".into()));
            }
            Some(TurnEnd::Failed { message }) => {
                self.finished.push(Cell::Error(message.clone()));
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
            .chain(&self.streaming);
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
            Cell::User(prompt) => render_user_prompt(prompt, columns, theme),
            Cell::Assistant(text) => {
                if text.trim().is_empty() {
                    return Vec::new();
                }
                let body = render_markdown(text, width.saturating_sub(2).max(1), theme);
                hang(
                    body,
                    Span::styled("● ", theme.assistant_bullet),
                    Piece::First,
                )
            }
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
        }
    }
}

/// How much of a finished assistant message's text [`Transcript::take_unflushed`] renders per
/// call: rendering a whole long answer at once held keys up for tens of milliseconds.
const FLUSH_BYTES: usize = 16 * 1024;

/// How much of a streaming message's end the live region renders: more than its 20 rows hold
/// even 400 columns wide, and little enough to render on every frame.
const LIVE_TAIL_BYTES: usize = 8 * 1024;

/// The end of `text` from a paragraph (or else line) break at least [`LIVE_TAIL_BYTES`] before
/// its end, with the code fence the break falls inside reopened, so the visible last lines
/// render as they would in the whole text.
fn live_tail(text: &str) -> String {
    let limit = text.len().saturating_sub(LIVE_TAIL_BYTES);
    let before = &text.as_bytes()[..limit];
    let cut = match before.windows(2).rposition(|pair| pair == b"\n\n") {
        Some(at) => at + 2,
        None => match before.iter().rposition(|&byte| byte == b'\n') {
            Some(at) => at + 1,
            None => return text.to_owned(),
        },
    };
    let mut open_fence = None;
    for line in text[..cut].lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            open_fence = match open_fence {
                Some(_) => None,
                None => Some(line),
            };
        }
    }
    match open_fence {
        Some(fence) => format!("{fence}\n{}", &text[cut..]),
        None => text[cut..].to_owned(),
    }
}

/// Which piece of a cell's lines [`hang`] is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// The first, whose first line takes the cell's mark.
    First,
    Later,
}

/// Puts `mark` before the first line of a cell's first piece and as much space before the
/// others.
fn hang(lines: Vec<Line<'static>>, mark: Span<'static>, piece: Piece) -> Vec<Line<'static>> {
    let indent = " ".repeat(text_width(&mark.content));
    lines
        .into_iter()
        .enumerate()
        .map(|(index, line)| {
            let lead = if index == 0 && piece == Piece::First {
                mark.clone()
            } else {
                Span::raw(indent.clone())
            };
            let mut spans = vec![lead];
            spans.extend(line.spans);
            Line::from(spans)
        })
        .collect()
}

fn notice(
    mark: &'static str,
    message: &str,
    style: ratatui::style::Style,
    width: usize,
) -> Vec<Line<'static>> {
    // Each line of a multi-line notice (a command's report) wraps on its own, under the mark.
    let mut lines = Vec::new();
    for (index, part) in message.trim().lines().enumerate() {
        let lead = if index == 0 { mark } else { "  " };
        let spans = [Span::styled(sanitize(part), style)];
        lines.extend(wrap_words(
            &spans,
            width,
            &Prefix::hanging(Span::styled(lead, style)),
        ));
    }
    lines
}

/// What the user typed after `> `, then a `⎿ Attached …` line for each attached file.
fn render_user_prompt(prompt: &UserPrompt, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let text = prompt.text.trim_end();
    if !text.trim().is_empty() {
        let prefix = Prefix {
            first: vec![Span::styled("> ", theme.user_prompt)],
            rest: vec![Span::raw("  ")],
        };
        let spans = [Span::styled(sanitize(text), theme.user_text)];
        lines.extend(wrap_words(&spans, width, &prefix));
    }
    for attachment in &prompt.attachments {
        let prefix = Prefix {
            first: vec![Span::styled("  ⎿ ", theme.dim)],
            rest: vec![Span::raw("    ")],
        };
        let spans = [Span::styled(sanitize(&attachment.summary()), theme.dim)];
        lines.extend(wrap_words(&spans, width, &prefix));
    }
    lines
}

fn render_thinking(
    text: &str,
    display: ThinkingDisplay,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let text = sanitize(text.trim());
    if text.is_empty() {
        return Vec::new();
    }
    let prefix = Prefix::hanging(Span::styled("✻ ", theme.thinking));
    match display {
        ThinkingDisplay::Expanded => {
            wrap_words(&[Span::styled(text, theme.thinking)], width, &prefix)
        }
        ThinkingDisplay::Collapsed => {
            let mut lines = text.lines().filter(|line| !line.trim().is_empty());
            let first = lines.next().unwrap_or_default().trim();
            let more = if lines.next().is_some() { " …" } else { "" };
            let shown = truncate(&format!("{first}{more}"), width.saturating_sub(2).max(1));
            vec![Line::from(vec![
                Span::styled("✻ ", theme.thinking),
                Span::styled(shown, theme.thinking),
            ])]
        }
    }
}

/// The cells of a whole assistant message, for when it was not streamed.
fn cells_of(message: &Message) -> Vec<Cell> {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(Cell::Assistant(text.clone())),
            ContentBlock::Thinking { thinking, .. } => Some(Cell::Thinking(thinking.clone())),
            ContentBlock::ToolUse { id, name, input } => Some(Cell::Tool(ToolCall {
                id: id.clone(),
                name: name.clone(),
                input: Some(input.clone()),
                result: None,
                file_before: None,
            })),
            ContentBlock::RedactedThinking { .. }
            | ContentBlock::ToolResult { .. }
            | ContentBlock::Image { .. } => None,
        })
        .collect()
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
