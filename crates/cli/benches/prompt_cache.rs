//! What prompt caching saves over a real multi-turn session.
//!
//! Runs the real `cairn` binary for a 10-turn and a 30-turn session (each turn a tool call
//! on a small project, then a final answer) against the scripted model server, which
//! simulates the API's prompt cache. Reports, per session:
//! - the share of re-sent tokens (the part of each request that repeats the previous request
//!   from the start) that was served from the cache;
//! - the billed-input equivalent (input + 1.25 × cache writes + 0.1 × cache reads), with and
//!   without caching (`DISABLE_PROMPT_CACHING=1`);
//! - the size of the static prompt plus the tool definitions, which every request carries;
//! - what deferring the rarely used built-ins (WebFetch, WebSearch, NotebookEdit) behind
//!   `ToolSearch` would change, replayed on the same requests: with the tools never loaded
//!   (each request carries a `ToolSearch` listing them instead), and with one of them loaded
//!   halfway, two ways: appended to the tool list from there on (which rewrites the cached
//!   prefix after the tools once), and batched as cairn loads a found tool on a warm cache
//!   (its definition only in the search's result, the tool list unchanged until the prefix is
//!   written anyway). cairn does not defer them.
//!
//! `cargo bench -p cairn-cli --bench prompt_cache --profile dev`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark reports on stdout and fails loudly"
)]

use std::path::Path;
use std::process::{Command, Stdio};

use cairn_test_support::cache::{PromptCache, cacheable_blocks};
use cairn_test_support::{Reply, ScriptedServer};
use serde_json::{Value, json};

/// One session's figures.
struct Figures {
    requests: usize,
    resent: u64,
    served_from_cache: u64,
    billed_equivalent: f64,
    fixed_prefix_tokens: u64,
    /// The request bodies as sent, for the deferral replay.
    bodies: Vec<Value>,
}

/// The built-ins Claude Code defers behind tool search that `-p` offers.
const RARELY_USED: [&str; 3] = ["WebFetch", "WebSearch", "NotebookEdit"];

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let project = tempfile::tempdir().unwrap();
    make_project(project.path());
    for turns in [10, 30] {
        let cached = run_session(project.path(), turns, true);
        let uncached = run_session(project.path(), turns, false);
        println!("== {turns}-turn session ({} requests)", cached.requests);
        println!(
            "re-sent tokens served from cache: {:.1}% ({} of {})",
            100.0 * cached.served_from_cache as f64 / cached.resent.max(1) as f64,
            cached.served_from_cache,
            cached.resent
        );
        println!(
            "billed-input equivalent: {:.0} tokens with caching, {:.0} without ({:.1}% saved)",
            cached.billed_equivalent,
            uncached.billed_equivalent,
            100.0 * (1.0 - cached.billed_equivalent / uncached.billed_equivalent)
        );
        println!(
            "static prompt + tool definitions: ~{} tokens per request",
            cached.fixed_prefix_tokens
        );
        let offered = billed(&cached.bodies);
        let never = billed(&deferred(&cached.bodies, None));
        let half = Some(cached.bodies.len() / 2);
        let halfway = billed(&deferred(&cached.bodies, half));
        let batched = billed(&found_in_result(&cached.bodies, cached.bodies.len() / 2));
        println!(
            "deferring {}: never loaded {:.0} ({:+.1}%), loaded once halfway {:.0} ({:+.1}%) \
             appended at once, {:.0} ({:+.1}%) batched, against {offered:.0} offered",
            RARELY_USED.join(", "),
            never,
            100.0 * (never / offered - 1.0),
            halfway,
            100.0 * (halfway / offered - 1.0),
            batched,
            100.0 * (batched / offered - 1.0),
        );
    }
}

/// The billed-input equivalent of `bodies` replayed through a fresh cache.
fn billed(bodies: &[Value]) -> f64 {
    let mut cache = PromptCache::default();
    bodies
        .iter()
        .map(|body| {
            let usage = cache.account(body);
            usage.input_tokens as f64
                + 1.25 * usage.cache_creation_input_tokens as f64
                + 0.1 * usage.cache_read_input_tokens as f64
        })
        .sum()
}

/// `bodies` as they would go with [`RARELY_USED`] deferred: a `ToolSearch` definition
/// listing them (name and the start of the description, as its listing does) instead of
/// them, and from request `load_at` on the first of them loaded after it.
fn deferred(bodies: &[Value], load_at: Option<usize>) -> Vec<Value> {
    bodies
        .iter()
        .enumerate()
        .map(|(index, body)| {
            let mut body = body.clone();
            let tools = body["tools"].as_array().cloned().unwrap_or_default();
            let (rare, mut kept): (Vec<Value>, Vec<Value>) = tools
                .into_iter()
                .partition(|tool| RARELY_USED.iter().any(|name| tool["name"] == *name));
            let listing: String = rare
                .iter()
                .map(|tool| {
                    let description: String = tool["description"]
                        .as_str()
                        .unwrap_or_default()
                        .chars()
                        .take(80)
                        .collect();
                    format!(
                        "- {}: {description}\n",
                        tool["name"].as_str().unwrap_or_default()
                    )
                })
                .collect();
            kept.push(json!({
                "name": "ToolSearch",
                "description": format!(
                    "Loads deferred tools by name (select:<name>) or by keywords; their \
                     definitions join the tool list once loaded.\n\nDeferred tools:\n{listing}"
                ),
                "input_schema": {"type": "object", "properties": {
                    "query": {"type": "string"},
                    "max_results": {"type": "integer"}}, "required": ["query"]}
            }));
            if load_at.is_some_and(|at| index >= at)
                && let Some(first) = rare.first()
            {
                kept.push(first.clone());
            }
            body["tools"] = Value::Array(kept);
            body
        })
        .collect()
}

/// `bodies` as they would go with [`RARELY_USED`] deferred and the first of them found at
/// request `at` as a warm cache finds it: its definition in the search's result (added to the
/// last message of request `at`, which every later request repeats), the tool list as it was.
fn found_in_result(bodies: &[Value], at: usize) -> Vec<Value> {
    let definition = bodies[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|tool| tool["name"] == RARELY_USED[0])
        .cloned()
        .unwrap();
    let result = json!({"type": "text", "text": format!("<function>{definition}</function>")});
    let position = bodies[at]["messages"]
        .as_array()
        .map_or(0, Vec::len)
        .saturating_sub(1);
    let mut deferred = deferred(bodies, None);
    for body in &mut deferred[at..] {
        let Some(message) = body["messages"].get_mut(position) else {
            continue;
        };
        let mut content = match message["content"].take() {
            Value::String(text) => vec![json!({"type": "text", "text": text})],
            Value::Array(blocks) => blocks,
            _ => Vec::new(),
        };
        content.push(result.clone());
        message["content"] = Value::Array(content);
    }
    deferred
}

fn make_project(dir: &Path) {
    for index in 0..40 {
        let body: String = (0..60)
            .map(|line| format!("pub fn item_{index}_{line}() -> usize {{ {line} * {index} }}\n"))
            .collect();
        std::fs::write(dir.join(format!("module_{index}.rs")), body).unwrap();
    }
    std::fs::write(dir.join("CLAUDE.md"), "Run the tests with `cargo test`.\n").unwrap();
}

fn run_session(project: &Path, turns: usize, caching: bool) -> Figures {
    let server = ScriptedServer::start();
    server.simulate_prompt_cache();
    for turn in 0..turns - 1 {
        server.push(Reply::tool_use(
            &format!("toolu_{turn}"),
            "Read",
            json!({"file_path": project.join(format!("module_{}.rs", turn % 40))}),
        ));
    }
    server.push(Reply::text("All modules read; they are consistent."));
    let home = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command
        .current_dir(project)
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env("ANTHROPIC_API_KEY", "bench-key")
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("HOME", home.path())
        .env("CAIRN_HOME", home.path().join(".cairn"))
        .args([
            "-p",
            "Read every module and check them.",
            "--output-format",
            "json",
        ])
        .stdin(Stdio::null());
    if !caching {
        command.env("DISABLE_PROMPT_CACHING", "1");
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();

    let bodies: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(bodies.len(), turns);
    // Replaying the bodies through a fresh cache gives each request's own figures; their sum
    // must be what cairn itself reported.
    let mut cache = PromptCache::default();
    let mut figures = Figures {
        requests: bodies.len(),
        resent: 0,
        served_from_cache: 0,
        billed_equivalent: 0.0,
        fixed_prefix_tokens: 0,
        bodies: Vec::new(),
    };
    let mut reads = 0;
    for (index, body) in bodies.iter().enumerate() {
        let usage = cache.account(body);
        reads += usage.cache_read_input_tokens;
        figures.billed_equivalent += usage.input_tokens as f64
            + 1.25 * usage.cache_creation_input_tokens as f64
            + 0.1 * usage.cache_read_input_tokens as f64;
        if index > 0 {
            let resent = common_prefix_tokens(&bodies[index - 1], body);
            figures.resent += resent;
            figures.served_from_cache += usage.cache_read_input_tokens.min(resent);
        }
    }
    assert_eq!(result["usage"]["cache_read_input_tokens"], json!(reads));
    let blocks = cacheable_blocks(&bodies[0]);
    let tools = bodies[0]["tools"].as_array().map_or(0, Vec::len);
    figures.fixed_prefix_tokens = blocks
        .iter()
        .take(tools + 1)
        .map(|(_, tokens)| tokens)
        .sum();
    figures.bodies = bodies;
    figures
}

/// Tokens of `next` that repeat `previous` block for block from the start.
fn common_prefix_tokens(previous: &Value, next: &Value) -> u64 {
    cacheable_blocks(previous)
        .into_iter()
        .zip(cacheable_blocks(next))
        .take_while(|(a, b)| a.0 == b.0)
        .map(|(_, (_, tokens))| tokens)
        .sum()
}
