//! The session picker `cairn --resume` shows before the app starts: one line per earlier
//! session, newest first, to choose which one to continue.
//!
//! It draws in the same inline style as the app (no alternate screen) and leaves its rows
//! blank when it is done, so the app's viewport starts where the picker was. The rendering is
//! [`render_picker`], a pure function; [`run_picker`] owns the terminal while it runs.

use std::io::Stdout;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::backend::CrosstermBackend;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use ratatui::{Terminal, TerminalOptions, Viewport};

use crate::theme::Theme;
use crate::wrap::{sanitize, text_width, truncate};

/// The most rows the picker takes, title and hint included.
const MAX_PICKER_ROWS: u16 = 14;

/// The marker before the session under the cursor (and the blank before the others).
const CURSOR: &str = "❯ ";
const NO_CURSOR: &str = "  ";

/// One earlier session, as the picker shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PickerEntry {
    /// The session's id, what the caller resumes.
    pub id: String,
    /// When it started, in Unix milliseconds.
    pub started_at_ms: u64,
    /// How many messages it holds (the user's, the assistant's and tool results); the
    /// caller leaves out sessions with none.
    pub message_count: usize,
    /// What its requests cost, in US dollars; models of unknown prices count 0.
    pub cost_usd: f64,
    /// The first thing the user said, on one line.
    pub first_prompt: String,
    /// Its turns failed before any answer (the API unreachable, the key refused): shown as
    /// failed rather than as a count of messages, as `cairn sessions` lists it.
    pub failed: bool,
}

/// What a key does to the picker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerStep {
    /// The cursor moves to this session.
    Move(usize),
    /// This session is chosen.
    Choose(usize),
    /// Esc or Ctrl+C: the user leaves without choosing.
    Cancel,
    /// The key means nothing here.
    Ignore,
}

/// What `key` does with the cursor on `selected` of `len` sessions: Up/Down (and k/j) move,
/// Enter chooses, Esc and Ctrl+C cancel.
pub fn picker_step(key: KeyEvent, selected: usize, len: usize) -> PickerStep {
    if key.kind == KeyEventKind::Release {
        return PickerStep::Ignore;
    }
    let last = len.saturating_sub(1);
    match key.code {
        KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => PickerStep::Cancel,
        KeyCode::Esc => PickerStep::Cancel,
        KeyCode::Enter if len > 0 => PickerStep::Choose(selected.min(last)),
        KeyCode::Up | KeyCode::Char('k') => PickerStep::Move(selected.saturating_sub(1)),
        KeyCode::Down | KeyCode::Char('j') => PickerStep::Move((selected + 1).min(last)),
        KeyCode::Home => PickerStep::Move(0),
        KeyCode::End => PickerStep::Move(last),
        _ => PickerStep::Ignore,
    }
}

/// The picker's lines for a terminal `width` columns wide: a title, one line per session
/// (the one at `selected` marked), and a hint of the keys.
pub fn render_picker(
    sessions: &[PickerEntry],
    selected: usize,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let width = usize::from(width);
    let mut lines = Vec::with_capacity(sessions.len() + 2);
    lines.push(Line::from(Span::styled(
        truncate("Resume a session", width),
        theme.dialog_title,
    )));
    for (index, session) in sessions.iter().enumerate() {
        lines.push(session_line(session, index == selected, width, theme));
    }
    lines.push(Line::from(Span::styled(
        truncate("↑/↓ to move · enter to resume · esc to cancel", width),
        theme.dim,
    )));
    lines
}

fn session_line(
    session: &PickerEntry,
    selected: bool,
    width: usize,
    theme: &Theme,
) -> Line<'static> {
    let size = if session.failed {
        format!("{:>13}", "failed")
    } else {
        format!("{:>4} messages", session.message_count)
    };
    let details = format!(
        "{}  {size}  ${:.2}  ",
        format_start(session.started_at_ms),
        session.cost_usd
    );
    let (marker, details_style, prompt_style) = if selected {
        (CURSOR, theme.selected, theme.selected)
    } else {
        (NO_CURSOR, theme.dim, ratatui::style::Style::default())
    };
    let prompt = sanitize(&session.first_prompt).replace('\n', " ");
    let prompt = if prompt.trim().is_empty() {
        "(no prompt)".to_string()
    } else {
        prompt
    };
    let lead = text_width(marker) + text_width(&details);
    if lead >= width {
        // Too narrow for the details: the marker and as much of the prompt as fits.
        let rest = width.saturating_sub(text_width(marker));
        return Line::from(vec![
            Span::styled(truncate(marker, width), theme.selected),
            Span::styled(truncate(&prompt, rest), prompt_style),
        ]);
    }
    Line::from(vec![
        Span::styled(marker, theme.selected),
        Span::styled(details, details_style),
        Span::styled(truncate(&prompt, width - lead), prompt_style),
    ])
}

/// Unix milliseconds as `YYYY-MM-DD HH:MM` UTC.
fn format_start(ms: u64) -> String {
    let seconds = ms / 1000;
    let day_seconds = seconds % 86_400;
    format!(
        "{} {:02}:{:02}",
        cairn_context::date_from_days(i64::try_from(seconds / 86_400).unwrap_or(i64::MAX)),
        day_seconds / 3600,
        day_seconds % 3600 / 60
    )
}

/// Which sessions fit in `rows` rows with `selected` among them.
fn visible_range(len: usize, selected: usize, rows: usize) -> std::ops::Range<usize> {
    if len <= rows {
        return 0..len;
    }
    let start = selected
        .saturating_sub(rows.saturating_sub(1))
        .min(len - rows);
    start..start + rows
}

/// Raw mode for the picker's life (or another screen shown before the app), switched off
/// again however it ends.
pub(crate) struct RawMode;

impl RawMode {
    pub(crate) fn enter() -> std::io::Result<RawMode> {
        crossterm::terminal::enable_raw_mode()?;
        Ok(RawMode)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// Shows the picker until the user chooses a session (its index in `sessions`) or cancels
/// (`None`). Reads keys from the terminal and blocks while it does: call it before the app
/// starts, off the async runtime's threads.
pub fn run_picker(sessions: &[PickerEntry], theme: &Theme) -> std::io::Result<Option<usize>> {
    if sessions.is_empty() {
        return Ok(None);
    }
    let _raw = RawMode::enter()?;
    crate::event_reader::take_pending_wake();
    let (_, rows) = crossterm::terminal::size()?;
    let wanted = u16::try_from(sessions.len() + 2).unwrap_or(u16::MAX);
    let height = wanted
        .min(MAX_PICKER_ROWS)
        .min(rows.saturating_sub(1))
        .max(3);
    let mut terminal = Terminal::with_options(
        CrosstermBackend::new(std::io::stdout()),
        TerminalOptions {
            viewport: Viewport::Inline(height),
        },
    )?;
    let result = pick(&mut terminal, sessions, theme, usize::from(height - 2));
    // Blank the picker's rows and leave the cursor at their top, for the app to draw there.
    // (No `Terminal::clear`: it asks the terminal where the cursor is.)
    let mut area = ratatui::layout::Rect::default();
    let _ = terminal.draw(|frame| {
        area = frame.area();
        frame.render_widget(Clear, area);
    });
    let _ = terminal.set_cursor_position(area.as_position());
    let _ = terminal.show_cursor();
    result
}

fn pick(
    terminal: &mut Terminal<CrosstermBackend<Stdout>>,
    sessions: &[PickerEntry],
    theme: &Theme,
    rows: usize,
) -> std::io::Result<Option<usize>> {
    let mut selected = 0;
    loop {
        terminal.draw(|frame| {
            let area = frame.area();
            let mut lines = render_picker(sessions, selected, area.width, theme);
            let footer = lines.pop();
            let range = visible_range(sessions.len(), selected, rows);
            // Line 0 is the title; session `i` is line `i + 1`.
            let mut shown: Vec<Line<'static>> = lines.drain(..1).collect();
            shown.extend(lines.drain(range.start..range.end));
            shown.extend(footer);
            frame.render_widget(Clear, area);
            frame.render_widget(Paragraph::new(shown), area);
        })?;
        if let Event::Key(key) = crossterm::event::read()? {
            match picker_step(key, selected, sessions.len()) {
                PickerStep::Move(to) => selected = to,
                PickerStep::Choose(index) => return Ok(Some(index)),
                PickerStep::Cancel => return Ok(None),
                PickerStep::Ignore => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn keys_move_choose_and_cancel() {
        assert_eq!(picker_step(key(KeyCode::Down), 0, 3), PickerStep::Move(1));
        assert_eq!(
            picker_step(key(KeyCode::Char('j')), 2, 3),
            PickerStep::Move(2)
        );
        assert_eq!(picker_step(key(KeyCode::Up), 0, 3), PickerStep::Move(0));
        assert_eq!(
            picker_step(key(KeyCode::Char('k')), 2, 3),
            PickerStep::Move(1)
        );
        assert_eq!(
            picker_step(key(KeyCode::Enter), 1, 3),
            PickerStep::Choose(1)
        );
        assert_eq!(picker_step(key(KeyCode::Esc), 1, 3), PickerStep::Cancel);
        assert_eq!(
            picker_step(
                KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
                1,
                3
            ),
            PickerStep::Cancel
        );
        assert_eq!(
            picker_step(key(KeyCode::Char('x')), 1, 3),
            PickerStep::Ignore
        );
        assert_eq!(picker_step(key(KeyCode::Enter), 0, 0), PickerStep::Ignore);
    }

    #[test]
    fn the_window_follows_the_cursor() {
        assert_eq!(visible_range(3, 2, 5), 0..3);
        assert_eq!(visible_range(10, 0, 4), 0..4);
        assert_eq!(visible_range(10, 3, 4), 0..4);
        assert_eq!(visible_range(10, 4, 4), 1..5);
        assert_eq!(visible_range(10, 9, 4), 6..10);
    }

    #[test]
    fn start_times_are_utc() {
        // 2024-03-05 14:07:09 UTC.
        assert_eq!(format_start(1_709_647_629_000), "2024-03-05 14:07");
    }
}
