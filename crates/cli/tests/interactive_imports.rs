//! The external-imports question end to end: the real binary in a pseudo-terminal asks before
//! the first prompt whether the project's `CLAUDE.md` may import a file from outside it; Yes
//! puts the file into the request and is remembered, No leaves it out and asks again the next
//! time. Each step waits on what the terminal shows, never on sleeps.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::{Path, PathBuf};

use cairn_test_support::Reply;

mod support;
use support::terminal::Terminal;
use support::{Harness, WAIT};

const SECRET: &str = "team-style: tabs, width 8, secret-3c91";

/// `~/shared/style.md` outside the project, imported by the project's CLAUDE.md; its real path.
fn lay_out(h: &Harness) -> PathBuf {
    let style = h.home.path().join("shared/style.md");
    std::fs::create_dir_all(style.parent().unwrap()).unwrap();
    std::fs::write(&style, SECRET).unwrap();
    std::fs::write(h.path("CLAUDE.md"), "Style: @~/shared/style.md\n").unwrap();
    style.canonicalize().unwrap()
}

/// Sends a prompt and returns whether the request it made held the imported file.
fn request_holds_the_import(h: &Harness, term: &Terminal, prompt: &str, n: usize) -> bool {
    h.server.push(Reply::text(format!("answer {n}")));
    term.send_line(prompt);
    term.wait_for(&format!("answer {n}"));
    let requests = h.server.wait_for_requests(n, WAIT);
    requests[n - 1].body.to_string().contains(SECRET)
}

fn approvals(h: &Harness) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(h.cairn_home().join("approvals.json")).ok()?;
    Some(serde_json::from_str(&text).unwrap())
}

fn project_key(h: &Harness) -> String {
    Path::new(h.work.path())
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

#[test]
fn yes_includes_the_import_and_is_remembered_for_the_project() {
    let h = Harness::new();
    let style = lay_out(&h);
    let term = Terminal::launch(&h).spawn();
    let screen = term.wait_for("Include them?");
    assert!(
        screen.contains(&style.display().to_string()) && screen.contains("imported by"),
        "{screen}"
    );
    term.press("1");
    // The app draws where the question was, which leaves nothing of it behind.
    let screen = term.wait_for("> ");
    assert!(!screen.contains("Include them?"), "{screen}");
    assert!(request_holds_the_import(&h, &term, "hello", 1));
    assert_eq!(
        approvals(&h).unwrap()["projects"][project_key(&h).as_str()]["approvedExternalImports"],
        serde_json::json!([style.display().to_string()])
    );
    term.press("C-d");
    term.wait_for_exit();

    // The next start asks nothing and includes it.
    let term = Terminal::start(&h);
    assert!(
        !term.screen().contains("Include them?"),
        "{}",
        term.screen()
    );
    assert!(request_holds_the_import(&h, &term, "again", 2));
}

#[test]
fn no_leaves_the_import_out_and_asks_again_next_time() {
    let h = Harness::new();
    lay_out(&h);
    let term = Terminal::launch(&h).spawn();
    term.wait_for("Include them?");
    // The cursor starts on No: Enter alone skips.
    term.press("Enter");
    term.wait_for("> ");
    assert!(!request_holds_the_import(&h, &term, "hello", 1));
    assert_eq!(approvals(&h), None);
    term.press("C-d");
    term.wait_for_exit();

    let term = Terminal::launch(&h).spawn();
    term.wait_for("Include them?");
    term.press("Escape");
    term.wait_for("> ");
    assert!(!request_holds_the_import(&h, &term, "second", 2));
}
