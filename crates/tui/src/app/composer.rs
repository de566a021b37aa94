//! The input box's text: editing keys, newlines, and pastes (a long paste shows as
//! `[Pasted N lines]` but is sent whole).

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

/// The text being typed, with a cursor (a byte offset on a char boundary).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Composer {
    text: String,
    cursor: usize,
    /// Placeholders in `text` and the pasted text each stands for.
    pastes: Vec<(String, String)>,
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

    /// Replaces everything (a recalled prompt, say), the cursor at the end.
    pub fn set_text(&mut self, text: &str) {
        *self = Composer::default();
        self.insert_str(text);
    }

    /// Replaces the bytes `start..cursor` with `text` (a completed `@mention`), the cursor
    /// after it. Does nothing if `start` is not a char boundary before the cursor.
    pub fn replace_before_cursor(&mut self, start: usize, text: &str) {
        if start <= self.cursor && self.text.is_char_boundary(start) {
            self.text.replace_range(start..self.cursor, "");
            self.cursor = start;
            self.insert_str(text);
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

    /// Handles one key press.
    pub fn handle_key(&mut self, key: KeyEvent) -> Edit {
        if key.kind == KeyEventKind::Release {
            return Edit::Ignored;
        }
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Enter if alt || key.modifiers.contains(KeyModifiers::SHIFT) => {
                self.insert_str("\n");
            }
            KeyCode::Char('j') if control => self.insert_str("\n"),
            KeyCode::Enter => {
                // A trailing backslash continues the message on a new line.
                if self.text[..self.cursor].ends_with('\\') {
                    self.cursor -= 1;
                    self.text.remove(self.cursor);
                    self.insert_str("\n");
                } else {
                    return Edit::Submitted(self.take());
                }
            }
            KeyCode::Char('a') if control => self.cursor = self.line_start(),
            KeyCode::Char('e') if control => self.cursor = self.line_end(),
            KeyCode::Char('u') if control => {
                let start = self.line_start();
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
            KeyCode::Char(c) if !control && !alt => {
                let mut buffer = [0; 4];
                self.insert_str(c.encode_utf8(&mut buffer));
            }
            KeyCode::Backspace => {
                if let Some(previous) = self.previous_boundary() {
                    self.text.replace_range(previous..self.cursor, "");
                    self.cursor = previous;
                }
            }
            KeyCode::Delete => {
                if let Some(next) = self.next_boundary() {
                    self.text.replace_range(self.cursor..next, "");
                }
            }
            KeyCode::Left => {
                if let Some(previous) = self.previous_boundary() {
                    self.cursor = previous;
                }
            }
            KeyCode::Right => {
                if let Some(next) = self.next_boundary() {
                    self.cursor = next;
                }
            }
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
        if lines > PASTE_PLACEHOLDER_LINES {
            let mut placeholder = format!("[Pasted {lines} lines]");
            let mut n = 1;
            while self.text.contains(&placeholder) {
                n += 1;
                placeholder = format!("[Pasted {lines} lines #{n}]");
            }
            self.insert_str(&placeholder.clone());
            self.pastes.push((placeholder, pasted));
        } else {
            self.insert_str(&pasted);
        }
    }

    /// The text with every placeholder replaced by its paste; the box is emptied.
    pub fn take(&mut self) -> String {
        let mut text = std::mem::take(&mut self.text);
        for (placeholder, pasted) in self.pastes.drain(..) {
            text = text.replacen(&placeholder, &pasted, 1);
        }
        self.cursor = 0;
        text
    }

    /// The text as display rows no wider than `width` columns, and the cursor's (column, row).
    pub fn layout(&self, width: u16) -> (Vec<String>, (u16, u16)) {
        let width = usize::from(width.max(2));
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
        let column = u16::try_from(cursor.0).unwrap_or(u16::MAX);
        let row = u16::try_from(cursor.1).unwrap_or(u16::MAX);
        (rows, (column, row))
    }

    fn insert_str(&mut self, text: &str) {
        self.text.insert_str(self.cursor, text);
        self.cursor += text.len();
    }

    fn previous_boundary(&self) -> Option<usize> {
        self.text[..self.cursor]
            .char_indices()
            .next_back()
            .map(|(offset, _)| offset)
    }

    fn next_boundary(&self) -> Option<usize> {
        self.text[self.cursor..]
            .chars()
            .next()
            .map(|c| self.cursor + c.len_utf8())
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::from(code)
    }

    fn typed(composer: &mut Composer, text: &str) {
        for c in text.chars() {
            composer.handle_key(key(KeyCode::Char(c)));
        }
    }

    #[test]
    fn enter_submits_and_empties_the_box() {
        let mut composer = Composer::default();
        typed(&mut composer, "héllo");
        assert_eq!(
            composer.handle_key(key(KeyCode::Enter)),
            Edit::Submitted("héllo".into())
        );
        assert!(composer.is_empty());
    }

    #[test]
    fn newlines_come_from_ctrl_j_alt_enter_and_a_trailing_backslash() {
        let mut composer = Composer::default();
        typed(&mut composer, "a");
        composer.handle_key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL));
        typed(&mut composer, "b");
        composer.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
        typed(&mut composer, "c\\");
        assert_eq!(composer.handle_key(key(KeyCode::Enter)), Edit::Changed);
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
        let pasted = "1\r\n2\n3\n4\n5\n6\n7";
        composer.paste(pasted);
        assert_eq!(composer.text(), "see [Pasted 7 lines]");
        assert_eq!(
            composer.handle_key(key(KeyCode::Enter)),
            Edit::Submitted("see 1\n2\n3\n4\n5\n6\n7".into())
        );
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
    fn a_short_paste_is_inserted_as_it_is() {
        let mut composer = Composer::default();
        composer.paste("one\ntwo");
        assert_eq!(composer.text(), "one\ntwo");
    }

    #[test]
    fn layout_wraps_rows_and_places_the_cursor() {
        let mut composer = Composer::default();
        typed(&mut composer, "abcdef");
        composer.handle_key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL));
        typed(&mut composer, "g");
        assert_eq!(
            composer.layout(4),
            (vec!["abcd".into(), "ef".into(), "g".into()], (1, 2))
        );
    }
}
