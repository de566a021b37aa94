//! Snapshots of the external-imports question cairn asks before the first prompt.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::PathBuf;

use cairn_context::instructions::{ExternalImport, ImportStatus, Reach};
use cairn_tui::{ImportsAnswer, ImportsDialog, Theme};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::style::{Color, Modifier};

fn import(path: &str, by: &str, reach: Reach) -> ExternalImport {
    ExternalImport {
        path: PathBuf::from(path),
        by: PathBuf::from(by),
        reach,
        status: ImportStatus::Skipped,
    }
}

fn draw(dialog: &ImportsDialog, width: u16, height: u16) -> Terminal<TestBackend> {
    let theme = Theme::dark();
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| frame.render_widget(dialog.widget(&theme), frame.area()))
        .unwrap();
    terminal
}

fn two_imports() -> ImportsDialog {
    ImportsDialog::new(vec![
        import("/home/me/.ssh/id_rsa", "/work/app/CLAUDE.md", Reach::Import),
        import(
            "/srv/team/style.md",
            "/work/app/.claude/rules/style.md",
            Reach::Symlink,
        ),
    ])
}

#[test]
fn the_dialog_lists_each_import_with_the_file_that_asks_for_it() {
    let dialog = two_imports();
    let height = dialog.height(72, &Theme::dark());
    let terminal = draw(&dialog, 72, height);
    assert_snapshot!(terminal.backend().to_string());
    // The cursor starts on "No", drawn in the selected style.
    let buffer = terminal.backend().buffer();
    let row = (0..height)
        .find(|&y| {
            (0..72)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                .contains("❯ 2. No")
        })
        .expect("the cursor is on No");
    let x = (0..72).find(|&x| buffer[(x, row)].symbol() == "N").unwrap();
    assert!(buffer[(x, row)].modifier.contains(Modifier::BOLD));
    assert_eq!(buffer[(0, 0)].fg, Color::Yellow, "the dialog's border");
}

#[test]
fn moving_up_selects_yes_and_enter_includes() {
    let mut dialog = two_imports();
    assert_eq!(dialog.handle_key(KeyEvent::from(KeyCode::Up)), None);
    let terminal = draw(&dialog, 72, dialog.height(72, &Theme::dark()));
    assert_snapshot!(terminal.backend().to_string());
    assert_eq!(
        dialog.handle_key(KeyEvent::from(KeyCode::Enter)),
        Some(ImportsAnswer::Include)
    );
}

#[test]
fn a_long_list_is_counted_and_a_short_terminal_keeps_the_question() {
    let imports = (1..=11)
        .map(|n| {
            import(
                &format!("/srv/shared/notes-{n}.md"),
                "/work/app/CLAUDE.md",
                Reach::Import,
            )
        })
        .collect();
    let dialog = ImportsDialog::new(imports);
    let terminal = draw(&dialog, 60, dialog.height(60, &Theme::dark()));
    assert_snapshot!("long_list", terminal.backend().to_string());
    let short = draw(&dialog, 60, 12);
    assert_snapshot!("short_terminal", short.backend().to_string());
}

#[test]
fn control_characters_in_file_names_are_not_sent_to_the_terminal() {
    let dialog = ImportsDialog::new(vec![import(
        "/tmp/evil\u{1b}[2Jname.md",
        "/work/app/CLAUDE.md",
        Reach::Import,
    )]);
    let terminal = draw(&dialog, 72, dialog.height(72, &Theme::dark()));
    let screen = terminal.backend().to_string();
    assert!(!screen.contains('\u{1b}'), "{screen}");
    assert!(screen.contains("/tmp/evil"), "{screen}");
}
