//! The embedding example runs: a program's own tool and broker, in a session against the
//! scripted server, through the public API alone.

#![allow(clippy::unwrap_used, reason = "a test should fail loudly")]

#[path = "../examples/embedded_session.rs"]
mod embedded_session;

use pretty_assertions::assert_eq;

#[tokio::test]
async fn the_embedding_example_runs_its_own_tool_after_asking_its_own_broker() {
    let workspace = tempfile::tempdir().unwrap();
    let outcome = embedded_session::run(workspace.path()).await.unwrap();
    assert_eq!(outcome.asked, vec!["Remember".to_string()]);
    assert_eq!(outcome.notes, vec!["the build uses make".to_string()]);
    assert_eq!(outcome.answer, "I noted that the build uses make.");
    assert_eq!(outcome.requests, 2);
}
