//! `Grep`, through the tool's whole run path, against the `rg` binary on the same query over
//! the same generated tree of 50 000 files, in `files_with_matches` and `content` modes.
//!
//! ```text
//! cargo bench -p cairn-tools --bench grep_vs_rg
//! ```
//!
//! The tree (deterministic content, four directory levels, sizes from 200 bytes to 48 KiB, a
//! match in about one file in 150) is generated once in a temp directory, outside the timings,
//! and read once by each side before anything is timed, so both search a warm page cache.
//! Criterion times each side; a paired run at the end (the two sides alternating, median of
//! 21) prints both times and the ratio. `rg` runs with its defaults (parallel, unsorted) plus
//! the flags that make its output what Grep's is: `-l` or `-n --max-columns 500
//! --max-columns-preview`. Its time includes starting the process, as a subprocess
//! call of rg from cairn would.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cairn_tools::{GrepTool, Tool, ToolContext};
use criterion::Criterion;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const FILES: usize = 50_000;
const PATTERN: &str = r"needle_[a-z]+_\d+";

/// A small deterministic generator (xorshift64*), so every run searches the same tree.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "let", "fn", "self", "match", "value", "return", "struct", "impl", "config", "error", "result",
    "string", "vector", "index", "buffer", "request", "response", "handler", "state", "token",
    "parse", "write", "read", "async", "await", "clone", "into", "from", "option",
];

/// Writes the tree under `root`: 10 × 10 × 10 directories of 50 files each.
fn generate_tree(root: &Path) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut written = 0;
    for a in 0..10 {
        for b in 0..10 {
            for c in 0..10 {
                let dir = root.join(format!("mod_{a}/part_{b}/unit_{c}"));
                std::fs::create_dir_all(&dir).unwrap();
                for f in 0..FILES / 1000 {
                    let size = match rng.below(100) {
                        0..=69 => 200 + rng.below(1800),
                        70..=97 => 2_000 + rng.below(6_000),
                        _ => 16_000 + rng.below(32_000),
                    } as usize;
                    let matching = rng.below(150) == 0;
                    std::fs::write(
                        dir.join(format!("file_{f}.rs")),
                        contents(&mut rng, size, matching),
                    )
                    .unwrap();
                    written += 1;
                }
            }
        }
    }
    assert_eq!(written, FILES);
}

fn contents(rng: &mut Rng, size: usize, matching: bool) -> Vec<u8> {
    let mut text = String::with_capacity(size + 100);
    let mut line = 0;
    while text.len() < size {
        let indent = rng.below(4) as usize * 4;
        text.extend(std::iter::repeat_n(' ', indent));
        for _ in 0..4 + rng.below(10) {
            text.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
            text.push(' ');
        }
        if matching && line % 37 == 5 {
            text.push_str(&format!(
                "needle_{}_{}",
                WORDS[line % WORDS.len()],
                rng.below(1000)
            ));
        }
        text.push('\n');
        line += 1;
    }
    text.into_bytes()
}

/// One Grep call the way the engine makes it, on a current-thread runtime.
fn cairn(runtime: &tokio::runtime::Runtime, root: &Path, mode: &str) -> String {
    let input = serde_json::from_value(json!({"pattern": PATTERN, "output_mode": mode})).unwrap();
    let ctx = ToolContext::new(root.to_path_buf());
    let output = runtime.block_on(GrepTool.run(input, &ctx, &CancellationToken::new()));
    assert!(!output.is_error, "{output:?}");
    output.content.text().to_string()
}

fn rg(root: &Path, mode: &str) -> String {
    let flags: &[&str] = match mode {
        "files_with_matches" => &["-l"],
        _ => &["-n", "--max-columns", "500", "--max-columns-preview"],
    };
    let output = Command::new("rg")
        .arg("--no-config")
        .args(flags)
        .arg(PATTERN)
        .arg(root)
        .output()
        .expect("this benchmark compares with ripgrep: install it (apt-get install ripgrep)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root: PathBuf = dir.path().to_path_buf();
    let started = Instant::now();
    generate_tree(&root);
    println!(
        "generated {FILES} files under {} in {:.1?}",
        root.display(),
        started.elapsed()
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();

    // The same answers, and a warm page cache for both.
    for mode in ["files_with_matches", "content"] {
        let ours = cairn(&runtime, &root, mode);
        let theirs = rg(&root, mode);
        assert_eq!(
            sorted_lines(&ours),
            sorted_lines(&theirs),
            "{mode}: Grep and rg disagree"
        );
        println!("{mode}: {} lines of output", theirs.lines().count());
    }

    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8))
        .configure_from_args();
    {
        let mut group = criterion.benchmark_group("grep_50k_files");
        for mode in ["files_with_matches", "content"] {
            group.bench_function(format!("cairn/{mode}"), |b| {
                b.iter(|| cairn(&runtime, &root, mode))
            });
            group.bench_function(format!("rg/{mode}"), |b| b.iter(|| rg(&root, mode)));
        }
        group.finish();
    }
    criterion.final_summary();

    println!("\npaired run, median of 21, sides alternating:");
    println!("{:<20} {:>10} {:>10} {:>7}", "mode", "cairn", "rg", "ratio");
    for mode in ["files_with_matches", "content"] {
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..21 {
            let start = Instant::now();
            cairn(&runtime, &root, mode);
            ours.push(start.elapsed());
            let start = Instant::now();
            rg(&root, mode);
            theirs.push(start.elapsed());
        }
        let (ours, theirs) = (median(ours), median(theirs));
        println!(
            "{mode:<20} {:>8.1}ms {:>8.1}ms {:>7.2}",
            ours.as_secs_f64() * 1e3,
            theirs.as_secs_f64() * 1e3,
            ours.as_secs_f64() / theirs.as_secs_f64()
        );
    }
}
