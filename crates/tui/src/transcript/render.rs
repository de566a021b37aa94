//! How the transcript's cells look: an answer's text under its bullet, a notice after its
//! mark, the user's prompt, thinking.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::ThinkingDisplay;
use super::user_prompt::UserPrompt;
use crate::markdown::{render_markdown, render_markdown_after};
use crate::theme::Theme;
use crate::wrap::{Prefix, sanitize, text_width, truncate, wrap_words};

/// How much of the live part of an answer the live region renders: more than its rows hold
/// even 400 columns wide, and little enough to render on every frame. Only one block can be
/// that long (the complete ones before it are finished), but one code block can be very long.
pub(super) const LIVE_TAIL_BYTES: usize = 8 * 1024;

/// Which piece of a cell's lines [`hang`] is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Piece {
    /// The first, whose first line takes the cell's mark.
    First,
    Later,
}

/// An assistant's text, whole, under its bullet.
pub(super) fn render_answer(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    let body = render_markdown(text, answer_width(width), theme);
    hang(body, bullet(theme), Piece::First)
}

/// What the live region shows of an answer being written: its text from byte `from`, where
/// a top-level block starts (the blocks before it are finished), or only the end of that when
/// it is long: the viewport shows no more, and the end's lines are the whole's last ones.
pub(super) fn render_answer_from(
    text: &str,
    from: usize,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let rest = &text[from..];
    if rest.trim().is_empty() {
        return Vec::new();
    }
    let width = answer_width(width);
    match live_tail(rest) {
        Some(tail) => hang(
            render_markdown_after(&tail, width, theme),
            bullet(theme),
            Piece::Later,
        ),
        None if from == 0 => hang(
            render_markdown(rest, width, theme),
            bullet(theme),
            Piece::First,
        ),
        None => hang(
            render_markdown_after(rest, width, theme),
            bullet(theme),
            Piece::Later,
        ),
    }
}

/// The columns an answer's text gets, after its bullet or the indent under it.
pub(super) fn answer_width(width: u16) -> u16 {
    width.saturating_sub(2).max(1)
}

pub(super) fn bullet(theme: &Theme) -> Span<'static> {
    Span::styled("● ", theme.assistant_bullet)
}

/// The end of `text` from a paragraph (or else line) break at least [`LIVE_TAIL_BYTES`] before
/// its end, and not much more, with the code fence the break falls inside reopened, so the
/// visible last lines render as they would in the whole text; `None` when it is not that long,
/// or has no break.
pub(super) fn live_tail(text: &str) -> Option<String> {
    let limit = text.len().checked_sub(LIVE_TAIL_BYTES)?;
    let before = &text.as_bytes()[..limit];
    let near = limit.saturating_sub(LIVE_TAIL_BYTES);
    let cut = match before[near..].windows(2).rposition(|pair| pair == b"\n\n") {
        Some(at) => near + at + 2,
        None => before.iter().rposition(|&byte| byte == b'\n')? + 1,
    };
    let mut open_fence = None;
    for line in text[..cut].lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            open_fence = match open_fence {
                Some(_) => None,
                None => Some(line),
            };
        }
    }
    Some(match open_fence {
        Some(fence) => format!("{fence}\n{}", &text[cut..]),
        None => text[cut..].to_owned(),
    })
}

/// Puts `mark` before the first line of a cell's first piece and as much space before the
/// others.
pub(super) fn hang(
    lines: Vec<Line<'static>>,
    mark: Span<'static>,
    piece: Piece,
) -> Vec<Line<'static>> {
    let indent = " ".repeat(text_width(&mark.content));
    lines
        .into_iter()
        .enumerate()
        .map(|(index, line)| {
            let lead = if index == 0 && piece == Piece::First {
                mark.clone()
            } else {
                Span::raw(indent.clone())
            };
            let mut spans = vec![lead];
            spans.extend(line.spans);
            Line::from(spans)
        })
        .collect()
}

pub(super) fn notice(
    mark: &'static str,
    message: &str,
    style: Style,
    width: usize,
) -> Vec<Line<'static>> {
    // Each line of a multi-line notice (a command's report) wraps on its own, under the mark.
    let mut lines = Vec::new();
    for (index, part) in message.trim().lines().enumerate() {
        let lead = if index == 0 { mark } else { "  " };
        let spans = [Span::styled(sanitize(part), style)];
        lines.extend(wrap_words(
            &spans,
            width,
            &Prefix::hanging(Span::styled(lead, style)),
        ));
    }
    lines
}

/// What the user typed after `> `, then a `⎿ Attached …` line for each attached file.
/// A prompt as typed, cut to its first `limit` lines (if given) with a note of the rest,
/// then a line per attached file.
pub(super) fn render_user_prompt(
    prompt: &UserPrompt,
    width: usize,
    theme: &Theme,
    limit: Option<usize>,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let text = prompt.text.trim_end();
    if !text.trim().is_empty() {
        let prefix = Prefix {
            first: vec![Span::styled("> ", theme.user_prompt)],
            rest: vec![Span::raw("  ")],
        };
        let spans = [Span::styled(sanitize(text), theme.user_text)];
        let mut wrapped = wrap_words(&spans, width, &prefix);
        if let Some(limit) = limit
            && wrapped.len() > limit
        {
            let hidden = wrapped.len() - limit;
            wrapped.truncate(limit);
            wrapped.push(Line::from(Span::styled(
                format!("  … +{hidden} lines (ctrl+o shows them)"),
                theme.dim,
            )));
        }
        lines.extend(wrapped);
    }
    for attachment in &prompt.attachments {
        let prefix = Prefix {
            first: vec![Span::styled("  ⎿ ", theme.dim)],
            rest: vec![Span::raw("    ")],
        };
        let spans = [Span::styled(sanitize(&attachment.summary()), theme.dim)];
        lines.extend(wrap_words(&spans, width, &prefix));
    }
    lines
}

pub(super) fn render_thinking(
    text: &str,
    display: ThinkingDisplay,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let text = sanitize(text.trim());
    if text.is_empty() {
        return Vec::new();
    }
    let prefix = Prefix::hanging(Span::styled("✻ ", theme.thinking));
    match display {
        ThinkingDisplay::Expanded => {
            wrap_words(&[Span::styled(text, theme.thinking)], width, &prefix)
        }
        ThinkingDisplay::Collapsed => {
            let mut lines = text.lines().filter(|line| !line.trim().is_empty());
            let first = lines.next().unwrap_or_default().trim();
            let more = if lines.next().is_some() { " …" } else { "" };
            let shown = truncate(&format!("{first}{more}"), width.saturating_sub(2).max(1));
            vec![Line::from(vec![
                Span::styled("✻ ", theme.thinking),
                Span::styled(shown, theme.thinking),
            ])]
        }
    }
}
