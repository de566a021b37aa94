//! The context pipeline over a long session: a synthetic 1,000-turn session (reads, edits,
//! searches, prose) at the real 200K window, through `StandardPipeline` with a summarizer that
//! answers at once with a fixed text, and a clock the session moves (seconds between requests,
//! now and then a pause of several minutes, after which the API's cache has gone cold).
//!
//! Reports:
//! - the compactions of each step (a collapse rewrites the cached prompt from its first
//!   message, and is counted as such), and the peak request size against the window;
//! - the share of re-sent tokens served from the cache between compactions. The API's prefix
//!   cache is modelled as a request's longest common prefix (message by message, after the
//!   system prompt and tools) with the previous request, when that was less than five
//!   minutes ago; everything after it is written to the cache (the rolling breakpoint sits on
//!   the last message);
//! - the billed-input equivalent (input + 1.25 × cache writes + 0.1 × cache reads) per turn,
//!   summary requests included;
//! - the wall time per turn of the pipeline's own work (projecting, spilling).
//!
//! Writes `target/pipeline-bench/context.svg`: context tokens per request, compactions marked.
//!
//! `cargo bench -p cairn-context --bench pipeline`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark reports on stdout and fails loudly"
)]

use std::fmt::Write as _;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use cairn_context::pipeline::accounting::message_tokens;
use cairn_context::pipeline::{
    CACHE_TTL, Clock, ContextPipeline, PipelineSettings, StandardPipeline, Summarizer,
    TokenAccounting, Trigger,
};
use cairn_protocol::{BoxFuture, ContentBlock, Message, Role};
use serde_json::json;

const TURNS: usize = 1_000;
const WINDOW: u64 = 200_000;
/// The system prompt and the tool definitions every request carries, in tokens.
const FIXED_PREFIX: u64 = 14_000;
/// Files in the synthetic project.
const FILES: usize = 80;

fn main() {
    let out = target_dir().join("pipeline-bench");
    let project = out.join("project");
    let _ = std::fs::remove_dir_all(&project);
    std::fs::create_dir_all(&project).unwrap();
    let out = out.canonicalize().unwrap();
    let project = project.canonicalize().unwrap();
    let mut session = Session::new(&project);
    let clock = Arc::new(FakeClock(Mutex::new(Instant::now())));
    let pipeline = StandardPipeline::new(out.join("spills"))
        .with_settings(PipelineSettings::default())
        .with_clock(clock.clone());
    let summarizer = FixedSummarizer::default();
    let mut meter = Meter::default();
    let mut conversation: Vec<Message> = Vec::new();

    for turn in 0..TURNS {
        let mut pipeline_time = Duration::ZERO;
        // The user thinks, reads, sometimes leaves for a while.
        clock.advance(session.pause_before_turn());
        conversation.push(Message::user_text(session.prompt(turn)));
        let mut rounds = session.rounds();
        loop {
            let accounting = TokenAccounting {
                last_reported: meter.last_reported,
                context_window: Some(WINDOW),
                max_output_tokens: 32_000,
                prompt_cache: None,
            };
            let asked_before = summarizer.asked();
            let begun = Instant::now();
            let projection = block_on(pipeline.project(
                &mut conversation,
                accounting,
                Trigger::Auto,
                &summarizer,
            ))
            .unwrap_or_else(|err| panic!("turn {turn}: {err}"));
            pipeline_time += begun.elapsed();
            for compaction in &projection.compactions {
                meter.compaction(&compaction.step, compaction.summary.is_some(), clock.now());
            }
            if summarizer.asked() > asked_before {
                let (messages, instructions) = summarizer.last_request();
                meter.summary_request(&messages, instructions, clock.now());
            }
            meter.request(&projection.messages, clock.now());
            if rounds == 0 {
                conversation.push(assistant_text(session.prose(400, 2_400)));
                break;
            }
            rounds -= 1;
            let (call, mut results) = session.tool_round(turn, rounds);
            conversation.push(call);
            let begun = Instant::now();
            pipeline.admit_tool_results(&mut results);
            pipeline_time += begun.elapsed();
            conversation.push(Message {
                role: Role::User,
                content: results,
            });
            clock.advance(session.pause_between_requests());
        }
        meter.turn_time.push(pipeline_time);
    }

    let svg = meter.plot();
    std::fs::write(out.join("context.svg"), svg).unwrap();
    meter.report(&out.join("context.svg"));
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

fn assistant_text(text: String) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![ContentBlock::text(text)],
    }
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

/// A deterministic source of the session's shape (xorshift).
struct Session {
    state: u64,
    project: PathBuf,
    files: Vec<PathBuf>,
    next_id: usize,
}

impl Session {
    fn new(project: &Path) -> Self {
        let mut session = Session {
            state: 0x9E37_79B9_7F4A_7C15,
            project: project.to_path_buf(),
            files: Vec::new(),
            next_id: 0,
        };
        for index in 0..FILES {
            let path = project.join(format!("src/module_{index:02}.rs"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let lines = session.between(40, 900);
            let mut text = String::new();
            for line in 0..lines {
                let _ = writeln!(
                    text,
                    "    let value_{line} = compute_{index}_{line}(input, {line}); // step {line}"
                );
            }
            std::fs::write(&path, text).unwrap();
            session.files.push(path);
        }
        session
    }

    fn next(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    fn between(&mut self, low: usize, high: usize) -> usize {
        low + (self.next() % (high - low) as u64) as usize
    }

    fn prose(&mut self, low: usize, high: usize) -> String {
        let words = [
            "the", "module", "returns", "an", "error", "when", "input", "is", "empty", "so", "we",
            "handle", "it", "before", "parsing", "and", "test", "again",
        ];
        let length = self.between(low, high);
        let mut text = String::new();
        while text.len() < length {
            let word = words[self.next() as usize % words.len()];
            text.push_str(word);
            text.push(' ');
        }
        text
    }

    fn prompt(&mut self, turn: usize) -> String {
        format!("Turn {turn}: {}", self.prose(60, 500))
    }

    /// Tool rounds in this turn: most turns a few, some none.
    fn rounds(&mut self) -> usize {
        [0, 1, 2, 2, 3, 3, 4, 5][self.next() as usize % 8]
    }

    /// Seconds between the requests of one turn (the model and the tools working).
    fn pause_between_requests(&mut self) -> Duration {
        Duration::from_secs(self.between(3, 40) as u64)
    }

    /// Before the user's next message: usually under a few minutes, one time in 30 long
    /// enough for the cache to go cold.
    fn pause_before_turn(&mut self) -> Duration {
        if self.next().is_multiple_of(30) {
            CACHE_TTL + Duration::from_secs(self.between(60, 3_600) as u64)
        } else {
            Duration::from_secs(self.between(10, 240) as u64)
        }
    }

    fn file(&mut self) -> PathBuf {
        // Recent work clusters on a few files.
        let hot = !self.next().is_multiple_of(3);
        let index = if hot {
            self.between(0, 12)
        } else {
            self.between(0, FILES)
        };
        self.files[index].clone()
    }

    /// The model's call and the results it gets back.
    fn tool_round(&mut self, turn: usize, round: usize) -> (Message, Vec<ContentBlock>) {
        self.next_id += 1;
        let id = format!("toolu_{turn}_{round}_{}", self.next_id);
        let kind = self.next() % 10;
        let (name, input, output) = match kind {
            0..=3 => {
                let path = self.file();
                let text = std::fs::read_to_string(&path).unwrap();
                let numbered: String = text
                    .lines()
                    .enumerate()
                    .map(|(line, text)| format!("{:>6}\t{text}\n", line + 1))
                    .collect();
                (
                    "Read",
                    json!({"file_path": path.display().to_string()}),
                    numbered,
                )
            }
            4..=5 => {
                let path = self.file();
                let mut text = std::fs::read_to_string(&path).unwrap();
                let _ = writeln!(text, "    // edited in turn {turn}");
                std::fs::write(&path, &text).unwrap();
                (
                    "Edit",
                    json!({
                        "file_path": path.display().to_string(),
                        "old_string": self.prose(40, 200),
                        "new_string": self.prose(40, 260),
                    }),
                    format!(
                        "The file {} has been updated. Here's the result of running `cat -n` on a \
                         snippet of the edited file:\n{}",
                        path.display(),
                        self.prose(300, 1_200)
                    ),
                )
            }
            6..=7 => {
                let hits = self.between(3, 120);
                let output: String = (0..hits)
                    .map(|hit| {
                        format!(
                            "src/module_{:02}.rs:{hit}: let value = compute(input);\n",
                            hit % FILES
                        )
                    })
                    .collect();
                (
                    "Grep",
                    json!({"pattern": format!("compute_{}", self.between(0, 99)), "path": self.project.display().to_string()}),
                    output,
                )
            }
            8 => {
                let lines = self.between(5, 400);
                let output: String = (0..lines)
                    .map(|line| format!("test module::case_{line} ... ok\n"))
                    .collect();
                ("Bash", json!({"command": "cargo test"}), output)
            }
            _ => (
                "TodoWrite",
                json!({"todos": [
                    {"content": format!("Finish turn {turn}'s change"), "status": "in_progress", "activeForm": "Working"},
                    {"content": "Run the whole test suite", "status": "pending", "activeForm": "Testing"}
                ]}),
                "Todos have been modified successfully.".to_string(),
            ),
        };
        let call = Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::text(self.prose(0, 200)),
                ContentBlock::ToolUse {
                    id: id.clone(),
                    name: name.into(),
                    input,
                },
            ],
        };
        (call, vec![ContentBlock::tool_result(id, output, false)])
    }
}

/// What the session's requests cost, under the cache model.
#[derive(Default)]
struct Meter {
    /// The previous request's messages and when it was sent.
    previous: Option<(Vec<Message>, Instant)>,
    last_reported: Option<(u64, usize)>,
    /// Context tokens of each request.
    sizes: Vec<u64>,
    /// Request indices where a step acted, by kind.
    marks: Vec<(usize, &'static str)>,
    steps: std::collections::BTreeMap<String, usize>,
    /// After an autocompact the next request starts a new cache: not counted as re-sent.
    fresh: bool,
    resent: u64,
    cached: u64,
    cold_requests: usize,
    cold_resent: u64,
    writes: u64,
    reads: u64,
    turn_time: Vec<Duration>,
    /// Snips and microcompacts made while the cache was warm (each costs a cache write).
    light_steps_warm: usize,
    /// Collapses made while the cache was warm (each rewrites the cached prompt).
    collapses_warm: usize,
    summary_requests: usize,
}

impl Meter {
    fn compaction(&mut self, step: &str, rewrote: bool, now: Instant) {
        *self.steps.entry(step.to_string()).or_default() += 1;
        let kind = match (rewrote, step) {
            (true, _) => "autocompact",
            (false, "collapse") => "collapse",
            (false, _) => "light",
        };
        self.marks.push((self.sizes.len(), kind));
        let warm = self.warm_prefix(&[], now).is_some();
        match kind {
            "autocompact" => self.fresh = true,
            "collapse" if warm => self.collapses_warm += 1,
            "light" if warm => self.light_steps_warm += 1,
            _ => {}
        }
    }

    /// The tokens `messages` share from the start with the previous request, the fixed
    /// prefix included, if that request is still in the cache.
    fn warm_prefix(&self, messages: &[Message], now: Instant) -> Option<u64> {
        let (previous, at) = self.previous.as_ref()?;
        if now.saturating_duration_since(*at) > CACHE_TTL {
            return None;
        }
        let common: u64 = previous
            .iter()
            .zip(messages)
            .take_while(|(a, b)| a == b)
            .map(|(message, _)| message_tokens(message))
            .sum();
        Some(FIXED_PREFIX + common)
    }

    /// The summary request: the conversation it sends then the instructions; its cached part
    /// is what it shares with the request before it.
    fn summary_request(&mut self, messages: &[Message], instructions: u64, now: Instant) {
        let total = FIXED_PREFIX + messages.iter().map(message_tokens).sum::<u64>() + instructions;
        let cached = self.warm_prefix(messages, now).unwrap_or(0);
        self.summary_requests += 1;
        self.reads += cached;
        self.writes += total - cached;
    }

    fn request(&mut self, messages: &[Message], now: Instant) {
        let sizes: Vec<u64> = messages.iter().map(message_tokens).collect();
        let total = FIXED_PREFIX + sizes.iter().sum::<u64>();
        let (cached, resent, warm) = match &self.previous {
            None => (0, 0, false),
            Some((previous, at)) => {
                let warm = now.saturating_duration_since(*at) <= CACHE_TTL;
                let common = previous
                    .iter()
                    .zip(messages)
                    .take_while(|(a, b)| a == b)
                    .count();
                let prefix = FIXED_PREFIX + sizes[..common].iter().sum::<u64>();
                let previous_total =
                    FIXED_PREFIX + previous.iter().map(message_tokens).sum::<u64>();
                let cached = if warm { prefix } else { 0 };
                (cached, previous_total, warm)
            }
        };
        if !self.fresh && resent > 0 {
            if warm {
                self.resent += resent;
                self.cached += cached;
            } else {
                self.cold_requests += 1;
                self.cold_resent += resent;
            }
        }
        self.fresh = false;
        self.reads += cached;
        self.writes += total - cached;
        self.sizes.push(total);
        // The API reports what the request held; the pipeline corrects its estimate by it.
        self.last_reported = Some((total, messages.len()));
        self.previous = Some((messages.to_vec(), now));
    }

    fn report(&self, plot: &Path) {
        let requests = self.sizes.len();
        let peak = self.sizes.iter().copied().max().unwrap_or(0);
        // Input billed in full is nil in this model: the rolling breakpoint on the last message
        // makes everything after the cached prefix a cache write.
        let billed = 1.25 * self.writes as f64 + 0.1 * self.reads as f64;
        let uncached = self.reads + self.writes;
        let mut times: Vec<Duration> = self.turn_time.clone();
        times.sort();
        let mean = times.iter().sum::<Duration>() / times.len() as u32;
        let percentile = |p: f64| times[((times.len() - 1) as f64 * p) as usize];
        println!("context pipeline: {TURNS} turns, {requests} requests, window {WINDOW} tokens");
        for (step, count) in &self.steps {
            println!("  {step:<13}   {count} times");
        }
        println!(
            "  of which       {} snip/microcompact steps with a warm cache (the rest waited for a \
             cold one); {} collapses with a warm cache; {} summary requests",
            self.light_steps_warm, self.collapses_warm, self.summary_requests
        );
        println!(
            "  peak request    {peak} tokens ({:.1}% of the window)",
            peak as f64 * 100.0 / WINDOW as f64
        );
        println!(
            "  cache share     {:.1}% of re-sent tokens served from the cache between compactions \
             (warm requests; {} requests after a pause of over 5 minutes re-sent {} tokens cold)",
            self.cached as f64 * 100.0 / self.resent.max(1) as f64,
            self.cold_requests,
            self.cold_resent
        );
        println!(
            "  cache share     {:.1}% counting the cold requests as misses",
            self.cached as f64 * 100.0 / (self.resent + self.cold_resent).max(1) as f64
        );
        println!(
            "  billed input    {:.0} token-equivalents per turn (input + 1.25 x writes + 0.1 x reads); \
             {:.0} without caching",
            billed / TURNS as f64,
            uncached as f64 / TURNS as f64
        );
        println!(
            "  pipeline time   {:?} per turn on average, p50 {:?}, p99 {:?}, max {:?}",
            mean,
            percentile(0.5),
            percentile(0.99),
            times.last().copied().unwrap_or_default()
        );
        println!("  plot            {}", plot.display());
    }

    /// Context tokens per request as an SVG line, the window and thresholds as lines,
    /// autocompactions as red bars, collapses as purple half-bars and lighter steps as orange
    /// ticks.
    fn plot(&self) -> String {
        let (width, height, margin) = (1200.0_f64, 420.0_f64, 60.0_f64);
        let n = self.sizes.len().max(2) as f64;
        let x = |index: usize| margin + index as f64 / (n - 1.0) * (width - 2.0 * margin);
        let y =
            |tokens: u64| height - margin - tokens as f64 / WINDOW as f64 * (height - 2.0 * margin);
        let mut svg = String::new();
        let _ = writeln!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
        let _ = writeln!(
            svg,
            r#"<text x="{margin}" y="24" font-size="15">Context tokens per request over a {TURNS}-turn session ({} requests)</text>"#,
            self.sizes.len()
        );
        for (tokens, label, colour, left) in [
            (WINDOW, "window 200K", "#444", 220.0),
            (197_000, "blocked 197K", "#b00", 110.0),
            (167_000, "autocompact 167K", "#d80", 110.0),
            (150_300, "collapse 150K", "#6a1b9a", 110.0),
        ] {
            let _ = writeln!(
                svg,
                r#"<line x1="{margin}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="{colour}" stroke-dasharray="4 3"/><text x="{}" y="{:.1}" fill="{colour}">{label}</text>"#,
                width - margin,
                width - margin - left,
                y(tokens) - 4.0,
                y = y(tokens)
            );
        }
        for tokens in (0..=WINDOW).step_by(50_000) {
            let _ = writeln!(
                svg,
                r#"<text x="{}" y="{:.1}" text-anchor="end">{}K</text>"#,
                margin - 6.0,
                y(tokens) + 4.0,
                tokens / 1_000
            );
        }
        for &(index, kind) in &self.marks {
            let (colour, top) = match kind {
                "autocompact" => ("#c00", y(WINDOW)),
                "collapse" => ("#6a1b9a", y(WINDOW) + (height - 2.0 * margin) * 0.5),
                _ => ("#f90", y(WINDOW) + (height - 2.0 * margin) * 0.9),
            };
            let _ = writeln!(
                svg,
                r#"<line x1="{x:.1}" x2="{x:.1}" y1="{top:.1}" y2="{:.1}" stroke="{colour}" stroke-width="1"/>"#,
                height - margin,
                x = x(index)
            );
        }
        let points: String = self
            .sizes
            .iter()
            .enumerate()
            .map(|(index, &tokens)| format!("{:.1},{:.1} ", x(index), y(tokens)))
            .collect();
        let _ = writeln!(
            svg,
            r##"<polyline points="{points}" fill="none" stroke="#1565c0" stroke-width="1"/>"##
        );
        let _ = writeln!(
            svg,
            r#"<text x="{margin}" y="{}">requests →   red: autocompact   purple: collapse   orange: snip / microcompact</text>"#,
            height - 20.0
        );
        let _ = writeln!(svg, "</svg>");
        svg
    }
}
