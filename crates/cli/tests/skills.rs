//! Skills (`.claude/skills/<name>/SKILL.md`) through the real binary in `-p` against the
//! scripted server: listed by description, loaded by the Skill tool or `/<name>`, their
//! `allowed-tools` pre-approved for one turn through the gate, carried over a compaction.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::{Path, PathBuf};
use std::process::Output;

use cairn_test_support::{RecordedRequest, Reply};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT, tool_result};

const BODY_MARK: &str = "CHANGELOG-BODY";

/// Writes `<root>/.claude/skills/<name>/SKILL.md`; returns the skill's directory.
fn skill(root: &Path, name: &str, text: &str) -> PathBuf {
    let dir = root.join(".claude/skills").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
    dir
}

/// The project's `changelog` skill, which may create files with `touch` unasked.
fn changelog(h: &Harness) -> PathBuf {
    skill(
        h.work.path(),
        "changelog",
        &format!(
            "---\nname: changelog\ndescription: Writes the changelog entry for a release.\n\
             allowed-tools: Bash(touch:*)\nargument-hint: <version>\n---\n\
             {BODY_MARK}: add $ARGUMENTS to CHANGELOG.md.\n"
        ),
    )
}

fn run(h: &Harness, args: &[&str]) -> Output {
    let output = h.command().args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn tool<'a>(request: &'a RecordedRequest, name: &str) -> Option<&'a Value> {
    request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == name)
}

#[test]
fn a_skill_is_listed_by_its_description_and_its_body_and_grant_come_with_the_call() {
    let h = Harness::new();
    let dir = changelog(&h);
    h.server.push(Reply::tool_use(
        "s1",
        "Skill",
        json!({"skill": "changelog", "args": "1.2"}),
    ));
    h.server.push(Reply::tool_use(
        "b1",
        "Bash",
        json!({"command": "touch released.txt"}),
    ));
    h.server.push(Reply::text("Released."));
    let output = run(&h, &["-p", "release 1.2"]);
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "Released.");
    let requests = h.server.wait_for_requests(3, WAIT);

    // The first request names the skill and says when to use it; its body is not sent.
    let description = tool(&requests[0], "Skill").unwrap()["description"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        description.contains("- changelog: Writes the changelog entry for a release.\n"),
        "{description}"
    );
    assert!(!requests[0].body.to_string().contains(BODY_MARK));

    // The call's result is the body, after the base directory, and says what it pre-approved.
    assert_eq!(
        tool_result(&requests, 1),
        (
            false,
            format!(
                "Base directory for this skill: {}\n\n{BODY_MARK}: add 1.2 to CHANGELOG.md.\n\n\
                 [allowed-tools pre-approved until the end of this turn: Bash(touch:*)]",
                dir.display()
            )
        )
    );
    // `touch` needs approval, which -p cannot give: the skill's rule allowed it.
    let (refused, text) = tool_result(&requests, 2);
    assert!(!refused, "{text}");
    assert!(h.path("released.txt").exists());

    // The next turn is asked about (refused in -p): the grant held for that turn only.
    h.server.push(Reply::tool_use(
        "b2",
        "Bash",
        json!({"command": "touch again.txt"}),
    ));
    h.server.push(Reply::text("Could not."));
    run(&h, &["-c", "-p", "and again"]);
    let requests = h.server.wait_for_requests(5, WAIT);
    let (refused, reason) = tool_result(&requests, 4);
    assert!(refused, "{reason}");
    assert!(
        reason.contains("nobody can be asked in cairn -p"),
        "{reason}"
    );
    assert!(!h.path("again.txt").exists());
}

#[test]
fn a_skill_is_a_slash_command_listed_by_skills_and_in_the_init_line() {
    let h = Harness::new();
    let dir = changelog(&h);
    h.server.push(Reply::tool_use(
        "b1",
        "Bash",
        json!({"command": "touch CHANGELOG.md"}),
    ));
    h.server.push(Reply::text("Entry written."));
    let output = run(
        &h,
        &[
            "-p",
            "/changelog 2.0",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let init: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(init["skills"], json!(["changelog"]));
    let commands = init["slash_commands"].as_array().unwrap();
    assert!(commands.contains(&json!("changelog")) && commands.contains(&json!("skills")));

    let requests = h.server.wait_for_requests(2, WAIT);
    assert_eq!(
        requests[0].body["messages"][0]["content"][0]["text"],
        json!("<command-name>/changelog</command-name>\n<command-args>2.0</command-args>")
    );
    assert_eq!(
        requests[0].body["messages"][0]["content"][1]["text"],
        json!(format!(
            "Base directory for this skill: {}\n\n{BODY_MARK}: add 2.0 to CHANGELOG.md.",
            dir.display()
        ))
    );
    let (refused, text) = tool_result(&requests, 1);
    assert!(!refused, "{text}");
    assert!(h.path("CHANGELOG.md").exists());

    let output = run(&h, &["-p", "/skills"]);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "Skills (the model loads them with the Skill tool; /<name> uses one):\n  \
         /changelog (project) — Writes the changelog entry for a release. \
         [allowed-tools: Bash(touch:*)]"
    );
    assert_eq!(h.server.requests().len(), 2, "/skills asks no model");
}

#[test]
fn a_project_skill_grants_no_more_than_the_projects_settings_could() {
    let h = Harness::new();
    skill(
        h.work.path(),
        "cleanup",
        "---\ndescription: Cleans the build.\nallowed-tools: Bash(rm:*), Bash(touch:*), \
         Bash(echo:*)\n---\nRemove the build directory.",
    );
    std::fs::create_dir_all(h.path("build/out")).unwrap();
    // Removing the workspace and writing a protected file ask whatever a rule allows (a
    // `Bash(rm:*)` in the project's settings would not allow them either).
    h.server
        .push(Reply::tool_use("s1", "Skill", json!({"skill": "cleanup"})));
    h.server.push(Reply::tool_use(
        "b1",
        "Bash",
        json!({"command": "rm -rf ."}),
    ));
    h.server.push(Reply::tool_use(
        "b2",
        "Bash",
        json!({"command": "echo '{}' > .claude/settings.json"}),
    ));
    h.server.push(Reply::text("Stopped."));
    run(&h, &["-p", "clean up"]);
    let requests = h.server.wait_for_requests(4, WAIT);
    let (refused, reason) = tool_result(&requests, 2);
    assert!(
        refused && reason.contains("Destructive command"),
        "{reason}"
    );
    let (refused, reason) = tool_result(&requests, 3);
    assert!(refused && reason.contains("settings.json"), "{reason}");
    assert!(h.path("build/out").exists());
    assert!(!h.path(".claude/settings.json").exists());

    // A run that does not read the project's settings takes no grant from its skills either.
    h.server
        .push(Reply::tool_use("s2", "Skill", json!({"skill": "cleanup"})));
    h.server.push(Reply::tool_use(
        "b3",
        "Bash",
        json!({"command": "touch stamp.txt"}),
    ));
    h.server.push(Reply::text("Stopped."));
    run(&h, &["-p", "clean up", "--setting-sources", "user"]);
    let requests = h.server.wait_for_requests(7, WAIT);
    let (_, loaded) = tool_result(&requests, 5);
    assert!(
        loaded.ends_with(
            "[allowed-tools not pre-approved (Bash(rm:*), Bash(touch:*), Bash(echo:*)): this run \
             does not \
             read the project's settings (--setting-sources), and a project's skill grants no \
             more than they could.]"
        ),
        "{loaded}"
    );
    let (refused, reason) = tool_result(&requests, 6);
    assert!(refused, "{reason}");
    assert!(!h.path("stamp.txt").exists());
}

#[test]
fn the_files_beside_a_users_skill_are_readable_during_its_turn() {
    let h = Harness::new();
    let dir = skill(
        h.home.path(),
        "style",
        "---\nname: style\ndescription: The house style.\n---\nRead reference.md here.",
    );
    std::fs::write(dir.join("reference.md"), "Use short sentences.\n").unwrap();
    h.server
        .push(Reply::tool_use("s1", "Skill", json!({"skill": "style"})));
    h.server.push(Reply::tool_use(
        "r1",
        "Read",
        json!({"file_path": dir.join("reference.md")}),
    ));
    h.server.push(Reply::text("Noted."));
    run(&h, &["-p", "write in the house style"]);
    let requests = h.server.wait_for_requests(3, WAIT);
    let (refused, text) = tool_result(&requests, 2);
    assert!(!refused && text.contains("Use short sentences."), "{text}");
}

#[test]
fn a_malformed_skill_is_a_warning_naming_file_and_field_and_the_others_load() {
    let h = Harness::new();
    changelog(&h);
    let bad = skill(
        h.work.path(),
        "broken",
        "---\nname: Not A Name\ndescription: x\n---\nBody",
    );
    h.server.push(Reply::text("Hi."));
    let output = run(&h, &["-p", "hi"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "{}: name: \"Not A Name\" is not a skill name",
            bad.join("SKILL.md").display()
        )),
        "{stderr}"
    );
    let requests = h.server.wait_for_requests(1, WAIT);
    let description = tool(&requests[0], "Skill").unwrap()["description"].to_string();
    assert!(description.contains("- changelog:"), "{description}");
    assert!(!description.contains("Not A Name"), "{description}");
}

#[test]
fn a_session_without_skills_offers_no_skill_tool() {
    let h = Harness::new();
    h.server.push(Reply::text("Hi."));
    run(&h, &["-p", "hi"]);
    let requests = h.server.wait_for_requests(1, WAIT);
    assert_eq!(tool(&requests[0], "Skill"), None);
}

#[test]
fn a_skill_used_before_a_compaction_comes_back_after_it() {
    let h = Harness::new();
    let dir = changelog(&h);
    h.server.push(Reply::tool_use(
        "s1",
        "Skill",
        json!({"skill": "changelog", "args": "3.0"}),
    ));
    h.server.push(Reply::text("Loaded."));
    run(&h, &["-p", "prepare the release"]);
    // A turn after it, so the load is not in the turn a compaction keeps as it is; long
    // enough that a summary makes the conversation smaller.
    h.server.push(Reply::text(format!(
        "Noted. {}",
        "The release notes go on at length. ".repeat(300)
    )));
    run(&h, &["-c", "-p", "and the notes"]);
    h.server
        .push(Reply::text("SUMMARY: the release is being prepared."));
    run(&h, &["-c", "-p", "/compact"]);
    h.server.push(Reply::text("Going on."));
    run(&h, &["-c", "-p", "go on"]);
    let requests = h.server.wait_for_requests(5, WAIT);
    let opening = requests[4].body["messages"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>();
    assert!(opening[0].contains("SUMMARY: the release is being prepared."));
    let carried: Vec<&&str> = opening
        .iter()
        .filter(|text| text.contains(BODY_MARK))
        .collect();
    assert_eq!(
        carried,
        [&format!(
            "[A skill used in this session, as it was loaded]\nBase directory for this skill: \
             {}\n\n{BODY_MARK}: add 3.0 to CHANGELOG.md.",
            dir.display()
        )
        .as_str()]
    );
}
