//! The context pipeline's collapse (issue 16, step 4) through the real binary: a session
//! resumed run after run grows past the collapse threshold, its older turns go out as a log,
//! the session file records the mark, and the next `cairn -c` sends the same collapsed view.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_context::pipeline::collapse::LOG_HEADER;
use cairn_test_support::Reply;
use serde_json::Value;

mod support;
use support::{Harness, WAIT};

/// The window the test gives cairn: collapse at 75,150 tokens, autocompact at 83,500.
const WINDOW: &str = "100000";
/// Each answer: about 10,000 tokens of the model's prose, which no lighter step can clear.
fn answer(turn: usize) -> String {
    let line = format!("Turn {turn}: the figures of this part add up, as checked.\n");
    format!("Answer {turn}.\n{}", line.repeat(40_000 / line.len()))
}

fn run(h: &Harness, args: &[&str]) {
    let output = h
        .command()
        .env("CLAUDE_CODE_AUTO_COMPACT_WINDOW", WINDOW)
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
}

fn messages(body: &Value) -> &Vec<Value> {
    body["messages"].as_array().unwrap()
}

/// Every text block a request's messages carry.
fn texts(body: &Value) -> Vec<String> {
    messages(body)
        .iter()
        .flat_map(|message| match &message["content"] {
            Value::String(text) => vec![text.clone()],
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|block| block["text"].as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

#[test]
fn older_turns_collapse_and_a_resumed_session_sends_the_same_collapsed_view() {
    let h = Harness::new();
    for turn in 0..9 {
        h.server.push(Reply::text(answer(turn)));
        let prompt = format!("Check part {turn}.");
        if turn == 0 {
            run(&h, &["-p", &prompt]);
        } else {
            run(&h, &["-p", "-c", &prompt]);
        }
    }
    let requests = h.server.requests();
    assert_eq!(requests.len(), 9);
    // Eight answers (80,000 tokens) make the ninth request collapse: the turns before it go
    // out as a log, no summary is asked for, and the most recent turns stay whole.
    let collapsed = &requests[8].body;
    let sent = messages(collapsed);
    let texts = texts(collapsed);
    assert_eq!(texts[0], "Check part 0.");
    assert!(texts[1].starts_with(LOG_HEADER), "{:.600}", texts[1]);
    assert!(
        texts[1].contains("- answer: Answer 0. Turn 0: the figures"),
        "{}",
        texts[1]
    );
    assert!(!texts.contains(&answer(0)), "the first answer is collapsed");
    assert!(texts.contains(&answer(7)), "recent answers are whole");
    assert_eq!(texts.last().map(String::as_str), Some("Check part 8."));
    assert!(sent.len() < 17, "{} messages", sent.len());
    for request in &requests {
        assert_ne!(request.body["tool_choice"]["type"], "none", "no summary");
    }

    // The session file records the mark.
    let transcript = h.transcript();
    let text = std::fs::read_to_string(&transcript).unwrap();
    let marks: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["type"] == "collapse")
        .collect();
    assert_eq!(marks.len(), 1, "{marks:?}");

    // Resumed, the next run's request opens with the very same collapsed message, so the
    // prompt cache can serve it, and goes on from there.
    h.server.push(Reply::text("Continued."));
    run(&h, &["-p", "-c", "What next?"]);
    let requests = h.server.wait_for_requests(10, WAIT);
    let resumed = messages(&requests[9].body);
    assert!(resumed[0] == sent[0], "the same collapsed opening");
    // The rest as before (the last prompt then carried the request's cache mark).
    let last = sent.len() - 1;
    assert!(resumed[1..last] == sent[1..last], "the same turns after it");
    assert_eq!(resumed[last]["content"][0]["text"], "Check part 8.");
    assert!(requests[9].body.to_string().contains("What next?"));
}
