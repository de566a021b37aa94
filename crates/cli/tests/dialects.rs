//! The same end-to-end scenarios on both dialects: each is written once, as a function of the
//! [`Dialect`] its scripted server speaks, and run as its own test under each (Anthropic's
//! Messages API with the default provider, and Chat Completions with `--model openai/gpt-4o`
//! and no Anthropic variable at all). A failure names the scenario and the dialect.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::json;

mod support;
use support::{Harness, WAIT};

mod dialect;
use dialect::{Dialect, run, tool_use};

/// One test per dialect for each scenario: `scenario::anthropic` and `scenario::openai`.
macro_rules! on_both_dialects {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            #[test]
            fn anthropic() {
                super::$scenario(super::Dialect::Anthropic);
            }

            #[test]
            fn openai() {
                super::$scenario(super::Dialect::OpenAi);
            }
        }
    )*};
}

on_both_dialects!(
    tool_round_trip,
    print_mode_refusal,
    continued_session,
    compaction,
);

/// Two reads in one message, answered by their ids in the next request, then the answer.
fn tool_round_trip(dialect: Dialect) {
    let h = Harness::new();
    std::fs::write(h.path("a.txt"), "alpha\n").unwrap();
    std::fs::write(h.path("b.txt"), "beta\n").unwrap();
    h.server.push(Reply::blocks(vec![
        tool_use("call_a", "Read", json!({"file_path": "a.txt"})),
        tool_use("call_b", "Read", json!({"file_path": "b.txt"})),
    ]));
    h.server.push(Reply::text("Both read."));
    let (code, stdout, stderr) = run(dialect.command(&h).args(["-p", "read both"]));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "Both read.\n");
    let requests = h.server.wait_for_requests(2, WAIT);
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, [dialect.path(); 2]);
    let results = dialect.tool_results(&requests[1]);
    let ids: Vec<&str> = results.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(ids, ["call_a", "call_b"]);
    assert!(results[0].1.contains("alpha"), "{results:?}");
    assert!(results[1].1.contains("beta"), "{results:?}");
    assert!(results.iter().all(|(_, _, error)| !error), "{results:?}");
}

/// In `-p` nobody can be asked: a write is refused, the model is told why, the disk is
/// untouched.
fn print_mode_refusal(dialect: Dialect) {
    let h = Harness::new();
    h.server.push(Reply::tool_use(
        "w",
        "Write",
        json!({"file_path": "new.txt", "content": "x"}),
    ));
    h.server.push(Reply::text("Could not write."));
    let (code, stdout, stderr) = run(dialect.command(&h).args(["-p", "write it"]));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "Could not write.\n");
    let requests = h.server.wait_for_requests(2, WAIT);
    let results = dialect.tool_results(&requests[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    let (id, text, is_error) = &results[0];
    assert_eq!(id, "w");
    assert!(is_error, "{text}");
    assert!(text.contains("nobody can be asked in cairn -p"), "{text}");
    assert!(!h.path("new.txt").exists());
}

/// `-c` carries the conversation on: the second run's request holds the first exchange, and
/// goes to the same dialect.
fn continued_session(dialect: Dialect) {
    let h = Harness::new();
    h.server.push(Reply::text("The number is noted."));
    h.server.push(Reply::text("It was 42."));
    let (code, _, stderr) = run(dialect.command(&h).args(["-p", "Remember the number 42."]));
    assert_eq!(code, Some(0), "{stderr}");
    let (code, stdout, stderr) =
        run(dialect
            .command(&h)
            .args(["-c", "-p", "What was the number?"]));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "It was 42.\n");
    let requests = h.server.wait_for_requests(2, WAIT);
    let sent = requests[1].body["messages"].to_string();
    assert!(
        sent.contains("Remember the number 42.") && sent.contains("The number is noted."),
        "{sent}"
    );
    assert_eq!(requests[1].path, dialect.path());
}

/// A reply that fills the window (as its usage says) is compacted before the next request,
/// through the provider's own summary request (tools sent, none callable), and the next
/// request carries the summary instead of the conversation.
fn compaction(dialect: Dialect) {
    const SUMMARY: &str = "SUMMARY-OF-THE-SESSION: a.txt was read.";
    let h = Harness::new();
    // A file big enough that the conversation is most of what the usage reports, so the
    // summary makes it smaller (with nothing to gain it would be kept).
    let text: String = (0..1_200).map(|n| format!("alpha line {n}\n")).collect();
    std::fs::write(h.path("a.txt"), text).unwrap();
    h.server.reply_to_side_requests(vec![Reply::text(SUMMARY)]);
    h.server.push(
        Reply::tool_use("call_r", "Read", json!({"file_path": "a.txt"})).with_usage(19_500, 10),
    );
    h.server.push(Reply::text("Done."));
    let (code, stdout, stderr) = run(dialect
        .command(&h)
        .env("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "20000")
        .args(["-p", "read a.txt"]));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "Done.\n");
    let requests = h.server.requests();
    let summaries: Vec<&str> = requests
        .iter()
        .filter(|r| r.body["tool_choice"]["type"] == "none" || r.body["tool_choice"] == "none")
        .map(|r| r.path.as_str())
        .collect();
    assert_eq!(summaries, [dialect.path()], "{requests:#?}");
    let last = requests.last().unwrap().body["messages"].to_string();
    assert!(last.contains("SUMMARY-OF-THE-SESSION"), "{last}");
}
