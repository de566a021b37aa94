//! The built-in commands, in the order `/help` lists them, and the prompt `/init` sends.

use super::{CommandEntry, CommandKind, CommandSource, Interactive, Report, TurnCommand};

/// The line `/init` is shown as, in the tag of a command (Claude Code's), before its prompt.
pub const INIT_TAG: &str = "<command-name>/init</command-name>\n<command-args></command-args>";

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

/// One built-in: name, aliases, argument hint, description, kind.
type Row = (
    &'static str,
    &'static [&'static str],
    Option<&'static str>,
    &'static str,
    CommandKind,
);

pub(super) fn entries() -> Vec<CommandEntry> {
    use CommandKind::{Interactive as I, Report as R, Turn as T};
    let rows: Vec<Row> = vec![
        ("help", &[], None, "show this list", R(Report::Help)),
        ("exit", &["quit"], None, "leave cairn", I(Interactive::Exit)),
        (
            "clear",
            &[],
            None,
            "start a fresh conversation (the current one stays resumable)",
            I(Interactive::Clear),
        ),
        (
            "model",
            &[],
            Some("[name]"),
            "show the model, or switch to another",
            I(Interactive::Model),
        ),
        (
            "cost",
            &[],
            None,
            "tokens used and cost of this session",
            R(Report::Cost),
        ),
        (
            "status",
            &[],
            None,
            "version, model, auth, permission mode, directory, session, settings",
            R(Report::Status),
        ),
        (
            "export",
            &[],
            Some("[file]"),
            "write the conversation as Markdown (without a file: says where, Enter writes it)",
            I(Interactive::Export),
        ),
        (
            "doctor",
            &[],
            None,
            "check the installation: credentials, settings, sandbox, git",
            R(Report::Doctor),
        ),
        (
            "context",
            &[],
            None,
            "what fills the context window, by category",
            R(Report::Context),
        ),
        (
            "add-dir",
            &[],
            Some("<path>"),
            "add a directory to the workspace for this session",
            I(Interactive::AddDir),
        ),
        (
            "permissions",
            &["allowed-tools"],
            Some("[allow|ask|deny|remove <rule>]"),
            "the allow, ask and deny rules and their files; add one (to \
             .claude/settings.local.json) or remove one",
            I(Interactive::Permissions),
        ),
        (
            "memory",
            &[],
            Some("[project|user|local|<file>]"),
            "list the instruction and memory files, or edit one in $EDITOR (# <text> saves a \
             memory)",
            I(Interactive::Memory),
        ),
        (
            "resume",
            &["continue"],
            Some("[session]"),
            "continue another conversation of this directory (a list without an id)",
            I(Interactive::Resume),
        ),
        (
            "config",
            &[],
            None,
            "the merged settings and the file each came from",
            I(Interactive::Config),
        ),
        (
            "agents",
            &[],
            None,
            "the sub-agents the model can start: the built-in roles and the custom agents",
            R(Report::Agents),
        ),
        (
            "skills",
            &[],
            None,
            "the skills of .claude/skills and ~/.claude/skills, and what each pre-approves",
            R(Report::Skills),
        ),
        (
            "mcp",
            &[],
            Some("[reconnect|enable|disable <server>]"),
            "the MCP servers: state, tool count, and why one failed; reconnect, enable or \
             disable one",
            R(Report::Mcp),
        ),
        (
            "compact",
            &[],
            Some("[instructions]"),
            "summarize the conversation to free the context window",
            T(TurnCommand::Compact),
        ),
        (
            "init",
            &[],
            None,
            "ask the model to write or improve CLAUDE.md for this project",
            T(TurnCommand::Init),
        ),
    ];
    rows.into_iter()
        .map(|(name, aliases, hint, description, kind)| CommandEntry {
            name: name.to_string(),
            aliases: aliases.iter().map(|alias| alias.to_string()).collect(),
            argument_hint: hint.map(str::to_string),
            description: description.to_string(),
            source: CommandSource::BuiltIn,
            kind,
        })
        .collect()
}
