//! Tests of [`super::Composer`]: editing keys, placeholders of long pastes, and the window
//! of rows the input box shows.

use pretty_assertions::assert_eq;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Paragraph, Widget};

use super::*;

const SEVEN_LINES: &str = "1\n2\n3\n4\n5\n6\n7";
/// A man, a woman and a girl joined by ZWJs: one cluster of five code points.
const FAMILY: &str = "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}";
/// France and Germany: two clusters of two regional indicators each.
const FLAGS: &str = "\u{1f1eb}\u{1f1f7}\u{1f1e9}\u{1f1ea}";

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::from(code)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn alt(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::ALT)
}

fn typed(composer: &mut Composer, text: &str) {
    for c in text.chars() {
        composer.handle_key(key(KeyCode::Char(c)));
    }
}

fn pressed(composer: &mut Composer, keys: &[KeyEvent]) {
    for &key in keys {
        composer.handle_key(key);
    }
}

/// The text with `|` where the cursor is.
fn shown(composer: &Composer) -> String {
    let mut text = composer.text().to_string();
    text.insert(composer.cursor(), '|');
    text
}

fn submitted(composer: &mut Composer) -> Edit {
    composer.handle_key(key(KeyCode::Enter))
}

#[test]
fn enter_submits_and_empties_the_box() {
    let mut composer = Composer::default();
    typed(&mut composer, "héllo");
    assert_eq!(submitted(&mut composer), Edit::Submitted("héllo".into()));
    assert!(composer.is_empty());
}

#[test]
fn newlines_come_from_ctrl_j_alt_enter_and_a_trailing_backslash() {
    let mut composer = Composer::default();
    typed(&mut composer, "a");
    composer.handle_key(ctrl('j'));
    typed(&mut composer, "b");
    composer.handle_key(alt(KeyCode::Enter));
    typed(&mut composer, "c\\");
    assert_eq!(submitted(&mut composer), Edit::Changed);
    typed(&mut composer, "d");
    assert_eq!(composer.text(), "a\nb\nc\nd");
}

#[test]
fn cursor_keys_edit_in_the_middle() {
    let mut composer = Composer::default();
    typed(&mut composer, "acé");
    composer.handle_key(key(KeyCode::Left));
    composer.handle_key(key(KeyCode::Left));
    typed(&mut composer, "b");
    composer.handle_key(key(KeyCode::End));
    composer.handle_key(key(KeyCode::Backspace));
    composer.handle_key(key(KeyCode::Home));
    composer.handle_key(key(KeyCode::Delete));
    composer.handle_key(key(KeyCode::Right));
    typed(&mut composer, "!");
    assert_eq!(composer.text(), "b!c");
}

#[test]
fn a_long_paste_shows_as_a_placeholder_and_is_sent_whole() {
    let mut composer = Composer::default();
    typed(&mut composer, "see ");
    composer.paste("1\r\n2\n3\n4\n5\n6\n7");
    assert_eq!(composer.text(), "see [Pasted 7 lines]");
    assert_eq!(
        submitted(&mut composer),
        Edit::Submitted(format!("see {SEVEN_LINES}"))
    );
}

#[test]
fn a_short_paste_is_inserted_as_it_is() {
    let mut composer = Composer::default();
    composer.paste("one\ntwo");
    assert_eq!(composer.text(), "one\ntwo");
}

#[test]
fn backspace_after_a_placeholder_removes_it_with_its_paste() {
    let mut composer = Composer::default();
    typed(&mut composer, "see ");
    composer.paste(SEVEN_LINES);
    composer.handle_key(key(KeyCode::Backspace));
    assert_eq!(shown(&composer), "see |");
    typed(&mut composer, "nothing");
    assert_eq!(
        submitted(&mut composer),
        Edit::Submitted("see nothing".into())
    );
}

#[test]
fn delete_before_a_placeholder_removes_it_with_its_paste() {
    let mut composer = Composer::default();
    composer.paste(SEVEN_LINES);
    typed(&mut composer, " end");
    composer.handle_key(key(KeyCode::Home));
    composer.handle_key(key(KeyCode::Delete));
    assert_eq!(shown(&composer), "| end");
    assert_eq!(submitted(&mut composer), Edit::Submitted(" end".into()));
}

#[test]
fn the_cursor_steps_over_a_placeholder_and_typing_goes_around_it() {
    let mut composer = Composer::default();
    typed(&mut composer, "ab");
    composer.handle_key(key(KeyCode::Left));
    composer.paste(SEVEN_LINES);
    assert_eq!(shown(&composer), "a[Pasted 7 lines]|b");
    composer.handle_key(key(KeyCode::Left));
    assert_eq!(shown(&composer), "a|[Pasted 7 lines]b");
    typed(&mut composer, "x");
    composer.handle_key(key(KeyCode::Right));
    assert_eq!(shown(&composer), "ax[Pasted 7 lines]|b");
    typed(&mut composer, "y");
    assert_eq!(
        submitted(&mut composer),
        Edit::Submitted(format!("ax{SEVEN_LINES}yb"))
    );
}

#[test]
fn word_and_line_keys_take_a_placeholder_whole() {
    for keys in [
        vec![ctrl('w')],
        vec![alt(KeyCode::Backspace)],
        vec![ctrl('u')],
        vec![alt(KeyCode::Char('b')), alt(KeyCode::Char('d'))],
        vec![ctrl('a'), ctrl('k')],
    ] {
        let mut composer = Composer::default();
        composer.paste(SEVEN_LINES);
        pressed(&mut composer, &keys);
        assert_eq!(shown(&composer), "|", "after {keys:?}");
        assert_eq!(submitted(&mut composer), Edit::Submitted(String::new()));
    }
    // Moving by words steps over it too.
    let mut composer = Composer::default();
    typed(&mut composer, "see ");
    composer.paste(SEVEN_LINES);
    composer.handle_key(alt(KeyCode::Char('b')));
    assert_eq!(shown(&composer), "see |[Pasted 7 lines]");
    composer.handle_key(KeyEvent::new(KeyCode::Right, KeyModifiers::CONTROL));
    assert_eq!(shown(&composer), "see [Pasted 7 lines]|");
}

#[test]
fn edits_around_placeholders_keep_every_paste() {
    let mut composer = Composer::default();
    // Text that looks like a placeholder but was typed is sent as typed.
    typed(&mut composer, "[Pasted 7 lines] ");
    composer.paste(SEVEN_LINES);
    composer.paste("a\nb\nc\nd\ne\nf");
    assert_eq!(
        composer.text(),
        "[Pasted 7 lines] [Pasted 7 lines #2][Pasted 6 lines]"
    );
    composer.handle_key(key(KeyCode::Home));
    composer.handle_key(ctrl('k'));
    composer.paste("one\ntwo");
    composer.handle_key(key(KeyCode::Backspace));
    assert_eq!(composer.text(), "one\ntw");
    typed(&mut composer, "o ");
    composer.paste(SEVEN_LINES);
    composer.paste("a\nb\nc\nd\ne\nf");
    composer.handle_key(key(KeyCode::Left));
    composer.handle_key(key(KeyCode::Backspace));
    assert_eq!(
        submitted(&mut composer),
        Edit::Submitted("one\ntwo a\nb\nc\nd\ne\nf".into())
    );
}

#[test]
fn a_draft_given_back_after_history_keeps_its_pastes() {
    let mut composer = Composer::default();
    typed(&mut composer, "look: ");
    composer.paste(SEVEN_LINES);
    let draft = composer.text().to_string();
    // Up shows an older prompt over the draft, Down gives the draft back.
    composer.set_text("an older prompt");
    composer.set_text(&draft);
    composer.handle_key(key(KeyCode::Left));
    assert_eq!(shown(&composer), "look: |[Pasted 7 lines]");
    composer.handle_key(key(KeyCode::End));
    composer.paste(SEVEN_LINES);
    assert_eq!(composer.text(), "look: [Pasted 7 lines][Pasted 7 lines #2]");
    assert_eq!(
        submitted(&mut composer),
        Edit::Submitted(format!("look: {SEVEN_LINES}{SEVEN_LINES}"))
    );
    // Once sent, the pastes are gone: the placeholder is only text.
    composer.set_text(&draft);
    assert_eq!(submitted(&mut composer), Edit::Submitted(draft));
}

#[test]
fn set_text_and_completion_replace_text_and_move_the_cursor() {
    let mut composer = Composer::default();
    composer.set_text("one\ntwo");
    assert_eq!(
        (composer.cursor(), composer.cursor_on_first_line()),
        (7, false)
    );
    assert!(composer.cursor_on_last_line());
    composer.handle_key(key(KeyCode::Home));
    composer.handle_key(key(KeyCode::Left));
    assert!(composer.cursor_on_first_line() && !composer.cursor_on_last_line());
    composer.set_text("read @no");
    composer.replace_before_cursor(5, "@src/notes.txt ");
    assert_eq!(composer.text(), "read @src/notes.txt ");
    assert_eq!(composer.cursor(), composer.text().len());
}

#[test]
fn up_and_down_move_between_lines_keeping_the_column() {
    let mut composer = Composer::default();
    composer.set_text("abcdef\nab\nabcdef");
    composer.handle_key(key(KeyCode::Left));
    assert_eq!(composer.handle_key(key(KeyCode::Up)), Edit::Changed);
    assert_eq!(shown(&composer), "abcdef\nab|\nabcdef");
    composer.handle_key(key(KeyCode::Up));
    assert_eq!(shown(&composer), "abcde|f\nab\nabcdef");
    // On the first line Up is left to the history.
    assert_eq!(composer.handle_key(key(KeyCode::Up)), Edit::Ignored);
    pressed(&mut composer, &[key(KeyCode::Down), key(KeyCode::Down)]);
    assert_eq!(shown(&composer), "abcdef\nab\nabcde|f");
    assert_eq!(composer.handle_key(key(KeyCode::Down)), Edit::Ignored);
    // Any other key sets a new column.
    pressed(&mut composer, &[key(KeyCode::Home), key(KeyCode::Up)]);
    assert_eq!(shown(&composer), "abcdef\n|ab\nabcdef");
}

#[test]
fn up_and_down_go_by_screen_columns_over_wide_chars_and_placeholders() {
    let mut composer = Composer::default();
    composer.set_text("日本語\nabc");
    composer.handle_key(key(KeyCode::Up));
    // Column 3 is the middle of 本: the cursor stops before it.
    assert_eq!(shown(&composer), "日|本語\nabc");
    composer.handle_key(key(KeyCode::Down));
    assert_eq!(shown(&composer), "日本語\nabc|");

    let mut composer = Composer::default();
    composer.paste(SEVEN_LINES);
    composer.handle_key(ctrl('j'));
    typed(&mut composer, "a long second line");
    // Column 18 is past the placeholder's end, column 5 inside it: never inside.
    composer.handle_key(key(KeyCode::Up));
    assert_eq!(shown(&composer), "[Pasted 7 lines]|\na long second line");
    pressed(&mut composer, &[key(KeyCode::Down), ctrl('a')]);
    pressed(
        &mut composer,
        &[alt(KeyCode::Char('f')), alt(KeyCode::Char('f'))],
    );
    assert_eq!(shown(&composer), "[Pasted 7 lines]\na long| second line");
    composer.handle_key(key(KeyCode::Up));
    assert_eq!(shown(&composer), "|[Pasted 7 lines]\na long second line");
}

#[test]
fn word_keys_move_and_delete_by_words() {
    let mut composer = Composer::default();
    typed(&mut composer, "git commit-tree  héllo");
    composer.handle_key(alt(KeyCode::Char('b')));
    assert_eq!(shown(&composer), "git commit-tree  |héllo");
    composer.handle_key(KeyEvent::new(KeyCode::Left, KeyModifiers::CONTROL));
    assert_eq!(shown(&composer), "git commit-|tree  héllo");
    composer.handle_key(alt(KeyCode::Char('f')));
    assert_eq!(shown(&composer), "git commit-tree|  héllo");
    composer.handle_key(alt(KeyCode::Char('d')));
    assert_eq!(shown(&composer), "git commit-tree|");
    composer.handle_key(alt(KeyCode::Backspace));
    assert_eq!(shown(&composer), "git commit-|");
    composer.handle_key(ctrl('w'));
    assert_eq!(shown(&composer), "git |");
    composer.handle_key(ctrl('w'));
    assert_eq!(shown(&composer), "|");
}

#[test]
fn line_keys_kill_to_either_end_and_join_lines() {
    let mut composer = Composer::default();
    composer.set_text("one\ntwo three\nfour");
    pressed(&mut composer, &[key(KeyCode::Up), ctrl('a')]);
    pressed(&mut composer, &[alt(KeyCode::Char('f')), ctrl('k')]);
    assert_eq!(shown(&composer), "one\ntwo|\nfour");
    composer.handle_key(ctrl('k'));
    assert_eq!(shown(&composer), "one\ntwo|four");
    composer.handle_key(ctrl('u'));
    assert_eq!(shown(&composer), "one\n|four");
    composer.handle_key(ctrl('u'));
    assert_eq!(shown(&composer), "one|four");
    composer.handle_key(ctrl('e'));
    composer.handle_key(ctrl('u'));
    assert_eq!(shown(&composer), "|");
}

#[test]
fn layout_wraps_rows_and_places_the_cursor() {
    let mut composer = Composer::default();
    typed(&mut composer, "abcdef");
    composer.handle_key(ctrl('j'));
    typed(&mut composer, "g");
    assert_eq!(
        composer.layout(4, 10),
        InputLayout {
            rows: vec!["abcd".into(), "ef".into(), "g".into()],
            first_row: 0,
            cursor: (1, 2),
        }
    );
}

#[test]
fn a_tall_input_shows_the_rows_around_the_cursor() {
    let lines: Vec<String> = (0..10).map(|n| format!("line {n}")).collect();
    let mut composer = Composer::default();
    composer.set_text(&lines.join("\n"));
    let window = |composer: &Composer| {
        let layout = composer.layout(20, 3);
        (layout.first_row, layout.rows.join("|"), layout.cursor)
    };
    assert_eq!(
        window(&composer),
        (7, "line 7|line 8|line 9".into(), (6, 2))
    );
    // The window stays put while the cursor moves inside it, then follows it.
    pressed(&mut composer, &[key(KeyCode::Up), key(KeyCode::Up)]);
    assert_eq!(
        window(&composer),
        (7, "line 7|line 8|line 9".into(), (6, 0))
    );
    composer.handle_key(key(KeyCode::Up));
    assert_eq!(
        window(&composer),
        (6, "line 6|line 7|line 8".into(), (6, 0))
    );
    // Typing in the middle wraps a row: the cursor's row is still shown.
    typed(&mut composer, " and then some more words");
    assert_eq!(
        window(&composer),
        (6, "line 6 and then some| more words|line 7".into(), (11, 1))
    );
    // When rows below go, the window moves up rather than show empty rows.
    composer.set_text(&lines.join("\n"));
    assert_eq!(window(&composer).0, 7);
    pressed(&mut composer, &[key(KeyCode::Up), key(KeyCode::Up)]);
    pressed(&mut composer, &[ctrl('k'), ctrl('k'), ctrl('k'), ctrl('k')]);
    assert_eq!(
        window(&composer),
        (5, "line 5|line 6|line 7".into(), (6, 2))
    );
}

/// The column after the last cell ratatui fills when it draws `row` (which ends in a
/// visible character).
fn drawn_width(row: &str) -> usize {
    let area = Rect::new(0, 0, 40, 1);
    let mut buffer = Buffer::empty(area);
    Paragraph::new(row.to_string()).render(area, &mut buffer);
    (0..area.width)
        .filter(|&x| buffer[(x, 0)].symbol() != " ")
        .map(|x| usize::from(x) + usize::from(buffer[(x, 0)].cell_width()))
        .max()
        .unwrap_or(0)
}

#[test]
fn left_right_and_deletion_step_over_whole_clusters() {
    // An e with a combining acute: Left never stops between them, Backspace takes both.
    let mut composer = Composer::default();
    composer.set_text("xe\u{301}y");
    composer.handle_key(key(KeyCode::Left));
    assert_eq!(shown(&composer), "xe\u{301}|y");
    composer.handle_key(key(KeyCode::Left));
    assert_eq!(shown(&composer), "x|e\u{301}y");
    composer.handle_key(key(KeyCode::Right));
    composer.handle_key(key(KeyCode::Backspace));
    assert_eq!(shown(&composer), "x|y");
    composer.set_text("xe\u{301}y");
    pressed(&mut composer, &[ctrl('a'), key(KeyCode::Right)]);
    composer.handle_key(key(KeyCode::Delete));
    assert_eq!(shown(&composer), "x|y");

    // A flag is two regional indicators, never split.
    composer.set_text(FLAGS);
    composer.handle_key(key(KeyCode::Left));
    assert_eq!(shown(&composer), "\u{1f1eb}\u{1f1f7}|\u{1f1e9}\u{1f1ea}");
    composer.handle_key(key(KeyCode::Backspace));
    assert_eq!(shown(&composer), "|\u{1f1e9}\u{1f1ea}");
    composer.handle_key(key(KeyCode::Delete));
    assert_eq!(shown(&composer), "|");

    // A ZWJ family is one step and one deletion.
    composer.set_text(&format!("a{FAMILY}b"));
    pressed(&mut composer, &[key(KeyCode::Left), key(KeyCode::Left)]);
    assert_eq!(shown(&composer), format!("a|{FAMILY}b"));
    composer.handle_key(key(KeyCode::Right));
    assert_eq!(shown(&composer), format!("a{FAMILY}|b"));
    composer.handle_key(key(KeyCode::Backspace));
    assert_eq!(shown(&composer), "a|b");

    // CJK: one char, one cluster, two columns.
    composer.set_text("日本語");
    pressed(
        &mut composer,
        &[key(KeyCode::Left), key(KeyCode::Backspace)],
    );
    assert_eq!(shown(&composer), "日|語");
    assert_eq!(composer.layout(20, 1).cursor, (2, 0));
}

#[test]
fn word_keys_take_a_letter_with_its_marks_as_a_letter() {
    let mut composer = Composer::default();
    composer.set_text("nai\u{308}ve cafe\u{301}");
    composer.handle_key(alt(KeyCode::Backspace));
    assert_eq!(shown(&composer), "nai\u{308}ve |");
    composer.handle_key(alt(KeyCode::Char('b')));
    assert_eq!(shown(&composer), "|nai\u{308}ve ");
    composer.handle_key(alt(KeyCode::Char('f')));
    assert_eq!(shown(&composer), "nai\u{308}ve| ");
    composer.set_text(&format!("see {FAMILY}{FAMILY} now"));
    pressed(&mut composer, &[ctrl('w'), ctrl('w')]);
    assert_eq!(shown(&composer), "see |");
}

#[test]
fn the_cursor_column_is_where_ratatui_draws_the_next_cell() {
    for (text, columns) in [
        ("xe\u{301}y", 3),
        ("e\u{301}\u{302}\u{303}", 1),
        (FLAGS, 4),
        (FAMILY, 2),
        ("\u{1f44d}\u{1f3fd}", 2), // a thumbs up with a skin tone
        ("日本語", 6),
        ("a\u{200b}b", 2), // a zero-width space between
    ] {
        let mut composer = Composer::default();
        composer.set_text(text);
        let layout = composer.layout(20, 1);
        assert_eq!(layout.rows, vec![text.to_string()], "{text:?}");
        assert_eq!(
            (layout.cursor, drawn_width(text)),
            ((columns, 0), usize::from(columns)),
            "{text:?}"
        );
    }
    // ratatui gives a halfwidth voicing mark a cell of its own, whatever unicode-width says;
    // the cursor follows ratatui.
    let mut composer = Composer::default();
    composer.set_text("\u{ff76}\u{ff9e}");
    let column = composer.layout(20, 1).cursor.0;
    assert_eq!(usize::from(column), drawn_width("\u{ff76}\u{ff9e}"));
}

#[test]
fn rows_break_between_clusters_and_a_wide_one_that_does_not_fit_goes_down() {
    let cases = [
        ("日本語", 5, vec!["日本", "語"], (2, 1)),
        (
            FLAGS,
            3,
            vec!["\u{1f1eb}\u{1f1f7}", "\u{1f1e9}\u{1f1ea}"],
            (2, 1),
        ),
        (
            "xe\u{301}e\u{301}",
            2,
            vec!["xe\u{301}", "e\u{301}"],
            (1, 1),
        ),
    ];
    for (text, width, rows, cursor) in cases {
        let mut composer = Composer::default();
        composer.set_text(text);
        assert_eq!(
            composer.layout(width, 5),
            InputLayout {
                rows: rows.into_iter().map(String::from).collect(),
                first_row: 0,
                cursor,
            },
            "{text:?} at {width}"
        );
    }
    // A cursor before a wide char that went down shows where that char is drawn.
    let mut composer = Composer::default();
    composer.set_text(&format!("ab{FAMILY}"));
    composer.handle_key(key(KeyCode::Left));
    let layout = composer.layout(3, 5);
    assert_eq!(
        (layout.rows, layout.cursor),
        (vec!["ab".into(), FAMILY.into()], (0, 1))
    );
}

#[test]
fn up_and_down_move_by_wrapped_rows_in_one_long_line() {
    let mut composer = Composer::default();
    composer.layout(120, 10);
    // 2,000 columns at 120 a row: 16 full rows and 80 columns on the 17th.
    composer.set_text(&"x".repeat(2000));
    assert!(composer.cursor_on_last_line() && !composer.cursor_on_first_line());
    assert_eq!(composer.handle_key(key(KeyCode::Up)), Edit::Changed);
    assert_eq!(composer.cursor(), 1880);
    composer.handle_key(ctrl('a'));
    assert!(composer.cursor_on_first_line() && !composer.cursor_on_last_line());
    assert_eq!(composer.handle_key(key(KeyCode::Up)), Edit::Ignored);
    assert_eq!(composer.handle_key(key(KeyCode::Down)), Edit::Changed);
    assert_eq!(composer.cursor(), 120);

    // The goal column holds across rows of wide chars and a line break.
    composer.layout(5, 10);
    composer.set_text("日本語日本語\nabcdefg");
    assert_eq!(
        composer.layout(5, 10).rows,
        vec!["日本", "語日", "本語", "abcde", "fg"]
    );
    composer.handle_key(key(KeyCode::Up));
    assert_eq!(shown(&composer), "日本語日本語\nab|cdefg");
    composer.handle_key(key(KeyCode::Up));
    // Column 2 is the start of 語 on the row above.
    assert_eq!(shown(&composer), "日本語日本|語\nabcdefg");
    pressed(&mut composer, &[key(KeyCode::Up), key(KeyCode::Up)]);
    assert_eq!(shown(&composer), "日|本語日本語\nabcdefg");
    assert!(composer.cursor_on_first_line());
    pressed(&mut composer, &[key(KeyCode::Down), key(KeyCode::Down)]);
    assert_eq!(shown(&composer), "日本語日本|語\nabcdefg");
    pressed(&mut composer, &[key(KeyCode::Down), key(KeyCode::Down)]);
    assert_eq!(shown(&composer), "日本語日本語\nabcdefg|");
    assert_eq!(composer.handle_key(key(KeyCode::Down)), Edit::Ignored);
}

#[test]
fn up_and_down_stop_beside_a_placeholder_wrapped_over_rows() {
    let mut composer = Composer::default();
    composer.paste(SEVEN_LINES);
    typed(&mut composer, "abc");
    assert_eq!(
        composer.layout(6, 10).rows,
        vec!["[Paste", "d 7 li", "nes]ab", "c"]
    );
    composer.handle_key(key(KeyCode::Up));
    // Columns 0 to 3 of that row are inside the placeholder: the nearest place is after it.
    assert_eq!(shown(&composer), "[Pasted 7 lines]|abc");
    composer.handle_key(key(KeyCode::Up));
    assert_eq!(shown(&composer), "|[Pasted 7 lines]abc");
    assert!(composer.cursor_on_first_line());
    composer.handle_key(key(KeyCode::Down));
    assert_eq!(shown(&composer), "[Pasted 7 lines]|abc");
    composer.handle_key(key(KeyCode::Down));
    assert_eq!(shown(&composer), "[Pasted 7 lines]abc|");
}

#[test]
fn a_mark_typed_after_a_placeholder_never_puts_the_cursor_inside_it() {
    let mut composer = Composer::default();
    composer.paste(SEVEN_LINES);
    // The mark joins the placeholder's `]` in one cluster, but stays a unit of its own.
    typed(&mut composer, "\u{301}");
    composer.handle_key(key(KeyCode::Left));
    assert_eq!(shown(&composer), "[Pasted 7 lines]|\u{301}");
    composer.handle_key(key(KeyCode::Left));
    assert_eq!(shown(&composer), "|[Pasted 7 lines]\u{301}");
    composer.handle_key(key(KeyCode::End));
    composer.handle_key(key(KeyCode::Backspace));
    assert_eq!(
        submitted(&mut composer),
        Edit::Submitted(SEVEN_LINES.into())
    );

    // An Arabic number sign joins the `[` after it in one cluster, the same way.
    typed(&mut composer, "\u{600}");
    composer.paste(SEVEN_LINES);
    pressed(&mut composer, &[ctrl('a'), key(KeyCode::Right)]);
    assert_eq!(shown(&composer), "\u{600}|[Pasted 7 lines]");
    composer.handle_key(key(KeyCode::Delete));
    assert_eq!(submitted(&mut composer), Edit::Submitted("\u{600}".into()));
}
