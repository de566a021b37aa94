//! A long Markdown text rendered a piece at a time, so that writing a long answer into the
//! scrollback never blocks the UI for long, and an answer still being written goes there a
//! block at a time as it grows.
//!
//! A piece ends where a top-level block starts. Every block before it is closed there, whatever
//! follows, so each renders as it does in the whole text, and the pieces' lines, one after
//! another, are the lines [`render_markdown`](super::render_markdown) gives for the whole.

use std::ops::Range;

use pulldown_cmark::{Event, Parser};
use ratatui::text::Line;

use super::{Follows, Renderer, list_spacings, parser_options, render_events};
use crate::theme::Theme;
use crate::wrap::sanitize;

/// The most bytes a link reference's label (999 characters at most) spans.
const MAX_LABEL_BYTES: usize = 4 * 999;

/// How far a Markdown text has been rendered piece by piece: call [`MarkdownPieces::next`]
/// with the same text until [`MarkdownPieces::is_done`].
///
/// The text is cut only where the cut cannot change how it renders: not inside a block (a
/// code block with empty lines in it, a loose list), not where an escape sequence could
/// swallow the cut (each piece is sanitized on its own), and not at all if the text may define
/// a link reference, which resolves links anywhere in it, before or after.
///
/// The text may grow between calls (only at its end): the complete blocks of an answer being
/// written, then the whole of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct MarkdownPieces {
    /// Where the next piece starts in the text.
    offset: usize,
    /// The pieces so far rendered a line.
    shown: bool,
    references: ReferenceScan,
}

impl MarkdownPieces {
    /// Renders the next piece of `source`: the whole top-level blocks within about `budget`
    /// bytes, or the first block whole when it alone is longer.
    pub(crate) fn next(
        &mut self,
        source: &str,
        budget: usize,
        width: u16,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let rest = &source[self.offset..];
        let cuttable = !self.references.may_define(source);
        let follows = if self.shown {
            Follows::Lines
        } else {
            Follows::Nothing
        };
        let mut window = budget.max(1);
        let (lines, length) = loop {
            let end = line_end_from(rest, window);
            if !cuttable || end == rest.len() || rest[..end].contains('\u{1b}') {
                break (
                    render_events(&sanitize(rest), follows, width, theme),
                    rest.len(),
                );
            }
            if let Some(piece) = render_leading_blocks(&rest[..end], follows, width, theme) {
                break piece;
            }
            // One block fills the window: look further for where the next one starts.
            window = end.saturating_mul(2);
        };
        self.offset += length;
        self.shown |= !lines.is_empty();
        lines
    }

    pub(crate) fn is_done(&self, source: &str) -> bool {
        self.offset >= source.len()
    }

    /// How many bytes of the text the pieces so far covered.
    pub(crate) fn offset(&self) -> usize {
        self.offset
    }

    /// Whether the pieces so far rendered any line.
    pub(crate) fn has_shown(&self) -> bool {
        self.shown
    }
}

/// How much of a Markdown text still being written is complete: the top-level blocks before
/// the one it ends in. A block is complete once a later one has started on a whole line;
/// nothing written after that changes how it renders, so it can go into the scrollback.
///
/// Nothing is complete while the rest may hold an escape sequence, and nothing more once the
/// text may define a link reference (see [`MarkdownPieces`]): what is complete already stays
/// so, and a link before the definition stays unresolved there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GrowingMarkdown {
    /// Where the complete blocks end: the start of the line where the next block starts.
    complete: usize,
    /// How long the text was when last looked at.
    seen: usize,
    references: ReferenceScan,
}

impl GrowingMarkdown {
    /// Looks at `text`, grown at its end since the last call, for blocks it completed.
    ///
    /// It parses everything after the complete blocks, so it looks again only once that has
    /// grown by an eighth: a huge last block (a long code block) costs no more than a few
    /// times its length over all the calls.
    pub(crate) fn grow(&mut self, text: &str) {
        let fresh = text.len().saturating_sub(self.seen);
        let rest = text.len().saturating_sub(self.complete);
        if fresh == 0 || fresh.saturating_mul(8) < rest {
            return;
        }
        // Only whole lines: a line's start can still turn into something else (`2` into `2.`,
        // an item of the list before).
        let Some(newline) = text[self.seen..].rfind('\n') else {
            return;
        };
        let lines_end = self.seen + newline + 1;
        self.seen = text.len();
        if self.references.may_define(text) {
            return;
        }
        let window = &text[self.complete..lines_end];
        if window.contains('\u{1b}') {
            return;
        }
        if let Some(end) = leading_blocks_end(window) {
            self.complete += end;
        }
    }

    /// How many bytes at the text's start are complete blocks.
    pub(crate) fn complete(&self) -> usize {
        self.complete
    }
}

/// Whether a text that grows at its end may define a link reference, found out a part at a
/// time: once it may, it may whatever follows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct ReferenceScan {
    /// How much of the text has been looked at.
    scanned: usize,
    found: bool,
}

impl ReferenceScan {
    fn may_define(&mut self, source: &str) -> bool {
        if !self.found && source.len() > self.scanned {
            // From one byte back: a `]:` may straddle where the last look ended.
            let mut from = self.scanned.saturating_sub(1);
            while !source.is_char_boundary(from) {
                from -= 1;
            }
            self.found = may_define_references(source, from);
            self.scanned = source.len();
        }
        self.found
    }
}

/// Where the line that byte `at` of `text` falls in ends (after its `\n`), or the text's end.
fn line_end_from(text: &str, at: usize) -> usize {
    text.as_bytes()
        .get(at..)
        .and_then(|tail| tail.iter().position(|&byte| byte == b'\n'))
        .map_or(text.len(), |newline| at + newline + 1)
}

/// Renders the top-level blocks of `window` (raw text that ends at a line's end) before its
/// last block, which may go on past the window. Returns their lines and how many bytes of the
/// window they take, or `None` when the window holds a single block.
fn render_leading_blocks(
    window: &str,
    follows: Follows,
    width: u16,
    theme: &Theme,
) -> Option<(Vec<Line<'static>>, usize)> {
    let text = sanitize(window);
    let events: Vec<_> = Parser::new_ext(&text, parser_options())
        .into_offset_iter()
        .collect();
    let (index, line_start) = last_block_start(&text, &events)?;
    let length = raw_line_start(window, &text, line_start)?;
    let spacings = list_spacings(events[..index].iter().map(|(event, _)| event));
    let mut renderer = Renderer::new(theme, usize::from(width), follows, spacings);
    for (event, _) in events.into_iter().take(index) {
        renderer.event(event);
    }
    Some((renderer.finish(), length))
}

/// How many bytes of `window` (raw text that ends at a line's end) the top-level blocks before
/// its last one take, or `None` when it holds a single block.
fn leading_blocks_end(window: &str) -> Option<usize> {
    let text = sanitize(window);
    let events: Vec<_> = Parser::new_ext(&text, parser_options())
        .into_offset_iter()
        .collect();
    let (_, line_start) = last_block_start(&text, &events)?;
    raw_line_start(window, &text, line_start)
}

/// The last top-level block of sanitized `text`, parsed into `events`: the index of its first
/// event and where its line starts. `None` when the text holds a single block.
fn last_block_start(text: &str, events: &[(Event<'_>, Range<usize>)]) -> Option<(usize, usize)> {
    let mut cut = None;
    let mut depth = 0usize;
    for (index, (event, range)) in events.iter().enumerate() {
        if depth == 0 && index > 0 {
            let line_start = text[..range.start].rfind('\n').map_or(0, |at| at + 1);
            if line_start > 0 && text[line_start..range.start].trim().is_empty() {
                cut = Some((index, line_start));
            }
        }
        match event {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    cut
}

/// Where in raw `window` the line starts that starts at `line_start` of `sanitized`, its
/// sanitized text. Without escape sequences, sanitizing keeps the lines: it is as many lines
/// into the one as into the other.
fn raw_line_start(window: &str, sanitized: &str, line_start: usize) -> Option<usize> {
    let lines_before = sanitized[..line_start].matches('\n').count();
    let (newline, _) = window
        .match_indices('\n')
        .nth(lines_before.checked_sub(1)?)?;
    Some(newline + 1)
}

/// Whether `source` may define a link reference (`[label]: url`) with a `]:` at or after byte
/// `from`. False alarms cost only speed: a `]:` counts when a line of its paragraph, within a
/// label's length before it, starts with `[` after any indent and quote or list markers.
fn may_define_references(source: &str, from: usize) -> bool {
    source[from..].match_indices("]:").any(|(at, _)| {
        let at = from + at;
        let mut start = at.saturating_sub(MAX_LABEL_BYTES);
        while !source.is_char_boundary(start) {
            start += 1;
        }
        let mut lines = source[start..at].lines().rev();
        let starts_label = |line: &str| {
            line.trim_start_matches(|c: char| {
                c.is_whitespace()
                    || c.is_ascii_digit()
                    || matches!(c, '>' | '-' | '*' | '+' | '.' | ')')
            })
            .starts_with('[')
        };
        lines.next().is_some_and(starts_label)
            || lines
                .take_while(|line| !line.trim().is_empty())
                .any(starts_label)
    })
}
