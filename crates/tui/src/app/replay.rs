//! A resumed conversation shown again: the earlier messages become transcript cells, as if
//! the engine were reporting them now, so the user sees where they left off.

use std::collections::HashMap;

use cairn_protocol::{AgentEvent, ContentBlock, Message, Role, TurnEnd, TurnSummary, Usage};

use crate::Transcript;

/// How many of the last messages are shown; earlier ones are counted, not drawn (a long
/// session would otherwise take its whole length to scroll past).
pub const SHOWN_MESSAGES: usize = 60;

/// Feeds `messages` to `transcript`, starting at a message the user typed so no tool result
/// is shown without its call. Returns how many earlier messages were left out.
pub fn replay(transcript: &mut Transcript, messages: &[Message]) -> usize {
    let mut start = messages.len().saturating_sub(SHOWN_MESSAGES);
    while start > 0 && start < messages.len() && !is_typed(&messages[start]) {
        start -= 1;
    }
    replay_all(transcript, &messages[start..]);
    start
}

/// Feeds every one of `messages` to `transcript` (for the transcript view, which shows what
/// [`replay`] left out).
pub fn replay_all(transcript: &mut Transcript, messages: &[Message]) {
    let mut names: HashMap<&str, &str> = HashMap::new();
    // A prompt followed by another prompt, or by nothing, got no answer: its turn was
    // interrupted or failed before the model said anything (the transcript keeps no more).
    let mut unanswered = false;
    for message in messages {
        match message.role {
            Role::Assistant => {
                unanswered = false;
                for block in &message.content {
                    if let ContentBlock::ToolUse { id, name, .. } = block {
                        names.insert(id, name);
                    }
                }
                transcript.apply(&AgentEvent::AssistantMessage {
                    message: message.clone(),
                    id: String::new(),
                    model: String::new(),
                    stop_reason: None,
                    usage: Usage::default(),
                    cost_usd: 0.0,
                });
            }
            // An answer interrupted while it streamed: the note says so, as a live turn would.
            Role::User if message.text() == cairn_core::INTERRUPTED_NOTE => {
                transcript.push_warning("Interrupted by user");
                unanswered = false;
            }
            // A compaction's opening is shown as its boundary; nothing answers it.
            Role::User if crate::transcript::is_opening(message) => {
                transcript.apply(&AgentEvent::UserMessage {
                    message: message.clone(),
                });
                unanswered = false;
            }
            Role::User if is_typed(message) => {
                if unanswered {
                    transcript.push_warning(NO_ANSWER);
                }
                transcript.apply(&AgentEvent::UserMessage {
                    message: message.clone(),
                });
                unanswered = true;
            }
            Role::User => {
                for block in &message.content {
                    if let ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } = block
                    {
                        transcript.apply(&AgentEvent::ToolCallResult {
                            id: tool_use_id.clone(),
                            name: names
                                .get(tool_use_id.as_str())
                                .unwrap_or(&"tool")
                                .to_string(),
                            content: content.clone(),
                            is_error: *is_error,
                        });
                    }
                }
            }
        }
    }
    if unanswered {
        transcript.push_warning(NO_ANSWER);
    }
    // Whatever is left open (a call the session ended before answering) is closed as it stands.
    transcript.apply(&AgentEvent::TurnFinished(TurnSummary {
        op_id: String::new(),
        end: TurnEnd::Completed,
        result: String::new(),
        requests: 0,
        usage: Usage::default(),
        cost_usd: 0.0,
        cost_unknown: false,
        duration_api_ms: 0,
    }));
}

/// Said under a prompt that got no answer.
const NO_ANSWER: &str = "No answer: this turn was interrupted or failed.";

/// A user message the user wrote (text or images), not one carrying tool results.
fn is_typed(message: &Message) -> bool {
    message.role == Role::User
        && !message
            .content
            .iter()
            .any(|block| matches!(block, ContentBlock::ToolResult { .. }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Theme;
    use serde_json::json;

    fn conversation() -> Vec<Message> {
        serde_json::from_value(json!([
            {"role": "user", "content": "What is in notes.txt?"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/w/notes.txt"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "1\tbuy milk\n"}
            ]},
            {"role": "assistant", "content": [{"type": "text", "text": "It says **buy milk**."}]}
        ]))
        .unwrap()
    }

    fn rendered(transcript: &Transcript) -> String {
        transcript
            .render_finished(60, &Theme::plain())
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_resumed_conversation_reads_as_it_did() {
        let mut transcript = Transcript::new();
        assert_eq!(replay(&mut transcript, &conversation()), 0);
        let text = rendered(&transcript);
        let order = [
            "> What is in notes.txt?",
            "Let me look.",
            "Read",
            "buy milk.",
        ];
        let mut from = 0;
        for part in order {
            let at = text[from..]
                .find(part)
                .unwrap_or_else(|| panic!("{part:?} missing after byte {from} in:\n{text}"));
            from += at + part.len();
        }
        assert!(
            !text.contains("No result"),
            "the call has its result:\n{text}"
        );
        assert!(!transcript.is_busy());
    }

    #[test]
    fn a_prompt_without_an_answer_says_so() {
        let mut messages: Vec<Message> = serde_json::from_value(json!([
            {"role": "user", "content": "interrupted question"},
            {"role": "user", "content": "next question"},
            {"role": "assistant", "content": [{"type": "text", "text": "An answer."}]},
            {"role": "user", "content": "last question"}
        ]))
        .unwrap();
        let mut transcript = Transcript::new();
        replay(&mut transcript, &messages);
        let text = rendered(&transcript);
        assert_eq!(text.matches(NO_ANSWER).count(), 2, "{text}");
        let first = text.find("interrupted question").unwrap();
        let note = text.find(NO_ANSWER).unwrap();
        let next = text.find("next question").unwrap();
        assert!(first < note && note < next, "{text}");

        messages.truncate(3);
        let mut transcript = Transcript::new();
        replay(&mut transcript, &messages);
        assert_eq!(rendered(&transcript).matches(NO_ANSWER).count(), 1);
    }

    #[test]
    fn a_compacted_conversation_opens_with_its_boundary() {
        let mut messages: Vec<Message> = serde_json::from_value(json!([
            {"role": "user", "content": [
                {"type": "text", "text": format!(
                    "{}Renamed the parser.",
                    cairn_context::pipeline::autocompact::SUMMARY_PREAMBLE
                )},
                {"type": "text", "text": "[The user's message, verbatim from before compaction]\nrename it"}
            ]}
        ]))
        .unwrap();
        messages.extend(conversation());
        let mut transcript = Transcript::new();
        replay(&mut transcript, &messages);
        let text = rendered(&transcript);
        assert!(
            text.starts_with(
                "✻ Conversation compacted · Ctrl+O to read the summary\n\n> What is in notes.txt?"
            ),
            "{text}"
        );
        assert!(!text.contains("being continued"), "{text}");
        assert!(!text.contains(NO_ANSWER), "{text}");
    }

    #[test]
    fn a_long_conversation_shows_its_end_from_a_typed_message() {
        let mut messages = Vec::new();
        for _ in 0..40 {
            messages.extend(conversation());
        }
        let mut transcript = Transcript::new();
        let skipped = replay(&mut transcript, &messages);
        assert!(skipped > 0 && skipped <= messages.len() - SHOWN_MESSAGES);
        assert!(is_typed(&messages[skipped]));
        let text = rendered(&transcript);
        assert!(text.starts_with("> What is in notes.txt?"), "{text}");
    }
}
