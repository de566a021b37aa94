//! An MCP server's elicitation as a form in the viewport: the server's message, one field per
//! property of its flat schema (text, number, yes/no, one of a list), defaults filled in,
//! required ones marked. Up/Down/Tab move between fields; typing edits a text or number
//! field, Space or Left/Right change a yes/no or a list; Enter sends once the answer fits the
//! schema (what does not fit is named under the fields); Esc declines, Ctrl+C cancels.
//!
//! [`FormElicitor`] is the [`Elicitor`] the interactive UI hands the MCP client: each request
//! goes to the app through its [`ElicitationInbox`], and the form's answer goes back.

use std::sync::{Arc, Mutex};

use cairn_mcp::elicitation::{
    ElicitationAnswer, ElicitationFuture, ElicitationRequest, Elicitor, Field, FieldKind,
    fields_of, validate,
};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::{Map, Value};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;

use crate::choice::{self, ChoiceBox, ChoiceDialog, OptionLabel, Overflow, wrapped};
use crate::theme::Theme;
use crate::wrap::{Prefix, sanitize};

/// A request waiting for the user, and where its answer goes.
#[derive(Debug)]
pub struct PendingElicitation {
    /// What the server asks.
    pub request: ElicitationRequest,
    /// Where the answer goes.
    pub reply: oneshot::Sender<ElicitationAnswer>,
}

/// Sends each request to the app; a request the app can no longer take is declined.
#[derive(Debug, Clone)]
pub struct FormElicitor(UnboundedSender<PendingElicitation>);

impl Elicitor for FormElicitor {
    fn elicit(&self, request: ElicitationRequest) -> ElicitationFuture {
        let (reply, answer) = oneshot::channel();
        let sent = self.0.send(PendingElicitation { request, reply });
        Box::pin(async move {
            match sent {
                Ok(()) => answer.await.unwrap_or(ElicitationAnswer::Decline),
                Err(_) => ElicitationAnswer::Decline,
            }
        })
    }
}

/// The app's end of a [`FormElicitor`]: taken once, by the app that shows the forms.
#[derive(Debug, Clone)]
pub struct ElicitationInbox(Arc<Mutex<Option<UnboundedReceiver<PendingElicitation>>>>);

impl ElicitationInbox {
    /// The receiver, the first time.
    pub fn take(&self) -> Option<UnboundedReceiver<PendingElicitation>> {
        self.0.lock().ok()?.take()
    }
}

/// An elicitor for the MCP client and the inbox the app reads its requests from.
pub fn form_elicitor() -> (FormElicitor, ElicitationInbox) {
    let (sender, receiver) = unbounded_channel();
    (
        FormElicitor(sender),
        ElicitationInbox(Arc::new(Mutex::new(Some(receiver)))),
    )
}

/// A field's value while it is being edited.
#[derive(Debug, Clone, PartialEq)]
enum FieldValue {
    Text(String),
    Flag(Option<bool>),
    Pick(Option<usize>),
}

/// The form of one request.
#[derive(Debug)]
pub struct ElicitationForm {
    request: ElicitationRequest,
    fields: Vec<Field>,
    values: Vec<FieldValue>,
    selected: usize,
    /// Why the last Enter did not send.
    problem: Option<String>,
    reply: Option<oneshot::Sender<ElicitationAnswer>>,
}

impl ElicitationForm {
    /// The form for `pending`; a schema a form cannot take is declined at once (`Err`, with
    /// the reason for the transcript).
    pub fn new(pending: PendingElicitation) -> Result<ElicitationForm, String> {
        let PendingElicitation { request, reply } = pending;
        let fields = match fields_of(&request.schema) {
            Ok(fields) => fields,
            Err(reason) => {
                let _ = reply.send(ElicitationAnswer::Decline);
                return Err(format!(
                    "The MCP server {} asked for a form cairn cannot show ({reason}); declined",
                    request.server
                ));
            }
        };
        let values = fields.iter().map(initial_value).collect();
        Ok(ElicitationForm {
            request,
            fields,
            values,
            selected: 0,
            problem: None,
            reply: Some(reply),
        })
    }

    /// The answer as it stands: each filled field in its type.
    fn content(&self) -> Result<Map<String, Value>, String> {
        let mut content = Map::new();
        for (field, value) in self.fields.iter().zip(&self.values) {
            let value = match (value, &field.kind) {
                (FieldValue::Text(text), _) if text.is_empty() => continue,
                (FieldValue::Text(text), FieldKind::Number { integer }) => {
                    let parsed = if *integer {
                        text.trim().parse::<i64>().ok().map(Value::from)
                    } else {
                        text.trim().parse::<f64>().ok().map(Value::from)
                    };
                    parsed.ok_or_else(|| {
                        format!(
                            "`{}` must be {}",
                            field.name,
                            if *integer {
                                "a whole number"
                            } else {
                                "a number"
                            }
                        )
                    })?
                }
                (FieldValue::Text(text), _) => Value::String(text.clone()),
                (FieldValue::Flag(None) | FieldValue::Pick(None), _) => continue,
                (FieldValue::Flag(Some(flag)), _) => Value::Bool(*flag),
                (FieldValue::Pick(Some(index)), FieldKind::Enum { values, .. }) => {
                    Value::String(values.get(*index).cloned().unwrap_or_default())
                }
                (FieldValue::Pick(Some(_)), _) => continue,
            };
            content.insert(field.name.clone(), value);
        }
        validate(&self.request.schema, &content)?;
        Ok(content)
    }

    /// Handles one key; `true` once the form is answered (and its answer sent).
    pub fn handle_key(&mut self, key: KeyEvent) -> bool {
        if key.kind == KeyEventKind::Release {
            return false;
        }
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        let count = self.fields.len();
        match key.code {
            KeyCode::Char('c') if control => return self.answer(ElicitationAnswer::Cancel),
            KeyCode::Esc => return self.answer(ElicitationAnswer::Decline),
            KeyCode::Enter => match self.content() {
                Ok(content) => return self.answer(ElicitationAnswer::Accept(content)),
                Err(problem) => self.problem = Some(problem),
            },
            KeyCode::Up | KeyCode::BackTab if count > 0 => {
                self.selected = (self.selected + count - 1) % count;
            }
            KeyCode::Down | KeyCode::Tab if count > 0 => {
                self.selected = (self.selected + 1) % count;
            }
            code => self.edit(code),
        }
        false
    }

    fn edit(&mut self, code: KeyCode) {
        let (Some(field), Some(value)) = (
            self.fields.get(self.selected),
            self.values.get_mut(self.selected),
        ) else {
            return;
        };
        match (value, code) {
            (FieldValue::Text(text), KeyCode::Char(c)) => text.push(c),
            (FieldValue::Text(text), KeyCode::Backspace) => {
                text.pop();
            }
            (FieldValue::Flag(flag), KeyCode::Char(' ') | KeyCode::Left | KeyCode::Right) => {
                *flag = Some(!flag.unwrap_or(false));
            }
            (FieldValue::Pick(pick), KeyCode::Char(' ') | KeyCode::Right) => {
                let count = choices(field);
                *pick = Some(pick.map_or(0, |index| (index + 1) % count.max(1)));
            }
            (FieldValue::Pick(pick), KeyCode::Left) => {
                let count = choices(field).max(1);
                *pick = Some(pick.map_or(count - 1, |index| (index + count - 1) % count));
            }
            _ => return,
        }
        self.problem = None;
    }

    fn answer(&mut self, answer: ElicitationAnswer) -> bool {
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(answer);
        }
        true
    }

    /// The rows the form needs at `width`, borders included.
    pub fn height(&self, width: u16, theme: &Theme) -> u16 {
        choice::height(self, width, theme)
    }

    /// Draws the form into `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        choice::render(self, area, buf, theme);
    }
}

impl Drop for ElicitationForm {
    /// A form the app drops unanswered (it closed) declines.
    fn drop(&mut self) {
        self.answer(ElicitationAnswer::Decline);
    }
}

fn choices(field: &Field) -> usize {
    match &field.kind {
        FieldKind::Enum { values, .. } => values.len(),
        _ => 0,
    }
}

fn initial_value(field: &Field) -> FieldValue {
    let default = field.default.as_ref();
    match &field.kind {
        FieldKind::Boolean => FieldValue::Flag(default.and_then(Value::as_bool)),
        FieldKind::Enum { values, .. } => FieldValue::Pick(
            default
                .and_then(Value::as_str)
                .and_then(|default| values.iter().position(|value| value == default)),
        ),
        FieldKind::String | FieldKind::Number { .. } => FieldValue::Text(match default {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Number(number)) => number.to_string(),
            _ => String::new(),
        }),
    }
}

impl ChoiceDialog for ElicitationForm {
    fn layout(&self, width: u16, theme: &Theme) -> ChoiceBox {
        let columns = usize::from(width);
        let options = self
            .fields
            .iter()
            .zip(&self.values)
            .map(|(field, value)| {
                let shown = match (value, &field.kind) {
                    (FieldValue::Text(text), _) => sanitize(text),
                    (FieldValue::Flag(flag), _) => match flag {
                        Some(true) => "yes".to_string(),
                        Some(false) => "no".to_string(),
                        None => "(not set)".to_string(),
                    },
                    (FieldValue::Pick(Some(index)), FieldKind::Enum { titles, .. }) => {
                        format!("‹ {} ›", titles.get(*index).cloned().unwrap_or_default())
                    }
                    (FieldValue::Pick(_), FieldKind::Enum { titles, .. }) => {
                        format!("‹ choose: {} ›", titles.join(" / "))
                    }
                    (FieldValue::Pick(_), _) => String::new(),
                };
                let mark = if field.required { " *" } else { "" };
                let about = field
                    .description
                    .as_deref()
                    .map(|text| format!("  ({})", sanitize(text)))
                    .unwrap_or_default();
                OptionLabel::plain(format!("{}{mark}: {shown}{about}", sanitize(&field.title)))
            })
            .collect();
        let mut below = Vec::new();
        if let Some(problem) = &self.problem {
            below.push(Line::default());
            below.extend(wrapped(
                problem.clone(),
                theme.error,
                columns,
                &Prefix::none(),
            ));
        }
        ChoiceBox {
            title: "An MCP server asks",
            body: wrapped(
                format!("{} says:", sanitize(&self.request.server)),
                theme.dim,
                columns,
                &Prefix::none(),
            ),
            overflow: Overflow::Cut,
            question: wrapped(
                sanitize(&self.request.message),
                Style::new(),
                columns,
                &Prefix::none(),
            )
            .into_iter()
            .chain(std::iter::once(Line::from(Span::styled(
                "* required",
                theme.dim,
            ))))
            .collect(),
            options,
            selected: self.selected,
            below,
            hint: "↑↓ field · type, space or ←→ to change · enter to send · esc to decline",
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test should fail loudly")]
    use pretty_assertions::assert_eq;
    use ratatui::crossterm::event::KeyModifiers;
    use serde_json::json;

    use super::*;
    use crate::choice::plain_rows as rows;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn form() -> (ElicitationForm, oneshot::Receiver<ElicitationAnswer>) {
        let (reply, answer) = oneshot::channel();
        let form = ElicitationForm::new(PendingElicitation {
            request: ElicitationRequest {
                server: "tracker".into(),
                message: "Which ticket?".into(),
                schema: json!({
                    "type": "object",
                    "properties": {
                        "id": {"type": "integer", "title": "Ticket"},
                        "note": {"type": "string", "default": "none"},
                        "urgent": {"type": "boolean", "default": false},
                        "state": {"type": "string", "enum": ["open", "closed"], "default": "open"}
                    },
                    "required": ["id"]
                }),
            },
            reply,
        })
        .unwrap();
        (form, answer)
    }

    #[test]
    fn the_form_shows_the_server_its_message_and_each_field_with_its_default() {
        let (form, _answer) = form();
        let shown = rows(&form, 70, 20).join("\n");
        for expected in [
            "tracker says:",
            "Which ticket?",
            "Ticket *: ",
            "note: none",
            "state: ‹ open ›",
            "urgent: no",
        ] {
            assert!(shown.contains(expected), "{expected:?} in\n{shown}");
        }
    }

    #[test]
    fn enter_sends_only_an_answer_that_fits_the_schema() {
        let (mut form, mut answer) = form();
        // The required ticket is empty: Enter says so and sends nothing.
        assert!(!form.handle_key(key(KeyCode::Enter)));
        assert!(rows(&form, 70, 20).join("\n").contains("`id` is required"));
        assert!(answer.try_recv().is_err());
        form.handle_key(key(KeyCode::Char('x')));
        assert!(!form.handle_key(key(KeyCode::Enter)));
        assert!(
            rows(&form, 70, 20)
                .join("\n")
                .contains("`id` must be a whole number")
        );
        form.handle_key(key(KeyCode::Backspace));
        for c in "42".chars() {
            form.handle_key(key(KeyCode::Char(c)));
        }
        // Down to `state` (by name: id, note, state, urgent), to the next value; on to `urgent`.
        form.handle_key(key(KeyCode::Down));
        form.handle_key(key(KeyCode::Down));
        form.handle_key(key(KeyCode::Right));
        form.handle_key(key(KeyCode::Tab));
        form.handle_key(key(KeyCode::Char(' ')));
        assert!(form.handle_key(key(KeyCode::Enter)));
        assert_eq!(
            answer.try_recv().unwrap(),
            ElicitationAnswer::Accept(
                json!({"id": 42, "note": "none", "state": "closed", "urgent": true})
                    .as_object()
                    .cloned()
                    .unwrap()
            )
        );
    }

    #[test]
    fn esc_declines_and_ctrl_c_cancels() {
        let (mut form, mut answer) = form();
        assert!(form.handle_key(key(KeyCode::Esc)));
        assert_eq!(answer.try_recv().unwrap(), ElicitationAnswer::Decline);
        let (mut form, mut answer) = self::form();
        assert!(form.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)));
        assert_eq!(answer.try_recv().unwrap(), ElicitationAnswer::Cancel);
    }

    #[test]
    fn a_schema_a_form_cannot_take_is_declined_with_the_reason() {
        let (reply, mut answer) = oneshot::channel();
        let refused = ElicitationForm::new(PendingElicitation {
            request: ElicitationRequest {
                server: "s".into(),
                message: "m".into(),
                schema: json!({"properties": {"tags": {"type": "array"}}}),
            },
            reply,
        });
        assert_eq!(
            refused.err().unwrap(),
            "The MCP server s asked for a form cairn cannot show (property `tags`: type \
             `array` is not one a form takes); declined"
        );
        assert_eq!(answer.try_recv().unwrap(), ElicitationAnswer::Decline);
    }
}
