//! The dialog for `AskUserQuestion`: the model's questions, one after the other, each with
//! its choices and an "Other" answer in the user's own words.
//!
//! Arrows move, Enter picks (a multi-select question takes the ticked choices), Space ticks a
//! choice of a multi-select question, a digit picks its choice, and Esc declines to answer.
//! The answers go back as the call's input, with `answers` written in
//! ([`AskUserQuestionInput::answered`]), as an SDK host's `updatedInput` would.

use std::collections::BTreeMap;

use cairn_protocol::PermissionAnswer;
use cairn_tools::{AskUserQuestionInput, UserQuestion};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::choice::{ChoiceBox, ChoiceDialog, ListKey, OptionLabel, OptionList, Overflow};
use crate::theme::Theme;
use crate::wrap::{Prefix, sanitize, wrap_words};

/// The model's questions and the user's answers so far.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QuestionDialog {
    /// The call's input as the model wrote it, which the answers are written into.
    input: Value,
    questions: Vec<UserQuestion>,
    /// The question being asked.
    current: usize,
    /// The choices of the current question and "Other" last.
    options: OptionList,
    /// The ticked choices of a multi-select question.
    ticked: Vec<bool>,
    /// The "Other" answer being typed.
    other: String,
    typing: bool,
    answers: BTreeMap<String, String>,
}

impl QuestionDialog {
    /// The dialog for a call with `input`; `None` when the input holds no question to show
    /// (the tool's own check refuses such a call before anyone is asked).
    pub(crate) fn new(input: &Value) -> Option<QuestionDialog> {
        let parsed: AskUserQuestionInput = serde_json::from_value(input.clone()).ok()?;
        parsed.check().ok()?;
        let mut dialog = QuestionDialog {
            input: input.clone(),
            questions: parsed.questions,
            current: 0,
            options: OptionList::new(0, 0),
            ticked: Vec::new(),
            other: String::new(),
            typing: false,
            answers: BTreeMap::new(),
        };
        dialog.start_question();
        Some(dialog)
    }

    fn start_question(&mut self) {
        let choices = self.question().options.len();
        self.options = OptionList::new(choices + 1, 0);
        self.ticked = vec![false; choices];
        self.other.clear();
        self.typing = false;
    }

    fn question(&self) -> &UserQuestion {
        &self.questions[self.current.min(self.questions.len().saturating_sub(1))]
    }

    fn other_index(&self) -> usize {
        self.question().options.len()
    }

    pub(crate) fn is_typing(&self) -> bool {
        self.typing
    }

    /// Handles one key; the answer once every question is answered (or the user declined).
    pub(crate) fn handle_key(&mut self, key: KeyEvent) -> Option<PermissionAnswer> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        if self.typing {
            match key.code {
                KeyCode::Enter => return self.answer_with(self.chosen_labels()),
                KeyCode::Backspace => {
                    self.other.pop();
                    return None;
                }
                KeyCode::Char(c)
                    if !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
                {
                    self.other.push(c);
                    return None;
                }
                _ => {}
            }
        }
        if key.code == KeyCode::Char(' ') && self.question().multi_select {
            let at = self.options.selected();
            match self.ticked.get_mut(at) {
                Some(ticked) => *ticked = !*ticked,
                None => self.typing = true,
            }
            return None;
        }
        match self.options.handle_key(key)? {
            ListKey::Moved => {
                self.typing = false;
                None
            }
            ListKey::Cancelled => Some(PermissionAnswer::Deny {
                message: Some("The user declined to answer the questions.".into()),
            }),
            ListKey::Chosen(index) if index == self.other_index() => {
                self.typing = true;
                None
            }
            ListKey::Chosen(index) => {
                // A multi-select question takes what is ticked, else the choice picked.
                let ticked = self.chosen_labels();
                let labels = if self.question().multi_select && !ticked.is_empty() {
                    ticked
                } else {
                    vec![self.question().options[index].label.clone()]
                };
                self.answer_with(labels)
            }
        }
    }

    /// The ticked choices, in their order, and the "Other" text when there is one.
    fn chosen_labels(&self) -> Vec<String> {
        let mut labels: Vec<String> = self
            .question()
            .options
            .iter()
            .zip(&self.ticked)
            .filter(|(_, ticked)| **ticked)
            .map(|(option, _)| option.label.clone())
            .collect();
        let other = self.other.trim();
        if !other.is_empty() {
            labels.push(other.to_string());
        }
        labels
    }

    /// Records `labels` as the current question's answer; the whole answer after the last
    /// question. An empty answer leaves the question open.
    fn answer_with(&mut self, labels: Vec<String>) -> Option<PermissionAnswer> {
        if labels.is_empty() {
            return None;
        }
        let question = self.question().question.clone();
        self.answers.insert(question, labels.join(", "));
        self.current += 1;
        if self.current < self.questions.len() {
            self.start_question();
            return None;
        }
        Some(PermissionAnswer::AllowWith {
            updated_input: Some(AskUserQuestionInput::answered(
                &self.input,
                std::mem::take(&mut self.answers),
            )),
            rules: Vec::new(),
            mode: None,
        })
    }
}

impl ChoiceDialog for QuestionDialog {
    fn layout(&self, width: u16, theme: &Theme) -> ChoiceBox {
        let columns = usize::from(width);
        let question = self.question();
        let mut body = Vec::new();
        if self.questions.len() > 1 {
            body.push(Line::from(Span::styled(
                format!(
                    "Question {} of {} · {}",
                    self.current + 1,
                    self.questions.len(),
                    sanitize(&question.header)
                ),
                theme.dim,
            )));
        } else {
            body.push(Line::from(Span::styled(
                sanitize(&question.header),
                theme.dim,
            )));
        }
        let asked = wrap_words(
            &[Span::styled(
                sanitize(&question.question),
                Style::new().add_modifier(Modifier::BOLD),
            )],
            columns,
            &Prefix::none(),
        );
        let mut options: Vec<OptionLabel> = question
            .options
            .iter()
            .zip(&self.ticked)
            .map(|(option, ticked)| {
                let tick = match (question.multi_select, ticked) {
                    (true, true) => "[x] ",
                    (true, false) => "[ ] ",
                    (false, _) => "",
                };
                let description = if option.description.trim().is_empty() {
                    String::new()
                } else {
                    format!(" — {}", option.description)
                };
                OptionLabel::plain(format!(
                    "{tick}{}{}",
                    sanitize(&option.label),
                    sanitize(&description)
                ))
            })
            .collect();
        options.push(OptionLabel::plain(if self.typing {
            "Other: type your answer"
        } else {
            "Other"
        }));
        let below = if self.typing {
            let mut field = wrap_words(
                &[Span::raw(sanitize(&self.other))],
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
            title: "Question",
            body,
            overflow: Overflow::Cut,
            question: asked,
            options,
            selected: self.options.selected(),
            below,
            hint: match (self.typing, question.multi_select) {
                (true, _) => "enter to send · esc to decline",
                (false, true) => "↑↓ · space to tick · enter to confirm · esc to decline",
                (false, false) => "↑↓ to select · enter to confirm · esc to decline",
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn input() -> Value {
        json!({"questions": [
            {
                "question": "Which database?",
                "header": "Database",
                "options": [
                    {"label": "SQLite", "description": "One file"},
                    {"label": "Postgres", "description": "A server"}
                ],
                "multiSelect": false
            },
            {
                "question": "Which extras?",
                "header": "Extras",
                "options": [
                    {"label": "Logging", "description": ""},
                    {"label": "Metrics", "description": ""},
                    {"label": "Tracing", "description": ""}
                ],
                "multiSelect": true
            }
        ]})
    }

    fn press(dialog: &mut QuestionDialog, code: KeyCode) -> Option<PermissionAnswer> {
        dialog.handle_key(KeyEvent::from(code))
    }

    fn answered(answers: &[(&str, &str)]) -> Option<PermissionAnswer> {
        Some(PermissionAnswer::AllowWith {
            updated_input: Some(AskUserQuestionInput::answered(
                &input(),
                answers
                    .iter()
                    .map(|(q, a)| (q.to_string(), a.to_string()))
                    .collect(),
            )),
            rules: Vec::new(),
            mode: None,
        })
    }

    #[test]
    fn each_question_is_answered_in_turn_and_ticks_add_up() {
        let mut dialog = QuestionDialog::new(&input()).unwrap();
        assert_eq!(press(&mut dialog, KeyCode::Down), None);
        assert_eq!(
            press(&mut dialog, KeyCode::Enter),
            None,
            "one more question"
        );
        press(&mut dialog, KeyCode::Char(' '));
        press(&mut dialog, KeyCode::Down);
        press(&mut dialog, KeyCode::Down);
        press(&mut dialog, KeyCode::Char(' '));
        assert_eq!(
            press(&mut dialog, KeyCode::Enter),
            answered(&[
                ("Which database?", "Postgres"),
                ("Which extras?", "Logging, Tracing")
            ])
        );
    }

    #[test]
    fn other_takes_the_users_own_words() {
        let mut dialog = QuestionDialog::new(&input()).unwrap();
        assert_eq!(press(&mut dialog, KeyCode::Char('3')), None);
        assert!(dialog.is_typing());
        for c in "DuckDB".chars() {
            press(&mut dialog, KeyCode::Char(c));
        }
        press(&mut dialog, KeyCode::Enter);
        assert_eq!(
            press(&mut dialog, KeyCode::Char('2')),
            answered(&[("Which database?", "DuckDB"), ("Which extras?", "Metrics")])
        );
    }

    #[test]
    fn esc_declines_and_unshowable_input_makes_no_dialog() {
        let mut dialog = QuestionDialog::new(&input()).unwrap();
        assert_eq!(
            press(&mut dialog, KeyCode::Esc),
            Some(PermissionAnswer::Deny {
                message: Some("The user declined to answer the questions.".into())
            })
        );
        assert_eq!(QuestionDialog::new(&json!({"questions": []})), None);
    }
}
