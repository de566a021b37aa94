//! `ExitPlanMode` and `EnterPlanMode`: how the model hands a plan back, and asks to plan.
//!
//! Neither tool decides anything itself. The permission gate asks the user before either
//! runs (the face shows the plan, or asks whether to switch), and a call that runs reports
//! what was agreed as a [`ToolEffect`] for the engine to act on: leave plan mode and keep the
//! plan, end the turn with the plan as its result, or enter plan mode.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::{
    Access, Concurrency, Destructiveness, Safety, Tool, ToolContext, ToolEffect, ToolOutput,
};

/// What precedes the plan in the result of an approved `ExitPlanMode` (Claude Code's words):
/// the conversation keeps the approved plan there, where a compaction finds it again.
pub const APPROVED_PLAN_HEADING: &str = "## Approved Plan:\n";

/// What happens to a plan once `ExitPlanMode` runs, chosen by the face that registers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanHandback {
    /// Someone approves the plan before the call runs (the interactive dialog, an SDK host):
    /// a call that runs was approved, and work goes on under the mode they chose.
    Approved,
    /// Nobody can approve it (`cairn -p`): the plan is the run's result, and the turn ends.
    EndsTurn,
}

/// Presents the plan made in plan mode to the user, for approval.
#[derive(Debug, Clone)]
pub struct ExitPlanModeTool {
    handback: PlanHandback,
    /// Where a plan written to a file is read from when the call carries none (newer Claude
    /// Code writes the plan to a file and calls the tool without it).
    plan_file: Option<PathBuf>,
}

impl ExitPlanModeTool {
    /// The tool for a face where `handback` says what becomes of the plan; `plan_file` is
    /// where the model may write the plan instead of passing it.
    pub fn new(handback: PlanHandback, plan_file: Option<PathBuf>) -> Self {
        ExitPlanModeTool {
            handback,
            plan_file,
        }
    }
}

// Other fields newer Claude Code sends (`allowedPrompts`) are accepted and ignored.
/// The plan to present to the user for approval.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExitPlanModeInput {
    /// The plan, in Markdown: concise, step by step, naming the files to change. Leave it out
    /// only when the plan is written in the plan file.
    #[serde(default)]
    plan: Option<String>,
}

impl ExitPlanModeTool {
    /// The plan the call presents: its own, else the plan file's.
    fn plan(&self, input: &ExitPlanModeInput) -> Result<String, String> {
        if let Some(plan) = input.plan.as_deref().filter(|plan| !plan.trim().is_empty()) {
            return Ok(plan.to_string());
        }
        let Some(file) = &self.plan_file else {
            return Err("ExitPlanMode needs the plan: pass it as `plan`, in Markdown.".to_string());
        };
        read_plan_file(file)
    }
}

fn read_plan_file(file: &Path) -> Result<String, String> {
    match std::fs::read_to_string(file) {
        Ok(plan) if !plan.trim().is_empty() => Ok(plan),
        Ok(_) => Err(format!(
            "The plan file {} is empty: write the plan there, or pass it as `plan`.",
            file.display()
        )),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "ExitPlanMode needs the plan: pass it as `plan`, in Markdown, or write it to {} \
             first.",
            file.display()
        )),
        Err(err) => Err(format!(
            "Cannot read the plan file {}: {err}. Pass the plan as `plan` instead.",
            file.display()
        )),
    }
}

/// Only cairn's own session state changes, and one hand-back at a time.
const SESSION_STATE: Safety = Safety {
    access: Access::ReadOnly,
    destructive: Destructiveness::Harmless,
    concurrency: Concurrency::Exclusive,
};

#[async_trait]
impl Tool for ExitPlanModeTool {
    type Input = ExitPlanModeInput;

    fn name(&self) -> &'static str {
        "ExitPlanMode"
    }

    fn description(&self) -> String {
        let mut text = String::from(
            "Use this tool in plan mode, when you have finished planning a task that needs \
             code changes and are ready to present the plan to the user for approval. The \
             plan (Markdown) should be concise and step by step, naming the files to change. \
             The user approves it (you may then make the changes) or asks you to keep \
             planning, with feedback. Do not use it for research tasks that change nothing, \
             and do not ask for approval in any other way.",
        );
        if let Some(file) = &self.plan_file {
            text.push_str(&format!(
                " You may instead write the plan to {} and call this tool without `plan`.",
                file.display()
            ));
        }
        text
    }

    fn safety(&self, _input: &ExitPlanModeInput, _ctx: &ToolContext) -> Safety {
        SESSION_STATE
    }

    fn touched_paths(&self, _input: &ExitPlanModeInput, _ctx: &ToolContext) -> Vec<PathBuf> {
        Vec::new()
    }

    async fn validate(&self, input: &ExitPlanModeInput, _ctx: &ToolContext) -> Result<(), String> {
        self.plan(input).map(drop)
    }

    async fn run(
        &self,
        input: ExitPlanModeInput,
        _ctx: &ToolContext,
        _cancel: &CancellationToken,
    ) -> ToolOutput {
        let plan = match self.plan(&input) {
            Ok(plan) => plan,
            Err(message) => return ToolOutput::error(message),
        };
        match self.handback {
            PlanHandback::Approved => ToolOutput {
                effect: Some(ToolEffect::PlanApproved { plan: plan.clone() }),
                ..ToolOutput::text(format!(
                    "The user has approved your plan. You can now start coding, as the \
                     permission mode allows; start by updating your todo list if it helps.\n\n\
                     {APPROVED_PLAN_HEADING}{plan}"
                ))
            },
            PlanHandback::EndsTurn => ToolOutput {
                effect: Some(ToolEffect::PlanHandedBack { plan: plan.clone() }),
                ..ToolOutput::text(
                    "The plan goes back to the user as the result of this run: nobody is here \
                     to approve it, so nothing more is done in this turn.",
                )
            },
        }
    }
}

/// Asks the user to switch into plan mode, to explore and agree on a plan before changing
/// anything.
#[derive(Debug, Clone, Copy)]
pub struct EnterPlanModeTool;

/// Nothing: the call itself asks to switch into plan mode.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnterPlanModeInput {}

#[async_trait]
impl Tool for EnterPlanModeTool {
    type Input = EnterPlanModeInput;

    fn name(&self) -> &'static str {
        "EnterPlanMode"
    }

    fn description(&self) -> String {
        "Asks the user to switch into plan mode before a complex task: a change across \
         several files, a new feature with design choices, anything where agreeing on the \
         approach first saves work. In plan mode you explore with read-only tools and then \
         present a plan with ExitPlanMode; nothing is changed until the user approves it. The \
         user may decline; then go on as before. Do not use it for small, clear changes."
            .into()
    }

    fn safety(&self, _input: &EnterPlanModeInput, _ctx: &ToolContext) -> Safety {
        SESSION_STATE
    }

    fn touched_paths(&self, _input: &EnterPlanModeInput, _ctx: &ToolContext) -> Vec<PathBuf> {
        Vec::new()
    }

    async fn run(
        &self,
        _input: EnterPlanModeInput,
        _ctx: &ToolContext,
        _cancel: &CancellationToken,
    ) -> ToolOutput {
        ToolOutput {
            effect: Some(ToolEffect::PlanModeEntered),
            ..ToolOutput::text(
                "The user agreed: plan mode is on. Explore with read-only tools, then present \
                 your plan with ExitPlanMode; change nothing until the user approves it.",
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::input::parse_input;

    fn input(value: serde_json::Value) -> ExitPlanModeInput {
        parse_input("ExitPlanMode", &value).unwrap()
    }

    async fn run(tool: &ExitPlanModeTool, value: serde_json::Value) -> ToolOutput {
        let ctx = ToolContext::new(std::env::temp_dir());
        tool.run(input(value), &ctx, &CancellationToken::new())
            .await
    }

    #[tokio::test]
    async fn an_approved_plan_is_the_effect_and_stays_in_the_result() {
        let tool = ExitPlanModeTool::new(PlanHandback::Approved, None);
        let output = run(&tool, json!({"plan": "1. Fix it"})).await;
        assert_eq!(
            output.effect,
            Some(ToolEffect::PlanApproved {
                plan: "1. Fix it".into()
            })
        );
        assert!(!output.is_error);
        assert!(
            output
                .content
                .text()
                .ends_with("## Approved Plan:\n1. Fix it"),
            "{}",
            output.content.text()
        );
    }

    #[tokio::test]
    async fn where_nobody_approves_the_plan_ends_the_turn() {
        let tool = ExitPlanModeTool::new(PlanHandback::EndsTurn, None);
        let output = run(&tool, json!({"plan": "1. Fix it"})).await;
        assert_eq!(
            output.effect,
            Some(ToolEffect::PlanHandedBack {
                plan: "1. Fix it".into()
            })
        );
    }

    #[tokio::test]
    async fn without_a_plan_the_plan_file_is_read_and_its_absence_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plan.md");
        let tool = ExitPlanModeTool::new(PlanHandback::Approved, Some(file.clone()));
        let ctx = ToolContext::new(dir.path().to_path_buf());
        // Newer Claude Code sends fields of its own beside (or instead of) the plan.
        let missing = tool
            .validate(&input(json!({"allowedPrompts": []})), &ctx)
            .await;
        assert_eq!(
            missing,
            Err(format!(
                "ExitPlanMode needs the plan: pass it as `plan`, in Markdown, or write it to {} \
                 first.",
                file.display()
            ))
        );
        std::fs::write(&file, "# Plan\n\n1. Read\n").unwrap();
        let output = run(&tool, json!({})).await;
        assert_eq!(
            output.effect,
            Some(ToolEffect::PlanApproved {
                plan: "# Plan\n\n1. Read\n".into()
            })
        );
        let no_file = ExitPlanModeTool::new(PlanHandback::Approved, None);
        assert_eq!(
            no_file.validate(&input(json!({"plan": "  "})), &ctx).await,
            Err("ExitPlanMode needs the plan: pass it as `plan`, in Markdown.".into())
        );
    }

    #[tokio::test]
    async fn entering_plan_mode_is_an_effect() {
        let ctx = ToolContext::new(std::env::temp_dir());
        let output = EnterPlanModeTool
            .run(EnterPlanModeInput {}, &ctx, &CancellationToken::new())
            .await;
        assert_eq!(output.effect, Some(ToolEffect::PlanModeEntered));
    }
}
