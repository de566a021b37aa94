//! The question cairn asks before the app starts when a settings file does not load: the
//! precise error (file, line, field) and a choice between going on without that file and
//! exiting to fix it. Without the file none of its settings apply, its deny rules included,
//! so this is the user's call and never a silent skip; `cairn -p` has nobody to ask and
//! stops with the error instead.
//!
//! Like the imports question it is drawn inline and leaves its rows blank for the app.
//! [`SettingsDialog`] is the state and the drawing; [`run_settings_dialog`] owns the terminal
//! while it asks.

use std::path::PathBuf;

use ratatui::backend::CrosstermBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Widget};
use ratatui::{Terminal, TerminalOptions, Viewport};

use crate::picker::RawMode;
use crate::theme::Theme;
use crate::wrap::{Prefix, sanitize, wrap_words};

/// Columns taken by the border and padding on each side.
const FRAME_WIDTH: u16 = 4;

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsAnswer {
    /// Run this session without the file.
    ContinueWithout,
    /// Exit, to fix the file.
    Exit,
}

/// The options, in the order shown.
const CHOICES: [(SettingsAnswer, &str); 2] = [
    (
        SettingsAnswer::ContinueWithout,
        "Continue without this file (none of its settings apply this session)",
    ),
    (SettingsAnswer::Exit, "Exit and fix it"),
];

/// A settings file that did not load, and where the cursor is.
///
/// ```
/// use std::path::PathBuf;
/// use cairn_tui::{SettingsAnswer, SettingsDialog};
/// use ratatui::crossterm::event::{KeyCode, KeyEvent};
///
/// let mut dialog = SettingsDialog::new(
///     PathBuf::from("/p/.claude/settings.json"),
///     "/p/.claude/settings.json: invalid JSON at line 3, column 1: trailing comma".into(),
/// );
/// assert_eq!(dialog.handle_key(KeyEvent::from(KeyCode::Esc)), Some(SettingsAnswer::Exit));
/// assert_eq!(
///     dialog.handle_key(KeyEvent::from(KeyCode::Enter)),
///     Some(SettingsAnswer::ContinueWithout)
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsDialog {
    file: PathBuf,
    error: String,
    selected: usize,
}

impl SettingsDialog {
    /// The question about `file`, which failed to load with `error` (its message names the
    /// file and, for a bad value, the field).
    pub fn new(file: PathBuf, error: String) -> SettingsDialog {
        SettingsDialog {
            file,
            error,
            selected: 0,
        }
    }

    /// Handles one key; returns the answer once the user has given one. Up/Down/Tab move,
    /// Enter chooses (continue, to begin with), `1` continues, `2`, Esc and Ctrl+C exit.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<SettingsAnswer> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        match key.code {
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(SettingsAnswer::Exit)
            }
            KeyCode::Esc | KeyCode::Char('2') => Some(SettingsAnswer::Exit),
            KeyCode::Char('1') => Some(SettingsAnswer::ContinueWithout),
            KeyCode::Enter => Some(CHOICES[self.selected].0),
            KeyCode::Up => {
                self.selected = (self.selected + CHOICES.len() - 1) % CHOICES.len();
                None
            }
            KeyCode::Down | KeyCode::Tab => {
                self.selected = (self.selected + 1) % CHOICES.len();
                None
            }
            _ => None,
        }
    }

    /// The rows the dialog needs at `width`, borders included.
    pub fn height(&self, width: u16, theme: &Theme) -> u16 {
        let inner = width.saturating_sub(FRAME_WIDTH).max(1);
        u16::try_from(self.lines(inner, theme).len() + 2).unwrap_or(u16::MAX)
    }

    /// A widget that draws the dialog with `theme`.
    pub fn widget<'a>(&'a self, theme: &'a Theme) -> SettingsDialogView<'a> {
        SettingsDialogView {
            dialog: self,
            theme,
        }
    }

    /// Draws the dialog into `area`; short of rows, the error's end gives way before the
    /// options do.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        Clear.render(area, buf);
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.dialog_border)
            .padding(Padding::horizontal(1))
            .title(Span::styled(" Settings error ", theme.dialog_title));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width == 0 || inner.height == 0 {
            return;
        }
        let (mut about, question) = self.sections(inner.width, theme);
        let room = usize::from(inner.height).saturating_sub(question.len());
        about.truncate(room);
        for (row, line) in (inner.y..inner.bottom()).zip(about.into_iter().chain(question)) {
            buf.set_line(inner.x, row, &line, inner.width);
        }
    }

    fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let (mut about, question) = self.sections(width, theme);
        about.extend(question);
        about
    }

    /// The error (which may be cut) and the question with its options (never cut).
    fn sections(&self, width: u16, theme: &Theme) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
        let columns = usize::from(width);
        let wrap = |text: String, style: Style, prefix: &Prefix| {
            wrap_words(&[Span::styled(text, style)], columns, prefix)
        };
        let mut about = wrap(
            format!(
                "cairn cannot use the settings file {}:",
                sanitize(&self.file.display().to_string())
            ),
            Style::new(),
            &Prefix::none(),
        );
        about.extend(wrap(
            sanitize(&self.error),
            theme.error,
            &Prefix::hanging(Span::raw("  ")),
        ));
        let mut question = vec![Line::default()];
        question.extend(wrap(
            "Without it, its permission rules (deny rules too), hooks and other settings do not \
             apply. Continue without it?"
                .into(),
            Style::new(),
            &Prefix::none(),
        ));
        for (index, (_, label)) in CHOICES.iter().enumerate() {
            let selected = index == self.selected;
            let style = if selected {
                theme.selected
            } else {
                Style::new()
            };
            let pointer = if selected { "❯ " } else { "  " };
            let lead = Span::styled(format!("{pointer}{}. ", index + 1), style);
            question.extend(wrap_words(
                &[Span::styled(*label, style)],
                columns,
                &Prefix::hanging(lead),
            ));
        }
        question.push(Line::default());
        question.extend(wrap(
            "enter to continue without it · esc to exit".into(),
            theme.dim,
            &Prefix::none(),
        ));
        (about, question)
    }
}

/// [`SettingsDialog`] with its theme, as a ratatui widget.
#[derive(Debug, Clone, Copy)]
pub struct SettingsDialogView<'a> {
    dialog: &'a SettingsDialog,
    theme: &'a Theme,
}

impl Widget for SettingsDialogView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        self.dialog.render(area, buf, self.theme);
    }
}

/// Asks about `file`, which failed to load with `error`, until the user answers. Reads keys
/// from the terminal and blocks while it does: call it before the app starts, off the async
/// runtime's threads.
pub fn run_settings_dialog(
    file: PathBuf,
    error: String,
    theme: &Theme,
) -> std::io::Result<SettingsAnswer> {
    let _raw = RawMode::enter()?;
    // As in the picker: a wake-up left in crossterm's reader by an earlier key stream.
    let _ = crossterm::event::poll(std::time::Duration::ZERO);
    let (columns, rows) = crossterm::terminal::size()?;
    let mut dialog = SettingsDialog::new(file, error);
    let height = dialog
        .height(columns, theme)
        .min(rows.saturating_sub(1))
        .max(3);
    let mut terminal = Terminal::with_options(
        CrosstermBackend::new(std::io::stdout()),
        TerminalOptions {
            viewport: Viewport::Inline(height),
        },
    )?;
    let answer = loop {
        terminal.draw(|frame| frame.render_widget(dialog.widget(theme), frame.area()))?;
        if let Event::Key(key) = crossterm::event::read()?
            && let Some(answer) = dialog.handle_key(key)
        {
            break answer;
        }
    };
    // Blank the dialog's rows and leave the cursor at their top, for what comes next.
    let mut area = Rect::default();
    let _ = terminal.draw(|frame| {
        area = frame.area();
        frame.render_widget(Clear, area);
    });
    let _ = terminal.set_cursor_position(area.as_position());
    let _ = terminal.show_cursor();
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn dialog() -> SettingsDialog {
        SettingsDialog::new(
            PathBuf::from("/p/.claude/settings.json"),
            "/p/.claude/settings.json: permissions.deny: invalid type: string \"Bash(rm:*)\", \
             expected an array of strings"
                .into(),
        )
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn enter_continues_and_esc_exits() {
        let answers = [
            (key(KeyCode::Enter), Some(SettingsAnswer::ContinueWithout)),
            (
                key(KeyCode::Char('1')),
                Some(SettingsAnswer::ContinueWithout),
            ),
            (key(KeyCode::Esc), Some(SettingsAnswer::Exit)),
            (key(KeyCode::Char('2')), Some(SettingsAnswer::Exit)),
            (
                KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
                Some(SettingsAnswer::Exit),
            ),
            (key(KeyCode::Char('y')), None),
        ];
        for (pressed, expected) in answers {
            assert_eq!(dialog().handle_key(pressed), expected, "{pressed:?}");
        }
        let mut moved = dialog();
        assert_eq!(moved.handle_key(key(KeyCode::Down)), None);
        assert_eq!(
            moved.handle_key(key(KeyCode::Enter)),
            Some(SettingsAnswer::Exit)
        );
    }

    #[test]
    fn the_error_and_the_options_are_drawn() {
        let d = dialog();
        let theme = Theme::plain();
        let height = d.height(72, &theme);
        let area = Rect::new(0, 0, 72, height);
        let mut buf = Buffer::empty(area);
        d.render(area, &mut buf, &theme);
        let rows: Vec<String> = (0..height)
            .map(|y| {
                (0..72)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect();
        assert_eq!(
            rows,
            [
                "╭ Settings error ──────────────────────────────────────────────────────╮",
                "│ cairn cannot use the settings file /p/.claude/settings.json:         │",
                "│   /p/.claude/settings.json: permissions.deny: invalid type: string   │",
                "│   \"Bash(rm:*)\", expected an array of strings                         │",
                "│                                                                      │",
                "│ Without it, its permission rules (deny rules too), hooks and other   │",
                "│ settings do not apply. Continue without it?                          │",
                "│ ❯ 1. Continue without this file (none of its settings apply this     │",
                "│      session)                                                        │",
                "│   2. Exit and fix it                                                 │",
                "│                                                                      │",
                "│ enter to continue without it · esc to exit                           │",
                "╰──────────────────────────────────────────────────────────────────────╯",
            ]
        );
    }

    #[test]
    fn tiny_areas_do_not_panic() {
        let d = dialog();
        for width in 0..16 {
            for height in 0..6 {
                let area = Rect::new(0, 0, width, height);
                let mut buf = Buffer::empty(area);
                d.render(area, &mut buf, &Theme::dark());
            }
        }
    }
}
