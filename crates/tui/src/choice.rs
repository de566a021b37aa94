//! The shape every inline question of the UI shares: a titled box with what is asked about, the
//! question, a numbered list of options with a cursor, and a line of key hints under them.
//!
//! The folder-trust, external-imports and settings-error questions asked before the app starts,
//! the `#` memory type and the permission dialog each keep only what is their own: their text,
//! their options and what an answer means. Each lays itself out as a [`ChoiceBox`] (the
//! [`ChoiceDialog`] trait); this module wraps that into a width, draws it ([`render`]) with the
//! body giving way before the options on a short terminal ([`Overflow`]), answers the list's
//! keys ([`OptionList`]), and runs a question on its own before the app starts
//! ([`ask_inline`]).

use std::borrow::Cow;

use ratatui::backend::CrosstermBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Widget};
use ratatui::{Terminal, TerminalOptions, Viewport};

use crate::picker::RawMode;
use crate::theme::Theme;
use crate::wrap::{Prefix, wrap_words};

/// Columns taken by the border and padding on each side.
const FRAME_WIDTH: u16 = 4;

/// The letters of a yes/no question: `y` chooses the first option, `n` the second.
pub(crate) const YES_NO: &[char] = &['y', 'n'];

/// A dialog drawn as a [`ChoiceBox`].
pub(crate) trait ChoiceDialog {
    /// What the box shows when its inside is `width` columns wide.
    fn layout(&self, width: u16, theme: &Theme) -> ChoiceBox;
}

/// What a dialog shows, laid out for one width.
#[derive(Debug, Clone)]
pub(crate) struct ChoiceBox {
    /// The title on the top border.
    pub title: &'static str,
    /// What is asked about: on a short terminal it gives way first, as `overflow` says.
    pub body: Vec<Line<'static>>,
    pub overflow: Overflow,
    /// The lines just above the options; a blank line separates them from the body.
    pub question: Vec<Line<'static>>,
    pub options: Vec<OptionLabel>,
    /// The option under the cursor.
    pub selected: usize,
    /// Lines under the options (the permission dialog's text field).
    pub below: Vec<Line<'static>>,
    /// The keys to press, dimmed, under a blank line.
    pub hint: &'static str,
}

/// How the body gives way when the box has fewer rows than it needs. The question, the options
/// and the hint always show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overflow {
    /// The body's last lines are left out without a word.
    Cut,
    /// The body's last lines give way to one that counts them: `… +N lines (why)`. With no
    /// row left for the body, not even that line shows.
    Counted(&'static str),
    /// As `Counted`, but the blank lines between the parts go before any of the body does,
    /// and with no row left for the body the count takes the first line after it.
    Squeezed(&'static str),
}

/// One option as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OptionLabel {
    name: Cow<'static, str>,
    note: Option<&'static str>,
}

impl OptionLabel {
    /// An option that is its label (`Yes, proceed`).
    pub(crate) fn plain(label: impl Into<Cow<'static, str>>) -> OptionLabel {
        OptionLabel {
            name: label.into(),
            note: None,
        }
    }

    /// A short name with a dimmed note beside it; the names of a list line up in a column.
    pub(crate) fn noted(name: &'static str, note: &'static str) -> OptionLabel {
        OptionLabel {
            name: Cow::Borrowed(name),
            note: Some(note),
        }
    }
}

/// What a key did to an [`OptionList`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKey {
    /// The cursor moved.
    Moved,
    /// The option at this index was chosen, by Enter, its digit or its letter.
    Chosen(usize),
    /// Esc or Ctrl+C.
    Cancelled,
}

/// The cursor of a numbered option list, and the keys that move it and choose.
///
/// Up and Shift+Tab move up, Down and Tab move down (round at the ends), Enter chooses the
/// option under the cursor, a digit chooses its option directly (and so does a letter, for a
/// list that has them), Esc and Ctrl+C cancel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OptionList {
    len: usize,
    selected: usize,
    /// `letters[i]`, in either case, chooses option `i`.
    letters: &'static [char],
}

impl OptionList {
    /// `len` options with the cursor on `selected`.
    pub(crate) fn new(len: usize, selected: usize) -> OptionList {
        OptionList {
            len,
            selected,
            letters: &[],
        }
    }

    /// The same list, where `letters[i]` (either case) chooses option `i`.
    pub(crate) fn with_letters(self, letters: &'static [char]) -> OptionList {
        OptionList { letters, ..self }
    }

    /// The option under the cursor.
    pub(crate) fn selected(&self) -> usize {
        self.selected
    }

    /// Handles one key; `None` for a key the list does not use (and for key releases).
    pub(crate) fn handle_key(&mut self, key: KeyEvent) -> Option<ListKey> {
        if key.kind == KeyEventKind::Release || self.len == 0 {
            return None;
        }
        match key.code {
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(ListKey::Cancelled)
            }
            KeyCode::Esc => Some(ListKey::Cancelled),
            KeyCode::Enter => Some(ListKey::Chosen(self.selected)),
            KeyCode::Up | KeyCode::BackTab => {
                self.selected = (self.selected + self.len - 1) % self.len;
                Some(ListKey::Moved)
            }
            KeyCode::Down | KeyCode::Tab => {
                self.selected = (self.selected + 1) % self.len;
                Some(ListKey::Moved)
            }
            KeyCode::Char(c) => {
                let digit = c
                    .to_digit(10)
                    .and_then(|digit| usize::try_from(digit).ok())
                    .filter(|&n| (1..=self.len).contains(&n))
                    .map(|n| n - 1);
                let letter = || {
                    self.letters
                        .iter()
                        .take(self.len)
                        .position(|letter| letter.eq_ignore_ascii_case(&c))
                };
                let index = digit.or_else(letter)?;
                self.selected = index;
                Some(ListKey::Chosen(index))
            }
            _ => None,
        }
    }
}

/// `text` in `style`, word-wrapped to `columns` after `prefix`.
pub(crate) fn wrapped<'t>(
    text: impl Into<Cow<'t, str>>,
    style: Style,
    columns: usize,
    prefix: &Prefix,
) -> Vec<Line<'static>> {
    wrap_words(&[Span::styled(text, style)], columns, prefix)
}

impl ChoiceBox {
    /// The body, which may be cut, and the question with the options and the hint, which may
    /// not; `width` is the one the box was laid out for.
    fn into_sections(self, width: u16, theme: &Theme) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
        let columns = usize::from(width);
        let mut fixed = vec![Line::default()];
        fixed.extend(self.question);
        let name_width = self
            .options
            .iter()
            .filter(|option| option.note.is_some())
            .map(|option| option.name.chars().count() + 1)
            .max()
            .unwrap_or(0);
        for (index, option) in self.options.iter().enumerate() {
            let selected = index == self.selected;
            let style = if selected {
                theme.selected
            } else {
                Style::new()
            };
            let pointer = if selected { "❯ " } else { "  " };
            let number = index + 1;
            let (lead, text) = match option.note {
                None => (
                    format!("{pointer}{number}. "),
                    Span::styled(option.name.clone(), style),
                ),
                Some(note) => (
                    format!("{pointer}{number}. {:<name_width$}", option.name),
                    Span::styled(note, theme.dim),
                ),
            };
            fixed.extend(wrap_words(
                &[text],
                columns,
                &Prefix::hanging(Span::styled(lead, style)),
            ));
        }
        fixed.extend(self.below);
        fixed.push(Line::default());
        fixed.extend(wrapped(self.hint, theme.dim, columns, &Prefix::none()));
        (self.body, fixed)
    }
}

/// The body and the rest of `dialog` at inner `width`, as [`render`] stacks them.
pub(crate) fn sections(
    dialog: &impl ChoiceDialog,
    width: u16,
    theme: &Theme,
) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
    dialog.layout(width, theme).into_sections(width, theme)
}

/// The rows `dialog` needs at `width` to show everything, borders included.
pub(crate) fn height(dialog: &impl ChoiceDialog, width: u16, theme: &Theme) -> u16 {
    let inner = width.saturating_sub(FRAME_WIDTH).max(1);
    let (body, fixed) = sections(dialog, inner, theme);
    u16::try_from(body.len() + fixed.len() + 2).unwrap_or(u16::MAX)
}

/// Draws `dialog` into `area`; short of rows, the body gives way as its [`Overflow`] says.
pub(crate) fn render(dialog: &impl ChoiceDialog, area: Rect, buf: &mut Buffer, theme: &Theme) {
    Clear.render(area, buf);
    let width = area.width.saturating_sub(FRAME_WIDTH).max(1);
    let choice = dialog.layout(width, theme);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.dialog_border)
        .padding(Padding::horizontal(1))
        .title(Span::styled(
            format!(" {} ", choice.title),
            theme.dialog_title,
        ));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let overflow = choice.overflow;
    let (body, fixed) = choice.into_sections(width, theme);
    let shown = fit(body, fixed, usize::from(inner.height), overflow, theme);
    for (row, line) in (inner.y..inner.bottom()).zip(shown) {
        buf.set_line(inner.x, row, &line, inner.width);
    }
}

/// The lines to draw in `rows`: the body cut as `overflow` says, then the rest.
fn fit(
    mut body: Vec<Line<'static>>,
    mut fixed: Vec<Line<'static>>,
    rows: usize,
    overflow: Overflow,
    theme: &Theme,
) -> Vec<Line<'static>> {
    match overflow {
        Overflow::Cut => body.truncate(rows.saturating_sub(fixed.len())),
        Overflow::Counted(why) => {
            let room = rows.saturating_sub(fixed.len());
            count_cut(&mut body, room, why, theme);
            body.truncate(room);
        }
        Overflow::Squeezed(why) => {
            if body.len() + fixed.len() > rows {
                fixed.retain(|line| line.width() > 0);
            }
            let room = rows.saturating_sub(fixed.len());
            if count_cut(&mut body, room, why, theme) && room == 0 && !fixed.is_empty() {
                fixed.remove(0);
            }
        }
    }
    body.extend(fixed);
    body
}

/// Cuts `body` to `room` lines, the last of them counting what was cut (so a cut body never
/// goes unsaid); whether it cut anything.
fn count_cut(body: &mut Vec<Line<'static>>, room: usize, why: &str, theme: &Theme) -> bool {
    if body.len() <= room {
        return false;
    }
    let kept = room.saturating_sub(1);
    let hidden = body.len() - kept;
    body.truncate(kept);
    body.push(Line::from(Span::styled(
        format!("… +{hidden} lines ({why})"),
        theme.dim,
    )));
    true
}

/// Asks `dialog` on its own, inline, until `answer` makes an answer of a key; then blanks its
/// rows and leaves the cursor at their top, for what comes next. Reads keys from the terminal
/// and blocks while it does: call it before the app starts, off the async runtime's threads.
pub(crate) fn ask_inline<D: ChoiceDialog, A>(
    mut dialog: D,
    theme: &Theme,
    mut answer: impl FnMut(&mut D, KeyEvent) -> Option<A>,
) -> std::io::Result<A> {
    let _raw = RawMode::enter()?;
    crate::event_reader::take_pending_wake();
    let (columns, rows) = crossterm::terminal::size()?;
    let height = height(&dialog, columns, theme)
        .min(rows.saturating_sub(1))
        .max(3);
    let mut terminal = Terminal::with_options(
        CrosstermBackend::new(std::io::stdout()),
        TerminalOptions {
            viewport: Viewport::Inline(height),
        },
    )?;
    let answer = loop {
        terminal.draw(|frame| render(&dialog, frame.area(), frame.buffer_mut(), theme))?;
        if let Event::Key(key) = crossterm::event::read()?
            && let Some(answer) = answer(&mut dialog, key)
        {
            break answer;
        }
    };
    let mut area = Rect::default();
    let _ = terminal.draw(|frame| {
        area = frame.area();
        frame.render_widget(Clear, area);
    });
    let _ = terminal.set_cursor_position(area.as_position());
    let _ = terminal.show_cursor();
    Ok(answer)
}

/// The rows of `dialog` drawn `width` by `height` in the plain theme, trailing spaces trimmed.
#[cfg(test)]
pub(crate) fn plain_rows(dialog: &impl ChoiceDialog, width: u16, height: u16) -> Vec<String> {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    render(dialog, area, &mut buf, &Theme::plain());
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn keys_move_round_choose_and_cancel() {
        let list = OptionList::new(3, 1).with_letters(YES_NO);
        let answers = [
            (key(KeyCode::Enter), Some(ListKey::Chosen(1))),
            (key(KeyCode::Char('1')), Some(ListKey::Chosen(0))),
            (key(KeyCode::Char('3')), Some(ListKey::Chosen(2))),
            (key(KeyCode::Char('Y')), Some(ListKey::Chosen(0))),
            (key(KeyCode::Char('n')), Some(ListKey::Chosen(1))),
            (key(KeyCode::Esc), Some(ListKey::Cancelled)),
            (
                KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
                Some(ListKey::Cancelled),
            ),
            (key(KeyCode::Char('0')), None),
            (key(KeyCode::Char('4')), None),
            (key(KeyCode::Char('x')), None),
            (key(KeyCode::Left), None),
            (
                KeyEvent {
                    kind: KeyEventKind::Release,
                    ..key(KeyCode::Enter)
                },
                None,
            ),
        ];
        for (pressed, expected) in answers {
            assert_eq!(list.clone().handle_key(pressed), expected, "{pressed:?}");
        }
        let mut moved = list.clone();
        let steps = [
            (KeyCode::Down, 2),
            (KeyCode::Tab, 0),
            (KeyCode::Up, 2),
            (KeyCode::BackTab, 1),
        ];
        for (code, selected) in steps {
            assert_eq!(moved.handle_key(key(code)), Some(ListKey::Moved));
            assert_eq!(moved.selected(), selected, "after {code:?}");
        }
        let mut chosen = list;
        assert_eq!(
            chosen.handle_key(key(KeyCode::Char('3'))),
            Some(ListKey::Chosen(2))
        );
        assert_eq!(chosen.selected(), 2, "a digit moves the cursor too");
        let mut plain = OptionList::new(2, 0);
        assert_eq!(plain.handle_key(key(KeyCode::Char('y'))), None);
    }

    /// A dialog with `body` lines to cut and the options `Go` and `Stop`.
    struct Sample {
        body: usize,
        overflow: Overflow,
        notes: bool,
    }

    impl ChoiceDialog for Sample {
        fn layout(&self, width: u16, _: &Theme) -> ChoiceBox {
            let options = if self.notes {
                vec![
                    OptionLabel::noted("go", "start the long job now"),
                    OptionLabel::noted("stop", "leave it"),
                ]
            } else {
                vec![OptionLabel::plain("Go"), OptionLabel::plain("Stop")]
            };
            ChoiceBox {
                title: "Sample",
                body: (1..=self.body)
                    .flat_map(|n| wrapped(format!("body {n}"), Style::new(), 10, &Prefix::none()))
                    .collect(),
                overflow: self.overflow,
                question: wrapped("Go on?", Style::new(), usize::from(width), &Prefix::none()),
                options,
                selected: 1,
                below: Vec::new(),
                hint: "esc to stop",
            }
        }
    }

    fn sample(body: usize, overflow: Overflow) -> Sample {
        Sample {
            body,
            overflow,
            notes: false,
        }
    }

    /// The inside of a 24-column box: its rows between the borders.
    fn inside(rows: &[&str]) -> Vec<String> {
        rows.iter().map(|row| format!("│ {row:<20} │")).collect()
    }

    #[test]
    fn the_box_stacks_body_question_options_and_hint() {
        let dialog = sample(2, Overflow::Cut);
        assert_eq!(height(&dialog, 24, &Theme::plain()), 10);
        let rows = plain_rows(&dialog, 24, 10);
        assert_eq!(rows[0], "╭ Sample ──────────────╮");
        assert_eq!(
            rows[1..9],
            inside(&[
                "body 1",
                "body 2",
                "",
                "Go on?",
                "  1. Go",
                "❯ 2. Stop",
                "",
                "esc to stop",
            ])
        );
        assert_eq!(rows[9], "╰──────────────────────╯");
    }

    #[test]
    fn noted_options_line_their_names_up_and_wrap_the_notes() {
        let dialog = Sample {
            body: 0,
            overflow: Overflow::Cut,
            notes: true,
        };
        let height = height(&dialog, 30, &Theme::plain());
        assert_eq!(
            plain_rows(&dialog, 30, height),
            [
                "╭ Sample ────────────────────╮",
                "│                            │",
                "│ Go on?                     │",
                "│   1. go   start the long   │",
                "│           job now          │",
                "│ ❯ 2. stop leave it         │",
                "│                            │",
                "│ esc to stop                │",
                "╰────────────────────────────╯",
            ]
        );
    }

    #[test]
    fn a_short_box_cuts_the_body_as_its_overflow_says() {
        let rest = ["", "Go on?", "  1. Go", "❯ 2. Stop", "", "esc to stop"];
        let squeezed = ["Go on?", "  1. Go", "❯ 2. Stop", "esc to stop"];
        let cases: [(Overflow, u16, &[&str], &[&str]); 5] = [
            (Overflow::Cut, 10, &["body 1", "body 2"], &rest),
            (
                Overflow::Counted("more"),
                10,
                &["body 1", "… +4 lines (more)"],
                &rest,
            ),
            // The blank lines go first, which leaves room for more of the body.
            (
                Overflow::Squeezed("more"),
                10,
                &["body 1", "body 2", "body 3", "… +2 lines (more)"],
                &squeezed,
            ),
            // No row left for the body: `Counted` keeps the question whole, `Squeezed` the
            // count, in the question's first row.
            (Overflow::Counted("more"), 8, &[], &rest),
            (
                Overflow::Squeezed("more"),
                6,
                &["… +5 lines (more)"],
                &squeezed[1..],
            ),
        ];
        for (overflow, height, body, rest) in cases {
            let rows = plain_rows(&sample(5, overflow), 24, height);
            assert_eq!(
                rows[1..rows.len() - 1],
                inside(&[body, rest].concat()),
                "{overflow:?} in {height} rows"
            );
        }
    }

    #[test]
    fn tiny_areas_do_not_panic() {
        let dialog = sample(3, Overflow::Squeezed("more"));
        for width in 0..16 {
            for height in 0..8 {
                let area = Rect::new(0, 0, width, height);
                let mut buf = Buffer::empty(area);
                render(&dialog, area, &mut buf, &Theme::dark());
            }
        }
    }
}
