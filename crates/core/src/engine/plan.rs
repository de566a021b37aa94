//! The plan the user approved, kept through compaction.
//!
//! The conversation is where the approved plan lives: the result of the `ExitPlanMode` call
//! the user approved carries it (after [`APPROVED_PLAN_HEADING`]), and a compaction carries
//! it over into the new conversation's opening (after [`CARRIED_PLAN_HEADER`]). A resumed
//! session's conversation holds it the same way, so `-c` keeps it with nothing else to load.

use cairn_protocol::{ContentBlock, Message, Role};
use cairn_tools::plan::APPROVED_PLAN_HEADING;

/// What precedes the approved plan in the opening of a compacted conversation.
pub const CARRIED_PLAN_HEADER: &str =
    "[The plan the user approved, carried over from before compaction: follow it]\n";

/// The plan the user approved last in `conversation`, if there is one.
pub(super) fn approved_plan(conversation: &[Message]) -> Option<String> {
    conversation
        .iter()
        .rev()
        .filter(|message| message.role == Role::User)
        .flat_map(|message| message.content.iter().rev())
        .find_map(|block| match block {
            ContentBlock::ToolResult {
                content,
                is_error: false,
                ..
            } => {
                let text = content.text();
                let (_, plan) = text.split_once(&format!("\n\n{APPROVED_PLAN_HEADING}"))?;
                Some(plan.to_string())
            }
            ContentBlock::Text { text } => {
                text.strip_prefix(CARRIED_PLAN_HEADER).map(str::to_string)
            }
            _ => None,
        })
}

/// The block that carries `plan` over into a compacted conversation.
pub(super) fn carried_plan(plan: &str) -> ContentBlock {
    ContentBlock::text(format!("{CARRIED_PLAN_HEADER}{plan}"))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn results(text: &str, is_error: bool) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::tool_result("t", text, is_error)],
        }
    }

    #[test]
    fn the_last_approved_plan_wins_and_a_refused_one_does_not_count() {
        let approved = |plan: &str| {
            format!("The user has approved your plan.\n\n{APPROVED_PLAN_HEADING}{plan}")
        };
        let conversation = vec![
            Message {
                role: Role::User,
                content: vec![carried_plan("0. Old")],
            },
            results(&approved("1. First"), false),
            results(&approved("2. Refused"), true),
        ];
        assert_eq!(approved_plan(&conversation), Some("1. First".to_string()));
        assert_eq!(
            approved_plan(&conversation[..1]),
            Some("0. Old".to_string()),
            "a plan carried over by a compaction"
        );
        assert_eq!(approved_plan(&[Message::user_text("hi")]), None);
    }
}
