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
use cairn_protocol::{ContentBlock, Op};

use crate::commands;

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

/// What looking up the custom command of a typed line found.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandLookup {
    /// The command's turn; `None` when the line names no custom command (it is then an
    /// ordinary message, or a built-in the face handles).
    pub turn: Option<Turn>,
    /// When no command was found: the command files that could not be read (a FIFO, a file
    /// too large), since one of them may be the command asked for. For the face to show.
    pub warnings: Vec<String>,
}

/// What a `/compact [instructions]` line asks for: `Some(instructions)` (none when the line
/// gives none), or `None` when the line is something else. `/compact` is built in, so it
/// wins over a custom command of the same name, as in Claude Code. The line is read as
/// [`commands::command_line`] reads every line.
///
/// ```
/// use cairn_core::assembly::compact_request;
/// assert_eq!(compact_request("/compact"), Some(None));
/// assert_eq!(compact_request(" /compact keep the API notes "), Some(Some("keep the API notes".into())));
/// assert_eq!(compact_request("/compaction"), None);
/// assert_eq!(compact_request("please /compact"), None);
/// ```
pub fn compact_request(line: &str) -> Option<Option<String>> {
    let command = commands::command_line(line)?;
    let table = commands::CommandTable::built_in();
    let entry = table.find(command.name)?;
    matches!(
        entry.kind,
        commands::CommandKind::Turn(commands::TurnCommand::Compact)
    )
    .then(|| (!command.arguments.is_empty()).then(|| command.arguments.to_string()))
}

/// The turn for `line` when it names a command that becomes a prompt: a custom command
/// (`/name arguments`, the project's `.claude/commands/` first, then the user's under
/// `home`), read afresh so that a command file added while cairn runs works at once, or
/// `/init`. See [`Turn::custom_command`] and [`commands::resolve`], which tells the other
/// cases apart.
pub fn custom_command_turn(line: &str, cwd: &Path, home: &Path) -> CommandLookup {
    match commands::resolve(line, cwd, home) {
        commands::Resolved::Turn(commands::CommandTurn::Prompt { turn, .. }) => CommandLookup {
            turn: Some(turn),
            warnings: Vec::new(),
        },
        commands::Resolved::Unknown { warnings, .. } => CommandLookup {
            turn: None,
            warnings,
        },
        commands::Resolved::Message
        | commands::Resolved::Turn(commands::CommandTurn::Compact { .. })
        | commands::Resolved::Report { .. }
        | commands::Resolved::Interactive { .. } => CommandLookup {
            turn: None,
            warnings: Vec::new(),
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// A project and a home directory, each with its own commands.
    struct Dirs {
        project: tempfile::TempDir,
        home: tempfile::TempDir,
    }

    impl Dirs {
        fn new() -> Dirs {
            Dirs {
                project: tempfile::tempdir().unwrap(),
                home: tempfile::tempdir().unwrap(),
            }
        }

        fn project_command(&self, file: &str, text: &str) {
            write(
                &self.project.path().join(".claude/commands").join(file),
                text,
            );
        }

        fn user_command(&self, file: &str, text: &str) {
            write(&self.home.path().join(".claude/commands").join(file), text);
        }

        fn lookup(&self, line: &str) -> CommandLookup {
            custom_command_turn(line, self.project.path(), self.home.path())
        }
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_command_is_expanded_after_its_tag_with_its_model_and_allowed_tools() {
        let dirs = Dirs::new();
        dirs.project_command(
            "shout.md",
            "---\nmodel: haiku\nallowed-tools: Bash(echo:*), Read\n---\nShout $ARGUMENTS, then $2.\n",
        );
        let lookup = dirs.lookup("  /shout hello   world ");
        let turn = Turn {
            content: vec![
                ContentBlock::text(
                    "<command-name>/shout</command-name>\n<command-args>hello   world</command-args>",
                ),
                ContentBlock::text("Shout hello   world, then world."),
            ],
            model: Some("claude-haiku-4-5".into()),
            allowed_tools: vec!["Bash(echo:*)".into(), "Read".into()],
        };
        assert_eq!(
            lookup,
            CommandLookup {
                turn: Some(turn),
                warnings: Vec::new(),
            }
        );
    }

    #[test]
    fn a_model_id_is_kept_and_a_plain_command_has_no_model_or_tools() {
        let dirs = Dirs::new();
        dirs.user_command(
            "git/log.md",
            "---\nmodel: claude-3-5-haiku-20241022\n---\nShow the log.",
        );
        dirs.user_command("plain.md", "Inline @notes.txt here");
        write(&dirs.project.path().join("notes.txt"), "the notes\n");

        let turn = dirs.lookup("/git:log").turn.unwrap();
        assert_eq!(turn.model.as_deref(), Some("claude-3-5-haiku-20241022"));
        assert_eq!(
            turn.content[0],
            ContentBlock::text(
                "<command-name>/git:log</command-name>\n<command-args></command-args>"
            )
        );

        let turn = dirs.lookup("/plain").turn.unwrap();
        assert_eq!(
            turn,
            Turn {
                content: vec![
                    ContentBlock::text(
                        "<command-name>/plain</command-name>\n<command-args></command-args>"
                    ),
                    ContentBlock::text(
                        "Inline \nContents of notes.txt:\n```\nthe notes\n```\n here"
                    ),
                ],
                model: None,
                allowed_tools: Vec::new(),
            }
        );
    }

    #[test]
    fn a_project_command_wins_over_the_users_of_the_same_name() {
        let dirs = Dirs::new();
        dirs.user_command("review.md", "The user's review.");
        dirs.project_command("review.md", "The project's review.");
        let turn = dirs.lookup("/review").turn.unwrap();
        assert_eq!(turn.content[1], ContentBlock::text("The project's review."));
    }

    #[test]
    fn a_line_that_names_no_command_finds_none() {
        let dirs = Dirs::new();
        dirs.project_command("greet.md", "Say hello.");
        let none = CommandLookup {
            turn: None,
            warnings: Vec::new(),
        };
        assert_eq!(dirs.lookup("greet"), none, "not a slash line");
        assert_eq!(dirs.lookup("/greeting"), none);
        assert_eq!(dirs.lookup("/"), none);
        assert_eq!(dirs.lookup("please /greet"), none);
    }

    #[test]
    fn unreadable_command_files_are_returned_as_warnings_when_the_command_is_not_found() {
        let dirs = Dirs::new();
        dirs.project_command("greet.md", "Say hello.");
        let endless = dirs.project.path().join(".claude/commands/endless.md");
        std::os::unix::fs::symlink("/dev/zero", &endless).unwrap();

        let lookup = dirs.lookup("/endless");
        assert_eq!(lookup.turn, None);
        assert_eq!(lookup.warnings.len(), 1, "{:?}", lookup.warnings);
        assert!(
            lookup.warnings[0].contains("endless.md was skipped"),
            "the warning names the file: {:?}",
            lookup.warnings
        );

        let found = dirs.lookup("/greet");
        assert_eq!(
            found.warnings,
            Vec::<String>::new(),
            "found: nothing to explain"
        );
        assert!(found.turn.is_some());
    }

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
