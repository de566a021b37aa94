//! The interactive app's session commands end to end: `/memory` in the user's editor,
//! `/permissions` changing rules, `/resume` from a running session, a resumed conversation
//! shown again, and the context gauge in the status line. The real binary runs in a
//! pseudo-terminal against the scripted model server; each test waits on what the terminal
//! shows (woken by its output, with a deadline).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::os::unix::fs::PermissionsExt;

use cairn_test_support::Reply;
use serde_json::{Value, json};

mod support;
use support::terminal::{Terminal, last_user_text};
use support::{Harness, WAIT};

/// An executable script in the test's home, for `$EDITOR`.
fn script(h: &Harness, name: &str, body: &str) -> String {
    let path = h.home.path().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

fn system_prompt(body: &Value) -> String {
    body["system"].to_string()
}

#[test]
fn memory_opens_claude_md_in_the_editor_and_the_next_message_follows_it() {
    let h = Harness::new();
    let editor = script(
        &h,
        "editor.sh",
        "printf 'Always answer in French.\\n' >> \"$1\"",
    );
    h.server.push(Reply::text("Bonjour."));
    let term = Terminal::launch(&h)
        .env("EDITOR", &editor)
        .env("VISUAL", "")
        .start();
    term.send_line("/memory project");
    term.wait_for("CLAUDE.md (1 line)");
    assert_eq!(
        std::fs::read_to_string(h.path("CLAUDE.md")).unwrap(),
        "Always answer in French.\n"
    );
    // Keys reach the app again once the editor is gone.
    term.send_line("hello");
    term.wait_for("Bonjour.");
    let requests = h.server.wait_for_requests(1, WAIT);
    let system = system_prompt(&requests[0].body);
    assert!(system.contains("Always answer in French."), "{system}");
}

#[test]
fn memory_says_when_the_editor_fails_and_names_unknown_files() {
    let h = Harness::new();
    let editor = script(&h, "broken-editor.sh", "exit 3");
    let term = Terminal::launch(&h)
        .env("EDITOR", &editor)
        .env("VISUAL", "")
        .start();
    term.send_line("/memory user");
    let screen = term.wait_for("ended with status 3");
    assert!(screen.contains("$EDITOR"), "{screen}");
    assert!(!h.home.path().join(".claude/CLAUDE.md").exists());
    term.send_line("/memory team");
    term.wait_for("Unknown memory file \"team\"");
}

#[test]
fn permissions_adds_and_removes_rules_that_apply_at_once() {
    let h = Harness::new();
    h.server.push(Reply::tool_use(
        "w1",
        "Write",
        json!({"file_path": "notes.txt", "content": "hello\n"}),
    ));
    h.server.push(Reply::text("The write was refused."));
    let term = Terminal::start(&h);
    term.send_line("/permissions deny Write");
    term.wait_for("Added the deny rule Write");
    let local = h.path(".claude/settings.local.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
    assert_eq!(saved["permissions"]["deny"], json!(["Write"]));

    // The model's Write is refused by the new rule, without a dialog.
    term.send_line("write the notes");
    term.wait_for("The write was refused.");
    assert!(!h.path("notes.txt").exists());
    let requests = h.server.wait_for_requests(2, WAIT);
    let result = requests[1].body["messages"].to_string();
    assert!(
        result.contains("The permission rule Write denies"),
        "{result}"
    );

    term.send_line("/permissions remove Write");
    term.wait_for("Removed the deny rule Write from");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
    assert_eq!(saved["permissions"]["deny"], json!([]));
    term.send_line("/permissions remove Write");
    term.wait_for("No rule Write is in force");
    term.send_line("/permissions allow Bash(");
    term.wait_for("permission rule \"Bash(\"");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
    assert_eq!(
        saved["permissions"]["allow"],
        Value::Null,
        "a bad rule is not saved"
    );
}

/// Runs `cairn -p prompt` to make a session, answered with `answer`.
fn make_session(h: &Harness, prompt: &str, answer: &str) {
    h.server.push(Reply::text(answer));
    let output = h.command().args(["-p", prompt]).output().unwrap();
    assert!(
        output.status.success(),
        "cairn -p failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn resume_from_a_running_session_shows_the_conversation_and_continues_it() {
    let h = Harness::new();
    make_session(&h, "the older question", "the older answer");
    h.server.push(Reply::text("Here and now."));
    h.server.push(Reply::text("Continuing the older one."));
    let term = Terminal::start(&h);
    term.send_line("a question here");
    term.wait_for("Here and now.");
    term.send_line("/resume");
    // The picker offers the other session, not the one being left.
    term.wait_for("Resume a session");
    term.wait_for("the older question");
    term.press("Enter");
    term.wait_for("Resumed a conversation of 2 messages");
    let screen = term.wait_until("the older answer above the status line", |screen| {
        let answer = screen.rfind("the older answer");
        let gauge = screen.rfind("% context");
        matches!((answer, gauge), (Some(answer), Some(gauge)) if answer < gauge)
    });
    assert!(screen.contains("Resume this session with"), "{screen}");
    // The gauge estimates what the resumed conversation takes before any request.
    let gauge = screen
        .lines()
        .rev()
        .find(|line| line.contains("% context"))
        .unwrap();
    assert!(!gauge.contains(" 0% context"), "{gauge}");
    term.send_line("and then?");
    term.wait_for("Continuing the older one.");
    let requests = h.server.wait_for_requests(3, WAIT);
    let messages = requests[2].body["messages"].to_string();
    assert!(messages.contains("the older question"), "{messages}");
    assert!(messages.contains("the older answer"), "{messages}");
    assert!(!messages.contains("a question here"), "{messages}");
    assert_eq!(last_user_text(&requests[2].body), "and then?");
}

#[test]
fn resume_with_an_unknown_id_or_no_other_session_stays_in_this_one() {
    let h = Harness::new();
    h.server.push(Reply::text("First answer."));
    h.server.push(Reply::text("Second answer."));
    let term = Terminal::start(&h);
    term.send_line("first question");
    term.wait_for("First answer.");
    term.send_line("/resume no-such-session");
    let screen = term.wait_for("No session no-such-session in this directory");
    // It stays in the session it is in: nothing is shown again.
    assert!(!screen.contains("Resumed a conversation"), "{screen}");
    assert_eq!(screen.matches("First answer.").count(), 1, "{screen}");
    term.send_line("/resume");
    term.wait_for("No other session to resume in this directory.");
    term.send_line("second question");
    term.wait_for("Second answer.");
    let requests = h.server.wait_for_requests(2, WAIT);
    let messages = requests[1].body["messages"].to_string();
    assert!(messages.contains("first question"), "{messages}");
}

#[test]
fn the_status_line_shows_how_full_the_context_is() {
    let h = Harness::new();
    h.server
        .push(Reply::text("A long conversation already.").with_usage(50_000, 100));
    let term = Terminal::start(&h);
    term.send_line("hello");
    term.wait_for("A long conversation already.");
    term.wait_for("25% context");
}

#[test]
fn ctrl_o_shows_the_whole_transcript_and_returns_to_the_conversation() {
    use cairn_test_support::ScriptedBlock;
    let h = Harness::new();
    h.server.push(Reply::blocks(vec![
        ScriptedBlock::Thinking {
            thinking: "First I count.\nThen the hidden second thought.".into(),
            signature: "sig".into(),
        },
        ScriptedBlock::ToolUse {
            id: "b1".into(),
            name: "Bash".into(),
            input: json!({"command": "seq -f 'row %g' 1 12"}),
        },
    ]));
    h.server.push(Reply::text("Counted to twelve."));
    h.settings(json!({"permissions": {"allow": ["Bash(seq:*)"]}}));
    let term = Terminal::start(&h);
    term.send_line("count");
    let compact = term.wait_for("Counted to twelve.");
    assert!(compact.contains("… +7 lines"), "{compact}");
    let has_row = |screen: &str, row: &str| {
        screen
            .lines()
            .any(|line| line.trim_end().ends_with(&format!(" {row}")))
    };
    assert!(has_row(&compact, "row 12"), "{compact}");
    assert!(!has_row(&compact, "row 1"), "{compact}");
    assert!(!compact.contains("hidden second thought"), "{compact}");

    term.press("C-o");
    let view = term.wait_for("Transcript ·");
    assert!(view.contains("hidden second thought"), "{view}");
    for row in ["row 1", "row 7", "row 12"] {
        assert!(has_row(&view, row), "{row} missing:\n{view}");
    }
    term.press("q");
    term.wait_until("the conversation again", |screen| {
        !screen.contains("Transcript ·") && screen.contains("Counted to twelve.")
    });
    h.server.push(Reply::text("Still listening."));
    term.send_line("and now?");
    term.wait_for("Still listening.");
}

#[test]
fn slash_opens_the_command_menu_and_enter_runs_the_choice() {
    let h = Harness::new();
    let commands = h.path(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("greet.md"),
        "---\ndescription: say hello nicely\n---\nSay hello.\n",
    )
    .unwrap();
    let term = Terminal::start(&h);
    term.type_text("/");
    // (The welcome line says "/help" too: wait for the menu's own line.)
    let menu = term.wait_for("› /help");
    assert!(menu.contains("/model"), "{menu}");
    term.type_text("gre");
    term.wait_for("say hello nicely");
    for _ in 0..3 {
        term.press("BSpace");
    }
    term.wait_until("the name erased", |screen| !screen.contains("> /gre"));
    term.type_text("cos");
    term.wait_for("› /cost");
    term.press("Enter");
    term.wait_for("Total cost:");
}

#[test]
fn the_spinner_counts_the_tokens_streamed_so_far() {
    let h = Harness::new();
    h.server
        .push(Reply::text("word ".repeat(800)).stall_after(3000));
    let term = Terminal::start(&h);
    term.send_line("talk to me");
    let screen = term.wait_for("tokens · esc to interrupt");
    let line = screen
        .lines()
        .find(|line| line.contains("tokens · esc to interrupt"))
        .unwrap();
    let count: u64 = line
        .split("↓ ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|number| number.parse().ok())
        .unwrap_or_else(|| panic!("no token count in {line:?}"));
    assert!(count > 0, "{line}");
    term.press("Escape");
    term.wait_for("Interrupted");
}

#[test]
fn a_custom_commands_model_and_allowed_tools_apply_to_its_turn() {
    let h = Harness::new();
    let commands = h.path(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("shout.md"),
        "---\nmodel: haiku\nallowed-tools: Bash(echo:*)\n---\nShout $ARGUMENTS.\n",
    )
    .unwrap();
    h.server.push(Reply::tool_use(
        "b1",
        "Bash",
        json!({"command": "echo HELLO > shouted.txt"}),
    ));
    h.server.push(Reply::text("Shouted."));
    h.server.push(Reply::text("Back to normal."));
    let term = Terminal::start(&h);
    term.send_line("/shout hello");
    term.wait_for("Shouted.");
    assert_eq!(
        std::fs::read_to_string(h.path("shouted.txt")).unwrap(),
        "HELLO\n",
        "the command's allowed tool ran without a dialog"
    );
    term.send_line("thanks");
    term.wait_for("Back to normal.");
    let requests = h.server.wait_for_requests(3, WAIT);
    let models: Vec<&str> = requests
        .iter()
        .map(|request| request.body["model"].as_str().unwrap())
        .collect();
    assert_eq!(
        models,
        ["claude-haiku-4-5", "claude-haiku-4-5", "claude-sonnet-4-5"]
    );
}

#[test]
fn status_names_the_auth_source_but_never_the_key() {
    let h = Harness::new();
    let term = Terminal::start(&h);
    term.send_line("/status");
    let screen = term.wait_for("Auth: the ANTHROPIC_API_KEY environment variable");
    assert!(screen.contains("Permission mode: default"), "{screen}");
    assert!(!screen.contains("sk-test-key"), "{screen}");
}

#[test]
fn sigterm_puts_the_terminal_back_and_prints_the_resume_hint() {
    let h = Harness::new();
    h.server.push(Reply::text("Noted."));
    let term = Terminal::start(&h);
    // Only a session in which something was said has anything to resume.
    term.send_line("remember this");
    term.wait_for("Noted.");
    // Even from the transcript view, on the alternate screen.
    term.press("C-o");
    term.wait_for("Transcript ·");
    assert!(term.alternate_screen());
    term.signal(rustix::process::Signal::TERM);
    assert_eq!(term.wait_for_exit(), 143);
    let screen = term.screen();
    assert!(screen.contains("Resume this session with"), "{screen}");
    assert!(!term.alternate_screen(), "back on the main screen");
}

/// The status lines on the screen (the live one, and any a garbled scroll left behind).
fn status_lines(screen: &str) -> usize {
    screen
        .lines()
        .filter(|line| line.contains("% context · $"))
        .count()
}

#[test]
fn a_short_terminal_keeps_one_clean_input_box_as_answers_scroll_past() {
    let h = Harness::new();
    let term = Terminal::start(&h);
    term.resize(80, 14);
    // cairn answers a resize by drawing the conversation's end and the box again. Keys typed
    // while it does can be lost (seen about once in twelve starts under load), so type once
    // it has.
    term.wait_until("the box drawn again, 80 wide", |_| {
        term.visible_rows().iter().any(|row| *row == "─".repeat(80))
    });
    for turn in 1..=4 {
        h.server.push(Reply::text(format!(
            "Answer {turn}.\n\nIt has two paragraphs."
        )));
        term.send_line(&format!("question {turn}"));
        term.wait_for(&format!("Answer {turn}."));
    }
    term.wait_until("the last answer under one status line", |_| {
        let visible = term.visible();
        visible.contains("Answer 4.") && status_lines(&visible) == 1
    });
    let screen = term.screen();
    let visible = term.visible();
    assert_eq!(status_lines(&visible), 1, "{visible}");
    let prompt_rows: Vec<&str> = visible
        .lines()
        .filter(|line| line.starts_with("> "))
        .collect();
    assert!(
        prompt_rows.iter().any(|line| line.trim() == ">"),
        "{visible}"
    );
    assert_eq!(screen.matches("Answer 4.").count(), 1, "{screen}");
    // Typing still lands in the box.
    term.type_text("still typing");
    term.wait_until("the text in the box", |_| {
        term.visible()
            .lines()
            .any(|line| line.starts_with("> still typing"))
    });
}

#[test]
fn the_input_box_sits_right_under_the_answer_at_the_bottom_of_a_full_screen() {
    let h = Harness::new();
    let term = Terminal::start(&h);
    // Enough turns to fill the 30-row screen, so the viewport has reached its bottom.
    for turn in 1..=6 {
        h.server.push(Reply::text(format!(
            "Answer {turn}.\n\nA second paragraph.\n\nA third one."
        )));
        term.send_line(&format!("question {turn}"));
        term.wait_for(&format!("Answer {turn}."));
    }
    // The answer, a blank line, the box (three rows), the status line, and nothing held
    // open below it.
    let layout = |visible: &str| {
        let lines: Vec<&str> = visible.lines().collect();
        let status = lines.iter().position(|line| line.contains("% context · $"));
        let last_answer = lines.iter().rposition(|line| line.contains("A third one."));
        status.zip(last_answer)
    };
    term.wait_until("the turn to end, the box under the answer", |_| {
        let visible = term.visible();
        !visible.contains("esc to interrupt") && layout(&visible) == Some((29, 24))
    });
    let visible = term.visible();
    assert_eq!(
        layout(&visible),
        Some((29, 24)),
        "the status line is the screen's last row, five below the answer:\n{visible}"
    );
}

#[test]
fn ctrl_c_twice_exits_but_a_lone_one_lapses() {
    let h = Harness::new();
    let term = Terminal::start(&h);
    term.press("C-c");
    term.wait_for("Press Ctrl+C again to exit");
    // Left alone, the first press lapses: the hint goes and a later Ctrl+C only arms again.
    term.wait_until("the hint to lapse", |_| {
        !term.visible().contains("Press Ctrl+C again to exit")
    });
    term.press("C-c");
    term.wait_for("Press Ctrl+C again to exit");
    assert_eq!(term.exit_status(), None, "one press does not exit");
    term.press("C-c");
    assert_eq!(term.wait_for_exit(), 0);
    // Nothing was said: there is nothing to resume, and no hint says otherwise.
    let screen = term.screen();
    assert!(!screen.contains("Resume this session with"), "{screen}");
}

#[test]
fn esc_stops_the_turn_and_gives_queued_messages_back() {
    let h = Harness::new();
    h.server
        .push(Reply::text("Counting slowly: one two three").stall_after(300));
    h.server.push(Reply::text("The queued one, answered."));
    let term = Terminal::start(&h);
    term.send_line("count for me");
    term.wait_for("esc to interrupt");
    h.server.wait_for_requests(1, WAIT);
    term.send_line("and then this");
    term.wait_for("1 queued");
    term.press("Escape");
    term.wait_for("Interrupted");
    // The queued message is back in the box, not sent.
    term.wait_until("the queued text in the box", |_| {
        term.visible()
            .lines()
            .any(|line| line.starts_with("> and then this"))
    });
    assert_eq!(h.server.requests().len(), 1);
    term.press("Enter");
    term.wait_for("The queued one, answered.");
    let requests = h.server.wait_for_requests(2, WAIT);
    assert_eq!(last_user_text(&requests[1].body), "and then this");
}

#[test]
fn esc_in_a_permission_dialog_refuses_and_stops_the_turn() {
    let h = Harness::new();
    h.server.push(Reply::tool_use(
        "w1",
        "Write",
        json!({"file_path": "notes.txt", "content": "hello\n"}),
    ));
    h.server
        .push(Reply::text("This reply should never be asked for."));
    let term = Terminal::start(&h);
    term.send_line("write the notes");
    term.wait_for("Do you want to proceed?");
    term.press("Escape");
    term.wait_until("the turn to end", |_| {
        let visible = term.visible();
        !visible.contains("Do you want to proceed?") && !visible.contains("esc to interrupt")
    });
    assert!(!h.path("notes.txt").exists());
    assert_eq!(h.server.requests().len(), 1, "the model is not asked again");
}

#[test]
fn a_pasted_reason_for_a_refusal_keeps_its_words_apart() {
    let h = Harness::new();
    h.server.push(Reply::tool_use(
        "w1",
        "Write",
        json!({"file_path": "notes.txt", "content": "hello\n"}),
    ));
    h.server.push(Reply::text("Understood."));
    let term = Terminal::start(&h);
    term.send_line("write the notes");
    term.wait_for("Do you want to proceed?");
    // An edit's options: yes, for the session, always, no.
    term.press("4");
    term.wait_for("enter to send");
    term.paste("please do not\ntouch that file");
    term.wait_for("please do not touch that file");
    term.press("Enter");
    term.wait_for("Understood.");
    let requests = h.server.wait_for_requests(2, WAIT);
    let result = requests[1].body["messages"].to_string();
    assert!(result.contains("please do not touch that file"), "{result}");
}

#[test]
fn a_permission_dialog_shows_a_long_command_whole_when_the_screen_can() {
    let h = Harness::new();
    let mut command: Vec<String> = (1..=14)
        .map(|n| format!("echo step {n} >> steps.log"))
        .collect();
    command.push("rm -f steps.log".into());
    h.server.push(Reply::tool_use(
        "b1",
        "Bash",
        json!({"command": command.join("\n"), "description": "Run a multi-step script"}),
    ));
    h.server.push(Reply::text("Ran it."));
    let term = Terminal::start(&h);
    term.send_line("run the steps");
    term.wait_for("Do you want to proceed?");
    // The dialog may take more than one frame to reach its full height.
    term.wait_until("the whole command above one status line", |_| {
        let visible = term.visible();
        command.iter().all(|line| visible.contains(line.as_str())) && status_lines(&visible) == 1
    });
    let visible = term.visible();
    for line in &command {
        assert!(
            visible.contains(line.as_str()),
            "{line} is hidden:\n{visible}"
        );
    }
    assert_eq!(status_lines(&visible), 1, "{visible}");
    term.press("1");
    term.wait_for("Ran it.");
}

#[test]
fn cancelling_the_resume_list_leaves_the_session_as_it_was() {
    let h = Harness::new();
    make_session(&h, "the older question", "the older answer");
    h.server.push(Reply::text("Here and now."));
    h.server.push(Reply::text("Still the same session."));
    let term = Terminal::start(&h);
    term.send_line("a question here");
    term.wait_for("Here and now.");
    term.send_line("/resume");
    term.wait_for("the older question");
    term.press("Escape");
    term.wait_until("the list to close", |_| {
        !term.visible().contains("Resume a session")
    });
    let screen = term.screen();
    assert!(!screen.contains("Resume this session with"), "{screen}");
    assert_eq!(screen.matches("Welcome to cairn").count(), 1, "{screen}");
    assert_eq!(screen.matches("Here and now.").count(), 1, "{screen}");
    term.send_line("and now?");
    term.wait_for("Still the same session.");
    let requests = h.server.wait_for_requests(3, WAIT);
    let messages = requests[2].body["messages"].to_string();
    assert!(messages.contains("a question here"), "{messages}");
    assert!(!messages.contains("the older question"), "{messages}");
}

#[test]
fn the_spinner_says_what_the_todo_in_progress_is_doing() {
    let h = Harness::new();
    h.server.push(Reply::tool_use(
        "t1",
        "TodoWrite",
        json!({"todos": [
            {"content": "Count the lines", "status": "in_progress", "activeForm": "Counting the lines"},
            {"content": "Report", "status": "pending", "activeForm": "Reporting"}
        ]}),
    ));
    h.server
        .push(Reply::text("Still counting the lines of every file").stall_after(300));
    let term = Terminal::start(&h);
    term.send_line("count");
    let screen = term.wait_for("Counting the lines… (");
    // The checklist names each item by what it is, the spinner by what is being done.
    assert!(screen.contains("☐ Count the lines"), "{screen}");
    term.press("Escape");
    term.wait_for("Interrupted");
}

#[test]
fn a_result_too_large_for_the_conversation_says_what_the_model_got() {
    let h = Harness::new();
    let lines: Vec<String> = (1..=3000)
        .map(|n| format!("match line {n} with some padding to make it longer"))
        .collect();
    std::fs::write(h.path("big.txt"), lines.join("\n")).unwrap();
    h.server.push(Reply::tool_use(
        "g1",
        "Grep",
        json!({"pattern": "match", "path": "big.txt", "output_mode": "content"}),
    ));
    h.server.push(Reply::text("Found them."));
    let term = Terminal::start(&h);
    term.send_line("grep it");
    term.wait_for("Found them.");
    let screen = term.wait_for("too large for the conversation");
    assert!(screen.contains("Grep's result ("), "{screen}");
    assert!(screen.contains("tool-results"), "{screen}");
}

#[test]
fn a_command_file_added_while_cairn_runs_works_at_once() {
    let h = Harness::new();
    h.server.push(Reply::text("Reviewed."));
    let term = Terminal::start(&h);
    let commands = h.path(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("review.md"),
        "---\nargument-hint: [file]\n---\n# Review the file carefully\nCheck $ARGUMENTS.\n",
    )
    .unwrap();
    term.type_text("/rev");
    // Named with its hint, described by its first line.
    let menu = term.wait_for("Review the file carefully");
    assert!(menu.contains("/review [file]"), "{menu}");
    for _ in 0..4 {
        term.press("BSpace");
    }
    term.send_line("/review src/lib.rs");
    term.wait_for("Reviewed.");
    let requests = h.server.wait_for_requests(1, WAIT);
    assert!(last_user_text(&requests[0].body).contains("Check src/lib.rs."));
}

#[test]
fn ctrl_o_reaches_the_messages_a_resume_did_not_show() {
    let h = Harness::new();
    for turn in 1..=32 {
        h.server.push(Reply::text(format!("answer {turn}")));
        let mut command = h.command();
        command.args(["-p", &format!("question {turn}")]);
        if turn > 1 {
            command.arg("-c");
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{output:?}");
    }
    let term = Terminal::launch(&h).args(&["-c"]).spawn();
    let screen = term.wait_for("Ctrl+O shows them all");
    assert!(screen.contains("question 32"), "{screen}");
    assert!(!screen.contains("question 1\n"), "{screen}");
    term.press("C-o");
    term.wait_for("Transcript ·");
    term.press("g");
    term.wait_until("the first question at the top", |_| {
        term.visible()
            .lines()
            .any(|line| line.trim_end() == "> question 1")
    });
    term.press("q");
}

#[test]
fn a_paste_brings_the_command_menu_up_to_date() {
    let h = Harness::new();
    let term = Terminal::start(&h);
    term.type_text("/ex");
    term.wait_for("› /exit");
    term.paste("port");
    term.wait_for("› /export");
    term.press("Enter");
    // `/export` alone says where it would write, and a second Enter writes there.
    term.wait_for("Press Enter to write");
    term.press("Enter");
    term.wait_for("Exported the conversation");
    assert_eq!(term.exit_status(), None, "it did not exit");
}

/// Starts cairn under a shell that outlives the terminal to write down how cairn ended, lets
/// `close` close the terminal, and checks that cairn ended without a panic.
fn assert_ends_cleanly_when_closed(close: impl FnOnce(&mut Terminal)) {
    let h = Harness::new();
    let status = h.home.path().join("status.txt");
    let errors = h.home.path().join("stderr.txt");
    let mut term = Terminal::launch(&h).in_shell(|cairn| {
        format!(
            "trap '' HUP; {cairn} 2>{errors}; echo $? > {status}",
            errors = errors.display(),
            status = status.display(),
        )
    });
    term.wait_for("% context");
    close(&mut term);
    assert_eq!(term.wait_for_exit(), 0, "the shell's own status");
    let errors = std::fs::read_to_string(&errors).unwrap_or_default();
    assert!(!errors.contains("panicked"), "{errors}");
    let code = std::fs::read_to_string(&status).unwrap();
    assert!(code.trim() != "101", "exit {code}, stderr: {errors}");
}

#[test]
fn closing_the_terminal_ends_cairn_cleanly() {
    // As a terminal emulator closes its window: SIGHUP to the shell's process group (the
    // shell ignores it, cairn does not), and the terminal gone.
    assert_ends_cleanly_when_closed(Terminal::close_window);
}

#[test]
fn a_terminal_gone_without_a_hang_up_signal_ends_cairn_cleanly() {
    // cairn itself gets no hang-up (only the session's leader, the shell, does), only a
    // terminal that is gone.
    assert_ends_cleanly_when_closed(Terminal::hang_up);
}

#[test]
fn a_dumb_terminal_gets_the_answer_in_plain_text() {
    let h = Harness::new();
    h.server.push(Reply::text("A plain answer."));
    let term = Terminal::launch(&h)
        .env("TERM", "dumb")
        .args(&["a question"])
        .spawn();
    assert_eq!(term.wait_for_exit(), 0);
    let screen = term.screen();
    assert!(screen.contains("A plain answer."), "{screen}");
    assert!(!screen.contains("% context"), "no interactive UI: {screen}");
}
