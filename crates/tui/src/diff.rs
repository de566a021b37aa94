//! Unified diffs with line numbers, for edits shown in the transcript and in the permission
//! dialog.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use similar::{ChangeTag, TextDiff};

use crate::theme::Theme;
use crate::wrap::{Prefix, sanitize, wrap_chars};

/// Unchanged lines kept around each change.
const CONTEXT_LINES: usize = 3;

/// How many lines a change adds and removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DiffStats {
    /// Lines in the new text that the old did not have.
    pub added: usize,
    /// Lines of the old text that the new one drops (a changed line counts once here and
    /// once in `added`).
    pub removed: usize,
}

impl DiffStats {
    /// Counts a line diff of `old` against `new`, for an edit's "Added 3 lines, removed 1"
    /// summary.
    pub fn between(old: &str, new: &str) -> DiffStats {
        let diff = TextDiff::from_lines(old, new);
        let mut stats = DiffStats::default();
        for change in diff.iter_all_changes() {
            match change.tag() {
                ChangeTag::Insert => stats.added += 1,
                ChangeTag::Delete => stats.removed += 1,
                ChangeTag::Equal => {}
            }
        }
        stats
    }
}

/// The 1-based line of `haystack` on which `needle` first starts: where a snippet sits in its
/// file, so that a diff of the snippet can show the file's line numbers.
pub fn line_of(haystack: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    let at = haystack.find(needle)?;
    Some(haystack[..at].matches('\n').count() + 1)
}

/// A unified diff of `old` to `new` with line numbers counted from 1; see [`render_diff_from`].
pub fn render_diff(old: &str, new: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    render_diff_from(old, new, 1, width, theme)
}

/// A unified diff of `old` to `new`: changed lines with three lines of context, a `⋮` between
/// separate hunks, each line numbered (a removed line by its old number, any other by its new
/// one, counting from `first_line`) and marked `-`, `+` or ` `. Long lines wrap under their text.
///
/// ```
/// use cairn_tui::{Theme, render_diff};
///
/// let lines = render_diff("a\nb\n", "a\nc\n", 40, &Theme::plain());
/// let text: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
/// assert_eq!(text, ["1   a", "2 - b", "2 + c"]);
/// ```
pub fn render_diff_from(
    old: &str,
    new: &str,
    first_line: usize,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let old = sanitize(old);
    let new = sanitize(new);
    let diff = TextDiff::from_lines(&old, &new);
    let last_number = first_line + old.lines().count().max(new.lines().count());
    let gutter = last_number.to_string().len();
    let width = usize::from(width);

    let mut lines = Vec::new();
    for (index, group) in diff.grouped_ops(CONTEXT_LINES).iter().enumerate() {
        if index > 0 {
            lines.push(Line::from(Span::styled(
                format!("{:>gutter$}", "⋮"),
                theme.diff_gutter,
            )));
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let (sign, number, style) = match change.tag() {
                    ChangeTag::Delete => ("-", change.old_index(), theme.diff_removed),
                    ChangeTag::Insert => ("+", change.new_index(), theme.diff_added),
                    ChangeTag::Equal => (" ", change.new_index(), Style::new()),
                };
                let number = number.map_or(String::new(), |n| (n + first_line).to_string());
                let prefix = Prefix {
                    first: vec![
                        Span::styled(format!("{number:>gutter$} "), theme.diff_gutter),
                        Span::styled(format!("{sign} "), style),
                    ],
                    rest: vec![Span::raw(" ".repeat(gutter + 3))],
                };
                let text = change.value().trim_end_matches(['\n', '\r']);
                let text = [Span::styled(text.to_string(), style)];
                lines.extend(wrap_chars(&text, width, &prefix));
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn plain(old: &str, new: &str, first: usize, width: u16) -> Vec<String> {
        render_diff_from(old, new, first, width, &Theme::plain())
            .iter()
            .map(|line| line.to_string())
            .collect()
    }

    #[test]
    fn separate_hunks_are_split_by_an_ellipsis() {
        let old: String = (1..=12).map(|n| format!("line {n}\n")).collect();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 11\n", "");
        assert_eq!(
            plain(&old, &new, 1, 40),
            vec![
                " 1   line 1",
                " 2 - line 2",
                " 2 + line two",
                " 3   line 3",
                " 4   line 4",
                " 5   line 5",
                " ⋮",
                " 8   line 8",
                " 9   line 9",
                "10   line 10",
                "11 - line 11",
                "11   line 12",
            ]
        );
    }

    #[test]
    fn numbers_start_where_the_snippet_sits() {
        assert_eq!(plain("x\n", "y\n", 41, 40), vec!["41 - x", "41 + y"]);
        assert_eq!(line_of("a\nb\nneedle\n", "needle"), Some(3));
    }

    #[test]
    fn long_lines_wrap_under_their_text() {
        assert_eq!(
            plain("", "abcdefghij", 1, 9),
            vec!["1 + abcde", "    fghij"]
        );
    }

    #[test]
    fn stats_count_lines() {
        assert_eq!(
            DiffStats::between("a\nb\n", "a\nc\nd\n"),
            DiffStats {
                added: 2,
                removed: 1
            }
        );
    }
}
