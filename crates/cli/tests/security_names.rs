//! Issue 11, classes 1 and 2 through the real binary: in `cairn -p`, default mode, with
//! `--allowedTools` allowing every word the command uses, a command that makes a later name
//! run another program (`hash -p`, `BASH_CMDS`, a function) or that has Bash evaluate a
//! subscript hidden in a value (`$((v))`, `let '…'`) is refused, the model is told so, and
//! the file it would have deleted or created is untouched.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::{RecordedRequest, Reply};
use serde_json::json;

mod support;
use support::{Harness, WAIT, tool_result};

/// Runs `cairn -p` with `--allowedTools rules`, the model calling Bash once per command.
fn run(h: &Harness, rules: &str, commands: &[&str]) -> Vec<RecordedRequest> {
    for (n, command) in commands.iter().enumerate() {
        h.server.push(Reply::tool_use(
            &format!("t{n}"),
            "Bash",
            json!({ "command": command }),
        ));
    }
    h.server.push(Reply::text("done"));
    let output = h
        .command()
        .args(["-p", "go", "--allowedTools", rules])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    h.server.wait_for_requests(commands.len() + 1, WAIT)
}

fn assert_refused(requests: &[RecordedRequest], n: usize, command: &str, reason: &str) {
    let (is_error, text) = tool_result(requests, n);
    assert!(
        is_error && text.contains("nobody can be asked in cairn -p") && text.contains(reason),
        "{command}: {text}"
    );
}

#[test]
fn a_name_made_to_run_another_program_is_refused_although_every_word_is_allowed() {
    let h = Harness::new();
    std::fs::write(h.path("victim.txt"), "keep me\n").unwrap();
    let commands = [
        "hash -p /bin/rm head; head -f victim.txt",
        "BASH_CMDS[tail]=/bin/rm; tail -f victim.txt",
        "wc() { rm -f \"$@\"; }; wc victim.txt",
        // The rules really let commands run: this one reads the file.
        "head -n 1 victim.txt",
    ];
    let requests = run(
        &h,
        "Bash(hash:*),Bash(head:*),Bash(tail:*),Bash(wc:*),Bash(rm:*)",
        &commands,
    );
    assert_refused(
        &requests,
        1,
        commands[0],
        "`hash -p` makes a command name run",
    );
    assert_refused(&requests, 2, commands[1], "sets BASH_CMDS");
    assert_refused(&requests, 3, commands[2], "defines the function wc");
    let (is_error, text) = tool_result(&requests, 4);
    assert!(!is_error && text.contains("keep me"), "{text}");
    assert_eq!(
        std::fs::read_to_string(h.path("victim.txt")).unwrap(),
        "keep me\n"
    );
}

#[test]
fn a_subscript_hidden_in_evaluated_text_is_refused_although_the_command_is_allowed() {
    let h = Harness::new();
    std::fs::write(h.path("victim.txt"), "keep me\n").unwrap();
    let commands = [
        "v='k[$(rm -f victim.txt)]'; echo $(( v + 1 ))",
        "let 'n[$(touch created.txt)] = 1'",
        "[[ 'k[$(touch created.txt)]' -le 3 ]] && echo small",
        // Plain arithmetic still runs unasked.
        "i=4; echo $(( i * 2 ))",
    ];
    let requests = run(&h, "Bash(echo:*),Bash(let:*),Bash([[:*)", &commands);
    for (n, command) in commands.iter().enumerate().take(3) {
        assert_refused(
            &requests,
            n + 1,
            command,
            "an array subscript in it could run a command",
        );
    }
    let (is_error, text) = tool_result(&requests, 4);
    assert!(!is_error && text.trim() == "8", "{text}");
    assert_eq!(
        std::fs::read_to_string(h.path("victim.txt")).unwrap(),
        "keep me\n"
    );
    assert!(!h.path("created.txt").exists());
}
