//! Sub-agents you can see afterwards and the two roles about cairn itself, through the real
//! binary: each sub-agent's transcript beside the session, linked from it, with `-c` still
//! resuming the parent alone; `statusline-setup` offered Read and Edit and held to the
//! user's settings file; `cairn-guide` offered only `CairnDocs`, which reads the documents
//! built into the binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::PathBuf;
use std::process::{Output, Stdio};

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod subagents_support;
mod support;
use subagents_support::{agent_call, tool_names};
use support::{Harness, WAIT, tool_result};

fn run(harness: &Harness, args: &[&str]) -> Output {
    let output = harness
        .command()
        .env("ANTHROPIC_SMALL_FAST_MODEL", "claude-3-5-haiku-20241022")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The JSON lines of a file.
fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The one session file under the harness's cairn home.
fn session_file(harness: &Harness) -> PathBuf {
    let projects = harness.cairn_home().join("projects");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&projects)
        .unwrap()
        .flat_map(|dir| std::fs::read_dir(dir.unwrap().path()).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.remove(0)
}

#[test]
fn a_sub_agents_transcript_is_saved_beside_the_session_and_linked_from_it() {
    let harness = Harness::new();
    std::fs::write(harness.path("notes.txt"), "INTERMEDIATE-42\n").unwrap();
    harness.settings(json!({"hooks": {"SubagentStop": [{"hooks": [
        {"type": "command", "command": "cat > subagent_stop.json"}
    ]}]}}));
    harness
        .server
        .push(agent_call("toolu_agent", "Explore", "Where is the note?"));
    harness.server.push(Reply::tool_use(
        "toolu_read",
        "Read",
        json!({"file_path": "notes.txt"}),
    ));
    harness
        .server
        .push(Reply::text("The note is in notes.txt."));
    harness.server.push(Reply::text("Done."));
    run(
        &harness,
        &["-p", "Find the note.", "--output-format", "json"],
    );

    let session = session_file(&harness);
    let link = lines(&session)
        .into_iter()
        .find(|line| line["type"] == "sub_agent")
        .unwrap_or_else(|| panic!("no sub_agent entry in {}", session.display()));
    assert_eq!(
        (
            &link["agent_id"],
            &link["agent_type"],
            &link["description"],
            &link["tool_use_id"]
        ),
        (
            &json!("agent_1"),
            &json!("Explore"),
            &json!("a look"),
            &json!("toolu_agent")
        )
    );
    let file = session
        .parent()
        .unwrap()
        .join(link["file"].as_str().unwrap());
    let stem = session.file_stem().unwrap().to_str().unwrap();
    assert_eq!(
        file,
        session
            .parent()
            .unwrap()
            .join(format!("{stem}/subagents/agent-agent_1.jsonl"))
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // The SubagentStop hook was told where that transcript is.
    let stop: Value =
        serde_json::from_str(&std::fs::read_to_string(harness.path("subagent_stop.json")).unwrap())
            .unwrap();
    assert_eq!(
        stop["agent_transcript_path"],
        json!(file.display().to_string())
    );

    // The sub-agent's file holds its own conversation: its prompt, its read (and the decision
    // that let it run), its answer.
    let kinds: Vec<String> = lines(&file)
        .iter()
        .map(|line| line["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        [
            "header",
            "user",
            "assistant",
            "permission",
            "tool_results",
            "assistant"
        ]
    );
    let sub_agent = std::fs::read_to_string(&file).unwrap();
    assert!(sub_agent.contains("INTERMEDIATE-42"), "{sub_agent}");
    assert!(sub_agent.contains("Where is the note?"), "{sub_agent}");
    // The session's file has the sub-agent's answer only as the Agent call's result.
    let parent = std::fs::read_to_string(&session).unwrap();
    assert!(!parent.contains("INTERMEDIATE-42"), "{parent}");

    // `-c` resumes the parent's conversation alone.
    harness.server.push(Reply::text("Still there."));
    run(&harness, &["-c", "-p", "And now?"]);
    let requests = harness.server.wait_for_requests(5, WAIT);
    let messages = requests[4].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5, "{messages:?}");
    let body = requests[4].body.to_string();
    assert!(!body.contains("INTERMEDIATE-42"), "{body}");
    assert!(body.contains("The note is in notes.txt."), "{body}");
}

#[test]
fn statusline_setup_reads_and_edits_only_the_users_settings_file() {
    let harness = Harness::new();
    let settings = harness.home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{\"model\": \"SETTINGS-MARK\"}\n").unwrap();
    std::fs::write(harness.path("notes.txt"), "NOT-FOR-IT\n").unwrap();
    harness.server.push(agent_call(
        "toolu_agent",
        "statusline-setup",
        "Show the model in the status line.",
    ));
    harness.server.push(Reply::tool_use(
        "toolu_outside",
        "Read",
        json!({"file_path": harness.path("notes.txt")}),
    ));
    harness.server.push(Reply::tool_use(
        "toolu_settings",
        "Read",
        json!({"file_path": settings}),
    ));
    harness.server.push(Reply::tool_use(
        "toolu_edit",
        "Edit",
        json!({
            "file_path": settings,
            "old_string": "{\"model\": \"SETTINGS-MARK\"}",
            "new_string": "{\"model\": \"SETTINGS-MARK\", \"statusLine\": {\"type\": \"command\", \"command\": \"jq -r .model.id\"}}"
        }),
    ));
    harness.server.push(Reply::text("Set."));
    harness.server.push(Reply::text("Done."));
    run(
        &harness,
        &[
            "-p",
            "Set up my status line.",
            "--allowedTools",
            "Read",
            "--allowedTools",
            "Edit",
        ],
    );

    let requests = harness.server.wait_for_requests(6, WAIT);
    assert_eq!(tool_names(&requests[1]), ["Read", "Edit"]);
    let system = requests[1].body["system"].to_string();
    assert!(system.contains("statusLine"), "{system}");
    let (refused, text) = tool_result(&requests, 2);
    assert_eq!(
        (refused, text),
        (
            true,
            format!(
                "The statusline-setup agent may only use these files: {}; {} is not one of \
                 them.",
                settings.display(),
                harness.path("notes.txt").display()
            )
        )
    );
    let (failed, text) = tool_result(&requests, 3);
    assert!(!failed && text.contains("SETTINGS-MARK"), "{text}");
    let (failed, text) = tool_result(&requests, 4);
    assert!(!failed, "{text}");
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(
        written["statusLine"],
        json!({"type": "command", "command": "jq -r .model.id"})
    );
}

#[test]
fn cairn_guide_is_offered_only_the_built_in_documents() {
    let harness = Harness::new();
    harness.server.push(agent_call(
        "toolu_agent",
        "cairn-guide",
        "Does cairn have the Agent tool?",
    ));
    harness.server.push(Reply::tool_use(
        "toolu_docs",
        "CairnDocs",
        json!({"doc": "PARITY", "search": "Task accepted as an alias"}),
    ));
    harness
        .server
        .push(Reply::text("Yes, Agent (Task is an alias)."));
    harness.server.push(Reply::text("Done."));
    run(&harness, &["-p", "Does cairn have the Agent tool?"]);

    let requests = harness.server.wait_for_requests(4, WAIT);
    assert_eq!(tool_names(&requests[1]), ["CairnDocs"]);
    // The small model, as Explore.
    assert_eq!(
        requests[1].body["model"],
        json!("claude-3-5-haiku-20241022")
    );
    assert!(!tool_names(&requests[0]).contains(&"CairnDocs".to_string()));
    let (failed, text) = tool_result(&requests, 2);
    assert!(!failed, "{text}");
    assert!(
        text.contains("| `Agent` (`Task` accepted as an alias) |"),
        "{text}"
    );
}
