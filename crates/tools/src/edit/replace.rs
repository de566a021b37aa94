//! One exact string replacement: find `old_string` (once, or everywhere with `replace_all`)
//! and splice in `new_string`, matching the file's line endings.

use std::borrow::Cow;

use super::snippet::Splice;
use super::text::LineEnding;

/// One replacement the model asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Replacement<'a> {
    pub(crate) old: &'a str,
    pub(crate) new: &'a str,
    pub(crate) scope: Scope,
}

/// Whether a replacement must match exactly once or may match many times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Unique,
    All,
}

impl Scope {
    pub(crate) fn from_replace_all(replace_all: Option<bool>) -> Scope {
        match replace_all {
            Some(true) => Scope::All,
            Some(false) | None => Scope::Unique,
        }
    }
}

/// Why a replacement could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReplaceError {
    /// `old_string == new_string`.
    Identical,
    /// An empty `old_string` on text that is not empty.
    EmptyOldString,
    NotFound,
    /// More than one match without `replace_all`: the 1-based line of each match.
    Ambiguous {
        lines: Vec<usize>,
    },
}

/// `text` with the replacement made, and where the new text went.
pub(crate) fn replace(
    text: &str,
    replacement: Replacement<'_>,
    line_ending: LineEnding,
) -> Result<(String, Vec<Splice>), ReplaceError> {
    let Replacement { old, new, scope } = replacement;
    if old == new {
        return Err(ReplaceError::Identical);
    }
    if old.is_empty() {
        if !text.is_empty() {
            return Err(ReplaceError::EmptyOldString);
        }
        let splice = Splice {
            at: 0,
            old_len: 0,
            new_len: new.len(),
        };
        return Ok((new.to_string(), vec![splice]));
    }
    let Some((old, new, starts)) = spellings(old, new, line_ending)
        .into_iter()
        .map(|(old, new)| {
            let starts: Vec<usize> = text.match_indices(old.as_ref()).map(|(at, _)| at).collect();
            (old, new, starts)
        })
        .find(|(_, _, starts)| !starts.is_empty())
    else {
        return Err(ReplaceError::NotFound);
    };
    if starts.len() > 1 && scope == Scope::Unique {
        let lines = starts.iter().map(|&at| line_number_at(text, at)).collect();
        return Err(ReplaceError::Ambiguous { lines });
    }
    let mut edited = String::with_capacity(text.len() + starts.len() * new.len());
    let mut copied = 0;
    let mut splices = Vec::with_capacity(starts.len());
    for at in starts {
        edited.push_str(&text[copied..at]);
        edited.push_str(&new);
        copied = at + old.len();
        splices.push(Splice {
            at,
            old_len: old.len(),
            new_len: new.len(),
        });
    }
    edited.push_str(&text[copied..]);
    Ok((edited, splices))
}

/// The ways to spell `old`/`new` in this file, most likely first. The model reads lines
/// without their `\r`, so in a CRLF file its `\n` means `\r\n`; the spelling as given comes
/// second, for files that mix line endings.
fn spellings<'a>(
    old: &'a str,
    new: &'a str,
    line_ending: LineEnding,
) -> Vec<(Cow<'a, str>, Cow<'a, str>)> {
    let as_given = (Cow::Borrowed(old), Cow::Borrowed(new));
    let converted = match line_ending {
        LineEnding::Crlf => (to_crlf(old), to_crlf(new)),
        LineEnding::Lf => (to_lf(old), to_lf(new)),
    };
    let mut spellings = match line_ending {
        LineEnding::Crlf => vec![converted, as_given],
        LineEnding::Lf => vec![as_given, converted],
    };
    spellings.dedup_by(|a, b| a.0 == b.0);
    spellings
}

fn to_lf(text: &str) -> Cow<'_, str> {
    if text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

fn to_crlf(text: &str) -> Cow<'_, str> {
    if text.contains('\n') {
        Cow::Owned(to_lf(text).replace('\n', "\r\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The 1-based line that byte `at` of `text` is on.
pub(crate) fn line_number_at(text: &str, at: usize) -> usize {
    text.as_bytes()[..at]
        .iter()
        .filter(|&&byte| byte == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn unique<'a>(old: &'a str, new: &'a str) -> Replacement<'a> {
        Replacement {
            old,
            new,
            scope: Scope::Unique,
        }
    }

    #[test]
    fn a_unique_match_is_replaced() {
        let (text, splices) = replace("a b c", unique("b", "XY"), LineEnding::Lf).unwrap();
        assert_eq!(text, "a XY c");
        assert_eq!(
            splices,
            vec![Splice {
                at: 2,
                old_len: 1,
                new_len: 2
            }]
        );
    }

    #[test]
    fn newlines_follow_a_crlf_file_and_a_mixed_file_still_matches() {
        let crlf = replace("a\r\nb\r\n", unique("a\nb", "x\ny"), LineEnding::Crlf).unwrap();
        assert_eq!(crlf.0, "x\r\ny\r\n");
        let mixed = replace("a\r\nb\nc\r\n", unique("b\nc", "B\nC"), LineEnding::Crlf).unwrap();
        assert_eq!(mixed.0, "a\r\nB\nC\r\n");
    }

    #[test]
    fn ambiguity_and_absence_are_errors() {
        let text = "x\ny\nx\n";
        assert_eq!(
            replace(text, unique("x", "z"), LineEnding::Lf),
            Err(ReplaceError::Ambiguous { lines: vec![1, 3] })
        );
        assert_eq!(
            replace(text, unique("q", "z"), LineEnding::Lf),
            Err(ReplaceError::NotFound)
        );
        assert_eq!(
            replace(text, unique("x", "x"), LineEnding::Lf),
            Err(ReplaceError::Identical)
        );
        assert_eq!(
            replace(text, unique("", "z"), LineEnding::Lf),
            Err(ReplaceError::EmptyOldString)
        );
        let all = Replacement {
            scope: Scope::All,
            ..unique("x", "z")
        };
        assert_eq!(replace(text, all, LineEnding::Lf).unwrap().0, "z\ny\nz\n");
    }
}
