//! Markdown tables as aligned columns, squeezed to the width by wrapping cells, or as one
//! `header: value` block per row when even that cannot fit.

use pulldown_cmark::Alignment;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use crate::theme::Theme;
use crate::wrap::{Prefix, spans_width, text_width, wrap_words};

type Cell = Vec<Span<'static>>;

/// The narrowest a column is squeezed to before the table gives up on columns.
const MIN_COLUMN: usize = 3;
const SEPARATOR: &str = " │ ";

/// The table's lines, each at most `width` columns, without any prefix.
pub(crate) fn render_table(
    head: Option<&[Cell]>,
    rows: &[Vec<Cell>],
    alignments: &[Alignment],
    width: usize,
    theme: &Theme,
) -> Vec<Vec<Span<'static>>> {
    let columns = head
        .map_or(0, <[Cell]>::len)
        .max(rows.iter().map(Vec::len).max().unwrap_or(0));
    if columns == 0 {
        return Vec::new();
    }
    let head: Option<Vec<Cell>> = head.map(|cells| cells.iter().map(|cell| bold(cell)).collect());
    let Some(widths) = column_widths(head.as_deref(), rows, columns, width) else {
        return render_stacked(head.as_deref(), rows, width, theme);
    };

    let separator = Span::styled(SEPARATOR, theme.table_border);
    let mut out = Vec::new();
    if let Some(head) = &head {
        out.extend(render_row(head, &widths, alignments, &separator));
        let rule: Vec<String> = widths.iter().map(|&w| "─".repeat(w)).collect();
        out.push(vec![Span::styled(rule.join("─┼─"), theme.table_border)]);
    }
    for row in rows {
        out.extend(render_row(row, &widths, alignments, &separator));
    }
    out
}

fn bold(cell: &Cell) -> Cell {
    cell.iter()
        .map(|span| {
            let mut span = span.clone();
            span.style = span.style.add_modifier(Modifier::BOLD);
            span
        })
        .collect()
}

/// Each column's natural width, narrowed widest-first until the table fits; `None` when it
/// cannot fit even with every column at its minimum.
fn column_widths(
    head: Option<&[Cell]>,
    rows: &[Vec<Cell>],
    columns: usize,
    width: usize,
) -> Option<Vec<usize>> {
    let mut widths = vec![1; columns];
    for row in head.into_iter().chain(rows.iter().map(Vec::as_slice)) {
        for (index, cell) in row.iter().enumerate() {
            widths[index] = widths[index].max(spans_width(cell));
        }
    }
    let separators = text_width(SEPARATOR) * (columns - 1);
    let budget = width.checked_sub(separators)?;
    loop {
        let total: usize = widths.iter().sum();
        if total <= budget {
            return Some(widths);
        }
        let (widest, &w) = widths
            .iter()
            .enumerate()
            .max_by_key(|&(index, &w)| (w, std::cmp::Reverse(index)))?;
        if w <= MIN_COLUMN {
            return None;
        }
        widths[widest] = w.saturating_sub(total - budget).max(MIN_COLUMN).min(w - 1);
    }
}

/// One table row: each cell wrapped in its column, padded to its alignment, and the row as
/// tall as its tallest cell.
fn render_row(
    row: &[Cell],
    widths: &[usize],
    alignments: &[Alignment],
    separator: &Span<'static>,
) -> Vec<Vec<Span<'static>>> {
    let wrapped: Vec<Vec<Line<'static>>> = widths
        .iter()
        .enumerate()
        .map(|(index, &width)| match row.get(index) {
            Some(cell) => wrap_words(cell, width, &Prefix::none()),
            None => Vec::new(),
        })
        .collect();
    let height = wrapped.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let mut out = Vec::with_capacity(height);
    for line_index in 0..height {
        let mut spans = Vec::new();
        for (column, &width) in widths.iter().enumerate() {
            if column > 0 {
                spans.push(separator.clone());
            }
            let cell = wrapped[column]
                .get(line_index)
                .map(|line| line.spans.clone())
                .unwrap_or_default();
            let gap = width.saturating_sub(spans_width(&cell));
            let (before, after) = match alignments.get(column) {
                Some(Alignment::Right) => (gap, 0),
                Some(Alignment::Center) => (gap / 2, gap - gap / 2),
                Some(Alignment::Left | Alignment::None) | None => (0, gap),
            };
            let last = column + 1 == widths.len();
            if before > 0 {
                spans.push(Span::raw(" ".repeat(before)));
            }
            spans.extend(cell);
            if after > 0 && !last {
                spans.push(Span::raw(" ".repeat(after)));
            }
        }
        out.push(spans);
    }
    out
}

/// For a table too wide for columns: each row as `header: value` lines, rows set apart.
fn render_stacked(
    head: Option<&[Cell]>,
    rows: &[Vec<Cell>],
    width: usize,
    theme: &Theme,
) -> Vec<Vec<Span<'static>>> {
    let mut out = Vec::new();
    for (row_index, row) in rows.iter().enumerate() {
        if row_index > 0 {
            out.push(vec![Span::styled(
                "─".repeat(width.min(8)),
                theme.table_border,
            )]);
        }
        for (index, cell) in row.iter().enumerate() {
            let mut spans = Vec::new();
            if let Some(title) = head.and_then(|head| head.get(index)) {
                spans.extend(title.iter().cloned());
                spans.push(Span::raw(": "));
            }
            spans.extend(cell.iter().cloned());
            out.extend(
                wrap_words(&spans, width, &Prefix::none())
                    .into_iter()
                    .map(|line| line.spans),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn cell(text: &str) -> Cell {
        vec![Span::raw(text.to_string())]
    }

    fn text(lines: &[Vec<Span<'static>>]) -> Vec<String> {
        lines
            .iter()
            .map(|spans| spans.iter().map(|span| span.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn columns_align_and_right_alignment_pads_on_the_left() {
        let head = [cell("name"), cell("size")];
        let rows = [
            vec![cell("a.rs"), cell("12")],
            vec![cell("main.rs"), cell("1200")],
        ];
        let lines = render_table(
            Some(&head),
            &rows,
            &[Alignment::None, Alignment::Right],
            40,
            &Theme::plain(),
        );
        assert_eq!(
            text(&lines),
            vec![
                "name    │ size",
                "────────┼─────",
                "a.rs    │   12",
                "main.rs │ 1200"
            ]
        );
    }

    #[test]
    fn a_narrow_width_wraps_the_widest_column() {
        let head = [cell("key"), cell("description")];
        let rows = [vec![cell("x"), cell("a rather long description")]];
        let lines = render_table(Some(&head), &rows, &[], 20, &Theme::plain());
        assert!(
            text(&lines).iter().all(|line| line.chars().count() <= 20),
            "{lines:?}"
        );
        assert_eq!(text(&lines)[2], "x   │ a rather long");
    }

    #[test]
    fn too_many_columns_stack_as_header_value_lines() {
        let head = [cell("a"), cell("b"), cell("c")];
        let rows = [
            vec![cell("one"), cell("two"), cell("three")],
            vec![cell("four"), cell("five"), cell("six")],
        ];
        let lines = render_table(Some(&head), &rows, &[], 8, &Theme::plain());
        assert_eq!(
            text(&lines),
            vec![
                "a: one",
                "b: two",
                "c: three",
                "────────",
                "a: four",
                "b: five",
                "c: six"
            ]
        );
    }
}
