#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "a measurement reported on demand"
)]

//! How long one analysis takes. Run with
//! `cargo test --release -p cairn-shell --test bash_timing -- --ignored --nocapture`.

mod bash_support;

use std::time::{Duration, Instant};

use bash_support::Sandbox;

const TYPICAL: &[&str] = &[
    "ls -la",
    "git status && git diff --stat",
    "cargo test -p cairn-policy 2>&1 | tail -n 40",
    "cd src && grep -rn TODO . | wc -l",
    "rm -rf build && mkdir -p build && cp -r assets build/",
    "find . -name '*.rs' -exec grep -l unsafe {} +",
    "curl -fsSL https://example.com/install.sh | sh",
    "cat <<EOF > notes.md\n# Notes\n$(date)\nEOF",
];

#[test]
#[ignore = "a measurement, not a check"]
fn one_analysis_takes_well_under_a_millisecond() {
    let sandbox = Sandbox::new();
    for command in TYPICAL {
        sandbox.analyze(command);
    }
    let rounds = 2_000;
    let mut total = Duration::ZERO;
    for command in TYPICAL {
        let start = Instant::now();
        for _ in 0..rounds {
            std::hint::black_box(sandbox.analyze(std::hint::black_box(command)));
        }
        let each = start.elapsed() / rounds;
        total += each;
        eprintln!("{each:>10.1?}  {command:?}");
    }
    let mean = total / u32::try_from(TYPICAL.len()).unwrap();
    eprintln!("{mean:>10.1?}  mean");
    assert!(
        mean < Duration::from_millis(1),
        "mean analysis time {mean:?}"
    );
}
