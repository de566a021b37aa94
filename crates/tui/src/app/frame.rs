//! The viewport's frame: what it shows, from the live cells to the status line, how tall it
//! is, and the spinner.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::{Frame, Terminal, TerminalOptions, Viewport};

use super::inline_backend::InlineBackend;
use super::*;

impl App {
    /// What the viewport shows, from the top: the live cells, the spinner, the input box (or a
    /// permission dialog), completions and the status line, in at most `limit` rows. The
    /// live cells get what the rest leaves; a taller input scrolls in its box.
    pub(super) fn plan(&self, width: u16, limit: u16) -> FramePlan {
        let theme = &self.theme;
        let status_rows = 1;
        let (box_rows, input) = match (
            self.dialogs.front(),
            self.forms.front(),
            &self.memory_choice,
        ) {
            (Some(dialog), _, _) => (dialog.height(width, theme), None),
            // An MCP server's form, after the permission dialogs.
            (None, Some(form), _) => (form.height(width, theme), None),
            (None, None, Some(choice)) => (choice.height(width, theme), None),
            (None, None, None) => {
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
            None if self.memory_choice.is_some() || !self.forms.is_empty() => Vec::new(),
            None if self.shortcuts_open => shortcut_lines(theme),
            None => self.input.completion_lines(theme),
        };
        let fixed = status_rows
            + box_rows
            + u16::try_from(completions.len()).unwrap_or(0)
            + u16::from(spinner.is_some());
        // Messages typed while the turn runs, by their text, as far as there is room.
        let mut queued = queued_lines(&self.queued, width, theme);
        queued.truncate(usize::from(limit.saturating_sub(fixed)));
        let fixed = fixed + u16::try_from(queued.len()).unwrap_or(0);
        let live_room = usize::from(limit.saturating_sub(fixed));
        let mut live = self.transcript.render_live(width, theme);
        if live.len() > live_room {
            live.drain(..live.len() - live_room);
        }
        FramePlan {
            live,
            spinner,
            queued,
            box_rows,
            input,
            completions,
            limit,
        }
    }

    pub(super) fn draw(&self, frame: &mut Frame<'_>, plan: FramePlan) {
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
        let queued_rows = u16::try_from(plan.queued.len())
            .unwrap_or(0)
            .min(area.bottom().saturating_sub(y));
        if queued_rows > 0 {
            frame.render_widget(
                Paragraph::new(plan.queued),
                Rect::new(area.x, y, width, queued_rows),
            );
            y += queued_rows;
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
            (None, None) => {
                if let Some(form) = self.forms.front() {
                    form.render(box_area, frame.buffer_mut(), theme);
                } else if let Some(choice) = &self.memory_choice {
                    frame.render_widget(choice.widget(theme), box_area);
                }
            }
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

    /// Rebuilds the viewport after a resize (see [`resize`]), then puts the conversation's
    /// end, rendered at the new width, back above it: exactly the rows the viewport leaves,
    /// so the screen shows the conversation rather than the input box alone and nothing
    /// re-inserted scrolls into the terminal's history (what was printed before the resize
    /// stays there as it was). Lines still waiting to go out are left to do so (they would
    /// come twice).
    pub(super) fn refill_screen_after_resize(
        &mut self,
        terminal: &mut Terminal<InlineBackend>,
    ) -> Result<(), AppError> {
        resize(terminal)?;
        let size = terminal.size()?;
        let limit = viewport_limit(size.height, !self.dialogs.is_empty());
        let viewport = self.plan(size.width, limit).height();
        self.refill_screen(size.width, size.height.saturating_sub(viewport));
        Ok(())
    }

    fn refill_screen(&mut self, width: u16, rows: u16) {
        if !self.scrollback.is_empty() || self.transcript.has_unflushed() {
            return;
        }
        let rows = usize::from(rows);
        self.scrollback.extend(
            self.transcript
                .render_finished_tail(width, &self.theme, rows),
        );
    }

    pub(super) fn spinner_line(&self) -> Line<'static> {
        let theme = &self.theme;
        let mut spans = Vec::new();
        if let Some(started) = self.turn_started.filter(|_| self.is_running()) {
            // While a dialog asks, the spinner and the clock stand still: nothing is working.
            let elapsed = match self.approval_wait {
                Some(since) => since.saturating_duration_since(started),
                None => started.elapsed(),
            };
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
            let line = if self.approval_wait.is_some() {
                format!(
                    "Waiting for your approval… ({}s{tokens} · paused)",
                    elapsed.as_secs()
                )
            } else {
                format!(
                    "{doing}… ({}s{tokens} · esc to interrupt)",
                    elapsed.as_secs()
                )
            };
            spans.push(Span::styled(line, theme.dim));
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

/// One frame of the viewport, laid out before it is drawn so the viewport can first be made
/// as tall as it needs.
pub(super) struct FramePlan {
    live: Vec<Line<'static>>,
    spinner: Option<Line<'static>>,
    /// The messages waiting for the running turn to end, one line each.
    queued: Vec<Line<'static>>,
    box_rows: u16,
    input: Option<composer::InputLayout>,
    /// The completions under the input box, or the keyboard shortcuts.
    completions: Vec<Line<'static>>,
    /// The most rows the frame could have had.
    limit: u16,
}

impl FramePlan {
    /// The rows it takes: live cells, spinner, queued messages, box, completions and the
    /// status line.
    pub(super) fn height(&self) -> u16 {
        let rows = self.live.len()
            + usize::from(self.spinner.is_some())
            + self.queued.len()
            + usize::from(self.box_rows)
            + self.completions.len()
            + 1;
        u16::try_from(rows)
            .unwrap_or(u16::MAX)
            .clamp(1, self.limit.max(1))
    }
}

/// The most queued messages listed by their text; the rest are counted.
const MAX_QUEUED_SHOWN: usize = 3;

/// One line per message typed while a turn runs (its first line, cut to the width), as
/// `↳ Queued: fix the tests too`; past [`MAX_QUEUED_SHOWN`], how many more.
pub(super) fn queued_lines(
    queued: &VecDeque<String>,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    const LEAD: &str = "  ↳ Queued: ";
    let room = usize::from(width).saturating_sub(crate::wrap::text_width(LEAD));
    let mut lines: Vec<Line<'static>> = queued
        .iter()
        .take(MAX_QUEUED_SHOWN)
        .map(|text| {
            let first = text.trim().lines().next().unwrap_or_default();
            let more = if text.trim().lines().nth(1).is_some() {
                " …"
            } else {
                ""
            };
            let shown =
                crate::wrap::truncate(&crate::wrap::sanitize(&format!("{first}{more}")), room);
            Line::from(vec![Span::styled(LEAD, theme.dim), Span::raw(shown)])
        })
        .collect();
    if queued.len() > MAX_QUEUED_SHOWN {
        lines.push(Line::from(Span::styled(
            format!("    … and {} more", queued.len() - MAX_QUEUED_SHOWN),
            theme.dim,
        )));
    }
    lines
}

/// The keys the input box knows, for `?` on an empty input (any key closes the list).
pub(super) const SHORTCUTS: &[(&str, &str)] = &[
    ("/", "commands"),
    ("@", "attach a file"),
    ("!", "run a shell command"),
    ("#", "save a memory"),
    ("↑ ↓", "earlier prompts"),
    ("ctrl+r", "search earlier prompts"),
    (
        "shift+enter",
        "new line (also alt+enter, ctrl+j, or \\ then enter)",
    ),
    ("shift+tab", "cycle the permission mode"),
    ("tab", "thinking on or off (empty input)"),
    ("esc", "stop the turn"),
    ("ctrl+o", "the whole transcript"),
    ("ctrl+c", "clear the input, twice to exit"),
    ("ctrl+d", "exit on an empty input"),
];

fn shortcut_lines(theme: &Theme) -> Vec<Line<'static>> {
    SHORTCUTS
        .iter()
        .map(|(keys, what)| {
            Line::from(vec![
                Span::styled(format!("  {keys:<24}"), theme.status),
                Span::styled((*what).to_string(), theme.dim),
            ])
        })
        .collect()
}

/// The most rows the viewport may take on a terminal `rows` high: up to
/// [`MAX_VIEWPORT_ROWS`], or all the screen can give while a permission dialog asks (what
/// the user approves should be seen whole when it can be).
pub(super) fn viewport_limit(rows: u16, asking: bool) -> u16 {
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
pub(super) fn fit_viewport(
    terminal: &mut Terminal<InlineBackend>,
    height: u16,
) -> Result<(), AppError> {
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
pub(super) fn resize(terminal: &mut Terminal<InlineBackend>) -> Result<(), AppError> {
    let size = terminal.size()?;
    terminal.backend_mut().reset_to_top()?;
    terminal.resize(Rect::new(0, 0, size.width, size.height))?;
    Ok(())
}

/// `950`, `1.2k`, `34k`: a count short enough for the spinner line.
pub(super) use crate::sub_agent::compact_count;

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|line| line.to_string()).collect()
    }

    #[test]
    fn queued_messages_show_their_first_line_cut_to_the_width() {
        let queued: VecDeque<String> = [
            "fix the tests too",
            "then update the README\nand the changelog",
            "a message far too long to fit in the forty columns",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        assert_eq!(
            texts(&queued_lines(&queued, 40, &Theme::plain())),
            [
                "  ↳ Queued: fix the tests too",
                "  ↳ Queued: then update the README …",
                "  ↳ Queued: a message far too long to f…",
            ]
        );
    }

    #[test]
    fn past_three_queued_messages_the_rest_are_counted() {
        let queued: VecDeque<String> = (1..=5).map(|n| format!("message {n}")).collect();
        assert_eq!(
            texts(&queued_lines(&queued, 60, &Theme::plain())),
            [
                "  ↳ Queued: message 1",
                "  ↳ Queued: message 2",
                "  ↳ Queued: message 3",
                "    … and 2 more",
            ]
        );
        assert!(queued_lines(&VecDeque::new(), 60, &Theme::plain()).is_empty());
    }

    #[test]
    fn the_shortcuts_name_each_key_once() {
        let lines = texts(&shortcut_lines(&Theme::plain()));
        assert_eq!(lines.len(), SHORTCUTS.len());
        assert_eq!(lines[0], format!("  {:<24}commands", "/"));
        assert!(
            lines
                .iter()
                .any(|line| line.contains("shift+tab")
                    && line.ends_with("cycle the permission mode")),
            "{lines:#?}"
        );
    }
}
