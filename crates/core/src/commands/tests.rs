#![allow(clippy::unwrap_used)]

use std::path::Path;

use cairn_context::commands::{CommandScope, CommandSet};
use pretty_assertions::assert_eq;

use super::*;

/// A project and a home directory, each with its own `.claude/commands/`.
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

    fn resolve(&self, line: &str) -> Resolved {
        resolve(line, self.project.path(), self.home.path())
    }

    /// The prompt turn `line` resolves to, or the unreadable command files when it names
    /// no command.
    fn lookup(&self, line: &str) -> Lookup {
        match self.resolve(line) {
            Resolved::Turn(CommandTurn::Prompt { turn, .. }) => Lookup {
                turn: Some(turn),
                warnings: Vec::new(),
            },
            Resolved::Unknown { warnings, .. } => Lookup {
                turn: None,
                warnings,
            },
            Resolved::Message
            | Resolved::Turn(CommandTurn::Compact { .. })
            | Resolved::Report { .. }
            | Resolved::McpPrompt(_)
            | Resolved::Interactive { .. } => Lookup {
                turn: None,
                warnings: Vec::new(),
            },
        }
    }
}

/// What resolving a line found of a prompt turn.
#[derive(Debug, PartialEq)]
struct Lookup {
    turn: Option<Turn>,
    warnings: Vec<String>,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn here() -> &'static Path {
    Path::new(".")
}

fn interactive(command: Interactive, name: &str, arguments: &str) -> Resolved {
    Resolved::Interactive {
        command,
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn report(report: Report) -> Resolved {
    Resolved::Report {
        report,
        arguments: String::new(),
    }
}

#[test]
fn every_built_in_resolves_by_its_name_and_its_aliases_to_what_it_is() {
    let table = CommandTable::built_in();
    assert!(table.entries().len() >= 16, "{:?}", table.entries());
    for entry in table.entries() {
        assert_eq!(entry.source, CommandSource::BuiltIn, "{}", entry.name);
        for name in std::iter::once(&entry.name).chain(&entry.aliases) {
            let resolved = table.resolve(&format!("/{name}"), here());
            let same_kind = match (&entry.kind, &resolved) {
                (CommandKind::Report(want), Resolved::Report { report, .. }) => want == report,
                (CommandKind::Interactive(want), Resolved::Interactive { command, .. }) => {
                    want == command
                }
                (CommandKind::Turn(TurnCommand::Compact), Resolved::Turn(turn)) => {
                    matches!(turn, CommandTurn::Compact { .. })
                }
                (CommandKind::Turn(TurnCommand::Init), Resolved::Turn(turn)) => {
                    matches!(turn, CommandTurn::Prompt { .. })
                }
                _ => false,
            };
            assert!(same_kind, "/{name} resolved to {resolved:?}");
        }
    }
}

#[test]
fn built_ins_resolve_with_their_arguments() {
    let table = CommandTable::built_in();
    let resolve = |line: &str| table.resolve(line, here());
    assert_eq!(resolve("/help"), report(Report::Help));
    assert_eq!(resolve("  /cost  "), report(Report::Cost));
    assert_eq!(resolve("/context"), report(Report::Context));
    assert_eq!(resolve("/status"), report(Report::Status));
    assert_eq!(resolve("/agents"), report(Report::Agents));
    assert_eq!(
        resolve("/model  opus "),
        interactive(Interactive::Model, "model", "opus")
    );
    assert_eq!(resolve("/quit"), interactive(Interactive::Exit, "quit", ""));
    assert_eq!(
        resolve("/allowed-tools deny Bash(rm:*)"),
        interactive(Interactive::Permissions, "allowed-tools", "deny Bash(rm:*)")
    );
    assert_eq!(
        resolve("/continue abc"),
        interactive(Interactive::Resume, "continue", "abc")
    );
    assert_eq!(
        resolve("/add-dir ../lib"),
        interactive(Interactive::AddDir, "add-dir", "../lib")
    );
    assert_eq!(
        resolve("/compact"),
        Resolved::Turn(CommandTurn::Compact { instructions: None })
    );
    assert_eq!(
        resolve("/compact keep the API notes "),
        Resolved::Turn(CommandTurn::Compact {
            instructions: Some("keep the API notes".into())
        })
    );
    assert_eq!(
        resolve("/init"),
        Resolved::Turn(CommandTurn::Prompt {
            turn: Turn::message(vec![
                ContentBlock::text(INIT_TAG),
                ContentBlock::text(INIT_PROMPT)
            ]),
            shown: "/init".into(),
            source: CommandSource::BuiltIn,
        })
    );
}

#[test]
fn a_compaction_and_a_prompt_become_their_operations() {
    let compact = CommandTurn::Compact {
        instructions: Some("keep the notes".into()),
    };
    assert_eq!(
        compact.into_op(),
        Op::compact(Some("keep the notes".into()))
    );
    let turn = Turn::message(vec![ContentBlock::text(INIT_TAG)]);
    let prompt = CommandTurn::Prompt {
        turn: turn.clone(),
        shown: "/init".into(),
        source: CommandSource::BuiltIn,
    };
    assert_eq!(prompt.into_op(), turn.into_op());
}

#[test]
fn an_ordinary_message_or_a_path_is_not_a_command() {
    let table = CommandTable::built_in();
    for line in [
        "hello",
        "please /compact",
        "/usr/bin/foo is broken",
        "/etc/hosts",
        "//help",
        "/help/me",
        "",
    ] {
        assert_eq!(table.resolve(line, here()), Resolved::Message, "{line:?}");
    }
    assert_eq!(
        command_line("/usr/bin/foo is broken"),
        None,
        "the same rule for every caller"
    );
    assert_eq!(
        command_line("\t/help  me "),
        Some(CommandLine {
            name: "help",
            arguments: "me"
        })
    );
}

#[test]
fn an_unknown_name_is_reported_with_the_command_files_that_could_not_be_read() {
    let dirs = Dirs::new();
    assert_eq!(
        dirs.resolve("/nope x"),
        Resolved::Unknown {
            name: "nope".into(),
            warnings: Vec::new()
        }
    );
    assert_eq!(
        dirs.resolve("/"),
        Resolved::Unknown {
            name: String::new(),
            warnings: Vec::new()
        }
    );
    let endless = dirs.project.path().join(".claude/commands/endless.md");
    std::fs::create_dir_all(endless.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &endless).unwrap();
    let Resolved::Unknown { name, warnings } = dirs.resolve("/endless") else {
        panic!("not unknown: {:?}", dirs.resolve("/endless"));
    };
    assert_eq!(name, "endless");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("endless.md was skipped"),
        "{warnings:?}"
    );
}

#[test]
fn a_built_in_wins_over_a_custom_command_of_the_same_name() {
    let dirs = Dirs::new();
    dirs.project_command("help.md", "Help me with $ARGUMENTS");
    dirs.user_command("quit.md", "Never quit.");
    dirs.project_command("compact.md", "Compact it yourself.");
    assert_eq!(dirs.resolve("/help"), report(Report::Help));
    assert_eq!(
        dirs.resolve("/quit"),
        interactive(Interactive::Exit, "quit", "")
    );
    assert_eq!(
        dirs.resolve("/compact"),
        Resolved::Turn(CommandTurn::Compact { instructions: None })
    );
    let table = CommandTable::load(dirs.project.path(), dirs.home.path());
    let named = |name: &str| {
        table
            .entries()
            .iter()
            .filter(|entry| entry.answers_to(name))
            .count()
    };
    assert_eq!((named("help"), named("quit"), named("compact")), (1, 1, 1));
}

#[test]
fn a_custom_command_is_read_afresh_and_becomes_its_turn() {
    let dirs = Dirs::new();
    assert!(matches!(
        dirs.resolve("/greet Ada"),
        Resolved::Unknown { .. }
    ));
    dirs.project_command(
        "greet.md",
        "---\ndescription: say hello\n---\nSay hello to $ARGUMENTS.",
    );
    let cwd = dirs.project.path();
    let command = cairn_context::commands::discover_commands(cwd, Some(dirs.home.path()))
        .pop()
        .unwrap();
    assert_eq!(
        dirs.resolve("  /greet   Ada Lovelace "),
        Resolved::Turn(CommandTurn::Prompt {
            turn: Turn::custom_command(&command, "Ada Lovelace", cwd),
            shown: "/greet Ada Lovelace".into(),
            source: CommandSource::Project,
        })
    );
    dirs.user_command("git/log.md", "Show the log.");
    let Resolved::Turn(CommandTurn::Prompt { shown, source, .. }) = dirs.resolve("/git:log") else {
        panic!("{:?}", dirs.resolve("/git:log"));
    };
    assert_eq!((shown.as_str(), source), ("/git:log", CommandSource::User));
}

#[test]
fn custom_commands_follow_the_built_ins_with_their_descriptions() {
    let dirs = Dirs::new();
    dirs.project_command(
        "review.md",
        "---\nargument-hint: [file]\n---\n# Review a file\n",
    );
    dirs.user_command("long.md", &"word ".repeat(30));
    let table = CommandTable::load(dirs.project.path(), dirs.home.path());
    let built_ins = CommandTable::built_in().entries().len();
    let custom: Vec<(String, Option<String>, String, CommandSource)> = table.entries()[built_ins..]
        .iter()
        .map(|entry| {
            (
                entry.name.clone(),
                entry.argument_hint.clone(),
                entry.description.clone(),
                entry.source,
            )
        })
        .collect();
    let long = format!(
        "{}…",
        "word "
            .repeat(12)
            .trim_end()
            .chars()
            .take(59)
            .collect::<String>()
    );
    assert_eq!(
        custom,
        [
            ("long".to_string(), None, long, CommandSource::User),
            (
                "review".to_string(),
                Some("[file]".to_string()),
                "Review a file".to_string(),
                CommandSource::Project
            ),
        ]
    );
}

#[test]
fn a_later_entry_never_takes_a_name_or_alias_already_in_the_table() {
    let mut table = CommandTable::with_custom(CommandSet::default());
    let entry = |name: &str, aliases: &[&str]| CommandEntry {
        name: name.into(),
        aliases: aliases.iter().map(|alias| alias.to_string()).collect(),
        argument_hint: None,
        description: "a prompt from elsewhere".into(),
        source: CommandSource::User,
        kind: CommandKind::Turn(TurnCommand::Custom(Box::new(
            cairn_context::commands::CustomCommand {
                name: name.into(),
                scope: CommandScope::User,
                path: "x.md".into(),
                description: None,
                argument_hint: None,
                allowed_tools: Vec::new(),
                model: None,
                template: "Do it.".into(),
            },
        ))),
    };
    assert!(!table.add(entry("continue", &[])), "an alias of /resume");
    assert!(
        !table.add(entry("deploy", &["status"])),
        "its alias is taken"
    );
    assert!(table.add(entry("deploy", &["ship"])));
    assert!(!table.add(entry("ship", &[])), "now taken by deploy");
    assert!(matches!(
        table.resolve("/ship prod", here()),
        Resolved::Turn(CommandTurn::Prompt { .. })
    ));
}

#[test]
fn a_face_that_cannot_run_a_line_says_why_by_name() {
    let table = CommandTable::built_in();
    let error = |line: &str| {
        table
            .resolve(line, here())
            .error()
            .map(|error| error.to_string())
    };
    assert_eq!(
        error("/model opus").as_deref(),
        Some("/model works only in cairn's interactive UI (start cairn without -p to use it)")
    );
    assert_eq!(
        error("/nope").as_deref(),
        Some("Unknown command: /nope. Type /help for the list of commands.")
    );
    assert_eq!(error("/cost"), None);
    assert_eq!(error("/compact"), None);
    assert_eq!(error("hello"), None);
}

#[test]
fn only_a_lone_name_after_the_slash_is_being_completed() {
    assert_eq!(completing_name("/mo"), Some("mo"));
    assert_eq!(completing_name("/"), Some(""));
    assert_eq!(completing_name("/model opus"), None);
    assert_eq!(completing_name("/usr/bin"), None);
    assert_eq!(completing_name("hi /mo"), None);
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
        Lookup {
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
        ContentBlock::text("<command-name>/git:log</command-name>\n<command-args></command-args>")
    );

    let turn = dirs.lookup("/plain").turn.unwrap();
    assert_eq!(
        turn,
        Turn {
            content: vec![
                ContentBlock::text(
                    "<command-name>/plain</command-name>\n<command-args></command-args>"
                ),
                ContentBlock::text("Inline \nContents of notes.txt:\n```\nthe notes\n```\n here"),
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
    let none = Lookup {
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
