//! The questions cairn asks before anything of a folder acts (issue 14): whether the user
//! trusts the files in the folder, and, when the folder's own settings turn on
//! `bypassPermissions`, whether that mode may hold. The caller keeps the answers.
//!
//! Like the imports question it is shown before the app starts, inline, and leaves its rows
//! blank for the app. [`TrustDialog`] is the state and the drawing, with no I/O;
//! [`run_trust_dialog`] owns the terminal while it asks.

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

/// What is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustQuestion {
    /// "Do you trust the files in this folder?", naming the files through which it would act.
    Folder {
        folder: PathBuf,
        /// Relative to `folder`: `.claude/settings.json`, `.mcp.json`…
        acting: Vec<String>,
    },
    /// The folder's settings file `file` sets `permissions.defaultMode: bypassPermissions`.
    BypassPermissions { file: PathBuf },
}

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustAnswer {
    /// Trust the folder; let the mode hold.
    Yes,
    /// Exit; run in `default` mode instead.
    No,
}

/// The pending question and where the cursor is.
///
/// ```
/// use cairn_tui::{TrustAnswer, TrustDialog, TrustQuestion};
/// use ratatui::crossterm::event::{KeyCode, KeyEvent};
///
/// let mut dialog = TrustDialog::new(TrustQuestion::Folder {
///     folder: "/work/app".into(),
///     acting: vec![".claude/settings.json".into()],
/// });
/// // The cursor starts on "Yes, proceed", as in Claude Code; Esc says no.
/// assert_eq!(dialog.handle_key(KeyEvent::from(KeyCode::Enter)), Some(TrustAnswer::Yes));
/// assert_eq!(dialog.handle_key(KeyEvent::from(KeyCode::Esc)), Some(TrustAnswer::No));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustDialog {
    question: TrustQuestion,
    /// 0 for the first choice (yes), 1 for the second (no).
    selected: usize,
}

impl TrustDialog {
    /// The folder question starts on yes; the bypass question on no, so that Enter alone never
    /// turns every check off.
    pub fn new(question: TrustQuestion) -> TrustDialog {
        let selected = match question {
            TrustQuestion::Folder { .. } => 0,
            TrustQuestion::BypassPermissions { .. } => 1,
        };
        TrustDialog { question, selected }
    }

    /// Handles one key; returns the answer once the user has given one. Up/Down/Tab move,
    /// Enter chooses, `1`/`y` say yes, `2`/`n`, Esc and Ctrl+C say no.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<TrustAnswer> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        match key.code {
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(TrustAnswer::No)
            }
            KeyCode::Esc | KeyCode::Char('2' | 'n' | 'N') => Some(TrustAnswer::No),
            KeyCode::Char('1' | 'y' | 'Y') => Some(TrustAnswer::Yes),
            KeyCode::Enter => Some(self.choices()[self.selected].0),
            KeyCode::Up | KeyCode::Down | KeyCode::Tab | KeyCode::BackTab => {
                self.selected = 1 - self.selected;
                None
            }
            _ => None,
        }
    }

    /// The rows the dialog needs at `width`, borders included.
    pub fn height(&self, width: u16, theme: &Theme) -> u16 {
        let inner = width.saturating_sub(FRAME_WIDTH).max(1);
        let (body, question) = self.sections(inner, theme);
        u16::try_from(body.len() + question.len() + 2).unwrap_or(u16::MAX)
    }

    /// A widget that draws the dialog with `theme`.
    pub fn widget<'a>(&'a self, theme: &'a Theme) -> TrustDialogView<'a> {
        TrustDialogView {
            dialog: self,
            theme,
        }
    }

    /// Draws the dialog into `area`; when it is short of rows, the explanation gives way
    /// before the question and its options do.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        Clear.render(area, buf);
        let title = match self.question {
            TrustQuestion::Folder { .. } => " Folder trust ",
            TrustQuestion::BypassPermissions { .. } => " Bypass permissions ",
        };
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.dialog_border)
            .padding(Padding::horizontal(1))
            .title(Span::styled(title, theme.dialog_title));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width == 0 || inner.height == 0 {
            return;
        }
        let (mut body, question) = self.sections(inner.width, theme);
        let room = usize::from(inner.height).saturating_sub(question.len());
        if body.len() > room {
            body.truncate(room);
        }
        for (row, line) in (inner.y..inner.bottom()).zip(body.into_iter().chain(question)) {
            buf.set_line(inner.x, row, &line, inner.width);
        }
    }

    fn choices(&self) -> [(TrustAnswer, &'static str); 2] {
        match self.question {
            TrustQuestion::Folder { .. } => [
                (TrustAnswer::Yes, "Yes, proceed"),
                (TrustAnswer::No, "No, exit"),
            ],
            TrustQuestion::BypassPermissions { .. } => [
                (
                    TrustAnswer::Yes,
                    "Yes, run in bypassPermissions mode in this folder",
                ),
                (TrustAnswer::No, "No, run in default mode"),
            ],
        }
    }

    /// The explanation (which may be cut), and the question with its options (never cut).
    fn sections(&self, width: u16, theme: &Theme) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
        let columns = usize::from(width);
        let wrap = |text: String, style: Style, prefix: &Prefix| {
            wrap_words(&[Span::styled(text, style)], columns, prefix)
        };
        let plain = Prefix::none();
        let mut body = Vec::new();
        let heading = match &self.question {
            TrustQuestion::Folder { folder, acting } => {
                body.extend(wrap(
                    sanitize(&folder.display().to_string()),
                    theme.warning,
                    &plain,
                ));
                body.push(Line::default());
                body.extend(wrap(
                    "cairn may read, write and run the files in this folder. Its own settings \
                     can run hooks, set permission rules and start servers, so only trust \
                     files from sources you trust."
                        .into(),
                    Style::new(),
                    &plain,
                ));
                if !acting.is_empty() {
                    body.push(Line::default());
                    body.extend(wrap("It would act through:".into(), Style::new(), &plain));
                    for name in acting {
                        body.extend(wrap(
                            sanitize(name),
                            theme.dim,
                            &Prefix::hanging(Span::raw("  • ")),
                        ));
                    }
                }
                "Do you trust the files in this folder?"
            }
            TrustQuestion::BypassPermissions { file } => {
                body.extend(wrap(
                    sanitize(&file.display().to_string()),
                    theme.warning,
                    &plain,
                ));
                body.push(Line::default());
                body.extend(wrap(
                    "This folder's settings set permissions.defaultMode to bypassPermissions: \
                     every tool call would run without asking, edits and commands included."
                        .into(),
                    Style::new(),
                    &plain,
                ));
                "Let this folder's settings turn permission checks off?"
            }
        };
        let mut question = vec![Line::default()];
        question.extend(wrap(heading.into(), theme.dialog_title, &plain));
        for (index, (_, label)) in self.choices().iter().enumerate() {
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
        let hint = match self.question {
            TrustQuestion::Folder { .. } => "enter to confirm · esc to exit",
            TrustQuestion::BypassPermissions { .. } => {
                "enter to confirm · esc to run in default mode"
            }
        };
        question.extend(wrap(hint.into(), theme.dim, &plain));
        (body, question)
    }
}

/// [`TrustDialog`] with its theme, as a ratatui widget.
#[derive(Debug, Clone, Copy)]
pub struct TrustDialogView<'a> {
    dialog: &'a TrustDialog,
    theme: &'a Theme,
}

impl Widget for TrustDialogView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        self.dialog.render(area, buf, self.theme);
    }
}

/// Asks `question` until the user answers. Reads keys from the terminal and blocks while it
/// does: call it before the app starts, off the async runtime's threads.
pub fn run_trust_dialog(question: TrustQuestion, theme: &Theme) -> std::io::Result<TrustAnswer> {
    let _raw = RawMode::enter()?;
    // As in the picker: a wake-up left in crossterm's reader by an earlier key stream.
    let _ = crossterm::event::poll(std::time::Duration::ZERO);
    let (columns, rows) = crossterm::terminal::size()?;
    let mut dialog = TrustDialog::new(question);
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
#[allow(clippy::unwrap_used)]
mod tests {
    use pretty_assertions::assert_eq;
    use ratatui::backend::TestBackend;

    use super::*;

    fn folder() -> TrustDialog {
        TrustDialog::new(TrustQuestion::Folder {
            folder: PathBuf::from("/work/app"),
            acting: vec![".claude/settings.json".into(), ".mcp.json".into()],
        })
    }

    fn bypass() -> TrustDialog {
        TrustDialog::new(TrustQuestion::BypassPermissions {
            file: PathBuf::from("/work/app/.claude/settings.json"),
        })
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn keys_answer_and_move() {
        let answers = [
            (key(KeyCode::Esc), Some(TrustAnswer::No)),
            (key(KeyCode::Char('n')), Some(TrustAnswer::No)),
            (key(KeyCode::Char('2')), Some(TrustAnswer::No)),
            (
                KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
                Some(TrustAnswer::No),
            ),
            (key(KeyCode::Char('y')), Some(TrustAnswer::Yes)),
            (key(KeyCode::Char('1')), Some(TrustAnswer::Yes)),
            (key(KeyCode::Char('x')), None),
            (key(KeyCode::Down), None),
        ];
        for (pressed, expected) in answers {
            assert_eq!(folder().handle_key(pressed), expected, "{pressed:?}");
            assert_eq!(bypass().handle_key(pressed), expected, "{pressed:?}");
        }
        // Enter takes the selected choice: yes for the folder, no for bypass.
        assert_eq!(
            folder().handle_key(key(KeyCode::Enter)),
            Some(TrustAnswer::Yes)
        );
        assert_eq!(
            bypass().handle_key(key(KeyCode::Enter)),
            Some(TrustAnswer::No)
        );
        let mut moved = folder();
        assert_eq!(moved.handle_key(key(KeyCode::Down)), None);
        assert_eq!(moved.handle_key(key(KeyCode::Enter)), Some(TrustAnswer::No));
    }

    fn rendered(dialog: &TrustDialog, width: u16, height: u16) -> Vec<String> {
        let theme = Theme::plain();
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal
            .draw(|frame| frame.render_widget(dialog.widget(&theme), frame.area()))
            .unwrap();
        let buffer = terminal.backend().buffer();
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn the_folder_question_names_the_folder_and_what_acts() {
        let dialog = folder();
        let theme = Theme::plain();
        let height = dialog.height(60, &theme);
        assert_eq!(
            rendered(&dialog, 60, height),
            vec![
                "╭ Folder trust ────────────────────────────────────────────╮",
                "│ /work/app                                                │",
                "│                                                          │",
                "│ cairn may read, write and run the files in this folder.  │",
                "│ Its own settings can run hooks, set permission rules and │",
                "│ start servers, so only trust files from sources you      │",
                "│ trust.                                                   │",
                "│                                                          │",
                "│ It would act through:                                    │",
                "│   • .claude/settings.json                                │",
                "│   • .mcp.json                                            │",
                "│                                                          │",
                "│ Do you trust the files in this folder?                   │",
                "│ ❯ 1. Yes, proceed                                        │",
                "│   2. No, exit                                            │",
                "│                                                          │",
                "│ enter to confirm · esc to exit                           │",
                "╰──────────────────────────────────────────────────────────╯",
            ]
        );
    }

    #[test]
    fn a_short_terminal_keeps_the_question_and_cuts_the_explanation() {
        let rows = rendered(&bypass(), 60, 10);
        assert_eq!(
            rows,
            vec![
                "╭ Bypass permissions ──────────────────────────────────────╮",
                "│ /work/app/.claude/settings.json                          │",
                "│                                                          │",
                "│                                                          │",
                "│ Let this folder's settings turn permission checks off?   │",
                "│   1. Yes, run in bypassPermissions mode in this folder   │",
                "│ ❯ 2. No, run in default mode                             │",
                "│                                                          │",
                "│ enter to confirm · esc to run in default mode            │",
                "╰──────────────────────────────────────────────────────────╯",
            ]
        );
    }
}
