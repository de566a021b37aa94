//! Snapshots of rendered frames: each test draws into ratatui's `TestBackend` and compares the
//! screen's text with a reviewed snapshot; where colour is the point, a few cells' styles are
//! checked as well.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_protocol::{
    AgentEvent, ContentBlock, Message, StopReason, TodoItem, TodoStatus, ToolResultContent,
    TurnEnd, TurnSummary, Usage,
};
use cairn_tui::{
    Appearance, PermissionDialog, StatusLine, Theme, ThinkingDisplay, Transcript, render_diff,
    render_markdown,
};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use serde_json::{Value, json};

/// Draws `lines` on a terminal `width` columns wide and as tall as they are.
fn draw_lines(width: u16, lines: Vec<Line<'static>>) -> Terminal<TestBackend> {
    let height = u16::try_from(lines.len().max(1)).unwrap();
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| frame.render_widget(Paragraph::new(lines), frame.area()))
        .unwrap();
    terminal
}

fn screen(terminal: &Terminal<TestBackend>) -> String {
    terminal.backend().to_string()
}

/// The cell where `needle` first starts on the screen.
fn cell_at<'b>(buffer: &'b Buffer, needle: &str) -> &'b ratatui::buffer::Cell {
    let area = buffer.area;
    for y in 0..area.height {
        let row: Vec<&str> = (0..area.width).map(|x| buffer[(x, y)].symbol()).collect();
        for x in 0..row.len() {
            if row[x..].concat().starts_with(needle) {
                return &buffer[(u16::try_from(x).unwrap(), y)];
            }
        }
    }
    panic!("{needle:?} is not on the screen");
}

fn assistant_done() -> AgentEvent {
    AgentEvent::AssistantMessage {
        message: Message::user_text(""),
        id: "msg_1".into(),
        model: "claude-sonnet-4-5".into(),
        stop_reason: Some(StopReason::ToolUse),
        usage: Usage::default(),
        cost_usd: 0.0,
    }
}

fn tool_call(id: &str, name: &str, input: Value) -> [AgentEvent; 2] {
    [
        AgentEvent::ToolCallStarted {
            id: id.into(),
            name: name.into(),
        },
        AgentEvent::ToolCallInputComplete {
            id: id.into(),
            name: name.into(),
            input,
        },
    ]
}

fn tool_result(id: &str, name: &str, text: &str, is_error: bool) -> AgentEvent {
    AgentEvent::ToolCallResult {
        id: id.into(),
        name: name.into(),
        content: ToolResultContent::Text(text.into()),
        is_error,
    }
}

fn text(delta: &str) -> AgentEvent {
    AgentEvent::TextDelta { text: delta.into() }
}

fn turn_finished(end: TurnEnd) -> AgentEvent {
    AgentEvent::TurnFinished(TurnSummary {
        op_id: String::new(),
        end,
        result: String::new(),
        requests: 1,
        usage: Usage::default(),
        cost_usd: 0.0,
        cost_unknown: false,
        duration_api_ms: 0,
    })
}

/// A whole turn: a question, thinking, a read, a failing command, an edit and an answer.
fn conversation() -> Vec<AgentEvent> {
    let mut events = vec![
        AgentEvent::UserMessage {
            message: Message::user_text(
                "Fix the failing test in src/lib.rs and tell me what was wrong",
            ),
        },
        AgentEvent::ThinkingDelta {
            text: "The user wants the failing test fixed.\nI should read the file first.".into(),
        },
        text("I'll look at `src/lib.rs` first."),
    ];
    events.extend(tool_call(
        "t1",
        "Read",
        json!({"file_path": "/repo/src/lib.rs"}),
    ));
    events.push(assistant_done());
    events.push(tool_result(
        "t1",
        "Read",
        "     1\tpub fn add(a: i32, b: i32) -> i32 {\n     2\t    a - b\n     3\t}\n",
        false,
    ));
    events.push(text(
        "The function subtracts instead of adding. Running the tests to confirm:",
    ));
    events.extend(tool_call(
        "t2",
        "Bash",
        json!({"command": "cargo test --quiet", "description": "Run the tests"}),
    ));
    events.push(assistant_done());
    events.push(tool_result(
        "t2",
        "Bash",
        "Exit code 101\nrunning 1 test\ntest tests::adds ... FAILED\n\nfailures:\n    tests::adds\n\ntest result: FAILED. 0 passed; 1 failed",
        true,
    ));
    events.extend(tool_call(
        "t3",
        "Edit",
        json!({"file_path": "/repo/src/lib.rs", "old_string": "    a - b", "new_string": "    a + b"}),
    ));
    events.push(assistant_done());
    events.push(tool_result(
        "t3",
        "Edit",
        "The file /repo/src/lib.rs has been updated:\n     1\tpub fn add(a: i32, b: i32) -> i32 {\n     2\t    a + b\n     3\t}",
        false,
    ));
    events.push(text(
        "Fixed: `add` **subtracted** its arguments. The test passes now:\n\n\
         | test | before | after |\n|---|---|---|\n| tests::adds | FAILED | ok |\n",
    ));
    events.push(assistant_done());
    events.push(turn_finished(TurnEnd::Completed));
    events
}

fn transcript_of(events: &[AgentEvent]) -> Transcript {
    let mut transcript = Transcript::new();
    transcript.set_working_dir("/repo");
    for event in events {
        transcript.apply(event);
    }
    transcript
}

/// Finished cells, then the live region, as the terminal would show them.
fn whole(transcript: &Transcript, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = transcript.render_finished(width, theme);
    lines.extend(transcript.render_live(width, theme));
    lines
}

#[test]
fn markdown_with_a_code_block_a_table_and_a_list() {
    let source = "\
## Plan

Two **small** changes, see [the docs](https://docs.rs/ratatui):

1. Parse the *input*
   - trim it
   - split on `:`
2. Print it

> Note: this wraps because the quoted sentence is long enough.

```rust
fn main() {
    println!(\"hello\");
}
```

| name | lines | status |
|:-----|------:|:------:|
| lib.rs | 120 | ok |
| main.rs | 8 | failing |
";
    let theme = Theme::dark();
    let terminal = draw_lines(60, render_markdown(source, 60, &theme));
    assert_snapshot!(screen(&terminal));

    let buffer = terminal.backend().buffer();
    let heading = cell_at(buffer, "Plan");
    assert!(heading.modifier.contains(Modifier::BOLD));
    assert_eq!(heading.fg, Color::Cyan);
    assert!(
        matches!(cell_at(buffer, "fn").fg, Color::Rgb(..)),
        "code is highlighted"
    );
    assert!(
        cell_at(buffer, "the docs")
            .modifier
            .contains(Modifier::UNDERLINED)
    );
    assert!(cell_at(buffer, "small").modifier.contains(Modifier::BOLD));
}

/// A table whose Description column is far wider than the rest.
const SETTINGS_TABLE: &str = "\
| Name | Type | Default | Description | Since |
|------|------|---------|-------------|-------|
| timeout | u64 | 30 | How long to wait for the server to reply before giving up | 0.3 |
| retries | u32 | 3 | How many times to retry a request that failed on the network | 0.4 |
| log_file | path | | Where to write the log, or empty for standard error | 0.5 |
";

#[test]
fn a_wide_table_fits_at_100_columns() {
    let terminal = draw_lines(100, render_markdown(SETTINGS_TABLE, 100, &Theme::dark()));
    assert_snapshot!(screen(&terminal));
}

#[test]
fn a_wide_table_narrows_its_widest_column_at_60_columns() {
    let terminal = draw_lines(60, render_markdown(SETTINGS_TABLE, 60, &Theme::dark()));
    assert_snapshot!(screen(&terminal));
}

#[test]
fn a_wide_table_stacks_its_rows_at_40_columns() {
    let theme = Theme::dark();
    let terminal = draw_lines(40, render_markdown(SETTINGS_TABLE, 40, &theme));
    assert_snapshot!(screen(&terminal));
    let buffer = terminal.backend().buffer();
    assert!(cell_at(buffer, "Name:").modifier.contains(Modifier::BOLD));
    assert_eq!(
        cell_at(buffer, "────────").fg,
        theme.table_border.fg.unwrap()
    );
}

#[test]
fn an_unclosed_code_fence_streams_as_code() {
    let mut transcript = Transcript::new();
    transcript.apply(&text(
        "Here is the fix:\n\n```python\ndef add(a, b):\n    return a + b",
    ));
    // The sentence is complete (the code block has started): it is finished, the code live.
    let live = transcript.render_live(40, &Theme::dark());
    assert_eq!(live[1].to_string(), "    def add(a, b):");
    let terminal = draw_lines(40, whole(&transcript, 40, &Theme::dark()));
    assert_snapshot!(screen(&terminal));
    assert!(matches!(
        cell_at(terminal.backend().buffer(), "def").fg,
        Color::Rgb(..)
    ));
}

#[test]
fn a_diff_with_line_numbers_and_colours() {
    let old = "fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\nfn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
    let new = "/// Adds two numbers.\nfn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nfn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
    let theme = Theme::dark();
    let terminal = draw_lines(50, render_diff(old, new, 50, &theme));
    assert_snapshot!(screen(&terminal));

    let buffer = terminal.backend().buffer();
    assert_eq!(cell_at(buffer, "- ").fg, Color::Red);
    assert_eq!(cell_at(buffer, "    a + b").fg, Color::Green);
    assert_eq!(cell_at(buffer, "/// Adds").fg, Color::Green);
    assert!(cell_at(buffer, "1 ").modifier.contains(Modifier::DIM));
}

fn bash_dialog() -> PermissionDialog {
    PermissionDialog::new(
        "req-1",
        "Bash",
        json!({"command": "rm -rf target/debug/incremental", "description": "Clear the incremental build cache"}),
        "rm deletes files, and it is not in the allow list",
        Some("Bash(rm -rf target/debug:*)".into()),
    )
}

fn draw_dialog(dialog: &PermissionDialog, width: u16, height: u16) -> Terminal<TestBackend> {
    let theme = Theme::dark();
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| frame.render_widget(dialog.widget(&theme), frame.area()))
        .unwrap();
    terminal
}

#[test]
fn permission_dialog_for_a_command() {
    let dialog = bash_dialog();
    let height = dialog.height(64, &Theme::dark());
    let terminal = draw_dialog(&dialog, 64, height);
    assert_snapshot!(screen(&terminal));
    let buffer = terminal.backend().buffer();
    assert!(
        cell_at(buffer, "Yes").modifier.contains(Modifier::BOLD),
        "selected"
    );
    assert_eq!(cell_at(buffer, "╭").fg, Color::Yellow);
}

#[test]
fn permission_dialog_typing_what_to_do_instead() {
    let mut dialog = bash_dialog();
    for key in [KeyCode::Down, KeyCode::Down, KeyCode::Enter] {
        assert_eq!(dialog.handle_key(KeyEvent::from(key)), None);
    }
    for c in "use cargo clean".chars() {
        assert_eq!(dialog.handle_key(KeyEvent::from(KeyCode::Char(c))), None);
    }
    let height = dialog.height(64, &Theme::dark());
    assert_snapshot!(screen(&draw_dialog(&dialog, 64, height)));
}

fn edit_dialog() -> PermissionDialog {
    let mut dialog = PermissionDialog::new(
        "req-2",
        "Edit",
        json!({
            "file_path": "src/lib.rs",
            "old_string": "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}",
            "new_string": "/// Adds `a` and `b`.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}",
        }),
        "Edit is not allowed in the default permission mode",
        Some("Edit(src/**)".into()),
    );
    dialog.set_diff_start_line(
        cairn_tui::line_of("use std::fmt;\n\npub fn add", "pub fn add").unwrap(),
    );
    dialog
}

#[test]
fn permission_dialog_for_an_edit_shows_the_diff() {
    let dialog = edit_dialog();
    let height = dialog.height(64, &Theme::dark());
    let terminal = draw_dialog(&dialog, 64, height);
    assert_snapshot!(screen(&terminal));
    assert_eq!(cell_at(terminal.backend().buffer(), "+ ").fg, Color::Green);
}

#[test]
fn a_short_permission_dialog_cuts_the_diff_and_keeps_the_options() {
    let dialog = edit_dialog();
    assert_snapshot!(screen(&draw_dialog(&dialog, 64, 12)));
}

#[test]
fn the_todo_list_is_a_checklist() {
    let todos = json!({"todos": [
        {"content": "Read the failing test", "status": "completed", "activeForm": "Reading the failing test"},
        {"content": "Fix the addition", "status": "in_progress", "activeForm": "Fixing the addition"},
        {"content": "Run the whole test suite and make sure that nothing else broke", "status": "pending", "activeForm": "Running the test suite"},
    ]});
    let mut events = vec![text("Let me plan this.")];
    events.extend(tool_call("t1", "TodoWrite", todos.clone()));
    events.push(assistant_done());
    events.push(AgentEvent::TodosChanged {
        todos: serde_json::from_value::<Vec<TodoItem>>(todos["todos"].clone()).unwrap(),
    });
    events.push(tool_result(
        "t1",
        "TodoWrite",
        "Todos have been updated.",
        false,
    ));
    let transcript = transcript_of(&events);
    assert_eq!(transcript.todos()[1].status, TodoStatus::InProgress);

    let theme = Theme::dark();
    let terminal = draw_lines(48, whole(&transcript, 48, &theme));
    assert_snapshot!(screen(&terminal));
    let buffer = terminal.backend().buffer();
    assert!(
        cell_at(buffer, "Read the")
            .modifier
            .contains(Modifier::CROSSED_OUT)
    );
    assert!(
        cell_at(buffer, "Fix the addition")
            .modifier
            .contains(Modifier::BOLD)
    );
}

#[test]
fn a_transcript_reflows_when_the_terminal_is_resized() {
    let transcript = transcript_of(&conversation());
    let theme = Theme::dark();
    assert!(
        transcript.render_live(80, &theme).is_empty(),
        "the turn is over"
    );
    assert_snapshot!(
        "transcript_80_columns",
        screen(&draw_lines(80, whole(&transcript, 80, &theme)))
    );
    assert_snapshot!(
        "transcript_40_columns",
        screen(&draw_lines(40, whole(&transcript, 40, &theme)))
    );
    for width in [80, 40, 20] {
        for line in whole(&transcript, width, &theme) {
            assert!(
                line.width() <= usize::from(width),
                "{line:?} is wider than {width}"
            );
        }
    }
}

#[test]
fn expanded_thinking_shows_all_of_it() {
    let mut transcript = transcript_of(&conversation()[..2]);
    transcript.set_thinking_display(ThinkingDisplay::Expanded);
    assert_snapshot!(screen(&draw_lines(
        40,
        transcript.render_live(40, &Theme::dark())
    )));
}

#[test]
fn errors_are_red_with_their_reason() {
    let mut events = vec![AgentEvent::UserMessage {
        message: Message::user_text("Read the secrets"),
    }];
    events.extend(tool_call("t1", "Read", json!({"file_path": "/repo/.env"})));
    events.push(assistant_done());
    events.push(tool_result(
        "t1",
        "Read",
        "Permission to use Read was denied: Read(./.env) is in the deny list.\nThe model should not retry.",
        true,
    ));
    events.push(AgentEvent::Warning {
        message: "The context is 91% full; older turns will be compacted soon.".into(),
    });
    events.push(turn_finished(TurnEnd::Failed {
        message: "API error 529 (overloaded): gave up after 10 attempts".into(),
    }));
    let theme = Theme::dark();
    let terminal = draw_lines(60, whole(&transcript_of(&events), 60, &theme));
    assert_snapshot!(screen(&terminal));

    let buffer = terminal.backend().buffer();
    assert_eq!(cell_at(buffer, "API error").fg, Color::Red);
    assert_eq!(cell_at(buffer, "✗").fg, Color::Red);
    assert_eq!(cell_at(buffer, "Permission to use").fg, Color::Red);
    assert_eq!(cell_at(buffer, "The context").fg, Color::Yellow);
}

#[test]
fn a_prompt_shows_its_attachment_as_a_dim_line_not_its_contents() {
    let lock: String = (1..=3780).map(|n| format!("checksum {n}\n")).collect();
    let events = [AgentEvent::UserMessage {
        message: Message {
            role: cairn_protocol::Role::User,
            content: vec![
                ContentBlock::text(
                    "<bash-input>cargo update</bash-input>\n\
                     <bash-stdout>Updating 3 packages</bash-stdout>\n<bash-stderr></bash-stderr>",
                ),
                ContentBlock::text("what changed in @Cargo.lock?"),
                ContentBlock::text(format!("Contents of Cargo.lock:\n```\n{lock}```")),
                ContentBlock::text("<system-reminder>\nOn branch main\n</system-reminder>"),
            ],
        },
    }];
    let theme = Theme::dark();
    let terminal = draw_lines(60, whole(&transcript_of(&events), 60, &theme));
    assert_snapshot!(screen(&terminal));

    let buffer = terminal.backend().buffer();
    assert!(cell_at(buffer, "Attached").modifier.contains(Modifier::DIM));
    assert!(
        !cell_at(buffer, "what changed")
            .modifier
            .contains(Modifier::DIM)
    );
}

#[test]
fn tool_calls_wait_in_the_live_region_until_their_results_arrive() {
    let mut events = vec![text("Searching.")];
    events.extend(tool_call(
        "t1",
        "Grep",
        json!({"pattern": "fn main", "path": "src"}),
    ));
    events.extend(tool_call("t2", "Glob", json!({"pattern": "**/*.toml"})));
    events.push(assistant_done());
    events.push(tool_result(
        "t2",
        "Glob",
        "Cargo.toml\ncrates/tui/Cargo.toml",
        false,
    ));
    let mut transcript = transcript_of(&events);
    let theme = Theme::dark();
    // The text is finished; the Glob result waits behind the Grep call that came first.
    assert_snapshot!(
        "waiting_finished",
        screen(&draw_lines(40, transcript.take_unflushed(40, &theme)))
    );
    assert_snapshot!(
        "waiting_live",
        screen(&draw_lines(40, transcript.render_live(40, &theme)))
    );
    transcript.apply(&tool_result(
        "t1",
        "Grep",
        "src/main.rs\nsrc/bin/tool.rs",
        false,
    ));
    assert!(transcript.render_live(40, &theme).is_empty());
    assert_snapshot!(
        "waiting_flushed",
        screen(&draw_lines(40, transcript.take_unflushed(40, &theme)))
    );
}

#[test]
fn the_status_line() {
    let mut status = StatusLine::new("claude-sonnet-4-5", "acceptEdits");
    status.context_window = Some(200_000);
    status.context_tokens = 170_000;
    status.cost_usd = 0.0123;
    let theme = Theme::dark();
    let mut terminal = Terminal::new(TestBackend::new(70, 1)).unwrap();
    terminal
        .draw(|frame| frame.render_widget(status.widget(&theme), frame.area()))
        .unwrap();
    assert_snapshot!(screen(&terminal));
    let buffer = terminal.backend().buffer();
    assert_eq!(cell_at(buffer, "acceptEdits").fg, Color::Magenta);
    assert_eq!(cell_at(buffer, "85%").fg, Color::Yellow);
}

#[test]
fn no_color_leaves_no_colour_in_the_buffer() {
    let theme = Theme::from_env(Appearance::Dark, Some("1".as_ref()));
    let transcript = transcript_of(&conversation());
    let mut lines = whole(&transcript, 60, &theme);
    lines.extend(render_markdown(
        "# Title\n\n```rust\nfn main() {}\n```\n\n> quote [link](https://x.dev)",
        60,
        &theme,
    ));
    let mut terminal = draw_lines(60, lines);
    let mut buffers = vec![terminal.backend().buffer().clone()];

    let dialog = edit_dialog();
    let status = StatusLine::new("model", "bypassPermissions");
    terminal = Terminal::new(TestBackend::new(60, 30)).unwrap();
    terminal
        .draw(|frame| {
            frame.render_widget(dialog.widget(&theme), Rect::new(0, 0, 60, 29));
            frame.render_widget(status.widget(&theme), Rect::new(0, 29, 60, 1));
        })
        .unwrap();
    buffers.push(terminal.backend().buffer().clone());

    for buffer in &buffers {
        for cell in &buffer.content {
            assert_eq!(
                (cell.fg, cell.bg),
                (Color::Reset, Color::Reset),
                "{:?} has colour",
                cell.symbol()
            );
        }
    }
    // Attributes stay: the heading is still bold.
    assert!(
        cell_at(&buffers[0], "Title")
            .modifier
            .contains(Modifier::BOLD)
    );
}
