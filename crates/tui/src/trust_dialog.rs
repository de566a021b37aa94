//! The questions cairn asks before anything of a folder acts (issue 14): whether the user
//! trusts the files in the folder, and, when the folder's own settings turn on
//! `bypassPermissions`, whether that mode may hold. The caller keeps the answers.
//!
//! Like the imports question it is shown before the app starts, inline, and leaves its rows
//! blank for the app. [`TrustDialog`] is the state and the drawing, with no I/O;
//! [`run_trust_dialog`] owns the terminal while it asks.

use std::path::PathBuf;

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::Widget;

use crate::choice::{
    self, ChoiceBox, ChoiceDialog, ListKey, OptionLabel, OptionList, Overflow, YES_NO, wrapped,
};
use crate::theme::Theme;
use crate::wrap::{Prefix, sanitize};

/// What is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustQuestion {
    /// "Do you trust the files in this folder?", naming the files through which it would act.
    Folder {
        /// The folder cairn was started in, as the question names it.
        folder: PathBuf,
        /// Relative to `folder`: `.claude/settings.json`, `.mcp.json`…
        acting: Vec<String>,
    },
    /// The folder's settings file `file` sets `permissions.defaultMode: bypassPermissions`.
    BypassPermissions {
        /// The settings file that sets it, as the question names it.
        file: PathBuf,
    },
    /// The folder's settings choose where the model requests (and the user's credentials) go,
    /// or which credential is used: each line names the file, the key and its value (a key's
    /// own value is not shown).
    CredentialSettings {
        /// One line per setting, listed as given (the binary writes `file: key = value`).
        settings: Vec<String>,
    },
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
    /// The first choice is yes, the second no.
    options: OptionList,
}

impl TrustDialog {
    /// The folder question starts on yes; the bypass question on no, so that Enter alone never
    /// turns every check off.
    pub fn new(question: TrustQuestion) -> TrustDialog {
        let selected = match question {
            TrustQuestion::Folder { .. } => 0,
            TrustQuestion::BypassPermissions { .. } | TrustQuestion::CredentialSettings { .. } => 1,
        };
        TrustDialog {
            question,
            options: OptionList::new(2, selected).with_letters(YES_NO),
        }
    }

    /// Handles one key; returns the answer once the user has given one. Up/Down/Tab move,
    /// Enter chooses, `1`/`y` say yes, `2`/`n`, Esc and Ctrl+C say no.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<TrustAnswer> {
        match self.options.handle_key(key)? {
            ListKey::Moved => None,
            ListKey::Chosen(index) => Some(self.choices()[index].0),
            ListKey::Cancelled => Some(TrustAnswer::No),
        }
    }

    /// The rows the dialog needs at `width`, borders included.
    pub fn height(&self, width: u16, theme: &Theme) -> u16 {
        choice::height(self, width, theme)
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
        choice::render(self, area, buf, theme);
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
            TrustQuestion::CredentialSettings { .. } => [
                (TrustAnswer::Yes, "Yes, use these settings in this folder"),
                (TrustAnswer::No, "No, exit"),
            ],
        }
    }
}

impl ChoiceDialog for TrustDialog {
    fn layout(&self, width: u16, theme: &Theme) -> ChoiceBox {
        let columns = usize::from(width);
        let plain = Prefix::none();
        let mut body = Vec::new();
        let (title, heading, hint) = match &self.question {
            TrustQuestion::Folder { folder, acting } => {
                body.extend(wrapped(
                    sanitize(&folder.display().to_string()),
                    theme.warning,
                    columns,
                    &plain,
                ));
                body.push(Line::default());
                body.extend(wrapped(
                    "cairn may read, write and run the files in this folder. Its own settings \
                     can run hooks, set permission rules and start servers, so only trust \
                     files from sources you trust.",
                    Style::new(),
                    columns,
                    &plain,
                ));
                if !acting.is_empty() {
                    body.push(Line::default());
                    body.extend(wrapped(
                        "It would act through:",
                        Style::new(),
                        columns,
                        &plain,
                    ));
                    for name in acting {
                        body.extend(wrapped(
                            sanitize(name),
                            theme.dim,
                            columns,
                            &Prefix::hanging("  • ".into()),
                        ));
                    }
                }
                (
                    "Folder trust",
                    "Do you trust the files in this folder?",
                    "enter to confirm · esc to exit",
                )
            }
            TrustQuestion::BypassPermissions { file } => {
                body.extend(wrapped(
                    sanitize(&file.display().to_string()),
                    theme.warning,
                    columns,
                    &plain,
                ));
                body.push(Line::default());
                body.extend(wrapped(
                    "This folder's settings set permissions.defaultMode to bypassPermissions: \
                     every tool call would run without asking, edits and commands included.",
                    Style::new(),
                    columns,
                    &plain,
                ));
                (
                    "Bypass permissions",
                    "Let this folder's settings turn permission checks off?",
                    "enter to confirm · esc to run in default mode",
                )
            }
            TrustQuestion::CredentialSettings { settings } => {
                body.extend(wrapped(
                    "This folder's settings choose where cairn sends your requests and your \
                     API key, or which key it uses:",
                    Style::new(),
                    columns,
                    &plain,
                ));
                for setting in settings {
                    body.extend(wrapped(
                        sanitize(setting),
                        theme.warning,
                        columns,
                        &Prefix::hanging("  • ".into()),
                    ));
                }
                body.push(Line::default());
                body.extend(wrapped(
                    "A cloned repository can use them to send your key to its own server. \
                     Your answer is kept for these values in this folder.",
                    Style::new(),
                    columns,
                    &plain,
                ));
                (
                    "Credential settings",
                    "Use this folder's credential settings?",
                    "enter to confirm · esc to exit",
                )
            }
        };
        ChoiceBox {
            title,
            body,
            overflow: Overflow::Cut,
            question: wrapped(heading, theme.dialog_title, columns, &plain),
            options: self
                .choices()
                .iter()
                .map(|&(_, label)| OptionLabel::plain(label))
                .collect(),
            selected: self.options.selected(),
            below: Vec::new(),
            hint,
        }
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
    choice::ask_inline(TrustDialog::new(question), theme, TrustDialog::handle_key)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};

    use super::*;
    use crate::choice::plain_rows as rendered;

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
    fn the_credential_question_lists_every_setting_and_starts_on_no() {
        let mut dialog = TrustDialog::new(TrustQuestion::CredentialSettings {
            settings: vec![
                ".claude/settings.json: env.ANTHROPIC_BASE_URL = \"http://x.example\"".into(),
                ".claude/settings.local.json: apiKeyHelper = \"get-key\"".into(),
            ],
        });
        let theme = Theme::plain();
        let height = dialog.height(60, &theme);
        assert_eq!(
            rendered(&dialog, 60, height),
            vec![
                "╭ Credential settings ─────────────────────────────────────╮",
                "│ This folder's settings choose where cairn sends your     │",
                "│ requests and your API key, or which key it uses:         │",
                "│   • .claude/settings.json: env.ANTHROPIC_BASE_URL =      │",
                "│     \"http://x.example\"                                   │",
                "│   • .claude/settings.local.json: apiKeyHelper =          │",
                "│     \"get-key\"                                            │",
                "│                                                          │",
                "│ A cloned repository can use them to send your key to its │",
                "│ own server. Your answer is kept for these values in this │",
                "│ folder.                                                  │",
                "│                                                          │",
                "│ Use this folder's credential settings?                   │",
                "│   1. Yes, use these settings in this folder              │",
                "│ ❯ 2. No, exit                                            │",
                "│                                                          │",
                "│ enter to confirm · esc to exit                           │",
                "╰──────────────────────────────────────────────────────────╯",
            ]
        );
        assert_eq!(
            dialog.handle_key(key(KeyCode::Enter)),
            Some(TrustAnswer::No)
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
