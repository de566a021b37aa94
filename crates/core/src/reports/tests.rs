#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use cairn_context::commands::{CommandScope, CommandSet, CustomCommand};
use cairn_protocol::{Message, SystemPrompt, Usage};
use pretty_assertions::assert_eq;

use super::*;

fn greet() -> CustomCommand {
    CustomCommand {
        name: "greet".into(),
        scope: CommandScope::Project,
        path: "greet.md".into(),
        description: Some("say hello".into()),
        argument_hint: Some("<name>".into()),
        allowed_tools: Vec::new(),
        model: None,
        template: "Say hello to $ARGUMENTS".into(),
    }
}

fn table_with_greet() -> CommandTable {
    CommandTable::with_custom(CommandSet {
        commands: vec![greet()],
        unread: Vec::new(),
    })
}

#[test]
fn help_lists_the_built_ins_then_the_custom_commands_with_their_aliases() {
    let help = help_text(&table_with_greet());
    let lines: Vec<&str> = help.lines().collect();
    assert_eq!(lines[0], "Commands:");
    assert_eq!(lines[1], "  /help                show this list");
    assert_eq!(lines[2], "  /exit                leave cairn (also /quit)");
    assert_eq!(
        lines.last().copied(),
        Some("  /greet <name>        say hello"),
        "{help}"
    );
    // A usage wider than the column puts its description under it, in the column.
    let at = lines
        .iter()
        .position(|line| *line == "  /memory [project|user|local|<file>]")
        .unwrap();
    assert_eq!(
        lines[at + 1],
        "                       list the instruction and memory files, or edit one in $EDITOR \
         (# <text> saves a memory)"
    );
    assert!(
        help.contains(
            "\n  /resume [session]    continue another conversation of this directory (a list \
             without an id) (also /continue)\n"
        ),
        "{help}"
    );
}

#[test]
fn every_description_in_help_starts_in_the_same_column() {
    let table = table_with_greet();
    let help = help_text(&table);
    let column = help.lines().find_map(|line| line.find("show this list"));
    for entry in table.entries() {
        let line = help
            .lines()
            .find(|line| line.contains(&entry.description))
            .unwrap_or_else(|| panic!("{}: {help}", entry.name));
        assert_eq!(line.find(&entry.description), column, "{line:?}");
    }
}

fn cost(cost_usd: f64, cost_unknown: bool) -> String {
    cost_report(&CostFacts {
        usage: Usage {
            input_tokens: 1200,
            output_tokens: 340,
            cache_creation_input_tokens: 50,
            cache_read_input_tokens: 9000,
        },
        cost_usd,
        cost_unknown,
        session_time: Duration::from_millis(75_900),
        agents: &[],
    })
}

#[test]
fn cost_lists_each_sub_agent_after_the_totals() {
    let agents = [
        AgentCost {
            label: "Explore: find the loader".into(),
            requests: 3,
            usage: Usage {
                input_tokens: 900,
                output_tokens: 40,
                ..Usage::default()
            },
            cost_usd: Some(0.0031),
        },
        AgentCost {
            label: "reviewer: check the diff".into(),
            requests: 1,
            usage: Usage::default(),
            cost_usd: None,
        },
    ];
    let text = cost_report(&CostFacts {
        usage: Usage::default(),
        cost_usd: 0.01,
        cost_unknown: true,
        session_time: Duration::from_secs(1),
        agents: &agents,
    });
    assert!(
        text.ends_with(
            "\nSub-agents (in the totals):\n  Explore: find the loader: $0.0031, 3 requests, 900 \
             input, 40 output tokens\n  reviewer: check the diff: cost unknown, 1 request, 0 \
             input, 0 output tokens"
        ),
        "{text}"
    );
}

#[test]
fn cost_reports_the_tokens_the_cost_and_the_time() {
    assert_eq!(
        cost(0.01234, false),
        "Total cost: $0.0123\nTokens: 1200 input, 340 output, 9000 cache read, 50 cache write\n\
         Session time: 75s"
    );
}

#[test]
fn cost_says_unknown_when_a_models_prices_are_unknown() {
    assert_eq!(
        cost(0.0, true).lines().next(),
        Some("Total cost: unknown (the model's prices are not in cairn's registry)")
    );
    assert_eq!(
        cost(0.5, true).lines().next(),
        Some(
            "Total cost: $0.5000 for the requests of known prices, plus requests to a model \
             whose prices cairn does not know"
        )
    );
}

fn status(credential_variable: &str, settings_sources: Result<&[String], &str>) -> String {
    status_report(&StatusFacts {
        version: "0.1.0",
        model: "claude-sonnet-4-5",
        credential_variable,
        permission_mode: "acceptEdits",
        cwd: Path::new("/work/project"),
        session_id: "abc-123",
        settings_sources,
    })
}

#[test]
fn status_reports_one_fact_a_line() {
    let sources = [
        "~/.claude/settings.json".to_string(),
        ".claude/settings.json".to_string(),
    ];
    assert_eq!(
        status("ANTHROPIC_API_KEY", Ok(&sources)),
        "cairn 0.1.0\nModel: claude-sonnet-4-5\nAuth: the ANTHROPIC_API_KEY environment \
         variable\nPermission mode: acceptEdits\nWorking directory: /work/project\n\
         Session: abc-123\nSettings: ~/.claude/settings.json, .claude/settings.json"
    );
}

#[test]
fn status_says_none_for_a_keyless_server_and_no_settings_and_shows_a_settings_error() {
    let text = status("none", Ok(&[]));
    assert!(text.contains("\nAuth: none\n"), "{text}");
    assert!(text.ends_with("\nSettings: none"), "{text}");
    let text = status("", Err("Cannot read .claude/settings.json: not JSON"));
    assert!(text.contains("\nAuth: none\n"), "{text}");
    assert!(
        text.ends_with("\nSettings: Cannot read .claude/settings.json: not JSON"),
        "{text}"
    );
}

#[test]
fn context_reports_each_category_and_the_last_request() {
    let system = SystemPrompt {
        static_part: "a".repeat(400),
        dynamic_part: "b".repeat(40),
    };
    let conversation = [Message::user_text("x".repeat(120))];
    let facts = ContextFacts {
        system_prompt: Some(&system),
        tools: &[],
        conversation: &conversation,
        last_request: Some(Usage {
            input_tokens: 30,
            output_tokens: 8,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 120,
        }),
        window: Some(200_000),
    };
    assert_eq!(
        context_report(&facts),
        "Context (estimated tokens):\n\
         \x20 System prompt (static)        100\n\
         \x20 System prompt (dynamic)        10\n\
         \x20 Tool definitions                0\n\
         \x20 User messages                  30\n\
         \x20 Assistant messages              0\n\
         \x20 Tool results                    0\n\
         \x20 Total                         140\n\
         Last request: 150 input tokens (30 uncached, 120 cache read, 0 cache write) · 0% of \
         200000"
    );
    let before_any = ContextFacts {
        last_request: None,
        ..facts
    };
    assert!(
        context_report(&before_any).ends_with("\nLast request: none yet"),
        "{}",
        context_report(&before_any)
    );
}
