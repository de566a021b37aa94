//! Snapshots of the session picker `cairn --resume` shows: its lines drawn into ratatui's
//! `TestBackend`, with the style of the selected line checked where it is the point.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_tui::Theme;
use cairn_tui::picker::{PickerEntry, render_picker};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

fn draw(width: u16, lines: Vec<Line<'static>>) -> String {
    let height = u16::try_from(lines.len().max(1)).unwrap();
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| frame.render_widget(Paragraph::new(lines), frame.area()))
        .unwrap();
    terminal.backend().to_string()
}

fn sessions() -> Vec<PickerEntry> {
    vec![
        PickerEntry {
            id: "0b5a6a9e-0000-4000-8000-000000000002".into(),
            // 2024-03-05 14:07 UTC.
            started_at_ms: 1_709_647_629_000,
            message_count: 12,
            cost_usd: 0.4321,
            first_prompt: "refactor the session store so that listing is cheap on big projects"
                .into(),
            failed: false,
        },
        PickerEntry {
            id: "0b5a6a9e-0000-4000-8000-000000000001".into(),
            started_at_ms: 1_709_560_000_000,
            message_count: 2,
            cost_usd: 0.0,
            first_prompt: "why does \u{1b}[31mthe build\u{1b}[0m fail?".into(),
            failed: false,
        },
        PickerEntry {
            id: "0b5a6a9e-0000-4000-8000-000000000000".into(),
            started_at_ms: 1_709_000_000_000,
            message_count: 0,
            cost_usd: 0.0,
            first_prompt: String::new(),
            failed: false,
        },
    ]
}

#[test]
fn the_picker_lists_sessions_newest_first_with_the_cursor_on_the_second() {
    let theme = Theme::plain();
    let lines = render_picker(&sessions(), 1, 80, &theme);
    assert_snapshot!(draw(80, lines));
}

#[test]
fn a_narrow_picker_cuts_the_prompts() {
    let theme = Theme::plain();
    let lines = render_picker(&sessions(), 0, 30, &theme);
    assert_snapshot!(draw(30, lines));
}

#[test]
fn the_selected_session_is_drawn_in_the_selected_style() {
    let theme = Theme::dark();
    let lines = render_picker(&sessions(), 1, 80, &theme);
    assert_eq!(lines.len(), 5);
    let selected = &lines[2];
    assert_eq!(selected.spans[0].content, "❯ ");
    assert!(
        selected
            .spans
            .iter()
            .all(|span| span.style == theme.selected),
        "{selected:?}"
    );
    assert_eq!(lines[1].spans[0].content, "  ");
}

#[test]
fn a_failed_session_is_listed_as_failed_not_as_its_messages() {
    let theme = Theme::plain();
    let mut listed = sessions();
    listed[1].failed = true;
    let screen = draw(80, render_picker(&listed, 0, 80, &theme));
    let row = screen
        .lines()
        .find(|line| line.contains("the build"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(row.contains("  failed  $0.00"), "{row}");
    assert!(!row.contains("messages"), "{row}");
}
