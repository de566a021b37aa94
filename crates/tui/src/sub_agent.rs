//! A sub-agent's progress under its `Agent` call's cell: while it runs, the tool it is using
//! and what it has cost so far (requests, tokens, dollars, seconds); once it ends, one summary
//! line. Fed from the sub-agent's own events, which carry the `Agent` call's id as their
//! parent ([`cairn_protocol::AgentAddress::parent_tool_use_id`]).

use std::path::Path;
use std::time::{Duration, Instant};

use cairn_protocol::{AgentEvent, Usage};
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::ModelFacts;
use crate::theme::Theme;
use crate::tool_cell::shown_argument;
use crate::wrap::{sanitize, truncate};

/// What a running or finished sub-agent has done so far.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SubAgentProgress {
    started: Instant,
    /// How long it ran, once its turn finished.
    ran_for: Option<Duration>,
    requests: u32,
    usage: Usage,
    /// `None` once a request went to a model of unknown prices.
    cost_usd: Option<f64>,
    tool_uses: u32,
    /// The tool call it started last.
    current: Option<Activity>,
}

/// One of the sub-agent's tool calls, as its progress shows it.
#[derive(Debug, Clone, PartialEq)]
struct Activity {
    id: String,
    name: String,
    input: Option<Value>,
    done: bool,
}

impl SubAgentProgress {
    /// A sub-agent whose first event arrives now.
    pub(crate) fn starting_now() -> SubAgentProgress {
        SubAgentProgress {
            started: Instant::now(),
            ran_for: None,
            requests: 0,
            usage: Usage::default(),
            cost_usd: Some(0.0),
            tool_uses: 0,
            current: None,
        }
    }

    /// Follows one of the sub-agent's events: its answers' usage and cost (priced by
    /// `facts`, what the run's provider knows), its tool calls, the end of its turn.
    pub(crate) fn apply(&mut self, event: &AgentEvent, facts: &ModelFacts) {
        match event {
            AgentEvent::AssistantMessage { usage, model, .. } => {
                self.requests += 1;
                self.usage += *usage;
                let cost = facts.info(model).cost_usd(usage);
                self.cost_usd = self.cost_usd.zip(cost).map(|(sum, one)| sum + one);
            }
            AgentEvent::ToolCallStarted { id, name } => self.start_tool(id, name, None),
            AgentEvent::ToolCallInputComplete { id, name, input } => match &mut self.current {
                Some(current) if current.id == *id => current.input = Some(input.clone()),
                _ => self.start_tool(id, name, Some(input.clone())),
            },
            AgentEvent::ToolCallResult { id, .. } => {
                if let Some(current) = self.current.as_mut().filter(|current| current.id == *id) {
                    current.done = true;
                }
            }
            AgentEvent::SideRequests(side) => {
                self.requests += side.requests;
                self.usage += side.usage;
                self.cost_usd = self.cost_usd.zip(side.cost_usd).map(|(sum, one)| sum + one);
            }
            AgentEvent::TurnFinished(_) => self.ran_for = Some(self.started.elapsed()),
            AgentEvent::UserMessage { .. }
            | AgentEvent::TextDelta { .. }
            | AgentEvent::ThinkingDelta { .. }
            | AgentEvent::ToolResultsMessage { .. }
            | AgentEvent::Retrying(_)
            | AgentEvent::PermissionRequested { .. }
            | AgentEvent::PermissionDecided(_)
            | AgentEvent::TodosChanged { .. }
            | AgentEvent::ModelChanged { .. }
            | AgentEvent::PermissionModeChanged { .. }
            | AgentEvent::Warning { .. }
            | AgentEvent::Debug { .. }
            | AgentEvent::Compacted(_) => {}
        }
    }

    fn start_tool(&mut self, id: &str, name: &str, input: Option<Value>) {
        self.tool_uses += 1;
        self.current = Some(Activity {
            id: id.to_string(),
            name: name.to_string(),
            input,
            done: false,
        });
    }

    /// Whether its turn has finished.
    pub(crate) fn has_ended(&self) -> bool {
        self.ran_for.is_some()
    }

    fn elapsed(&self) -> Duration {
        self.ran_for.unwrap_or_else(|| self.started.elapsed())
    }

    /// `2 requests · 3 tool uses · 23k tokens · $0.0123 · 4s`: what it has cost so far, or in
    /// all once it ended (then with tenths of a second).
    pub(crate) fn figures(&self) -> String {
        let tokens = self.usage.input_total() + self.usage.output_tokens;
        let mut parts = vec![
            plural(u64::from(self.requests), "request"),
            plural(u64::from(self.tool_uses), "tool use"),
            format!("{} tokens", compact_count(tokens)),
            match self.cost_usd {
                Some(cost) => format!("${cost:.4}"),
                None => "cost unknown".to_string(),
            },
        ];
        let elapsed = self.elapsed();
        parts.push(match self.ran_for {
            Some(_) => format!("{:.1}s", elapsed.as_secs_f64()),
            None => format!("{}s", elapsed.as_secs()),
        });
        parts.join(" · ")
    }

    /// The lines under a running sub-agent's cell: the tool it is using (or used last), then
    /// its figures so far.
    pub(crate) fn running_lines(
        &self,
        width: usize,
        theme: &Theme,
        cwd: Option<&Path>,
    ) -> Vec<Line<'static>> {
        let activity = match &self.current {
            None => Line::from(Span::styled("Starting…", theme.dim)),
            Some(current) => {
                let name = sanitize(&current.name);
                let argument = current
                    .input
                    .as_ref()
                    .and_then(|input| shown_argument(&current.name, input, cwd));
                let text = match argument {
                    Some(argument) => format!("{name}({})", sanitize(&argument)),
                    None => name,
                };
                let style = if current.done {
                    theme.dim
                } else {
                    theme.tool_name
                };
                Line::from(Span::styled(truncate(&text, width), style))
            }
        };
        let figures = Line::from(Span::styled(truncate(&self.figures(), width), theme.dim));
        vec![activity, figures]
    }

    /// The line a finished sub-agent's cell shows: `Done (…figures…)`.
    pub(crate) fn summary(&self) -> String {
        format!("Done ({})", self.figures())
    }
}

fn plural(count: u64, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// `950`, `2.3k`, `23k`: a count of tokens as the spinner shows it.
pub(crate) fn compact_count(count: u64) -> String {
    match count {
        0..1_000 => count.to_string(),
        1_000..10_000 => format!("{:.1}k", count as f64 / 1000.0),
        _ => format!("{}k", count / 1000),
    }
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{ContentBlock, Message, Role, ToolResultContent, TurnEnd, TurnSummary};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    /// The model table's facts, as a run on the Anthropic API reports them.
    fn facts() -> ModelFacts {
        ModelFacts::new(cairn_llm::registry::lookup)
    }

    fn answer(input_tokens: u64, output_tokens: u64) -> AgentEvent {
        AgentEvent::AssistantMessage {
            message: Message {
                role: Role::Assistant,
                content: vec![ContentBlock::text("…")],
            },
            id: "msg_1".into(),
            model: "claude-sonnet-4-5".into(),
            stop_reason: None,
            usage: Usage {
                input_tokens,
                output_tokens,
                ..Usage::default()
            },
            cost_usd: 0.0,
        }
    }

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|line| line.to_string()).collect()
    }

    #[test]
    fn a_running_sub_agent_shows_its_tool_and_figures_then_one_summary() {
        let mut progress = SubAgentProgress::starting_now();
        assert_eq!(
            texts(&progress.running_lines(80, &Theme::plain(), Some(Path::new("/work"))))[0],
            "Starting…"
        );
        progress.apply(&answer(2_000, 300), &facts());
        progress.apply(
            &AgentEvent::ToolCallStarted {
                id: "toolu_read".into(),
                name: "Read".into(),
            },
            &facts(),
        );
        progress.apply(
            &AgentEvent::ToolCallInputComplete {
                id: "toolu_read".into(),
                name: "Read".into(),
                input: json!({"file_path": "/work/src/lib.rs"}),
            },
            &facts(),
        );
        let lines = texts(&progress.running_lines(80, &Theme::plain(), Some(Path::new("/work"))));
        assert_eq!(lines[0], "Read(src/lib.rs)");
        // Sonnet: $3 per million input tokens, $15 per million output tokens.
        assert!(
            lines[1].starts_with("1 request · 1 tool use · 2.3k tokens · $0.0105 · "),
            "{lines:?}"
        );
        progress.apply(
            &AgentEvent::ToolCallResult {
                id: "toolu_read".into(),
                name: "Read".into(),
                content: ToolResultContent::Text("1\tfn main() {}".into()),
                is_error: false,
            },
            &facts(),
        );
        progress.apply(&answer(3_000, 20_000), &facts());
        assert!(!progress.has_ended());
        progress.apply(
            &AgentEvent::TurnFinished(TurnSummary {
                op_id: String::new(),
                end: TurnEnd::Completed,
                result: "Found it.".into(),
                requests: 2,
                usage: Usage::default(),
                cost_usd: 0.0,
                cost_unknown: false,
                duration_api_ms: 0,
            }),
            &facts(),
        );
        assert!(progress.has_ended());
        let summary = progress.summary();
        assert!(
            summary.starts_with("Done (2 requests · 1 tool use · 25k tokens · $0.3195 · "),
            "{summary}"
        );
        assert!(summary.ends_with("s)"), "{summary}");
    }

    #[test]
    fn a_model_of_unknown_prices_makes_the_cost_unknown() {
        let mut progress = SubAgentProgress::starting_now();
        progress.apply(
            &AgentEvent::AssistantMessage {
                message: Message {
                    role: Role::Assistant,
                    content: vec![ContentBlock::text("…")],
                },
                id: "msg_1".into(),
                model: "some-local-model".into(),
                stop_reason: None,
                usage: Usage {
                    input_tokens: 10,
                    output_tokens: 5,
                    ..Usage::default()
                },
                cost_usd: 0.0,
            },
            &facts(),
        );
        assert!(
            progress
                .figures()
                .starts_with("1 request · 0 tool uses · 15 tokens · cost unknown · "),
            "{}",
            progress.figures()
        );
    }

    #[test]
    fn counts_read_compactly() {
        assert_eq!(
            [950, 2_345, 23_456].map(compact_count),
            ["950", "2.3k", "23k"]
        );
    }
}
