//! The status line under the input: model, permission mode, how full the context is, and what
//! the session has cost so far.

use std::sync::Arc;

use cairn_llm::ModelInfo;
use cairn_protocol::{AgentEvent, TurnSummary};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::status_command::{SessionState, StatusCommand};
use crate::theme::Theme;
use crate::truncate;

/// Context use from which the figure turns to a warning, and to an error.
const CONTEXT_WARN_PERCENT: u64 = 80;
const CONTEXT_FULL_PERCENT: u64 = 95;

/// What the session's provider knows of a model (window, prices): the status line's "%
/// context", `/context` and the cost of a sub-agent's request read it here, from the client the
/// session's requests go through, so every provider's models (and the settings' overrides,
/// and a window a server reported) count, with no table of the UI's own.
#[derive(Clone)]
pub struct ModelFacts(Arc<dyn Fn(&str) -> ModelInfo + Send + Sync>);

impl ModelFacts {
    /// Facts as `info` answers them.
    pub fn new(info: impl Fn(&str) -> ModelInfo + Send + Sync + 'static) -> ModelFacts {
        ModelFacts(Arc::new(info))
    }

    /// What is known of `model`.
    pub fn info(&self, model: &str) -> ModelInfo {
        (self.0)(model)
    }

    /// `model`'s context window, when known.
    pub fn window(&self, model: &str) -> Option<u64> {
        self.info(model).context_window
    }
}

impl std::fmt::Debug for ModelFacts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ModelFacts")
    }
}

/// What the status line shows; [`StatusLine::apply`] keeps it up to date from the events.
///
/// ```
/// use cairn_tui::{StatusLine, Theme};
///
/// let mut status = StatusLine::new("claude-sonnet-4-5", "default");
/// status.context_window = Some(200_000);
/// status.context_tokens = 50_000;
/// status.cost_usd = 0.0123;
/// assert_eq!(
///     status.line(80, &Theme::plain()).to_string(),
///     "claude-sonnet-4-5 · default · 25% context · $0.0123"
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct StatusLine {
    /// The id of the model requests go to now (a `ModelChanged` event changes it); shown first.
    pub model: String,
    /// The permission mode as settings spell it: `default`, `acceptEdits`, `plan`,
    /// `bypassPermissions`, `dontAsk`.
    pub permission_mode: String,
    /// Tokens the conversation took in the last request.
    pub context_tokens: u64,
    /// The model's context window, when known.
    pub context_window: Option<u64>,
    /// What the session's requests have cost so far, in US dollars.
    pub cost_usd: f64,
    /// Some request went to a model whose prices cairn does not know: `cost_usd` counts only
    /// the others, and the line says so rather than show a cost that is too low.
    pub cost_unknown: bool,
    /// The `statusLine` command, whose line shows instead of this one once it has printed.
    pub command: Option<StatusCommand>,
    /// Thinking is on for the next request (Tab toggles it): the line says `thinking`.
    pub thinking: bool,
}

impl StatusLine {
    /// The line at a session's start: no tokens, no cost, the context window unknown until
    /// the caller sets it, and no `statusLine` command.
    pub fn new(model: impl Into<String>, permission_mode: impl Into<String>) -> StatusLine {
        StatusLine {
            model: model.into(),
            permission_mode: permission_mode.into(),
            context_tokens: 0,
            context_window: None,
            cost_usd: 0.0,
            cost_unknown: false,
            command: None,
            thinking: false,
        }
    }

    /// Shows `command`'s line instead of this one from its first run on, telling it the
    /// session's state now and whenever it changes.
    pub fn show_command(&mut self, command: StatusCommand) {
        self.command = Some(command);
        self.tell_command();
    }

    fn tell_command(&self) {
        if let Some(command) = &self.command {
            command.update(&SessionState {
                model: self.model.clone(),
                cost_usd: self.cost_usd,
            });
        }
    }

    /// The session's cost as the line shows it: never a figure that leaves out requests to a
    /// model of unknown prices without saying so.
    pub fn cost_text(&self) -> String {
        match (self.cost_unknown, self.cost_usd > 0.0) {
            (false, _) => format!("${:.4}", self.cost_usd),
            (true, true) => format!("${:.4} + unknown", self.cost_usd),
            (true, false) => "cost unknown".to_owned(),
        }
    }

    /// Follows the model, the permission mode, the context the last request used, and the
    /// cost.
    pub fn apply(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::ModelChanged { model } => self.model = model.clone(),
            AgentEvent::PermissionModeChanged { mode } => {
                self.permission_mode = mode.as_str().to_owned();
            }
            AgentEvent::AssistantMessage {
                model,
                usage,
                cost_usd,
                ..
            } => {
                if !model.is_empty() {
                    self.model = model.clone();
                }
                self.context_tokens = usage.input_tokens
                    + usage.cache_creation_input_tokens
                    + usage.cache_read_input_tokens
                    + usage.output_tokens;
                self.cost_usd += cost_usd;
            }
            AgentEvent::SideRequests(side) => self.cost_usd += side.cost_usd.unwrap_or(0.0),
            AgentEvent::TurnFinished(TurnSummary {
                cost_unknown: true, ..
            }) => self.cost_unknown = true,
            AgentEvent::UserMessage { .. }
            | AgentEvent::TextDelta { .. }
            | AgentEvent::ThinkingDelta { .. }
            | AgentEvent::ToolCallStarted { .. }
            | AgentEvent::ToolCallInputComplete { .. }
            | AgentEvent::ToolCallResult { .. }
            | AgentEvent::ToolResultsMessage { .. }
            | AgentEvent::Retrying(_)
            | AgentEvent::PermissionRequested { .. }
            | AgentEvent::PermissionDecided(_)
            | AgentEvent::TodosChanged { .. }
            | AgentEvent::Warning { .. }
            | AgentEvent::Debug { .. }
            | AgentEvent::Compacted(_)
            | AgentEvent::TurnFinished(TurnSummary {
                cost_unknown: false,
                ..
            }) => {}
        }
        self.tell_command();
    }

    /// How full the context is, in percent, when the window is known.
    pub fn context_percent(&self) -> Option<u64> {
        let window = self.context_window.filter(|&window| window > 0)?;
        Some((self.context_tokens.saturating_mul(100) / window).min(100))
    }

    /// The status as one line; parts that do not fit at `width` are left out from the end.
    pub fn line(&self, width: u16, theme: &Theme) -> Line<'static> {
        if let Some(text) = self.command.as_ref().and_then(StatusCommand::line) {
            return Line::from(Span::styled(
                truncate(&text, usize::from(width)),
                theme.status,
            ));
        }
        let mode_style = match self.permission_mode.as_str() {
            "bypassPermissions" => theme.error,
            "default" => theme.status,
            _ => theme.status_mode,
        };
        let mut parts = vec![
            Span::styled(self.model.clone(), theme.status),
            Span::styled(self.permission_mode.clone(), mode_style),
        ];
        if self.thinking {
            parts.push(Span::styled("thinking", theme.status_mode));
        }
        if let Some(percent) = self.context_percent() {
            let style = if percent >= CONTEXT_FULL_PERCENT {
                theme.error
            } else if percent >= CONTEXT_WARN_PERCENT {
                theme.warning
            } else {
                theme.status
            };
            parts.push(Span::styled(format!("{percent}% context"), style));
        }
        parts.push(Span::styled(self.cost_text(), theme.status));

        let separator = Span::styled(" · ", theme.status);
        let mut spans: Vec<Span<'static>> = Vec::new();
        let mut used = 0;
        for part in parts {
            let extra = if spans.is_empty() {
                0
            } else {
                separator.width()
            };
            if used + extra + part.width() > usize::from(width) && !spans.is_empty() {
                break;
            }
            if !spans.is_empty() {
                spans.push(separator.clone());
            }
            used += extra + part.width();
            spans.push(part);
        }
        Line::from(spans).style(Style::new())
    }

    /// A widget that draws the status line with `theme`.
    pub fn widget<'a>(&'a self, theme: &'a Theme) -> StatusView<'a> {
        StatusView {
            status: self,
            theme,
        }
    }
}

/// [`StatusLine`] with its theme, as a ratatui widget.
#[derive(Debug, Clone, Copy)]
pub struct StatusView<'a> {
    status: &'a StatusLine,
    theme: &'a Theme,
}

impl Widget for StatusView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.height == 0 {
            return;
        }
        let line = self.status.line(area.width, self.theme);
        buf.set_line(area.x, area.y, &line, area.width);
    }
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{Message, Usage};
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn assistant_messages_add_cost_and_set_context() {
        let mut status = StatusLine::new("m", "plan");
        status.context_window = Some(1000);
        for _ in 0..2 {
            status.apply(&AgentEvent::AssistantMessage {
                message: Message::user_text(""),
                id: "msg".into(),
                model: "m2".into(),
                stop_reason: None,
                usage: Usage {
                    input_tokens: 100,
                    output_tokens: 50,
                    cache_creation_input_tokens: 0,
                    cache_read_input_tokens: 700,
                },
                cost_usd: 0.01,
            });
        }
        assert_eq!(status.model, "m2");
        assert_eq!(status.context_percent(), Some(85));
        assert_eq!(
            status.line(80, &Theme::plain()).to_string(),
            "m2 · plan · 85% context · $0.0200"
        );
    }

    /// While thinking is on the line says so, after the mode.
    #[test]
    fn thinking_shows_after_the_mode() {
        let mut status = StatusLine::new("m", "default");
        status.thinking = true;
        assert_eq!(
            status.line(80, &Theme::plain()).to_string(),
            "m · default · thinking · $0.0000"
        );
        status.thinking = false;
        assert_eq!(
            status.line(80, &Theme::plain()).to_string(),
            "m · default · $0.0000"
        );
    }

    #[test]
    fn a_narrow_line_drops_parts_from_the_end() {
        let status = StatusLine::new("model", "default");
        assert_eq!(
            status.line(16, &Theme::plain()).to_string(),
            "model · default"
        );
    }

    /// A request to a model whose prices cairn does not know makes the cost unknown: never a
    /// figure that silently leaves it out.
    #[test]
    fn a_cost_that_is_partly_unknown_says_so() {
        let finished = |cost_unknown| {
            AgentEvent::TurnFinished(TurnSummary {
                op_id: String::new(),
                end: cairn_protocol::TurnEnd::Completed,
                result: String::new(),
                requests: 1,
                usage: Usage::default(),
                cost_usd: 0.0,
                cost_unknown,
                duration_api_ms: 0,
            })
        };
        let mut status = StatusLine::new("ollama/llama3", "default");
        status.apply(&finished(false));
        assert_eq!(status.cost_text(), "$0.0000");
        status.apply(&finished(true));
        assert_eq!(
            status.line(80, &Theme::plain()).to_string(),
            "ollama/llama3 · default · cost unknown"
        );
        status.cost_usd = 0.5;
        assert_eq!(status.cost_text(), "$0.5000 + unknown");
    }
}
