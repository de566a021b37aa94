//! Holding a command's output in bounded memory, and cutting what the model sees to
//! [`MAX_OUTPUT_CHARS`] by dropping the middle.

use std::collections::VecDeque;

/// Output longer than this many characters is cut in the middle before the model sees it.
pub(super) const MAX_OUTPUT_CHARS: usize = 30_000;
/// How many characters of the start and of the end survive a cut.
const KEPT_CHARS_EACH_END: usize = MAX_OUTPUT_CHARS / 2;
/// Bytes kept at each end of one stream while capturing. At least four times the characters
/// shown at each end (a character is at most four bytes), so whatever capture drops always
/// lies inside the part that [`cut_middle`] removes anyway.
const KEPT_BYTES_EACH_END: usize = 256 * 1024;

/// What was dropped from output: characters and line breaks.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Dropped {
    pub chars: usize,
    pub lines: usize,
}

impl Dropped {
    fn count_byte(&mut self, byte: u8) {
        // UTF-8 continuation bytes are part of a character already counted.
        if byte & 0xC0 != 0x80 {
            self.chars += 1;
        }
        if byte == b'\n' {
            self.lines += 1;
        }
    }

    fn count_text(&mut self, text: &str) {
        self.chars += text.chars().count();
        self.lines += text.matches('\n').count();
    }

    pub(super) fn add(self, other: Dropped) -> Dropped {
        Dropped {
            chars: self.chars + other.chars,
            lines: self.lines + other.lines,
        }
    }

    fn is_empty(self) -> bool {
        self.chars == 0
    }
}

/// One output stream, kept in bounded memory: its first and last [`KEPT_BYTES_EACH_END`]
/// bytes, and a count of what fell out between them. A command that prints gigabytes costs
/// half a megabyte.
#[derive(Debug, Default)]
pub(super) struct CappedBuffer {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: Dropped,
}

/// Everything a [`CappedBuffer`] held: the kept bytes (head and tail joined) and what was
/// dropped between them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Captured {
    pub bytes: Vec<u8>,
    pub dropped: Dropped,
}

impl CappedBuffer {
    pub(super) fn push(&mut self, bytes: &[u8]) {
        let room = KEPT_BYTES_EACH_END.saturating_sub(self.head.len());
        let (to_head, to_tail) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        self.tail.extend(to_tail);
        let excess = self.tail.len().saturating_sub(KEPT_BYTES_EACH_END);
        for byte in self.tail.drain(..excess) {
            self.dropped.count_byte(byte);
        }
    }

    /// Takes everything held, leaving the buffer empty.
    pub(super) fn take(&mut self) -> Captured {
        let mut bytes = std::mem::take(&mut self.head);
        let mut tail = std::mem::take(&mut self.tail);
        if !self.dropped.is_empty() {
            // A character cut in two at the front of the tail is part of what was dropped.
            while tail.front().is_some_and(|byte| byte & 0xC0 == 0x80) {
                tail.pop_front();
            }
        }
        bytes.extend(tail);
        Captured {
            bytes,
            dropped: std::mem::take(&mut self.dropped),
        }
    }

    /// Puts bytes taken too early back in front of the buffer (it must be empty).
    pub(super) fn put_back(&mut self, bytes: &[u8]) {
        debug_assert!(self.head.is_empty() && self.tail.is_empty());
        self.push(bytes);
    }
}

impl Captured {
    pub(super) fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// How many bytes at the end of `bytes` are the start of a character whose remaining bytes
/// have not arrived yet (0 when the end is whole).
pub(super) fn incomplete_utf8_suffix(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xC0 == 0x80 {
            continue;
        }
        let needed = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if needed > back { back } else { 0 };
    }
    0
}

/// Standard output, then standard error under a `[stderr]` line; each without its trailing
/// line breaks. Empty when both are.
pub(super) fn join_streams(stdout: &str, stderr: &str) -> String {
    let stdout = stdout.trim_end_matches(['\n', '\r']);
    let stderr = stderr.trim_end_matches(['\n', '\r']);
    match (stdout.is_empty(), stderr.is_empty()) {
        (true, true) => String::new(),
        (false, true) => stdout.to_string(),
        (true, false) => format!("[stderr]\n{stderr}"),
        (false, false) => format!("{stdout}\n[stderr]\n{stderr}"),
    }
}

/// `text` cut to at most [`MAX_OUTPUT_CHARS`] characters (plus a note) by dropping the middle:
/// the start and the end are usually what matters (the command echoing what it does, and
/// the summary or error at the end). `already_dropped` is what capture left out; it is
/// counted in the note.
pub(super) fn cut_middle(text: &str, already_dropped: Dropped) -> String {
    let total = text.chars().count();
    if total <= MAX_OUTPUT_CHARS {
        if already_dropped.is_empty() {
            return text.to_string();
        }
        return format!(
            "{}\n{text}",
            dropped_note(already_dropped, "were dropped before this")
        );
    }
    let head_end = byte_offset_of_char(text, KEPT_CHARS_EACH_END);
    let tail_start = byte_offset_of_char(text, total - KEPT_CHARS_EACH_END);
    let mut dropped = already_dropped;
    dropped.count_text(&text[head_end..tail_start]);
    format!(
        "{}\n\n{}\n\n{}",
        &text[..head_end],
        dropped_note(dropped, "cut from the middle"),
        &text[tail_start..]
    )
}

fn dropped_note(dropped: Dropped, what_happened: &str) -> String {
    let lines = match dropped.lines {
        1 => "1 line".to_string(),
        n => format!("{n} lines"),
    };
    format!(
        "[… output too long: {} characters ({lines}) {what_happened} …]",
        dropped.chars
    )
}

fn byte_offset_of_char(text: &str, char_index: usize) -> usize {
    text.char_indices()
        .nth(char_index)
        .map_or(text.len(), |(offset, _)| offset)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn short_output_is_untouched() {
        assert_eq!(cut_middle("a\nb\n", Dropped::default()), "a\nb\n");
    }

    #[test]
    fn long_output_keeps_both_ends_and_counts_the_middle() {
        let text: String = (0..10_000).map(|n| format!("{n:05}\n")).collect();
        let cut = cut_middle(&text, Dropped::default());
        assert!(cut.starts_with("00000\n00001\n"), "{}", &cut[..20]);
        assert!(cut.ends_with("09998\n09999\n"));
        // 60 000 characters, 30 000 kept: 30 000 dropped, holding 5 000 line breaks.
        assert!(
            cut.contains(
                "\n\n[… output too long: 30000 characters (5000 lines) cut from the middle …]\n\n"
            ),
            "{}",
            &cut[14_990..15_100]
        );
        let kept = cut.chars().count();
        assert!(kept < MAX_OUTPUT_CHARS + 100, "{kept}");
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let text = "é".repeat(40_000);
        let cut = cut_middle(&text, Dropped::default());
        assert!(
            cut.contains("10000 characters (0 lines)"),
            "{}",
            &cut[29_990..30_100]
        );
    }

    #[test]
    fn capture_drops_the_middle_of_huge_streams_and_counts_it() {
        let mut buffer = CappedBuffer::default();
        let line = "0123456789abcdé\n"; // 16 characters, 17 bytes
        for _ in 0..100_000 {
            buffer.push(line.as_bytes());
        }
        let captured = buffer.take();
        // Both ends are kept, less at most three bytes of a character cut in two.
        let kept_bytes = captured.bytes.len();
        assert!((2 * KEPT_BYTES_EACH_END - 3..=2 * KEPT_BYTES_EACH_END).contains(&kept_bytes));
        let text = captured.text();
        assert!(!text.contains('\u{fffd}'), "a character was split");
        let kept_chars = text.chars().count();
        assert_eq!(kept_chars + captured.dropped.chars, 1_600_000);
        assert_eq!(text.matches('\n').count() + captured.dropped.lines, 100_000);
        assert_eq!(buffer.take(), Captured::default());
    }

    #[test]
    fn incomplete_characters_at_the_end_are_found() {
        let e_acute = "é".as_bytes();
        assert_eq!(incomplete_utf8_suffix(b"abc"), 0);
        assert_eq!(incomplete_utf8_suffix(e_acute), 0);
        assert_eq!(incomplete_utf8_suffix(&e_acute[..1]), 1);
        let emoji = "🦀".as_bytes();
        assert_eq!(incomplete_utf8_suffix(&emoji[..3]), 3);
        assert_eq!(incomplete_utf8_suffix(emoji), 0);
    }

    #[test]
    fn streams_are_joined_stdout_first() {
        assert_eq!(join_streams("out\n", "err\n"), "out\n[stderr]\nerr");
        assert_eq!(join_streams("", "err"), "[stderr]\nerr");
        assert_eq!(join_streams("out\n\n", ""), "out");
        assert_eq!(join_streams("", ""), "");
    }
}
