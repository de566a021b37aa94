//! Snapshots of the dialogs of the tools that talk to the user: the plan `ExitPlanMode`
//! presents (as Markdown, with the three ways to answer) and the questions of
//! `AskUserQuestion` (a multi-select question with two choices ticked, and "Other").

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_tui::{PermissionDialog, Theme};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use serde_json::json;

fn drawn(dialog: &PermissionDialog, width: u16) -> String {
    let theme = Theme::dark();
    let height = dialog.height(width, &theme);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| frame.render_widget(dialog.widget(&theme), frame.area()))
        .unwrap();
    terminal.backend().to_string()
}

#[test]
fn the_plan_shows_as_markdown_with_its_three_answers() {
    let dialog = PermissionDialog::new(
        "req-1",
        "ExitPlanMode",
        json!({"plan": "# Fix the counter\n\n1. Change `count` in **src/lib.rs**.\n2. Add a test."}),
        "The model has finished planning and asks to leave plan mode with this plan.",
        None,
    );
    assert_snapshot!(drawn(&dialog, 64));
}

#[test]
fn a_multi_select_question_shows_its_ticks_and_other() {
    let mut dialog = PermissionDialog::new(
        "req-2",
        "AskUserQuestion",
        json!({"questions": [{
            "question": "Which extras should the service have?",
            "header": "Extras",
            "options": [
                {"label": "Logging", "description": "Lines on stderr"},
                {"label": "Metrics", "description": "A /metrics page"},
                {"label": "Tracing", "description": "Spans to a collector"}
            ],
            "multiSelect": true
        }]}),
        "The model has questions for you.",
        None,
    );
    for key in [
        KeyCode::Char(' '),
        KeyCode::Down,
        KeyCode::Down,
        KeyCode::Char(' '),
    ] {
        assert_eq!(dialog.handle_key(KeyEvent::from(key)), None);
    }
    assert_snapshot!(drawn(&dialog, 64));
}
