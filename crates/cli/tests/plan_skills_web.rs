//! The rest of issue 26 through the real binary against the scripted server: the approved
//! plan is a session entry of its own that `-c` restores and a compaction carries into the
//! new opening; Stop hooks run when a `-p` turn ends on a plan; WebFetch's and WebSearch's
//! side requests count in the run's usage, cost and `modelUsage` (with `webSearchRequests`),
//! and WebSearch keeps the passages its answer cites; `Skill(name)` rules match the skill a
//! call loads; a skill the model loads sends the rest of its turn to the skill's `model`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::process::Output;

use cairn_protocol::{Message, Role, Usage};
use cairn_session::{AssistantEntry, Entry, NewSession, SessionId, SessionStore, now_ms};
use cairn_test_support::{PageServer, RecordedRequest, Reply, WebPage};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{Harness, tool_result};

const PLAN: &str = "# Plan\n\n1. Fix the off-by-one in `count`.\n2. Add a test.";
const CARRIED: &str = "[The plan the user approved, carried over from before compaction";

fn run(h: &Harness, args: &[&str]) -> Output {
    let output = h.command().args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// A session of this project's, as an earlier run wrote it: a question, a long answer, and
/// the plan the user approved as its own entry (no `ExitPlanMode` call is left in the
/// conversation, so only the entry can bring the plan back).
fn recorded_session(h: &Harness) -> SessionId {
    let cwd = h.work.path().canonicalize().unwrap();
    let store = SessionStore::new(h.cairn_home());
    let id = SessionId::new();
    let new = NewSession {
        model: "claude-sonnet-4-5".into(),
        git_branch: None,
    };
    let mut writer = store.create(&cwd, &id, new).unwrap();
    writer
        .append(&Entry::user(Message::user_text("how does count work?")))
        .unwrap();
    let answer =
        "count walks the list and adds one per item; the loop's bound is off by one. ".repeat(60);
    writer
        .append(&Entry::Assistant(AssistantEntry {
            timestamp: now_ms(),
            message: Message {
                role: Role::Assistant,
                content: vec![cairn_protocol::ContentBlock::text(answer)],
            },
            model: "claude-sonnet-4-5".into(),
            message_id: None,
            usage: Usage::default(),
            cost_usd: 0.0,
        }))
        .unwrap();
    writer.append(&Entry::plan(PLAN)).unwrap();
    writer.sync().unwrap();
    id
}

/// The text of the first message the last request sent.
fn opening_of_last_request(h: &Harness) -> String {
    h.server.requests().pop().unwrap().body["messages"][0].to_string()
}

#[test]
fn a_recorded_plan_is_restored_by_continue_and_carried_through_each_compaction() {
    let h = Harness::new();
    let id = recorded_session(&h);
    h.server
        .reply_to_side_requests(vec![Reply::text("SUMMARY: looking into count.")]);
    run(&h, &["-p", "-c", "/compact"]);
    h.server.push(Reply::text("Going on."));
    run(&h, &["-p", "-c", "and now?"]);
    let opening = opening_of_last_request(&h);
    assert!(
        opening.contains("SUMMARY: looking into count."),
        "{opening}"
    );
    assert!(opening.contains(CARRIED), "{opening}");
    assert!(
        opening.contains("Fix the off-by-one in `count`"),
        "{opening}"
    );

    // The compacted opening the session recorded has it, and a second compaction of the
    // continued session carries it again.
    let store = SessionStore::new(h.cairn_home());
    let cwd = h.work.path().canonicalize().unwrap();
    let loaded = store.load(&cwd, &id).unwrap();
    assert_eq!(loaded.approved_plan.as_deref(), Some(PLAN));
    let recorded = serde_json::to_string(&loaded.last_compaction.unwrap().opening).unwrap();
    assert!(recorded.contains(CARRIED), "{recorded}");
    let long = "Reading count again: the bound is still off by one, so the fix holds. ".repeat(60);
    h.server.push(Reply::text(long));
    run(&h, &["-p", "-c", "read it again"]);
    run(&h, &["-p", "-c", "/compact"]);
    h.server.push(Reply::text("Still on it."));
    run(&h, &["-p", "-c", "still?"]);
    let opening = opening_of_last_request(&h);
    assert!(opening.contains(CARRIED), "{opening}");
    assert_eq!(
        opening.matches("Fix the off-by-one in `count`").count(),
        1,
        "carried once: {opening}"
    );
}

#[test]
fn stop_hooks_run_when_a_p_turn_ends_on_a_plan() {
    let h = Harness::new();
    let marker = h.path("stopped-once");
    h.user_settings(json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": format!(
        "if [ -e {m} ]; then exit 0; fi; touch {m}; echo 'the plan misses the docs' >&2; exit 2",
        m = marker.display()
    )}]}]}}));
    h.server.push(Reply::tool_use(
        "x1",
        "ExitPlanMode",
        json!({"plan": "1. Fix count."}),
    ));
    h.server
        .push(Reply::tool_use("x2", "ExitPlanMode", json!({"plan": PLAN})));
    let output = run(&h, &["-p", "plan the fix", "--permission-mode", "plan"]);
    assert_eq!(String::from_utf8_lossy(&output.stdout), format!("{PLAN}\n"));
    assert!(marker.exists(), "the Stop hook ran");
    let requests = h.server.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    // The hook's words reach the model with the first plan's result, in one user message.
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap();
    assert_eq!(last["content"][0]["type"], "tool_result", "{last}");
    assert!(
        last["content"][1]["text"]
            .as_str()
            .unwrap()
            .contains("A Stop hook says: the plan misses the docs"),
        "{last}"
    );
}

/// The search request's answer as the API streams it: a search, its results, an answer
/// with a citation, and the search counted in the usage.
fn search_stream() -> String {
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_search", "type": "message",
                "role": "assistant", "model": "claude-haiku-4-5", "content": [],
                "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 300, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {
                "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                "input": {"query": "rust release"}}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block": {
                "type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                {"type": "web_search_result", "title": "Announcing Rust",
                 "url": "https://blog.rust-lang.org/release", "encrypted_content": "x"}]}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 1}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 2, "content_block": {
                "type": "text", "text": "", "citations": []}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {
                "type": "citations_delta", "citation": {
                "type": "web_search_result_location", "url": "https://blog.rust-lang.org/release",
                "title": "Announcing Rust", "cited_text": "Rust 1.90 is out today.",
                "encrypted_index": "y"}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {
                "type": "text_delta", "text": "Rust 1.90 was released."}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 2}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn",
                "stop_sequence": null}, "usage": {"output_tokens": 40,
                "server_tool_use": {"web_search_requests": 1}}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

fn side_model_usage(result: &Value) -> &Value {
    &result["modelUsage"]["claude-haiku-4-5"]
}

#[test]
fn side_requests_count_in_usage_cost_and_model_usage_and_citations_reach_the_model() {
    let h = Harness::new();
    let pages = PageServer::start();
    pages.page("/", WebPage::html("<h1>Title</h1><p>Hello.</p>"));
    h.server.push(Reply::tool_use(
        "f1",
        "WebFetch",
        json!({"url": pages.url("/"), "prompt": "What is it?"}),
    ));
    h.server
        .reply_to_side_requests(vec![Reply::text("A greeting.").with_usage(200, 30)]);
    h.server.push(Reply::tool_use(
        "s1",
        "WebSearch",
        json!({"query": "rust release"}),
    ));
    h.server.push(Reply::raw_sse(search_stream()));
    h.server.push(Reply::text("Done."));
    let output = h
        .command()
        .env_remove("ANTHROPIC_SMALL_FAST_MODEL")
        .args([
            "-p",
            "read and search",
            "--output-format",
            "json",
            "--allowedTools",
            "WebFetch(domain:127.0.0.1)",
            "--allowedTools",
            "WebSearch",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();

    let side = side_model_usage(&result);
    assert_eq!(side["inputTokens"], json!(200 + 300), "{result}");
    assert_eq!(side["webSearchRequests"], json!(1), "{result}");
    // Three requests of the model's own at the scripted 10 input tokens each, and the two
    // side requests.
    assert_eq!(result["usage"]["input_tokens"], json!(30 + 500), "{result}");
    let by_model: f64 = result["modelUsage"]
        .as_object()
        .unwrap()
        .values()
        .map(|usage| usage["costUSD"].as_f64().unwrap())
        .sum();
    let total = result["total_cost_usd"].as_f64().unwrap();
    assert!(
        (total - by_model).abs() < 1e-9,
        "total {total} is the models' {by_model}: {result}"
    );
    // The search is billed: a cent on top of its tokens.
    assert!(side["costUSD"].as_f64().unwrap() > 0.01, "{result}");

    let requests: Vec<RecordedRequest> = h.server.requests();
    let (is_error, text) = tool_result(&requests, requests.len() - 1);
    assert!(!is_error, "{text}");
    assert!(
        text.contains(
            "Quoted from the results:\n- \"Rust 1.90 is out today.\" \
             ([Announcing Rust](https://blog.rust-lang.org/release))"
        ),
        "{text}"
    );
}

/// Writes the project's skill `name`.
fn skill(h: &Harness, name: &str, front: &str) {
    let dir = h.work.path().join(".claude/skills").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: The {name} skill.\n{front}---\nBODY-OF-{name}\n"),
    )
    .unwrap();
}

#[test]
fn skill_rules_match_the_skill_a_call_loads_by_name_or_prefix() {
    let h = Harness::new();
    for name in ["changelog", "review-pr", "release"] {
        skill(&h, name, "");
    }
    h.settings(json!({"permissions": {"deny": ["Skill(changelog)", "Skill(review:*)"]}}));
    for (n, name) in ["changelog", "review-pr", "release"].iter().enumerate() {
        h.server.push(Reply::tool_use(
            &format!("s{n}"),
            "Skill",
            json!({"skill": name}),
        ));
    }
    h.server.push(Reply::text("Done."));
    run(&h, &["-p", "use the skills"]);
    let requests = h.server.requests();
    let refused = |n: usize| tool_result(&requests, n);
    let (is_error, text) = refused(1);
    assert!(is_error && text.contains("Skill(changelog)"), "{text}");
    let (is_error, text) = refused(2);
    assert!(is_error && text.contains("Skill(review:*)"), "{text}");
    let (is_error, text) = refused(3);
    assert!(!is_error && text.contains("BODY-OF-release"), "{text}");
}

#[test]
fn a_skill_the_model_loads_sends_the_rest_of_its_turn_to_the_skills_model() {
    let h = Harness::new();
    skill(&h, "notes", "model: haiku\n");
    h.server
        .push(Reply::tool_use("s1", "Skill", json!({"skill": "notes"})));
    h.server.push(Reply::text("Noted."));
    h.server.push(Reply::text("Next turn."));
    // Two turns on one session, as an SDK host sends them.
    let user = |text: &str| {
        json!({"type": "user", "message": {"role": "user", "content": text},
               "parent_tool_use_id": null, "session_id": "default"})
        .to_string()
    };
    let mut child = h
        .command()
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "claude-sonnet-4-5",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{}\n{}", user("take notes"), user("and then?")).unwrap();
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let models: Vec<Value> = h
        .server
        .requests()
        .iter()
        .map(|request| request.body["model"].clone())
        .collect();
    assert_eq!(
        models,
        vec![
            json!("claude-sonnet-4-5"),
            json!("claude-haiku-4-5"),
            json!("claude-sonnet-4-5")
        ],
        "the skill's model holds to the end of its turn only"
    );
    let (is_error, text) = tool_result(&h.server.requests(), 1);
    assert!(!is_error, "{text}");
    assert!(
        text.contains("the rest of this turn runs on claude-haiku-4-5"),
        "{text}"
    );
}
