//! Does the context pipeline pay? Three scripted sessions (`benches/sessions/*.session`,
//! checked in: 140 reads of ~3.5K tokens at the 200K window, 40 reads at a 60K window, and a
//! mixed session of edits, greps, tests and long answers with two long pauses) run through
//! two policies on a clock the script moves (no sleeps):
//!
//! - **cairn**: `StandardPipeline`, its cost model deciding every change to what was sent;
//! - **baseline**: grow, then summarise at the autocompact threshold (window − 33K at 200K,
//!   Claude Code's; the same margins scaled as cairn scales them for a smaller window, where
//!   33K would leave less room than the fixed prefix and the summary's opening need). Its
//!   summary and the conversation rebuilt around it are cairn's own, so only the policy
//!   differs.
//!
//! For each it reports the billed-input equivalent (input + 1.25 × cache writes + 0.1 ×
//! cache reads, every request counted, summary requests included) under the cache model of
//! [`meter`], the ratio cairn / baseline (goal ≤ 0.8), the cache share (re-sent input tokens
//! served from the cache, over requests whose message list did not shrink; goal ≥ 85%), the
//! peak request against the window, and checks on every request that the newest prompt
//! goes out verbatim and the todo list is still there. Writes
//! `target/pipeline-bench/requests.csv` (one row a request) and
//! `target/pipeline-bench/pipeline.svg` (context and cost per request); a copy of both from
//! the latest run, with the figures above, is checked in under `bench/pipeline/`.
//!
//! `cargo bench -p cairn-context --bench pipeline` (`--profile dev` builds faster)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark reports on stdout and fails loudly"
)]

#[path = "pipeline/meter.rs"]
mod meter;
#[path = "pipeline/plot.rs"]
mod plot;
#[path = "pipeline/script.rs"]
mod script;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use cairn_context::pipeline::accounting::{Calibration, messages_tokens};
use cairn_context::pipeline::{
    Clock, ContextPipeline, PipelineSettings, StandardPipeline, Summarizer, TokenAccounting,
    Trigger, autocompact,
};
use cairn_protocol::{BoxFuture, ContentBlock, Message};

use meter::{FIXED_PREFIX, Meter};
use script::{Event, Script, Writer};

const SESSIONS: &[&str] = &["reads-200k", "reads-60k", "mixed-200k"];

fn main() {
    let out = target_dir().join("pipeline-bench");
    std::fs::create_dir_all(&out).unwrap();
    let out = out.canonicalize().unwrap();
    let sessions = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/sessions");
    let mut csv = String::from(
        "session,policy,request,kind,context_tokens,cache_read,cache_written,billed,steps\n",
    );
    let mut panels = Vec::new();
    println!(
        "context pipeline: billed input equivalent = input + 1.25 x cache writes + 0.1 x cache reads"
    );
    for name in SESSIONS {
        let script = Script::load(&sessions.join(format!("{name}.session")))
            .unwrap_or_else(|err| panic!("{err}"));
        let cairn = run(&script, Policy::Cairn, &out);
        let baseline = run(&script, Policy::Baseline, &out);
        report(&script, &cairn, &baseline);
        for (policy, meter) in [("cairn", &cairn), ("baseline", &baseline)] {
            for (index, billed) in meter.requests.iter().enumerate() {
                csv.push_str(&format!(
                    "{name},{policy},{index},{},{},{},{},{:.0},{}\n",
                    billed.kind,
                    billed.context,
                    billed.read,
                    billed.written,
                    billed.cost(),
                    billed.steps
                ));
            }
        }
        panels.push((script, cairn, baseline));
    }
    std::fs::write(out.join("requests.csv"), csv).unwrap();
    std::fs::write(out.join("pipeline.svg"), plot::svg(&panels)).unwrap();
    println!("  per request: {}", out.join("requests.csv").display());
    println!("  plot:        {}", out.join("pipeline.svg").display());
}

fn report(script: &Script, cairn: &Meter, baseline: &Meter) {
    let ratio = cairn.billed() / baseline.billed();
    println!(
        "{}: window {}K, {} requests",
        script.name,
        script.window / 1_000,
        cairn
            .requests
            .iter()
            .filter(|b| b.kind == "request")
            .count()
    );
    for (policy, meter) in [("cairn", cairn), ("baseline", baseline)] {
        println!(
            "  {policy:<9} billed {:>10.0}   cache share {:>5.1}%   peak {:>6} ({:.1}% of the window)   \
             clears {}  collapses {}  summaries {}",
            meter.billed(),
            meter.cache_share() * 100.0,
            meter.peak(),
            meter.peak() as f64 * 100.0 / script.window as f64,
            meter.count("snip").max(meter.count("microcompact")),
            meter.count("collapse"),
            meter.count("autocompact"),
        );
    }
    let mut times = cairn.pipeline_time.clone();
    times.sort();
    let at = |share: f64| times[((times.len() - 1) as f64 * share) as usize];
    println!(
        "  pipeline  {:?} per request at the median, {:?} at p99, {:?} at most (its own work, \
         this build's profile)",
        at(0.5),
        at(0.99),
        times.last().copied().unwrap_or_default()
    );
    println!(
        "  ratio     {ratio:.2}x the baseline (goal <= 0.80: {})   cache share goal >= 85%: {}   \
         no request over the window: {}",
        if ratio <= 0.8 { "met" } else { "NOT met" },
        if cairn.cache_share() >= 0.85 {
            "met"
        } else {
            "NOT met"
        },
        if cairn.peak() < script.window {
            "held"
        } else {
            "BROKEN"
        },
    );
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Policy {
    Cairn,
    Baseline,
}

/// Runs `script` under `policy`; returns its bill. Panics when a guarantee breaks.
fn run(script: &Script, policy: Policy, out: &Path) -> Meter {
    let project = out.join(format!("project-{}", script.name));
    let _ = std::fs::remove_dir_all(&project);
    std::fs::create_dir_all(&project).unwrap();
    let clock = Arc::new(FakeClock(Mutex::new(Instant::now())));
    let settings = PipelineSettings {
        window_override: Some(script.window),
        ..PipelineSettings::default()
    };
    let pipeline = StandardPipeline::new(out.join("spills"))
        .with_settings(settings)
        .with_clock(clock.clone());
    let limits = settings.limits(Some(script.window));
    let summarizer = FixedSummarizer::default();
    let mut writer = Writer::new(&project);
    let mut meter = Meter::default();
    let mut conversation: Vec<Message> = Vec::new();
    let mut latest_prompt = String::new();
    let mut turn = 0;
    for event in &script.events {
        let seconds = match event {
            Event::Answer { tokens } => {
                conversation.push(writer.answer(turn, *tokens));
                continue;
            }
            Event::Prompt {
                tokens,
                seconds,
                words,
            } => {
                turn += 1;
                let prompt = writer.prompt(turn, *tokens, words);
                latest_prompt = prompt.text();
                conversation.push(prompt);
                *seconds
            }
            Event::Tool {
                kind,
                tokens,
                seconds,
                target,
            } => {
                let (call, mut result) = writer.tool(*kind, *tokens, target);
                conversation.push(call);
                pipeline.admit_tool_results(&mut result.content);
                conversation.push(result);
                *seconds
            }
        };
        clock.advance(Duration::from_secs(seconds));
        let now = clock.now();
        let asked = summarizer.asked();
        let (sent, stable_prefix) = match policy {
            Policy::Cairn => {
                let accounting = TokenAccounting {
                    last_reported: meter
                        .last_reported()
                        .map(|tokens| (tokens, meter.last_sent_messages())),
                    context_window: Some(script.window),
                    max_output_tokens: 32_000,
                    prompt_cache: None,
                };
                let begun = Instant::now();
                let projection = block_on(pipeline.project(
                    &mut conversation,
                    accounting,
                    Trigger::Auto,
                    &summarizer,
                ))
                .unwrap_or_else(|err| panic!("{}: {err}", script.name));
                meter.pipeline_time.push(begun.elapsed());
                if summarizer.asked() > asked {
                    let (input, instructions) = summarizer.last_request();
                    meter.request("summary", &input, None, instructions, now);
                }
                for compaction in &projection.compactions {
                    meter.step(&compaction.step);
                }
                (projection.messages, projection.stable_prefix)
            }
            Policy::Baseline => {
                let estimate = FIXED_PREFIX + messages_tokens(&conversation);
                if estimate >= limits.autocompact_at {
                    let instructions = autocompact::summary_instructions(&Trigger::Auto);
                    let calibration = Calibration::learn(FIXED_PREFIX, 0);
                    let input = autocompact::summary_input(
                        &conversation,
                        &instructions,
                        calibration,
                        limits,
                    );
                    let answer =
                        block_on(summarizer.summarize(input, instructions, &Trigger::Auto))
                            .unwrap();
                    let (input, instructions) = summarizer.last_request();
                    meter.request("summary", &input, None, instructions, now);
                    let summary = autocompact::clean_summary(&answer);
                    conversation =
                        autocompact::rebuild(&conversation, &summary, &Trigger::Auto, limits);
                    meter.step("autocompact");
                }
                (conversation.clone(), None)
            }
        };
        check(
            script,
            &sent,
            &latest_prompt,
            &writer.todos,
            meter.requests.len(),
        );
        meter.request("request", &sent, stable_prefix, 0, now);
    }
    meter
}

/// The guarantees, on every request: the newest prompt verbatim, the todo list present, the
/// request within the window.
fn check(script: &Script, sent: &[Message], prompt: &str, todos: &[String], index: usize) {
    let text: String = sent
        .iter()
        .flat_map(|message| &message.content)
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::ToolUse { input, .. } => input.to_string(),
            ContentBlock::ToolResult { content, .. } => content.text(),
            _ => String::new(),
        })
        .collect();
    let at = format!("{} request {index}", script.name);
    assert!(
        text.contains(prompt),
        "{at}: the newest prompt is not sent verbatim"
    );
    for todo in todos {
        assert!(
            text.contains(todo.as_str()),
            "{at}: the todo `{todo}` is gone"
        );
    }
    let size = FIXED_PREFIX + messages_tokens(sent);
    assert!(size < script.window, "{at}: {size} tokens, over the window");
}

/// Runs a future that never waits on anything outside it (the summarizer answers at once).
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
    }
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join("target")
        })
}

#[derive(Debug)]
struct FakeClock(Mutex<Instant>);

impl FakeClock {
    fn advance(&self, by: Duration) {
        *self.0.lock().unwrap() += by;
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Instant {
        *self.0.lock().unwrap()
    }
}

/// Answers every summary request with the same text, keeping what it was last sent.
#[derive(Default)]
struct FixedSummarizer {
    asked: Mutex<usize>,
    /// The last request's messages and the instructions' tokens.
    last: Mutex<(Vec<Message>, u64)>,
}

impl FixedSummarizer {
    fn asked(&self) -> usize {
        *self.asked.lock().unwrap()
    }

    fn last_request(&self) -> (Vec<Message>, u64) {
        self.last.lock().unwrap().clone()
    }
}

impl Summarizer for FixedSummarizer {
    fn summarize<'a>(
        &'a self,
        conversation: Vec<Message>,
        instructions: String,
        _trigger: &'a Trigger,
    ) -> BoxFuture<'a, Result<String, String>> {
        *self.asked.lock().unwrap() += 1;
        *self.last.lock().unwrap() = (conversation, instructions.len() as u64 / 4);
        let summary = format!(
            "1. Primary Request and Intent: keep the service working.\n{}",
            "The session read, searched and edited the service's modules. ".repeat(60)
        );
        Box::pin(std::future::ready(Ok(summary)))
    }
}
