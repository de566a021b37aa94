//! The rule offered for "don't ask again", and that it allows the call it was made for.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod rules_support;

use cairn_policy::rules::{RuleKind, RuleSet};
use pretty_assertions::assert_eq;
use rules_support::{Call, bash, bash_unparsed, fetch, on, project, tool};

fn cases() -> Vec<(Call, &'static str)> {
    vec![
        (bash(&["npm run test"]), "Bash(npm run test:*)"),
        (bash(&["npm run test --watch"]), "Bash(npm run test:*)"),
        (bash(&["git status"]), "Bash(git status:*)"),
        (bash(&["git commit -m fix"]), "Bash(git commit:*)"),
        (bash(&["cargo test -p cairn-policy"]), "Bash(cargo test:*)"),
        (
            bash(&["cargo +nightly build"]),
            "Bash(cargo +nightly build)",
        ),
        (bash(&["ls -la"]), "Bash(ls -la)"),
        (bash(&["rm -rf build"]), "Bash(rm -rf build)"),
        (bash(&["curl https://example.com"]), "Bash(curl:*)"),
        (bash(&["curl"]), "Bash(curl:*)"),
        (bash(&["wget -q https://x.org/a.tgz"]), "Bash(wget:*)"),
        (bash(&["curling --stones 8"]), "Bash(curling --stones 8)"),
        (bash(&["echo *"]), "Bash(echo \\*)"),
        (bash(&["git status", "npm test"]), "Bash(git status:*)"),
        (bash_unparsed("make   build"), "Bash(make build:*)"),
        (on("Edit", &["src/main.rs"]), "Edit(src/**)"),
        (on("Write", &["README.md"]), "Edit(./**)"),
        (on("NotebookEdit", &["src/nb/a.ipynb"]), "Edit(src/nb/**)"),
        (
            on("MultiEdit", &["/home/ann/other/x.rs"]),
            "Edit(~/other/**)",
        ),
        (on("Edit", &["/etc/hosts"]), "Edit(//etc/**)"),
        (on("Edit", &["src/a/x.rs", "src/b/y.rs"]), "Edit(src/**)"),
        (on("Edit", &["we[ird]/x.rs"]), "Edit(we[[]ird[]]/**)"),
        (on("Edit", &["~tmp/x.rs"]), "Edit(./~tmp/**)"),
        (on("Read", &["src/lib.rs"]), "Read(src/**)"),
        (on("Grep", &["src"]), "Read(src/**)"),
        (on("LS", &["."]), "Read(./**)"),
        (on("Read", &[]), "Read"),
        (fetch("https://Docs.rs/serde"), "WebFetch(domain:docs.rs)"),
        (fetch("not a url"), "WebFetch"),
        (tool("mcp__github__get_issue"), "mcp__github__get_issue"),
        (tool("WebSearch"), "WebSearch"),
    ]
}

#[test]
fn suggestions() {
    let cases = cases();
    let got: Vec<String> = cases
        .iter()
        .map(|(call, _)| RuleSet::suggest_allow_rule(&call.facts()))
        .collect();
    let want: Vec<String> = cases.iter().map(|(_, rule)| (*rule).to_owned()).collect();
    assert_eq!(got, want);
}

#[test]
fn a_suggested_rule_allows_its_call() {
    let mut got = Vec::new();
    let mut want = Vec::new();
    for (call, _) in cases() {
        let facts = call.facts();
        let texts = RuleSet::suggest_allow_rules(&facts);
        let (rules, errors) = RuleSet::new(
            texts
                .iter()
                .map(|text| (RuleKind::Allow, text.clone(), project())),
        );
        let decided = rules.evaluate(&facts).map(|rule| rule.kind);
        want.push((texts.clone(), vec![], Some(RuleKind::Allow)));
        got.push((texts, errors, decided));
    }
    assert_eq!(got, want);
}

#[test]
fn a_compound_command_needs_one_rule_per_part() {
    let call = bash(&["git status", "npm test", "git status --short", "ls -la"]);
    assert_eq!(
        RuleSet::suggest_allow_rules(&call.facts()),
        vec![
            "Bash(git status:*)".to_owned(),
            "Bash(npm test:*)".to_owned(),
            "Bash(ls -la)".to_owned(),
        ]
    );
}
