//! The plan-mode dialogs: approving the plan `ExitPlanMode` presents, and agreeing to the
//! switch `EnterPlanMode` asks for.
//!
//! The plan shows as Markdown. Approving chooses the mode work goes on in (`acceptEdits`, so
//! edits run unasked, or `default`, so each is asked about); "keep planning" opens a field
//! whose words go back to the model with the refusal, and plan mode stays on.

use cairn_protocol::{PermissionAnswer, PermissionMode};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::choice::{ChoiceBox, ChoiceDialog, ListKey, OptionLabel, OptionList, Overflow};
use crate::markdown::render_markdown;
use crate::theme::Theme;
use crate::wrap::{Prefix, sanitize, wrap_words};

/// What the dialog asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlanQuestion {
    /// `ExitPlanMode`: approve the plan, or keep planning.
    Approve,
    /// `EnterPlanMode`: switch into plan mode, or not.
    Enter,
}

impl PlanQuestion {
    /// The question a call of `tool` asks, if it is one of the plan-mode tools.
    pub(crate) fn for_tool(tool: &str) -> Option<PlanQuestion> {
        match tool {
            "ExitPlanMode" => Some(PlanQuestion::Approve),
            "EnterPlanMode" => Some(PlanQuestion::Enter),
            _ => None,
        }
    }
}

/// A plan-mode question and where the user is in answering it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlanDialog {
    question: PlanQuestion,
    /// The plan, in Markdown; empty when the call carries none (it is in the plan file).
    plan: String,
    options: OptionList,
    feedback: String,
    typing: bool,
}

impl PlanDialog {
    pub(crate) fn new(question: PlanQuestion, input: &Value) -> PlanDialog {
        let plan = input
            .get("plan")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let len = match question {
            PlanQuestion::Approve => 3,
            PlanQuestion::Enter => 2,
        };
        PlanDialog {
            question,
            plan,
            options: OptionList::new(len, 0),
            feedback: String::new(),
            typing: false,
        }
    }

    pub(crate) fn is_typing(&self) -> bool {
        self.typing
    }

    /// Handles one key; the answer once the user has given one.
    pub(crate) fn handle_key(&mut self, key: KeyEvent) -> Option<PermissionAnswer> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        if self.typing {
            match key.code {
                KeyCode::Enter => return Some(self.keep_planning()),
                KeyCode::Backspace => {
                    self.feedback.pop();
                    return None;
                }
                KeyCode::Char(c)
                    if !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
                {
                    self.feedback.push(c);
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
            ListKey::Cancelled => Some(PermissionAnswer::Deny { message: None }),
            ListKey::Chosen(index) => match (self.question, index) {
                (PlanQuestion::Approve, 0) => Some(approve_into(PermissionMode::AcceptEdits)),
                (PlanQuestion::Approve, 1) => Some(approve_into(PermissionMode::Default)),
                (PlanQuestion::Approve, _) => {
                    self.typing = true;
                    None
                }
                (PlanQuestion::Enter, 0) => Some(PermissionAnswer::AllowOnce),
                (PlanQuestion::Enter, _) => Some(PermissionAnswer::Deny { message: None }),
            },
        }
    }

    fn keep_planning(&self) -> PermissionAnswer {
        let feedback = self.feedback.trim();
        let mut message = String::from("Keep planning: the user wants changes to the plan.");
        if !feedback.is_empty() {
            message.push_str(&format!(" They said: {feedback}"));
        }
        PermissionAnswer::Deny {
            message: Some(message),
        }
    }

    fn labels(&self) -> Vec<&'static str> {
        match self.question {
            PlanQuestion::Approve => vec![
                "Yes, and auto-accept edits",
                "Yes, and manually approve edits",
                if self.typing {
                    "No, keep planning; tell the model what to change:"
                } else {
                    "No, keep planning (esc)"
                },
            ],
            PlanQuestion::Enter => vec!["Yes, enter plan mode", "No, go on without it"],
        }
    }
}

/// Approves the plan, with `mode` from now on.
fn approve_into(mode: PermissionMode) -> PermissionAnswer {
    PermissionAnswer::AllowWith {
        updated_input: None,
        rules: Vec::new(),
        mode: Some(mode),
    }
}

impl ChoiceDialog for PlanDialog {
    fn layout(&self, width: u16, theme: &Theme) -> ChoiceBox {
        let columns = usize::from(width);
        let (title, body, question) = match self.question {
            PlanQuestion::Approve => {
                let body = if self.plan.trim().is_empty() {
                    vec![Line::from(Span::styled(
                        "The plan is in the plan file.",
                        theme.dim,
                    ))]
                } else {
                    render_markdown(&self.plan, width, theme)
                };
                ("Ready to code?", body, "Would you like to proceed?")
            }
            PlanQuestion::Enter => (
                "Enter plan mode?",
                wrap_words(
                    &[Span::raw(
                        "The model wants to explore and plan first: in plan mode it reads and \
                         searches only, then presents a plan for you to approve.",
                    )],
                    columns,
                    &Prefix::none(),
                ),
                "Switch to plan mode?",
            ),
        };
        let below = if self.typing {
            let mut field = wrap_words(
                &[Span::raw(sanitize(&self.feedback))],
                columns.saturating_sub(1),
                &Prefix::hanging(Span::styled("     > ", theme.dim)),
            );
            if let Some(last) = field.last_mut() {
                last.spans.push(Span::styled(
                    " ",
                    Style::new().add_modifier(Modifier::REVERSED),
                ));
            }
            field
        } else {
            Vec::new()
        };
        ChoiceBox {
            title,
            body,
            overflow: Overflow::Squeezed("ctrl+o shows the whole plan"),
            question: vec![Line::from(question)],
            options: self.labels().into_iter().map(OptionLabel::plain).collect(),
            selected: self.options.selected(),
            below,
            hint: if self.typing {
                "enter to send · esc to keep planning without a message"
            } else {
                "↑↓ to select · enter to confirm · esc to keep planning"
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn press(dialog: &mut PlanDialog, code: KeyCode) -> Option<PermissionAnswer> {
        dialog.handle_key(KeyEvent::from(code))
    }

    #[test]
    fn approving_chooses_the_mode_work_goes_on_in() {
        let input = json!({"plan": "# Plan\n\n1. Fix"});
        let mut dialog = PlanDialog::new(PlanQuestion::Approve, &input);
        assert_eq!(
            press(&mut dialog, KeyCode::Enter),
            Some(approve_into(PermissionMode::AcceptEdits))
        );
        let mut dialog = PlanDialog::new(PlanQuestion::Approve, &input);
        assert_eq!(
            press(&mut dialog, KeyCode::Char('2')),
            Some(approve_into(PermissionMode::Default))
        );
    }

    #[test]
    fn keeping_planning_sends_the_users_words() {
        let mut dialog = PlanDialog::new(PlanQuestion::Approve, &json!({"plan": "1. Fix"}));
        assert_eq!(press(&mut dialog, KeyCode::Char('3')), None);
        assert!(dialog.is_typing());
        for c in "add tests".chars() {
            press(&mut dialog, KeyCode::Char(c));
        }
        assert_eq!(
            press(&mut dialog, KeyCode::Enter),
            Some(PermissionAnswer::Deny {
                message: Some(
                    "Keep planning: the user wants changes to the plan. They said: add tests"
                        .into()
                )
            })
        );
    }

    #[test]
    fn entering_plan_mode_is_a_yes_or_no() {
        let mut dialog = PlanDialog::new(PlanQuestion::Enter, &json!({}));
        assert_eq!(
            press(&mut dialog, KeyCode::Enter),
            Some(PermissionAnswer::AllowOnce)
        );
        let mut dialog = PlanDialog::new(PlanQuestion::Enter, &json!({}));
        assert_eq!(
            press(&mut dialog, KeyCode::Esc),
            Some(PermissionAnswer::Deny { message: None })
        );
    }
}
