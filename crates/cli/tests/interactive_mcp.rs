//! MCP in the interactive UI, on a pseudo-terminal against the test MCP server and the
//! scripted model server: `/mcp__server__prompt args` runs and is in the `/` menu,
//! `@server:uri` attaches the resource and `@` completion offers it, and a server's
//! elicitation is a form whose answer reaches the server.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use cairn_test_support::mcp::{NOTES_TEXT, server_binary};
use pretty_assertions::assert_eq;
use serde_json::json;

mod support;
use support::terminal::Terminal;
use support::{Harness, WAIT, user_texts};

/// cairn in the UI with the test server as `test`, from `--mcp-config`.
fn with_test_server(h: &Harness) -> Terminal {
    let servers = json!({"mcpServers": {"test": {
        "command": server_binary(),
        "args": ["--resources", "--client-requests"]
    }}})
    .to_string();
    Terminal::launch(h)
        .args(&["--mcp-config", &servers])
        .start()
}

#[test]
fn a_prompt_line_sends_what_the_server_returns_and_the_menu_lists_the_prompts() {
    let h = Harness::new();
    h.server.push(Reply::text("Hello there, Ada!"));
    let term = with_test_server(&h);
    // Typed at once: the line waits for the server, which may still be starting.
    term.send_line("/mcp__test__greet Ada very warmly");
    term.wait_for("Hello there, Ada!");
    let request = &h.server.wait_for_requests(1, WAIT)[0].body;
    let texts = user_texts(request);
    assert_eq!(
        texts[..2],
        [
            "<command-name>/mcp__test__greet</command-name>\n<command-args>Ada very warmly</command-args>",
            "Greet Ada, very warmly."
        ]
    );
    // The server is up by now: the `/` menu holds its prompts, with their arguments.
    term.type_text("/mcp__test");
    let screen = term.wait_for("mcp__test__plain");
    assert!(
        screen.contains("mcp__test__greet <name> [mood]"),
        "{screen}"
    );
}

#[test]
fn a_prompt_line_without_its_required_argument_is_refused_by_name() {
    let h = Harness::new();
    let term = with_test_server(&h);
    term.send_line("/mcp__test__greet");
    term.wait_for("needs the argument name");
    assert_eq!(h.server.requests().len(), 0);
}

#[test]
fn a_mention_attaches_the_resource_and_at_completion_offers_it() {
    let h = Harness::new();
    h.server.push(Reply::text("Summarised."));
    let term = with_test_server(&h);
    term.send_line("Summarise @test:test://notes please");
    term.wait_for("Summarised.");
    let request = &h.server.wait_for_requests(1, WAIT)[0].body;
    assert_eq!(
        user_texts(request)[..2],
        [
            "Summarise @test:test://notes please".to_string(),
            format!(
                "The resource test://notes of the MCP server \"test\":\n[resource test://notes]\n{NOTES_TEXT}"
            )
        ]
    );
    term.type_text("@test:test://pi");
    term.wait_for("test:test://pixel");
}

/// The model calls the test server's `elicit` tool after "Ask me my name", then answers
/// `then`; the form is on screen when this returns.
fn elicitation_asked(h: &Harness, then: &str) -> Terminal {
    h.settings(json!({"permissions": {"allow": ["mcp__test"]}}));
    h.server
        .push(Reply::tool_use("t1", "mcp__test__elicit", json!({})));
    h.server.push(Reply::text(then));
    let term = with_test_server(h);
    term.send_line("Ask me my name");
    term.wait_for("Your name?");
    term
}

/// What the test server's `elicit` tool said the client answered, once the model has it.
fn elicitation_result(h: &Harness) -> String {
    let requests = h.server.wait_for_requests(2, WAIT);
    let (is_error, result) = support::tool_result(&requests, 1);
    assert!(!is_error, "{result}");
    result
}

#[test]
fn an_elicitation_is_a_form_whose_answer_reaches_the_server() {
    let h = Harness::new();
    let term = elicitation_asked(&h, "Thanks.");
    let screen = term.wait_for("test says:");
    assert!(screen.contains("1. name:"), "{screen}");
    term.type_text("Ada");
    term.press("Enter");
    term.wait_for("Thanks.");
    assert_eq!(elicitation_result(&h), "elicitation: \"accept\"");
}

#[test]
fn esc_declines_an_elicitation() {
    let h = Harness::new();
    let term = elicitation_asked(&h, "Understood.");
    term.press("Escape");
    term.wait_for("Understood.");
    assert_eq!(elicitation_result(&h), "elicitation: \"decline\"");
}
