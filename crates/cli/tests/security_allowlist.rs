//! Issue 21, read-only by allowlist, through the real binary in `cairn -p`: abbreviations of
//! options that write files or run programs (`sort --compress-prog=`, `sort --out=`,
//! `shuf --outp=`), an output operand (`uniq -c IN OUT`) and a program option under an allow
//! rule for the command alone (`Bash(sort:*)`) are refused, the model is told so, and nothing
//! changes on disk: with the sandbox on, and with it off, where the analysis alone must hold.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::os::unix::fs::PermissionsExt;

use cairn_test_support::Reply;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT, tool_result};

/// The attacks: each would create the file named beside it if it ran.
const ATTACKS: &[(&str, &str)] = &[
    (
        "sort --compress-prog=./compress.sh -S 64k -T . input.txt > /dev/null",
        "ran-compressor",
    ),
    ("sort --out=sorted.txt input.txt", "sorted.txt"),
    ("shuf --outp=shuffled.txt input.txt", "shuffled.txt"),
    ("uniq -c input.txt counted.txt", "counted.txt"),
    (
        "sort --compress-program ./compress.sh -S 64k -T . input.txt",
        "ran-compressor",
    ),
];

fn files(h: &Harness) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(h.work.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        // The sandbox makes `.claude/` to keep its protected files read-only.
        .filter(|name| name != ".claude")
        .collect();
    names.sort();
    names
}

/// Runs every attack in one `cairn -p` under `settings` (the user's), the last one after a
/// read-only command that must run; asserts each is refused and the disk is unchanged.
fn attacks_are_refused(settings: Value, attacks: &[(&str, &str)]) {
    let h = Harness::new();
    let home_settings = h.home.path().join(".claude");
    std::fs::create_dir_all(&home_settings).unwrap();
    std::fs::write(home_settings.join("settings.json"), settings.to_string()).unwrap();
    let lines: String = (0..60_000)
        .map(|n| format!("{}\n", n * 7919 % 60_000))
        .collect();
    std::fs::write(h.path("input.txt"), lines).unwrap();
    let compressor = h.path("compress.sh");
    std::fs::write(&compressor, "#!/bin/sh\ntouch ran-compressor\nexec cat\n").unwrap();
    std::fs::set_permissions(&compressor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = files(&h);
    for (n, (command, _)) in attacks.iter().enumerate() {
        h.server.push(Reply::tool_use(
            &format!("t{n}"),
            "Bash",
            json!({"command": command}),
        ));
    }
    h.server.push(Reply::tool_use(
        "last",
        "Bash",
        json!({"command": "sort -u input.txt | head -n 2"}),
    ));
    h.server.push(Reply::text("done"));
    let output = h.command().args(["-p", "go"]).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let requests = h.server.wait_for_requests(attacks.len() + 2, WAIT);
    for (n, (command, created)) in attacks.iter().enumerate() {
        let (is_error, text) = tool_result(&requests, n + 1);
        assert!(
            is_error && text.contains("nobody can be asked in cairn -p"),
            "{command}: {text}"
        );
        assert!(!h.path(created).exists(), "{command} created {created}");
    }
    let (is_error, text) = tool_result(&requests, attacks.len() + 1);
    assert!(
        !is_error && text.contains('0'),
        "the read-only command ran: {text}"
    );
    assert_eq!(files(&h), before);
}

#[test]
fn abbreviated_and_output_options_are_refused_with_the_sandbox_on() {
    attacks_are_refused(json!({}), ATTACKS);
}

#[test]
fn abbreviated_and_output_options_are_refused_with_the_sandbox_off() {
    attacks_are_refused(json!({"sandbox": {"enabled": false}}), ATTACKS);
}

#[test]
fn an_allow_rule_for_the_command_alone_does_not_lift_a_program_option() {
    // The rules allow sort's and uniq's writes; the programs sort would run stay refused.
    let programs: Vec<(&str, &str)> = ATTACKS
        .iter()
        .copied()
        .filter(|(command, _)| command.contains("--compress-prog"))
        .collect();
    attacks_are_refused(
        json!({
            "sandbox": {"enabled": false},
            "permissions": {"allow": ["Bash(sort:*)", "Bash(uniq:*)"]},
        }),
        &programs,
    );
}
