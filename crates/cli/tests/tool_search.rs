//! Tool search through the real binary, on the Anthropic dialect and the OpenAI one alike: a
//! 200-tool MCP server (`cairn-test-mcp-server --tools 200`) past the threshold is offered as
//! one `ToolSearch` tool, `select:` loads a tool that then runs by name while the tool list
//! stays as it was on a warm cache (it joins the list, last, when the prefix is rewritten
//! anyway: without a cache, at once), a tool called unloaded runs, a resumed session offers
//! what it loaded, and below the threshold, or with `ENABLE_TOOL_SEARCH=false`, nothing is
//! deferred.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::process::{Command, Output, Stdio};

use cairn_test_support::mcp::server_binary;
use cairn_test_support::{RecordedRequest, Reply};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::{Harness, WAIT};

/// Which API the scripted server speaks for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Anthropic,
    /// `--model openai/gpt-4o` (a 128K window) against the server's Chat Completions path.
    OpenAi,
}

const BOTH: [Dialect; 2] = [Dialect::Anthropic, Dialect::OpenAi];

impl Dialect {
    /// `cairn` in `h`, pointed at its server in this dialect.
    fn command(self, h: &Harness) -> Command {
        let mut command = h.command();
        if self == Dialect::OpenAi {
            command
                .env_remove("ANTHROPIC_API_KEY")
                .env_remove("ANTHROPIC_BASE_URL")
                .env("OPENAI_API_KEY", "sk-openai-test")
                .env("OPENAI_BASE_URL", format!("{}/v1", h.server.url()))
                .args(["--model", "openai/gpt-4o"]);
        }
        command
    }

    /// The tools a request offered, as (name, description), in order.
    fn tools(self, request: &RecordedRequest) -> Vec<(String, String)> {
        let tools = request.body["tools"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        tools
            .iter()
            .map(|tool| {
                let tool = match self {
                    Dialect::Anthropic => tool,
                    Dialect::OpenAi => &tool["function"],
                };
                (
                    tool["name"].as_str().unwrap().to_string(),
                    tool["description"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    fn names(self, request: &RecordedRequest) -> Vec<String> {
        self.tools(request)
            .into_iter()
            .map(|(name, _)| name)
            .collect()
    }

    /// The text of the result of call `id` in a request.
    fn result(self, request: &RecordedRequest, id: &str) -> String {
        let messages = request.body["messages"].as_array().unwrap();
        let text = |content: &Value| match content {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        for message in messages {
            match self {
                Dialect::Anthropic => {
                    for block in message["content"].as_array().into_iter().flatten() {
                        if block["type"] == "tool_result" && block["tool_use_id"] == id {
                            return text(&block["content"]);
                        }
                    }
                }
                Dialect::OpenAi => {
                    if message["role"] == "tool" && message["tool_call_id"] == id {
                        return text(&message["content"]);
                    }
                }
            }
        }
        panic!("no result for {id} in {}", request.body);
    }
}

/// `--mcp-config` for one server named `big` with `extra` tools beside its own six.
fn big_server(extra: usize) -> String {
    json!({"mcpServers": {"big": {
        "command": server_binary(),
        "args": ["--tools", extra.to_string()]
    }}})
    .to_string()
}

/// Connects once with `cairn mcp list`, which leaves the server's tool list in the manifest
/// cache: a run's first request then offers its tools without waiting on the server.
fn warm_cache(h: &Harness, config: &str) {
    let listed = h
        .command()
        .arg(format!("--mcp-config={config}"))
        .args(["mcp", "list"])
        .output()
        .unwrap();
    assert!(listed.status.success(), "{listed:?}");
}

/// `cairn -p go` in `dialect` with `config`, `ENABLE_TOOL_SEARCH` as given, and `extra`.
fn run(
    h: &Harness,
    dialect: Dialect,
    config: &str,
    setting: Option<&str>,
    extra: &[&str],
) -> Output {
    let mut command = dialect.command(h);
    command.env_remove("ENABLE_TOOL_SEARCH");
    if let Some(value) = setting {
        command.env("ENABLE_TOOL_SEARCH", value);
    }
    command
        .args(["-p", "go", "--mcp-config", config])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn mcp_names(names: &[String]) -> Vec<&String> {
    names
        .iter()
        .filter(|name| name.starts_with("mcp__"))
        .collect()
}

#[test]
fn past_the_threshold_tool_search_replaces_200_definitions_and_select_loads_one_that_runs() {
    for dialect in BOTH {
        let h = Harness::new();
        let config = big_server(200);
        warm_cache(&h, &config);
        h.server.push(Reply::tool_use(
            "s1",
            "ToolSearch",
            json!({"query": "select:mcp__big__tool_7"}),
        ));
        h.server.push(Reply::tool_use(
            "c1",
            "mcp__big__tool_7",
            json!({"text": "hi"}),
        ));
        h.server.push(Reply::text("done"));
        // 3% of the window: the 206 small definitions (about 9,400 tokens) pass it on both.
        let output = run(
            &h,
            dialect,
            &config,
            Some("auto:3"),
            &["--allowedTools", "mcp__big"],
        );
        assert!(output.status.success(), "{dialect:?}: {output:?}");
        let requests = h.server.wait_for_requests(3, WAIT);
        let first = dialect.names(&requests[0]);
        assert_eq!(
            first.last().map(String::as_str),
            Some("ToolSearch"),
            "{dialect:?}"
        );
        assert!(mcp_names(&first).is_empty(), "{dialect:?}: {first:?}");
        let (_, listing) = dialect.tools(&requests[0]).pop().unwrap();
        assert!(
            listing.contains("Deferred tools (206):") && listing.contains("- mcp__big__tool_199"),
            "{dialect:?}: {listing}"
        );
        // The search ran without a question (no rule names it) and named the tool.
        let found = dialect.result(&requests[1], "s1");
        assert!(
            found.starts_with("Loaded mcp__big__tool_7: ")
                && found.contains(r#""name":"mcp__big__tool_7""#),
            "{dialect:?}: {found}"
        );
        // The cache is warm: the next requests carry the list as it was (a change to it would
        // rewrite the whole cached prefix), and the found tool runs by name all the same.
        assert_eq!(dialect.names(&requests[1]), first, "{dialect:?}");
        assert_eq!(
            dialect.result(&requests[2], "c1"),
            "tool_7: hi",
            "{dialect:?}"
        );
        assert_eq!(dialect.names(&requests[2]), first, "{dialect:?}");
    }
}

#[test]
fn without_a_prompt_cache_a_found_tool_joins_the_list_at_the_next_request() {
    // DISABLE_PROMPT_CACHING: every request is written whole, so a change to the tool list
    // costs nothing more and the found tool is appended at once, after the list as it was.
    let h = Harness::new();
    let config = big_server(200);
    warm_cache(&h, &config);
    h.server.push(Reply::tool_use(
        "s1",
        "ToolSearch",
        json!({"query": "select:mcp__big__tool_7"}),
    ));
    h.server.push(Reply::text("done"));
    let mut command = Dialect::Anthropic.command(&h);
    let output = command
        .env("ENABLE_TOOL_SEARCH", "true")
        .env("DISABLE_PROMPT_CACHING", "1")
        .args(["-p", "go", "--mcp-config", &config])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let requests = h.server.wait_for_requests(2, WAIT);
    let first = Dialect::Anthropic.names(&requests[0]);
    let second = Dialect::Anthropic.names(&requests[1]);
    assert_eq!(second[..first.len()], first[..]);
    assert_eq!(second[first.len()..], ["mcp__big__tool_7"]);
}

#[test]
fn a_deferred_tool_called_without_loading_it_runs_and_the_warm_list_stays_as_it_was() {
    for dialect in BOTH {
        let h = Harness::new();
        let config = big_server(200);
        warm_cache(&h, &config);
        h.server.push(Reply::tool_use(
            "c1",
            "mcp__big__tool_42",
            json!({"text": "direct"}),
        ));
        h.server.push(Reply::text("done"));
        let output = run(
            &h,
            dialect,
            &config,
            Some("true"),
            &["--allowedTools", "mcp__big"],
        );
        assert!(output.status.success(), "{dialect:?}: {output:?}");
        let requests = h.server.wait_for_requests(2, WAIT);
        assert!(mcp_names(&dialect.names(&requests[0])).is_empty());
        assert_eq!(dialect.result(&requests[1], "c1"), "tool_42: direct");
        assert_eq!(
            dialect.names(&requests[1]),
            dialect.names(&requests[0]),
            "{dialect:?}"
        );
    }
}

#[test]
fn below_the_threshold_or_with_tool_search_off_nothing_is_deferred() {
    // (ENABLE_TOOL_SEARCH, extra tools, deferred). Unset is `auto`: 10% of the window, which
    // the test server's 206 small definitions (about 4.7% of 200K, 7.3% of 128K) stay under.
    let cases: [(Option<&str>, usize, bool); 5] = [
        (None, 200, false),
        (Some("auto"), 200, false),
        (Some("false"), 200, false),
        (Some("auto:3"), 0, false),
        (Some("true"), 0, true),
    ];
    for dialect in BOTH {
        for (setting, extra, deferred) in cases {
            let h = Harness::new();
            let config = big_server(extra);
            warm_cache(&h, &config);
            h.server.push(Reply::text("done"));
            let output = run(&h, dialect, &config, setting, &[]);
            assert!(output.status.success(), "{output:?}");
            let names = dialect.names(&h.server.wait_for_requests(1, WAIT)[0]);
            let case = format!("{dialect:?} {setting:?} with {extra} extra tools");
            assert_eq!(
                names.contains(&"ToolSearch".to_string()),
                deferred,
                "{case}"
            );
            let offered = mcp_names(&names).len();
            assert_eq!(offered, if deferred { 0 } else { 6 + extra }, "{case}");
        }
    }
}

#[test]
fn the_settings_env_turns_tool_search_on_and_a_bad_value_is_an_error_naming_it() {
    let h = Harness::new();
    let config = big_server(0);
    warm_cache(&h, &config);
    h.user_settings(json!({"env": {"ENABLE_TOOL_SEARCH": "true"}}));
    h.server.push(Reply::text("done"));
    let output = run(&h, Dialect::Anthropic, &config, None, &[]);
    assert!(output.status.success(), "{output:?}");
    let names = Dialect::Anthropic.names(&h.server.wait_for_requests(1, WAIT)[0]);
    assert!(names.contains(&"ToolSearch".to_string()), "{names:?}");

    let h = Harness::new();
    let output = run(&h, Dialect::Anthropic, &config, Some("auto:150"), &[]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("ENABLE_TOOL_SEARCH=\"auto:150\" is not understood"),
        "{stderr}"
    );
    assert!(h.server.requests().is_empty());
}

#[test]
fn a_resumed_session_offers_the_tools_it_loaded_in_the_same_order() {
    let h = Harness::new();
    let config = big_server(200);
    warm_cache(&h, &config);
    h.server.push(Reply::tool_use(
        "s1",
        "ToolSearch",
        json!({"query": "select:mcp__big__tool_3,mcp__big__echo"}),
    ));
    h.server.push(Reply::text("loaded"));
    let output = run(&h, Dialect::Anthropic, &config, Some("true"), &[]);
    assert!(output.status.success(), "{output:?}");
    let before = Dialect::Anthropic.names(&h.server.wait_for_requests(2, WAIT)[1]);
    h.server.push(Reply::text("again"));
    let output = run(&h, Dialect::Anthropic, &config, Some("true"), &["-c"]);
    assert!(output.status.success(), "{output:?}");
    // A resumed run's tool list is new to it: what the session loaded is in it from the
    // start, after the list as it was, in load order.
    let resumed = Dialect::Anthropic.names(&h.server.wait_for_requests(3, WAIT)[2]);
    assert_eq!(resumed[..before.len()], before[..]);
    assert_eq!(
        resumed[before.len()..],
        ["mcp__big__tool_3", "mcp__big__echo"]
    );
}

#[test]
fn an_always_load_servers_tools_go_in_every_request_before_tool_search() {
    let h = Harness::new();
    let config = json!({"mcpServers": {
        "big": {"command": server_binary(), "args": ["--tools", "200"]},
        "pinned": {"command": server_binary(), "alwaysLoad": true}
    }})
    .to_string();
    warm_cache(&h, &config);
    h.server.push(Reply::text("done"));
    let output = run(&h, Dialect::Anthropic, &config, Some("true"), &[]);
    assert!(output.status.success(), "{output:?}");
    let names = Dialect::Anthropic.names(&h.server.wait_for_requests(1, WAIT)[0]);
    let mcp: Vec<&String> = mcp_names(&names);
    assert_eq!(
        mcp,
        ["echo", "fail", "image", "crash", "hang", "env"]
            .map(|tool| format!("mcp__pinned__{tool}"))
            .iter()
            .collect::<Vec<_>>()
    );
    assert_eq!(names.last().map(String::as_str), Some("ToolSearch"));
}
