//! Memory from the input box (issue 17, item 4), as a user meets it: the real binary in a
//! pseudo-terminal against the scripted model server. `# <text>` asks which type of memory
//! the text is and saves it — the file, its line in `MEMORY.md`, nothing sent to the model —
//! and the next run's system prompt carries the line; Esc gives the text back; with memory
//! off, `#` says so; `/memory` lists the memories and opens one in the editor.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use cairn_test_support::{RecordedRequest, Reply};
use serde_json::json;

mod support;
use support::Harness;
use support::terminal::Terminal;

/// Where cairn keeps the memories of the harness's working directory when no setting moves
/// them.
fn memory_dir(h: &Harness) -> PathBuf {
    cairn_session::SessionStore::new(h.cairn_home())
        .project_dir(&h.work.path().canonicalize().unwrap())
        .join("memory")
}

/// A side request (memory recall) offers no tools.
fn main_requests(h: &Harness) -> Vec<RecordedRequest> {
    h.server
        .requests()
        .into_iter()
        .filter(|request| request.body.get("tools").is_some())
        .collect()
}

/// Waits until the screen shows `words`, wherever the transcript wrapped them.
fn wait_for_words(term: &Terminal, words: &str) {
    let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let words = flat(words);
    term.wait_until(&words, |screen| flat(screen).contains(&words));
}

/// Sends `hello` and waits for its answer: whatever the app sent the model before it has
/// reached the server by then, in order.
fn say_hello_and_wait(h: &Harness, term: &Terminal) {
    h.server.push(Reply::text("Hello back."));
    term.send_line("hello");
    term.wait_for("Hello back.");
}

const PNPM_FILE: &str = "feedback_always_use_pnpm_not_npm.md";
const PNPM_INDEX_LINE: &str =
    "- [Always use pnpm, not npm](feedback_always_use_pnpm_not_npm.md) — always use pnpm, not npm";

#[test]
fn a_hash_line_saves_a_memory_of_the_chosen_type_which_the_next_run_sees() {
    let h = Harness::new();
    h.server
        .reply_to_side_requests(vec![Reply::text("{\"selected_memories\": []}")]);
    let term = Terminal::start(&h);
    term.send_line("# always use pnpm, not npm");
    // The question with the four types, the cursor on feedback (a frame may come in pieces).
    term.wait_until("the type question", |screen| {
        [
            "Which kind of memory is it?",
            "1. user",
            "❯ 2. feedback",
            "3. project",
            "4. reference",
            "↑↓ to select · enter to save · esc to cancel",
        ]
        .iter()
        .all(|part| screen.contains(part))
    });
    term.press("2");
    term.wait_for("Saved as a feedback memory");

    let dir = memory_dir(&h);
    assert_eq!(
        std::fs::read_to_string(dir.join(PNPM_FILE)).unwrap(),
        "---\nname: Always use pnpm, not npm\ndescription: always use pnpm, not npm\n\
         type: feedback\n---\nalways use pnpm, not npm\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("MEMORY.md")).unwrap(),
        format!("{PNPM_INDEX_LINE}\n")
    );
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );

    // `/memory` lists it with its type and age.
    term.send_line("/memory");
    term.wait_for(&format!("{PNPM_FILE} · feedback · just now"));
    term.wait_for("Always use pnpm, not npm: always use pnpm, not npm");

    // Nothing of the memory went to the model as a message: the one message sent is `hello`.
    say_hello_and_wait(&h, &term);
    let sent = main_requests(&h);
    assert_eq!(sent.len(), 1, "{sent:#?}");
    let messages = sent[0].body["messages"].to_string();
    assert!(messages.contains("hello"), "{messages}");
    assert!(!messages.contains("always use pnpm"), "{messages}");
    term.send_line("/exit");
    assert_eq!(term.wait_for_exit(), 0);

    // The next run's system prompt carries the index line.
    h.server.push(Reply::text("pnpm."));
    let output = h
        .command()
        .args(["-p", "which package manager?"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let sent = main_requests(&h);
    assert_eq!(sent.len(), 2);
    let system = sent[1].body["system"].to_string();
    assert!(system.contains(PNPM_INDEX_LINE), "{system}");
    assert!(
        !sent[0].body["system"].to_string().contains(PNPM_INDEX_LINE),
        "the first run's prompt was built before the memory was saved"
    );
}

#[test]
fn escape_gives_the_text_back_and_saves_nothing() {
    let h = Harness::new();
    let term = Terminal::start(&h);
    term.send_line("# use tabs");
    term.wait_for("Which kind of memory is it?");
    term.press("Escape");
    term.wait_until("the text back in the input box", |_| {
        term.visible_rows()
            .iter()
            .any(|row| row.starts_with("> # use tabs"))
    });
    assert!(
        !term.visible().contains("Which kind of memory is it?"),
        "{}",
        term.visible()
    );
    assert!(!memory_dir(&h).exists());
    // Enter asks again; this time it is saved as the user's.
    term.press("Enter");
    term.wait_until("the question again", |_| {
        term.visible().contains("Which kind of memory is it?")
    });
    term.press("1");
    term.wait_for("Saved as a user memory");
    assert!(memory_dir(&h).join("user_use_tabs.md").is_file());
    assert!(h.server.requests().is_empty());
}

#[test]
fn with_memory_off_a_hash_line_says_so_and_sends_nothing() {
    let h = Harness::new();
    h.settings(json!({"autoMemoryEnabled": false}));
    let term = Terminal::start(&h);
    term.send_line("# use tabs");
    wait_for_words(
        &term,
        "Memory is off, so nothing was saved (and nothing was sent): autoMemoryEnabled is \
         false in the settings. To turn it on, remove that setting or set it to true, then \
         start cairn again.",
    );
    // `/memory` says the same.
    term.press("C-c");
    term.send_line("/memory");
    term.wait_for("Memory is off (autoMemoryEnabled is false");
    say_hello_and_wait(&h, &term);
    let sent = h.server.requests();
    assert_eq!(sent.len(), 1, "no recall either: {sent:#?}");
    assert!(!sent[0].body["messages"].to_string().contains("use tabs"));
    assert!(!memory_dir(&h).exists());
}

#[test]
fn memory_with_a_file_name_opens_that_memory_in_the_editor() {
    let h = Harness::new();
    let editor = h.home.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nprintf '**Why:** the lockfile is pnpm-lock.yaml\\n' >> \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let term = Terminal::launch(&h)
        .env("EDITOR", editor.to_str().unwrap())
        .env("VISUAL", "")
        // Wide enough for the memory file's path on one line.
        .size(200, 30)
        .start();
    term.send_line("# always use pnpm, not npm");
    term.wait_for("Which kind of memory is it?");
    term.press("Enter");
    term.wait_for("Saved as a feedback memory");
    term.send_line("/memory feedback_always_use_pnpm_not_npm");
    wait_for_words(
        &term,
        &format!(
            "Saved {} (7 lines)",
            memory_dir(&h).join(PNPM_FILE).display()
        ),
    );
    assert_eq!(
        std::fs::read_to_string(memory_dir(&h).join(PNPM_FILE)).unwrap(),
        "---\nname: Always use pnpm, not npm\ndescription: always use pnpm, not npm\n\
         type: feedback\n---\nalways use pnpm, not npm\n**Why:** the lockfile is pnpm-lock.yaml\n"
    );
    term.send_line("/memory nothing_like_it");
    term.wait_for("Unknown memory file \"nothing_like_it\"");
}

#[test]
fn a_hash_line_can_go_to_the_projects_claude_md_and_the_question_says_where_memories_go() {
    let h = Harness::new();
    h.server
        .reply_to_side_requests(vec![Reply::text("{\"selected_memories\": []}")]);
    std::fs::write(h.path("CLAUDE.md"), "# Project\nBuild with cargo.").unwrap();
    let term = Terminal::start(&h);
    term.send_line("# remember that the API is frozen until June");
    let dir = memory_dir(&h);
    term.wait_until("the question naming the memory directory", |screen| {
        let joined = screen.split_whitespace().collect::<String>();
        joined.contains(&dir.display().to_string().replace(' ', ""))
            && screen.contains("5. CLAUDE.md")
    });
    term.press("5");
    term.wait_for("Added to");
    assert_eq!(
        std::fs::read_to_string(h.path("CLAUDE.md")).unwrap(),
        "# Project\nBuild with cargo.\n\n- remember that the API is frozen until June\n"
    );
    assert!(
        !dir.join("MEMORY.md").exists(),
        "nothing went to the memory directory"
    );
    // The next message's instructions carry it.
    say_hello_and_wait(&h, &term);
    let sent = main_requests(&h);
    let request = sent[0].body.to_string();
    assert!(
        request.contains("the API is frozen until June"),
        "{request}"
    );
}
