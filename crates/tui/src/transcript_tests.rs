//! Tests of [`super::Transcript`]: retries, unstreamed messages, interrupted turns.

use cairn_protocol::{Role, TurnSummary, Usage};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(|line| line.to_string()).collect()
}

fn finished(end: TurnEnd) -> AgentEvent {
    AgentEvent::TurnFinished(TurnSummary {
        end,
        result: String::new(),
        num_turns: 1,
        usage: Usage::default(),
        cost_usd: 0.0,
        duration_api_ms: 0,
    })
}

fn message_done(message: Message) -> AgentEvent {
    AgentEvent::AssistantMessage {
        message,
        id: "msg".into(),
        model: "m".into(),
        stop_reason: None,
        usage: Usage::default(),
        cost_usd: 0.0,
    }
}

#[test]
fn a_retry_that_discards_the_partial_answer_drops_it() {
    let mut transcript = Transcript::new();
    let theme = Theme::plain();
    transcript.apply(&AgentEvent::ThinkingDelta { text: "hmm".into() });
    transcript.apply(&AgentEvent::TextDelta {
        text: "Half an ans".into(),
    });
    transcript.apply(&AgentEvent::Retrying(RetryNotice {
        attempt: 2,
        max_attempts: 5,
        delay_ms: 1500,
        reason: "overloaded".into(),
        discard_partial: true,
    }));
    assert_eq!(
        texts(&transcript.render_live(60, &theme)),
        vec!["⟳ overloaded — retrying in 1.5s (attempt 2 of 5)"]
    );
    transcript.apply(&AgentEvent::TextDelta {
        text: "A whole answer".into(),
    });
    transcript.apply(&message_done(Message::user_text("")));
    assert_eq!(
        texts(&transcript.render_finished(60, &theme)),
        vec!["● A whole answer", ""]
    );
}

#[test]
fn a_message_that_was_not_streamed_is_shown_whole() {
    let mut transcript = Transcript::new();
    transcript.apply(&message_done(Message {
        role: Role::Assistant,
        content: vec![
            ContentBlock::text("Listing."),
            ContentBlock::ToolUse {
                id: "t1".into(),
                name: "LS".into(),
                input: json!({"path": "/repo"}),
            },
        ],
    }));
    let theme = Theme::plain();
    assert_eq!(
        texts(&transcript.render_finished(60, &theme)),
        vec!["● Listing.", ""]
    );
    assert_eq!(
        texts(&transcript.render_live(60, &theme)),
        vec!["● LS(/repo)", "  ⎿ Running…"]
    );
}

#[test]
fn an_interrupted_turn_finishes_its_running_tools() {
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::ToolCallInputComplete {
        id: "t1".into(),
        name: "Bash".into(),
        input: json!({"command": "sleep 100"}),
    });
    transcript.apply(&finished(TurnEnd::Interrupted));
    assert!(!transcript.is_busy());
    assert_eq!(
        texts(&transcript.take_unflushed(60, &Theme::plain())),
        vec![
            "● Bash(sleep 100)",
            "  ⎿ Interrupted",
            "",
            "⚠ Interrupted by user",
            ""
        ]
    );
    assert!(transcript.take_unflushed(60, &Theme::plain()).is_empty());
}

#[test]
fn images_in_a_prompt_are_named() {
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::UserMessage {
        message: Message {
            role: Role::User,
            content: vec![
                ContentBlock::text("What is this?"),
                ContentBlock::Image {
                    source: cairn_protocol::ImageSource::Url {
                        url: "https://x.dev/a.png".into(),
                    },
                },
            ],
        },
    });
    assert_eq!(
        texts(&transcript.render_finished(60, &Theme::plain())),
        vec!["> What is this?", "  [image]", ""]
    );
}

#[test]
fn a_long_streaming_message_shows_the_same_last_lines_as_the_whole() {
    let theme = Theme::plain();
    let paragraph = "words of a long answer that wraps over several lines ".repeat(20);
    let mut text = String::new();
    while text.len() < 3 * LIVE_TAIL_BYTES {
        text.push_str(&paragraph);
        text.push_str("\n\n");
    }
    // A code block the tail's cut falls inside, still open at the end.
    text.push_str("```rust\n");
    for n in 0..4000 {
        text.push_str(&format!("let x{n} = {n};\n\n"));
    }
    let whole = texts(&Transcript::new().render_cell(&Cell::Assistant(text.clone()), 60, &theme));
    let mut transcript = Transcript::new();
    transcript.apply(&AgentEvent::TextDelta { text });
    let live = texts(&transcript.render_live(60, &theme));
    assert!(live.len() > 100, "the tail covers many viewports");
    assert_eq!(live[live.len() - 100..], whole[whole.len() - 100..]);
}
