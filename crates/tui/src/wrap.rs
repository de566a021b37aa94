//! Styled text to lines that fit a width: word wrapping for prose, hard wrapping for code, and
//! the clean-up that keeps text from a model or a command from steering the terminal.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Columns a tab expands to; tab stops would depend on where the text starts.
const TAB: &str = "    ";

/// The number of terminal columns `text` takes.
pub(crate) fn text_width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

pub(crate) fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|span| text_width(&span.content)).sum()
}

/// `text` without what a terminal would act on: escape sequences and control characters go,
/// a tab becomes spaces, and a lone carriage return overwrites its line as a terminal would.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str(TAB),
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    let line_start = out.rfind('\n').map_or(0, |at| at + 1);
                    out.truncate(line_start);
                }
            }
            '\u{1b}' => skip_escape(&mut chars),
            c if c.is_control() || is_invisible_format(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// Skips the rest of an escape sequence whose ESC was just read.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        // CSI: parameters, then one final byte in @..~.
        Some('[') => {
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
        // OSC, DCS and friends: up to BEL or ST (ESC \).
        Some(']' | 'P' | '^' | '_' | 'X') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    chars.next();
                    break;
                }
            }
        }
        _ => {}
    }
}

/// Bidirectional overrides and similar: invisible, and able to make text lie about itself.
fn is_invisible_format(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

/// `text` cut to `width` columns, ending in `…` when something was cut.
pub fn truncate(text: &str, width: usize) -> String {
    if text_width(text) <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    if width > 0 {
        out.push('…');
    }
    out
}

/// What comes before each wrapped line: `first` on the first, `rest` on every later one.
#[derive(Debug, Clone, Default)]
pub(crate) struct Prefix {
    pub first: Vec<Span<'static>>,
    pub rest: Vec<Span<'static>>,
}

impl Prefix {
    pub fn none() -> Prefix {
        Prefix::default()
    }

    /// `first` on the first line and as many spaces as it is wide on the others.
    pub fn hanging(first: Span<'static>) -> Prefix {
        let indent = " ".repeat(text_width(&first.content));
        Prefix {
            first: vec![first],
            rest: vec![Span::raw(indent)],
        }
    }
}

/// Collects finished lines, putting the right prefix before each.
struct LineSink<'p> {
    prefix: &'p Prefix,
    width: usize,
    lines: Vec<Line<'static>>,
    current: Vec<Span<'static>>,
    used: usize,
}

impl<'p> LineSink<'p> {
    fn new(prefix: &'p Prefix, width: usize) -> Self {
        LineSink {
            prefix,
            width,
            lines: Vec::new(),
            current: Vec::new(),
            used: 0,
        }
    }

    /// Columns left for text on the current line (at least one, so that text always moves on).
    fn available(&self) -> usize {
        let prefix = if self.lines.is_empty() {
            &self.prefix.first
        } else {
            &self.prefix.rest
        };
        self.width.saturating_sub(spans_width(prefix)).max(1)
    }

    fn room(&self) -> usize {
        self.available().saturating_sub(self.used)
    }

    fn push(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        self.used += text_width(text);
        match self.current.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(text),
            _ => self.current.push(Span::styled(text.to_string(), style)),
        }
    }

    fn finish_line(&mut self) {
        let prefix = if self.lines.is_empty() {
            &self.prefix.first
        } else {
            &self.prefix.rest
        };
        let mut spans = prefix.clone();
        spans.append(&mut self.current);
        self.lines.push(Line::from(spans));
        self.used = 0;
    }

    /// Pushes `text` a character at a time, breaking the line wherever it is full.
    fn push_breaking(&mut self, text: &str, style: Style) {
        let mut chunk = String::new();
        let mut chunk_width = 0;
        for c in text.chars() {
            let w = c.width().unwrap_or(0);
            let filled = self.used + chunk_width;
            if filled + w > self.available() && filled > 0 {
                self.push(&chunk, style);
                chunk.clear();
                chunk_width = 0;
                self.finish_line();
            }
            chunk.push(c);
            chunk_width += w;
        }
        self.push(&chunk, style);
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        if !self.current.is_empty() || self.lines.is_empty() {
            self.finish_line();
        }
        self.lines
    }
}

/// One unit of prose for wrapping: a word (which may change style midway, as in `**a**b`),
/// a run of spaces, or a line break.
enum Token {
    Word(Vec<(String, Style)>),
    Space(String, Style),
    Break,
}

fn tokenize(spans: &[Span<'_>]) -> Vec<Token> {
    let mut tokens = Vec::new();
    for span in spans {
        for c in span.content.chars() {
            match c {
                '\n' => tokens.push(Token::Break),
                ' ' => match tokens.last_mut() {
                    Some(Token::Space(text, _)) => text.push(' '),
                    _ => tokens.push(Token::Space(" ".into(), span.style)),
                },
                c => {
                    if let Some(Token::Word(parts)) = tokens.last_mut() {
                        match parts.last_mut() {
                            Some((text, style)) if *style == span.style => text.push(c),
                            _ => parts.push((c.to_string(), span.style)),
                        }
                    } else {
                        tokens.push(Token::Word(vec![(c.to_string(), span.style)]));
                    }
                }
            }
        }
    }
    tokens
}

/// Word-wraps styled prose to `width` columns, prefix included. A `\n` inside a span breaks
/// the line; spaces at a wrap point are dropped; a word longer than a line is cut.
pub(crate) fn wrap_words(spans: &[Span<'_>], width: usize, prefix: &Prefix) -> Vec<Line<'static>> {
    let mut sink = LineSink::new(prefix, width);
    let mut space: Option<(String, Style)> = None;
    // Spaces at the start of a line the text began (not one a wrap began) are indentation.
    let mut line_began_by_wrap = false;
    for token in tokenize(spans) {
        match token {
            Token::Break => {
                sink.finish_line();
                space = None;
                line_began_by_wrap = false;
            }
            Token::Space(text, style) => space = Some((text, style)),
            Token::Word(parts) => {
                let word_width: usize = parts.iter().map(|(text, _)| text_width(text)).sum();
                let space_width = space.as_ref().map_or(0, |(text, _)| text_width(text));
                let at_start = sink.used == 0;
                if !at_start && space_width + word_width > sink.room() {
                    sink.finish_line();
                    line_began_by_wrap = true;
                    space = None;
                }
                if let Some((text, style)) = space.take()
                    && (sink.used > 0 || !line_began_by_wrap)
                {
                    sink.push_breaking(&text, style);
                }
                for (text, style) in &parts {
                    if text_width(text) <= sink.room() {
                        sink.push(text, *style);
                    } else {
                        sink.push_breaking(text, *style);
                        line_began_by_wrap = true;
                    }
                }
            }
        }
    }
    sink.finish()
}

/// Wraps styled text at exactly `width` columns, keeping every space: for code and diffs, where
/// spaces mean something. A `\n` inside a span breaks the line.
pub(crate) fn wrap_chars(spans: &[Span<'_>], width: usize, prefix: &Prefix) -> Vec<Line<'static>> {
    let mut sink = LineSink::new(prefix, width);
    for span in spans {
        for (index, piece) in span.content.split('\n').enumerate() {
            if index > 0 {
                sink.finish_line();
            }
            sink.push_breaking(piece, span.style);
        }
    }
    sink.finish()
}

/// The plain text of a line, for tests and for measuring.
#[cfg(test)]
pub(crate) fn line_text(line: &Line<'_>) -> String {
    line.spans
        .iter()
        .map(|span| span.content.as_ref())
        .collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use ratatui::style::Modifier;

    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(line_text).collect()
    }

    #[test]
    fn words_wrap_at_spaces_and_long_words_are_cut() {
        let spans = [Span::raw(
            "the quick brown fox jumps over supercalifragilistic",
        )];
        assert_eq!(
            texts(&wrap_words(&spans, 12, &Prefix::none())),
            vec![
                "the quick",
                "brown fox",
                "jumps over",
                "supercalifra",
                "gilistic"
            ]
        );
    }

    #[test]
    fn a_word_that_changes_style_stays_whole() {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let spans = [
            Span::raw("aaaa "),
            Span::styled("bb", bold),
            Span::raw("cc dd"),
        ];
        let lines = wrap_words(&spans, 6, &Prefix::none());
        assert_eq!(texts(&lines), vec!["aaaa", "bbcc", "dd"]);
        assert_eq!(lines[1].spans[0].style, bold);
    }

    #[test]
    fn the_prefix_counts_toward_the_width() {
        let spans = [Span::raw("one two three")];
        let prefix = Prefix::hanging(Span::raw("- "));
        assert_eq!(
            texts(&wrap_words(&spans, 9, &prefix)),
            vec!["- one two", "  three"]
        );
    }

    #[test]
    fn code_keeps_its_spaces_and_cuts_anywhere() {
        let spans = [Span::raw("    let x = 1;\nfoo")];
        assert_eq!(
            texts(&wrap_chars(&spans, 8, &Prefix::none())),
            vec!["    let ", "x = 1;", "foo"]
        );
    }

    #[test]
    fn wide_characters_are_not_split_across_the_edge() {
        let spans = [Span::raw("日本語のテキスト")];
        assert_eq!(
            texts(&wrap_chars(&spans, 5, &Prefix::none())),
            vec!["日本", "語の", "テキ", "スト"]
        );
    }

    #[test]
    fn sanitize_removes_what_a_terminal_would_obey() {
        assert_eq!(
            sanitize("\u{1b}[31mred\u{1b}[0m\tx\r\n\u{1b}]0;title\u{7}ok\u{7}"),
            "red    x\nok"
        );
        assert_eq!(sanitize("10%\r50%\r100%\ndone"), "100%\ndone");
    }

    #[test]
    fn truncate_marks_the_cut() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }
}
