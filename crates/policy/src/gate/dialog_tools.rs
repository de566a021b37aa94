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
