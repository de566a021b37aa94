//! Sub-agents through the real binary: an Explore sub-agent's request (read-only tools, no
//! Agent tool, none of the parent's messages, the small model), only its final text back,
//! stream-json lines under the Agent call's id, `--agents` and agent files, `/agents`, a
//! malformed file's warning, a sub-agent's Bash refused in `-p` as the parent's is, and two
//! Agent calls in one message at the same time.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::process::{Output, Stdio};

use cairn_test_support::{Reply, ScriptedBlock};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod subagents_support;
mod support;
use subagents_support::{agent_use, result_of, tool_names};
use support::{Harness, WAIT};

fn run(harness: &Harness, args: &[&str]) -> Output {
    harness
        .command()
        .env_remove("ANTHROPIC_SMALL_FAST_MODEL")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn an_explore_sub_agent_has_its_own_request_and_only_its_answer_returns_in_stream_json() {
    let harness = Harness::new();
    std::fs::write(harness.path("notes.txt"), "INTERMEDIATE-42\n").unwrap();
    harness.server.push(Reply::blocks(vec![agent_use(
        "toolu_agent",
        "Agent",
        "Explore",
        "Where is the note?",
    )]));
    harness.server.push(Reply::tool_use(
        "toolu_read",
        "Read",
        json!({"file_path": "notes.txt"}),
    ));
    harness
        .server
        .push(Reply::text("The note is in notes.txt."));
    harness.server.push(Reply::text("Done."));
    let output = harness
        .command()
        .env("ANTHROPIC_SMALL_FAST_MODEL", "claude-3-5-haiku-20241022")
        .args([
            "-p",
            "Find the note. PARENT-SECRET",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let requests = harness.server.wait_for_requests(4, WAIT);
    assert!(tool_names(&requests[0]).contains(&"Agent".to_string()));
    let child = &requests[1].body;
    assert_eq!(tool_names(&requests[1]), ["Read", "Glob", "Grep", "LS"]);
    assert_eq!(child["model"], json!("claude-3-5-haiku-20241022"));
    let messages = child["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "only its own prompt: {messages:?}");
    assert_eq!(
        messages[0]["content"][0]["text"],
        json!("Where is the note?")
    );
    assert!(!child.to_string().contains("PARENT-SECRET"));
    assert!(
        result_of(&requests[2], "toolu_read")
            .0
            .contains("INTERMEDIATE-42")
    );
    let (answer, is_error) = result_of(&requests[3], "toolu_agent");
    assert!(!is_error);
    assert!(
        answer.starts_with("The note is in notes.txt.\n\n[Explore sub-agent (a look): 2 requests"),
        "{answer}"
    );
    assert!(!answer.contains("INTERMEDIATE-42"), "{answer}");

    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let init = &lines[0];
    assert_eq!(
        init["agents"],
        json!([
            "general-purpose",
            "Explore",
            "Plan",
            "Verification",
            "statusline-setup",
            "cairn-guide"
        ])
    );
    let assistants: Vec<(Value, Value)> = lines
        .iter()
        .filter(|line| line["type"] == json!("assistant"))
        .map(|line| {
            (
                line["parent_tool_use_id"].clone(),
                line["message"]["model"].clone(),
            )
        })
        .collect();
    assert_eq!(
        assistants,
        vec![
            (Value::Null, json!("claude-sonnet-4-5")),
            (json!("toolu_agent"), json!("claude-3-5-haiku-20241022")),
            (json!("toolu_agent"), json!("claude-3-5-haiku-20241022")),
            (Value::Null, json!("claude-sonnet-4-5")),
        ]
    );
    assert_eq!(lines.last().unwrap()["result"], json!("Done."));
}

#[test]
fn a_custom_agent_from_the_flag_gets_exactly_its_tools_model_and_prompt_and_task_is_an_alias() {
    let harness = Harness::new();
    harness.server.push(Reply::blocks(vec![agent_use(
        "toolu_task",
        "Task",
        "Checker",
        "Check it.",
    )]));
    harness.server.push(Reply::text("Checked."));
    harness.server.push(Reply::text("Done."));
    let agents = json!({"checker": {
        "description": "Checks one thing.",
        "prompt": "You are the checker. CHECKER-PROMPT",
        "tools": ["Read", "Grep"],
        "model": "haiku",
    }})
    .to_string();
    let output = run(&harness, &["-p", "check", "--agents", &agents]);
    assert!(output.status.success(), "{output:?}");

    let requests = harness.server.wait_for_requests(3, WAIT);
    let agent_tool = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == json!("Agent"))
        .unwrap()
        .clone();
    assert!(
        agent_tool["description"]
            .as_str()
            .unwrap()
            .contains("- checker: Checks one thing. (Tools: Read, Grep)"),
        "{agent_tool}"
    );
    assert_eq!(tool_names(&requests[1]), ["Read", "Grep"]);
    assert_eq!(requests[1].body["model"], json!("claude-haiku-4-5"));
    let system = requests[1].body["system"].to_string();
    assert!(system.contains("CHECKER-PROMPT"), "{system}");
    assert!(
        !requests[0].body["system"]
            .to_string()
            .contains("CHECKER-PROMPT")
    );
    assert!(
        result_of(&requests[2], "toolu_task")
            .0
            .starts_with("Checked.")
    );
}

#[test]
fn agents_lists_the_roles_and_custom_agents_and_a_malformed_file_is_a_warning() {
    let harness = Harness::new();
    let agents = harness.path(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews diffs.\ntools: Read, Grep\nmodel: opus\nskills: changelog\nmcpServers: [github]\n---\nYou review.\n",
    )
    .unwrap();
    std::fs::write(
        agents.join("broken.md"),
        "---\ndescription: no name\n---\nBody.\n",
    )
    .unwrap();

    let listed = run(&harness, &["-p", "/agents"]);
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.status.success(), "{listed:?}");
    assert!(
        stdout.starts_with(
            "Agents (the Agent tool's subagent_type):\n  general-purpose (built-in)\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "  reviewer (project, {})\n    Reviews diffs.\n    tools: Read, Grep; model: opus; \
             skills changelog; MCP servers github\n",
            agents.join("reviewer.md").display()
        )),
        "{stdout}"
    );
    assert!(stdout.contains("  Explore (built-in)\n"), "{stdout}");
    assert!(
        harness.server.requests().is_empty(),
        "a report sends no request"
    );

    harness.server.push(Reply::text("Hello."));
    let answered = run(&harness, &["-p", "hi"]);
    assert!(answered.status.success(), "{answered:?}");
    let stderr = String::from_utf8_lossy(&answered.stderr);
    assert!(
        stderr.contains(&format!(
            "warning: agent definition {}: name: missing: every agent needs a name; skipped",
            agents.join("broken.md").display()
        )),
        "{stderr}"
    );
}

#[test]
fn a_sub_agents_bash_that_needs_approval_is_refused_in_p_as_the_parents_is() {
    let refusal = |by_sub_agent: bool| {
        let harness = Harness::new();
        let touch = ScriptedBlock::ToolUse {
            id: "toolu_bash".into(),
            name: "Bash".into(),
            input: json!({"command": "touch made.txt"}),
        };
        if by_sub_agent {
            harness.server.push(Reply::blocks(vec![agent_use(
                "toolu_agent",
                "Agent",
                "verification",
                "Run it.",
            )]));
            harness.server.push(Reply::blocks(vec![touch]));
            harness.server.push(Reply::text("FAIL: not allowed."));
        } else {
            harness.server.push(Reply::blocks(vec![touch]));
        }
        harness.server.push(Reply::text("Done."));
        let output = run(&harness, &["-p", "make it"]);
        assert!(output.status.success(), "{output:?}");
        assert!(!harness.path("made.txt").exists());
        let requests = harness
            .server
            .wait_for_requests(if by_sub_agent { 4 } else { 2 }, WAIT);
        let index = if by_sub_agent { 2 } else { 1 };
        result_of(&requests[index], "toolu_bash")
    };
    let parents = refusal(false);
    assert!(parents.1, "{parents:?}");
    assert_eq!(refusal(true), parents);
}

#[test]
fn two_agent_calls_in_one_message_run_at_the_same_time() {
    let harness = Harness::new();
    harness.server.push(Reply::blocks(vec![
        agent_use("toolu_1", "Agent", "Explore", "one"),
        agent_use("toolu_2", "Agent", "Explore", "two"),
    ]));
    // Each sub-agent's answer is held until both have asked: run one after the other, the
    // first would wait for ever and the second request would never come.
    harness
        .server
        .push(Reply::text("first answer").held_until_waiting(2));
    harness
        .server
        .push(Reply::text("second answer").held_until_waiting(2));
    harness.server.push(Reply::text("Done."));
    let child = harness
        .command()
        .args(["-p", "both", "--output-format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let requests = harness.server.wait_for_requests(4, WAIT);
    let output = child.wait_with_output().unwrap();
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["result"], json!("Done."), "{result}");
    let mut answers = vec![
        result_of(&requests[3], "toolu_1").0,
        result_of(&requests[3], "toolu_2").0,
    ];
    answers.iter_mut().for_each(|answer| {
        *answer = answer.lines().next().unwrap().to_string();
    });
    answers.sort();
    assert_eq!(answers, ["first answer", "second answer"]);
}

#[test]
fn bad_agents_json_and_a_bad_subagent_cap_are_errors_naming_them() {
    let harness = Harness::new();
    let output = run(&harness, &["-p", "hi", "--agents", "[\"reviewer\"]"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--agents: expected a JSON object of agents by name"),
        "{stderr}"
    );

    let output = harness
        .command()
        .env("CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS", "many")
        .args(["-p", "hi"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS must be a whole number of sub-agents above 0, \
             not \"many\""
        ),
        "{stderr}"
    );
    assert!(harness.server.requests().is_empty());
}

/// A sub-agent's requests are paid for too: `total_cost_usd` is the parent's cost plus its
/// sub-agents', each at its own model's prices, and agrees with `modelUsage`.
#[test]
fn total_cost_counts_the_sub_agents_requests_at_their_models_prices() {
    let harness = Harness::new();
    harness.server.push(
        Reply::blocks(vec![agent_use("toolu_agent", "Agent", "Explore", "Look.")])
            .with_usage(100_000, 0),
    );
    harness
        .server
        .push(Reply::text("Found it.").with_usage(100_000, 0));
    harness
        .server
        .push(Reply::text("Done.").with_usage(100_000, 0));
    let output = harness
        .command()
        .env("ANTHROPIC_SMALL_FAST_MODEL", "claude-3-5-haiku-20241022")
        .args(["-p", "look", "--output-format", "json"])
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let by_model: f64 = result["modelUsage"]
        .as_object()
        .unwrap()
        .values()
        .map(|usage| usage["costUSD"].as_f64().unwrap())
        .sum();
    let total = result["total_cost_usd"].as_f64().unwrap();
    let haiku = result["modelUsage"]["claude-3-5-haiku-20241022"]["costUSD"]
        .as_f64()
        .unwrap();
    assert!(haiku > 0.0, "{result}");
    assert!(
        (total - by_model).abs() < 1e-9,
        "{total} vs {by_model}: {result}"
    );
}
