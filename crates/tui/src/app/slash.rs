//! Slash commands: the built-in ones and the user's custom commands.

use cairn_context::commands::CustomCommand;

/// What a line starting with `/` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand<'a> {
    Help,
    Exit,
    /// Start a fresh conversation (a new session).
    Clear,
    /// Show the model, or switch to the one named.
    Model(Option<&'a str>),
    Cost,
    Status,
    /// Write the conversation as Markdown to the file named; without one, offer
    /// `cairn-<session>.md` in the input box, saying where it would go.
    Export(&'a str),
    Doctor,
    Context,
    /// Add a directory to the workspace for this session.
    AddDir(&'a str),
    /// The permission rules in force and where each came from, or a change to them
    /// (`allow|ask|deny <rule>`, `remove <rule>`).
    Permissions(&'a str),
    /// List the instruction files and the memory files, or open one in the editor: `project`
    /// (./CLAUDE.md), `user` (~/.claude/CLAUDE.md), `local` (./CLAUDE.local.md) or a memory
    /// file by name.
    Memory(&'a str),
    /// Continue another session of this directory: the one named, or one picked from a list.
    Resume(&'a str),
    /// The merged settings, with the file each value came from.
    Config,
    /// Ask the model to write or improve the project's CLAUDE.md.
    Init,
    /// Summarize the conversation now, with optional instructions for the summary.
    Compact(Option<&'a str>),
    /// A custom command from `.claude/commands`, with its arguments.
    Custom(&'a CustomCommand, &'a str),
    Unknown(&'a str),
}

/// The built-in commands and what each does, for `/help`.
pub const BUILT_INS: &[(&str, &str)] = &[
    ("/help", "show this list"),
    ("/exit", "leave cairn (also /quit, Ctrl+D on an empty line)"),
    (
        "/clear",
        "start a fresh conversation (the current one stays resumable)",
    ),
    ("/model [name]", "show the model, or switch to another"),
    ("/cost", "tokens used and cost of this session"),
    (
        "/status",
        "version, model, permission mode, directory, session, settings",
    ),
    (
        "/export [file]",
        "write the conversation as Markdown (without a file: says where, Enter writes it)",
    ),
    (
        "/doctor",
        "check the installation: credentials, settings, sandbox, git",
    ),
    ("/context", "what fills the context window, by category"),
    (
        "/add-dir <path>",
        "add a directory to the workspace for this session",
    ),
    (
        "/permissions",
        "the allow, ask and deny rules in force and where each came from",
    ),
    (
        "/permissions allow|ask|deny <rule>",
        "add a rule (saved to .claude/settings.local.json)",
    ),
    (
        "/permissions remove <rule>",
        "remove a rule, from the settings file it is in too",
    ),
    (
        "/memory [project|user|local|<file>]",
        "list the instruction and memory files, or edit one in $EDITOR (# <text> saves a memory)",
    ),
    (
        "/resume [session]",
        "continue another conversation of this directory (a list without an id)",
    ),
    ("/config", "the merged settings and the file each came from"),
    (
        "/compact [instructions]",
        "summarize the conversation to free the context window",
    ),
    (
        "/init",
        "ask the model to write or improve CLAUDE.md for this project",
    ),
];

/// The line `/init` is shown as, in the tag of a command (Claude Code's), before its prompt.
pub const INIT_TAG: &str = "<command-name>/init</command-name>\n<command-args></command-args>";

/// The note under `/init` in the transcript, instead of the whole prompt.
pub const INIT_NOTE: &str = "Asked the model to study the project and write or improve CLAUDE.md.";

/// What `/init` sends: the model studies the repository and writes or improves CLAUDE.md.
pub const INIT_PROMPT: &str = "Please analyse this repository and write a CLAUDE.md file at its \
root, or improve the existing one. It is read at the start of every session by coding agents \
working here, so keep it concise and specific to this project. Include:\n\n\
1. The commands to build, lint and test, including how to run a single test.\n\
2. An overview of the architecture: the main parts, where they live, and how they fit together \
(only what needs reading several files to understand).\n\
3. Conventions a newcomer would get wrong: code style, naming, error handling, testing habits.\n\n\
Take what you can from the README, build files, and any existing agent or editor rule files. \
Do not list every file or invent advice that is not backed by the code.";

/// Parses `line` (which starts with `/`) against the built-ins and `custom`.
pub fn parse<'a>(line: &'a str, custom: &'a [CustomCommand]) -> SlashCommand<'a> {
    let line = line.trim();
    let body = line.strip_prefix('/').unwrap_or(line);
    let (name, arguments) = match body.split_once(char::is_whitespace) {
        Some((name, rest)) => (name, rest.trim()),
        None => (body, ""),
    };
    match name {
        "help" => SlashCommand::Help,
        "exit" | "quit" => SlashCommand::Exit,
        "clear" => SlashCommand::Clear,
        "permissions" | "allowed-tools" => SlashCommand::Permissions(arguments),
        "memory" => SlashCommand::Memory(arguments),
        "resume" | "continue" => SlashCommand::Resume(arguments),
        "config" => SlashCommand::Config,
        "init" => SlashCommand::Init,
        "compact" => SlashCommand::Compact((!arguments.is_empty()).then_some(arguments)),
        "model" => SlashCommand::Model((!arguments.is_empty()).then_some(arguments)),
        "cost" => SlashCommand::Cost,
        "status" => SlashCommand::Status,
        "export" => SlashCommand::Export(arguments),
        "doctor" => SlashCommand::Doctor,
        "context" => SlashCommand::Context,
        "add-dir" => SlashCommand::AddDir(arguments),
        _ => match custom.iter().find(|command| command.name == name) {
            Some(command) => SlashCommand::Custom(command, arguments),
            None => SlashCommand::Unknown(name),
        },
    }
}

/// What a custom command does: its `description`, else its template's first line (as
/// Claude Code shows it), cut to a line's length.
pub fn describe(command: &CustomCommand) -> String {
    const MAX: usize = 60;
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
    if text.chars().count() > MAX {
        let cut: String = text.chars().take(MAX - 1).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// The widest command column in `/help`; a longer usage puts its description on the next line.
const HELP_COLUMN: usize = 20;

/// The `/help` text: built-ins, then custom commands with their descriptions, in one column.
pub fn help_text(custom: &[CustomCommand]) -> String {
    let mut rows: Vec<(String, String)> = BUILT_INS
        .iter()
        .map(|(name, what)| ((*name).to_string(), (*what).to_string()))
        .collect();
    for command in custom {
        let name = match &command.argument_hint {
            Some(hint) => format!("/{} {hint}", command.name),
            None => format!("/{}", command.name),
        };
        rows.push((name, describe(command)));
    }
    let mut text = String::from("Commands:");
    for (name, what) in rows {
        if name.chars().count() > HELP_COLUMN {
            text.push_str(&format!("\n  {name}\n  {:HELP_COLUMN$} {what}", ""));
        } else {
            text.push_str(&format!("\n  {name:<HELP_COLUMN$} {what}"));
        }
    }
    text.push_str(
        "\nKeys: Enter sends · Ctrl+J, Alt+Enter or \\ then Enter for a new line · \
         Esc interrupts · Ctrl+O shows the whole transcript · Ctrl+C clears, twice to exit",
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_context::commands::CommandScope;
    use pretty_assertions::assert_eq;

    fn greet() -> CustomCommand {
        CustomCommand {
            name: "greet".into(),
            scope: CommandScope::Project,
            path: "greet.md".into(),
            description: Some("say hello".into()),
            argument_hint: None,
            allowed_tools: Vec::new(),
            model: None,
            template: "Say hello to $ARGUMENTS".into(),
        }
    }

    #[test]
    fn parses_built_ins_custom_and_unknown_commands() {
        let custom = [greet()];
        assert_eq!(parse("/help", &custom), SlashCommand::Help);
        assert_eq!(parse("/quit", &custom), SlashCommand::Exit);
        assert_eq!(parse("/model", &custom), SlashCommand::Model(None));
        assert_eq!(
            parse("/model  opus ", &custom),
            SlashCommand::Model(Some("opus"))
        );
        assert_eq!(
            parse("/greet Ada Lovelace", &custom),
            SlashCommand::Custom(&custom[0], "Ada Lovelace")
        );
        assert_eq!(parse("/export", &custom), SlashCommand::Export(""));
        assert_eq!(
            parse("/export  chat.md ", &custom),
            SlashCommand::Export("chat.md")
        );
        assert_eq!(parse("/doctor", &custom), SlashCommand::Doctor);
        assert_eq!(parse("/context", &custom), SlashCommand::Context);
        assert_eq!(
            parse("/add-dir ../lib", &custom),
            SlashCommand::AddDir("../lib")
        );
        assert_eq!(parse("/clear", &custom), SlashCommand::Clear);
        assert_eq!(
            parse("/permissions", &custom),
            SlashCommand::Permissions("")
        );
        assert_eq!(
            parse("/permissions deny Bash(rm:*)", &custom),
            SlashCommand::Permissions("deny Bash(rm:*)")
        );
        assert_eq!(parse("/memory user", &custom), SlashCommand::Memory("user"));
        assert_eq!(parse("/resume", &custom), SlashCommand::Resume(""));
        assert_eq!(parse("/resume abc", &custom), SlashCommand::Resume("abc"));
        assert_eq!(parse("/config", &custom), SlashCommand::Config);
        assert_eq!(parse("/init", &custom), SlashCommand::Init);
        assert_eq!(parse("/compact", &custom), SlashCommand::Compact(None));
        assert_eq!(
            parse("/compact keep the API notes", &custom),
            SlashCommand::Compact(Some("keep the API notes"))
        );
        assert_eq!(parse("/nope x", &custom), SlashCommand::Unknown("nope"));
    }

    #[test]
    fn every_command_in_help_is_built_in() {
        for (usage, _) in BUILT_INS {
            let command = parse(usage, &[]);
            assert!(
                !matches!(command, SlashCommand::Unknown(_)),
                "{usage} is listed in /help but does not parse"
            );
        }
    }

    #[test]
    fn help_descriptions_line_up() {
        let help = help_text(&[greet()]);
        let column = |line: &str| line.find("show this list");
        let first = help.lines().find_map(column).unwrap();
        for (usage, what) in BUILT_INS {
            let line = help
                .lines()
                .find(|line| line.ends_with(what))
                .unwrap_or_else(|| panic!("{usage}: {help}"));
            assert_eq!(line.find(what), Some(first), "{line:?}");
        }
    }

    #[test]
    fn help_lists_custom_commands() {
        let help = help_text(&[greet()]);
        assert!(help.contains("/greet"), "{help}");
        assert!(help.contains("say hello"), "{help}");
        assert!(help.contains("/status"), "{help}");
    }
}
