//! The cost model at work: what a warm cache makes wait, what a cold one makes free, and how
//! clears are batched. Each test replays a session request by request, ten seconds apart,
//! and looks at which blocks of what was already sent each request changes.

use cairn_llm::registry::PromptCache;
use pretty_assertions::assert_eq;

use super::*;

/// One turn of a 1,000-token read of its own file.
fn turn(conversation: &mut Vec<Message>, turn: usize) {
    read_turn(conversation, turn, &format!("/src/f{turn}.rs"), 4_000);
}

fn turns(range: std::ops::Range<usize>) -> Vec<Message> {
    let mut conversation = Vec::new();
    for index in range {
        turn(&mut conversation, index);
    }
    conversation
}

/// The results a request changed among those the previous one sent, by tool-use id; panics
/// when anything else changed (a prompt, a call, an answer).
fn changed_results(previous: &[Message], next: &[Message]) -> Vec<String> {
    let mut changed = Vec::new();
    for (sent, now) in previous.iter().zip(next) {
        assert_eq!(sent.role, now.role);
        for (a, b) in sent.content.iter().zip(&now.content) {
            match (a, b) {
                (
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    },
                    ContentBlock::ToolResult { content: shown, .. },
                ) if content != shown => changed.push(tool_use_id.clone()),
                _ => assert_eq!(a, b, "only results change"),
            }
        }
    }
    changed
}

/// For each request after the first, the results it changed of what the one before sent.
fn rewrites(projections: &[Projection]) -> Vec<(usize, Vec<String>)> {
    projections
        .windows(2)
        .enumerate()
        .map(|(index, pair)| {
            (
                index + 1,
                changed_results(&pair[0].messages, &pair[1].messages),
            )
        })
        .filter(|(_, changed)| !changed.is_empty())
        .collect()
}

fn reads(turns: std::ops::Range<usize>) -> Vec<String> {
    turns.map(|turn| format!("read-{turn}")).collect()
}

/// A pipeline on the small window (autocompact at 16,700, collapse at 15,030) whose cache
/// bills as `cache` says.
fn priced(cache: Option<PromptCache>) -> (StandardPipeline, Arc<FakeClock>, TokenAccounting) {
    let clock = FakeClock::new();
    let accounting = TokenAccounting {
        prompt_cache: cache,
        ..accounting()
    };
    (pipeline(small_window(), clock.clone()), clock, accounting)
}

fn replay_with(
    pipeline: &StandardPipeline,
    clock: &FakeClock,
    accounting: TokenAccounting,
    conversation: &[Message],
) -> Vec<Projection> {
    let summarizer = FakeSummarizer::default();
    let mut projections = Vec::new();
    for (index, message) in conversation.iter().enumerate() {
        if message.role == Role::User {
            clock.advance(Duration::from_secs(10));
            let mut prefix = conversation[..=index].to_vec();
            projections.push(
                block_on(pipeline.project(&mut prefix, accounting, Trigger::Auto, &summarizer))
                    .unwrap(),
            );
        }
    }
    assert_eq!(summarizer.times_asked(), 0);
    projections
}

#[test]
fn a_warm_cache_near_the_window_is_not_rewritten_until_the_clear_pays() {
    // Fourteen turns: 14,000 tokens and more, near the collapse threshold. From turn 9 on the
    // request is over half the autocompact threshold and old results could be cleared; each
    // clear would rewrite the cached conversation from the first result on.
    let (pipeline, clock, accounting) = priced(None);
    let conversation = turns(1..15);
    let projections = replay_with(&pipeline, &clock, accounting, &conversation);
    let last = projections.last().unwrap();
    assert!(accounting::messages_tokens(&last.messages) < small_window().limits(None).collapse_at);
    // Requests 17 to 22 (turns 9 to 12) could clear, and leave the cache as it is: the reads
    // carried since the prefix was written (from the first request, below the gate too) do
    // not yet cover the rewrite. Request 23 clears the seven results older than the newest
    // five at once, and nothing else changes.
    assert_eq!(rewrites(&projections), vec![(23, reads(1..8))]);
    for projection in &projections[..23] {
        assert_eq!(projection.compactions, Vec::new());
    }
}

#[test]
fn after_a_pause_past_the_ttl_the_next_request_clears() {
    let (pipeline, clock, accounting) = priced(None);
    let mut conversation = turns(1..11);
    let warm = replay_with(&pipeline, &clock, accounting, &conversation);
    assert_eq!(rewrites(&warm), Vec::new(), "nothing paid on a warm cache");

    clock.advance(CACHE_TTL + Duration::from_secs(1));
    conversation.push(Message::user_text("back from lunch"));
    let cold = block_on(pipeline.project(
        &mut conversation,
        accounting,
        Trigger::Auto,
        &FakeSummarizer::default(),
    ))
    .unwrap();
    assert_eq!(
        changed_results(&warm.last().unwrap().messages, &cold.messages),
        reads(1..6),
        "the cache is cold: everything is written anyway, so every old result goes"
    );
}

#[test]
fn clears_are_batched_and_the_provider_weights_decide_how_often() {
    // Twenty-four turns: each clear waits until the reads carried since the last rewrite
    // reach its cost, so it clears many results at once. An automatic cache (OpenAI's: no
    // write surcharge, reads at half price) makes the rewrite cheaper and the saving larger:
    // it clears sooner and in smaller batches. Either way a batch is several results, never
    // one a request.
    let conversation = turns(1..25);
    let batches = |cache: Option<PromptCache>| {
        let (pipeline, clock, accounting) = priced(cache);
        rewrites(&replay_with(&pipeline, &clock, accounting, &conversation))
            .into_iter()
            .map(|(request, changed)| (request, changed.len()))
            .collect::<Vec<_>>()
    };
    assert_eq!(batches(None), vec![(23, 7), (37, 7)]);
    assert_eq!(
        batches(Some(PromptCache::automatic(0.5))),
        vec![(17, 4), (25, 4), (33, 4), (39, 3), (45, 3)]
    );
}

#[test]
fn a_pause_past_the_ttl_below_the_gate_starts_the_carried_reads_again() {
    // Below half the threshold nothing is cleared, but the reads carried for what a clear
    // would leave out are counted. A pause past the TTL there rewrites the whole prefix
    // anyway: what was carried before it no longer counts against the next rewrite, so the
    // first clear on the warm cache after it comes later.
    let conversation = turns(1..25);
    let first_clear = |pause_before: Option<usize>| {
        let (pipeline, clock, accounting) = priced(None);
        let summarizer = FakeSummarizer::default();
        let mut projections = Vec::new();
        for (index, message) in conversation.iter().enumerate() {
            if message.role == Role::User {
                let pause = if Some(index) == pause_before {
                    CACHE_TTL + Duration::from_secs(1)
                } else {
                    Duration::from_secs(10)
                };
                clock.advance(pause);
                let mut prefix = conversation[..=index].to_vec();
                projections.push(
                    block_on(pipeline.project(&mut prefix, accounting, Trigger::Auto, &summarizer))
                        .unwrap(),
                );
            }
        }
        rewrites(&projections).first().map(|(request, _)| *request)
    };
    // Turn 8's result, request 15, is below the gate (turn 9).
    let result_of_turn_8 = conversation
        .iter()
        .enumerate()
        .filter(|(_, message)| message.role == Role::User)
        .nth(15)
        .map(|(index, _)| index);
    assert_eq!(first_clear(None), Some(23));
    assert_eq!(first_clear(result_of_turn_8), Some(25));
}

#[test]
fn a_resumed_session_knows_its_cache_from_the_last_answer_time() {
    // Fourteen turns stored by an earlier run, past half the threshold; the resumed run's
    // first request adds a prompt. Within the TTL of the last answer the cache holds the
    // stored conversation, so nothing is rewritten yet; past it everything is written anyway,
    // so every old result goes at once.
    let stored = turns(1..15);
    let first_request = |age: Duration| {
        let clock = FakeClock::new();
        let pipeline = pipeline(small_window(), clock)
            .with_last_request_at(std::time::SystemTime::now() - age, stored.len());
        let mut conversation = stored.clone();
        conversation.push(Message::user_text("go on"));
        let projection = block_on(pipeline.project(
            &mut conversation,
            accounting(),
            Trigger::Auto,
            &FakeSummarizer::default(),
        ))
        .unwrap();
        changed_results(&stored, &projection.messages)
    };
    assert_eq!(first_request(Duration::from_secs(30)), Vec::<String>::new());
    assert_eq!(
        first_request(CACHE_TTL + Duration::from_secs(60)),
        reads(1..10)
    );
}

#[test]
fn a_request_says_when_its_prefix_is_rewritten_anyway() {
    // The first request and one after a pause past the TTL write everything; the requests
    // between read their prefix from the cache, clears or not.
    let (pipeline, clock, accounting) = priced(None);
    let conversation = turns(1..25);
    let warm = replay_with(&pipeline, &clock, accounting, &conversation);
    let rewritten: Vec<usize> = warm
        .iter()
        .enumerate()
        .filter(|(_, projection)| projection.prefix_rewritten)
        .map(|(index, _)| index)
        .collect();
    assert_eq!(rewritten, [0]);
    clock.advance(CACHE_TTL + Duration::from_secs(1));
    let mut later = conversation.clone();
    later.push(Message::user_text("back"));
    let cold = block_on(pipeline.project(
        &mut later,
        accounting,
        Trigger::Auto,
        &FakeSummarizer::default(),
    ))
    .unwrap();
    assert!(cold.prefix_rewritten);
}
