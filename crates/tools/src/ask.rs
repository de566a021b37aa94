//! `AskUserQuestion`: the model asks the user a few multiple-choice questions mid-task.
//!
//! The asking is not the tool's: the permission gate asks about every call, and whoever
//! answers (the interactive dialog, an SDK host through `can_use_tool`) writes the user's
//! answers into the call's input (`answers`, question → answer), as Claude Code does with
//! `updatedInput`. The tool then only reads them back to the model.

use std::collections::BTreeMap;
use std::path::PathBuf;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{Access, Concurrency, Destructiveness, Safety, Tool, ToolContext, ToolOutput};

/// Asks the user questions and returns their answers.
#[derive(Debug, Clone, Copy)]
pub struct AskUserQuestionTool;

/// The questions to ask the user (Claude Code's field names).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct AskUserQuestionInput {
    /// One to four questions, asked one after the other.
    pub questions: Vec<UserQuestion>,
    /// The user's answers, question text → answer; filled in by cairn when the user
    /// answers. Leave it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<BTreeMap<String, String>>,
}

/// One question and its choices.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct UserQuestion {
    /// The whole question, ending with a question mark.
    pub question: String,
    /// A very short label for it (at most 12 characters): "Auth method".
    pub header: String,
    /// Two to four choices; the user may always answer in their own words instead.
    pub options: Vec<QuestionOption>,
    /// Whether the user may pick several choices.
    #[serde(rename = "multiSelect", default)]
    pub multi_select: bool,
}

/// One choice of a question.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct QuestionOption {
    /// What the user picks (one to five words).
    pub label: String,
    /// What picking it means, or what it implies.
    pub description: String,
}

impl AskUserQuestionInput {
    /// Whether the questions can be shown: 1–4 of them, each with a text, a header and 2–4
    /// choices, no question twice. `Err` names what is wrong, for the model.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=4).contains(&self.questions.len()) {
            return Err(format!(
                "AskUserQuestion takes 1 to 4 questions, not {}.",
                self.questions.len()
            ));
        }
        for (index, question) in self.questions.iter().enumerate() {
            let at = format!("questions[{index}]");
            if question.question.trim().is_empty() {
                return Err(format!("{at}.question is empty."));
            }
            if question.header.trim().is_empty() {
                return Err(format!("{at}.header is empty."));
            }
            if !(2..=4).contains(&question.options.len()) {
                return Err(format!(
                    "{at} has {} options; give 2 to 4 (the user can always answer in their own \
                     words too).",
                    question.options.len()
                ));
            }
            if let Some(blank) = question
                .options
                .iter()
                .position(|option| option.label.trim().is_empty())
            {
                return Err(format!("{at}.options[{blank}].label is empty."));
            }
            if self.questions[..index]
                .iter()
                .any(|earlier| earlier.question == question.question)
            {
                return Err(format!("{at} asks the same question as an earlier one."));
            }
        }
        Ok(())
    }

    /// `input` (the call's, as the model wrote it) with `answers` written in: the input the
    /// call runs with once the user has answered.
    pub fn answered(input: &Value, answers: BTreeMap<String, String>) -> Value {
        let mut input = input.clone();
        if let Value::Object(fields) = &mut input {
            fields.insert(
                "answers".into(),
                Value::Object(
                    answers
                        .into_iter()
                        .map(|(question, answer)| (question, Value::String(answer)))
                        .collect(),
                ),
            );
        }
        input
    }
}

#[async_trait]
impl Tool for AskUserQuestionTool {
    type Input = AskUserQuestionInput;

    fn name(&self) -> &'static str {
        "AskUserQuestion"
    }

    fn description(&self) -> String {
        "Asks the user one to four multiple-choice questions while you work, and returns their \
         answers: to learn what they prefer, to settle an ambiguous instruction, or to let them \
         choose between approaches. Each question has a short header and 2 to 4 options (a \
         label and what it means); set multiSelect when several may apply. The user can always \
         answer in their own words instead. In plan mode, ask before presenting the plan, not \
         to ask whether the plan is good (ExitPlanMode does that)."
            .into()
    }

    fn safety(&self, _input: &AskUserQuestionInput, _ctx: &ToolContext) -> Safety {
        // Nothing outside cairn changes; one dialog at a time.
        Safety {
            access: Access::ReadOnly,
            destructive: Destructiveness::Harmless,
            concurrency: Concurrency::Exclusive,
        }
    }

    fn touched_paths(&self, _input: &AskUserQuestionInput, _ctx: &ToolContext) -> Vec<PathBuf> {
        Vec::new()
    }

    async fn validate(
        &self,
        input: &AskUserQuestionInput,
        _ctx: &ToolContext,
    ) -> Result<(), String> {
        input.check()
    }

    async fn run(
        &self,
        input: AskUserQuestionInput,
        _ctx: &ToolContext,
        _cancel: &CancellationToken,
    ) -> ToolOutput {
        let Some(answers) = input.answers.filter(|answers| !answers.is_empty()) else {
            return ToolOutput::error(
                "The user gave no answers: nobody could show the questions. Go on without \
                 them, or ask in your reply.",
            );
        };
        // In the order they were asked; an answer to a question not asked is still shown.
        let mut said: Vec<String> = Vec::new();
        for question in &input.questions {
            if let Some(answer) = answers.get(&question.question) {
                said.push(format!("\"{}\"=\"{answer}\"", question.question));
            }
        }
        for (question, answer) in &answers {
            if !input
                .questions
                .iter()
                .any(|asked| &asked.question == question)
            {
                said.push(format!("\"{question}\"=\"{answer}\""));
            }
        }
        ToolOutput::text(format!(
            "User has answered your questions: {}. You can now continue with the user's answers \
             in mind.",
            said.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::input::parse_input;

    fn questions() -> Value {
        json!({"questions": [{
            "question": "Which database?",
            "header": "Database",
            "options": [
                {"label": "SQLite", "description": "One file"},
                {"label": "Postgres", "description": "A server"}
            ],
            "multiSelect": false
        }]})
    }

    #[tokio::test]
    async fn answers_written_into_the_input_reach_the_model() {
        let answered = AskUserQuestionInput::answered(
            &questions(),
            BTreeMap::from([("Which database?".to_string(), "SQLite".to_string())]),
        );
        let input: AskUserQuestionInput = parse_input("AskUserQuestion", &answered).unwrap();
        let ctx = ToolContext::new(std::env::temp_dir());
        let output = AskUserQuestionTool
            .run(input, &ctx, &CancellationToken::new())
            .await;
        assert_eq!(
            output,
            ToolOutput::text(
                "User has answered your questions: \"Which database?\"=\"SQLite\". You can now \
                 continue with the user's answers in mind."
            )
        );
    }

    #[tokio::test]
    async fn a_call_nobody_answered_is_an_error() {
        let input: AskUserQuestionInput = parse_input("AskUserQuestion", &questions()).unwrap();
        let ctx = ToolContext::new(std::env::temp_dir());
        let output = AskUserQuestionTool
            .run(input, &ctx, &CancellationToken::new())
            .await;
        assert!(output.is_error);
    }

    #[test]
    fn questions_that_cannot_be_shown_are_refused_naming_what_is_wrong() {
        let mut one_option = questions();
        one_option["questions"][0]["options"] = json!([{"label": "A", "description": ""}]);
        let mut twice = questions();
        let first = twice["questions"][0].clone();
        twice["questions"] = json!([first.clone(), first]);
        let cases = [
            (
                json!({"questions": []}),
                "AskUserQuestion takes 1 to 4 questions, not 0.",
            ),
            (
                one_option,
                "questions[0] has 1 options; give 2 to 4 (the user can always answer in their \
                 own words too).",
            ),
            (
                twice,
                "questions[1] asks the same question as an earlier one.",
            ),
        ];
        for (value, expected) in cases {
            let input: AskUserQuestionInput = parse_input("AskUserQuestion", &value).unwrap();
            assert_eq!(input.check(), Err(expected.to_string()));
        }
        let fine: AskUserQuestionInput = parse_input("AskUserQuestion", &questions()).unwrap();
        assert_eq!(fine.check(), Ok(()));
    }
}
