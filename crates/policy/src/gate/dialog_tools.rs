//! The tools that talk to the user rather than to the workspace: `ExitPlanMode`,
//! `EnterPlanMode` and `AskUserQuestion`. Each call of theirs is a question for the user
//! (approve this plan, switch into plan mode, answer these questions), so the gate asks about
//! them whatever the rules say, and answers for itself where the call cannot make sense.

use cairn_protocol::{DecisionSource, PermissionMode};

use super::{Asking, CallInfo, Verdict};

/// What plan mode answers a call that would change something; it names the tool that hands
/// the plan back.
pub const PLAN_MODE_REFUSAL: &str = "Plan mode is on: only read-only tools run. Finish \
    exploring, then present your plan to the user with the ExitPlanMode tool instead of making \
    changes.";

/// The verdict on a call of a dialog tool in `mode`; `None` for every other tool.
pub(super) fn dialog_tool_verdict(call: &CallInfo<'_>, mode: PermissionMode) -> Option<Verdict> {
    let in_plan = mode == PermissionMode::Plan;
    let refuse = |source, reason: &str| Verdict::Deny {
        source,
        rule: None,
        reason: reason.to_string(),
    };
    let ask = |reason: &str| Verdict::Ask {
        reason: reason.to_string(),
        suggested_rule: None,
    };
    Some(match (call.tool, in_plan, call.asking) {
        ("ExitPlanMode", false, _) => refuse(
            DecisionSource::Mode,
            "Plan mode is not on, so there is no plan to hand back: ExitPlanMode is only for \
             presenting a plan made in plan mode. If the user approved your plan already, go on \
             with the work.",
        ),
        ("ExitPlanMode", true, Asking::Interactive) => {
            ask("The model has finished planning and asks to leave plan mode with this plan.")
        }
        // Nobody can approve it: the tool hands the plan back as the run's result.
        ("ExitPlanMode", true, Asking::NonInteractive) => Verdict::Allow {
            source: DecisionSource::Mode,
            rule: None,
        },
        ("EnterPlanMode", true, _) => refuse(
            DecisionSource::Mode,
            "Plan mode is on already: explore with read-only tools, then present your plan with \
             ExitPlanMode.",
        ),
        ("EnterPlanMode", false, Asking::Interactive) => ask(
            "The model asks to switch into plan mode, to explore and plan before changing \
             anything.",
        ),
        ("EnterPlanMode", false, Asking::NonInteractive) => refuse(
            DecisionSource::NonInteractive,
            "Plan mode needs someone to approve the plan, and nobody can be asked here: go on \
             without it.",
        ),
        ("AskUserQuestion", _, Asking::Interactive) => ask("The model has questions for you."),
        ("AskUserQuestion", _, Asking::NonInteractive) => refuse(
            DecisionSource::NonInteractive,
            "Nobody can answer questions here: go on with your best judgement and say what you \
             assumed.",
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    /// What the gate answers a call of `tool` in `mode`, where `asking` says who answers:
    /// "ask", "allow" or the refusal's reason.
    fn answer(tool: &str, mode: PermissionMode, asking: Asking) -> Option<String> {
        let input = json!({});
        let call = CallInfo {
            tool,
            input: &input,
            paths: &[],
            read_only: true,
            destructive: false,
            asking,
        };
        dialog_tool_verdict(&call, mode).map(|verdict| match verdict {
            Verdict::Allow { .. } => "allow".to_string(),
            Verdict::Ask { .. } => "ask".to_string(),
            Verdict::Deny { reason, .. } => reason,
        })
    }

    #[test]
    fn each_dialog_tool_is_a_question_where_it_makes_sense_and_refused_where_not() {
        use Asking::{Interactive, NonInteractive};
        use PermissionMode::{BypassPermissions, Default, Plan};
        let asks = Some("ask".to_string());
        assert_eq!(answer("ExitPlanMode", Plan, Interactive), asks);
        assert_eq!(
            answer("ExitPlanMode", Plan, NonInteractive),
            Some("allow".to_string()),
            "in -p the plan is the result"
        );
        assert!(
            answer("ExitPlanMode", BypassPermissions, Interactive)
                .is_some_and(|reason| reason.starts_with("Plan mode is not on")),
            "no mode lets a hand-back without a plan mode run"
        );
        assert_eq!(answer("EnterPlanMode", Default, Interactive), asks);
        assert!(
            answer("EnterPlanMode", Plan, Interactive)
                .is_some_and(|reason| reason.starts_with("Plan mode is on already"))
        );
        assert_eq!(answer("AskUserQuestion", Plan, Interactive), asks);
        assert!(
            answer("AskUserQuestion", Default, NonInteractive)
                .is_some_and(|reason| reason.starts_with("Nobody can answer questions here"))
        );
        assert_eq!(answer("Read", Plan, Interactive), None);
    }
}
