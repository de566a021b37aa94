//! The plan the user approved, kept in the session and through compaction.
//!
//! The result of the `ExitPlanMode` call the user approved carries the plan (after
//! [`APPROVED_PLAN_HEADING`]). The engine keeps the last one ([`approved_in`] finds it in the
//! results message), the recorder writes it to the session as a `plan` entry of its own, a
//! resume restores it from there, and a compaction carries it over into the new
//! conversation's opening (after [`CARRIED_PLAN_HEADER`]). A session recorded before plans had
//! entries finds it in its conversation instead ([`approved_plan`]).

use cairn_protocol::{ContentBlock, Message, Role};
use cairn_tools::plan::APPROVED_PLAN_HEADING;

/// What precedes the approved plan in the opening of a compacted conversation.
pub const CARRIED_PLAN_HEADER: &str =
    "[The plan the user approved, carried over from before compaction: follow it]\n";

/// The plan a results message says the user approved (an `ExitPlanMode` result that is not
/// an error), if it says so.
pub(crate) fn approved_in(message: &Message) -> Option<String> {
    if message.role != Role::User {
        return None;
    }
    message.content.iter().rev().find_map(|block| match block {
        ContentBlock::ToolResult {
            content,
            is_error: false,
            ..
        } => plan_in_result(&content.text()),
        _ => None,
    })
}

/// The plan after the approval heading of an `ExitPlanMode` result.
fn plan_in_result(text: &str) -> Option<String> {
    let (_, plan) = text.split_once(&format!("\n\n{APPROVED_PLAN_HEADING}"))?;
    Some(plan.to_string())
}

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
            } => plan_in_result(&content.text()),
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
        assert_eq!(approved_in(&conversation[1]), Some("1. First".to_string()));
        assert_eq!(approved_in(&conversation[2]), None, "a refused plan");
        assert_eq!(
            approved_in(&conversation[0]),
            None,
            "a carried plan is no approval"
        );
    }
}
