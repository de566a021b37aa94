//! Sub-agents that run apart from their parent, through the real binary: a sub-agent's `cd`
//! never moves its parent's shell, a file its parent read is not read for it, and an agent
//! file's `permissionMode` narrows the parent's mode for that agent without ever widening it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::process::{Output, Stdio};

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::json;

mod subagents_support;
mod support;
use subagents_support::{agent_call, result_of};
use support::{Harness, WAIT};

fn run(harness: &Harness, args: &[&str]) -> Output {
    harness
        .command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_sub_agents_cd_and_reads_are_its_own_and_never_the_parents() {
    let harness = Harness::new();
    std::fs::create_dir(harness.path("sub")).unwrap();
    std::fs::write(harness.path("notes.txt"), "old line\n").unwrap();
    let work = harness.work.path().canonicalize().unwrap();

    // The parent reads the file, then starts an agent.
    harness.server.push(Reply::tool_use(
        "toolu_read",
        "Read",
        json!({"file_path": "notes.txt"}),
    ));
    harness.server.push(agent_call(
        "toolu_agent",
        "general-purpose",
        "Move and edit.",
    ));
    // The agent moves its shell, sees where it is, and edits the file it never read.
    harness.server.push(Reply::tool_use(
        "toolu_cd",
        "Bash",
        json!({"command": "cd sub"}),
    ));
    harness.server.push(Reply::tool_use(
        "toolu_agent_pwd",
        "Bash",
        json!({"command": "pwd -P"}),
    ));
    harness.server.push(Reply::tool_use(
        "toolu_edit",
        "Edit",
        json!({"file_path": "notes.txt", "old_string": "old line", "new_string": "new line"}),
    ));
    harness.server.push(Reply::text("Moved."));
    // The parent's shell is where it was.
    harness.server.push(Reply::tool_use(
        "toolu_parent_pwd",
        "Bash",
        json!({"command": "pwd -P"}),
    ));
    harness.server.push(Reply::text("Done."));

    let output = run(
        &harness,
        &["-p", "go", "--permission-mode", "bypassPermissions"],
    );
    assert!(output.status.success(), "{output:?}");
    let requests = harness.server.wait_for_requests(8, WAIT);

    let (agent_pwd, _) = result_of(&requests[4], "toolu_agent_pwd");
    assert!(
        agent_pwd.contains(&work.join("sub").display().to_string()),
        "the agent's own shell stays where its cd left it: {agent_pwd}"
    );
    let (edit, edit_failed) = result_of(&requests[5], "toolu_edit");
    assert!(edit_failed, "{edit}");
    assert!(edit.contains("has not been read"), "{edit}");
    assert_eq!(
        std::fs::read_to_string(harness.path("notes.txt")).unwrap(),
        "old line\n"
    );

    let (parent_pwd, failed) = result_of(&requests[7], "toolu_parent_pwd");
    assert!(!failed, "{parent_pwd}");
    let first_line = parent_pwd.lines().next().unwrap_or_default();
    assert_eq!(first_line, work.display().to_string(), "{parent_pwd}");
}

/// Runs `-p` under `parent_mode` with a project agent `writer` whose file asks for
/// `agent_mode`, which writes `made.txt`; returns the Write's result and whether the file
/// exists afterwards.
fn agent_writes_under(parent_mode: &str, agent_mode: Option<&str>) -> ((String, bool), bool) {
    let harness = Harness::new();
    let agents = harness.path(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    let mode_line = agent_mode.map_or(String::new(), |mode| format!("permissionMode: {mode}\n"));
    std::fs::write(
        agents.join("writer.md"),
        format!("---\nname: writer\ndescription: Writes.\n{mode_line}---\nYou write files.\n"),
    )
    .unwrap();
    harness
        .server
        .push(agent_call("toolu_agent", "writer", "Write made.txt."));
    harness.server.push(Reply::tool_use(
        "toolu_write",
        "Write",
        json!({"file_path": "made.txt", "content": "made\n"}),
    ));
    harness.server.push(Reply::text("Written or not."));
    harness.server.push(Reply::text("Done."));
    let output = run(&harness, &["-p", "write", "--permission-mode", parent_mode]);
    assert!(output.status.success(), "{output:?}");
    let requests = harness.server.wait_for_requests(4, WAIT);
    (
        result_of(&requests[2], "toolu_write"),
        harness.path("made.txt").exists(),
    )
}

#[test]
fn an_agent_files_permission_mode_narrows_the_parents_mode() {
    // Under acceptEdits the agent's Write runs unasked, as the parent's would.
    let (result, made) = agent_writes_under("acceptEdits", None);
    assert!(!result.1 && made, "{result:?}");

    // `plan` refuses it as plan mode does.
    let ((text, failed), made) = agent_writes_under("acceptEdits", Some("plan"));
    assert!(failed && !made, "{text}");
    assert!(text.starts_with("Plan mode is on"), "{text}");

    // `default` asks, and in `-p` nobody can answer: refused as a question nobody answers.
    let ((text, failed), made) = agent_writes_under("acceptEdits", Some("default"));
    assert!(failed && !made, "{text}");
    assert!(!text.starts_with("Plan mode is on"), "{text}");
    let parents_own = agent_writes_under("default", None);
    assert_eq!(((text, failed), made), parents_own);
}

#[test]
fn an_agent_files_permission_mode_never_widens_the_parents_mode() {
    let parents_own = agent_writes_under("default", None);
    assert!(parents_own.0.1 && !parents_own.1, "{parents_own:?}");
    for wider in ["bypassPermissions", "acceptEdits"] {
        assert_eq!(
            agent_writes_under("default", Some(wider)),
            parents_own,
            "{wider}"
        );
    }
}

#[test]
fn an_agent_files_skills_are_preloaded_into_its_first_request_and_an_unknown_one_is_a_warning() {
    let harness = Harness::new();
    let skill = harness.path(".claude/skills/greet");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: greet\ndescription: Greets.\n---\nGREET-BODY-9: say hello first.\n",
    )
    .unwrap();
    let agents = harness.path(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("greeter.md"),
        "---\nname: greeter\ndescription: Greets.\nskills: greet, missing\n---\nYou greet.\n",
    )
    .unwrap();
    harness
        .server
        .push(agent_call("toolu_agent", "greeter", "Greet them."));
    harness.server.push(Reply::text("Hello."));
    harness.server.push(Reply::text("Done."));
    let output = run(&harness, &["-p", "greet"]);
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "agent definition {}: skills: no skill named \"missing\"; skipped",
            agents.join("greeter.md").display()
        )),
        "{stderr}"
    );
    let requests = harness.server.wait_for_requests(3, WAIT);
    let first = requests[1].body["messages"].to_string();
    assert!(first.contains("GREET-BODY-9"), "{first}");
    assert!(
        !requests[0].body["messages"]
            .to_string()
            .contains("GREET-BODY-9")
    );
}
