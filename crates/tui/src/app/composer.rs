//! The input box's text: readline's editing keys, newlines, and pastes (a long paste shows as
//! `[Pasted N lines]` but is sent whole), laid out as a window of rows that follows the cursor.
//!
//! A placeholder is one unit: the cursor steps over it, Backspace or Delete next to it removes
//! it with its paste, and typing never lands inside it.

use std::cell::Cell;
use std::ops::Range;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use unicode_width::UnicodeWidthChar;

/// A paste longer than this many lines is shown as a placeholder.
const PASTE_PLACEHOLDER_LINES: usize = 5;

/// What a key did to the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// The text changed or the cursor moved.
    Changed,
    /// Enter: the text (placeholders expanded) is handed over and the box is empty again.
    Submitted(String),
    /// The key means nothing to the input box.
    Ignored,
}

/// The text as the input box shows it: the rows that fit, and the cursor among them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputLayout {
    /// The rows shown, top first, each no wider than the width asked for.
    pub rows: Vec<String>,
    /// Which of the text's rows `rows[0]` is (more than 0 when the box has scrolled down).
    pub first_row: usize,
    /// The cursor's column, and its row within `rows`.
    pub cursor: (u16, u16),
}

/// The text being typed, with a cursor (a byte offset on a char boundary, never inside a
/// placeholder).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Composer {
    text: String,
    cursor: usize,
    /// The placeholders in `text`, in the order they appear.
    pastes: Vec<Paste>,
    /// Pastes whose placeholders left the text with [`Composer::set_text`] (a history entry
    /// shown over the draft): when the draft comes back, its placeholders are whole again.
    set_aside: Vec<(String, String)>,
    /// The column Up and Down aim for: where the first of them started.
    goal_column: Option<usize>,
    /// The first row the box shows; it moves only as far as keeps the cursor in view.
    scroll: Cell<usize>,
}

/// A long paste: its placeholder's place in the text, and what it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Paste {
    at: usize,
    placeholder: String,
    pasted: String,
}

impl Paste {
    fn span(&self) -> Range<usize> {
        self.at..self.at + self.placeholder.len()
    }
}

/// What the cursor steps over: a char, or a whole placeholder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Char(char),
    Placeholder,
}

/// What counts as a word for the word keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Words {
    /// Letters, digits and `_` (readline's Alt+B, Alt+F, Alt+Backspace).
    Alphanumeric,
    /// Anything but whitespace (readline's Ctrl+W).
    NonBlank,
}

impl Words {
    fn contains(self, unit: Unit) -> bool {
        match (self, unit) {
            (_, Unit::Placeholder) => true,
            (Words::Alphanumeric, Unit::Char(c)) => c.is_alphanumeric() || c == '_',
            (Words::NonBlank, Unit::Char(c)) => !c.is_whitespace(),
        }
    }
}

/// Which way Up and Down go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vertical {
    Up,
    Down,
}

impl Composer {
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub fn clear(&mut self) {
        *self = Composer::default();
    }

    /// The cursor as a byte offset into [`Composer::text`].
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Replaces everything (a recalled prompt, say), the cursor at the end. Placeholders of
    /// earlier pastes in `text` stand for their pastes again.
    pub fn set_text(&mut self, text: &str) {
        let mut set_aside = std::mem::take(&mut self.set_aside);
        set_aside.extend(
            self.pastes
                .drain(..)
                .map(|paste| (paste.placeholder, paste.pasted)),
        );
        *self = Composer {
            text: text.to_string(),
            cursor: text.len(),
            ..Composer::default()
        };
        for (placeholder, pasted) in set_aside {
            let free = |span: &Range<usize>| {
                self.pastes
                    .iter()
                    .all(|paste| paste.span().end <= span.start || span.end <= paste.at)
            };
            match text.find(&placeholder) {
                Some(at) if free(&(at..at + placeholder.len())) => self.add_paste(Paste {
                    at,
                    placeholder,
                    pasted,
                }),
                _ => self.set_aside.push((placeholder, pasted)),
            }
        }
    }

    /// Replaces the bytes `start..cursor` with `text` (a completed `@mention`), the cursor
    /// after it. Does nothing if `start` is not a char boundary before the cursor, or is
    /// inside a placeholder.
    pub fn replace_before_cursor(&mut self, start: usize, text: &str) {
        let in_placeholder = self
            .pastes
            .iter()
            .any(|paste| paste.at < start && start < paste.span().end);
        if start <= self.cursor && self.text.is_char_boundary(start) && !in_placeholder {
            self.replace(start..self.cursor, text);
        }
    }

    /// Whether Up would leave the text (the cursor is on its first line).
    pub fn cursor_on_first_line(&self) -> bool {
        !self.text[..self.cursor].contains('\n')
    }

    /// Whether Down would leave the text (the cursor is on its last line).
    pub fn cursor_on_last_line(&self) -> bool {
        !self.text[self.cursor..].contains('\n')
    }

    /// Handles one key press. Up on the first line and Down on the last are
    /// [`Edit::Ignored`], for the history to take.
    pub fn handle_key(&mut self, key: KeyEvent) -> Edit {
        if key.kind == KeyEventKind::Release {
            return Edit::Ignored;
        }
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let goal_column = self.goal_column.take();
        match key.code {
            KeyCode::Enter if alt || key.modifiers.contains(KeyModifiers::SHIFT) => {
                self.insert_str("\n");
            }
            KeyCode::Char('j') if control => self.insert_str("\n"),
            KeyCode::Enter => {
                // A trailing backslash continues the message on a new line.
                if self.text[..self.cursor].ends_with('\\') {
                    self.replace(self.cursor - 1..self.cursor, "\n");
                } else {
                    return Edit::Submitted(self.take());
                }
            }
            KeyCode::Char('a') if control => self.cursor = self.line_start(),
            KeyCode::Char('e') if control => self.cursor = self.line_end(),
            KeyCode::Char('u') if control => {
                // At the start of a line it joins the line above, so Ctrl+U again goes on.
                let start = match self.line_start() {
                    start if start == self.cursor => start.saturating_sub(1),
                    start => start,
                };
                self.replace(start..self.cursor, "");
            }
            KeyCode::Char('k') if control => {
                // At the end of a line it joins the line below, as in Emacs.
                let end = match self.line_end() {
                    end if end == self.cursor && end < self.text.len() => end + 1,
                    end => end,
                };
                self.replace(self.cursor..end, "");
            }
            KeyCode::Char('w') if control => {
                self.replace(self.word_start(Words::NonBlank)..self.cursor, "");
            }
            KeyCode::Backspace if alt || control => {
                self.replace(self.word_start(Words::Alphanumeric)..self.cursor, "");
            }
            KeyCode::Char('d') if alt => {
                self.replace(self.cursor..self.word_end(Words::Alphanumeric), "");
            }
            KeyCode::Char('b') if alt => self.cursor = self.word_start(Words::Alphanumeric),
            KeyCode::Char('f') if alt => self.cursor = self.word_end(Words::Alphanumeric),
            KeyCode::Left if alt || control => {
                self.cursor = self.word_start(Words::Alphanumeric);
            }
            KeyCode::Right if alt || control => {
                self.cursor = self.word_end(Words::Alphanumeric);
            }
            KeyCode::Char(c) if !control && !alt => {
                let mut buffer = [0; 4];
                self.insert_str(c.encode_utf8(&mut buffer));
            }
            KeyCode::Backspace => self.delete_unit_before(),
            // What some terminals send for Backspace (readline's backward-delete-char).
            KeyCode::Char('h') if control => self.delete_unit_before(),
            KeyCode::Delete => {
                if let Some((end, _)) = self.unit_after(self.cursor) {
                    self.replace(self.cursor..end, "");
                }
            }
            KeyCode::Left => {
                if let Some((start, _)) = self.unit_before(self.cursor) {
                    self.cursor = start;
                }
            }
            KeyCode::Right => {
                if let Some((end, _)) = self.unit_after(self.cursor) {
                    self.cursor = end;
                }
            }
            KeyCode::Up => return self.move_vertically(Vertical::Up, goal_column),
            KeyCode::Down => return self.move_vertically(Vertical::Down, goal_column),
            KeyCode::Home => self.cursor = self.line_start(),
            KeyCode::End => self.cursor = self.line_end(),
            _ => return Edit::Ignored,
        }
        Edit::Changed
    }

    /// Inserts pasted text at the cursor; a long paste as a placeholder.
    pub fn paste(&mut self, pasted: &str) {
        let pasted = pasted.replace("\r\n", "\n").replace('\r', "\n");
        let lines = pasted.lines().count();
        if lines <= PASTE_PLACEHOLDER_LINES {
            self.insert_str(&pasted);
            return;
        }
        let taken = |placeholder: &str| {
            self.text.contains(placeholder)
                || self
                    .pastes
                    .iter()
                    .any(|paste| paste.placeholder == placeholder)
                || self.set_aside.iter().any(|(taken, _)| taken == placeholder)
        };
        let mut placeholder = format!("[Pasted {lines} lines]");
        let mut n = 1;
        while taken(&placeholder) {
            n += 1;
            placeholder = format!("[Pasted {lines} lines #{n}]");
        }
        self.insert_str(&placeholder);
        self.add_paste(Paste {
            at: self.cursor - placeholder.len(),
            placeholder,
            pasted,
        });
    }

    /// The text with every placeholder replaced by its paste; the box is emptied.
    pub fn take(&mut self) -> String {
        let mut text = std::mem::take(&mut self.text);
        for paste in self.pastes.iter().rev() {
            text.replace_range(paste.span(), &paste.pasted);
        }
        self.clear();
        text
    }

    /// The text wrapped into rows no wider than `width` columns, of which at most `max_rows`
    /// are shown: the same ones as last time while the cursor stays among them, otherwise
    /// the nearest ones that hold it.
    pub fn layout(&self, width: u16, max_rows: u16) -> InputLayout {
        let (mut rows, (column, row)) = self.wrap(usize::from(width.max(2)));
        let max_rows = usize::from(max_rows.max(1));
        let first_row = self
            .scroll
            .get()
            .min(rows.len().saturating_sub(max_rows))
            .max((row + 1).saturating_sub(max_rows))
            .min(row);
        self.scroll.set(first_row);
        rows.truncate(first_row + max_rows);
        rows.drain(..first_row);
        let column = u16::try_from(column).unwrap_or(u16::MAX);
        let row = u16::try_from(row - first_row).unwrap_or(u16::MAX);
        InputLayout {
            rows,
            first_row,
            cursor: (column, row),
        }
    }

    /// All the text's rows, and the cursor's (column, row) among them.
    fn wrap(&self, width: usize) -> (Vec<String>, (usize, usize)) {
        let mut rows = vec![String::new()];
        let mut used = 0;
        let mut cursor = (0, 0);
        for (offset, c) in self.text.char_indices().chain([(self.text.len(), '\0')]) {
            if offset == self.cursor {
                if used >= width {
                    rows.push(String::new());
                    used = 0;
                }
                cursor = (used, rows.len() - 1);
            }
            if offset == self.text.len() {
                break;
            }
            if c == '\n' {
                rows.push(String::new());
                used = 0;
                continue;
            }
            let columns = c.width().unwrap_or(0);
            if used + columns > width {
                rows.push(String::new());
                used = 0;
            }
            if let Some(row) = rows.last_mut() {
                row.push(c);
            }
            used += columns;
        }
        (rows, cursor)
    }

    fn insert_str(&mut self, text: &str) {
        self.replace(self.cursor..self.cursor, text);
    }

    /// Every edit goes through here: replaces `range` with `text` and puts the cursor after
    /// it. A placeholder the range reaches into goes whole, with its paste; an insertion
    /// inside one lands after it instead.
    fn replace(&mut self, range: Range<usize>, text: &str) {
        let (mut start, mut end) = (range.start, range.end);
        for paste in &self.pastes {
            let span = paste.span();
            if start == end && span.start < start && start < span.end {
                (start, end) = (span.end, span.end);
            } else if span.start < end && start < span.end {
                (start, end) = (start.min(span.start), end.max(span.end));
            }
        }
        self.pastes
            .retain(|paste| !(paste.at < end && start < paste.span().end));
        for paste in &mut self.pastes {
            if paste.at >= end {
                paste.at = paste.at - (end - start) + text.len();
            }
        }
        self.text.replace_range(start..end, text);
        self.cursor = start + text.len();
    }

    fn add_paste(&mut self, paste: Paste) {
        let index = self.pastes.partition_point(|earlier| earlier.at < paste.at);
        self.pastes.insert(index, paste);
    }

    fn delete_unit_before(&mut self) {
        if let Some((start, _)) = self.unit_before(self.cursor) {
            self.replace(start..self.cursor, "");
        }
    }

    /// The unit that ends at `at`, and where it starts.
    fn unit_before(&self, at: usize) -> Option<(usize, Unit)> {
        if let Some(paste) = self.pastes.iter().find(|paste| paste.span().end == at) {
            return Some((paste.at, Unit::Placeholder));
        }
        let c = self.text[..at].chars().next_back()?;
        Some((at - c.len_utf8(), Unit::Char(c)))
    }

    /// The unit that starts at `at`, and where it ends.
    fn unit_after(&self, at: usize) -> Option<(usize, Unit)> {
        if let Some(paste) = self.pastes.iter().find(|paste| paste.at == at) {
            return Some((paste.span().end, Unit::Placeholder));
        }
        let c = self.text[at..].chars().next()?;
        Some((at + c.len_utf8(), Unit::Char(c)))
    }

    /// The start of the word before the cursor (or of the one it is in).
    fn word_start(&self, words: Words) -> usize {
        let mut at = self.cursor;
        while let Some((start, unit)) = self.unit_before(at)
            && !words.contains(unit)
        {
            at = start;
        }
        while let Some((start, unit)) = self.unit_before(at)
            && words.contains(unit)
        {
            at = start;
        }
        at
    }

    /// The end of the word after the cursor (or of the one it is in).
    fn word_end(&self, words: Words) -> usize {
        let mut at = self.cursor;
        while let Some((end, unit)) = self.unit_after(at)
            && !words.contains(unit)
        {
            at = end;
        }
        while let Some((end, unit)) = self.unit_after(at)
            && words.contains(unit)
        {
            at = end;
        }
        at
    }

    /// Up or Down to the line above or below, at the goal column or as near as the line
    /// allows; [`Edit::Ignored`] from the first or last line.
    fn move_vertically(&mut self, direction: Vertical, goal_column: Option<usize>) -> Edit {
        let start = self.line_start();
        let goal = goal_column.unwrap_or_else(|| columns(&self.text[start..self.cursor]));
        let target = match direction {
            Vertical::Up if start == 0 => return Edit::Ignored,
            Vertical::Up => self.text[..start - 1].rfind('\n').map_or(0, |at| at + 1),
            Vertical::Down => match self.text[self.cursor..].find('\n') {
                Some(at) => self.cursor + at + 1,
                None => return Edit::Ignored,
            },
        };
        let mut at = target;
        let mut used = 0;
        while let Some((end, unit)) = self.unit_after(at)
            && unit != Unit::Char('\n')
        {
            used += columns(&self.text[at..end]);
            if used > goal {
                break;
            }
            at = end;
        }
        self.cursor = at;
        self.goal_column = Some(goal);
        Edit::Changed
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |at| at + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |at| self.cursor + at)
    }
}

/// How many columns `text` (one line) takes on screen, counted as the layout counts them.
fn columns(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

#[cfg(test)]
#[path = "composer_tests.rs"]
mod tests;
