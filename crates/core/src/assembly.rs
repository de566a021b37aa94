//! Turn assembly: what the user typed becomes the [`Op`] that starts a turn, built the same
//! way for every face (the TUI, `cairn -p`, the SDK's stream-json input).
//!
//! A face reads its input and shows it in its own way; what the model receives is decided
//! here: a custom command's `<command-name>` tag and expansion, with the model and allowed
//! tools it sets for its turn, and the `<system-reminder>` blocks that carry context from
//! cairn rather than from the user (SessionStart hook output on the first message,
//! UserPromptSubmit hook context in the engine). What stays in a face is what only it has:
//! the TUI's `@`-mention attachments and pending `!command` output, and what its transcript
//! shows.

use std::path::Path;

use cairn_context::commands::CustomCommand;
use cairn_context::skills::{Skill, SkillScope};
use cairn_protocol::{ContentBlock, Op};

/// `text` as a `<system-reminder>` block, the tag Claude Code uses for context that comes from
/// the harness (a hook's output, a reminder) rather than from the user; the system prompt tells
/// the model what the tag means. The one place the tag is written.
///
/// ```
/// use cairn_core::assembly::system_reminder;
/// use cairn_protocol::ContentBlock;
///
/// assert_eq!(
///     system_reminder("Branch: main"),
///     ContentBlock::text("<system-reminder>\nBranch: main\n</system-reminder>")
/// );
/// ```
pub fn system_reminder(text: &str) -> ContentBlock {
    ContentBlock::text(cairn_protocol::system_reminder_text(text))
}

/// A user turn as it will be sent: its content and, for a custom command, the model and the
/// allowed tools that hold for this turn only. [`Turn::into_op`] makes the [`Op`] that starts
/// it.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// What the model gets as the user's message.
    pub content: Vec<ContentBlock>,
    /// The model id this turn runs on instead of the session's (a command's `model:`, its
    /// alias resolved).
    pub model: Option<String>,
    /// Permission rules allowed without asking during this turn (a command's
    /// `allowed-tools:`).
    pub allowed_tools: Vec<String>,
}

impl Turn {
    /// A message: `content` as it is, on the session's model and rules.
    pub fn message(content: Vec<ContentBlock>) -> Turn {
        Turn {
            content,
            model: None,
            allowed_tools: Vec::new(),
        }
    }

    /// `/name arguments` for `command`, run in `cwd`: the model gets the command line in
    /// Claude Code's tags, then the expansion (arguments substituted, `` !`command` `` output
    /// and `@file` contents inlined); the command's model (an alias resolved to its id) and
    /// allowed tools hold for the turn.
    pub fn custom_command(command: &CustomCommand, arguments: &str, cwd: &Path) -> Turn {
        Turn {
            content: vec![
                ContentBlock::text(command.invocation_tag(arguments)),
                ContentBlock::text(command.expand(arguments, cwd)),
            ],
            model: command
                .model
                .as_deref()
                .map(cairn_llm::models::resolve_model),
            allowed_tools: command.allowed_tools.clone(),
        }
    }

    /// `/name arguments` for `skill`: the command line in Claude Code's tags, then the skill's
    /// text (its base directory, the body with the arguments); its model and `allowed-tools`
    /// hold for the turn, with the reading of its directory when that lies outside the
    /// workspace (a user's skill).
    pub fn skill(skill: &Skill, arguments: &str) -> Turn {
        let mut allowed_tools = skill.allowed_tools.clone();
        if skill.scope == SkillScope::User {
            allowed_tools.push(format!("Read(/{}/**)", skill.dir.display()));
        }
        Turn {
            content: vec![
                ContentBlock::text(format!(
                    "<command-name>/{}</command-name>\n<command-args>{arguments}</command-args>",
                    skill.name
                )),
                ContentBlock::text(skill.expand(arguments)),
            ],
            model: skill.model.as_deref().map(cairn_llm::models::resolve_model),
            allowed_tools,
        }
    }

    /// Adds context from cairn (each SessionStart hook's output, on the session's first
    /// message) after what the user wrote, each piece as a [`system_reminder`].
    pub fn add_context(&mut self, context: impl IntoIterator<Item = impl AsRef<str>>) {
        self.content.extend(
            context
                .into_iter()
                .map(|context| system_reminder(context.as_ref())),
        );
    }

    /// The operation that starts this turn.
    pub fn into_op(self) -> Op {
        Op::turn(self.content, self.model, self.allowed_tools)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn context_is_added_after_the_message_as_reminders() {
        let mut turn = Turn::message(vec![ContentBlock::text("Fix the build.")]);
        turn.add_context(["Branch: main", "Today is Tuesday."]);
        turn.add_context(Vec::<String>::new());
        assert_eq!(
            turn.into_op(),
            Op::turn(
                vec![
                    ContentBlock::text("Fix the build."),
                    ContentBlock::text("<system-reminder>\nBranch: main\n</system-reminder>"),
                    ContentBlock::text("<system-reminder>\nToday is Tuesday.\n</system-reminder>"),
                ],
                None,
                Vec::new(),
            )
        );
    }
}
