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

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::Widget;

use crate::choice::{
    self, ChoiceBox, ChoiceDialog, ListKey, OptionLabel, OptionList, Overflow, wrapped,
};
use crate::theme::Theme;
use crate::wrap::{Prefix, sanitize};

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
    options: OptionList,
}

impl SettingsDialog {
    /// The question about `file`, which failed to load with `error` (its message names the
    /// file and, for a bad value, the field).
    pub fn new(file: PathBuf, error: String) -> SettingsDialog {
        SettingsDialog {
            file,
            error,
            options: OptionList::new(CHOICES.len(), 0),
        }
    }

    /// Handles one key; returns the answer once the user has given one. Up/Down/Tab move,
    /// Enter chooses (continue, to begin with), `1` continues, `2`, Esc and Ctrl+C exit.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<SettingsAnswer> {
        match self.options.handle_key(key)? {
            ListKey::Moved => None,
            ListKey::Chosen(index) => Some(CHOICES[index].0),
            ListKey::Cancelled => Some(SettingsAnswer::Exit),
        }
    }

    /// The rows the dialog needs at `width`, borders included.
    pub fn height(&self, width: u16, theme: &Theme) -> u16 {
        choice::height(self, width, theme)
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
        choice::render(self, area, buf, theme);
    }
}

impl ChoiceDialog for SettingsDialog {
    fn layout(&self, width: u16, theme: &Theme) -> ChoiceBox {
        let columns = usize::from(width);
        let mut about = wrapped(
            format!(
                "cairn cannot use the settings file {}:",
                sanitize(&self.file.display().to_string())
            ),
            Style::new(),
            columns,
            &Prefix::none(),
        );
        about.extend(wrapped(
            sanitize(&self.error),
            theme.error,
            columns,
            &Prefix::hanging("  ".into()),
        ));
        ChoiceBox {
            title: "Settings error",
            body: about,
            overflow: Overflow::Cut,
            question: wrapped(
                "Without it, its permission rules (deny rules too), hooks and other settings do \
                 not apply. Continue without it?",
                Style::new(),
                columns,
                &Prefix::none(),
            ),
            options: CHOICES
                .iter()
                .map(|&(_, label)| OptionLabel::plain(label))
                .collect(),
            selected: self.options.selected(),
            below: Vec::new(),
            hint: "enter to continue without it · esc to exit",
        }
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
    choice::ask_inline(
        SettingsDialog::new(file, error),
        theme,
        SettingsDialog::handle_key,
    )
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};

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
