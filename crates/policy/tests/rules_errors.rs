//! Malformed rules: reported with their source and text, and left out of the set.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod rules_support;

use cairn_policy::rules::{RuleError, RuleKind, RuleSet};
use pretty_assertions::assert_eq;
use rules_support::{bash, on, project, user};

fn error(text: &str, message: &str) -> RuleError {
    RuleError {
        text: text.to_owned(),
        source: "/home/ann/proj/.claude/settings.json".to_owned(),
        message: message.to_owned(),
    }
}

#[test]
fn malformed_rules_are_reported_with_their_message() {
    let cases = [
        ("", "the rule is empty; write a tool name such as `Bash`"),
        ("Bash(", "the closing parenthesis is missing"),
        ("Bash(ls", "the closing parenthesis is missing"),
        ("Bash)", "there is a `)` without an opening parenthesis"),
        (
            "Bash(ls) -la",
            "there is text after the closing parenthesis",
        ),
        (
            "Bash()",
            "the parentheses are empty; write `Bash` to match every call of the tool",
        ),
        (
            "Read(  )",
            "the parentheses are empty; write `Read` to match every call of the tool",
        ),
        ("(ls)", "the tool name is missing"),
        (
            "bash",
            "tool names are case-sensitive: `bash` matches no tool; write `Bash`",
        ),
        (
            "Web Fetch",
            "the tool name `Web Fetch` contains ' '; a tool name is letters, digits, `_` and `-`",
        ),
        (
            "Bash*",
            "`*` in a tool name is only supported after an MCP server, as in `mcp__server__*`; \
             write the tool's name, e.g. `Bash`, instead of `Bash*`",
        ),
        (
            "Bash(:*)",
            "the prefix before `:*` is empty; write `Bash` to match every command",
        ),
        (
            "Bash(git * push:*)",
            "the legacy `:*` suffix cannot be combined with other `*` wildcards; write \
             `Bash(git * push *)` instead",
        ),
        (
            "Write(src/**)",
            "path rules are written on `Edit`, which governs Edit, Write, MultiEdit, \
             NotebookEdit; write `Edit(src/**)`",
        ),
        (
            "NotebookEdit(*.ipynb)",
            "path rules are written on `Edit`, which governs Edit, Write, MultiEdit, \
             NotebookEdit; write `Edit(*.ipynb)`",
        ),
        (
            "Grep(src/**)",
            "path rules are written on `Read`, which governs Read, Glob, Grep, LS; write \
             `Read(src/**)`",
        ),
        (
            "WebSearch(domain:example.com)",
            "`domain:` only applies to WebFetch; write `WebFetch(domain:example.com)`, or \
             `WebSearch` to match every call of WebSearch",
        ),
        (
            "WebFetch(https://example.com)",
            "WebFetch rules take `domain:<host>`, e.g. `WebFetch(domain:example.com)`",
        ),
        (
            "WebFetch(domain:)",
            "`` is not a host name; write e.g. `domain:example.com`",
        ),
        (
            "WebFetch(domain:example.com/docs)",
            "`example.com/docs` is not a host name; write e.g. `domain:example.com`",
        ),
        (
            "TodoWrite(x)",
            "`TodoWrite` takes no specifier; write `TodoWrite` to match every call of it",
        ),
        (
            "mcp__github(get_issue)",
            "MCP rules take no parentheses; write `mcp__github` for the tools it names",
        ),
        (
            "mcp__github__get_issue(x)",
            "MCP rules take no parentheses; write `mcp__github__get_issue` for the tools it names",
        ),
        (
            "mcp__",
            "`mcp__` names no MCP server; write `mcp__<server>` or `mcp__<server>__<tool>`",
        ),
        (
            "mcp__*",
            "`*` is not supported in an MCP server's name (`mcp__*`); name the server, as in \
             `mcp__<server>__*`",
        ),
        (
            "mcp__github__",
            "`mcp__github__` ends after the server; write `mcp__github` for all of its tools",
        ),
        (
            "Read(~root/.ssh/**)",
            "only `~/` is supported for the home directory (not `~user`); write e.g. `~/.ssh/**`",
        ),
        (
            "Read(src/../.env)",
            "`src/../.env` has a `.` or `..` segment inside it; `./` and `../` are only \
             supported at the start of a relative pattern",
        ),
        (
            "Edit(src/[)",
            "`src/[` is not a valid glob: unclosed character class; missing ']'",
        ),
    ];
    let (rules, errors) = RuleSet::new(
        cases
            .iter()
            .map(|(text, _)| (RuleKind::Deny, (*text).to_owned(), project())),
    );
    let want: Vec<RuleError> = cases
        .iter()
        .map(|(text, message)| error(text, message))
        .collect();
    assert_eq!(errors, want);
    assert!(rules.is_empty());
}

#[test]
fn an_error_displays_its_source_and_text() {
    let (_, errors) = RuleSet::new([(RuleKind::Allow, "Bash(".to_owned(), user())]);
    let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        vec![
            "/home/ann/.claude/settings.json: permission rule \"Bash(\": the closing \
             parenthesis is missing"
                .to_owned()
        ]
    );
}

#[test]
fn valid_rules_are_kept_beside_malformed_ones() {
    let (rules, errors) = RuleSet::new([
        (RuleKind::Deny, "Bash(rm:*".to_owned(), project()),
        (RuleKind::Allow, "Bash(git *)".to_owned(), project()),
        (RuleKind::Deny, "Edit(src/[)".to_owned(), user()),
    ]);
    let texts: Vec<&str> = rules.rules().iter().map(|r| r.text.as_str()).collect();
    assert_eq!(texts, vec!["Bash(git *)"]);
    let failed: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| (e.source.as_str(), e.text.as_str()))
        .collect();
    assert_eq!(
        failed,
        vec![
            ("/home/ann/proj/.claude/settings.json", "Bash(rm:*"),
            ("/home/ann/.claude/settings.json", "Edit(src/[)"),
        ]
    );
    // The broken deny rules deny nothing; the allow rule still decides.
    let decided = rules
        .evaluate(&bash(&["git status"]).facts())
        .map(|r| (r.kind, r.text.as_str()));
    assert_eq!(decided, Some((RuleKind::Allow, "Bash(git *)")));
    assert_eq!(rules.evaluate(&on("Edit", &["src/a.rs"]).facts()), None);
}

#[test]
fn an_empty_set_decides_nothing() {
    let (rules, errors) = RuleSet::new([]);
    assert_eq!((rules.is_empty(), errors), (true, vec![]));
    assert_eq!(rules.evaluate(&bash(&["ls"]).facts()), None);
}
