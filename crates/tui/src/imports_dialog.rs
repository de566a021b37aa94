//! The question cairn asks before the first prompt when the project's instruction files import
//! files from outside it: whatever they hold would go into the system prompt sent to the
//! model, so a repository's `CLAUDE.md` could name `~/.ssh/id_rsa`. The user says yes (the
//! caller remembers it for the project) or no (skipped this session, asked again next time).
//!
//! Like the session picker it is shown before the app starts, inline, and leaves its rows
//! blank for the app. [`ImportsDialog`] is the state and the drawing, with no I/O;
//! [`run_imports_dialog`] owns the terminal while it asks.

use cairn_context::instructions::{ExternalImport, Reach};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::Widget;

use crate::choice::{
    self, ChoiceBox, ChoiceDialog, ListKey, OptionLabel, OptionList, Overflow, YES_NO, wrapped,
};
use crate::theme::Theme;
use crate::wrap::{Prefix, sanitize};

/// Imports listed one by one; the rest are counted.
const MAX_LISTED: usize = 8;

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
    options: OptionList,
}

impl ImportsDialog {
    /// The question about `imports` (the instruction files' imports from outside the
    /// project), with the cursor on "No".
    pub fn new(imports: Vec<ExternalImport>) -> ImportsDialog {
        ImportsDialog {
            imports,
            options: OptionList::new(CHOICES.len(), CHOICES.len() - 1).with_letters(YES_NO),
        }
    }

    /// Handles one key; returns the answer once the user has given one. Up/Down/Tab move,
    /// Enter chooses, `1`/`y` say yes, `2`/`n`, Esc and Ctrl+C say no.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<ImportsAnswer> {
        match self.options.handle_key(key)? {
            ListKey::Moved => None,
            ListKey::Chosen(index) => Some(CHOICES[index].0),
            ListKey::Cancelled => Some(ImportsAnswer::Skip),
        }
    }

    /// The rows the dialog needs at `width`, borders included.
    pub fn height(&self, width: u16, theme: &Theme) -> u16 {
        choice::height(self, width, theme)
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
        choice::render(self, area, buf, theme);
    }
}

impl ChoiceDialog for ImportsDialog {
    fn layout(&self, width: u16, theme: &Theme) -> ChoiceBox {
        let columns = usize::from(width);
        let mut list = wrapped(
            "CLAUDE.md imports files from outside this project:",
            Style::new(),
            columns,
            &Prefix::none(),
        );
        for import in self.imports.iter().take(MAX_LISTED) {
            list.extend(wrapped(
                sanitize(&import.path.display().to_string()),
                theme.warning,
                columns,
                &Prefix::hanging("  ".into()),
            ));
            let how = match import.reach {
                Reach::Import => "imported by",
                Reach::Symlink => "linked from",
            };
            list.extend(wrapped(
                format!("{how} {}", sanitize(&import.by.display().to_string())),
                theme.dim,
                columns,
                &Prefix::hanging("    ".into()),
            ));
        }
        if self.imports.len() > MAX_LISTED {
            list.extend(wrapped(
                format!("… and {} more", self.imports.len() - MAX_LISTED),
                theme.dim,
                columns,
                &Prefix::hanging("  ".into()),
            ));
        }
        ChoiceBox {
            title: "External imports",
            body: list,
            overflow: Overflow::Counted("a taller terminal shows them all"),
            question: wrapped(
                "Their contents would go into the prompt sent to the model. Include them?",
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
            hint: "↑↓ to select · enter to confirm · esc to skip them",
        }
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
    choice::ask_inline(
        ImportsDialog::new(imports),
        theme,
        ImportsDialog::handle_key,
    )
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use cairn_context::instructions::ImportStatus;
    use pretty_assertions::assert_eq;
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};

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
