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

    pub(super) fn spinner_line(&self) -> Line<'static> {
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

/// One frame of the viewport, laid out before it is drawn so the viewport can first be made
/// as tall as it needs.
pub(super) struct FramePlan {
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
    pub(super) fn height(&self) -> u16 {
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
pub(super) fn compact_count(count: u64) -> String {
    match count {
        0..1_000 => count.to_string(),
        1_000..10_000 => format!("{:.1}k", count as f64 / 1000.0),
        _ => format!("{}k", count / 1000),
    }
}
