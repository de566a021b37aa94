//! The question after `# <text>` in the input box: which type of memory the text is, or
//! whether it goes to the project's `CLAUDE.md` (shared with the team) instead of cairn's
//! memory directory, which the question names. It is drawn in the viewport in place of the
//! input box, as the permission dialog is; the answer saves the text (or, on Esc, gives it
//! back to the input box).

use cairn_context::memory::MemoryType;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::choice::{
    self, ChoiceBox, ChoiceDialog, ListKey, OptionLabel, OptionList, Overflow, wrapped,
};
use crate::theme::Theme;
use crate::wrap::{Prefix, sanitize};

/// Lines of the memory's text shown above the question; the rest are counted.
const TEXT_LINES: usize = 3;

/// The types in the order offered, each with what it is for, in the user's words.
const CHOICES: [(MemoryType, &str); 4] = [
    (
        MemoryType::User,
        "who you are: your role, expertise, how you like to work",
    ),
    (
        MemoryType::Feedback,
        "how to work: a correction, or an approach you confirmed",
    ),
    (
        MemoryType::Project,
        "what is going on in the project that the code does not say",
    ),
    (
        MemoryType::Reference,
        "where to find things outside the repository",
    ),
];

/// The last option, after the memory types: the project's instructions rather than a memory.
const PROJECT_INSTRUCTIONS: (&str, &str) = (
    "CLAUDE.md",
    "the project's instructions, shared with the team (./CLAUDE.md)",
);

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryTypeAnswer {
    /// A memory of this type, in cairn's memory directory (yours alone).
    Save(MemoryType),
    /// A line at the end of the project's `CLAUDE.md`, which the team shares.
    ProjectInstructions,
    /// Esc or Ctrl+C: nothing is saved, the text goes back to the input box.
    Cancel,
}

/// The memory waiting for its type, and where the cursor is (on `feedback` at first: what a
/// quick note to cairn most often is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryTypeDialog {
    /// The line as typed, `#` included, for the input box if the user cancels.
    line: String,
    /// The memory directory, as the question names it.
    memory_dir: String,
    options: OptionList,
}

impl MemoryTypeDialog {
    /// The question for `line`, as typed (`# always use pnpm`), saving memories in
    /// `memory_dir`.
    pub fn new(line: String, memory_dir: &std::path::Path) -> MemoryTypeDialog {
        MemoryTypeDialog {
            line,
            memory_dir: memory_dir.display().to_string(),
            options: OptionList::new(CHOICES.len() + 1, 1),
        }
    }

    /// The line as typed.
    pub fn line(&self) -> &str {
        &self.line
    }

    /// The memory: the line without its `#` and the spaces around.
    pub fn memory(&self) -> &str {
        self.line
            .trim_start()
            .strip_prefix('#')
            .unwrap_or(&self.line)
            .trim()
    }

    /// Handles one key; returns the answer once there is one. Up/Down/Tab move, Enter
    /// chooses, `1`–`4` choose directly, Esc and Ctrl+C cancel.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<MemoryTypeAnswer> {
        match self.options.handle_key(key)? {
            ListKey::Moved => None,
            ListKey::Chosen(index) => Some(match CHOICES.get(index) {
                Some((memory_type, _)) => MemoryTypeAnswer::Save(*memory_type),
                None => MemoryTypeAnswer::ProjectInstructions,
            }),
            ListKey::Cancelled => Some(MemoryTypeAnswer::Cancel),
        }
    }

    /// The rows the dialog needs at `width`, borders included.
    pub fn height(&self, width: u16, theme: &Theme) -> u16 {
        choice::height(self, width, theme)
    }

    /// A widget that draws the dialog with `theme`.
    pub fn widget<'a>(&'a self, theme: &'a Theme) -> MemoryTypeDialogView<'a> {
        MemoryTypeDialogView {
            dialog: self,
            theme,
        }
    }

    /// Draws the dialog into `area`; short of rows, the memory's text gives way before the
    /// question and its options do.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        choice::render(self, area, buf, theme);
    }
}

impl ChoiceDialog for MemoryTypeDialog {
    fn layout(&self, width: u16, theme: &Theme) -> ChoiceBox {
        let columns = usize::from(width);
        let quote = Prefix::hanging(Span::styled("# ", theme.dim));
        let lines: Vec<&str> = self.memory().lines().collect();
        let mut text = Vec::new();
        for line in lines.iter().take(TEXT_LINES) {
            text.extend(wrapped(sanitize(line), theme.user_text, columns, &quote));
        }
        if lines.len() > TEXT_LINES {
            text.push(Line::from(Span::styled(
                format!("  … {} more lines", lines.len() - TEXT_LINES),
                theme.dim,
            )));
        }
        ChoiceBox {
            title: "Save a memory",
            body: text,
            overflow: Overflow::Cut,
            question: wrapped(
                format!(
                    "Which kind of memory is it? Memories are yours alone, in {}.",
                    self.memory_dir
                ),
                Style::new(),
                columns,
                &Prefix::none(),
            ),
            options: CHOICES
                .iter()
                .map(|&(memory_type, what)| OptionLabel::noted(memory_type.as_str(), what))
                .chain(std::iter::once(OptionLabel::noted(
                    PROJECT_INSTRUCTIONS.0,
                    PROJECT_INSTRUCTIONS.1,
                )))
                .collect(),
            selected: self.options.selected(),
            below: Vec::new(),
            hint: "↑↓ to select · enter to save · esc to cancel",
        }
    }
}

/// [`MemoryTypeDialog`] with its theme, as a ratatui widget.
#[derive(Debug, Clone, Copy)]
pub struct MemoryTypeDialogView<'a> {
    dialog: &'a MemoryTypeDialog,
    theme: &'a Theme,
}

impl Widget for MemoryTypeDialogView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        self.dialog.render(area, buf, self.theme);
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};

    use super::*;
    use crate::choice::plain_rows as rows;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn the_dialog_shows_the_text_where_memories_go_the_four_types_and_claude_md() {
        let dialog = MemoryTypeDialog::new(
            "#   always use pnpm, not npm ".into(),
            std::path::Path::new("/h/.cairn/memory"),
        );
        assert_eq!(dialog.memory(), "always use pnpm, not npm");
        assert_eq!(dialog.line(), "#   always use pnpm, not npm ");
        let height = dialog.height(72, &Theme::plain());
        assert_eq!(
            rows(&dialog, 72, height),
            [
                "╭ Save a memory ───────────────────────────────────────────────────────╮",
                "│ # always use pnpm, not npm                                           │",
                "│                                                                      │",
                "│ Which kind of memory is it? Memories are yours alone, in             │",
                "│ /h/.cairn/memory.                                                    │",
                "│   1. user      who you are: your role, expertise, how you like to    │",
                "│                work                                                  │",
                "│ ❯ 2. feedback  how to work: a correction, or an approach you         │",
                "│                confirmed                                             │",
                "│   3. project   what is going on in the project that the code does    │",
                "│                not say                                               │",
                "│   4. reference where to find things outside the repository           │",
                "│   5. CLAUDE.md the project's instructions, shared with the team      │",
                "│                (./CLAUDE.md)                                         │",
                "│                                                                      │",
                "│ ↑↓ to select · enter to save · esc to cancel                         │",
                "╰──────────────────────────────────────────────────────────────────────╯",
            ]
        );
    }

    #[test]
    fn a_short_area_cuts_the_text_and_keeps_the_options() {
        let text = (1..=5).map(|n| format!("line {n}")).collect::<Vec<_>>();
        let dialog =
            MemoryTypeDialog::new(format!("# {}", text.join("\n")), std::path::Path::new("/m"));
        let full = rows(&dialog, 100, dialog.height(100, &Theme::plain()));
        assert_eq!(
            full[1..5],
            [
                "│ # line 1",
                "│ # line 2",
                "│ # line 3",
                "│   … 2 more lines"
            ]
            .map(|row| format!("{row:<98} │"))
        );
        let short = rows(&dialog, 100, 12);
        assert_eq!(short[1], format!("│ {:<96} │", "# line 1"));
        assert!(short[10].starts_with("│ ↑↓ to select"), "{short:#?}");
    }

    #[test]
    fn keys_choose_move_and_cancel() {
        let answers = [
            (
                key(KeyCode::Enter),
                Some(MemoryTypeAnswer::Save(MemoryType::Feedback)),
            ),
            (
                key(KeyCode::Char('1')),
                Some(MemoryTypeAnswer::Save(MemoryType::User)),
            ),
            (
                key(KeyCode::Char('3')),
                Some(MemoryTypeAnswer::Save(MemoryType::Project)),
            ),
            (
                key(KeyCode::Char('4')),
                Some(MemoryTypeAnswer::Save(MemoryType::Reference)),
            ),
            (key(KeyCode::Esc), Some(MemoryTypeAnswer::Cancel)),
            (
                KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
                Some(MemoryTypeAnswer::Cancel),
            ),
            (
                key(KeyCode::Char('5')),
                Some(MemoryTypeAnswer::ProjectInstructions),
            ),
            (key(KeyCode::Char('6')), None),
            (key(KeyCode::Char('x')), None),
        ];
        for (pressed, expected) in answers {
            let mut dialog = MemoryTypeDialog::new("x".into(), std::path::Path::new("/m"));
            assert_eq!(dialog.handle_key(pressed), expected, "{pressed:?}");
        }
        let mut dialog = MemoryTypeDialog::new("x".into(), std::path::Path::new("/m"));
        assert_eq!(dialog.handle_key(key(KeyCode::Down)), None);
        assert_eq!(dialog.handle_key(key(KeyCode::Down)), None);
        assert_eq!(
            dialog.handle_key(key(KeyCode::Enter)),
            Some(MemoryTypeAnswer::Save(MemoryType::Reference))
        );
        let mut dialog = MemoryTypeDialog::new("x".into(), std::path::Path::new("/m"));
        assert_eq!(dialog.handle_key(key(KeyCode::Up)), None);
        assert_eq!(dialog.handle_key(key(KeyCode::Up)), None);
        assert_eq!(
            dialog.handle_key(key(KeyCode::Enter)),
            Some(MemoryTypeAnswer::ProjectInstructions),
            "Up from the first wraps to the last"
        );
    }
}
