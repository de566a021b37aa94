//! The input box's text: readline's editing keys, newlines, and pastes (a long paste shows as
//! `[Pasted N lines]` but is sent whole), laid out as a window of rows that follows the cursor.
//!
//! The cursor steps by grapheme clusters (what a reader sees as one character: `e` with its
//! combining accent, a flag, a ZWJ family), each as wide as ratatui draws it, and Up and Down
//! go by the rows the text was last wrapped into. A placeholder is one unit: the cursor steps
//! over it, Backspace or Delete next to it removes it with its paste, and typing never lands
//! inside it.

use std::cell::Cell;
use std::ops::Range;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::CellWidth;
use unicode_segmentation::UnicodeSegmentation;

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
/// placeholder; the keys move it from one grapheme cluster boundary to another).
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
    /// The width of the last [`Composer::layout`], whose rows Up and Down move between; until
    /// there is one, every line is one row.
    width: Cell<Option<usize>>,
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

/// What the cursor steps over: a grapheme cluster (named by its first char), or a whole
/// placeholder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Cluster(char),
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
            (Words::Alphanumeric, Unit::Cluster(c)) => c.is_alphanumeric() || c == '_',
            (Words::NonBlank, Unit::Cluster(c)) => !c.is_whitespace(),
        }
    }
}

/// Which way Up and Down go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vertical {
    Up,
    Down,
}

/// A screen position in the wrapped text: a column, and a row counted from the text's first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Spot {
    column: usize,
    row: usize,
}

/// The text wrapped at one width, for the cursor where it is.
#[derive(Debug)]
struct Wrapped {
    rows: Vec<String>,
    cursor: Spot,
    /// Where each grapheme cluster starts, and the text's end: byte offsets in order, each
    /// with where a cursor there would show.
    stops: Vec<(usize, Spot)>,
}

impl Composer {
    /// The text as the box shows it: a long paste is still its `[Pasted N lines]`
    /// placeholder here (what Enter hands over has them expanded).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether nothing is typed, which changes what some keys mean (`?` shows the shortcuts,
    /// Ctrl+D quits, `/` opens the command menu).
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Empties the box, forgetting its pastes, cursor and scroll; the width it was last laid
    /// out at is kept.
    pub fn clear(&mut self) {
        *self = Composer {
            width: self.width.clone(),
            ..Composer::default()
        };
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
            width: self.width.clone(),
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
        let in_placeholder = self.placeholder_around(start).is_some();
        if start <= self.cursor && self.text.is_char_boundary(start) && !in_placeholder {
            self.replace(start..self.cursor, text);
        }
    }

    /// Whether Up would leave the text: the cursor is on its first row as last laid out.
    pub fn cursor_on_first_line(&self) -> bool {
        self.vertical_target(Vertical::Up, None).is_none()
    }

    /// Whether Down would leave the text: the cursor is on its last row as last laid out.
    pub fn cursor_on_last_line(&self) -> bool {
        self.vertical_target(Vertical::Down, None).is_none()
    }

    /// Handles one key press. Up on the first row and Down on the last (rows as the last
    /// [`Composer::layout`] wrapped them) are [`Edit::Ignored`], for the history to take.
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
    /// the nearest ones that hold it. Up and Down move between these rows from now on.
    pub fn layout(&self, width: u16, max_rows: u16) -> InputLayout {
        let width = usize::from(width.max(2));
        self.width.set(Some(width));
        let Wrapped {
            mut rows,
            cursor: Spot { column, row },
            ..
        } = self.wrap(width);
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

    /// All the text's rows at `width` columns, where the cursor shows among them, and where it
    /// would show at each other cluster boundary. A cluster that does not fit starts a row; so
    /// does a cursor after a full row, as the terminal's cursor cannot sit past its last column.
    fn wrap(&self, width: usize) -> Wrapped {
        let mut rows = vec![String::new()];
        let mut used = 0;
        let mut cursor = None;
        let mut stops = Vec::new();
        let end = (self.text.len(), "");
        for (offset, cluster) in self.text.grapheme_indices(true).chain([end]) {
            let newline = cluster.contains('\n');
            let columns = cluster_width(cluster);
            if used > 0 && !newline && used + columns > width {
                rows.push(String::new());
                used = 0;
            }
            // A cursor inside a cluster (a joiner typed before an emoji) shows at its start.
            if cursor.is_none() && (self.cursor < offset + cluster.len() || cluster.is_empty()) {
                if used >= width {
                    rows.push(String::new());
                    used = 0;
                }
                cursor = Some(Spot {
                    column: used,
                    row: rows.len() - 1,
                });
            }
            let spot = Spot {
                column: used,
                row: rows.len() - 1,
            };
            stops.push((offset, spot));
            if newline {
                rows.push(String::new());
                used = 0;
            } else if let Some(row) = rows.last_mut() {
                row.push_str(cluster);
                used += columns;
            }
        }
        Wrapped {
            rows,
            cursor: cursor.unwrap_or(Spot { column: 0, row: 0 }),
            stops,
        }
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
        let cluster = self.text[..at].graphemes(true).next_back()?;
        let first = cluster.chars().next()?;
        let start = at - cluster.len();
        // A mark typed after a placeholder joins its `]` in a cluster: the unit stops there.
        let start = self
            .placeholder_around(start)
            .map_or(start, |paste| paste.span().end);
        Some((start, Unit::Cluster(first)))
    }

    /// The unit that starts at `at`, and where it ends.
    fn unit_after(&self, at: usize) -> Option<(usize, Unit)> {
        if let Some(paste) = self.pastes.iter().find(|paste| paste.at == at) {
            return Some((paste.span().end, Unit::Placeholder));
        }
        let cluster = self.text[at..].graphemes(true).next()?;
        let first = cluster.chars().next()?;
        let end = at + cluster.len();
        // A prepended char (U+0600, say) joins the `[` after it: the unit stops there.
        let end = self.placeholder_around(end).map_or(end, |paste| paste.at);
        Some((end, Unit::Cluster(first)))
    }

    /// The placeholder that `at` is strictly inside, if any.
    fn placeholder_around(&self, at: usize) -> Option<&Paste> {
        self.pastes
            .iter()
            .find(|paste| paste.at < at && at < paste.span().end)
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

    /// Up or Down to the row above or below, at the goal column or as near as the row
    /// allows; [`Edit::Ignored`] from the first or last row.
    fn move_vertically(&mut self, direction: Vertical, goal_column: Option<usize>) -> Edit {
        match self.vertical_target(direction, goal_column) {
            Some((at, goal)) => {
                self.cursor = at;
                self.goal_column = Some(goal);
                Edit::Changed
            }
            None => Edit::Ignored,
        }
    }

    /// Where Up or Down takes the cursor, and the column it aims for (`goal_column`, or the
    /// cursor's): on the nearest row above or below with a place for it, the rightmost place
    /// not past the goal (or the leftmost if all are). None on the first or last row. Rows
    /// are those of the last layout's width.
    fn vertical_target(
        &self,
        direction: Vertical,
        goal_column: Option<usize>,
    ) -> Option<(usize, usize)> {
        let wrapped = self.wrap(self.width.get().unwrap_or(usize::MAX));
        let goal = goal_column.unwrap_or(wrapped.cursor.column);
        let row = wrapped.cursor.row;
        let candidates = wrapped
            .stops
            .iter()
            .filter(|&&(at, _)| at != self.cursor && self.placeholder_around(at).is_none());
        let rows = candidates.clone().map(|(_, spot)| spot.row);
        let target_row = match direction {
            Vertical::Up => rows.filter(|&other| other < row).max()?,
            Vertical::Down => rows.filter(|&other| other > row).min()?,
        };
        let on_row = candidates.filter(|(_, spot)| spot.row == target_row);
        let (at, _) = on_row
            .clone()
            .filter(|(_, spot)| spot.column <= goal)
            .max_by_key(|(_, spot)| spot.column)
            .or_else(|| on_row.min_by_key(|(_, spot)| spot.column))?;
        Some((*at, goal))
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

/// How many columns a grapheme cluster takes as ratatui draws it: none if it holds a control
/// char (ratatui leaves those out), else the cell width ratatui gives it.
fn cluster_width(cluster: &str) -> usize {
    if cluster.contains(char::is_control) {
        0
    } else {
        usize::from(cluster.cell_width())
    }
}

#[cfg(test)]
#[path = "composer_tests.rs"]
mod tests;
