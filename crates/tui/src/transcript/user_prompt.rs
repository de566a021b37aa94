//! What a user message shows in the transcript: what the user typed, and a line for each file
//! attached to it.
//!
//! A message carries more than the user typed. Before the typed text the UI puts the output of
//! earlier `!command`s (built by `ShellOutput::context` in `app/shell_escape.rs`); after it, the
//! contents of each `@file` (`attachment_text` in `app/mention.rs`) and `<system-reminder>`
//! blocks of hook context (from the UI's SessionStart hooks and the engine's UserPromptSubmit
//! hooks). The model needs all of them; the user already saw the command's output when it ran
//! and does not need a whole file printed back. The blocks are told apart by the exact shape
//! their builders give them, which the tests beside those builders check.

use cairn_protocol::{ContentBlock, Message, command_line, is_shell_context, is_system_reminder};

/// A user message as the transcript shows it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct UserPrompt {
    /// What the user typed, with each image as `[image]` on a line of its own.
    pub text: String,
    pub attachments: Vec<Attachment>,
}

/// A file attached with `@path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attachment {
    pub path: String,
    pub extent: Extent,
}

/// How much of an attached file the model was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extent {
    /// All of it, this many lines.
    Lines(usize),
    /// Only its first `shown_kb` KB, of `total_bytes`.
    Cut { shown_kb: usize, total_bytes: usize },
}

impl UserPrompt {
    /// The typed text and attachments of `message`, leaving out `!command` output and system
    /// reminders. The typed text is the first text block that is neither; an attachment is
    /// recognised only after it, so a pasted text shaped like one is still shown. A custom
    /// command shows as it was typed (`/review src/lib.rs`), not as its expansion.
    pub fn of(message: &Message) -> UserPrompt {
        let mut prompt = UserPrompt::default();
        let mut parts: Vec<String> = Vec::new();
        let mut typed = false;
        let mut expansion_next = false;
        for block in &message.content {
            match block {
                ContentBlock::Text { text } => {
                    if is_shell_context(text) || is_system_reminder(text) {
                        continue;
                    }
                    if !typed && let Some(line) = command_line(text) {
                        parts.push(line);
                        typed = true;
                        expansion_next = true;
                        continue;
                    }
                    if std::mem::take(&mut expansion_next) {
                        continue;
                    }
                    if typed && let Some(attachment) = Attachment::parse(text) {
                        prompt.attachments.push(attachment);
                        continue;
                    }
                    typed = true;
                    parts.push(text.clone());
                }
                ContentBlock::Image { .. } => parts.push("[image]".to_string()),
                ContentBlock::Thinking { .. }
                | ContentBlock::RedactedThinking { .. }
                | ContentBlock::ToolUse { .. }
                | ContentBlock::ToolResult { .. } => {}
            }
        }
        prompt.text = parts.join("\n");
        prompt
    }

    /// Whether there is nothing to show.
    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty() && self.attachments.is_empty()
    }
}

impl Attachment {
    /// The attachment `text` holds, if it has the shape `attachment_text` gives one:
    /// `Contents of PATH:`, a fenced block, and a note when the file was cut.
    pub fn parse(text: &str) -> Option<Attachment> {
        let (head, rest) = text.split_once('\n')?;
        let path = head.strip_prefix("Contents of ")?.strip_suffix(':')?;
        // A mention is one whitespace-separated word.
        if path.is_empty() || path.contains(char::is_whitespace) {
            return None;
        }
        let body = rest.strip_prefix("```\n")?;
        let extent = match body.strip_suffix("```") {
            Some(contents) => Extent::Lines(contents.lines().count()),
            None => {
                let (_, note) = body.rsplit_once("```\n(Only the first ")?;
                let note = note.strip_suffix(" bytes are shown.)")?;
                let (shown_kb, total_bytes) = note.split_once(" KB of ")?;
                Extent::Cut {
                    shown_kb: shown_kb.parse().ok()?,
                    total_bytes: total_bytes.parse().ok()?,
                }
            }
        };
        Some(Attachment {
            path: path.to_string(),
            extent,
        })
    }

    /// The line the transcript shows: `Attached Cargo.lock (3,780 lines)`.
    pub fn summary(&self) -> String {
        let extent = match self.extent {
            Extent::Lines(0) => "empty".to_string(),
            Extent::Lines(1) => "1 line".to_string(),
            Extent::Lines(lines) => format!("{} lines", grouped(lines)),
            Extent::Cut {
                shown_kb,
                total_bytes,
            } => format!("first {shown_kb} KB of {} bytes", grouped(total_bytes)),
        };
        format!("Attached {} ({extent})", self.path)
    }
}

/// `n` with its digits in groups of three: `3,780`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn an_attachment_says_how_long_the_file_is() {
        let parsed = |text: &str| Attachment::parse(text).map(|a| a.summary());
        assert_eq!(
            parsed("Contents of Cargo.lock:\n```\na\nb\n```"),
            Some("Attached Cargo.lock (2 lines)".into())
        );
        assert_eq!(
            parsed("Contents of one:\n```\nonly\n```"),
            Some("Attached one (1 line)".into())
        );
        assert_eq!(
            parsed("Contents of empty.txt:\n```\n```"),
            Some("Attached empty.txt (empty)".into())
        );
        assert_eq!(
            parsed(
                "Contents of big.log:\n```\nxxx\n```\n(Only the first 100 KB of 2345678 bytes are shown.)"
            ),
            Some("Attached big.log (first 100 KB of 2,345,678 bytes)".into())
        );
    }

    #[test]
    fn text_of_another_shape_is_not_an_attachment() {
        for text in [
            "Contents of my notes:\n```\nx\n```",
            "Contents of a.rs:\nno fence",
            "Contents of a.rs:\n```\nunclosed",
            "Contents of :\n```\n```",
            "Contents of a.rs:",
        ] {
            assert_eq!(Attachment::parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn a_custom_command_shows_as_typed_not_as_its_expansion() {
        let message = Message {
            role: cairn_protocol::Role::User,
            content: vec![
                ContentBlock::text(
                    "<command-name>/review</command-name>\n<command-args>src/lib.rs</command-args>",
                ),
                ContentBlock::text("# Review checklist\n1. Read it\nTarget: src/lib.rs"),
                ContentBlock::text("<system-reminder>\nhook context\n</system-reminder>"),
            ],
        };
        assert_eq!(UserPrompt::of(&message).text, "/review src/lib.rs");
        assert_eq!(
            command_line("<command-name>/init</command-name>\n<command-args></command-args>"),
            Some("/init".to_string())
        );
        assert_eq!(command_line("<command-name>/x"), None);
    }

    #[test]
    fn numbers_are_grouped_in_threes() {
        let all: Vec<String> = [0, 999, 1000, 3780, 1234567].map(grouped).to_vec();
        assert_eq!(all, ["0", "999", "1,000", "3,780", "1,234,567"]);
    }
}
