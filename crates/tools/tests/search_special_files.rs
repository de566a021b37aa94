//! Grep never waits on a FIFO: named directly or met in a walk, it is skipped as a file that
//! cannot be read, and the call returns at once with what the regular files hold.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod search_support;

use std::process::Command;
use std::time::Duration;

use pretty_assertions::assert_eq;
use search_support::{Tree, call};
use serde_json::json;

/// Far longer than a search of two small files takes; a Grep waiting on a FIFO never ends.
const WAIT: Duration = Duration::from_secs(20);

fn tree_with_a_fifo() -> Tree {
    let mut tree = Tree::new();
    tree.write("notes.txt", "needle here\n");
    let status = Command::new("mkfifo")
        .arg(tree.path("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    tree
}

/// Runs Grep on a thread of its own, so that a call stuck in `open(2)` fails the test after
/// [`WAIT`] instead of holding the test's runtime for ever.
fn grep_within_wait(root: &std::path::Path, input: serde_json::Value) -> String {
    let (sender, receiver) = std::sync::mpsc::channel();
    let root = root.to_path_buf();
    let shown = input.to_string();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let output = runtime.block_on(call(&root, "Grep", input));
        let _ = sender.send(output.content.text().to_string());
    });
    receiver
        .recv_timeout(WAIT)
        .unwrap_or_else(|_| panic!("Grep {shown} waited on the FIFO"))
}

#[test]
fn a_fifo_named_or_walked_is_skipped_without_waiting() {
    let tree = tree_with_a_fifo();
    let cases = [
        (
            json!({"pattern": "needle", "path": "pipe", "output_mode": "content"}),
            false,
        ),
        (json!({"pattern": "needle", "output_mode": "content"}), true),
        (json!({"pattern": "needle", "output_mode": "count"}), true),
        (json!({"pattern": "needle"}), true),
    ];
    for (input, finds_the_file) in cases {
        let text = grep_within_wait(tree.root(), input.clone());
        assert_eq!(
            (text.contains("notes.txt") || text.contains("needle here")),
            finds_the_file,
            "{input}: {text}"
        );
        assert!(!text.contains("pipe"), "{input}: {text}");
    }
}
