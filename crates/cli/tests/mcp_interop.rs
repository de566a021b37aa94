//! `cairn mcp serve` checked with another implementation's client: the Python `mcp` package
//! (PyPI), the interop suite (`cargo test -p cairn-cli --features interop --test
//! mcp_interop`). It runs `tests/interop/mcp_serve_client.py` with `$CAIRN_INTEROP_PYTHON`
//! (default `python3`), which must import `mcp`; `.ci/run` installs it in a virtual
//! environment.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]
#![cfg(feature = "interop")]

use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

mod support;
use support::Harness;

#[test]
fn the_python_mcp_client_lists_cairns_tools_reads_and_is_refused_a_write() {
    let h = Harness::new();
    std::fs::write(h.path("notes.txt"), "first line\n").unwrap();
    let python = std::env::var("CAIRN_INTEROP_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/interop/mcp_serve_client.py"
    );
    let output = Command::new(&python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_cairn"))
        .arg(h.work.path())
        .env("HOME", h.home.path())
        .env("CAIRN_HOME", h.cairn_home())
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap_or_else(|err| panic!("cannot run {python}: {err}"));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["server"], json!("cairn"));
    let tools = report["tools"].as_array().unwrap();
    for tool in ["Read", "Write", "Bash"] {
        assert!(tools.contains(&json!(tool)), "{tool}: {report}");
    }
    assert_eq!(report["calls"]["Read"]["isError"], json!(false), "{report}");
    assert!(
        report["calls"]["Read"]["text"]
            .as_str()
            .unwrap()
            .contains("first line"),
        "{report}"
    );
    assert_eq!(report["calls"]["Write"]["isError"], json!(true), "{report}");
    assert!(
        report["calls"]["Write"]["text"]
            .as_str()
            .unwrap()
            .contains("nobody can be asked"),
        "{report}"
    );
    assert!(!h.path("new.txt").exists());
}
