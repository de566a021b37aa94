#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use cairn_protocol::{BoxFuture, Compaction, ContentBlock, Message, Role};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::autocompact::{SUMMARY_PREAMBLE, TODO_HEADER, USER_MESSAGE_HEADER};
use super::microcompact::CLEARED;
use super::*;

/// Runs a future that never waits on anything outside it (the fakes answer at once).
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
    }
}

/// A clock the test moves.
#[derive(Debug)]
struct FakeClock(Mutex<Instant>);

impl FakeClock {
    fn new() -> Arc<Self> {
        Arc::new(FakeClock(Mutex::new(Instant::now())))
    }

    fn advance(&self, by: Duration) {
        *self.0.lock().unwrap() += by;
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Instant {
        *self.0.lock().unwrap()
    }
}

/// A summarizer that answers with a fixed text (or fails), keeping what it was asked.
#[derive(Default)]
struct FakeSummarizer {
    failure: Option<String>,
    asked: Mutex<Vec<(Vec<Message>, String)>>,
}

impl FakeSummarizer {
    fn failing(reason: &str) -> Self {
        FakeSummarizer {
            failure: Some(reason.into()),
            ..FakeSummarizer::default()
        }
    }

    fn times_asked(&self) -> usize {
        self.asked.lock().unwrap().len()
    }
}

const SUMMARY: &str = "1. Primary Request and Intent: fix the parser.";

impl Summarizer for FakeSummarizer {
    fn summarize<'a>(
        &'a self,
        conversation: Vec<Message>,
        instructions: String,
        _trigger: &'a Trigger,
    ) -> BoxFuture<'a, Result<String, String>> {
        self.asked
            .lock()
            .unwrap()
            .push((conversation, instructions));
        let answer = match &self.failure {
            Some(reason) => Err(reason.clone()),
            None => Ok(format!(
                "<analysis>thinking</analysis>\n<summary>\n{SUMMARY}\n</summary>"
            )),
        };
        Box::pin(std::future::ready(answer))
    }
}

/// A window of 20,000 tokens: autocompact at 16,700, blocked at 19,700.
fn small_window() -> PipelineSettings {
    PipelineSettings {
        window_override: Some(20_000),
        ..PipelineSettings::default()
    }
}

fn pipeline(settings: PipelineSettings, clock: Arc<FakeClock>) -> StandardPipeline {
    StandardPipeline::new(std::env::temp_dir())
        .with_settings(settings)
        .with_clock(clock)
}

fn accounting() -> TokenAccounting {
    TokenAccounting {
        last_reported: None,
        context_window: Some(200_000),
        max_output_tokens: 32_000,
        prompt_cache: None,
    }
}

fn call(id: &str, name: &str, input: Value) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![ContentBlock::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
        }],
    }
}

fn result(id: &str, text: &str) -> Message {
    Message {
        role: Role::User,
        content: vec![ContentBlock::tool_result(id, text, false)],
    }
}

fn answer(text: &str) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![ContentBlock::text(text)],
    }
}

/// One turn: the prompt, a `Read` of `path` returning `chars` characters, and an answer.
fn read_turn(conversation: &mut Vec<Message>, turn: usize, path: &str, chars: usize) {
    let id = format!("read-{turn}");
    conversation.push(Message::user_text(format!("prompt {turn}")));
    conversation.push(call(&id, "Read", json!({"file_path": path})));
    conversation.push(result(&id, &"r".repeat(chars)));
    conversation.push(answer(&format!("answer {turn}")));
}

fn result_text(messages: &[Message], id: &str) -> Option<String> {
    messages
        .iter()
        .flat_map(|message| &message.content)
        .find_map(|block| match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } if tool_use_id == id => Some(content.text()),
            _ => None,
        })
}

/// What the API requires of a request's messages: a user message first, roles alternating,
/// every result answering a call of the message just before, every call answered in the
/// message just after (but in the last message).
fn assert_valid_for_the_api(messages: &[Message]) {
    assert_eq!(
        messages.first().map(|message| message.role),
        Some(Role::User)
    );
    for pair in messages.windows(2) {
        assert_ne!(pair[0].role, pair[1].role, "roles alternate: {pair:?}");
    }
    for (index, message) in messages.iter().enumerate() {
        let results: BTreeSet<&str> = message
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
                _ => None,
            })
            .collect();
        if !results.is_empty() {
            let calls: BTreeSet<&str> = messages[index - 1]
                .tool_uses()
                .map(|(id, _, _)| id)
                .collect();
            assert_eq!(
                results, calls,
                "the results of message {index} answer its calls"
            );
        }
        let calls: BTreeSet<&str> = message.tool_uses().map(|(id, _, _)| id).collect();
        if !calls.is_empty() && index + 1 < messages.len() {
            let answered: BTreeSet<&str> = messages[index + 1]
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(calls, answered, "the calls of message {index} are answered");
        }
    }
}

fn opening_texts(messages: &[Message]) -> Vec<String> {
    messages[0]
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn under_the_thresholds_the_conversation_goes_out_as_it_is() {
    let clock = FakeClock::new();
    let pipeline = pipeline(small_window(), clock);
    let mut conversation = Vec::new();
    read_turn(&mut conversation, 1, "/a.rs", 4_000);
    conversation.push(Message::user_text("next"));
    let stored = conversation.clone();
    let summarizer = FakeSummarizer::default();
    let projection =
        block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
            .unwrap();
    assert_eq!(
        projection,
        Projection {
            messages: stored.clone(),
            compactions: Vec::new(),
            notices: Vec::new(),
            // The prompt and the read's call stay as they are when its result is cleared.
            stable_prefix: Some(2),
            // The first request: nothing is cached yet.
            prefix_rewritten: true,
        }
    );
    assert_eq!(conversation, stored);
    assert_eq!(summarizer.times_asked(), 0);
}

#[test]
fn the_reported_usage_counts_for_what_it_covered() {
    // 2,000 characters of messages, but the API counted 17,000 tokens (system prompt, tools):
    // with what came since, the request passes the 16,700 threshold and is compacted.
    let clock = FakeClock::new();
    let pipeline = pipeline(small_window(), clock);
    let mut conversation = vec![Message::user_text("x".repeat(2_000))];
    let summarizer = FakeSummarizer::default();
    block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
        .unwrap();
    conversation.push(answer("done"));
    conversation.push(Message::user_text("and now?"));
    let reported = TokenAccounting {
        last_reported: Some((17_000, 1)),
        ..accounting()
    };
    let projection =
        block_on(pipeline.project(&mut conversation, reported, Trigger::Auto, &summarizer))
            .unwrap();
    assert_eq!(summarizer.times_asked(), 1);
    let compaction = &projection.compactions[0];
    // 17,000 for the first message, then "done" (1) and "and now?" (2).
    assert_eq!(compaction.tokens_before, 17_003);
    assert_eq!(compaction.step, "autocompact");
}

#[test]
fn autocompact_keeps_the_first_prompt_the_todo_list_and_the_edited_file() {
    let dir = tempfile::tempdir().unwrap();
    let edited = dir.path().join("parser.rs");
    std::fs::write(&edited, "fn parse() {}\n").unwrap();
    let edited_path = edited.display().to_string();
    let clock = FakeClock::new();
    let pipeline = pipeline(small_window(), clock);

    let mut conversation = vec![
        Message::user_text("Fix the parser so it accepts trailing commas."),
        call(
            "todo",
            "TodoWrite",
            json!({"todos": [
                {"content": "Read the parser", "status": "completed", "activeForm": "Reading"},
                {"content": "Accept trailing commas", "status": "pending", "activeForm": "Fixing"}
            ]}),
        ),
        result("todo", "Todos updated"),
        call(
            "edit",
            "Edit",
            json!({"file_path": edited_path, "old_string": "fn parse() {}", "new_string": "fn parse() { commas() }"}),
        ),
        result("edit", "The file was updated."),
        answer("Edited the parser."),
    ];
    // Three long turns after the first, of sub-agent answers that no lighter step can
    // clear: collapsing the oldest two turns (all it may, the three most recent stay) would
    // leave the request over the threshold still.
    for turn in 2..5 {
        let id = format!("task-{turn}");
        conversation.push(Message::user_text(format!("prompt {turn}")));
        conversation.push(call(&id, "Task", json!({"description": id})));
        conversation.push(result(&id, &format!("{turn}{}", "t".repeat(27_999))));
        conversation.push(answer(&format!("answer {turn}")));
    }
    conversation.push(Message::user_text("Now add a test."));
    // The edit as it is on disk now, after the session made it.
    std::fs::write(&edited, "fn parse() { commas() }\n").unwrap();

    let summarizer = FakeSummarizer::default();
    let projection =
        block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
            .unwrap();

    let autocompact: Vec<&Compaction> = projection
        .compactions
        .iter()
        .filter(|compaction| compaction.step == "autocompact")
        .collect();
    assert_eq!(autocompact.len(), 1);
    assert_eq!(autocompact[0].summary.as_deref(), Some(SUMMARY));
    assert_eq!(autocompact[0].opening, conversation);
    assert_eq!(projection.messages, conversation);
    assert_valid_for_the_api(&projection.messages);
    assert_eq!(projection.messages.len(), 1);
    assert_eq!(
        opening_texts(&projection.messages),
        vec![
            format!("{SUMMARY_PREAMBLE}{SUMMARY}"),
            format!(
                "[File {edited_path}, edited in this session, as it is on disk now]\n\
                 fn parse() {{ commas() }}\n"
            ),
            format!(
                "{TODO_HEADER}- [completed] Read the parser\n- [pending] Accept trailing commas"
            ),
            format!("{USER_MESSAGE_HEADER}Fix the parser so it accepts trailing commas."),
            format!("{USER_MESSAGE_HEADER}prompt 2"),
            format!("{USER_MESSAGE_HEADER}prompt 3"),
            format!("{USER_MESSAGE_HEADER}prompt 4"),
            format!("{USER_MESSAGE_HEADER}Now add a test."),
            "Continue the conversation from where it left off without asking the user any \
             further questions. Continue with the last task that you were asked to work on."
                .to_string(),
        ]
    );
    // Under a third of the window.
    assert!(
        autocompact[0].tokens_after < 20_000 / 3,
        "{}",
        autocompact[0].tokens_after
    );

    // A second compaction carries the same state over from the first one's opening.
    conversation.push(answer("Added."));
    conversation.push(Message::user_text("Thanks."));
    block_on(pipeline.project(
        &mut conversation,
        accounting(),
        Trigger::Manual { instructions: None },
        &summarizer,
    ))
    .unwrap();
    let texts = opening_texts(&conversation);
    assert!(texts.contains(&format!(
        "{TODO_HEADER}- [completed] Read the parser\n- [pending] Accept trailing commas"
    )));
    assert!(texts.contains(&format!(
        "{USER_MESSAGE_HEADER}Fix the parser so it accepts trailing commas."
    )));
    assert_eq!(texts.last(), Some(&format!("{USER_MESSAGE_HEADER}Thanks.")));
    assert!(texts[1].starts_with(&format!("[File {edited_path}, edited")));
}

#[test]
fn the_turn_in_progress_is_kept_with_every_call_and_its_result() {
    let clock = FakeClock::new();
    let pipeline = pipeline(small_window(), clock);
    let mut conversation = Vec::new();
    // Sub-agent results, which cannot be fetched again, in turns too recent to collapse (the
    // three most recent stay), so nothing lighter helps.
    for turn in 1..3 {
        let id = format!("task-{turn}");
        conversation.push(Message::user_text(format!("prompt {turn}")));
        conversation.push(call(&id, "Task", json!({"prompt": format!("look {turn}")})));
        conversation.push(result(&id, &"t".repeat(34_000)));
        conversation.push(answer(&format!("answer {turn}")));
    }
    conversation.push(Message::user_text("Look at both."));
    conversation.push(Message {
        role: Role::Assistant,
        content: vec![
            ContentBlock::text("Reading both."),
            ContentBlock::ToolUse {
                id: "g1".into(),
                name: "Grep".into(),
                input: json!({"pattern": "fn"}),
            },
            ContentBlock::ToolUse {
                id: "g2".into(),
                name: "Grep".into(),
                input: json!({"pattern": "struct"}),
            },
        ],
    });
    conversation.push(Message {
        role: Role::User,
        content: vec![
            ContentBlock::tool_result("g1", "a.rs:1:fn a", false),
            ContentBlock::tool_result("g2", "b.rs:1:struct B", false),
        ],
    });
    let tail = conversation[conversation.len() - 2..].to_vec();
    let summarizer = FakeSummarizer::default();
    let projection =
        block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
            .unwrap();
    assert_valid_for_the_api(&projection.messages);
    assert_eq!(projection.messages[1..].to_vec(), tail);
    assert_eq!(
        opening_texts(&projection.messages).last(),
        Some(&format!("{USER_MESSAGE_HEADER}Look at both."))
    );
}

#[test]
fn snip_drops_a_read_superseded_by_a_later_read_of_the_same_file() {
    // Cold cache (first request), over half the threshold: the lighter steps run, and only them.
    let clock = FakeClock::new();
    let pipeline = pipeline(small_window(), clock);
    let mut conversation = Vec::new();
    read_turn(&mut conversation, 1, "/same.rs", 20_000);
    read_turn(&mut conversation, 2, "/other.rs", 12_000);
    read_turn(&mut conversation, 3, "/same.rs", 20_000);
    conversation.push(Message::user_text("go on"));
    let stored = conversation.clone();
    let summarizer = FakeSummarizer::default();
    let projection =
        block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
            .unwrap();
    assert_eq!(
        conversation, stored,
        "the stored conversation is never rewritten by snip"
    );
    let mut expected = stored.clone();
    expected.drain(1..3);
    assert_eq!(projection.messages, expected);
    assert_valid_for_the_api(&projection.messages);
    assert_eq!(
        projection.compactions,
        vec![Compaction {
            step: "snip".into(),
            manual: false,
            tokens_before: 13_036,
            tokens_after: 8_029,
            summary: None,
            opening: Vec::new(),
            collapsed_through: None,
        }]
    );
    assert_eq!(summarizer.times_asked(), 0);
}

const EIGHT_READS_CHARS: usize = 6_400;

/// Eight turns of 1,600-token reads: 12,800 and some, under the 15,030 collapse threshold but
/// over half the autocompact threshold.
fn eight_reads() -> Vec<Message> {
    let mut conversation = Vec::new();
    for turn in 1..9 {
        read_turn(
            &mut conversation,
            turn,
            &format!("/f{turn}.rs"),
            EIGHT_READS_CHARS,
        );
    }
    conversation.push(Message::user_text("go on"));
    conversation
}

/// Sends `conversation` as a session does, a request after each of its user messages
/// (prompts and tool results), `seconds` apart; returns each request's projection.
fn replay(
    pipeline: &StandardPipeline,
    clock: &FakeClock,
    conversation: &[Message],
    seconds: u64,
) -> Vec<Projection> {
    let summarizer = FakeSummarizer::default();
    let mut projections = Vec::new();
    for (index, message) in conversation.iter().enumerate() {
        if message.role == Role::User {
            clock.advance(Duration::from_secs(seconds));
            let mut prefix = conversation[..=index].to_vec();
            projections.push(
                block_on(pipeline.project(&mut prefix, accounting(), Trigger::Auto, &summarizer))
                    .unwrap(),
            );
        }
    }
    projections
}

#[test]
fn microcompact_waits_while_the_cache_is_warm_and_clears_once_it_is_cold() {
    let clock = FakeClock::new();
    let pipeline = pipeline(small_window(), clock.clone());
    let summarizer = FakeSummarizer::default();
    // The session's requests through turn 7, ten seconds apart: each one's cache holds the
    // one before, and clearing the oldest results would rewrite more than it saves before
    // the next compaction. (By turn 8 collapsing the older turns would pay: see the collapse
    // tests.)
    let mut conversation = eight_reads();
    let warm = replay(&pipeline, &clock, &conversation[..28], 10);
    let last = warm.last().unwrap();
    assert_eq!(
        last.messages,
        conversation[..27],
        "a warm cache is left alone under the threshold"
    );
    assert!(
        warm.iter()
            .all(|projection| projection.compactions.is_empty())
    );

    clock.advance(CACHE_TTL + Duration::from_secs(1));
    let cold =
        block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
            .unwrap();
    let cleared: Vec<String> = (1..9)
        .map(|turn| result_text(&cold.messages, &format!("read-{turn}")).unwrap())
        .collect();
    let kept = "r".repeat(EIGHT_READS_CHARS);
    assert_eq!(
        cleared,
        vec![
            CLEARED.to_string(),
            CLEARED.to_string(),
            CLEARED.to_string(),
            kept.clone(),
            kept.clone(),
            kept.clone(),
            kept.clone(),
            kept.clone(),
        ],
        "the newest {} results stay",
        microcompact::KEEP_RECENT_RESULTS
    );
    assert_eq!(
        cold.compactions
            .iter()
            .map(|compaction| compaction.step.as_str())
            .collect::<Vec<_>>(),
        vec!["microcompact"]
    );
    assert_eq!(summarizer.times_asked(), 0);

    // Sticky: the next request, warm again, sends the same view plus what came since.
    conversation.push(answer("ok"));
    conversation.push(Message::user_text("more"));
    clock.advance(Duration::from_secs(10));
    let next =
        block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
            .unwrap();
    assert_eq!(next.messages[..cold.messages.len()], cold.messages[..]);
    assert_eq!(next.compactions, Vec::new());
}

#[test]
fn the_breaker_stops_automatic_summaries_after_three_failures() {
    let clock = FakeClock::new();
    let pipeline = pipeline(small_window(), clock.clone());
    let summarizer = FakeSummarizer::failing("the model is overloaded");
    // 17,000 tokens of prompts: over the threshold, under the hard limit; nothing to clear.
    let mut conversation = vec![Message::user_text("p".repeat(68_000))];
    let mut notices = Vec::new();
    for _ in 0..4 {
        clock.advance(Duration::from_secs(5));
        let projection =
            block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
                .unwrap();
        assert_eq!(projection.messages.len(), 1);
        notices.push(projection.notices);
    }
    assert_eq!(summarizer.times_asked(), 3);
    assert_eq!(
        notices,
        vec![
            vec![
                "Automatic compaction failed (the model is overloaded); attempt 1 of 3."
                    .to_string()
            ],
            vec![
                "Automatic compaction failed (the model is overloaded); attempt 2 of 3."
                    .to_string()
            ],
            vec![
                "Automatic compaction failed 3 times in a row (the last time: the model is \
                 overloaded); it will not be tried again this session. /compact can still be \
                 run by hand."
                    .to_string()
            ],
            Vec::new(),
        ]
    );
    // Past the hard limit now: blocked, saying why.
    conversation.push(answer("ok"));
    conversation.push(Message::user_text("q".repeat(12_000)));
    let blocked =
        block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer));
    assert_eq!(
        blocked,
        Err(PipelineError::Blocked(
            "The conversation is about 20001 tokens, too close to the model's 20000-token window \
             to send (the limit is 19700), and automatic compaction failed 3 times in a row and \
             has stopped trying this session (the last time: the model is overloaded). Run \
             /compact to summarize it, or /clear to start over."
                .into()
        ))
    );
    assert_eq!(summarizer.times_asked(), 3);
    // The API refusing it is no reason to try again either.
    let reactive = block_on(pipeline.project(
        &mut conversation,
        accounting(),
        Trigger::Reactive,
        &summarizer,
    ));
    assert!(
        matches!(reactive, Err(PipelineError::Blocked(_))),
        "{reactive:?}"
    );
    assert_eq!(summarizer.times_asked(), 3);
}

#[test]
fn requests_are_blocked_at_the_hard_limit_when_autocompact_is_off() {
    let clock = FakeClock::new();
    let settings = PipelineSettings {
        auto_compact: false,
        ..small_window()
    };
    let pipeline = pipeline(settings, clock);
    let summarizer = FakeSummarizer::default();
    let mut under = vec![Message::user_text("p".repeat(4 * 19_000))];
    assert!(
        block_on(pipeline.project(&mut under, accounting(), Trigger::Auto, &summarizer)).is_ok()
    );
    let mut over = vec![Message::user_text("p".repeat(4 * 19_700))];
    assert_eq!(
        block_on(pipeline.project(&mut over, accounting(), Trigger::Auto, &summarizer)),
        Err(PipelineError::Blocked(
            "The conversation is about 19700 tokens, too close to the model's 20000-token window \
             to send (the limit is 19700), and automatic compaction is turned off \
             (autoCompactEnabled, DISABLE_AUTO_COMPACT). Run /compact to summarize it, or /clear \
             to start over."
                .into()
        ))
    );
    assert_eq!(summarizer.times_asked(), 0);
}

#[test]
fn manual_compaction_runs_at_any_size_with_the_users_instructions() {
    let clock = FakeClock::new();
    let pipeline = pipeline(small_window(), clock);
    let summarizer = FakeSummarizer::default();
    let long_answer = "A long answer about the parser. ".repeat(40);
    let mut conversation = vec![Message::user_text("hello"), answer(&long_answer)];
    let projection = block_on(pipeline.project(
        &mut conversation,
        accounting(),
        Trigger::Manual {
            instructions: Some("Keep the error messages.".into()),
        },
        &summarizer,
    ))
    .unwrap();
    assert_eq!(projection.compactions.len(), 1);
    assert!(projection.compactions[0].manual);
    let asked = summarizer.asked.lock().unwrap();
    let (sent, instructions) = &asked[0];
    assert_eq!(
        sent,
        &vec![Message::user_text("hello"), answer(&long_answer)]
    );
    assert!(
        instructions.contains("9. Optional Next Step"),
        "{instructions}"
    );
    assert!(
        instructions.ends_with(
            "Additional instructions from the user for this summary:\nKeep the error messages."
        ),
        "{instructions}"
    );
    // By hand, the model is not told to go on by itself.
    assert_eq!(
        opening_texts(&conversation),
        vec![
            format!("{SUMMARY_PREAMBLE}{SUMMARY}"),
            format!("{USER_MESSAGE_HEADER}hello"),
        ]
    );
}

#[test]
fn compaction_turned_off_refuses_compact_and_a_failed_manual_summary_changes_nothing() {
    let clock = FakeClock::new();
    let off = pipeline(
        PipelineSettings {
            compact: false,
            ..small_window()
        },
        clock.clone(),
    );
    let summarizer = FakeSummarizer::default();
    let mut conversation = vec![Message::user_text("hello")];
    let manual = Trigger::Manual { instructions: None };
    assert_eq!(
        block_on(off.project(&mut conversation, accounting(), manual.clone(), &summarizer)),
        Err(PipelineError::CompactionFailed(
            "Compaction is turned off (DISABLE_COMPACT).".into()
        ))
    );
    let failing = FakeSummarizer::failing("a PreCompact hook stopped it: not now");
    let on = pipeline(small_window(), clock);
    assert_eq!(
        block_on(on.project(&mut conversation, accounting(), manual, &failing)),
        Err(PipelineError::CompactionFailed(
            "Compaction failed: a PreCompact hook stopped it: not now. The conversation is \
             unchanged."
                .into()
        ))
    );
    assert_eq!(conversation, vec![Message::user_text("hello")]);
}

#[test]
fn a_reactive_compaction_runs_below_the_thresholds() {
    // The API refused a request the estimate put at 9,000 tokens: compact anyway.
    let clock = FakeClock::new();
    let pipeline = pipeline(small_window(), clock);
    let summarizer = FakeSummarizer::default();
    let mut conversation = Vec::new();
    for turn in 1..4 {
        conversation.push(Message::user_text(format!("prompt {turn}")));
        conversation.push(answer(&"a".repeat(12_000)));
    }
    conversation.push(Message::user_text("again"));
    let projection = block_on(pipeline.project(
        &mut conversation,
        accounting(),
        Trigger::Reactive,
        &summarizer,
    ))
    .unwrap();
    assert_eq!(summarizer.times_asked(), 1);
    assert_eq!(projection.compactions.last().unwrap().step, "autocompact");
    assert!(!projection.compactions.last().unwrap().manual);
    assert_valid_for_the_api(&projection.messages);
}

#[test]
fn the_summary_request_starts_at_a_prompt_when_the_whole_would_not_fit() {
    let view: Vec<Message> = (1..6)
        .flat_map(|turn| {
            [
                Message::user_text(format!("prompt {turn}")),
                answer(&"a".repeat(24_000)),
            ]
        })
        .collect();
    let limits = small_window().limits(None);
    let instructions = "i".repeat(4_000);
    let input = autocompact::summary_input(&view, &instructions, Calibration::default(), limits);
    // 6,002 tokens a turn: with 1,000 of instructions and 2,000 kept for the summary's own
    // output (of the 20,000 window), the last two turns fit, three would not.
    assert_eq!(input, view[6..].to_vec());
    let whole =
        autocompact::summary_input(&view[6..], &instructions, Calibration::default(), limits);
    assert_eq!(whole, view[6..].to_vec());
    assert_valid_for_the_api(&input);
}

#[test]
fn a_summary_request_over_the_window_without_a_later_prompt_starts_at_a_model_message() {
    // One prompt, then a long run of tool work: there is no later prompt to start at.
    let mut view = vec![Message::user_text("do the long job")];
    for step in 0..6 {
        let id = format!("c{step}");
        view.push(call(
            &id,
            "Read",
            json!({"file_path": format!("/tmp/f{step}")}),
        ));
        view.push(result(&id, &"r".repeat(24_000)));
    }
    let limits = small_window().limits(None);
    let input = autocompact::summary_input(&view, "summarize", Calibration::default(), limits);
    assert!(input.len() < view.len(), "cut to fit");
    assert_eq!(input[0].role, Role::User, "starts with the user's note");
    assert!(input[0].text().contains("left out"), "{:?}", input[0]);
    assert_eq!(input[1].role, Role::Assistant);
    assert_valid_for_the_api(&input);
}

#[test]
fn a_manual_compaction_that_would_not_shrink_the_conversation_keeps_it() {
    let pipeline = pipeline(small_window(), FakeClock::new());
    let summarizer = FakeSummarizer::default();
    let before = vec![Message::user_text("hello"), answer("hi")];
    let mut conversation = before.clone();
    let outcome = block_on(pipeline.project(
        &mut conversation,
        accounting(),
        Trigger::Manual { instructions: None },
        &summarizer,
    ));
    assert_eq!(
        outcome,
        Err(PipelineError::CompactionFailed(
            "Compaction failed: there was nothing to gain: the summary with what it carries over \
             comes to about 58 tokens, and the conversation is about 3. The conversation is \
             unchanged."
                .into()
        ))
    );
    assert_eq!(conversation, before);
}

#[test]
fn files_gone_from_disk_are_not_reinjected_and_at_most_five_are() {
    let dir = tempfile::tempdir().unwrap();
    let mut conversation = vec![Message::user_text("start")];
    for index in 0..7 {
        let path = dir.path().join(format!("f{index}.rs"));
        if index != 6 {
            std::fs::write(&path, format!("// file {index}\n")).unwrap();
        }
        let id = format!("r{index}");
        conversation.push(call(
            &id,
            "Read",
            json!({"file_path": path.display().to_string()}),
        ));
        conversation.push(result(&id, "content"));
    }
    conversation.push(answer("read them"));
    // Read before the latest prompt: no kept message shows them.
    conversation.push(Message::user_text("now what?"));
    conversation.push(answer("waiting"));
    let rebuilt = autocompact::rebuild(
        &conversation,
        "summary",
        &Trigger::Manual { instructions: None },
        PipelineSettings::default().limits(Some(200_000)),
    );
    let files: Vec<String> = opening_texts(&rebuilt)
        .into_iter()
        .filter(|text| text.starts_with("[File "))
        .map(|text| text.lines().nth(1).unwrap().to_string())
        .collect();
    // f6 is gone; the newest five of the rest, newest first.
    assert_eq!(
        files,
        vec![
            "// file 5",
            "// file 4",
            "// file 3",
            "// file 2",
            "// file 1"
        ]
    );
}

/// A pipeline whose cache is warm: a first request went out a minute ago.
fn warm_pipeline() -> StandardPipeline {
    let clock = FakeClock::new();
    let pipeline = pipeline(small_window(), clock.clone());
    let mut first = vec![Message::user_text("start")];
    block_on(pipeline.project(
        &mut first,
        accounting(),
        Trigger::Auto,
        &FakeSummarizer::default(),
    ))
    .unwrap();
    clock.advance(Duration::from_secs(60));
    pipeline
}

#[test]
fn over_the_threshold_with_a_warm_cache_microcompact_runs_when_it_frees_enough() {
    let pipeline = warm_pipeline();
    let mut conversation = Vec::new();
    for turn in 1..10 {
        read_turn(&mut conversation, turn, &format!("/f{turn}.rs"), 7_600);
    }
    conversation.push(Message::user_text("go on"));
    let summarizer = FakeSummarizer::default();
    let projection =
        block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
            .unwrap();
    assert_eq!(summarizer.times_asked(), 0);
    // 9 turns of 1,911 tokens and the prompt: 17,201; the newest four results fit the
    // 8,000 tokens kept results may always hold, the five older of 1,900 become 9 each.
    assert_eq!(
        projection.compactions,
        vec![Compaction {
            step: "microcompact".into(),
            manual: false,
            tokens_before: 17_201,
            tokens_after: 17_201 - 5 * (1_900 - 9),
            summary: None,
            opening: Vec::new(),
            collapsed_through: None,
        }]
    );
    assert_valid_for_the_api(&projection.messages);
}

#[test]
fn over_the_threshold_with_a_warm_cache_a_small_gain_is_not_worth_the_cache_write() {
    // Clearing one 300-token result would leave the request just under the threshold: the
    // summary request is sent the cached view unchanged instead.
    let clock = FakeClock::new();
    let pipeline = pipeline(small_window(), clock.clone());
    let mut conversation = vec![Message::user_text("p".repeat(60_000)), answer("reading")];
    conversation.remove(1);
    for turn in 1..7 {
        let id = format!("read-{turn}");
        conversation.push(call(
            &id,
            "Read",
            json!({"file_path": format!("/f{turn}.rs")}),
        ));
        conversation.push(result(&id, &"r".repeat(1_200)));
        conversation.push(answer(&format!("answer {turn}")));
        conversation.push(Message::user_text(format!("prompt {turn}")));
    }
    let stored = conversation.clone();
    // The session's earlier requests warmed the cache with the conversation as it is.
    let earlier = replay(&pipeline, &clock, &stored[..stored.len() - 4], 10);
    assert!(
        earlier
            .iter()
            .all(|projection| projection.compactions.is_empty())
    );
    clock.advance(Duration::from_secs(10));
    let summarizer = FakeSummarizer::default();
    let projection =
        block_on(pipeline.project(&mut conversation, accounting(), Trigger::Auto, &summarizer))
            .unwrap();
    assert_eq!(
        projection
            .compactions
            .iter()
            .map(|compaction| compaction.step.as_str())
            .collect::<Vec<_>>(),
        vec!["autocompact"]
    );
    assert_eq!(summarizer.asked.lock().unwrap()[0].0, stored);
}

#[test]
fn snip_replaces_a_repeated_result_it_cannot_drop_whole() {
    // The same command with the same output, twice; the first call shares its message with
    // another call, so only its result becomes a marker.
    let mut conversation = vec![
        Message::user_text("check"),
        Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::ToolUse {
                    id: "b1".into(),
                    name: "Bash".into(),
                    input: json!({"command": "git status"}),
                },
                ContentBlock::ToolUse {
                    id: "l1".into(),
                    name: "LS".into(),
                    input: json!({"path": "/"}),
                },
            ],
        },
        Message {
            role: Role::User,
            content: vec![
                ContentBlock::tool_result("b1", "clean", false),
                ContentBlock::tool_result("l1", "a b c", false),
            ],
        },
        call("b2", "Bash", json!({"command": "git status"})),
        result("b2", "clean"),
    ];
    for turn in 0..4 {
        conversation.push(answer(&format!("answer {turn}")));
        conversation.push(Message::user_text(format!("prompt {turn}")));
    }
    let mut decisions = ViewDecisions::default();
    assert_eq!(snip::snip(&conversation, &mut decisions), 1);
    assert_eq!(
        decisions,
        ViewDecisions {
            dropped: BTreeSet::new(),
            replaced: std::collections::BTreeMap::from([(
                "b1".to_string(),
                "[Superseded: the same call returned the same result later]".to_string()
            )]),
        }
    );
    assert_valid_for_the_api(&decisions.project(&conversation));
}

/// Step 4's tests, beside the helpers above.
mod collapsed;

/// The cost model's decisions, request by request.
mod priced;
