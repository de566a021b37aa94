//! The question cairn asks before the first prompt when the project's instruction files import
//! files from outside it: whatever they hold would go into the system prompt sent to the
//! model, so a repository's `CLAUDE.md` could name `~/.ssh/id_rsa`. The user says yes (the
//! caller remembers it for the project) or no (skipped this session, asked again next time).
//!
//! Like the session picker it is shown before the app starts, inline, and leaves its rows
//! blank for the app. [`ImportsDialog`] is the state and the drawing, with no I/O;
//! [`run_imports_dialog`] owns the terminal while it asks.

use cairn_context::instructions::{ExternalImport, Reach};
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

/// Imports listed one by one; the rest are counted.
const MAX_LISTED: usize = 8;
/// Columns taken by the border and padding on each side.
const FRAME_WIDTH: u16 = 4;

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportsAnswer {
    /// Include them, and remember it for this project.
    Include,
    /// Leave them out this session; ask again next time.
    Skip,
}

/// The options, in the order shown.
const CHOICES: [(ImportsAnswer, &str); 2] = [
    (
        ImportsAnswer::Include,
        "Yes, include them and remember this for the project",
    ),
    (
        ImportsAnswer::Skip,
        "No, skip them this session (cairn asks again next time)",
    ),
];

/// The pending question and where the cursor is.
///
/// ```
/// use std::path::PathBuf;
/// use cairn_context::instructions::{ExternalImport, ImportStatus, Reach};
/// use cairn_tui::{ImportsAnswer, ImportsDialog};
/// use ratatui::crossterm::event::{KeyCode, KeyEvent};
///
/// let import = ExternalImport {
///     path: PathBuf::from("/home/me/.ssh/id_rsa"),
///     by: PathBuf::from("/work/app/CLAUDE.md"),
///     reach: Reach::Import,
///     status: ImportStatus::Skipped,
/// };
/// let mut dialog = ImportsDialog::new(vec![import]);
/// // The cursor starts on "No": Enter alone never lets a file out.
/// assert_eq!(dialog.handle_key(KeyEvent::from(KeyCode::Enter)), Some(ImportsAnswer::Skip));
/// assert_eq!(dialog.handle_key(KeyEvent::from(KeyCode::Char('1'))), Some(ImportsAnswer::Include));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportsDialog {
    imports: Vec<ExternalImport>,
    selected: usize,
}

impl ImportsDialog {
    pub fn new(imports: Vec<ExternalImport>) -> ImportsDialog {
        ImportsDialog {
            imports,
            selected: CHOICES.len() - 1,
        }
    }

    /// Handles one key; returns the answer once the user has given one. Up/Down/Tab move,
    /// Enter chooses, `1`/`y` say yes, `2`/`n`, Esc and Ctrl+C say no.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<ImportsAnswer> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        match key.code {
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(ImportsAnswer::Skip)
            }
            KeyCode::Esc | KeyCode::Char('2' | 'n' | 'N') => Some(ImportsAnswer::Skip),
            KeyCode::Char('1' | 'y' | 'Y') => Some(ImportsAnswer::Include),
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
    pub fn widget<'a>(&'a self, theme: &'a Theme) -> ImportsDialogView<'a> {
        ImportsDialogView {
            dialog: self,
            theme,
        }
    }

    /// Draws the dialog into `area`; when it is short of rows, the list of imports gives way
    /// before the question and its options do.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        Clear.render(area, buf);
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.dialog_border)
            .padding(Padding::horizontal(1))
            .title(Span::styled(" External imports ", theme.dialog_title));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width == 0 || inner.height == 0 {
            return;
        }
        let (mut list, question) = self.sections(inner.width, theme);
        let room = usize::from(inner.height).saturating_sub(question.len());
        if list.len() > room {
            // At least the marker, so a cut list never goes unsaid.
            let kept = room.saturating_sub(1);
            let hidden = list.len() - kept;
            list.truncate(kept);
            list.push(Line::from(Span::styled(
                format!("… +{hidden} lines (a taller terminal shows them all)"),
                theme.dim,
            )));
        }
        let shown = list.into_iter().take(room).chain(question);
        for (row, line) in (inner.y..inner.bottom()).zip(shown) {
            buf.set_line(inner.x, row, &line, inner.width);
        }
    }

    fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let (mut list, question) = self.sections(width, theme);
        list.extend(question);
        list
    }

    /// What is asked about (which may be cut), and the question with its options (never cut).
    fn sections(&self, width: u16, theme: &Theme) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
        let columns = usize::from(width);
        let wrap = |text: String, style: Style, prefix: &Prefix| {
            wrap_words(&[Span::styled(text, style)], columns, prefix)
        };
        let mut list = wrap(
            "CLAUDE.md imports files from outside this project:".into(),
            Style::new(),
            &Prefix::none(),
        );
        for import in self.imports.iter().take(MAX_LISTED) {
            list.extend(wrap(
                sanitize(&import.path.display().to_string()),
                theme.warning,
                &Prefix::hanging(Span::raw("  ")),
            ));
            let how = match import.reach {
                Reach::Import => "imported by",
                Reach::Symlink => "linked from",
            };
            list.extend(wrap(
                format!("{how} {}", sanitize(&import.by.display().to_string())),
                theme.dim,
                &Prefix::hanging(Span::raw("    ")),
            ));
        }
        if self.imports.len() > MAX_LISTED {
            list.extend(wrap(
                format!("… and {} more", self.imports.len() - MAX_LISTED),
                theme.dim,
                &Prefix::hanging(Span::raw("  ")),
            ));
        }
        let mut question = vec![Line::default()];
        question.extend(wrap(
            "Their contents would go into the prompt sent to the model. Include them?".into(),
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
            "↑↓ to select · enter to confirm · esc to skip them".into(),
            theme.dim,
            &Prefix::none(),
        ));
        (list, question)
    }
}

/// [`ImportsDialog`] with its theme, as a ratatui widget.
#[derive(Debug, Clone, Copy)]
pub struct ImportsDialogView<'a> {
    dialog: &'a ImportsDialog,
    theme: &'a Theme,
}

impl Widget for ImportsDialogView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        self.dialog.render(area, buf, self.theme);
    }
}

/// Asks about `imports` until the user answers. Reads keys from the terminal and blocks while
/// it does: call it before the app starts, off the async runtime's threads.
pub fn run_imports_dialog(
    imports: Vec<ExternalImport>,
    theme: &Theme,
) -> std::io::Result<ImportsAnswer> {
    let _raw = RawMode::enter()?;
    // As in the picker: a wake-up left in crossterm's reader by an earlier key stream.
    let _ = crossterm::event::poll(std::time::Duration::ZERO);
    let (columns, rows) = crossterm::terminal::size()?;
    let mut dialog = ImportsDialog::new(imports);
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
    // Blank the dialog's rows and leave the cursor at their top, for the app to draw there.
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
    use std::path::PathBuf;

    use cairn_context::instructions::ImportStatus;
    use pretty_assertions::assert_eq;

    use super::*;

    fn dialog() -> ImportsDialog {
        ImportsDialog::new(vec![ExternalImport {
            path: PathBuf::from("/home/me/.aws/credentials"),
            by: PathBuf::from("/work/app/CLAUDE.md"),
            reach: Reach::Import,
            status: ImportStatus::Skipped,
        }])
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn keys_answer_and_move() {
        let answers = [
            (key(KeyCode::Enter), Some(ImportsAnswer::Skip)),
            (key(KeyCode::Esc), Some(ImportsAnswer::Skip)),
            (key(KeyCode::Char('n')), Some(ImportsAnswer::Skip)),
            (key(KeyCode::Char('2')), Some(ImportsAnswer::Skip)),
            (
                KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
                Some(ImportsAnswer::Skip),
            ),
            (key(KeyCode::Char('y')), Some(ImportsAnswer::Include)),
            (key(KeyCode::Char('1')), Some(ImportsAnswer::Include)),
            (key(KeyCode::Char('x')), None),
            (key(KeyCode::Down), None),
        ];
        for (pressed, expected) in answers {
            assert_eq!(dialog().handle_key(pressed), expected, "{pressed:?}");
        }
        let mut moved = dialog();
        assert_eq!(moved.handle_key(key(KeyCode::Up)), None);
        assert_eq!(
            moved.handle_key(key(KeyCode::Enter)),
            Some(ImportsAnswer::Include)
        );
    }
}
