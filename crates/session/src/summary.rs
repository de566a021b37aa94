//! The one-line summaries of `SessionStore::list`, read without decoding whole messages.

use std::path::Path;
use std::time::SystemTime;

use serde::Deserialize;

use crate::decode::{decode_header, entry_type};
use crate::migrate::upgrade_line;
use crate::{MessageEntry, SessionId, TurnFailedEntry};
use cairn_protocol::Message;

/// Characters of the first prompt kept in a summary.
const FIRST_PROMPT_CHARS: usize = 80;

/// One session in a list of them.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    /// The session's id, for `--resume`.
    pub id: SessionId,
    /// Unix milliseconds, from the header.
    pub started_at: u64,
    /// The first thing the user typed, on one line, cut to about 80 characters: the prompt
    /// as typed, without the files `@` attached to it, the output of earlier `!commands` or
    /// hook context; a custom command as `/name args`.
    pub first_prompt: String,
    /// `user`, `assistant` and `tool_results` entries in the file.
    pub message_count: usize,
    /// The cost in USD of every answer in the file; models of unknown prices count 0.
    pub cost_usd: f64,
    /// When the file last changed.
    pub modified: SystemTime,
    /// For a session that never got an answer because its turns failed (nothing listening
    /// at the base URL, a refused key): the last error. `None` once any answer came.
    pub failure: Option<String>,
}

/// Summarises one file; `None` if its header cannot be read.
pub(crate) fn summarize(
    path: &Path,
    bytes: &[u8],
    id: SessionId,
    modified: SystemTime,
) -> Option<SessionSummary> {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(rename = "type")]
        kind: String,
        // Everything else is skipped without being decoded.
        #[serde(default)]
        cost_usd: f64,
    }
    let mut lines = bytes.split(|&byte| byte == b'\n');
    let header = decode_header(path, lines.next()?).ok()?;
    let mut summary = SessionSummary {
        id,
        started_at: header.started_at,
        first_prompt: String::new(),
        message_count: 0,
        cost_usd: 0.0,
        modified,
        failure: None,
    };
    let mut answered = false;
    for raw in lines {
        // Torn or damaged lines are left out of the counts; `load` reports them.
        let Ok(line) = upgrade_line(header.format_version, raw) else {
            continue;
        };
        let kind = match entry_type(&line) {
            // The two kinds that need nothing but a count: checked for completeness only.
            Some(kind @ ("user" | "tool_results")) if !summary.first_prompt.is_empty() => {
                let kind = kind.to_owned();
                if serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_err() {
                    continue;
                }
                kind
            }
            _ => match serde_json::from_slice::<Probe>(&line) {
                Ok(probe) => {
                    summary.cost_usd += probe.cost_usd;
                    probe.kind
                }
                Err(_) => continue,
            },
        };
        match kind.as_str() {
            "user" => {
                summary.message_count += 1;
                if summary.first_prompt.is_empty()
                    && let Ok(entry) = serde_json::from_slice::<MessageEntry>(&line)
                {
                    summary.first_prompt = one_line(&typed_prompt(&entry.message));
                }
            }
            "assistant" => {
                summary.message_count += 1;
                answered = true;
            }
            "tool_results" => summary.message_count += 1,
            "turn_failed" if !answered => {
                if let Ok(entry) = serde_json::from_slice::<TurnFailedEntry>(&line) {
                    summary.failure = Some(entry.message);
                }
            }
            _ => {}
        }
    }
    if answered {
        summary.failure = None;
    }
    Some(summary)
}

/// What the user typed in a message, as the session list shows it (see
/// [`cairn_protocol::typed_text`]).
fn typed_prompt(message: &Message) -> String {
    cairn_protocol::typed_text(message).unwrap_or_default()
}

/// The text on one line, whitespace collapsed, cut with `…` past the limit.
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= FIRST_PROMPT_CHARS {
        return joined;
    }
    let mut cut: String = joined.chars().take(FIRST_PROMPT_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn one_line_collapses_and_cuts() {
        assert_eq!(one_line("  fix\n the   bug "), "fix the bug");
        let long = "é".repeat(100);
        assert_eq!(one_line(&long), format!("{}…", "é".repeat(79)));
    }

    #[test]
    fn the_typed_prompt_leaves_out_what_cairn_added_around_it() {
        let message = |blocks: &[&str]| Message {
            role: cairn_protocol::Role::User,
            content: blocks
                .iter()
                .map(|text| cairn_protocol::ContentBlock::text(*text))
                .collect(),
        };
        assert_eq!(
            typed_prompt(&message(&[
                "<bash-input>ls</bash-input>\n<bash-stdout>a</bash-stdout>\n<bash-stderr></bash-stderr>",
                "explain @notes.txt",
                "Contents of notes.txt:\n```\nthe notes\n```",
                "<system-reminder>\nBranch: main\n</system-reminder>",
            ])),
            "explain @notes.txt"
        );
        assert_eq!(
            typed_prompt(&message(&[
                "<system-reminder>\nhook context\n</system-reminder>",
                "<command-name>/review</command-name>\n<command-args>src/lib.rs</command-args>",
                "Review the file carefully.",
            ])),
            "/review src/lib.rs"
        );
        assert_eq!(
            typed_prompt(&message(&[
                "<command-name>/init</command-name>\n<command-args></command-args>"
            ])),
            "/init"
        );
    }
}
