use cairn_protocol::{ContentBlock, Message};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::{ToolContext, ToolRegistry};

/// A deferrable executor with `count` tools named `mcp__s__tool_N`, plus `mcp__s__echo`.
struct Many {
    count: usize,
}

#[async_trait]
impl ToolExecutor for Many {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut specs = vec![ToolSpec {
            name: "mcp__s__echo".into(),
            description: "Says the text back.".into(),
            input_schema: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        }];
        specs.extend((0..self.count).map(|n| ToolSpec {
            name: format!("mcp__s__tool_{n}"),
            description: format!("Extra tool number {n}, which files a report."),
            input_schema: json!({"type": "object"}),
        }));
        specs
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        if !call.input.is_object() {
            return Err(ToolOutput::error("input must be an object"));
        }
        Ok(PreparedCall {
            id: call.id.clone(),
            name: call.name.clone(),
            input: call.input.clone(),
            safety: Safety::READ_ONLY,
            paths: Vec::new(),
        })
    }

    async fn execute(&self, call: &PreparedCall, _cx: &CallContext) -> ToolOutput {
        ToolOutput::text(format!("ran {}", call.name))
    }
}

fn estimate(text: &str) -> usize {
    text.len().div_ceil(4)
}

fn tools(count: usize, deferral: Deferral, window: u64) -> DeferredTools {
    let builtins = ToolRegistry::with_builtins(ToolContext::new(std::env::temp_dir()));
    DeferredTools::new(
        Arc::new(builtins),
        Arc::new(Many { count }),
        DeferralBudget {
            deferral,
            window,
            estimate,
        },
    )
}

fn names(specs: &[ToolSpec]) -> Vec<String> {
    specs.iter().map(|spec| spec.name.clone()).collect()
}

fn call(name: &str, input: Value) -> ToolCall {
    ToolCall {
        id: "t1".into(),
        name: name.into(),
        input,
    }
}

async fn run(tools: &DeferredTools, name: &str, input: Value) -> ToolOutput {
    let prepared = tools.try_prepare(&call(name, input)).unwrap();
    tools
        .execute(&prepared, &CallContext::detached(CancellationToken::new()))
        .await
}

#[test]
fn enable_tool_search_reads_claude_codes_values() {
    let cases = [
        ("true", Ok(Deferral::Always)),
        ("1", Ok(Deferral::Always)),
        ("FALSE", Ok(Deferral::Never)),
        ("0", Ok(Deferral::Never)),
        ("auto", Ok(Deferral::AbovePercent(10))),
        ("auto:5", Ok(Deferral::AbovePercent(5))),
        (" auto:0 ", Ok(Deferral::AbovePercent(0))),
        ("auto:100", Ok(Deferral::AbovePercent(100))),
        ("auto:101", Err(())),
        ("auto:", Err(())),
        ("auto:five", Err(())),
        ("sometimes", Err(())),
    ];
    for (value, expected) in cases {
        assert_eq!(Deferral::parse(value).map_err(|_| ()), expected, "{value}");
    }
    assert_eq!(
        Deferral::parse("maybe").unwrap_err().to_string(),
        "ENABLE_TOOL_SEARCH=\"maybe\" is not understood: write true, false, auto, or auto:N \
         with N a percentage of the context window from 0 to 100"
    );
}

#[test]
fn below_the_threshold_every_tool_is_offered_and_past_it_only_tool_search() {
    let builtins = ToolRegistry::with_builtins(ToolContext::new(std::env::temp_dir()));
    let builtin_names = names(&builtins.specs());
    let many = Many { count: 200 };
    let cost = DeferralBudget {
        deferral: Deferral::Always,
        window: 0,
        estimate,
    }
    .specs_tokens(&many.specs());
    // 10% of a window 10 times the tools' cost is exactly their cost: not past it.
    let below = tools(200, Deferral::AbovePercent(10), cost * 10);
    assert!(!below.is_deferring());
    assert_eq!(below.specs().len(), builtin_names.len() + 201);
    let past = tools(200, Deferral::AbovePercent(10), cost * 10 - 10);
    assert!(past.is_deferring());
    let mut expected = builtin_names.clone();
    expected.push(TOOL_SEARCH.to_string());
    assert_eq!(names(&past.specs()), expected);
    assert!(past.serves("mcp__s__tool_7") && past.serves(TOOL_SEARCH));
    // `false` never defers; `true` defers even one cheap tool.
    assert!(!tools(200, Deferral::Never, 1).is_deferring());
    assert!(tools(0, Deferral::Always, 1_000_000).is_deferring());
    assert!(!below.serves(TOOL_SEARCH));
}

#[test]
fn the_listing_has_one_line_descriptions_while_they_fit_then_names_then_prefixes() {
    let search = |window: u64| {
        tools(200, Deferral::Always, window)
            .specs()
            .into_iter()
            .find(|spec| spec.name == TOOL_SEARCH)
            .unwrap()
            .description
    };
    // Described, the 201 lines come to about 3,200 tokens; named, about 930: each fits a
    // window 40 (20) times its size.
    let roomy = search(1_000_000);
    assert!(roomy.contains("Deferred tools (201):\n- mcp__s__echo: Says the text back.\n"));
    assert!(roomy.contains("- mcp__s__tool_199: Extra tool number 199, which files a report.\n"));
    let tight = search(100_000);
    assert!(tight.contains("Deferred tools (201):\n- mcp__s__echo\n- mcp__s__tool_0\n"));
    assert!(!tight.contains("files a report"));
    let tiny = search(10_000);
    assert!(
        tiny.ends_with(
            "Deferred tools (201):\n(too many to name here: search by keyword to find their \
             names)\n- mcp__s__* (201 tools)\n"
        ),
        "{tiny}"
    );
}

#[tokio::test]
async fn select_loads_tools_which_later_requests_carry_last_in_load_order_once_committed() {
    let tools = tools(200, Deferral::Always, 200_000);
    let before = names(&tools.specs());
    let version = tools.tools_version();
    let output = run(
        &tools,
        TOOL_SEARCH,
        json!({"query": "select:mcp__s__tool_9,mcp__s__echo,Read,nope"}),
    )
    .await;
    let text = output.content.text();
    assert!(!output.is_error);
    assert!(
        text.starts_with("Loaded mcp__s__tool_9, mcp__s__echo: call them from now on"),
        "{text}"
    );
    assert!(text.contains(
        r#"<function>{"description":"Says the text back.","name":"mcp__s__echo","parameters":{"properties":{"text":{"type":"string"}},"type":"object"}}</function>"#
    ));
    assert!(text.ends_with(
        "\nRead is not deferred: it is already offered.\nNo deferred tool is named \"nope\" (ToolSearch's description lists them)."
    ));
    // Found, not in the tool list yet: callable by name, the list (and its version) as it was.
    assert_eq!(tools.tools_version(), version);
    assert_eq!(names(&tools.specs()), before);
    assert_eq!(tools.pending_names(), ["mcp__s__tool_9", "mcp__s__echo"]);
    assert_eq!(
        run(&tools, "mcp__s__echo", json!({"text": "hi"}))
            .await
            .is_error,
        false
    );
    // Committed (a request that rewrites the prefix anyway): they join the list together.
    tools.commit_loads();
    assert_ne!(tools.tools_version(), version);
    assert_eq!(tools.pending_names(), Vec::<String>::new());
    let after = names(&tools.specs());
    // The list as it was, then the loaded tools: its start never changes.
    assert_eq!(after[..before.len()], before[..]);
    assert_eq!(after[before.len()..], ["mcp__s__tool_9", "mcp__s__echo"]);
    run(
        &tools,
        TOOL_SEARCH,
        json!({"query": "select:mcp__s__tool_1"}),
    )
    .await;
    let version = tools.tools_version();
    tools.commit_loads();
    assert_ne!(tools.tools_version(), version);
    // Nothing pending: a commit changes nothing.
    let version = tools.tools_version();
    tools.commit_loads();
    assert_eq!(tools.tools_version(), version);
    assert_eq!(
        names(&tools.specs())[before.len()..],
        ["mcp__s__tool_9", "mcp__s__echo", "mcp__s__tool_1"]
    );
}

#[tokio::test]
async fn keywords_load_the_best_matches_by_name_then_description() {
    let tools = tools(30, Deferral::Always, 200_000);
    let text = run(&tools, TOOL_SEARCH, json!({"query": "echo text"}))
        .await
        .content
        .text();
    // `echo` is a word of one name; `text` is in its description only.
    assert!(text.starts_with("Loaded mcp__s__echo: "), "{text}");
    let text = run(
        &tools,
        TOOL_SEARCH,
        json!({"query": "report", "max_results": 3}),
    )
    .await
    .content
    .text();
    assert!(
        text.starts_with("Loaded mcp__s__tool_0, mcp__s__tool_1, mcp__s__tool_2: "),
        "{text}"
    );
    // `+tool_2` must be in the name: tool_2, then tool_20…tool_29 in listing order.
    let text = run(&tools, TOOL_SEARCH, json!({"query": "+tool_2 report"}))
        .await
        .content
        .text();
    assert!(
        text.starts_with(
            "Loaded mcp__s__tool_2, mcp__s__tool_20, mcp__s__tool_21, mcp__s__tool_22, \
             mcp__s__tool_23: "
        ),
        "{text}"
    );
    let text = run(&tools, TOOL_SEARCH, json!({"query": "teleport"}))
        .await
        .content
        .text();
    assert!(
        text.starts_with("No deferred tool matches \"teleport\""),
        "{text}"
    );
    let missing = tools.try_prepare(&call(TOOL_SEARCH, json!({})));
    assert!(matches!(missing, Err(PrepareError::RejectedInput { .. })));
}

#[tokio::test]
async fn a_deferred_tool_called_without_loading_runs_and_is_loaded() {
    let tools = tools(200, Deferral::Always, 200_000);
    let output = run(&tools, "mcp__s__tool_5", json!({})).await;
    assert_eq!(output, ToolOutput::text("ran mcp__s__tool_5"));
    // It ran, so the model knew its input: it joins the list with the next commit.
    assert_eq!(tools.pending_names(), ["mcp__s__tool_5"]);
    assert_eq!(tools.loaded_names(), Vec::<String>::new());
    // Rejected input loads it at once: the next request shows the model its schema.
    let rejected = tools.try_prepare(&call("mcp__s__tool_6", json!("x")));
    assert!(matches!(rejected, Err(PrepareError::RejectedInput { .. })));
    assert_eq!(tools.loaded_names(), ["mcp__s__tool_6"]);
    // Built-in tools are never "loaded".
    tools
        .try_prepare(&call("Read", json!({"file_path": "x"})))
        .unwrap();
    tools.commit_loads();
    assert_eq!(tools.loaded_names(), ["mcp__s__tool_6", "mcp__s__tool_5"]);
}

#[tokio::test]
async fn a_resumed_session_offers_what_its_history_loaded_in_the_same_order() {
    let first = tools(200, Deferral::Always, 200_000);
    let input = json!({"query": "select:mcp__s__tool_3,mcp__s__tool_4"});
    let result = run(&first, TOOL_SEARCH, input.clone()).await;
    run(&first, "mcp__s__tool_8", json!({})).await;
    let history = vec![
        Message {
            role: cairn_protocol::Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "s1".into(),
                name: TOOL_SEARCH.into(),
                input,
            }],
        },
        Message {
            role: cairn_protocol::Role::User,
            content: vec![ContentBlock::tool_result(
                "s1",
                result.content.text(),
                false,
            )],
        },
        Message {
            role: cairn_protocol::Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "c1".into(),
                name: "mcp__s__tool_8".into(),
                input: json!({}),
            }],
        },
    ];
    let loaded = loaded_in_history(&history);
    assert_eq!(
        loaded,
        ["mcp__s__tool_3", "mcp__s__tool_4", "mcp__s__tool_8"]
    );
    let resumed = tools(200, Deferral::Always, 200_000).with_loaded(loaded);
    first.commit_loads();
    assert_eq!(names(&resumed.specs()), names(&first.specs()));
}

#[tokio::test]
async fn pinned_tools_go_in_every_request_and_count_nothing_against_the_threshold() {
    let builtins =
        names(&ToolRegistry::with_builtins(ToolContext::new(std::env::temp_dir())).specs());
    let pinned = tools(200, Deferral::Always, 200_000).with_pinned(|name| name == "mcp__s__echo");
    let mut expected = builtins.clone();
    expected.extend(["mcp__s__echo".to_string(), TOOL_SEARCH.to_string()]);
    assert_eq!(names(&pinned.specs()), expected);
    let search = pinned
        .specs()
        .into_iter()
        .find(|s| s.name == TOOL_SEARCH)
        .unwrap();
    assert!(search.description.contains("Deferred tools (200):"));
    let text = run(
        &pinned,
        TOOL_SEARCH,
        json!({"query": "select:mcp__s__echo"}),
    )
    .await
    .content
    .text();
    assert!(
        text.ends_with("mcp__s__echo is not deferred: it is already offered."),
        "{text}"
    );
    // With every tool pinned, nothing is left to defer.
    let all = tools(0, Deferral::Always, 200_000).with_pinned(|_| true);
    assert!(!all.is_deferring());
}

/// [`Many`] whose tool count grows, as a server that connects late or says `list_changed`.
struct Growing(std::sync::atomic::AtomicUsize);

impl Growing {
    fn now(&self) -> Many {
        Many {
            count: self.0.load(Ordering::SeqCst),
        }
    }
}

#[async_trait]
impl ToolExecutor for Growing {
    fn specs(&self) -> Vec<ToolSpec> {
        self.now().specs()
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        self.now().prepare(call)
    }

    fn tools_version(&self) -> u64 {
        self.0.load(Ordering::SeqCst) as u64
    }

    async fn execute(&self, call: &PreparedCall, cx: &CallContext) -> ToolOutput {
        self.now().execute(call, cx).await
    }
}

#[tokio::test]
async fn new_deferred_tools_are_found_at_once_and_listed_from_the_next_commit() {
    let growing = Arc::new(Growing(std::sync::atomic::AtomicUsize::new(3)));
    let tools = DeferredTools::new(
        Arc::new(ToolRegistry::with_builtins(ToolContext::new(
            std::env::temp_dir(),
        ))),
        growing.clone(),
        DeferralBudget {
            deferral: Deferral::Always,
            window: 200_000,
            estimate,
        },
    );
    let listing = |tools: &DeferredTools| {
        tools
            .specs()
            .into_iter()
            .find(|spec| spec.name == TOOL_SEARCH)
            .unwrap()
            .description
    };
    let before = tools.specs();
    assert!(listing(&tools).contains("Deferred tools (4):"));
    // The server now has two tools more: the requests' list stays as it was…
    growing.0.store(5, Ordering::SeqCst);
    assert_eq!(tools.specs(), before);
    // …while a search finds them already, and they run.
    let found = run(
        &tools,
        TOOL_SEARCH,
        json!({"query": "select:mcp__s__tool_4"}),
    )
    .await;
    assert!(
        found.content.text().starts_with("Loaded mcp__s__tool_4"),
        "{}",
        found.content.text()
    );
    assert_eq!(
        run(&tools, "mcp__s__tool_4", json!({})).await,
        ToolOutput::text("ran mcp__s__tool_4")
    );
    assert_eq!(tools.specs(), before);
    // A commit brings the new listing and the found tool together.
    tools.commit_loads();
    assert!(listing(&tools).contains("Deferred tools (6):"));
    assert_eq!(
        names(&tools.specs()).last().map(String::as_str),
        Some("mcp__s__tool_4")
    );
}
