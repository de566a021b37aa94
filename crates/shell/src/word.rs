//! Shell words after quote removal, keeping track of what is known only at run time.
//!
//! A [`Word`] is a list of [`Piece`]s: literal text (quoted or not, because only unquoted text
//! is subject to globbing, tilde and brace expansion), variables, and substitutions whose value
//! comes from running something.

use std::ops::Range;

/// Upper bound on the words one brace expansion may produce; past it the word stays unexpanded.
const BRACE_EXPANSION_LIMIT: usize = 256;

/// One part of a shell word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Literal text. `quoted` text (inside quotes, or backslash-escaped) is exempt from globbing,
    /// tilde and brace expansion.
    Text { text: String, quoted: bool },
    /// `$NAME` or `${NAME}`.
    Variable(String),
    /// `$(…)`, backticks, `<(…)`, `>(…)`, `$((…))`, or `${…}` with an operator: the value is
    /// known only at run time. `inner` indexes the invocations found inside it.
    Substitution {
        source: String,
        kind: SubstitutionKind,
        inner: Range<usize>,
    },
}

/// What produces a substitution's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubstitutionKind {
    /// `$(…)` or backticks.
    Command,
    /// `<(…)` or `>(…)`: the word becomes a `/dev/fd/N` path.
    Process,
    /// `$((…))`.
    Arithmetic,
    /// `${NAME:-…}` and the other parameter operators.
    Parameter,
}

/// A shell word after quote removal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Word {
    pieces: Vec<Piece>,
}

impl Word {
    /// A word made of unquoted literal text.
    pub(crate) fn unquoted(text: &str) -> Word {
        let mut word = Word::default();
        word.push_text(text, false);
        word
    }

    /// Appends literal text, merging it with the previous piece when that is text of the
    /// same quoting.
    pub(crate) fn push_text(&mut self, text: &str, quoted: bool) {
        if text.is_empty() {
            return;
        }
        if let Some(Piece::Text {
            text: last,
            quoted: last_quoted,
        }) = self.pieces.last_mut()
            && *last_quoted == quoted
        {
            last.push_str(text);
            return;
        }
        self.pieces.push(Piece::Text {
            text: text.to_owned(),
            quoted,
        });
    }

    pub(crate) fn push(&mut self, piece: Piece) {
        match piece {
            Piece::Text { text, quoted } => self.push_text(&text, quoted),
            other => self.pieces.push(other),
        }
    }

    pub(crate) fn append(&mut self, other: Word) {
        for piece in other.pieces {
            self.push(piece);
        }
    }

    pub(crate) fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// The word's text when it contains no variables or substitutions.
    pub(crate) fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text { text, .. } => out.push_str(text),
                Piece::Variable(_) | Piece::Substitution { .. } => return None,
            }
        }
        Some(out)
    }

    /// The word as shown to people: literal text after quote removal, variables and
    /// substitutions as written.
    pub(crate) fn display(&self) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text { text, .. } => out.push_str(text),
                Piece::Variable(name) => {
                    out.push('$');
                    out.push_str(name);
                }
                Piece::Substitution { source, .. } => out.push_str(source),
            }
        }
        out
    }

    /// Whether the whole word is one process substitution (`<(…)`), which names a pipe rather
    /// than a file.
    pub(crate) fn is_process_substitution(&self) -> bool {
        matches!(
            self.pieces.as_slice(),
            [Piece::Substitution {
                kind: SubstitutionKind::Process,
                ..
            }]
        )
    }

    /// The substitutions in the word, with the range of invocations found inside each.
    pub(crate) fn substitutions(
        &self,
    ) -> impl Iterator<Item = (&str, SubstitutionKind, Range<usize>)> {
        self.pieces.iter().filter_map(|piece| match piece {
            Piece::Substitution {
                source,
                kind,
                inner,
            } => Some((source.as_str(), *kind, inner.clone())),
            Piece::Text { .. } | Piece::Variable(_) => None,
        })
    }

    /// The first variable or substitution, as written, when the word has one.
    pub(crate) fn first_unknown(&self) -> Option<String> {
        self.pieces.iter().find_map(|piece| match piece {
            Piece::Text { .. } => None,
            Piece::Variable(name) => Some(format!("${name}")),
            Piece::Substitution { source, .. } => Some(source.clone()),
        })
    }

    /// The word without its first `bytes` bytes of leading literal text; `None` when the word
    /// does not start with that much literal text.
    pub(crate) fn without_prefix(&self, bytes: usize) -> Option<Word> {
        let mut rest = Word::default();
        let mut to_skip = bytes;
        for piece in &self.pieces {
            if to_skip == 0 {
                rest.push(piece.clone());
                continue;
            }
            match piece {
                Piece::Text { text, .. } if text.len() <= to_skip => to_skip -= text.len(),
                Piece::Text { text, quoted } => {
                    rest.push_text(text.get(to_skip..)?, *quoted);
                    to_skip = 0;
                }
                Piece::Variable(_) | Piece::Substitution { .. } => return None,
            }
        }
        (to_skip == 0).then_some(rest)
    }

    /// The literal text before the first variable or substitution.
    pub(crate) fn literal_prefix(&self) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text { text, .. } => out.push_str(text),
                Piece::Variable(_) | Piece::Substitution { .. } => break,
            }
        }
        out
    }

    /// Bash's brace expansion of unquoted `{a,b}` and `{1..3}`: `x{a,b}` becomes `xa` and
    /// `xb`. A word without braces expands to itself.
    pub(crate) fn brace_expand(&self) -> Vec<Word> {
        let mut done = Vec::new();
        let mut pending = vec![self.clone()];
        while let Some(word) = pending.pop() {
            match word.expand_first_brace() {
                Some(expanded)
                    if done.len() + pending.len() + expanded.len() <= BRACE_EXPANSION_LIMIT =>
                {
                    pending.extend(expanded.into_iter().rev());
                }
                Some(_) | None => done.push(word),
            }
        }
        done
    }

    fn expand_first_brace(&self) -> Option<Vec<Word>> {
        for (index, piece) in self.pieces.iter().enumerate() {
            let Piece::Text {
                text,
                quoted: false,
            } = piece
            else {
                continue;
            };
            let Some(group) = find_brace_group(text) else {
                continue;
            };
            let prefix = text.get(..group.open).unwrap_or_default();
            let suffix = text.get(group.close + 1..).unwrap_or_default();
            let words = group
                .alternatives
                .iter()
                .map(|alternative| {
                    let mut word = Word {
                        pieces: self.pieces.get(..index).unwrap_or_default().to_vec(),
                    };
                    word.push_text(prefix, false);
                    word.push_text(alternative, false);
                    word.push_text(suffix, false);
                    for rest in self.pieces.get(index + 1..).unwrap_or_default() {
                        word.push(rest.clone());
                    }
                    word
                })
                .collect();
            return Some(words);
        }
        None
    }
}

/// A `{…}` group found in unquoted text, with the texts it expands to.
struct BraceGroup {
    open: usize,
    close: usize,
    alternatives: Vec<String>,
}

fn find_brace_group(text: &str) -> Option<BraceGroup> {
    let bytes = text.as_bytes();
    for (open, _) in text.match_indices('{') {
        let mut depth = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        for (offset, &byte) in bytes.iter().enumerate().skip(open) {
            match byte {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(offset);
                        break;
                    }
                }
                b',' if depth == 1 => commas.push(offset),
                _ => {}
            }
        }
        let Some(close) = close else {
            continue;
        };
        let inside = text.get(open + 1..close).unwrap_or_default();
        let alternatives = if commas.is_empty() {
            match sequence(inside) {
                Some(items) => items,
                None => continue,
            }
        } else {
            let mut items = Vec::new();
            let mut start = open + 1;
            for comma in commas.into_iter().chain([close]) {
                items.push(text.get(start..comma).unwrap_or_default().to_owned());
                start = comma + 1;
            }
            items
        };
        return Some(BraceGroup {
            open,
            close,
            alternatives,
        });
    }
    None
}

/// `1..5`, `a..e` and `1..10..2`, as bash expands them inside braces.
fn sequence(inside: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inside.split("..").collect();
    let (start, end, step) = match parts.as_slice() {
        [start, end] => (*start, *end, 1i64),
        [start, end, step] => (
            *start,
            *end,
            step.parse::<i64>().ok()?.checked_abs()?.max(1),
        ),
        _ => return None,
    };
    let limit = BRACE_EXPANSION_LIMIT as i64;
    if let (Ok(from), Ok(to)) = (start.parse::<i64>(), end.parse::<i64>()) {
        if (to - from).abs() / step >= limit {
            return None;
        }
        let forward = from <= to;
        let mut items = Vec::new();
        let mut value = from;
        while (forward && value <= to) || (!forward && value >= to) {
            items.push(value.to_string());
            value += if forward { step } else { -step };
        }
        return Some(items);
    }
    let (from, to) = (single_char(start)?, single_char(end)?);
    let (low, high) = (from.min(to) as u32, from.max(to) as u32);
    let mut items: Vec<String> = (low..=high)
        .step_by(usize::try_from(step).ok()?)
        .filter_map(char::from_u32)
        .map(String::from)
        .collect();
    if from > to {
        items.reverse();
    }
    Some(items)
}

fn single_char(text: &str) -> Option<char> {
    let mut chars = text.chars();
    let first = chars.next()?;
    (chars.next().is_none() && first.is_ascii_alphabetic()).then_some(first)
}

/// Quote removal for an unquoted word: a backslash makes the next character literal, and a
/// backslash-newline disappears.
pub(crate) fn push_unquoted(word: &mut Word, raw: &str) {
    let mut chars = raw.chars();
    let mut plain = String::new();
    while let Some(c) = chars.next() {
        if c != '\\' {
            plain.push(c);
            continue;
        }
        word.push_text(&plain, false);
        plain.clear();
        match chars.next() {
            Some('\n') => {}
            Some(escaped) => word.push_text(escaped.encode_utf8(&mut [0; 4]), true),
            None => plain.push('\\'),
        }
    }
    word.push_text(&plain, false);
}

/// Quote removal inside double quotes: a backslash escapes only `$`, `` ` ``, `"`, `\` and
/// newline.
pub(crate) fn unescape_double_quoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                    continue;
                }
                Some('\n') => {
                    chars.next();
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

/// The value of an ANSI-C quoted string, `$'…'` without its `$'` and `'`.
pub(crate) fn decode_ansi_c(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            out.push('\\');
            break;
        };
        let simple = match escape {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(escape),
            _ => None,
        };
        if let Some(value) = simple {
            out.push(value);
            continue;
        }
        let (radix, max_digits) = match escape {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => (8, 3),
            'c' => {
                if let Some(control) = chars.next() {
                    out.push(char::from((control as u8) & 0x1f));
                }
                continue;
            }
            other => {
                out.push('\\');
                out.push(other);
                continue;
            }
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(escape);
        }
        while digits.len() < max_digits {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => {
                    digits.push(*d);
                    chars.next();
                }
                _ => break,
            }
        }
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(value) => out.push(value),
            None => {
                out.push('\\');
                out.push(escape);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(words: &[Word]) -> Vec<String> {
        words.iter().map(Word::display).collect()
    }

    #[test]
    fn brace_expansion_follows_bash() {
        assert_eq!(
            texts(&Word::unquoted("a{b,c}d").brace_expand()),
            ["abd", "acd"]
        );
        assert_eq!(
            texts(&Word::unquoted("{rm,-rf}").brace_expand()),
            ["rm", "-rf"]
        );
        assert_eq!(
            texts(&Word::unquoted("x{1..3}").brace_expand()),
            ["x1", "x2", "x3"]
        );
        assert_eq!(
            texts(&Word::unquoted("{c..a}").brace_expand()),
            ["c", "b", "a"]
        );
        assert_eq!(
            texts(&Word::unquoted("{a,{b,c}}").brace_expand()),
            ["a", "b", "c"]
        );
        assert_eq!(texts(&Word::unquoted("{}").brace_expand()), ["{}"]);
        assert_eq!(texts(&Word::unquoted("{a}").brace_expand()), ["{a}"]);
        let mut quoted = Word::default();
        quoted.push_text("{a,b}", true);
        assert_eq!(texts(&quoted.brace_expand()), ["{a,b}"]);
    }

    #[test]
    fn ansi_c_escapes_decode() {
        assert_eq!(decode_ansi_c(r"\x72m"), "rm");
        assert_eq!(decode_ansi_c(r"\162\155"), "rm");
        assert_eq!(decode_ansi_c(r"a\tb\n"), "a\tb\n");
        assert_eq!(decode_ansi_c(r"\u00e9"), "é");
    }

    #[test]
    fn backslashes_quote_the_next_character() {
        let mut word = Word::default();
        push_unquoted(&mut word, r"\rm");
        assert_eq!(word.literal().as_deref(), Some("rm"));
        let mut glob = Word::default();
        push_unquoted(&mut glob, r"a\*");
        assert_eq!(
            glob.pieces(),
            [
                Piece::Text {
                    text: "a".into(),
                    quoted: false
                },
                Piece::Text {
                    text: "*".into(),
                    quoted: true
                }
            ]
        );
        assert_eq!(unescape_double_quoted(r#"a\"b\$c\d"#), r#"a"b$c\d"#);
    }
}
