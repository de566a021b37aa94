//! Security classes the gate itself closes (issue 11): writes to protected files from every
//! tool in every mode but `bypassPermissions` (class 3), allow rules that never outrank the
//! analysis (class 5), and path rules judged where a path really leads (class 6, file tools).
//!
//! Each instance goes through the real gate over a real temp workspace with real symlinks.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod security_support;

use std::path::{Path, PathBuf};

use cairn_policy::rules::RuleKind;
use cairn_policy::{Asking, CallInfo, PermissionMode, Verdict};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

struct Fixture {
    _dir: tempfile::TempDir,
    workspace: PathBuf,
    home: PathBuf,
    outside: PathBuf,
}

/// A workspace with a git repository and `.claude/`, a home with `.ssh`, and a directory
/// outside both that a link inside the workspace points to.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let workspace = base.join("project");
    let home = base.join("home");
    let outside = base.join("elsewhere");
    for sub in [
        "src",
        ".git/hooks",
        ".git/info",
        ".claude/commands",
        "generated",
    ] {
        std::fs::create_dir_all(workspace.join(sub)).unwrap();
    }
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(workspace.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(workspace.join("secret.txt"), "s3cret").unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "KEY").unwrap();
    std::fs::write(outside.join("notes.txt"), "outside").unwrap();
    std::os::unix::fs::symlink(&outside, workspace.join("src/linked")).unwrap();
    std::os::unix::fs::symlink(workspace.join("secret.txt"), workspace.join("innocent.txt"))
        .unwrap();
    Fixture {
        _dir: dir,
        workspace,
        home,
        outside,
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

struct Call {
    tool: &'static str,
    input: Value,
    paths: Vec<PathBuf>,
    read_only: bool,
}

fn file_call(tool: &'static str, path: &Path) -> Call {
    let read_only = matches!(tool, "Read" | "Glob" | "Grep" | "LS");
    Call {
        tool,
        input: json!({"file_path": path}),
        paths: vec![path.to_path_buf()],
        read_only,
    }
}

fn bash(f: &Fixture, command: &str) -> Call {
    Call {
        tool: "Bash",
        input: json!({"command": command}),
        paths: vec![f.workspace.clone()],
        read_only: false,
    }
}

fn check(gate: &security_support::TestGate, call: &Call) -> Verdict {
    gate.check(&CallInfo {
        tool: call.tool,
        input: &call.input,
        paths: &call.paths,
        read_only: call.read_only,
        destructive: false,
        asking: gate.asking,
    })
}

/// "allow", "ask" or "deny".
fn kind(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Allow { .. } => "allow",
        Verdict::Ask { .. } => "ask",
        Verdict::Deny { .. } => "deny",
    }
}

#[test]
fn protected_files_ask_from_every_tool_in_every_mode_but_bypass() {
    let f = fixture();
    let w = &f.workspace;
    let calls = [
        file_call("Write", &w.join(".claude/settings.local.json")),
        file_call("Edit", &w.join(".claude/settings.json")),
        file_call("MultiEdit", &w.join(".mcp.json")),
        file_call("Write", &w.join(".git/hooks/post-merge")),
        file_call("Edit", &w.join(".git/config")),
        file_call("Write", &w.join(".git/info/attributes")),
        file_call("NotebookEdit", &w.join(".claude/commands/deploy.ipynb")),
        file_call("Write", &w.join(".claude.json")),
        bash(&f, "echo '{\"hooks\":{}}' > .claude/settings.local.json"),
        bash(&f, "printf '[core]\\n\\tfsmonitor = x\\n' >> .git/config"),
        bash(&f, "tee .git/hooks/pre-push < /dev/null"),
        bash(&f, "echo '{}' >| .mcp.json"),
        bash(&f, "cd .git/hooks && echo 'exit 0' > post-checkout"),
    ];
    // Allow rules broad enough to cover each call, and modes that allow edits.
    let allow_everything: &[(RuleKind, &str)] = &[
        (RuleKind::Allow, "Edit"),
        (RuleKind::Allow, "Bash(echo *)"),
        (RuleKind::Allow, "Bash(printf *)"),
        (RuleKind::Allow, "Bash(tee *)"),
        (RuleKind::Allow, "Bash(cd *)"),
    ];
    for call in &calls {
        let what = format!("{} {}", call.tool, call.input);
        for mode in [
            PermissionMode::Default,
            PermissionMode::AcceptEdits,
            PermissionMode::DontAsk,
        ] {
            let headless = gate(&f, mode, allow_everything, Asking::NonInteractive);
            assert_eq!(kind(&check(&headless, call)), "deny", "{mode:?}: {what}");
        }
        let interactive = gate(
            &f,
            PermissionMode::AcceptEdits,
            allow_everything,
            Asking::Interactive,
        );
        match check(&interactive, call) {
            Verdict::Ask {
                suggested_rule,
                reason,
            } => {
                assert_eq!(suggested_rule, None, "no rule lifts it: {what}");
                assert!(reason.contains("would change"), "{reason}");
            }
            other => panic!("{what}: {other:?}"),
        }
        let plan = gate(
            &f,
            PermissionMode::Plan,
            allow_everything,
            Asking::Interactive,
        );
        assert_eq!(kind(&check(&plan, call)), "deny", "plan: {what}");
        let bypass = gate(
            &f,
            PermissionMode::BypassPermissions,
            &[],
            Asking::NonInteractive,
        );
        assert_eq!(kind(&check(&bypass, call)), "allow", "bypass: {what}");
    }
}

#[test]
fn ordinary_edits_next_to_protected_files_are_not_protected() {
    let f = fixture();
    let w = &f.workspace;
    let calls = [
        file_call("Write", &w.join("src/main.rs")),
        file_call("Edit", &w.join("docs.claude.md")),
        file_call("Write", &w.join("src/.mcp.json.example")),
        bash(&f, "echo x > src/config"),
        bash(&f, "echo x > .git-notes"),
    ];
    let rules: &[(RuleKind, &str)] =
        &[(RuleKind::Allow, "Edit"), (RuleKind::Allow, "Bash(echo *)")];
    for call in &calls {
        let headless = gate(&f, PermissionMode::Default, rules, Asking::NonInteractive);
        assert_eq!(kind(&check(&headless, call)), "allow", "{}", call.input);
    }
}

#[test]
fn allow_rules_never_outrank_what_the_analysis_finds() {
    let f = fixture();
    let home = f.home.display();
    let outside = f.outside.display();
    // (command, allow rule that matches the command)
    let cases = [
        (format!("cat {home}/.ssh/id_ed25519"), "Bash(cat *)"),
        ("echo \"$(< ~/.ssh/id_ed25519)\"".to_owned(), "Bash(echo *)"),
        (format!("head -n 3 {outside}/notes.txt"), "Bash(head *)"),
        ("cat ../elsewhere/notes.txt".to_owned(), "Bash(cat *)"),
        (format!("echo pwned > {outside}/notes.txt"), "Bash(echo *)"),
        (format!("echo pwned >> {home}/.bashrc"), "Bash(echo *)"),
        ("ls ~/.ssh".to_owned(), "Bash(ls *)"),
        ("cp secret.txt ../elsewhere/copy".to_owned(), "Bash(cp *)"),
    ];
    for (command, rule) in &cases {
        let call = bash(&f, command);
        let headless = gate(
            &f,
            PermissionMode::Default,
            &[(RuleKind::Allow, rule)],
            Asking::NonInteractive,
        );
        assert_eq!(kind(&check(&headless, &call)), "deny", "{command}");
        let accept = gate(
            &f,
            PermissionMode::AcceptEdits,
            &[(RuleKind::Allow, rule)],
            Asking::Interactive,
        );
        assert_eq!(kind(&check(&accept, &call)), "ask", "{command}");
    }
}

#[test]
fn a_path_rule_of_its_own_allows_an_outside_path() {
    let f = fixture();
    let command = format!("cat {}/notes.txt", f.outside.display());
    let read_rule = format!("Read(/{}/**)", f.outside.display());
    let rules = [
        (RuleKind::Allow, "Bash(cat *)"),
        (RuleKind::Allow, read_rule.as_str()),
    ];
    let headless = gate(&f, PermissionMode::Default, &rules, Asking::NonInteractive);
    assert_eq!(kind(&check(&headless, &bash(&f, &command))), "allow");
    // A rule for the whole Read tool speaks of the workspace only.
    let broad = gate(
        &f,
        PermissionMode::Default,
        &[(RuleKind::Allow, "Bash(cat *)"), (RuleKind::Allow, "Read")],
        Asking::NonInteractive,
    );
    assert_eq!(kind(&check(&broad, &bash(&f, &command))), "deny");
}

#[test]
fn deny_rules_apply_to_what_a_command_reads_and_writes() {
    let f = fixture();
    let cases = [
        ("cat secret.txt", "Read(./secret.txt)", "Bash(cat *)"),
        ("grep -c s secret.txt", "Read(./secret.txt)", "Bash(grep *)"),
        (
            "echo \"$(< secret.txt)\"",
            "Read(./secret.txt)",
            "Bash(echo *)",
        ),
        (
            "wc -c < ./src/../secret.txt",
            "Read(./secret.txt)",
            "Bash(wc *)",
        ),
        (
            "echo x > generated/out.txt",
            "Edit(./generated/**)",
            "Bash(echo *)",
        ),
        (
            "touch generated/new",
            "Edit(./generated/**)",
            "Bash(touch *)",
        ),
        ("rm -f generated/old", "Edit(./generated/**)", "Bash(rm *)"),
    ];
    for (command, deny, allow) in cases {
        let rules = [(RuleKind::Deny, deny), (RuleKind::Allow, allow)];
        let bypass = gate(
            &f,
            PermissionMode::BypassPermissions,
            &rules,
            Asking::Interactive,
        );
        match check(&bypass, &bash(&f, command)) {
            Verdict::Deny { rule, .. } => assert_eq!(rule.as_deref(), Some(deny), "{command}"),
            other => panic!("{command}: {other:?}"),
        }
    }
}

#[test]
fn file_rules_match_where_a_link_leads() {
    let f = fixture();
    let w = &f.workspace;
    // `src/linked` points outside: `Edit(src/**)` does not reach there.
    let edit_rule = [(RuleKind::Allow, "Edit(src/**)")];
    for tool in ["Write", "Edit", "MultiEdit", "NotebookEdit"] {
        let call = file_call(tool, &w.join("src/linked/notes.txt"));
        let headless = gate(
            &f,
            PermissionMode::Default,
            &edit_rule,
            Asking::NonInteractive,
        );
        assert_eq!(
            kind(&check(&headless, &call)),
            "deny",
            "{tool} through the link"
        );
        let accept = gate(&f, PermissionMode::AcceptEdits, &[], Asking::NonInteractive);
        assert_eq!(
            kind(&check(&accept, &call)),
            "deny",
            "{tool} in acceptEdits"
        );
    }
    let plain = file_call("Write", &w.join("src/lib.rs"));
    let headless = gate(
        &f,
        PermissionMode::Default,
        &edit_rule,
        Asking::NonInteractive,
    );
    assert_eq!(kind(&check(&headless, &plain)), "allow", "an ordinary file");

    // A deny rule on the target holds for a link to it.
    let deny = [(RuleKind::Deny, "Read(./secret.txt)")];
    let bypass = gate(
        &f,
        PermissionMode::BypassPermissions,
        &deny,
        Asking::Interactive,
    );
    assert_eq!(
        kind(&check(&bypass, &file_call("Read", &w.join("innocent.txt")))),
        "deny"
    );
}
