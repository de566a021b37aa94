//! The new-line keys the help screens name, in a pseudo-terminal: Shift+Enter in a terminal
//! with kitty's keyboard protocol (which cairn asks for, and gives back on the way out), and
//! Alt+Enter, Ctrl+J and `\` then Enter in any terminal. A legacy terminal sends Shift+Enter
//! as Enter, which sends the message: the help says which keys work everywhere.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::Reply;

mod support;
use support::Harness;
use support::terminal::{Terminal, last_user_text};

#[test]
fn shift_enter_starts_a_new_line_where_the_terminal_reports_it() {
    let h = Harness::new();
    h.server.push(Reply::text("Two lines received."));
    let term = Terminal::launch(&h).kitty_keyboard().start();
    assert_eq!(
        term.keyboard_flags() & 1,
        1,
        "cairn asks for the protocol's disambiguated keys"
    );
    term.type_text("first");
    term.wait_for("> first");
    term.press("S-Enter");
    term.type_text("second");
    term.wait_for("second");
    term.press("Enter");
    term.wait_for("Two lines received.");
    assert_eq!(
        last_user_text(&h.server.requests()[0].body),
        "first\nsecond"
    );
    term.press("C-d");
    assert_eq!(term.wait_for_exit(), 0);
    assert_eq!(term.keyboard_flags(), 0, "the terminal is left as it was");
}

#[test]
fn alt_enter_ctrl_j_and_backslash_enter_work_in_a_legacy_terminal() {
    let h = Harness::new();
    h.server.push(Reply::text("Four lines received."));
    let term = Terminal::start(&h);
    assert_eq!(term.keyboard_flags(), 0);
    term.type_text("one");
    term.wait_for("> one");
    term.press("M-Enter");
    term.type_text("two");
    term.wait_for("two");
    term.press("C-j");
    term.type_text("three\\");
    term.wait_for("three\\");
    term.press("Enter");
    term.type_text("four");
    term.wait_for("four");
    term.press("Enter");
    term.wait_for("Four lines received.");
    assert_eq!(
        last_user_text(&h.server.requests()[0].body),
        "one\ntwo\nthree\nfour"
    );
}

#[test]
fn the_shortcut_list_and_help_name_the_same_new_line_keys() {
    let h = Harness::new();
    let term = Terminal::start(&h);
    term.press("?");
    let shortcuts = term.wait_for("new line");
    term.press("Escape");
    term.wait_until("the list to close", |screen| {
        !screen.contains("earlier prompts")
    });
    term.send_line("/help");
    let help = term.wait_for("Keys: Enter sends");
    // From `from` to the "new line" after it, wrapped rows joined by spaces.
    let keys_in = |screen: &str, from: &str| {
        let start = screen.rfind(from).unwrap_or_else(|| panic!("{screen}"));
        let rest = &screen[start..];
        let end = rest
            .find("new line")
            .map_or(rest.len(), |end| end + "new line".len());
        let end = rest[end..].find(')').map_or(end, |close| end + close + 1);
        rest[..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    for keys in [
        keys_in(&shortcuts, "shift+enter"),
        keys_in(&help, "Keys: Enter sends"),
    ] {
        for key in ["shift+enter", "alt+enter", "ctrl+j", "\\ then enter"] {
            assert!(keys.contains(key), "{key} is missing from: {keys}");
        }
    }
}
