//! Memory recall with 500 memory files: what `Recall::start` adds before the main request
//! goes out (the engine calls it as the user submits, then sends the main request; goal
//! < 5 ms), how long the recall request itself takes to be ready (it runs beside the main
//! request), and how large it is.
//!
//! `cargo bench -p cairn-context --bench recall`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark reports on stdout and fails loudly"
)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use cairn_context::memory::{MemoryRecall, Recall, scan_heads};
use cairn_llm::{AnthropicClient, AnthropicConfig, Credential, RetryPolicy, SideModel};
use cairn_test_support::{Reply, ScriptedServer};

const FILES: usize = 500;
const STARTS: usize = 10_000;
const RUNS: usize = 20;
const MESSAGE: &str = "The staging deploy fails at the migration step again; what did we \
                       decide about running migrations before the canary?";

fn main() {
    let dir = tempfile::tempdir().unwrap();
    write_memories(dir.path());
    let server = ScriptedServer::start();
    server.set_default_reply(Reply::text(r#"{"selected_memories": ["project_0042.md"]}"#));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let side = SideModel::new(Arc::new(client(&server)), "haiku");

    // 1. What the engine waits for: `start` returning its future.
    let recall = MemoryRecall::new(dir.path(), side.clone());
    let mut starts = Vec::with_capacity(STARTS);
    for _ in 0..STARTS {
        let began = Instant::now();
        let future = recall.start(MESSAGE.to_owned());
        starts.push(began.elapsed());
        drop(future);
    }

    // 2. The directory scan alone, and the recall request: ready, then answered.
    let mut scans = Vec::new();
    for _ in 0..RUNS {
        let began = Instant::now();
        let scan = scan_heads(dir.path());
        scans.push(began.elapsed());
        assert_eq!(scan.heads.len(), FILES);
    }
    let mut ready = Vec::new();
    let mut answered = Vec::new();
    for run in 0..RUNS + 1 {
        // A new recall each run, so that no file counts as injected already.
        let recall = MemoryRecall::new(dir.path(), side.clone());
        let began = Instant::now();
        let outcome = runtime.block_on(recall.start(MESSAGE.to_owned()));
        let done = began.elapsed();
        assert_eq!(outcome.reminders.len(), 1, "{outcome:?}");
        let request = server.wait_for_requests(run + 1, Duration::from_secs(30));
        // The first run warms the page cache and the connection pool and is not counted.
        if run > 0 {
            ready.push(request[run].received_at.duration_since(began));
            answered.push(done);
        }
    }
    let request = &server.requests()[0];
    let body = serde_json::to_vec(&request.body).unwrap();
    let text = request.body["messages"][0]["content"].to_string();
    let offered = text.matches("<memory_file name=").count();

    println!("memory recall with {FILES} memory files:");
    println!(
        "  Recall::start (added before the main request): median {:.2} µs, max {:.1} µs \
         ({STARTS} calls)",
        micros(median(&mut starts)),
        micros(*starts.iter().max().unwrap()),
    );
    println!(
        "  directory scan (heads of {FILES} files, inside the future): median {:.2} ms",
        millis(median(&mut scans))
    );
    println!(
        "  recall request on the wire after start: median {:.2} ms (min {:.2}, max {:.2}; \
         {RUNS} runs); answered (scripted server) after {:.2} ms",
        millis(median(&mut ready)),
        millis(*ready.iter().min().unwrap()),
        millis(*ready.iter().max().unwrap()),
        millis(median(&mut answered)),
    );
    println!(
        "  recall request: {:.1} KB body, ~{} tokens, heads of {offered} files offered \
         (the newest, within the {} file / {} KB caps)",
        body.len() as f64 / 1024.0,
        body.len() / 4,
        cairn_context::memory::MAX_CANDIDATES,
        cairn_context::memory::MAX_HEADS_BYTES / 1024,
    );
}

fn client(server: &ScriptedServer) -> AnthropicClient {
    let mut config = AnthropicConfig::new(Credential::ApiKey("bench-key".to_owned()));
    config.base_url = server.url();
    config.retry = RetryPolicy::never();
    AnthropicClient::new(config).unwrap()
}

/// Memories of realistic sizes: a description line and a body of 3 to 40 lines of prose,
/// modified over the last 500 days.
fn write_memories(dir: &Path) {
    let kinds = ["user", "feedback", "project", "reference"];
    for n in 0..FILES {
        let kind = kinds[n % kinds.len()];
        let mut text = format!(
            "---\nname: {kind} note {n}\ndescription: what the team settled about topic {n} \
             and why it matters for the work\ntype: {kind}\n---\n"
        );
        for line in 0..3 + (n * 7) % 38 {
            text.push_str(&format!(
                "Line {line} of memory {n}: a sentence of ordinary length about the decision.\n"
            ));
        }
        let path = dir.join(format!("{kind}_{n:04}.md"));
        std::fs::write(&path, text).unwrap();
        let age = Duration::from_secs(86_400 * n as u64);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(SystemTime::now() - age)
            .unwrap();
    }
    std::fs::write(dir.join("MEMORY.md"), "- [index](user_0000.md)\n").unwrap();
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn micros(time: Duration) -> f64 {
    time.as_secs_f64() * 1e6
}

fn millis(time: Duration) -> f64 {
    time.as_secs_f64() * 1e3
}
