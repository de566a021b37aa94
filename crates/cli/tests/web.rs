//! WebFetch through the real binary against a page server on loopback: the page reaches the
//! side request as Markdown and the side model's answer reaches the model; a redirect to
//! another host is reported, not followed; a loopback address or a name resolving to one is
//! refused before any connection unless a rule names the host; the size cap; the cache;
//! and in `-p` a fetch no rule allows is refused with the rule that would. WebSearch goes
//! through the API's server-side search tool, its results listed with their URLs, and is
//! not offered on the OpenAI-compatible dialect.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::process::{Output, Stdio};

use cairn_test_support::{PageRequest, PageServer, RecordedRequest, Reply, ScriptedBlock, WebPage};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::Harness;

mod dialect;
use dialect::Dialect;

const PAGE: &str = "<!doctype html><html><head><title>Ignored</title>\
                    <script>var tracking = 1;</script></head><body>\
                    <h1>Title</h1><p>Hello <b>world</b>, see <a href=\"/docs\">the docs</a>.</p>\
                    </body></html>";

const ANSWER: &str = "The page is titled Title and greets the world.";

const LOCAL_RULE: &str = "WebFetch(domain:127.0.0.1)";

/// Scripts one WebFetch call per URL, then a final text, and runs `-p` with `rules` allowed.
fn fetch(harness: &Harness, urls: &[String], rules: &[&str]) -> Output {
    for (n, url) in urls.iter().enumerate() {
        harness.server.push(Reply::tool_use(
            &format!("toolu_{}", n + 1),
            "WebFetch",
            json!({"url": url, "prompt": "What is this page about?"}),
        ));
    }
    harness.server.push(Reply::text("Done."));
    harness
        .server
        .reply_to_side_requests(vec![Reply::text(ANSWER)]);
    let mut command = harness.command();
    command
        .env_remove("ANTHROPIC_SMALL_FAST_MODEL")
        .args(["-p", "read the page"]);
    for rule in rules {
        command.args(["--allowedTools", rule]);
    }
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// Requests offering no tools: the side requests.
fn side_requests(harness: &Harness) -> Vec<RecordedRequest> {
    harness
        .server
        .requests()
        .into_iter()
        .filter(|request| request.body["tools"].as_array().is_none_or(Vec::is_empty))
        .collect()
}

/// The model's requests, which offer tools.
fn main_requests(harness: &Harness) -> Vec<RecordedRequest> {
    harness
        .server
        .requests()
        .into_iter()
        .filter(|request| {
            request.body["tools"]
                .as_array()
                .is_some_and(|tools| !tools.is_empty())
        })
        .collect()
}

/// The result of call `id` as the model got it: whether it is an error, and its text.
fn result_of(harness: &Harness, id: &str) -> (bool, String) {
    for request in main_requests(harness) {
        for message in request.body["messages"].as_array().unwrap() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["tool_use_id"] == json!(id) {
                    let text = match &block["content"] {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    return (block["is_error"] == json!(true), text);
                }
            }
        }
    }
    panic!("no result for {id}")
}

fn side_question(request: &RecordedRequest) -> String {
    request.body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

fn paths(pages: &PageServer) -> Vec<String> {
    pages.requests().into_iter().map(|r| r.path).collect()
}

#[test]
fn a_page_reaches_the_side_request_as_markdown_and_its_answer_reaches_the_model() {
    let harness = Harness::new();
    let pages = PageServer::start();
    pages.page("/", WebPage::html(PAGE));
    let output = fetch(&harness, &[pages.url("/")], &[LOCAL_RULE]);
    assert!(output.status.success(), "{output:?}");

    let side = side_requests(&harness);
    assert_eq!(side.len(), 1, "one side request");
    let question = side_question(&side[0]);
    assert!(
        question.contains(
            "---\n# Title\n\nHello **world**, see [the docs](/docs).\n---\n\nWhat is this page about?"
        ),
        "{question}"
    );
    assert!(
        !question.contains("tracking"),
        "scripts are left out: {question}"
    );
    // The side request goes to the small model, with no tools.
    assert_eq!(side[0].body["model"], json!("claude-haiku-4-5"));
    assert_eq!(result_of(&harness, "toolu_1"), (false, ANSWER.to_string()));
    assert_eq!(
        pages.requests(),
        vec![PageRequest {
            path: "/".into(),
            host: format!("127.0.0.1:{}", pages.port()),
        }]
    );
}

#[test]
fn the_offered_tool_is_webfetch_with_url_and_prompt() {
    let harness = Harness::new();
    harness.server.push(Reply::text("Hi."));
    let output = harness.command().args(["-p", "hello"]).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let request = &harness.server.requests()[0];
    let fetch = request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == json!("WebFetch"))
        .expect("WebFetch is offered")
        .clone();
    assert_eq!(fetch["input_schema"]["required"], json!(["url", "prompt"]));
}

#[test]
fn a_second_fetch_of_the_same_url_comes_from_the_cache() {
    let harness = Harness::new();
    let pages = PageServer::start();
    pages.page("/", WebPage::html(PAGE));
    let output = fetch(&harness, &[pages.url("/"), pages.url("/")], &[LOCAL_RULE]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(paths(&pages), vec!["/"], "fetched once");
    let side = side_requests(&harness);
    assert_eq!(side.len(), 2, "each call still asks its question");
    assert!(side_question(&side[1]).contains("# Title"));
    assert_eq!(result_of(&harness, "toolu_2"), (false, ANSWER.to_string()));
}

#[test]
fn a_redirect_on_the_same_host_is_followed() {
    let harness = Harness::new();
    let pages = PageServer::start();
    pages.page("/moved", WebPage::redirect("/"));
    pages.page("/", WebPage::html(PAGE));
    let output = fetch(&harness, &[pages.url("/moved")], &[LOCAL_RULE]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(paths(&pages), vec!["/moved", "/"]);
    assert_eq!(result_of(&harness, "toolu_1"), (false, ANSWER.to_string()));
}

#[test]
fn a_redirect_to_another_host_is_reported_not_followed() {
    let harness = Harness::new();
    let pages = PageServer::start();
    let elsewhere = format!("http://localhost:{}/new", pages.port());
    pages.page("/old", WebPage::redirect(elsewhere.clone()));
    pages.page("/new", WebPage::html(PAGE));
    let output = fetch(&harness, &[pages.url("/old")], &[LOCAL_RULE]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        result_of(&harness, "toolu_1"),
        (
            false,
            format!(
                "{} redirects (HTTP 302) to another host: {elsewhere}\nWebFetch does not follow \
                 a redirect to another host. To read it, call WebFetch again with url \
                 \"{elsewhere}\" and the same prompt.",
                pages.url("/old")
            )
        )
    );
    assert_eq!(
        paths(&pages),
        vec!["/old"],
        "the new location was not fetched"
    );
    assert!(side_requests(&harness).is_empty());
}

#[test]
fn a_loopback_address_without_a_rule_naming_it_is_refused_before_any_connection() {
    let harness = Harness::new();
    let pages = PageServer::start();
    pages.page("/", WebPage::html(PAGE));
    // A bare `WebFetch` rule lets the call past the gate but names no host.
    let output = fetch(&harness, &[pages.url("/")], &["WebFetch"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        result_of(&harness, "toolu_1"),
        (
            true,
            "WebFetch refused 127.0.0.1: it resolves to 127.0.0.1, which is a loopback address \
             (this machine). Only a permission rule naming the host lets WebFetch reach it, e.g. \
             `WebFetch(domain:127.0.0.1)`."
                .to_string()
        )
    );
    assert_eq!(pages.requests(), vec![], "no connection was made");
}

#[test]
fn a_name_resolving_to_a_loopback_address_is_refused_by_the_name_the_rule_must_give() {
    let harness = Harness::new();
    let pages = PageServer::start();
    pages.page("/", WebPage::html(PAGE));
    // A bare rule lets the call past the gate; the other names 127.0.0.1, not `localhost`,
    // which resolves to it.
    let url = format!("http://localhost:{}/", pages.port());
    let output = fetch(&harness, &[url], &[LOCAL_RULE, "WebFetch"]);
    assert!(output.status.success(), "{output:?}");
    let (is_error, text) = result_of(&harness, "toolu_1");
    assert!(is_error, "{text}");
    assert!(
        text.starts_with("WebFetch refused localhost: it resolves to ")
            && text.contains("which is a loopback address (this machine)")
            && text.ends_with("e.g. `WebFetch(domain:localhost)`."),
        "{text}"
    );
    assert_eq!(pages.requests(), vec![], "no connection was made");
}

#[test]
fn a_page_over_ten_megabytes_is_refused() {
    let harness = Harness::new();
    let pages = PageServer::start();
    let mut page = WebPage::html("");
    page.body = vec![b'a'; 10 * 1024 * 1024 + 1];
    pages.page("/big", page);
    let output = fetch(&harness, &[pages.url("/big")], &[LOCAL_RULE]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        result_of(&harness, "toolu_1"),
        (
            true,
            format!(
                "{} is larger than the 10485760 bytes WebFetch reads",
                pages.url("/big")
            )
        )
    );
    assert!(side_requests(&harness).is_empty());
}

#[test]
fn in_print_mode_a_fetch_no_rule_allows_is_refused_with_the_rule_that_would() {
    let harness = Harness::new();
    let pages = PageServer::start();
    pages.page("/", WebPage::html(PAGE));
    let output = fetch(&harness, &[pages.url("/")], &[]);
    assert!(output.status.success(), "{output:?}");
    let (is_error, text) = result_of(&harness, "toolu_1");
    assert!(is_error, "{text}");
    assert!(
        text.contains("WebFetch reaches the network.")
            && text.contains("`WebFetch(domain:127.0.0.1)`"),
        "{text}"
    );
    assert_eq!(pages.requests(), vec![]);
}

fn tool_names(request: &RecordedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(String::from))
        .collect()
}

#[test]
fn a_search_runs_on_the_server_and_its_links_reach_the_model() {
    let harness = Harness::new();
    harness.server.push(Reply::tool_use(
        "toolu_1",
        "WebSearch",
        json!({"query": "rust release", "allowed_domains": ["rust-lang.org"]}),
    ));
    // The search request: the API searches, then answers citing what it found.
    harness.server.push(Reply::blocks(vec![
        ScriptedBlock::WebSearch {
            id: "srvtoolu_1".into(),
            query: "rust release".into(),
            results: vec![
                (
                    "Announcing Rust".into(),
                    "https://blog.rust-lang.org/release".into(),
                ),
                ("Rust".into(), "https://www.rust-lang.org/".into()),
            ],
        },
        ScriptedBlock::Text(
            "Rust shipped a release ([Announcing Rust](https://blog.rust-lang.org/release))."
                .into(),
        ),
    ]));
    harness.server.push(Reply::text("Done."));
    let output = harness
        .command()
        .env_remove("ANTHROPIC_SMALL_FAST_MODEL")
        .args(["-p", "what is new in rust?", "--allowedTools", "WebSearch"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");

    let requests = harness.server.requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    assert!(tool_names(&requests[0]).contains(&"WebSearch".to_string()));
    let search = &requests[1];
    assert_eq!(
        search.body["tools"],
        json!([{"type": "web_search_20250305", "name": "web_search", "max_uses": 5,
                "allowed_domains": ["rust-lang.org"]}])
    );
    assert_eq!(search.body["model"], json!("claude-haiku-4-5"));
    assert_eq!(
        search.body["messages"][0]["content"][0]["text"],
        json!("Perform a web search for the query: rust release")
    );
    assert_eq!(
        result_of(&harness, "toolu_1"),
        (
            false,
            "Web search results for query: \"rust release\"\n\nLinks:\n\
             - [Announcing Rust](https://blog.rust-lang.org/release)\n\
             - [Rust](https://www.rust-lang.org/)\n\n\
             Rust shipped a release ([Announcing Rust](https://blog.rust-lang.org/release)).\n\n\
             Cite the sources you use from these results as Markdown links."
                .to_string()
        )
    );
}

#[test]
fn websearch_is_offered_on_the_anthropic_api_only() {
    for dialect in dialect::BOTH {
        let harness = Harness::new();
        harness.server.push(Reply::text("Hi."));
        let output = dialect
            .command(&harness)
            .args(["-p", "hello"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{dialect:?}: {output:?}");
        let request = &harness.server.requests()[0];
        let names: Vec<String> = match dialect {
            Dialect::Anthropic => tool_names(request),
            Dialect::OpenAi => request.body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|tool| tool["function"]["name"].as_str().unwrap().to_string())
                .collect(),
        };
        assert!(
            names.contains(&"WebFetch".to_string()),
            "{dialect:?}: {names:?}"
        );
        assert_eq!(
            names.contains(&"WebSearch".to_string()),
            dialect == Dialect::Anthropic,
            "{dialect:?}: {names:?}"
        );
    }
}

#[test]
fn websearch_called_where_the_provider_cannot_search_says_so() {
    let harness = Harness::new();
    harness.server.push(Reply::tool_use(
        "toolu_1",
        "WebSearch",
        json!({"query": "rust release"}),
    ));
    harness.server.push(Reply::text("Done."));
    let output = Dialect::OpenAi
        .command(&harness)
        .args(["-p", "search it"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let last = harness.server.requests().pop().unwrap();
    let results = Dialect::OpenAi.tool_results(&last);
    let [(id, text, _)] = results.as_slice() else {
        panic!("one result: {results:?}");
    };
    assert_eq!(id, "toolu_1");
    assert!(
        text.contains(
            "WebSearch is not available in this session: this model's provider has no \
             server-side web search"
        ),
        "{text}"
    );
}

#[test]
fn the_page_is_answered_by_a_side_request_on_either_dialect() {
    for dialect in dialect::BOTH {
        let harness = Harness::new();
        let pages = PageServer::start();
        pages.page("/", WebPage::html(PAGE));
        harness.server.push(Reply::tool_use(
            "toolu_1",
            "WebFetch",
            json!({"url": pages.url("/"), "prompt": "What is this page about?"}),
        ));
        harness.server.push(Reply::text("Done."));
        harness
            .server
            .reply_to_side_requests(vec![Reply::text(ANSWER)]);
        let output = dialect
            .command(&harness)
            .args(["-p", "read the page", "--allowedTools", LOCAL_RULE])
            .output()
            .unwrap();
        assert!(output.status.success(), "{dialect:?}: {output:?}");
        let side = side_requests(&harness);
        assert_eq!(side.len(), 1, "{dialect:?}");
        assert!(
            side[0].body["messages"].to_string().contains("# Title"),
            "{dialect:?}: {}",
            side[0].body
        );
        let last = harness.server.requests().pop().unwrap();
        assert_eq!(
            dialect.tool_results(&last),
            vec![("toolu_1".to_string(), ANSWER.to_string(), false)],
            "{dialect:?}"
        );
    }
}
