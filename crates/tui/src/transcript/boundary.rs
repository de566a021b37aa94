//! Where a compaction replaced the conversation with its summary: one line in the
//! scrollback, the summary and what it carried over in the transcript view (Ctrl+O).

use cairn_context::pipeline::autocompact::SUMMARY_PREAMBLE;
use cairn_protocol::{Compaction, ContentBlock, Message};
use ratatui::text::{Line, Span};

use crate::theme::Theme;
use crate::wrap::{Prefix, sanitize, wrap_words};

/// Who asked for a compaction, when it is known: the boundary says manual or automatic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Asked {
    /// The user, with `/compact`.
    Manual,
    /// The context pipeline, near the window (or after the API said it was too long).
    Automatic,
    /// Read back from a resumed session, which keeps only the new opening.
    Unknown,
}

/// A compaction boundary.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Boundary {
    pub(super) asked: Asked,
    /// The estimated tokens before and after, when the compaction was seen happen.
    pub(super) tokens: Option<(u64, u64)>,
    /// The texts the new conversation opens with: the summary, then the files, the todo list
    /// and the user's messages it carried over.
    pub(super) opening: Vec<String>,
}

impl Boundary {
    /// The boundary of a compaction that rewrote the conversation (one with a summary).
    pub(super) fn of(compaction: &Compaction) -> Option<Boundary> {
        let summary = compaction.summary.as_ref()?;
        let opening = match compaction.opening.first() {
            Some(first) => texts(first),
            None => vec![format!("{SUMMARY_PREAMBLE}{summary}")],
        };
        Some(Boundary {
            asked: if compaction.manual {
                Asked::Manual
            } else {
                Asked::Automatic
            },
            tokens: Some((compaction.tokens_before, compaction.tokens_after)),
            opening,
        })
    }

    /// The boundary a resumed conversation's `message` stands for, if it is the opening an
    /// earlier compaction wrote.
    pub(super) fn resumed(message: &Message) -> Option<Boundary> {
        is_opening(message).then(|| Boundary {
            asked: Asked::Unknown,
            tokens: None,
            opening: texts(message),
        })
    }

    /// One line, the figures when known; with `full`, the opening's texts after it.
    pub(super) fn render(&self, full: bool, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        let who = match self.asked {
            Asked::Manual => " (manual)",
            Asked::Automatic => " (automatic)",
            Asked::Unknown => "",
        };
        let figures = self
            .tokens
            .map(|(before, after)| format!(": about {after} tokens, was {before}"))
            .unwrap_or_default();
        let hint = if full {
            ""
        } else {
            " · Ctrl+O to read the summary"
        };
        let header = format!("Conversation compacted{who}{figures}{hint}");
        let mut lines = wrap_words(
            &[Span::styled(header, theme.dim)],
            width,
            &Prefix::hanging(Span::styled("✻ ", theme.dim)),
        );
        if full {
            for text in &self.opening {
                for part in text.trim().lines() {
                    lines.extend(wrap_words(
                        &[Span::styled(sanitize(part), theme.dim)],
                        width,
                        &Prefix::hanging(Span::styled("  ", theme.dim)),
                    ));
                }
            }
        }
        lines
    }
}

/// Whether `message` is the opening a compaction wrote: the summary's preamble first.
pub(crate) fn is_opening(message: &Message) -> bool {
    matches!(
        message.content.first(),
        Some(ContentBlock::Text { text }) if text.starts_with(SUMMARY_PREAMBLE)
    )
}

fn texts(message: &Message) -> Vec<String> {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use cairn_protocol::{AgentEvent, Compaction, ContentBlock, Message, Role};
    use pretty_assertions::assert_eq;

    use super::SUMMARY_PREAMBLE;
    use crate::{Theme, Transcript};

    fn opening() -> Message {
        Message {
            role: Role::User,
            content: vec![
                ContentBlock::text(format!("{SUMMARY_PREAMBLE}The parser was renamed.")),
                ContentBlock::text(
                    "[File /w/parser.rs, edited in this session, as it is on disk now]\nfn parse_all() {}",
                ),
            ],
        }
    }

    fn compacted(manual: bool) -> AgentEvent {
        AgentEvent::Compacted(Compaction {
            step: "autocompact".into(),
            manual,
            tokens_before: 9_252,
            tokens_after: 2_100,
            summary: Some("The parser was renamed.".into()),
            opening: vec![opening()],
            collapsed_through: None,
        })
    }

    fn finished(transcript: &Transcript) -> Vec<String> {
        transcript
            .render_finished(80, &Theme::plain())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn full(transcript: &Transcript) -> String {
        transcript
            .render_full(80, &Theme::plain())
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_compaction_says_who_asked_for_it_in_one_line() {
        let mut transcript = Transcript::new();
        transcript.apply(&compacted(true));
        assert_eq!(
            finished(&transcript),
            [
                "✻ Conversation compacted (manual): about 2100 tokens, was 9252 · Ctrl+O to read",
                "  the summary",
                ""
            ]
        );
        let mut transcript = Transcript::new();
        transcript.apply(&compacted(false));
        assert!(
            finished(&transcript)[0].starts_with("✻ Conversation compacted (automatic):"),
            "{:?}",
            finished(&transcript)
        );
        // The transcript view shows what the conversation now opens with.
        let text = full(&transcript);
        assert!(text.contains("The parser was renamed."), "{text}");
        assert!(text.contains("fn parse_all() {}"), "{text}");
    }

    #[test]
    fn a_resumed_opening_is_a_boundary_not_a_prompt() {
        let mut transcript = Transcript::new();
        transcript.apply(&AgentEvent::UserMessage { message: opening() });
        assert_eq!(
            finished(&transcript),
            ["✻ Conversation compacted · Ctrl+O to read the summary", ""]
        );
        assert!(full(&transcript).contains("fn parse_all() {}"));
    }
}
