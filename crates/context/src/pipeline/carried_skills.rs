//! The skills a compaction carries over: each skill loaded in the session (by the `Skill`
//! tool or its slash command) is added back to the new opening as it was loaded, the most
//! recently loaded first, at most [`MAX_SKILL_TOKENS`] each and [`MAX_SKILLS_TOKENS`]
//! together, as Claude Code does. A skill the kept part of the turn in progress still holds is
//! not repeated.

use std::collections::{BTreeSet, HashSet};

use cairn_protocol::{ContentBlock, Message, Role, ToolResultContent};

use super::autocompact::SUMMARY_PREAMBLE;
use crate::estimate_tokens;
use crate::skills::{SKILL_BASE_PREFIX, SKILL_NOTE_PREFIX};

/// What precedes a skill carried over.
pub const SKILL_HEADER: &str = "[A skill used in this session, as it was loaded]\n";

/// The most one skill carries, in tokens; a longer one is cut.
pub const MAX_SKILL_TOKENS: u64 = 5_000;

/// The most the carried skills hold together, in tokens.
pub const MAX_SKILLS_TOKENS: u64 = 25_000;

/// Where a cut skill says so.
const CUT_NOTE: &str = "\n[The rest of this skill was cut to fit after compaction: read its \
SKILL.md in the base directory above for all of it.]";

/// The skills loaded in `conversation[..before]` (or carried by an earlier compaction), as
/// text blocks for the new opening: the latest load of each skill, newest first while they
/// fit `budget` tokens, then back in the order they were loaded.
pub(crate) fn skill_blocks(conversation: &[Message], before: usize, budget: u64) -> Vec<String> {
    let skill_calls: HashSet<&str> = conversation
        .iter()
        .filter(|message| message.role == Role::Assistant)
        .flat_map(Message::tool_uses)
        .filter(|(_, name, _)| *name == "Skill")
        .map(|(id, _, _)| id)
        .collect();
    let mut loads: Vec<String> = Vec::new();
    for message in conversation.iter().take(before) {
        if message.role != Role::User {
            continue;
        }
        let opening = matches!(
            message.content.first(),
            Some(ContentBlock::Text { text }) if text.starts_with(SUMMARY_PREAMBLE)
        );
        for block in &message.content {
            let text = match block {
                ContentBlock::Text { text } if opening => text.strip_prefix(SKILL_HEADER),
                ContentBlock::Text { text } => Some(text.as_str()),
                ContentBlock::ToolResult {
                    tool_use_id,
                    content: ToolResultContent::Text(text),
                    is_error: false,
                } if skill_calls.contains(tool_use_id.as_str()) => Some(text.as_str()),
                _ => None,
            };
            if let Some(text) = text.filter(|text| text.starts_with(SKILL_BASE_PREFIX)) {
                loads.push(without_notes(text).to_string());
            }
        }
    }
    let mut seen = BTreeSet::new();
    let mut left = budget.min(MAX_SKILLS_TOKENS);
    let mut kept = Vec::new();
    for load in loads.into_iter().rev() {
        let dir = load.lines().next().unwrap_or_default().to_string();
        if !seen.insert(dir) {
            continue;
        }
        let block = format!("{SKILL_HEADER}{}", cut_to(&load, MAX_SKILL_TOKENS));
        let tokens = estimate_tokens(&block) as u64;
        if tokens > left {
            continue;
        }
        left -= tokens;
        kept.push(block);
    }
    kept.reverse();
    kept
}

/// A skill's text without the notes the `Skill` tool added after it for its turn (what was
/// pre-approved), which no longer hold.
fn without_notes(text: &str) -> &str {
    match text.find(SKILL_NOTE_PREFIX) {
        Some(at) => &text[..at],
        None => text,
    }
}

/// `text` within `tokens`, cut at a line where it must be cut.
fn cut_to(text: &str, tokens: u64) -> String {
    if estimate_tokens(text) as u64 <= tokens {
        return text.to_string();
    }
    let limit = (tokens as usize * 4).saturating_sub(CUT_NOTE.len());
    let mut end = limit.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &text[..end];
    let cut = cut.rfind('\n').map_or(cut, |line| &cut[..line]);
    format!("{cut}{CUT_NOTE}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn skill_call(id: &str, name: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: name.into(),
                input: json!({"skill": "x"}),
            }],
        }
    }

    fn result(id: &str, text: &str) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.into(),
                content: ToolResultContent::Text(text.into()),
                is_error: false,
            }],
        }
    }

    #[test]
    fn the_latest_load_of_each_skill_is_carried_within_the_budget() {
        let a1 = format!("{SKILL_BASE_PREFIX}/s/a\n\nA, first.");
        let a2 =
            format!("{SKILL_BASE_PREFIX}/s/a\n\nA, again.{SKILL_NOTE_PREFIX} pre-approved: Read]");
        let b = format!("{SKILL_BASE_PREFIX}/s/b\n\nB.");
        let big = format!("{SKILL_BASE_PREFIX}/s/big\n\n{}", "word\n".repeat(10_000));
        let conversation = vec![
            Message::user_text("start"),
            skill_call("1", "Skill"),
            result("1", &a1),
            skill_call("2", "Skill"),
            result("2", &b),
            // A Read of a file that looks like a skill is not one.
            skill_call("3", "Read"),
            result("3", &format!("{SKILL_BASE_PREFIX}/s/fake\n\nno")),
            // A slash command's expansion is a load too.
            Message::user_text(&big),
            skill_call("4", "Skill"),
            result("4", &a2),
        ];
        let blocks = skill_blocks(&conversation, conversation.len(), MAX_SKILLS_TOKENS);
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks[0], format!("{SKILL_HEADER}{b}"));
        assert!(blocks[1].starts_with(&format!("{SKILL_HEADER}{SKILL_BASE_PREFIX}/s/big\n")));
        assert!(blocks[1].ends_with(CUT_NOTE));
        assert!(estimate_tokens(&blocks[1]) as u64 <= MAX_SKILL_TOKENS + 20);
        assert_eq!(
            blocks[2],
            format!("{SKILL_HEADER}{SKILL_BASE_PREFIX}/s/a\n\nA, again.")
        );

        // A later compaction finds them in the opening; the newest goes first when room is short.
        let opening = Message {
            role: Role::User,
            content: std::iter::once(format!("{SUMMARY_PREAMBLE}summary"))
                .chain(blocks.clone())
                .map(ContentBlock::text)
                .collect(),
        };
        let again = skill_blocks(std::slice::from_ref(&opening), 1, 30);
        assert_eq!(
            again,
            [format!(
                "{SKILL_HEADER}{SKILL_BASE_PREFIX}/s/a\n\nA, again."
            )]
        );
        // What the kept tail holds is not repeated.
        assert_eq!(
            skill_blocks(&conversation, 2, MAX_SKILLS_TOKENS),
            Vec::<String>::new()
        );
    }
}
