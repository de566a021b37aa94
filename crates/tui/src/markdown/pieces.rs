//! A long Markdown text rendered a piece at a time, so that writing a long answer into the
//! scrollback never blocks the UI for long.
//!
//! A piece ends where a top-level block starts. Every block before it is closed there, whatever
//! follows, so each renders as it does in the whole text, and the pieces' lines, one after
//! another, are the lines [`render_markdown`](super::render_markdown) gives for the whole.

use pulldown_cmark::{Event, Parser};
use ratatui::text::Line;

use super::{Follows, Renderer, parser_options, render_events};
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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct MarkdownPieces {
    /// Where the next piece starts in the text.
    offset: usize,
    /// The pieces so far rendered a line.
    shown: bool,
    /// Whether the text may be cut at all, found out once, on the first piece.
    cuttable: Option<bool>,
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
        let cuttable = *self
            .cuttable
            .get_or_insert_with(|| !may_define_references(source));
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
    // The last top-level block's first event, and where its line starts.
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
    let (index, line_start) = cut?;
    // Without escape sequences, sanitizing keeps the lines: the cut is as many lines into the
    // raw window as into the sanitized one.
    let lines_before = text[..line_start].matches('\n').count();
    let (newline, _) = window
        .match_indices('\n')
        .nth(lines_before.checked_sub(1)?)?;
    let mut renderer = Renderer::new(theme, usize::from(width), follows);
    for (event, _) in events.into_iter().take(index) {
        renderer.event(event);
    }
    Some((renderer.finish(), newline + 1))
}

/// Whether `source` may define a link reference (`[label]: url`). False alarms cost only
/// speed: a `]:` counts when a line of its paragraph, within a label's length before it,
/// starts with `[` after any indent and quote or list markers.
fn may_define_references(source: &str) -> bool {
    source.match_indices("]:").any(|(at, _)| {
        let mut from = at.saturating_sub(MAX_LABEL_BYTES);
        while !source.is_char_boundary(from) {
            from += 1;
        }
        let mut lines = source[from..at].lines().rev();
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
