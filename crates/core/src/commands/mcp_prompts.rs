//! MCP prompts as commands: `/mcp__<server>__<prompt> args`, each word of the arguments given
//! to the prompt's arguments in order. A prompt's text lives on its server, so the table only
//! resolves the line into an [`McpPromptCall`]; the face fetches the prompt (`prompts/get`)
//! and sends what the server returns as the turn.

use super::{CommandEntry, CommandError, CommandKind, CommandSource, TurnCommand};

/// One argument of an MCP prompt, as its server lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPromptArgument {
    /// The argument's name, as the server expects it.
    pub name: String,
    /// Whether the server needs it.
    pub required: bool,
}

/// An MCP server's prompt, as a command of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPrompt {
    /// The server's name under `mcpServers`.
    pub server: String,
    /// The prompt's own name on its server.
    pub prompt: String,
    /// Its arguments, in the order the server lists them: the order the words of a line fill.
    pub arguments: Vec<McpPromptArgument>,
}

impl CommandEntry {
    /// The entry of an MCP prompt, named `command` (`mcp__<server>__<prompt>`, sanitised as a
    /// tool name is); its hint names the arguments (`<name> [mood]`: `<>` required).
    pub fn mcp_prompt(command: String, description: String, prompt: McpPrompt) -> CommandEntry {
        let hint: Vec<String> = prompt
            .arguments
            .iter()
            .map(|argument| match argument.required {
                true => format!("<{}>", argument.name),
                false => format!("[{}]", argument.name),
            })
            .collect();
        CommandEntry {
            name: command,
            aliases: Vec::new(),
            argument_hint: (!hint.is_empty()).then(|| hint.join(" ")),
            description: if description.trim().is_empty() {
                format!(
                    "the prompt {} of the MCP server {}",
                    prompt.prompt, prompt.server
                )
            } else {
                description
            },
            source: CommandSource::Mcp,
            kind: CommandKind::Turn(TurnCommand::McpPrompt(prompt)),
        }
    }
}

/// A typed MCP prompt line: which prompt, with which argument values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPromptCall {
    /// The server's name under `mcpServers`.
    pub server: String,
    /// The prompt's own name on its server.
    pub prompt: String,
    /// The values the line gave, by argument name, in the prompt's order.
    pub arguments: Vec<(String, String)>,
    /// The required arguments the line left out.
    pub missing: Vec<String>,
    /// The line as the transcript shows it.
    pub shown: String,
}

impl McpPromptCall {
    /// The call of `prompt` with the words of `line`: a `"quoted phrase"` is one word, and the
    /// last argument takes whatever words are left, so a free-text argument needs no quotes.
    pub fn new(prompt: &McpPrompt, line: &str, shown: String) -> McpPromptCall {
        let mut words = split_words(line);
        let mut arguments = Vec::new();
        let count = prompt.arguments.len();
        for (index, argument) in prompt.arguments.iter().enumerate() {
            if words.is_empty() {
                break;
            }
            let value = if index + 1 == count {
                std::mem::take(&mut words).join(" ")
            } else {
                words.remove(0)
            };
            arguments.push((argument.name.clone(), value));
        }
        let missing = prompt
            .arguments
            .iter()
            .filter(|argument| argument.required)
            .filter(|argument| !arguments.iter().any(|(name, _)| *name == argument.name))
            .map(|argument| argument.name.clone())
            .collect();
        McpPromptCall {
            server: prompt.server.clone(),
            prompt: prompt.prompt.clone(),
            arguments,
            missing,
            shown,
        }
    }

    /// Why the line cannot run as it is (a required argument left out), if it cannot.
    pub fn error(&self) -> Option<CommandError> {
        (!self.missing.is_empty()).then(|| CommandError::MissingArguments {
            name: self
                .shown
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .trim_start_matches('/')
                .to_string(),
            missing: self.missing.join(", "),
        })
    }
}

/// The words of `line`: split at whitespace, a double-quoted phrase kept as one word.
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            c if c.is_whitespace() && !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// The session's MCP servers as a face reports them (`/mcp`): each server, its state, its
/// tool count and, for one that failed, why. The MCP client writes the text; a face shows it.
pub trait McpReport: Send + Sync + std::fmt::Debug {
    /// The report's text, as things stand now.
    fn report(&self) -> String;

    /// `/mcp <arguments>` for a face that cannot wait (the interactive UI): the report when
    /// there are none, else the action (`reconnect`, `enable`, `disable` a server) started in
    /// the background, the text saying what was started (and that `/mcp` shows how it went)
    /// or why it was not (an unknown server names the configured ones).
    fn act(&self, arguments: &str) -> String;

    /// Each server's state as `/doctor` checks it, as things stand now.
    fn health(&self) -> Vec<(String, crate::reports::doctor::McpHealth)>;
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::commands::{CommandTable, Resolved};

    fn greet() -> CommandEntry {
        CommandEntry::mcp_prompt(
            "mcp__test__greet".into(),
            "Greets someone.".into(),
            McpPrompt {
                server: "test".into(),
                prompt: "greet".into(),
                arguments: vec![
                    McpPromptArgument {
                        name: "name".into(),
                        required: true,
                    },
                    McpPromptArgument {
                        name: "note".into(),
                        required: false,
                    },
                ],
            },
        )
    }

    fn resolve(line: &str) -> Resolved {
        CommandTable::built_in()
            .with_mcp_prompts([greet()])
            .resolve(line, std::path::Path::new("."))
    }

    #[test]
    fn words_fill_the_arguments_in_order_and_the_last_takes_the_rest() {
        assert_eq!(greet().usage(), "/mcp__test__greet <name> [note]");
        assert_eq!(
            resolve("/mcp__test__greet Ada be very kind"),
            Resolved::McpPrompt(McpPromptCall {
                server: "test".into(),
                prompt: "greet".into(),
                arguments: vec![
                    ("name".into(), "Ada".into()),
                    ("note".into(), "be very kind".into())
                ],
                missing: Vec::new(),
                shown: "/mcp__test__greet Ada be very kind".into(),
            })
        );
        let Resolved::McpPrompt(quoted) = resolve("/mcp__test__greet \"Ada Lovelace\" hi") else {
            panic!("not a prompt");
        };
        assert_eq!(
            quoted.arguments,
            vec![
                ("name".into(), "Ada Lovelace".into()),
                ("note".into(), "hi".into())
            ]
        );
    }

    #[test]
    fn a_missing_required_argument_is_refused_by_name() {
        let resolved = resolve("/mcp__test__greet");
        assert_eq!(
            resolved.error(),
            Some(CommandError::MissingArguments {
                name: "mcp__test__greet".into(),
                missing: "name".into(),
            })
        );
        assert_eq!(
            resolved.error().unwrap().to_string(),
            "/mcp__test__greet needs the argument name: give the values in order after the name"
        );
    }

    #[test]
    fn a_command_of_the_files_keeps_its_name() {
        let mut table = CommandTable::built_in();
        let taken = CommandEntry::mcp_prompt(
            "help".into(),
            String::new(),
            McpPrompt {
                server: "s".into(),
                prompt: "help".into(),
                arguments: Vec::new(),
            },
        );
        assert!(!table.add(taken));
        assert_eq!(
            table.find("help").map(|entry| entry.source),
            Some(CommandSource::BuiltIn)
        );
    }
}
