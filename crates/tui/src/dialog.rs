//! The permission dialog: a tool call waits for the user's yes or no.
//!
//! It shows what would happen (the command for `Bash`, the diff for an edit, the arguments for
//! anything else) and why cairn asks, and offers Yes / Yes, and don't ask again for the
//! suggested rule (saved for the project) / No, and tell cairn what to do differently. For an
//! edit, as in Claude Code, the rule is first offered for this session only, and "always"
//! (saved) is a choice of its own. Arrows and Enter or the digits choose; Esc denies without a
//! message.
//!
//! The tools that talk to the user ask through the same request, and the dialog shows their
//! question instead: the plan to approve (`plan_dialog`), the model's questions
//! (`question_dialog`).

use cairn_protocol::{AgentEvent, Op, PermissionAnswer};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use serde_json::Value;

use crate::choice::{self, ChoiceBox, ChoiceDialog, ListKey, OptionLabel, OptionList, Overflow};
use crate::diff::render_diff_from;
use crate::plan_dialog::{PlanDialog, PlanQuestion};
use crate::question_dialog::QuestionDialog;
use crate::theme::Theme;
use crate::tool_cell::key_argument;
use crate::wrap::{Prefix, sanitize, wrap_words};

/// Input lines shown for a tool without a special view.
const MAX_INPUT_LINES: usize = 12;

/// The user's answer to one permission request, ready to send to the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DialogOutcome {
    /// The id of the [`AgentEvent::PermissionRequested`] this answers; the engine matches the
    /// answer to the waiting tool call by it.
    pub request_id: String,
    /// Allowed once, for the session, always (with the rule to save), or denied (with the
    /// user's words for the model, if any).
    pub answer: PermissionAnswer,
}

impl DialogOutcome {
    /// The operation that sends this answer to the engine.
    pub fn into_op(self) -> Op {
        Op::PermissionAnswer {
            request_id: self.request_id,
            answer: self.answer,
        }
    }
}

/// One of the dialog's options.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Choice {
    Yes,
    /// Allow what the rule matches until the session ends (offered for edits).
    ForSession(String),
    /// Allow what the rule matches from now on, saved in the project's local settings.
    Always(String),
    No,
}

/// The tools whose "don't ask again" is for the session unless the user picks "always", as
/// Claude Code's "Yes, allow all edits during this session".
const EDIT_TOOLS: [&str; 4] = ["Edit", "MultiEdit", "Write", "NotebookEdit"];

/// A pending permission question and where the user is in answering it.
///
/// ```
/// use cairn_protocol::PermissionAnswer;
/// use cairn_tui::PermissionDialog;
/// use ratatui::crossterm::event::{KeyCode, KeyEvent};
/// use serde_json::json;
///
/// let mut dialog = PermissionDialog::new(
///     "req-1",
///     "Bash",
///     json!({"command": "npm test"}),
///     "npm test is not in the allow list",
///     Some("Bash(npm test:*)".into()),
/// );
/// let outcome = dialog.handle_key(KeyEvent::from(KeyCode::Char('2'))).unwrap();
/// assert_eq!(
///     outcome.answer,
///     PermissionAnswer::AllowAlways { rule: "Bash(npm test:*)".into() }
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionDialog {
    request_id: String,
    tool: String,
    input: Value,
    reason: String,
    suggested_rule: Option<String>,
    options: OptionList,
    /// What the user types to go with a "No".
    feedback: String,
    /// The text field for `feedback` has the keyboard.
    typing: bool,
    /// The file line an edit's old text starts on, for the diff's numbers.
    diff_start_line: usize,
    /// The file as it is now, for the diff of an edit or a write that replaces it.
    file_before: Option<String>,
    /// The question of a tool that talks to the user (a plan to approve, questions to
    /// answer), which the dialog shows and answers instead of a yes or no.
    special: Option<Special>,
}

/// A question that is not whether a call may run.
#[derive(Debug, Clone, PartialEq)]
enum Special {
    Plan(PlanDialog),
    Questions(QuestionDialog),
}

impl Special {
    fn for_call(tool: &str, input: &Value) -> Option<Special> {
        if let Some(question) = PlanQuestion::for_tool(tool) {
            return Some(Special::Plan(PlanDialog::new(question, input)));
        }
        match tool {
            "AskUserQuestion" => QuestionDialog::new(input).map(Special::Questions),
            _ => None,
        }
    }
}

impl PermissionDialog {
    /// A dialog asking whether `tool` may run with `input`: `reason` says why cairn asks, and
    /// `suggested_rule` (when there is one) is what "don't ask again" would allow; without
    /// it only Yes and No are offered.
    pub fn new(
        request_id: impl Into<String>,
        tool: impl Into<String>,
        input: Value,
        reason: impl Into<String>,
        suggested_rule: Option<String>,
    ) -> PermissionDialog {
        let tool = tool.into();
        let options = OptionList::new(choices(&tool, suggested_rule.as_deref()).len(), 0);
        let special = Special::for_call(&tool, &input);
        PermissionDialog {
            special,
            request_id: request_id.into(),
            tool,
            input,
            reason: reason.into(),
            suggested_rule,
            options,
            feedback: String::new(),
            typing: false,
            diff_start_line: 1,
            file_before: None,
        }
    }

    /// The dialog for an [`AgentEvent::PermissionRequested`]; `None` for any other event.
    pub fn from_event(event: &AgentEvent) -> Option<PermissionDialog> {
        let AgentEvent::PermissionRequested {
            request_id,
            tool,
            input,
            reason,
            suggested_rule,
            ..
        } = event
        else {
            return None;
        };
        Some(PermissionDialog::new(
            request_id.clone(),
            tool.clone(),
            input.clone(),
            reason.clone(),
            suggested_rule.clone(),
        ))
    }

    /// Numbers the diff of an edit from `line`, where its old text sits in the file (see
    /// [`crate::line_of`]); without it the diff counts from 1.
    pub fn set_diff_start_line(&mut self, line: usize) {
        self.diff_start_line = line.max(1);
    }

    /// The text of the file the call changes, as it is now: an edit's diff is numbered by
    /// where its old text sits, each edit of a MultiEdit on its own; a write that replaces a
    /// file shows what it removes as well as what it adds.
    pub fn set_file_before(&mut self, text: String) {
        if self.tool == "Edit"
            && let Some(old) = self.input.get("old_string").and_then(Value::as_str)
            && let Some(line) = crate::line_of(&text, old)
        {
            self.diff_start_line = line;
        }
        self.file_before = Some(text);
    }

    /// The id of the request being asked about, so a caller can tell whether an event or a
    /// cancellation concerns this dialog.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// Whether the "No" text field has the keyboard (so typed characters are text).
    pub fn is_typing(&self) -> bool {
        match &self.special {
            Some(Special::Plan(plan)) => plan.is_typing(),
            Some(Special::Questions(questions)) => questions.is_typing(),
            None => self.typing,
        }
    }

    fn choices(&self) -> Vec<Choice> {
        choices(&self.tool, self.suggested_rule.as_deref())
    }

    /// Handles one key; returns the answer once the user has given one. While the "No" text
    /// field has the keyboard, characters, Backspace and Enter are its own; the arrows leave it.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<DialogOutcome> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        let special = match &mut self.special {
            Some(Special::Plan(plan)) => Some(plan.handle_key(key)),
            Some(Special::Questions(questions)) => Some(questions.handle_key(key)),
            None => None,
        };
        if let Some(answer) = special {
            return answer.map(|answer| self.answer(answer));
        }
        if self.typing {
            match key.code {
                KeyCode::Enter => {
                    let message = self.feedback.trim();
                    let message = (!message.is_empty()).then(|| message.to_string());
                    return Some(self.answer(PermissionAnswer::Deny { message }));
                }
                KeyCode::Backspace => {
                    self.feedback.pop();
                    return None;
                }
                KeyCode::Char(c) => {
                    if !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                    {
                        self.feedback.push(c);
                    }
                    return None;
                }
                _ => {}
            }
        }
        match self.options.handle_key(key)? {
            ListKey::Moved => {
                self.typing = false;
                None
            }
            ListKey::Chosen(index) => self.choose(index),
            ListKey::Cancelled => Some(self.answer(PermissionAnswer::Deny { message: None })),
        }
    }

    fn choose(&mut self, index: usize) -> Option<DialogOutcome> {
        match self.choices().get(index)? {
            Choice::Yes => Some(self.answer(PermissionAnswer::AllowOnce)),
            Choice::ForSession(rule) => {
                let rule = rule.clone();
                Some(self.answer(PermissionAnswer::AllowForSession { rule }))
            }
            Choice::Always(rule) => {
                let rule = rule.clone();
                Some(self.answer(PermissionAnswer::AllowAlways { rule }))
            }
            Choice::No => {
                self.typing = true;
                None
            }
        }
    }

    fn answer(&self, answer: PermissionAnswer) -> DialogOutcome {
        DialogOutcome {
            request_id: self.request_id.clone(),
            answer,
        }
    }

    /// The rows the dialog needs at `width` to show everything, borders included.
    pub fn height(&self, width: u16, theme: &Theme) -> u16 {
        choice::height(self, width, theme)
    }

    /// A widget that draws the dialog with `theme`.
    pub fn widget<'a>(&'a self, theme: &'a Theme) -> DialogView<'a> {
        DialogView {
            dialog: self,
            theme,
        }
    }

    /// Draws the dialog into `area`. What does not fit is the body's end (the diff, the
    /// arguments), summed up in a line, after the blank separator lines; the options always
    /// show.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        choice::render(self, area, buf, theme);
    }

    fn title(&self) -> &'static str {
        match self.tool.as_str() {
            "Bash" => "Bash command",
            "Edit" | "MultiEdit" => "Edit file",
            "Write" => "Write file",
            _ => "Tool use",
        }
    }

    fn label(&self, choice: &Choice) -> String {
        match choice {
            Choice::Yes => "Yes".to_string(),
            Choice::ForSession(rule) => {
                format!("Yes, allow {} during this session", sanitize(rule))
            }
            // Saved in the project's .claude/settings.local.json, like the rule for a
            // command.
            Choice::Always(rule) if EDIT_TOOLS.contains(&self.tool.as_str()) => {
                format!("Yes, and always allow {} in this project", sanitize(rule))
            }
            Choice::Always(rule) => format!(
                "Yes, and don't ask again for {} in this project",
                sanitize(rule)
            ),
            Choice::No if self.typing => "No, and tell cairn what to do differently:".into(),
            Choice::No => "No, and tell cairn what to do differently (esc)".into(),
        }
    }

    /// The text field under "No", with its cursor; nothing while it does not have the keyboard.
    fn feedback_field(&self, columns: usize, theme: &Theme) -> Vec<Line<'static>> {
        if !self.typing {
            return Vec::new();
        }
        let cursor = Span::styled(" ", Style::new().add_modifier(Modifier::REVERSED));
        let mut field = wrap_words(
            &[Span::raw(sanitize(&self.feedback))],
            columns.saturating_sub(1),
            &Prefix::hanging(Span::styled("     > ", theme.dim)),
        );
        if let Some(last) = field.last_mut() {
            last.spans.push(cursor);
        }
        field
    }

    fn body(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let columns = usize::from(width);
        let field = |name: &str| {
            self.input
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let text = |text: &str, style: Style| {
            wrap_words(
                &[Span::styled(sanitize(text), style)],
                columns,
                &Prefix::none(),
            )
        };
        match self.tool.as_str() {
            "Bash" => {
                let mut lines = text(field("command").trim(), bold);
                let description = field("description");
                if !description.is_empty() {
                    lines.extend(text(description, theme.dim));
                }
                lines
            }
            "Edit" => {
                let mut lines = text(field("file_path"), bold);
                lines.extend(render_diff_from(
                    field("old_string"),
                    field("new_string"),
                    self.diff_start_line,
                    width,
                    theme,
                ));
                lines
            }
            "MultiEdit" => {
                let mut lines = text(field("file_path"), bold);
                let edits = self.input.get("edits").and_then(Value::as_array);
                for (index, edit) in edits.into_iter().flatten().enumerate() {
                    if index > 0 {
                        lines.push(Line::from(Span::styled("⋮", theme.diff_gutter)));
                    }
                    let part = |name| edit.get(name).and_then(Value::as_str).unwrap_or_default();
                    let start = self
                        .file_before
                        .as_deref()
                        .and_then(|file| crate::line_of(file, part("old_string")))
                        .unwrap_or(1);
                    lines.extend(render_diff_from(
                        part("old_string"),
                        part("new_string"),
                        start,
                        width,
                        theme,
                    ));
                }
                lines
            }
            "Write" => {
                let mut lines = text(field("file_path"), bold);
                let before = self.file_before.as_deref().unwrap_or("");
                lines.extend(render_diff_from(before, field("content"), 1, width, theme));
                lines
            }
            _ => {
                let call = match key_argument(&self.tool, &self.input) {
                    Some(argument) => format!("{}({argument})", self.tool),
                    None => self.tool.clone(),
                };
                let mut lines = text(&call, bold);
                let pretty = serde_json::to_string_pretty(&self.input).unwrap_or_default();
                let input: Vec<&str> = pretty.lines().collect();
                for line in input.iter().take(MAX_INPUT_LINES) {
                    lines.extend(text(line, theme.dim));
                }
                if input.len() > MAX_INPUT_LINES {
                    let more = format!("… +{} lines", input.len() - MAX_INPUT_LINES);
                    lines.push(Line::from(Span::styled(more, theme.dim)));
                }
                lines
            }
        }
    }
}

/// The options for a call of `tool`: "don't ask again" only with a rule to save, and for an
/// edit first for the session.
fn choices(tool: &str, suggested_rule: Option<&str>) -> Vec<Choice> {
    let mut choices = vec![Choice::Yes];
    if let Some(rule) = suggested_rule {
        if EDIT_TOOLS.contains(&tool) {
            choices.push(Choice::ForSession(rule.to_string()));
        }
        choices.push(Choice::Always(rule.to_string()));
    }
    choices.push(Choice::No);
    choices
}

impl ChoiceDialog for PermissionDialog {
    fn layout(&self, width: u16, theme: &Theme) -> ChoiceBox {
        match &self.special {
            Some(Special::Plan(plan)) => return plan.layout(width, theme),
            Some(Special::Questions(questions)) => return questions.layout(width, theme),
            None => {}
        }
        let columns = usize::from(width);
        let mut question = wrap_words(
            &[Span::styled(sanitize(&self.reason), theme.warning)],
            columns,
            &Prefix::hanging(Span::styled("Why: ", theme.dim)),
        );
        question.push(Line::default());
        question.push(Line::from("Do you want to proceed?"));
        ChoiceBox {
            title: self.title(),
            body: self.body(width, theme),
            overflow: Overflow::Squeezed("ctrl+o shows the whole call"),
            question,
            options: self
                .choices()
                .iter()
                .map(|choice| OptionLabel::plain(self.label(choice)))
                .collect(),
            selected: self.options.selected(),
            below: self.feedback_field(columns, theme),
            hint: if self.typing {
                "enter to send · esc to deny without a message"
            } else {
                "↑↓ to select · enter to confirm · esc to deny"
            },
        }
    }
}

/// [`PermissionDialog`] with its theme, as a ratatui widget.
#[derive(Debug, Clone, Copy)]
pub struct DialogView<'a> {
    dialog: &'a PermissionDialog,
    theme: &'a Theme,
}

impl Widget for DialogView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        self.dialog.render(area, buf, self.theme);
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn dialog(rule: Option<&str>) -> PermissionDialog {
        PermissionDialog::new(
            "r1",
            "Bash",
            json!({"command": "rm -rf build"}),
            "rm is not read-only",
            rule.map(str::to_string),
        )
    }

    fn press(dialog: &mut PermissionDialog, code: KeyCode) -> Option<PermissionAnswer> {
        dialog
            .handle_key(KeyEvent::from(code))
            .map(|outcome| outcome.answer)
    }

    #[test]
    fn arrows_move_and_enter_chooses() {
        let mut d = dialog(Some("Bash(rm:*)"));
        assert_eq!(press(&mut d, KeyCode::Down), None);
        assert_eq!(
            press(&mut d, KeyCode::Enter),
            Some(PermissionAnswer::AllowAlways {
                rule: "Bash(rm:*)".into()
            })
        );
        let mut d = dialog(None);
        assert_eq!(press(&mut d, KeyCode::Up), None);
        assert_eq!(press(&mut d, KeyCode::Up), None);
        assert_eq!(
            press(&mut d, KeyCode::Enter),
            Some(PermissionAnswer::AllowOnce)
        );
    }

    #[test]
    fn no_asks_for_a_message_and_enter_sends_it() {
        let mut d = dialog(Some("Bash(rm:*)"));
        assert_eq!(press(&mut d, KeyCode::Char('3')), None);
        assert!(d.is_typing());
        for c in "use cargo clean1".chars() {
            assert_eq!(press(&mut d, KeyCode::Char(c)), None);
        }
        assert_eq!(press(&mut d, KeyCode::Backspace), None);
        assert_eq!(
            press(&mut d, KeyCode::Enter),
            Some(PermissionAnswer::Deny {
                message: Some("use cargo clean".into())
            })
        );
    }

    #[test]
    fn an_empty_message_and_esc_deny_without_one() {
        let mut d = dialog(None);
        assert_eq!(press(&mut d, KeyCode::Char('2')), None);
        assert_eq!(
            press(&mut d, KeyCode::Enter),
            Some(PermissionAnswer::Deny { message: None })
        );
        let mut d = dialog(None);
        assert_eq!(
            press(&mut d, KeyCode::Esc),
            Some(PermissionAnswer::Deny { message: None })
        );
    }

    #[test]
    fn other_tools_show_their_arguments() {
        let d = PermissionDialog::new(
            "r2",
            "WebFetch",
            json!({"url": "https://example.com", "prompt": "summarise"}),
            "WebFetch asks before it fetches",
            None,
        );
        let body: Vec<String> = d
            .body(40, &Theme::plain())
            .iter()
            .map(|line| line.to_string())
            .collect();
        assert_eq!(
            body,
            vec![
                "WebFetch(https://example.com)",
                "{",
                "  \"prompt\": \"summarise\",",
                "  \"url\": \"https://example.com\"",
                "}"
            ]
        );
    }

    #[test]
    fn from_event_takes_only_permission_requests() {
        let event = AgentEvent::PermissionRequested {
            request_id: "r9".into(),
            tool_use_id: "t9".into(),
            tool: "Bash".into(),
            input: json!({"command": "ls"}),
            reason: "why".into(),
            suggested_rule: None,
        };
        let dialog = PermissionDialog::from_event(&event).unwrap();
        assert_eq!(dialog.request_id(), "r9");
        let mut dialog = dialog;
        let outcome = dialog.handle_key(KeyEvent::from(KeyCode::Enter)).unwrap();
        assert_eq!(
            outcome.into_op(),
            Op::PermissionAnswer {
                request_id: "r9".into(),
                answer: PermissionAnswer::AllowOnce
            }
        );
        assert_eq!(
            PermissionDialog::from_event(&AgentEvent::TextDelta { text: "x".into() }),
            None
        );
    }

    #[test]
    fn tiny_areas_do_not_panic() {
        let mut d = dialog(Some("Bash(rm:*)"));
        d.handle_key(KeyEvent::from(KeyCode::Char('3')));
        for width in 0..20 {
            for height in 0..8 {
                let area = Rect::new(0, 0, width, height);
                let mut buf = Buffer::empty(area);
                d.render(area, &mut buf, &Theme::dark());
            }
        }
    }

    fn edit_dialog() -> PermissionDialog {
        PermissionDialog::new(
            "r3",
            "Edit",
            json!({"file_path": "src/lib.rs", "old_string": "a", "new_string": "b"}),
            "Edit asks before it changes a file",
            Some("Edit(src/**)".into()),
        )
    }

    fn option_lines(dialog: &PermissionDialog) -> Vec<String> {
        let (_, fixed) = choice::sections(dialog, 200, &Theme::plain());
        fixed
            .iter()
            .map(|line| line.to_string())
            .filter(|line| line.trim_start().starts_with(['❯', '1', '2', '3', '4']))
            .collect()
    }

    #[test]
    fn an_edit_is_allowed_for_the_session_unless_the_user_picks_always() {
        assert_eq!(
            option_lines(&edit_dialog()),
            [
                "❯ 1. Yes",
                "  2. Yes, allow Edit(src/**) during this session",
                "  3. Yes, and always allow Edit(src/**) in this project",
                "  4. No, and tell cairn what to do differently (esc)",
            ]
        );
        assert_eq!(
            press(&mut edit_dialog(), KeyCode::Char('2')),
            Some(PermissionAnswer::AllowForSession {
                rule: "Edit(src/**)".into()
            })
        );
        assert_eq!(
            press(&mut edit_dialog(), KeyCode::Char('3')),
            Some(PermissionAnswer::AllowAlways {
                rule: "Edit(src/**)".into()
            })
        );
        let mut d = edit_dialog();
        assert_eq!(press(&mut d, KeyCode::Char('4')), None);
        assert!(d.is_typing());
    }

    #[test]
    fn a_command_is_allowed_for_good_in_the_project() {
        assert_eq!(
            option_lines(&dialog(Some("Bash(rm:*)"))),
            [
                "❯ 1. Yes",
                "  2. Yes, and don't ask again for Bash(rm:*) in this project",
                "  3. No, and tell cairn what to do differently (esc)",
            ]
        );
    }

    #[test]
    fn digits_beyond_the_options_do_nothing() {
        let mut d = dialog(None);
        assert_eq!(press(&mut d, KeyCode::Char('3')), None);
        assert!(!d.is_typing());
        assert_eq!(
            press(&mut d, KeyCode::Char('1')),
            Some(PermissionAnswer::AllowOnce)
        );
    }
}
