//! Which rule decides a call: syntax, anchors, tool families, compound commands, precedence.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod rules_support;

use cairn_policy::rules::{RuleKind, RuleOrigin, RuleSet};
use pretty_assertions::assert_eq;
use rules_support::{
    Call, HOME, bash, bash_line, bash_unparsed, fetch, flag, on, project, tool, user,
};

use RuleKind::{Allow, Ask, Deny};

/// A subdirectory of the project to start from.
const APP: &str = "/home/ann/proj/app";

struct Case {
    name: &'static str,
    rules: Vec<(RuleKind, &'static str, RuleOrigin)>,
    call: Call,
    want: Option<(RuleKind, &'static str)>,
}

fn case(
    name: &'static str,
    rules: &[(RuleKind, &'static str)],
    call: Call,
    want: Option<(RuleKind, &'static str)>,
) -> Case {
    let rules = rules
        .iter()
        .map(|(kind, text)| (*kind, *text, project()))
        .collect();
    Case {
        name,
        rules,
        call,
        want,
    }
}

fn case_from(
    name: &'static str,
    rules: Vec<(RuleKind, &'static str, RuleOrigin)>,
    call: Call,
    want: Option<(RuleKind, &'static str)>,
) -> Case {
    Case {
        name,
        rules,
        call,
        want,
    }
}

fn cases() -> Vec<Case> {
    vec![
        // A tool name alone matches every call of that tool, compared exactly.
        case("no rules", &[], bash(&["ls"]), None),
        case(
            "Bash alone",
            &[(Allow, "Bash")],
            bash(&["rm -rf /tmp/x"]),
            Some((Allow, "Bash")),
        ),
        case(
            "Bash(*) is Bash",
            &[(Allow, "Bash(*)")],
            bash(&["git status", "rm x"]),
            Some((Allow, "Bash(*)")),
        ),
        case(
            "Read alone",
            &[(Allow, "Read")],
            on("Read", &["/etc/passwd"]),
            Some((Allow, "Read")),
        ),
        case(
            "WebFetch alone",
            &[(Allow, "WebFetch")],
            fetch("https://example.org/"),
            Some((Allow, "WebFetch")),
        ),
        case(
            "names compare exactly",
            &[(Allow, "Bash")],
            tool("BashOutput"),
            None,
        ),
        case(
            "Write alone is only Write",
            &[(Allow, "Write")],
            on("Edit", &["src/a.rs"]),
            None,
        ),
        case(
            "Edit alone governs Write",
            &[(Allow, "Edit")],
            on("Write", &["src/a.rs"]),
            Some((Allow, "Edit")),
        ),
        case(
            "Read alone governs Grep",
            &[(Deny, "Read")],
            on("Grep", &["src"]),
            Some((Deny, "Read")),
        ),
        case(
            "other tools by name",
            &[(Allow, "TodoWrite")],
            tool("TodoWrite"),
            Some((Allow, "TodoWrite")),
        ),
        // Bash: exact, wildcard, legacy prefix.
        case(
            "exact",
            &[(Allow, "Bash(npm run build)")],
            bash(&["npm run build"]),
            Some((Allow, "Bash(npm run build)")),
        ),
        case(
            "exact, extra argument",
            &[(Allow, "Bash(npm run build)")],
            bash(&["npm run build --prod"]),
            None,
        ),
        case(
            "wildcard",
            &[(Allow, "Bash(git *)")],
            bash(&["git status"]),
            Some((Allow, "Bash(git *)")),
        ),
        case(
            "trailing ` *` is optional",
            &[(Allow, "Bash(git *)")],
            bash(&["git"]),
            Some((Allow, "Bash(git *)")),
        ),
        case(
            "` *` keeps a word boundary",
            &[(Allow, "Bash(git *)")],
            bash(&["gitk --all"]),
            None,
        ),
        case(
            "`*` without a space has none",
            &[(Allow, "Bash(ls*)")],
            bash(&["lsof -i"]),
            Some((Allow, "Bash(ls*)")),
        ),
        case(
            "leading wildcard",
            &[(Allow, "Bash(* --version)")],
            bash(&["node --version"]),
            Some((Allow, "Bash(* --version)")),
        ),
        case(
            "inner wildcard",
            &[(Allow, "Bash(git * main)")],
            bash(&["git push origin main"]),
            Some((Allow, "Bash(git * main)")),
        ),
        case(
            "inner wildcard, wrong end",
            &[(Allow, "Bash(git * main)")],
            bash(&["git push origin main --force"]),
            None,
        ),
        case(
            "legacy prefix, bare",
            &[(Allow, "Bash(npm test:*)")],
            bash(&["npm test"]),
            Some((Allow, "Bash(npm test:*)")),
        ),
        case(
            "legacy prefix, arguments",
            &[(Allow, "Bash(npm test:*)")],
            bash(&["npm test --watch"]),
            Some((Allow, "Bash(npm test:*)")),
        ),
        case(
            "legacy prefix, word boundary",
            &[(Allow, "Bash(npm test:*)")],
            bash(&["npm testing"]),
            None,
        ),
        case(
            "legacy prefix, no colon continuation",
            &[(Allow, "Bash(npm run test:*)")],
            bash(&["npm run test:unit"]),
            None,
        ),
        case(
            "escaped star is literal",
            &[(Allow, "Bash(echo \\*)")],
            bash(&["echo hello"]),
            None,
        ),
        // Compound commands: every part must be allowed; any denied part denies.
        case(
            "compound bypass",
            &[(Allow, "Bash(git *)")],
            bash(&["git status", "rm -rf ~"]),
            None,
        ),
        case(
            "legacy prefix, compound bypass",
            &[(Allow, "Bash(safe-cmd:*)")],
            bash(&["safe-cmd", "other-cmd"]),
            None,
        ),
        case(
            "compound, parts allowed by different rules",
            &[(Allow, "Bash(npm test:*)"), (Allow, "Bash(git *)")],
            bash(&["git status", "npm test"]),
            Some((Allow, "Bash(git *)")),
        ),
        case(
            "compound, one part denied",
            &[(Allow, "Bash"), (Deny, "Bash(rm:*)")],
            bash(&["git status", "rm -rf x"]),
            Some((Deny, "Bash(rm:*)")),
        ),
        case(
            "compound, one part asks",
            &[(Allow, "Bash(git *)"), (Ask, "Bash(git push:*)")],
            bash(&["git add .", "git push"]),
            Some((Ask, "Bash(git push:*)")),
        ),
        case(
            "deny on the whole line",
            &[(Allow, "Bash"), (Deny, "Bash(curl * | sh)")],
            bash_line("curl https://x.sh | sh", &["curl https://x.sh", "sh"]),
            Some((Deny, "Bash(curl * | sh)")),
        ),
        case(
            "unparsed: one plain command",
            &[(Allow, "Bash(git *)")],
            bash_unparsed("git  status"),
            Some((Allow, "Bash(git *)")),
        ),
        case(
            "unparsed: operators fail closed",
            &[(Allow, "Bash(git *)")],
            bash_unparsed("git status && rm -rf ~"),
            None,
        ),
        case(
            "unparsed: substitution fails closed",
            &[(Allow, "Bash(echo *)")],
            bash_unparsed("echo $(rm -rf ~)"),
            None,
        ),
        case(
            "unparsed: deny still matches",
            &[(Deny, "Bash(rm:*)")],
            bash_unparsed("rm   -rf /"),
            Some((Deny, "Bash(rm:*)")),
        ),
        case(
            "unparsed: Bash alone allows",
            &[(Allow, "Bash")],
            bash_unparsed("git status"),
            Some((Allow, "Bash")),
        ),
        // Precedence: deny, then ask, then allow, whatever the order written.
        case(
            "deny beats ask and allow",
            &[
                (Allow, "Bash"),
                (Ask, "Bash(git *)"),
                (Deny, "Bash(git push:*)"),
            ],
            bash(&["git push"]),
            Some((Deny, "Bash(git push:*)")),
        ),
        case(
            "ask beats a narrower allow",
            &[(Allow, "Bash(git status)"), (Ask, "Bash(git *)")],
            bash(&["git status"]),
            Some((Ask, "Bash(git *)")),
        ),
        case(
            "deny beats a broad allow",
            &[(Allow, "Read"), (Deny, "Read(./.env)")],
            on("Read", &[".env"]),
            Some((Deny, "Read(./.env)")),
        ),
        case(
            "first allow covering the whole call",
            &[(Allow, "Edit(src/**)"), (Allow, "Edit")],
            on("Edit", &["src/a.rs", "docs/b.md"]),
            Some((Allow, "Edit")),
        ),
        case_from(
            "user deny beats project allow",
            vec![
                (Allow, "Read", project()),
                (Deny, "Read(~/.ssh/**)", user()),
            ],
            on("Read", &["/home/ann/.ssh/id_ed25519"]),
            Some((Deny, "Read(~/.ssh/**)")),
        ),
        // Edit rules govern Write, MultiEdit and NotebookEdit.
        case(
            "Edit path",
            &[(Allow, "Edit(src/**)")],
            on("Edit", &["src/main.rs"]),
            Some((Allow, "Edit(src/**)")),
        ),
        case(
            "Edit path governs Write",
            &[(Allow, "Edit(src/**)")],
            on("Write", &["src/new.rs"]),
            Some((Allow, "Edit(src/**)")),
        ),
        case(
            "Edit path governs MultiEdit",
            &[(Allow, "Edit(src/**)")],
            on("MultiEdit", &["src/a/b.rs"]),
            Some((Allow, "Edit(src/**)")),
        ),
        case(
            "Edit path governs NotebookEdit",
            &[(Allow, "Edit(src/**)")],
            on("NotebookEdit", &["src/nb.ipynb"]),
            Some((Allow, "Edit(src/**)")),
        ),
        case(
            "Edit path, outside",
            &[(Allow, "Edit(src/**)")],
            on("Edit", &["tests/a.rs"]),
            None,
        ),
        case(
            "Edit path does not govern Read",
            &[(Allow, "Edit(src/**)")],
            on("Read", &["src/main.rs"]),
            None,
        ),
        case(
            "Read path does not govern Edit",
            &[(Allow, "Read(src/**)")],
            on("Edit", &["src/main.rs"]),
            None,
        ),
        case(
            "`..` in the call's path",
            &[(Allow, "Edit(src/**)")],
            on("Edit", &["src/../.env"]),
            None,
        ),
        case(
            "allow `*` stays in one segment",
            &[(Allow, "Edit(src/*)")],
            on("Edit", &["src/a/b.rs"]),
            None,
        ),
        case(
            "deny `*` covers what a directory holds",
            &[(Deny, "Edit(src/*)")],
            on("Edit", &["src/a/b.rs"]),
            Some((Deny, "Edit(src/*)")),
        ),
        case(
            "allow of a literal directory",
            &[(Allow, "Edit(docs)")],
            on("Edit", &["docs/api/x.md"]),
            Some((Allow, "Edit(docs)")),
        ),
        case(
            "`*` within a segment",
            &[(Allow, "Edit(src/*)")],
            on("Edit", &["src/b.rs"]),
            Some((Allow, "Edit(src/*)")),
        ),
        case(
            "braces",
            &[(Allow, "Edit(src/**/*.{rs,toml})")],
            on("Write", &["src/a/Cargo.toml"]),
            Some((Allow, "Edit(src/**/*.{rs,toml})")),
        ),
        // dir/**: anchored for allow, any depth for deny and ask.
        case(
            "allow dir/** is anchored",
            &[(Allow, "Edit(src/**)")],
            on("Edit", &["lib/src/x.rs"]),
            None,
        ),
        case(
            "deny dir/** at any depth",
            &[(Deny, "Edit(src/**)")],
            on("Edit", &["lib/src/x.rs"]),
            Some((Deny, "Edit(src/**)")),
        ),
        case(
            "ask dir/** at any depth",
            &[(Ask, "Read(secrets/**)")],
            on("Read", &["a/secrets/k"]),
            Some((Ask, "Read(secrets/**)")),
        ),
        // Read rules govern Glob, Grep and LS, judged on the directory searched.
        case(
            "./ anchors at the working directory",
            &[(Deny, "Read(./.env)")],
            on("Read", &[".env"]),
            Some((Deny, "Read(./.env)")),
        ),
        case(
            "./ does not reach deeper",
            &[(Deny, "Read(./.env)")],
            on("Read", &["sub/.env"]),
            None,
        ),
        case(
            "no slash: any depth",
            &[(Deny, "Read(.env)")],
            on("Read", &["sub/.env"]),
            Some((Deny, "Read(.env)")),
        ),
        case(
            "no slash glob: any depth",
            &[(Deny, "Read(*.env)")],
            on("Read", &["config/prod.env"]),
            Some((Deny, "Read(*.env)")),
        ),
        case(
            "a directory covers its contents",
            &[(Deny, "Read(secrets)")],
            on("Read", &["secrets/key"]),
            Some((Deny, "Read(secrets)")),
        ),
        case(
            "Read path governs Grep on the directory itself",
            &[(Allow, "Read(src/**)")],
            on("Grep", &["src"]),
            Some((Allow, "Read(src/**)")),
        ),
        case(
            "Read path governs Glob",
            &[(Allow, "Read(src/**)")],
            on("Glob", &["src/sub"]),
            Some((Allow, "Read(src/**)")),
        ),
        case(
            "Read path governs LS, outside",
            &[(Allow, "Read(src/**)")],
            on("LS", &["."]),
            None,
        ),
        case(
            "deny Read governs LS",
            &[(Deny, "Read(secrets/**)")],
            on("LS", &["secrets"]),
            Some((Deny, "Read(secrets/**)")),
        ),
        case(
            "a path rule with no paths",
            &[(Allow, "Read(src/**)")],
            on("Grep", &[]),
            None,
        ),
        // Anchors: //, ~/, /, relative.
        case(
            "// is the filesystem root",
            &[(Deny, "Edit(//etc/**)")],
            on("Write", &["/etc/hosts"]),
            Some((Deny, "Edit(//etc/**)")),
        ),
        case(
            "// is not the project",
            &[(Deny, "Edit(//etc/**)")],
            on("Write", &["etc/hosts"]),
            None,
        ),
        case(
            "~/ is home",
            &[(Deny, "Read(~/.ssh/**)")],
            on("Read", &["/home/ann/.ssh/id_rsa"]),
            Some((Deny, "Read(~/.ssh/**)")),
        ),
        case(
            "~/ is not the project",
            &[(Deny, "Read(~/.ssh/**)")],
            on("Read", &[".ssh/id_rsa"]),
            None,
        ),
        case(
            "~ alone",
            &[(Deny, "Read(~)")],
            on("Read", &["/home/ann/notes.txt"]),
            Some((Deny, "Read(~)")),
        ),
        case(
            "/ in project settings is the project",
            &[(Allow, "Edit(/docs/**)")],
            on("Edit", &["docs/a.md"]),
            Some((Allow, "Edit(/docs/**)")),
        ),
        case_from(
            "/ in user settings is not the project",
            vec![(Allow, "Edit(/docs/**)", user())],
            on("Edit", &["docs/a.md"]),
            None,
        ),
        case_from(
            "/ in user settings is ~/.claude",
            vec![(Deny, "Read(/secrets/**)", user())],
            on("Read", &["/home/ann/.claude/secrets/token"]),
            Some((Deny, "Read(/secrets/**)")),
        ),
        case_from(
            "/ in a flag is the working directory",
            vec![(Allow, "Edit(/docs/**)", flag(APP))],
            on("Edit", &["app/docs/a.md"]).in_dir(APP),
            Some((Allow, "Edit(/docs/**)")),
        ),
        case(
            "relative follows the working directory",
            &[(Allow, "Edit(src/**)")],
            on("Edit", &["app/src/x.rs"]).in_dir(APP),
            Some((Allow, "Edit(src/**)")),
        ),
        case(
            "relative is not the project root",
            &[(Allow, "Edit(src/**)")],
            on("Edit", &["src/x.rs"]).in_dir(APP),
            None,
        ),
        case(
            "/ stays at the project from a subdirectory",
            &[(Allow, "Edit(/src/**)")],
            on("Edit", &["src/x.rs"]).in_dir(APP),
            Some((Allow, "Edit(/src/**)")),
        ),
        case(
            "../ climbs from the working directory",
            &[(Allow, "Read(../shared/**)")],
            on("Read", &["shared/x.md"]).in_dir(APP),
            Some((Allow, "Read(../shared/**)")),
        ),
        // Several paths: allow needs all of them, deny any of them.
        case(
            "allow needs every path",
            &[(Allow, "Edit(src/**)")],
            on("MultiEdit", &["src/a.rs", "tests/b.rs"]),
            None,
        ),
        case(
            "paths allowed by different rules",
            &[(Allow, "Edit(src/**)"), (Allow, "Edit(tests/**)")],
            on("Edit", &["src/a.rs", "tests/b.rs"]),
            Some((Allow, "Edit(src/**)")),
        ),
        case(
            "deny needs one path",
            &[(Allow, "Edit"), (Deny, "Edit(tests/**)")],
            on("Edit", &["src/a.rs", "tests/b.rs"]),
            Some((Deny, "Edit(tests/**)")),
        ),
        // MCP.
        case(
            "server",
            &[(Allow, "mcp__github")],
            tool("mcp__github__get_issue"),
            Some((Allow, "mcp__github")),
        ),
        case(
            "server, another server",
            &[(Allow, "mcp__github")],
            tool("mcp__githubx__get_issue"),
            None,
        ),
        case(
            "server wildcard",
            &[(Allow, "mcp__github__*")],
            tool("mcp__github__create_pr"),
            Some((Allow, "mcp__github__*")),
        ),
        case(
            "one tool",
            &[(Allow, "mcp__github__get_issue")],
            tool("mcp__github__get_issue"),
            Some((Allow, "mcp__github__get_issue")),
        ),
        case(
            "one tool, another tool",
            &[(Allow, "mcp__github__get_issue")],
            tool("mcp__github__delete_repo"),
            None,
        ),
        case(
            "tool pattern",
            &[(Allow, "mcp__github__get_*")],
            tool("mcp__github__get_pr"),
            Some((Allow, "mcp__github__get_*")),
        ),
        case(
            "tool pattern, outside",
            &[(Allow, "mcp__github__get_*")],
            tool("mcp__github__list_prs"),
            None,
        ),
        case(
            "deny one tool of an allowed server",
            &[(Allow, "mcp__github"), (Deny, "mcp__github__delete_*")],
            tool("mcp__github__delete_repo"),
            Some((Deny, "mcp__github__delete_*")),
        ),
        // WebFetch domains.
        case(
            "domain",
            &[(Allow, "WebFetch(domain:example.com)")],
            fetch("https://example.com/a"),
            Some((Allow, "WebFetch(domain:example.com)")),
        ),
        case(
            "domain, case and port",
            &[(Allow, "WebFetch(domain:example.com)")],
            fetch("https://EXAMPLE.com:8080/x"),
            Some((Allow, "WebFetch(domain:example.com)")),
        ),
        case(
            "domain is exact",
            &[(Allow, "WebFetch(domain:example.com)")],
            fetch("https://www.example.com/"),
            None,
        ),
        case(
            "domain, user-info trick",
            &[(Allow, "WebFetch(domain:example.com)")],
            fetch("https://example.com@evil.test/"),
            None,
        ),
        case(
            "subdomains",
            &[(Allow, "WebFetch(domain:*.example.com)")],
            fetch("https://a.b.example.com/"),
            Some((Allow, "WebFetch(domain:*.example.com)")),
        ),
        case(
            "subdomains exclude the apex",
            &[(Allow, "WebFetch(domain:*.example.com)")],
            fetch("https://example.com/"),
            None,
        ),
        case(
            "subdomains, look-alike",
            &[(Allow, "WebFetch(domain:*.example.com)")],
            fetch("https://evilexample.com/"),
            None,
        ),
        case(
            "domain deny",
            &[(Allow, "WebFetch"), (Deny, "WebFetch(domain:evil.test)")],
            fetch("http://evil.test/"),
            Some((Deny, "WebFetch(domain:evil.test)")),
        ),
        case(
            "domain rules do not govern Bash",
            &[(Allow, "WebFetch(domain:example.com)")],
            bash(&["curl https://example.com"]),
            None,
        ),
        // Malformed rules are left out.
        case(
            "malformed deny is ignored",
            &[(Allow, "Bash"), (Deny, "Bash(")],
            bash(&["rm x"]),
            Some((Allow, "Bash")),
        ),
        case(
            "path rule on Write is ignored",
            &[(Allow, "Write(src/**)")],
            on("Write", &["src/a.rs"]),
            None,
        ),
        case(
            "wrong case is ignored",
            &[(Allow, "bash")],
            bash(&["ls"]),
            None,
        ),
    ]
}

#[test]
fn the_deciding_rule_for_each_call() {
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let mut got = Vec::new();
    let mut want = Vec::new();
    for case in &cases {
        let (rules, _errors) = RuleSet::new(
            case.rules
                .iter()
                .map(|(kind, text, origin)| (*kind, (*text).to_owned(), origin.clone())),
        );
        let decided = rules
            .evaluate(&case.call.facts())
            .map(|rule| (rule.kind, rule.text.clone()));
        got.push((case.name, decided));
        want.push((
            case.name,
            case.want.map(|(kind, text)| (kind, text.to_owned())),
        ));
    }
    assert_eq!(got, want);
}

#[test]
fn the_deciding_rule_keeps_its_origin() {
    let (rules, errors) = RuleSet::new([
        (Allow, "Read".to_owned(), project()),
        (Deny, "Read(~/.ssh/**)".to_owned(), user()),
    ]);
    assert_eq!(errors, vec![]);
    let call = on("Read", &[&format!("{HOME}/.ssh/config")]);
    let decided = rules.evaluate(&call.facts()).cloned();
    let expected = RuleSet::new([(Deny, "Read(~/.ssh/**)".to_owned(), user())])
        .0
        .rules()
        .first()
        .cloned();
    assert_eq!(decided, expected);
    assert_eq!(
        decided.map(|rule| rule.origin),
        Some(RuleOrigin::new(
            "/home/ann/.claude/settings.json",
            "/home/ann/.claude"
        ))
    );
}
