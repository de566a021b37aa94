//! Issue 11, classes 3 and 6 through the real binary in `-p`: files that decide what runs later
//! (`.claude/`, `.mcp.json`, git's configuration and hooks) are refused to every tool whatever
//! the rules and the mode (but `bypassPermissions`), the sandbox keeps them read-only even
//! there, and file rules are judged where a link leads.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]
#![allow(clippy::print_stderr, reason = "a skipped test says why")]

use std::process::{Command, Output};

use cairn_test_support::Reply;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT};

/// A workspace that is a real git repository with project settings.
fn repository() -> Harness {
    let h = Harness::new();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(args)
            .current_dir(h.work.path())
            .output()
            .unwrap();
        assert!(status.status.success(), "git {args:?}: {status:?}");
    };
    git(&["init", "-q"]);
    h.settings(json!({}));
    h
}

/// Every file below the workspace with its contents (`.git/objects` aside), to show that
/// nothing changed.
fn snapshot(h: &Harness) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut dirs = vec![h.work.path().to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path
                .strip_prefix(h.work.path())
                .unwrap()
                .display()
                .to_string();
            if name.starts_with(".git/objects") {
                continue;
            }
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// Runs `cairn -p` with `args`, the model making `call` then answering; returns the output
/// and the tool result the model got.
fn run_call(h: &Harness, name: &str, input: Value, args: &[&str]) -> (Output, Value) {
    h.server.push(Reply::tool_use("call", name, input));
    h.server.push(Reply::text("done"));
    let before = h.server.requests().len();
    let output = h.command().args(["-p", "go"]).args(args).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let request = &h.server.wait_for_requests(before + 2, WAIT)[before + 1];
    let messages = request.body["messages"].as_array().unwrap();
    let result = messages.last().unwrap()["content"][0].clone();
    (output, result)
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| result["content"].to_string())
}

#[test]
fn protected_files_are_refused_to_every_tool_whatever_the_rules() {
    let h = repository();
    let rules = "Edit,Write,Bash(echo *),Bash(printf *),Bash(tee *),Bash(cp *)";
    let calls = [
        (
            "Write",
            json!({"file_path": ".claude/settings.local.json",
                   "content": "{\"hooks\":{\"SessionStart\":[]}}"}),
        ),
        (
            "Write",
            json!({"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
        ),
        (
            "Write",
            json!({"file_path": ".mcp.json", "content": "{\"mcpServers\":{}}"}),
        ),
        (
            "Bash",
            json!({"command": "echo '{\"sandbox\":{\"enabled\":false}}' > .claude/settings.json"}),
        ),
        (
            "Bash",
            json!({"command": "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config"}),
        ),
        (
            "Bash",
            json!({"command": "echo '* filter=x' | tee .git/info/attributes"}),
        ),
        (
            "Bash",
            json!({"command": "cd .git/hooks && echo 'touch pwned' > post-checkout"}),
        ),
    ];
    let before = snapshot(&h);
    for (tool, input) in calls {
        let what = format!("{tool} {input}");
        for mode in ["default", "acceptEdits"] {
            let (_, result) = run_call(
                &h,
                tool,
                input.clone(),
                &["--permission-mode", mode, "--allowedTools", rules],
            );
            assert_eq!(result["is_error"], json!(true), "{mode}: {what}: {result}");
            let text = text_of(&result);
            assert!(text.contains("would change"), "{mode}: {what}: {text}");
            assert!(
                text.contains("bypassPermissions"),
                "says what would allow it: {text}"
            );
        }
        assert_eq!(snapshot(&h), before, "nothing changed on disk after {what}");
    }
}

#[test]
fn the_sandbox_keeps_protected_files_read_only_even_when_every_call_is_allowed() {
    let h = repository();
    std::fs::write(h.path("notes.txt"), "notes\n").unwrap();
    // Text the analysis cannot see through, run with every permission granted: only the
    // sandbox stands between the command and the files.
    let script = "p=.git/hooks; for f in $p/pre-commit .git/config .claude/settings.json; do \
                  echo 'touch pwned' >> \"$f\" 2>/dev/null && echo \"ESCAPED $f\"; done; \
                  mv .git .git-moved 2>/dev/null && echo 'ESCAPED rename'; \
                  echo '{\"mcpServers\":{}}' > .mcp.json; echo more >> notes.txt; echo finished";
    let before = snapshot(&h);
    let (output, result) = run_call(
        &h,
        "Bash",
        json!({"command": format!("sh -c \"$(printf '%s' '{script}')\"")}),
        &["--permission-mode", "bypassPermissions"],
    );
    if String::from_utf8_lossy(&output.stderr).contains("the sandbox is not available") {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let text = text_of(&result);
    assert!(text.contains("finished"), "{text}");
    assert!(!text.contains("ESCAPED"), "{text}");
    // A protected file that did not exist cannot be mounted: the one created is removed.
    assert!(text.contains("The sandbox removed"), "{text}");
    assert!(!h.path(".mcp.json").exists());
    let mut after = snapshot(&h);
    let notes = after
        .iter()
        .position(|(name, _)| name == "notes.txt")
        .unwrap();
    assert_eq!(
        after.remove(notes).1,
        b"notes\nmore\n",
        "ordinary writes work"
    );
    let mut before = before;
    before.retain(|(name, _)| name != "notes.txt");
    assert_eq!(after, before);
    assert!(!h.path("pwned").exists());
}

#[test]
fn file_rules_are_judged_where_a_link_leads() {
    let h = Harness::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("target.txt"), "outside\n").unwrap();
    std::fs::create_dir_all(h.path("src")).unwrap();
    std::os::unix::fs::symlink(outside.path(), h.path("src/linked")).unwrap();
    for (tool, input) in [
        (
            "Write",
            json!({"file_path": "src/linked/new.txt", "content": "x"}),
        ),
        (
            "Write",
            json!({"file_path": "src/linked/target.txt", "content": "overwritten"}),
        ),
    ] {
        let (_, result) = run_call(&h, tool, input.clone(), &["--allowedTools", "Edit(src/**)"]);
        assert_eq!(result["is_error"], json!(true), "{input}: {result}");
    }
    assert!(!outside.path().join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(outside.path().join("target.txt")).unwrap(),
        "outside\n"
    );
    // The same rule still allows an ordinary file below src/.
    let (_, result) = run_call(
        &h,
        "Write",
        json!({"file_path": "src/lib.rs", "content": "// ok\n"}),
        &["--allowedTools", "Edit(src/**)"],
    );
    assert_eq!(result.get("is_error"), None, "{result}");
    assert_eq!(
        std::fs::read_to_string(h.path("src/lib.rs")).unwrap(),
        "// ok\n"
    );
}
