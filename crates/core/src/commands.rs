//! Slash commands: one table that every face (the TUI, `cairn -p`, the SDK's stream-json input)
//! resolves a typed line with, so that a command means the same thing wherever it is typed.
//!
//! The table holds the built-in commands and the custom commands of `.claude/commands/` (the
//! project's, then the user's). Each entry says what it is:
//!
//! - a **report** answers in plain text on any face (`/help`, `/cost`, `/context`,
//!   `/status`; the texts are in [`crate::reports`]);
//! - a **turn** becomes the engine's work on every face (`/compact [instructions]`, `/init`,
//!   a custom command);
//! - an **interactive** command only the interactive UI can carry out (`/model`, `/resume`, …):
//!   another face refuses it by name ([`CommandError::InteractiveOnly`]) rather than sending it
//!   to the model.
//!
//! The skills of `.claude/skills/` follow, each a turn that loads it ([`CommandEntry::skill`]).
//! Later sources come in as entries of another [`CommandSource`] through
//! [`CommandTable::add`]; the line is still parsed once, here. The MCP servers' prompts are
//! one ([`CommandEntry::mcp_prompt`], [`CommandTable::with_mcp_prompts`]): their text is on
//! the server, so such a line resolves to [`Resolved::McpPrompt`], which the face fetches.
//!
//! # Which lines are commands
//!
//! A line is a command line when, leading whitespace aside, it starts with `/` and its first
//! word holds no other `/`. So `/compact keep the notes` is a command and `/usr/bin/foo is
//! broken` is an ordinary message: a command name never holds a `/` (a custom command in a
//! folder is named `git:commit`), and a path typed first on a line is something to talk about.
//!
//! ```
//! use cairn_core::commands::{CommandTable, CommandTurn, Report, Resolved};
//!
//! let table = CommandTable::built_in();
//! let cwd = std::path::Path::new(".");
//! assert_eq!(
//!     table.resolve("/cost", cwd),
//!     Resolved::Report { report: Report::Cost, arguments: String::new() }
//! );
//! assert_eq!(
//!     table.resolve("/compact keep the API notes", cwd),
//!     Resolved::Turn(CommandTurn::Compact { instructions: Some("keep the API notes".into()) })
//! );
//! assert_eq!(table.resolve("/usr/bin/foo is broken", cwd), Resolved::Message);
//! ```

use std::path::Path;

use cairn_context::commands::{CommandScope, CommandSet, CustomCommand, load_commands};
use cairn_context::skills::{Skill, SkillScope, load_skills};
use cairn_protocol::{ContentBlock, Op};

use crate::assembly::Turn;

mod built_in;
mod mcp_prompts;

pub use built_in::{INIT_PROMPT, INIT_TAG};
pub use mcp_prompts::{McpPrompt, McpPromptArgument, McpPromptCall, McpReport};

/// Where a command comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandSource {
    /// Built into cairn; a built-in wins over a custom command of the same name.
    BuiltIn,
    /// A custom command of the project (`.claude/commands/`).
    Project,
    /// A custom command of the user (`~/.claude/commands/`).
    User,
    /// A prompt of an MCP server (`/mcp__<server>__<prompt>`).
    Mcp,
}

impl From<CommandScope> for CommandSource {
    fn from(scope: CommandScope) -> CommandSource {
        match scope {
            CommandScope::Project => CommandSource::Project,
            CommandScope::User => CommandSource::User,
        }
    }
}

/// A command that answers in plain text, on any face.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// The commands, from the table.
    Help,
    /// Tokens, cost and time of the session.
    Cost,
    /// What fills the context window, by category.
    Context,
    /// Version, model, auth, permission mode, directory, session, settings.
    Status,
    /// The sub-agents the `Agent` tool can start: the roles and the custom agents.
    Agents,
    /// Checks of the installation: credentials, settings, sandbox, git.
    Doctor,
    /// The skills of `.claude/skills/` ([`crate::skill::skills_report`]).
    Skills,
    /// The MCP servers: each one's state, tool count and, for a failed one, the reason.
    Mcp,
}

/// A command only the interactive UI can carry out: it acts on the screen, the running
/// session or files the user edits while cairn waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interactive {
    /// Leave cairn.
    Exit,
    /// Start a fresh conversation.
    Clear,
    /// Show the model, or switch to the one named.
    Model,
    /// Write the conversation as Markdown.
    Export,
    /// Add a directory to the workspace for this session.
    AddDir,
    /// List or change the permission rules.
    Permissions,
    /// List the instruction and memory files, or edit one.
    Memory,
    /// Continue another session of this directory.
    Resume,
    /// The merged settings and where each value came from.
    Config,
}

/// The work a turn command becomes.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnCommand {
    /// `/compact [instructions]`: the engine summarizes the conversation ([`Op::compact`]).
    Compact,
    /// `/init`: the model studies the project and writes or improves CLAUDE.md.
    Init,
    /// A custom command: its expansion is the turn ([`Turn::custom_command`]).
    Custom(Box<CustomCommand>),
    /// A skill used by its name: its text is the turn ([`Turn::skill`]).
    Skill(Box<Skill>),
    /// An MCP server's prompt: what the server returns for it is the turn.
    McpPrompt(McpPrompt),
}

/// What a command is, which decides what each face does with it.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandKind {
    /// Answers in plain text on any face.
    Report(Report),
    /// Becomes the engine's work on every face.
    Turn(TurnCommand),
    /// Only the interactive UI can do it.
    Interactive(Interactive),
}

/// One command of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandEntry {
    /// Without the slash: `model`, `git:commit`.
    pub name: String,
    /// Other names it answers to (`quit` for `exit`).
    pub aliases: Vec<String>,
    /// What follows the name, as `/help` writes it: `[name]`, `<path>`; `None` when it takes
    /// nothing.
    pub argument_hint: Option<String>,
    /// What it does, in one line.
    pub description: String,
    /// Where it comes from.
    pub source: CommandSource,
    /// What it is.
    pub kind: CommandKind,
}

impl CommandEntry {
    /// The entry of a custom command: its `description`, else its template's first line (as
    /// Claude Code shows it), cut to a line's length.
    pub fn custom(command: CustomCommand) -> CommandEntry {
        CommandEntry {
            name: command.name.clone(),
            aliases: Vec::new(),
            argument_hint: command.argument_hint.clone(),
            description: describe(&command),
            source: command.scope.into(),
            kind: CommandKind::Turn(TurnCommand::Custom(Box::new(command))),
        }
    }

    /// The entry of a skill: `/<name>` loads it for the turn, as the `Skill` tool would.
    pub fn skill(skill: Skill) -> CommandEntry {
        CommandEntry {
            name: skill.name.clone(),
            aliases: Vec::new(),
            argument_hint: skill.argument_hint.clone(),
            description: cut_to_line(skill.description.trim().to_string()),
            source: match skill.scope {
                SkillScope::Project => CommandSource::Project,
                SkillScope::User => CommandSource::User,
            },
            kind: CommandKind::Turn(TurnCommand::Skill(Box::new(skill))),
        }
    }

    /// How it is typed: `/model [name]`.
    pub fn usage(&self) -> String {
        match &self.argument_hint {
            Some(hint) => format!("/{} {hint}", self.name),
            None => format!("/{}", self.name),
        }
    }

    /// Whether `name` is its name or one of its aliases.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.iter().any(|alias| alias == name)
    }
}

/// What a custom command does, in at most a line's length.
fn describe(command: &CustomCommand) -> String {
    let text = match &command.description {
        Some(description) => description.trim().to_string(),
        None => command
            .template
            .lines()
            .map(|line| line.trim().trim_start_matches('#').trim())
            .find(|line| !line.is_empty())
            .unwrap_or("custom command")
            .to_string(),
    };
    cut_to_line(text)
}

/// `text` in at most a line's length.
fn cut_to_line(text: String) -> String {
    const MAX: usize = 60;
    if text.chars().count() > MAX {
        let cut: String = text.chars().take(MAX - 1).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// The commands a line can name: the built-ins first, then the custom commands, then any
/// entry added later. The first entry that answers to a name wins.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandTable {
    entries: Vec<CommandEntry>,
    /// The command files that could not be read, as warnings.
    unread: Vec<String>,
}

impl CommandTable {
    /// The built-in commands alone.
    pub fn built_in() -> CommandTable {
        CommandTable {
            entries: built_in::entries(),
            unread: Vec::new(),
        }
    }

    /// The built-ins and the custom commands of `set` (a custom command named like a
    /// built-in is left out: the built-in wins, as in Claude Code).
    pub fn with_custom(set: CommandSet) -> CommandTable {
        let mut table = CommandTable::built_in();
        table.unread = set.unread.iter().map(ToString::to_string).collect();
        for command in set.commands {
            table.add(CommandEntry::custom(command));
        }
        table
    }

    /// The built-ins, the custom commands on disk now (the project's `.claude/commands/`
    /// under `cwd` first, then the user's under `home`), then the skills (a command of the
    /// same name wins). Read afresh at each call, so that a command file added while cairn
    /// runs works at once.
    pub fn load(cwd: &Path, home: &Path) -> CommandTable {
        let mut table = CommandTable::with_custom(load_commands(cwd, Some(home)));
        let skills = load_skills(cwd, Some(home));
        table
            .unread
            .extend(skills.problems.iter().map(ToString::to_string));
        for skill in skills.skills {
            table.add(CommandEntry::skill(skill));
        }
        table
    }

    /// The table with the MCP prompts of `entries` added after everything else (a command
    /// of the files keeps its name).
    pub fn with_mcp_prompts(mut self, entries: impl IntoIterator<Item = CommandEntry>) -> Self {
        for entry in entries {
            self.add(entry);
        }
        self
    }

    /// Adds `entry` unless its name or an alias is taken already (the earlier entry wins);
    /// says whether it was added. The way in for later sources (skills, MCP prompts).
    pub fn add(&mut self, entry: CommandEntry) -> bool {
        let taken = std::iter::once(&entry.name)
            .chain(&entry.aliases)
            .any(|name| self.find(name).is_some());
        if !taken {
            self.entries.push(entry);
        }
        !taken
    }

    /// Every entry, in the order `/help` lists them.
    pub fn entries(&self) -> &[CommandEntry] {
        &self.entries
    }

    /// The command files that could not be read (a FIFO, a file too large), as warnings.
    pub fn unread(&self) -> &[String] {
        &self.unread
    }

    /// The entry that answers to `name` (without the slash).
    pub fn find(&self, name: &str) -> Option<&CommandEntry> {
        self.entries.iter().find(|entry| entry.answers_to(name))
    }

    /// What `line` asks for, a custom command's turn being expanded in `cwd`.
    pub fn resolve(&self, line: &str, cwd: &Path) -> Resolved {
        let Some(CommandLine { name, arguments }) = command_line(line) else {
            return Resolved::Message;
        };
        let Some(entry) = self.find(name) else {
            return Resolved::Unknown {
                name: name.to_string(),
                warnings: self.unread.clone(),
            };
        };
        match &entry.kind {
            CommandKind::Report(report) => Resolved::Report {
                report: *report,
                arguments: arguments.to_string(),
            },
            CommandKind::Interactive(command) => Resolved::Interactive {
                command: *command,
                name: name.to_string(),
                arguments: arguments.to_string(),
            },
            CommandKind::Turn(TurnCommand::Compact) => Resolved::Turn(CommandTurn::Compact {
                instructions: (!arguments.is_empty()).then(|| arguments.to_string()),
            }),
            CommandKind::Turn(TurnCommand::Init) => Resolved::Turn(CommandTurn::Prompt {
                turn: Turn::message(vec![
                    ContentBlock::text(INIT_TAG),
                    ContentBlock::text(INIT_PROMPT),
                ]),
                shown: "/init".to_string(),
                source: entry.source,
            }),
            CommandKind::Turn(TurnCommand::Custom(command)) => {
                Resolved::Turn(CommandTurn::Prompt {
                    turn: Turn::custom_command(command, arguments, cwd),
                    shown: shown_line(name, arguments),
                    source: entry.source,
                })
            }
            CommandKind::Turn(TurnCommand::Skill(skill)) => Resolved::Turn(CommandTurn::Prompt {
                turn: Turn::skill(skill, arguments),
                shown: shown_line(name, arguments),
                source: entry.source,
            }),
            CommandKind::Turn(TurnCommand::McpPrompt(prompt)) => Resolved::McpPrompt(
                McpPromptCall::new(prompt, arguments, shown_line(name, arguments)),
            ),
        }
    }
}

/// The line as the transcript shows it: the name and the arguments, spaces at the ends gone.
fn shown_line(name: &str, arguments: &str) -> String {
    if arguments.is_empty() {
        format!("/{name}")
    } else {
        format!("/{name} {arguments}")
    }
}

/// What a typed line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    /// Not a command: an ordinary message, sent as typed.
    Message,
    /// The engine's work: a compaction or a prompt.
    Turn(CommandTurn),
    /// A report, answered in plain text ([`crate::reports`]).
    Report {
        /// Which one.
        report: Report,
        /// What followed the name, trimmed.
        arguments: String,
    },
    /// A command only the interactive UI can carry out.
    Interactive {
        /// Which one.
        command: Interactive,
        /// The name as typed (`quit` for [`Interactive::Exit`]).
        name: String,
        /// What followed the name, trimmed.
        arguments: String,
    },
    /// An MCP server's prompt, for the face to fetch from its server and send as the turn.
    McpPrompt(McpPromptCall),
    /// A name no command answers to.
    Unknown {
        /// The name as typed, without the slash.
        name: String,
        /// The command files that could not be read: one of them may be the command asked
        /// for. For the face to show.
        warnings: Vec<String>,
    },
}

impl Resolved {
    /// What a face says when it does not run the line: an unknown name, or (for a face
    /// without the interactive UI) an interactive-only command. `None` for the rest.
    pub fn error(&self) -> Option<CommandError> {
        match self {
            Resolved::Interactive { name, .. } => {
                Some(CommandError::InteractiveOnly { name: name.clone() })
            }
            Resolved::Unknown { name, .. } => Some(CommandError::Unknown { name: name.clone() }),
            Resolved::McpPrompt(call) => call.error(),
            Resolved::Message | Resolved::Turn(_) | Resolved::Report { .. } => None,
        }
    }
}

/// Why a command line was not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// The command acts on the interactive UI, which this face does not have.
    #[error("/{name} works only in cairn's interactive UI (start cairn without -p to use it)")]
    InteractiveOnly {
        /// The name as typed.
        name: String,
    },
    /// No command has this name.
    #[error("Unknown command: /{name}. Type /help for the list of commands.")]
    Unknown {
        /// The name as typed.
        name: String,
    },
    /// An MCP prompt's line left out arguments its server needs.
    #[error("/{name} needs the argument {missing}: give the values in order after the name")]
    MissingArguments {
        /// The name as typed.
        name: String,
        /// The arguments left out, comma-separated.
        missing: String,
    },
}

/// The engine's work a command line becomes.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandTurn {
    /// Summarize the conversation now, with the instructions given.
    Compact {
        /// What the summary should keep or focus on; `None` when the line gives none.
        instructions: Option<String>,
    },
    /// A prompt the command expands to (`/init`, a custom command).
    Prompt {
        /// What the model gets, with the command's model and allowed tools.
        turn: Turn,
        /// What the transcript shows instead of the expansion: the line as typed.
        shown: String,
        /// Where the command comes from (a face adds what the user attached to a custom
        /// command's expansion, which it does not do for a built-in's prompt).
        source: CommandSource,
    },
}

impl CommandTurn {
    /// The operation that starts the work.
    pub fn into_op(self) -> Op {
        match self {
            CommandTurn::Compact { instructions } => Op::compact(instructions),
            CommandTurn::Prompt { turn, .. } => turn.into_op(),
        }
    }
}

/// A command line split at its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandLine<'a> {
    /// Without the slash; empty for a lone `/`.
    pub name: &'a str,
    /// What follows the name, trimmed.
    pub arguments: &'a str,
}

/// `line` split at its command name, or `None` when it is an ordinary message (see the
/// module's rule: a leading `/`, and no other `/` in the first word).
///
/// ```
/// use cairn_core::commands::{CommandLine, command_line};
///
/// assert_eq!(
///     command_line("  /model  opus "),
///     Some(CommandLine { name: "model", arguments: "opus" })
/// );
/// assert_eq!(command_line("/usr/bin/foo is broken"), None);
/// assert_eq!(command_line("please /compact"), None);
/// ```
pub fn command_line(line: &str) -> Option<CommandLine<'_>> {
    let body = line.trim().strip_prefix('/')?;
    let (name, arguments) = match body.split_once(char::is_whitespace) {
        Some((name, rest)) => (name, rest.trim()),
        None => (body, ""),
    };
    (!name.contains('/')).then_some(CommandLine { name, arguments })
}

/// The command name being typed when `text` is a slash and a name alone (nothing after it),
/// for a face's completion menu: `Some("mo")` for `/mo`, `Some("")` for `/`.
pub fn completing_name(text: &str) -> Option<&str> {
    let name = text.strip_prefix('/')?;
    (!name.contains(char::is_whitespace) && !name.contains('/')).then_some(name)
}

/// What `line` asks for, with the custom commands read afresh from `cwd` and `home` when it
/// is a command line (an ordinary message reads nothing).
pub fn resolve(line: &str, cwd: &Path, home: &Path) -> Resolved {
    if command_line(line).is_none() {
        return Resolved::Message;
    }
    CommandTable::load(cwd, home).resolve(line, cwd)
}

#[cfg(test)]
mod tests;
