//! The permission gate: modes, rules and escalation levels, on a real temp workspace.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod security_support;

use std::path::{Path, PathBuf};

use cairn_policy::rules::{RuleKind, RuleOrigin};
use cairn_policy::{Asking, CallInfo, PermissionMode, Verdict};
use cairn_protocol::DecisionSource;
use serde_json::{Value, json};

struct Fixture {
    _dir: tempfile::TempDir,
    workspace: PathBuf,
    home: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("project");
    let home = dir.path().join("home");
    std::fs::create_dir_all(workspace.join("src")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    Fixture {
        workspace,
        home,
        _dir: dir,
    }
}

fn gate(
    f: &Fixture,
    mode: PermissionMode,
    rules: &[(RuleKind, &str)],
    asking: Asking,
) -> security_support::TestGate {
    security_support::gate_over(&f.workspace, &f.home, mode, rules, asking)
}

/// A call as the tools would describe it.
struct Call {
    tool: &'static str,
    input: Value,
    paths: Vec<PathBuf>,
    read_only: bool,
    destructive: bool,
}

fn read(path: &Path) -> Call {
    Call {
        tool: "Read",
        input: json!({"file_path": path}),
        paths: vec![path.into()],
        read_only: true,
        destructive: false,
    }
}

fn edit(path: &Path) -> Call {
    Call {
        tool: "Edit",
        input: json!({"file_path": path, "old_string": "a", "new_string": "b"}),
        paths: vec![path.into()],
        read_only: false,
        destructive: false,
    }
}

/// A Write as the Write tool declares it: destructive when the file exists.
fn write(path: &Path, replaces_a_file: bool) -> Call {
    Call {
        tool: "Write",
        input: json!({"file_path": path, "content": "new"}),
        paths: vec![path.into()],
        read_only: false,
        destructive: replaces_a_file,
    }
}

/// A Bash call declaring the worst case: the gate judges a command by its own analysis.
fn bash(f: &Fixture, command: &str) -> Call {
    Call {
        tool: "Bash",
        input: json!({"command": command}),
        paths: vec![f.workspace.clone()],
        read_only: false,
        destructive: true,
    }
}

fn check(gate: &security_support::TestGate, call: &Call) -> Verdict {
    gate.check(&CallInfo {
        tool: call.tool,
        input: &call.input,
        paths: &call.paths,
        read_only: call.read_only,
        destructive: call.destructive,
        asking: gate.asking,
    })
}

/// The verdict's kind and who decided, for table comparisons.
fn kind(verdict: &Verdict) -> (&'static str, Option<DecisionSource>) {
    match verdict {
        Verdict::Allow { source, .. } => ("allow", Some(*source)),
        Verdict::Ask { .. } => ("ask", None),
        Verdict::Deny { source, .. } => ("deny", Some(*source)),
    }
}

/// One row of the escalation table: mode, rules, the call, and the expected verdict.
type Case = (
    PermissionMode,
    Vec<(RuleKind, &'static str)>,
    Call,
    (&'static str, Option<DecisionSource>),
);

#[test]
fn escalation_table() {
    use DecisionSource::{Mode as ByMode, Rule as ByRule};
    let f = fixture();
    let inside = f.workspace.join("src/main.rs");
    let outside = PathBuf::from("/etc/hosts");
    let cases: Vec<Case> = vec![
        // Default mode: reading runs; one level short asks, and so does two levels short when
        // someone can answer (headless, see `headless_escalation_table`).
        (
            PermissionMode::Default,
            vec![],
            read(&inside),
            ("allow", Some(ByMode)),
        ),
        (
            PermissionMode::Default,
            vec![],
            edit(&inside),
            ("ask", None),
        ),
        (
            PermissionMode::Default,
            vec![],
            read(&outside),
            ("ask", None),
        ),
        (
            PermissionMode::Default,
            vec![],
            edit(&outside),
            ("ask", None),
        ),
        (
            PermissionMode::Default,
            vec![],
            bash(&f, "ls -la src | wc -l"),
            ("allow", Some(ByMode)),
        ),
        (
            PermissionMode::Default,
            vec![],
            bash(&f, "npm test"),
            ("ask", None),
        ),
        (
            PermissionMode::Default,
            vec![],
            bash(&f, "curl https://example.com -o page.html"),
            ("ask", None),
        ),
        (
            PermissionMode::Default,
            vec![],
            bash(&f, "echo x > /etc/passwd"),
            ("ask", None),
        ),
        // Stopping a shell this session started needs no approval.
        (
            PermissionMode::Default,
            vec![],
            Call {
                tool: "KillShell",
                input: json!({"shell_id": "bash_1"}),
                paths: vec![],
                read_only: false,
                destructive: false,
            },
            ("allow", Some(ByMode)),
        ),
        // Rules: allow skips the question, deny beats allow, ask beats allow.
        (
            PermissionMode::Default,
            vec![(RuleKind::Allow, "Edit(src/**)")],
            edit(&inside),
            ("allow", Some(ByRule)),
        ),
        (
            PermissionMode::Default,
            vec![(RuleKind::Allow, "Bash(npm test)")],
            bash(&f, "npm test"),
            ("allow", Some(ByRule)),
        ),
        (
            PermissionMode::Default,
            vec![(RuleKind::Allow, "Read"), (RuleKind::Deny, "Read(src/**)")],
            read(&inside),
            ("deny", Some(ByRule)),
        ),
        (
            PermissionMode::Default,
            vec![
                (RuleKind::Allow, "Bash(npm *)"),
                (RuleKind::Ask, "Bash(npm publish)"),
            ],
            bash(&f, "npm publish"),
            ("ask", None),
        ),
        // The compound-command bypass: a rule for git does not cover what follows it.
        (
            PermissionMode::Default,
            vec![(RuleKind::Allow, "Bash(git *)")],
            bash(&f, "git status && npm test"),
            ("ask", None),
        ),
        // Destructive commands ask even under an allow rule.
        (
            PermissionMode::Default,
            vec![(RuleKind::Allow, "Bash")],
            bash(&f, "git reset --hard"),
            ("ask", None),
        ),
        (
            PermissionMode::Default,
            vec![(RuleKind::Allow, "Bash(git *)")],
            bash(&f, "git status && rm -rf ~"),
            ("ask", None),
        ),
        // acceptEdits: edits inside the workspace run; commands still ask.
        (
            PermissionMode::AcceptEdits,
            vec![],
            edit(&inside),
            ("allow", Some(ByMode)),
        ),
        (
            PermissionMode::AcceptEdits,
            vec![],
            edit(&outside),
            ("ask", None),
        ),
        (
            PermissionMode::AcceptEdits,
            vec![],
            bash(&f, "npm test"),
            ("ask", None),
        ),
        // acceptEdits and destruction: a new file runs; replacing one is judged as in default
        // mode (asked, and refused headless outside the workspace) unless a rule allows it.
        (
            PermissionMode::AcceptEdits,
            vec![],
            write(&inside, false),
            ("allow", Some(ByMode)),
        ),
        (
            PermissionMode::AcceptEdits,
            vec![],
            write(&inside, true),
            ("ask", None),
        ),
        (
            PermissionMode::AcceptEdits,
            vec![],
            write(&outside, true),
            ("ask", None),
        ),
        (
            PermissionMode::AcceptEdits,
            vec![(RuleKind::Allow, "Edit(src/**)")],
            write(&inside, true),
            ("allow", Some(ByRule)),
        ),
        (
            PermissionMode::DontAsk,
            vec![(RuleKind::Allow, "Write")],
            write(&inside, true),
            ("allow", Some(ByRule)),
        ),
        (
            PermissionMode::BypassPermissions,
            vec![],
            write(&outside, true),
            ("allow", Some(ByMode)),
        ),
        // plan: only reading.
        (
            PermissionMode::Plan,
            vec![],
            read(&inside),
            ("allow", Some(ByMode)),
        ),
        (
            PermissionMode::Plan,
            vec![],
            edit(&inside),
            ("deny", Some(ByMode)),
        ),
        (
            PermissionMode::Plan,
            vec![(RuleKind::Allow, "Bash")],
            bash(&f, "npm test"),
            ("deny", Some(ByMode)),
        ),
        // bypassPermissions: everything but deny rules.
        (
            PermissionMode::BypassPermissions,
            vec![],
            edit(&outside),
            ("allow", Some(ByMode)),
        ),
        (
            PermissionMode::BypassPermissions,
            vec![(RuleKind::Deny, "Bash(rm:*)")],
            bash(&f, "rm -rf build"),
            ("deny", Some(ByRule)),
        ),
        // dontAsk: what no rule allows is refused.
        (
            PermissionMode::DontAsk,
            vec![],
            edit(&inside),
            ("deny", Some(ByMode)),
        ),
        (
            PermissionMode::DontAsk,
            vec![(RuleKind::Allow, "Edit")],
            edit(&inside),
            ("allow", Some(ByRule)),
        ),
        (
            PermissionMode::DontAsk,
            vec![],
            read(&inside),
            ("allow", Some(ByMode)),
        ),
    ];
    let mut failures = Vec::new();
    for (index, (mode, rules, call, expected)) in cases.iter().enumerate() {
        let verdict = check(&gate(&f, *mode, rules, Asking::Interactive), call);
        if kind(&verdict) != *expected {
            failures.push(format!(
                "case {index} ({mode:?}, {} {}): {verdict:?}",
                call.tool, call.input
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn accept_edits_asks_before_a_write_replaces_a_file_and_says_which_rule_would_allow_it() {
    let f = fixture();
    let target = f.workspace.join("src/main.rs");
    std::fs::write(&target, "fn main() {}\n").unwrap();
    let interactive = gate(&f, PermissionMode::AcceptEdits, &[], Asking::Interactive);
    assert_eq!(
        check(&interactive, &write(&target, true)),
        Verdict::Ask {
            reason: "Write changes files in the workspace. It would replace or delete content \
                     that the call does not carry, and acceptEdits runs only edits that keep \
                     it unasked."
                .into(),
            suggested_rule: Some("Edit(src/**)".into()),
        }
    );
    interactive.allow_for_session("Edit(src/**)").unwrap();
    assert_eq!(
        kind(&check(&interactive, &write(&target, true))),
        ("allow", Some(DecisionSource::User)),
        "the suggested rule, once allowed, lets the write run"
    );

    let headless = gate(&f, PermissionMode::AcceptEdits, &[], Asking::NonInteractive);
    let verdict = check(&headless, &write(&target, true));
    let Verdict::Deny { source, reason, .. } = verdict else {
        panic!("{verdict:?}")
    };
    assert_eq!(source, DecisionSource::NonInteractive);
    assert!(reason.contains("acceptEdits runs only edits"), "{reason}");
    assert!(reason.contains("Edit(src/**)"), "{reason}");
}

#[test]
fn without_anyone_to_ask_a_question_becomes_a_refusal_naming_the_rule_that_would_allow_it() {
    let f = fixture();
    let verdict = check(
        &gate(&f, PermissionMode::Default, &[], Asking::NonInteractive),
        &bash(&f, "npm run test"),
    );
    let Verdict::Deny { source, reason, .. } = verdict else {
        panic!("{verdict:?}")
    };
    assert_eq!(source, DecisionSource::NonInteractive);
    assert!(
        reason.contains("nobody can be asked in cairn -p"),
        "{reason}"
    );
    assert!(reason.contains("Bash(npm run test:*)"), "{reason}");
    assert!(reason.contains("--allowedTools"), "{reason}");
}

#[test]
fn headless_escalation_table() {
    use DecisionSource::{Mode as ByMode, NonInteractive};
    let f = fixture();
    let inside = f.workspace.join("src/main.rs");
    let outside = PathBuf::from("/etc/hosts");
    // Without anyone to ask: one level short is refused as a question nobody can answer, two
    // levels short is refused by the mode.
    let cases: Vec<Case> = vec![
        (
            PermissionMode::Default,
            vec![],
            read(&inside),
            ("allow", Some(ByMode)),
        ),
        (
            PermissionMode::Default,
            vec![],
            edit(&inside),
            ("deny", Some(NonInteractive)),
        ),
        (
            PermissionMode::Default,
            vec![],
            edit(&outside),
            ("deny", Some(ByMode)),
        ),
        (
            PermissionMode::Default,
            vec![],
            bash(&f, "npm test"),
            ("deny", Some(NonInteractive)),
        ),
        (
            PermissionMode::Default,
            vec![],
            bash(&f, "curl https://example.com -o page.html"),
            ("deny", Some(ByMode)),
        ),
        (
            PermissionMode::Default,
            vec![],
            bash(&f, "echo x > /etc/passwd"),
            ("deny", Some(ByMode)),
        ),
        (
            PermissionMode::AcceptEdits,
            vec![],
            write(&outside, true),
            ("deny", Some(ByMode)),
        ),
        (
            PermissionMode::AcceptEdits,
            vec![],
            edit(&outside),
            ("deny", Some(NonInteractive)),
        ),
    ];
    let mut failures = Vec::new();
    for (index, (mode, rules, call, expected)) in cases.iter().enumerate() {
        let verdict = check(&gate(&f, *mode, rules, Asking::NonInteractive), call);
        if kind(&verdict) != *expected {
            failures.push(format!(
                "case {index} ({mode:?}, {} {}): {verdict:?}",
                call.tool, call.input
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn headless_two_levels_short_is_refused_without_asking_and_says_how_to_allow_it() {
    let f = fixture();
    let verdict = check(
        &gate(&f, PermissionMode::Default, &[], Asking::NonInteractive),
        &edit(Path::new("/etc/hosts")),
    );
    assert_eq!(
        verdict,
        Verdict::Deny {
            source: DecisionSource::Mode,
            rule: None,
            reason: "Edit writes /etc/hosts outside the workspace. That needs full access, two \
                     levels beyond what this session allows, so it was refused without asking. \
                     To allow it, add the rule `Edit(//etc/**)` to permissions.allow in \
                     .claude/settings.json, pass --allowedTools \"Edit(//etc/**)\", or start \
                     cairn with --permission-mode bypassPermissions."
                .into(),
        }
    );
}

/// What the everyday commands a new user met refused in the TUI are asked, each with its
/// analysis' reason said once and a prefix rule; headless they stay refused without asking.
#[test]
fn interactively_what_needs_full_access_is_asked_with_a_prefix_rule() {
    let f = fixture();
    let cases = [
        (
            "npm install lodash",
            "This command needs approval: `npm install` uses the network; `npm` is not a \
             known read-only command.",
            "Bash(npm install:*)",
        ),
        (
            "pip install requests",
            "This command needs approval: `pip install` uses the network; `pip` is not a \
             known read-only command.",
            "Bash(pip install:*)",
        ),
        (
            "git fetch origin",
            "This command needs approval: `git fetch` uses the network.",
            "Bash(git fetch:*)",
        ),
        (
            "git pull --rebase",
            "This command needs approval: `git pull` uses the network.",
            "Bash(git pull:*)",
        ),
        (
            "curl https://example.com",
            "This command needs approval: `curl` uses the network.",
            "Bash(curl:*)",
        ),
        (
            "gh pr list",
            "This command needs approval: `gh` uses the network; `gh` is not a known \
             read-only command.",
            "Bash(gh pr:*)",
        ),
    ];
    let interactive = gate(&f, PermissionMode::Default, &[], Asking::Interactive);
    let headless = gate(&f, PermissionMode::Default, &[], Asking::NonInteractive);
    let mut got = Vec::new();
    let mut want = Vec::new();
    for (command, reason, rule) in cases {
        let call = bash(&f, command);
        got.push((command, check(&interactive, &call)));
        want.push((
            command,
            Verdict::Ask {
                reason: reason.into(),
                suggested_rule: Some(rule.into()),
            },
        ));
        got.push((command, check(&headless, &call)));
        want.push((
            command,
            Verdict::Deny {
                source: DecisionSource::Mode,
                rule: None,
                reason: format!(
                    "{reason} That needs full access, two levels beyond what this session \
                     allows, so it was refused without asking. To allow it, add the rule \
                     `{rule}` to permissions.allow in .claude/settings.json, pass \
                     --allowedTools \"{rule}\", or start cairn with --permission-mode \
                     bypassPermissions."
                ),
            },
        ));
    }
    pretty_assertions::assert_eq!(got, want);

    // The offered rule, once allowed, stops the question for other arguments too.
    interactive.allow_for_session("Bash(curl:*)").unwrap();
    assert_eq!(
        kind(&check(
            &interactive,
            &bash(&f, "curl -s https://example.org/x")
        )),
        ("allow", Some(DecisionSource::User))
    );
}

#[test]
fn a_rule_already_in_force_is_never_offered_again() {
    let f = fixture();
    let settings = [(RuleKind::Allow, "Bash(npm install:*)")];
    let gate = gate(&f, PermissionMode::Default, &settings, Asking::Interactive);
    let suggested = |command: &str| match check(&gate, &bash(&f, command)) {
        Verdict::Ask { suggested_rule, .. } => suggested_rule,
        other => panic!("{command}: {other:?}"),
    };
    // Only the part no rule covers yet.
    assert_eq!(
        suggested("git fetch && npm install"),
        Some("Bash(git fetch:*)".into())
    );
    // A part allowed by this session's answer and one allowed by settings: allowed together.
    gate.allow_for_session("Bash(git fetch:*)").unwrap();
    assert_eq!(
        check(&gate, &bash(&f, "git fetch && npm install")),
        Verdict::Allow {
            source: DecisionSource::User,
            rule: Some("Bash(git fetch:*)".into()),
        }
    );
    assert_eq!(
        suggested("git fetch && npm install && curl https://example.com"),
        Some("Bash(curl:*)".into())
    );
    // Run outside the sandbox, an allowed command is still asked about, with nothing to offer.
    let unsandboxed = Call {
        input: json!({"command": "npm install", "dangerouslyDisableSandbox": true}),
        ..bash(&f, "npm install")
    };
    let Verdict::Ask { suggested_rule, .. } = check(&gate, &unsandboxed) else {
        panic!()
    };
    assert_eq!(suggested_rule, None);
}

#[test]
fn no_rule_is_offered_where_none_would_lift_the_question() {
    let f = fixture();
    let rules = [
        (RuleKind::Allow, "Bash(npm *)"),
        (RuleKind::Ask, "Bash(npm publish:*)"),
    ];
    let gate = gate(&f, PermissionMode::Default, &rules, Asking::Interactive);
    assert_eq!(
        check(&gate, &bash(&f, "npm publish")),
        Verdict::Ask {
            reason: "The permission rule Bash(npm publish:*) asks before this call.".into(),
            suggested_rule: None,
        },
        "an ask rule outranks any allow rule"
    );
    assert_eq!(
        check(&gate, &bash(&f, "echo x > /etc/passwd")),
        Verdict::Ask {
            reason: "This command needs approval: writes to /etc/passwd outside the workspace."
                .into(),
            suggested_rule: None,
        },
        "a rule for the command does not cover what it writes outside the workspace"
    );
}

#[test]
fn allow_for_the_rest_of_the_session_stops_the_questions() {
    let f = fixture();
    let gate = gate(&f, PermissionMode::Default, &[], Asking::Interactive);
    let call = bash(&f, "npm run test --watch=false");
    let Verdict::Ask { suggested_rule, .. } = check(&gate, &call) else {
        panic!()
    };
    let suggested_rule = suggested_rule.unwrap();
    assert_eq!(suggested_rule, "Bash(npm run test:*)");
    gate.allow_for_session(&suggested_rule).unwrap();
    assert_eq!(
        kind(&check(&gate, &call)),
        ("allow", Some(DecisionSource::User))
    );
    assert!(
        gate.allow_for_session("Bash(").is_err(),
        "a malformed rule is refused"
    );
}

#[test]
fn paths_through_a_symlink_out_of_the_workspace_count_as_outside() {
    let f = fixture();
    std::os::unix::fs::symlink("/etc", f.workspace.join("etc-link")).unwrap();
    let verdict = check(
        &gate(&f, PermissionMode::AcceptEdits, &[], Asking::Interactive),
        &edit(&f.workspace.join("etc-link/hosts")),
    );
    assert_eq!(kind(&verdict), ("ask", None), "{verdict:?}");
}

#[test]
fn rules_added_and_removed_while_the_session_runs_take_effect_at_once() {
    let f = fixture();
    let gate = gate(
        &f,
        PermissionMode::Default,
        &[(RuleKind::Allow, "Bash(npm test:*)")],
        Asking::Interactive,
    );
    let call = bash(&f, "npm test");
    assert_eq!(kind(&check(&gate, &call)).0, "allow");

    let origin = RuleOrigin::new("/p/.claude/settings.local.json", f.workspace.clone());
    assert!(
        gate.add_rule(RuleKind::Deny, "Bash(npm test:*)", origin.clone())
            .unwrap()
    );
    assert!(
        !gate
            .add_rule(RuleKind::Deny, "Bash(npm test:*)", origin.clone())
            .unwrap(),
        "a rule in force is not added twice"
    );
    assert_eq!(kind(&check(&gate, &call)).0, "deny", "a deny rule wins");
    assert!(
        gate.add_rule(RuleKind::Allow, "Bash(", origin).is_err(),
        "a malformed rule is refused"
    );

    let removed = gate.remove_rule(" Bash(npm test:*) ");
    assert_eq!(removed.len(), 2, "both the allow and the deny rule go");
    assert!(gate.rules().is_empty());
    assert_eq!(kind(&check(&gate, &call)).0, "ask");

    gate.allow_for_session("Bash(npm test:*)").unwrap();
    let removed = gate.remove_rule("Bash(npm test:*)");
    assert_eq!(removed[0].origin.source, "this session");
    assert!(gate.session_rules().is_empty());
    assert_eq!(kind(&check(&gate, &call)).0, "ask");
}

#[test]
fn the_suggestion_for_a_compound_command_covers_every_part() {
    let f = fixture();
    let gate = gate(&f, PermissionMode::Default, &[], Asking::Interactive);
    let call = bash(&f, "sleep 1; touch marker-file");
    let Verdict::Ask { suggested_rule, .. } = check(&gate, &call) else {
        panic!()
    };
    let suggested_rule = suggested_rule.unwrap();
    assert_eq!(suggested_rule, "Bash(sleep 1), Bash(touch marker-file)");
    gate.allow_for_session(&suggested_rule).unwrap();
    assert_eq!(
        kind(&check(&gate, &call)),
        ("allow", Some(DecisionSource::User)),
        "the suggestion, once allowed, allows the call"
    );
}
