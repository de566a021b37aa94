//! Clearing old tool results on a warm prompt cache, through the real binary against a
//! scripted server that simulates the Messages API's cache: only old results change, each
//! clear pays for itself, and the mark at the stable prefix makes a clear read what comes
//! before it instead of writing the whole conversation again.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::collections::HashMap;

use cairn_test_support::cache::PromptCache;
use cairn_test_support::{RecordedRequest, Reply};
use serde_json::{Value, json};

mod support;
use support::{Harness, without_cache_marks};

/// The window the test gives cairn (`CLAUDE_CODE_AUTO_COMPACT_WINDOW`), in tokens.
const WINDOW: usize = 100_000;
/// How many files the model reads, one a request, about 3,500 tokens each: past the window
/// together, so old results must go.
const READS: usize = 30;
const CLEARED: &str = "[Old tool result content cleared]";

fn messages(request: &RecordedRequest) -> Vec<Value> {
    request.body["messages"].as_array().unwrap().clone()
}

/// The ids of the results `next` shows differently from `previous` among the messages both
/// send; panics when anything but a result changed, or changed into anything but the
/// cleared marker.
fn changed_results(previous: &[Value], next: &[Value]) -> Vec<String> {
    let mut changed = Vec::new();
    for (sent, now) in previous.iter().zip(next) {
        let (sent, now) = (
            without_cache_marks(sent.clone()),
            without_cache_marks(now.clone()),
        );
        if sent == now {
            continue;
        }
        let pairs = sent["content"].as_array().unwrap().iter();
        for (a, b) in pairs.zip(now["content"].as_array().unwrap()) {
            if a == b {
                continue;
            }
            assert_eq!(a["type"], "tool_result", "only results change: {a} → {b}");
            assert_eq!(
                b["content"],
                json!(CLEARED),
                "a result changes only to be cleared"
            );
            changed.push(a["tool_use_id"].as_str().unwrap().to_string());
        }
    }
    changed
}

/// The requests as they would have gone had nothing been cleared: each cleared result put
/// back as it was first sent, the marks where they were.
fn uncleared(requests: &[RecordedRequest]) -> Vec<Value> {
    let mut first_sent: HashMap<String, Value> = HashMap::new();
    requests
        .iter()
        .map(|request| {
            let mut body = request.body.clone();
            for message in body["messages"].as_array_mut().unwrap() {
                let Some(content) = message["content"].as_array_mut() else {
                    continue;
                };
                for block in content.iter_mut().filter(|b| b["type"] == "tool_result") {
                    let id = block["tool_use_id"].as_str().unwrap().to_string();
                    if block["content"] == json!(CLEARED) {
                        block["content"] = first_sent[&id].clone();
                    } else {
                        first_sent
                            .entry(id)
                            .or_insert_with(|| block["content"].clone());
                    }
                }
            }
            body
        })
        .collect()
}

/// What `bodies` bill under the simulated cache (input + 1.25 × writes + 0.1 × reads), each
/// as `shape` makes it.
fn billed<'a>(bodies: impl Iterator<Item = &'a Value>, shape: impl Fn(&Value) -> Value) -> f64 {
    let mut cache = PromptCache::default();
    bodies
        .map(|body| {
            let usage = cache.account(&shape(body));
            usage.input_tokens as f64
                + 1.25 * usage.cache_creation_input_tokens as f64
                + 0.1 * usage.cache_read_input_tokens as f64
        })
        .sum()
}

/// `body` with only the marks Claude Code sends: none in the messages but on the newest.
fn without_stable_mark(body: &Value) -> Value {
    let mut body = body.clone();
    let messages = body["messages"].as_array_mut().unwrap();
    let last = messages.len() - 1;
    for message in &mut messages[..last] {
        *message = without_cache_marks(message.clone());
    }
    body
}

/// Writes `reads` files of about 3,500 tokens each (with Read's line numbers) and scripts
/// the model to read them, one a request, then to answer "All read.".
fn script_reads(h: &Harness, reads: usize) {
    let text: String = (0..330)
        .map(|line| format!("line {line:>4} of the file, 20 chars\n"))
        .collect();
    for n in 0..reads {
        let name = format!("file{n}.txt");
        std::fs::write(h.path(&name), &text).unwrap();
        h.server.push(Reply::tool_use(
            &format!("read-{n}"),
            "Read",
            json!({"file_path": h.path(&name)}),
        ));
    }
    h.server.push(Reply::text("All read."));
}

/// The session of the tests, run by the binary with `env` set: `READS` reads of ~3,500
/// tokens each, one a request, then an answer. Returns its requests, none a summary.
fn read_session(h: &Harness, env: &[(&str, &str)]) -> Vec<RecordedRequest> {
    h.server.simulate_prompt_cache();
    h.server
        .reply_to_side_requests(vec![Reply::text("SUMMARY: the files were read.")]);
    script_reads(h, READS);
    let output = h
        .command()
        .env("CLAUDE_CODE_AUTO_COMPACT_WINDOW", WINDOW.to_string())
        .envs(env.iter().copied())
        .args(["-p", "Read every file.", "--output-format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["result"], json!("All read."), "{result}");
    let requests = h.server.requests();
    assert!(
        requests
            .iter()
            .all(|request| request.body["tool_choice"]["type"] != "none"),
        "clearing kept the session under the threshold: no summary"
    );
    requests
}

/// The requests that changed what the one before sent, with the results they cleared.
fn clears(requests: &[RecordedRequest]) -> Vec<(usize, Vec<String>)> {
    let mut clears = Vec::new();
    for (index, pair) in requests.windows(2).enumerate() {
        let changed = changed_results(&messages(&pair[0]), &messages(&pair[1]));
        if !changed.is_empty() {
            clears.push((index + 1, changed));
        }
    }
    clears
}

#[test]
fn without_a_prompt_cache_old_results_are_cleared_no_later() {
    // DISABLE_PROMPT_CACHING: no marks, nothing read back, so a clear costs nothing more and
    // waits only for the size at which clearing starts; with the cache, each waits until it
    // pays (here the reads carried since the last rewrite have paid for it by the time that
    // size comes again, so the two sessions clear at the same requests).
    let cached = clears(&read_session(&Harness::new(), &[]));
    let h = Harness::new();
    let requests = read_session(&h, &[("DISABLE_PROMPT_CACHING", "1")]);
    assert!(
        requests
            .iter()
            .all(|request| !request.body.to_string().contains("cache_control"))
    );
    let uncached = clears(&requests);
    assert!(
        uncached.len() >= cached.len(),
        "{uncached:?} against {cached:?}"
    );
    let at = |clears: &[(usize, Vec<String>)]| clears.iter().map(|(n, _)| *n).collect::<Vec<_>>();
    for (free, paid) in at(&uncached).iter().zip(at(&cached)) {
        assert!(*free <= paid, "{uncached:?} against {cached:?}");
    }
}

#[test]
fn on_a_warm_cache_old_results_are_cleared_when_it_pays_behind_the_stable_mark() {
    let h = Harness::new();
    let requests = read_session(&h, &[]);
    // Requests a few milliseconds apart: the cache is warm all along. Nothing is cleared
    // while the conversation is small; then only old results change, into the marker.
    let clears = clears(&requests);
    assert!(!clears.is_empty(), "old results were cleared");
    assert!(
        clears[0].0 >= 8,
        "nothing cleared in a small conversation: {clears:?}"
    );
    // Clears come in batches, so the prefix is rewritten rarely.
    for (request, changed) in &clears {
        assert!(
            changed.len() >= 3,
            "request {request} cleared only {changed:?}"
        );
    }
    // Each clear was made because it pays: the session bills less than the same requests
    // with nothing cleared.
    let sent = billed(requests.iter().map(|request| &request.body), Value::clone);
    let kept = billed(uncleared(&requests).iter(), Value::clone);
    assert!(
        sent < kept,
        "billed {sent:.0} with the clears, {kept:.0} without"
    );
    // And the mark at the stable prefix is what each clear reads through: without it, the
    // same requests would bill more.
    let plain = billed(
        requests.iter().map(|request| &request.body),
        without_stable_mark,
    );
    assert!(
        sent < plain,
        "billed {sent:.0} with the stable mark, {plain:.0} without"
    );
}

/// Every `timestamp` of the session's file moved `by` into the past, as if its last request
/// had been made that long ago.
fn age_session_file(h: &Harness, by: std::time::Duration) {
    let transcript = h.transcript();
    let text = std::fs::read_to_string(&transcript).unwrap();
    let by = u64::try_from(by.as_millis()).unwrap();
    // Only the numbers change, so each line stays as cairn wrote it (its key order too).
    const KEY: &str = "\"timestamp\":";
    let mut aged = 0;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let Some(start) = line.find(KEY).map(|at| at + KEY.len()) else {
                return line.to_string();
            };
            let digits = line[start..].bytes().take_while(u8::is_ascii_digit).count();
            let at: u64 = line[start..start + digits].parse().unwrap();
            aged += 1;
            format!("{}{}{}", &line[..start], at - by, &line[start + digits..])
        })
        .collect();
    assert!(aged > 0, "the session file has timestamps");
    std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
}

/// A first run reads `RESUMED_READS` files under a 200K window (nothing cleared: under half
/// its threshold); `age` later (as the session file says) `-c` continues under a 100K window,
/// where the conversation is past half the threshold. Returns the first run's last request
/// and the resumed run's first.
fn resumed_session(age: Option<std::time::Duration>) -> (Vec<Value>, Vec<Value>) {
    const RESUMED_READS: usize = 14;
    let h = Harness::new();
    h.server.simulate_prompt_cache();
    script_reads(&h, RESUMED_READS);
    let run = |window: &str, args: &[&str]| {
        let output = h
            .command()
            .env("CLAUDE_CODE_AUTO_COMPACT_WINDOW", window)
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
    };
    run("200000", &["-p", "Read every file."]);
    let first = h.server.requests();
    assert_eq!(first.len(), RESUMED_READS + 1);
    assert_eq!(
        clears(&first),
        Vec::new(),
        "nothing cleared in the first run"
    );
    if let Some(age) = age {
        age_session_file(&h, age);
    }
    h.server.push(Reply::text("Done."));
    run("100000", &["-p", "-c", "Now sum them up."]);
    let requests = h.server.requests();
    assert_eq!(requests.len(), first.len() + 1);
    (
        messages(&first[first.len() - 1]),
        messages(&requests[requests.len() - 1]),
    )
}

#[test]
fn a_session_resumed_past_the_cache_ttl_clears_old_results_on_its_first_request() {
    // The session file's last answer is six minutes old: the cache is cold, everything is
    // written anyway, so the first request clears every old result but the newest kept.
    let (last, resumed) = resumed_session(Some(std::time::Duration::from_secs(6 * 60)));
    let cleared = changed_results(&last, &resumed);
    assert!(
        !cleared.is_empty() && cleared.len() < 14,
        "old results cleared, the newest kept: {cleared:?}"
    );
    let oldest: Vec<String> = (0..cleared.len()).map(|n| format!("read-{n}")).collect();
    assert_eq!(cleared, oldest, "the oldest go first");
    // Resumed seconds after the last answer, the cache is warm: the same request keeps the
    // cached conversation as it was (the clear would rewrite it before it pays).
    let (last, resumed) = resumed_session(None);
    assert_eq!(changed_results(&last, &resumed), Vec::<String>::new());
}
