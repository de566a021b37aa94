//! Folder trust end to end (issue 14, item 1): the real binary in a pseudo-terminal asks
//! "Do you trust the files in this folder?" before anything of a new folder acts (here a
//! SessionStart hook that leaves a marker file); No exits with nothing run and nothing sent,
//! Yes is kept for the folder and the folders under it. A project's `bypassPermissions`
//! needs one more yes; `-p` assumes trust. Each step waits on what the terminal shows.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::PathBuf;

use cairn_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::json;

mod support;
use support::terminal::Terminal;
use support::{Harness, WAIT};

const QUESTION: &str = "Do you trust the files in this folder?";
const BYPASS_QUESTION: &str = "Let this folder's settings turn permission checks off?";

/// A project whose SessionStart hook writes a marker file (outside the project); the marker.
fn project_with_a_hook(h: &Harness) -> PathBuf {
    let marker = h.home.path().join("session-start-ran");
    h.settings(json!({"hooks": {"SessionStart": [{"hooks": [{
        "type": "command",
        "command": format!("touch '{}'", marker.display()),
    }]}]}}));
    std::fs::create_dir(h.path("sub")).unwrap();
    marker
}

/// The folders the trust file keeps.
fn trusted_folders(h: &Harness) -> Option<serde_json::Value> {
    let file = h.cairn_home().join("trusted-folders.json");
    let text = std::fs::read_to_string(file).ok()?;
    Some(serde_json::from_str::<serde_json::Value>(&text).unwrap()["folders"].clone())
}

fn canonical_work(h: &Harness) -> String {
    h.work.path().canonicalize().unwrap().display().to_string()
}

/// The status line's mode: the word after the model.
fn status_mode(term: &Terminal) -> String {
    let screen = term.wait_until("the status line", |screen| {
        screen.lines().any(|line| line.contains(" · $"))
    });
    let line = screen.lines().rfind(|line| line.contains(" · $")).unwrap();
    line.split(" · ").nth(1).unwrap().trim().to_string()
}

#[test]
fn no_exits_before_the_folder_acts_and_sends_nothing() {
    let h = Harness::new();
    let marker = project_with_a_hook(&h);
    h.server.push(Reply::text("never asked"));
    // A first prompt on the command line, which a trusted start would send at once.
    let term = Terminal::launch(&h).untrusted().args(&["hello"]).spawn();
    let screen = term.wait_for(QUESTION);
    assert!(
        screen.contains(&canonical_work(&h)),
        "the question names the folder:\n{screen}"
    );
    assert!(screen.contains(".claude/settings.json"), "{screen}");
    assert!(!marker.exists(), "the hook ran before the question");

    term.press("2");
    assert_eq!(term.wait_for_exit(), 1);
    let screen = term.screen();
    assert!(
        screen.contains("is not trusted: cairn exits without running anything from it."),
        "{screen}"
    );
    assert!(
        !marker.exists(),
        "the hook ran although the folder was not trusted"
    );
    assert_eq!(h.server.requests().len(), 0);
    assert_eq!(trusted_folders(&h), None);

    // Esc says no too, and the question comes back: a no is not kept.
    let term = Terminal::launch(&h).untrusted().spawn();
    term.wait_for(QUESTION);
    term.press("Escape");
    assert_eq!(term.wait_for_exit(), 1);
    assert!(!marker.exists());
}

#[test]
fn yes_runs_the_folder_and_is_kept_for_it_and_its_subfolders() {
    let h = Harness::new();
    let marker = project_with_a_hook(&h);
    let term = Terminal::launch(&h).untrusted().spawn();
    term.wait_for(QUESTION);
    assert!(!marker.exists());
    term.press("1");
    let screen = term.wait_for("> ");
    assert!(
        !screen.contains(QUESTION),
        "the app draws over the question:\n{screen}"
    );
    assert!(
        marker.exists(),
        "the SessionStart hook runs once the folder is trusted"
    );
    assert_eq!(
        trusted_folders(&h),
        Some(json!([{"path": canonical_work(&h)}]))
    );
    h.server.push(Reply::text("an answer"));
    term.send_line("hello");
    term.wait_for("an answer");
    term.press("C-d");
    term.wait_for_exit();

    // The next start in the folder, and one in a folder under it, ask nothing.
    std::fs::remove_file(&marker).unwrap();
    for dir in [h.work.path().to_path_buf(), h.path("sub")] {
        let term = Terminal::launch(&h).untrusted().cwd(&dir).start();
        assert!(!term.screen().contains(QUESTION), "{}", term.screen());
        term.press("C-d");
        term.wait_for_exit();
    }
    assert!(marker.exists());
    assert_eq!(
        trusted_folders(&h),
        Some(json!([{"path": canonical_work(&h)}]))
    );
}

#[test]
fn enter_trusts_the_folder() {
    let h = Harness::new();
    let term = Terminal::launch(&h).untrusted().spawn();
    term.wait_for(QUESTION);
    term.press("Enter");
    term.wait_for("> ");
    assert_eq!(
        trusted_folders(&h),
        Some(json!([{"path": canonical_work(&h)}]))
    );
}

#[test]
fn the_home_directory_is_asked_about_every_time_and_covers_no_subfolder() {
    let h = Harness::new();
    let home = h.home.path().to_path_buf();
    std::fs::create_dir(home.join("notes")).unwrap();
    for _ in 0..2 {
        let term = Terminal::launch(&h).untrusted().cwd(&home).spawn();
        term.wait_for(QUESTION);
        term.press("1");
        term.wait_for("> ");
        term.press("C-d");
        term.wait_for_exit();
    }
    assert_eq!(
        trusted_folders(&h),
        None,
        "the home directory's yes is not kept"
    );
    let term = Terminal::launch(&h)
        .untrusted()
        .cwd(home.join("notes"))
        .spawn();
    term.wait_for(QUESTION);
}

#[test]
fn a_projects_bypass_permissions_needs_its_own_yes() {
    let h = Harness::new();
    h.settings(json!({"permissions": {"defaultMode": "bypassPermissions"}}));
    let settings_file = h.path(".claude/settings.json");

    // The folder is trusted; its mode still asks. Enter alone keeps default mode.
    let term = Terminal::launch(&h).spawn();
    let screen = term.wait_for(BYPASS_QUESTION);
    assert!(screen.contains("bypassPermissions"), "{screen}");
    term.press("Enter");
    term.wait_for("> ");
    assert_eq!(status_mode(&term), "default");
    assert!(
        term.screen().contains(&format!(
            "{} sets bypassPermissions, which was not confirmed: this session runs in default mode.",
            settings_file.display()
        )),
        "{}",
        term.screen()
    );
    term.press("C-d");
    term.wait_for_exit();

    // Asked again; yes lets the mode hold and is kept for the folder.
    let term = Terminal::launch(&h).spawn();
    term.wait_for(BYPASS_QUESTION);
    term.press("1");
    term.wait_for("> ");
    assert_eq!(status_mode(&term), "bypassPermissions");
    term.press("C-d");
    term.wait_for_exit();

    let term = Terminal::start(&h);
    assert!(
        !term.screen().contains(BYPASS_QUESTION),
        "{}",
        term.screen()
    );
    assert_eq!(status_mode(&term), "bypassPermissions");
}

#[test]
fn a_mode_chosen_on_the_command_line_is_not_asked_about() {
    let h = Harness::new();
    h.settings(json!({"permissions": {"defaultMode": "bypassPermissions"}}));
    let term = Terminal::launch(&h)
        .args(&["--permission-mode", "plan"])
        .start();
    assert!(
        !term.screen().contains(BYPASS_QUESTION),
        "{}",
        term.screen()
    );
    assert_eq!(status_mode(&term), "plan");
}

#[test]
fn print_mode_assumes_trust_and_asks_nothing() {
    let h = Harness::new();
    let marker = project_with_a_hook(&h);
    h.server.push(Reply::text("printed answer"));
    // On a terminal, so only `-p` keeps the question away.
    let term = Terminal::launch(&h)
        .untrusted()
        .args(&["-p", "hello"])
        .spawn();
    assert_eq!(term.wait_for_exit(), 0);
    let screen = term.screen();
    assert!(screen.contains("printed answer"), "{screen}");
    assert!(!screen.contains(QUESTION), "{screen}");
    assert!(marker.exists(), "-p runs the folder's hooks");
    assert_eq!(h.server.wait_for_requests(1, WAIT).len(), 1);
    assert_eq!(trusted_folders(&h), None, "-p keeps no answer");
}
