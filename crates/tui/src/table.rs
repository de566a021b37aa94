//! Markdown tables as aligned columns, squeezed to the width by narrowing the widest columns
//! together and wrapping their cells, or as one `header: value` block per row when that would
//! leave a column too thin to read.

use pulldown_cmark::Alignment;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use crate::theme::Theme;
use crate::wrap::{Prefix, spans_width, text_width, wrap_words};

type Cell = Vec<Span<'static>>;

/// The narrowest a column is squeezed to before the table gives up on columns: narrower, its
/// cells break into fragments too short to read.
const MIN_SQUEEZED: usize = 8;
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

/// Each column's width: its widest cell when the table fits, else the widest columns narrowed
/// together (see [`water_fill`]), keeping words whole if they can. `None` when that leaves a
/// narrowed column too thin to read, or the table cannot fit at all.
fn column_widths(
    head: Option<&[Cell]>,
    rows: &[Vec<Cell>],
    columns: usize,
    width: usize,
) -> Option<Vec<usize>> {
    let mut natural = vec![1; columns];
    let mut words = vec![0; columns];
    for row in head.into_iter().chain(rows.iter().map(Vec::as_slice)) {
        for (index, cell) in row.iter().enumerate() {
            natural[index] = natural[index].max(spans_width(cell));
            words[index] = words[index].max(longest_word(cell));
        }
    }
    let separators = text_width(SEPARATOR) * (columns - 1);
    let budget = width.checked_sub(separators)?;
    if natural.iter().sum::<usize>() <= budget {
        return Some(natural);
    }
    let whole_words: Vec<usize> = words
        .iter()
        .zip(&natural)
        .map(|(&word, &natural)| word.min(natural))
        .collect();
    [whole_words, vec![0; columns]]
        .into_iter()
        .filter_map(|floors| water_fill(&natural, &floors, budget))
        .find(|widths| {
            widths
                .iter()
                .zip(&natural)
                .all(|(&width, &natural)| width == natural || width >= MIN_SQUEEZED)
        })
}

/// Widths that add up to at most `budget`: every column at `natural` cut down to one common
/// level, but none below its floor, with the level as high as the budget allows (what is left
/// under the next level goes a column at a time to the widest). The widest columns give up
/// width first, and together, so no column is squeezed far more than the others. `None` when
/// the floors alone exceed the budget.
fn water_fill(natural: &[usize], floors: &[usize], budget: usize) -> Option<Vec<usize>> {
    let at_level = |level: usize| {
        natural
            .iter()
            .zip(floors)
            .map(move |(&natural, &floor)| level.max(floor).min(natural))
    };
    let fits = |level: usize| at_level(level).sum::<usize>() <= budget;
    if !fits(0) {
        return None;
    }
    // The highest level that fits: fits(low) always, fits(high) never.
    let (mut low, mut high) = (0, natural.iter().copied().max().unwrap_or(0));
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if fits(middle) {
            low = middle;
        } else {
            high = middle;
        }
    }
    let mut widths: Vec<usize> = at_level(low).collect();
    let mut left = budget - widths.iter().sum::<usize>();
    let mut rising: Vec<usize> = (0..natural.len())
        .filter(|&index| floors[index] <= low && low < natural[index])
        .collect();
    rising.sort_by_key(|&index| std::cmp::Reverse(natural[index]));
    for index in rising {
        if left == 0 {
            break;
        }
        widths[index] += 1;
        left -= 1;
    }
    Some(widths)
}

/// The widest word in `cell`: the narrowest its column can be without cutting one.
fn longest_word(cell: &Cell) -> usize {
    let mut longest = 0;
    // A word may go on from one span into the next (`**bold**er`).
    let mut current = 0;
    for span in cell {
        let mut pieces = span.content.split([' ', '\n']);
        if let Some(first) = pieces.next() {
            current += text_width(first);
        }
        for piece in pieces {
            longest = longest.max(current);
            current = text_width(piece);
        }
    }
    longest.max(current)
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

/// For a table too wide for columns: each row as `header: value` lines, a value's wrapped
/// lines indented under its header, rows set apart by a short rule.
fn render_stacked(
    head: Option<&[Cell]>,
    rows: &[Vec<Cell>],
    width: usize,
    theme: &Theme,
) -> Vec<Vec<Span<'static>>> {
    // Too narrow for an indent, the value goes on at the start of the line.
    let indent = if width >= MIN_SQUEEZED { "  " } else { "" };
    let hanging = Prefix {
        first: Vec::new(),
        rest: vec![Span::raw(indent)],
    };
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
                let empty = spans_width(cell) == 0;
                spans.push(Span::raw(if empty { ":" } else { ": " }));
            }
            spans.extend(cell.iter().cloned());
            out.extend(
                wrap_words(&spans, width, &hanging)
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
    fn the_widest_columns_shrink_together_to_a_common_level() {
        // The two wide columns come down to the highest level that fits (14) and the column
        // left over goes to the widest; the narrow one keeps its 5.
        assert_eq!(
            water_fill(&[5, 30, 29], &[0, 0, 0], 34),
            Some(vec![5, 15, 14])
        );
        assert_eq!(
            water_fill(&[5, 30, 29], &[0, 0, 0], 33),
            Some(vec![5, 14, 14])
        );
        // A floor holds a column at its longest word while the others go lower.
        assert_eq!(
            water_fill(&[5, 30, 29], &[0, 20, 0], 33),
            Some(vec![5, 20, 8])
        );
        assert_eq!(water_fill(&[5, 30, 29], &[5, 20, 9], 33), None);
    }

    #[test]
    fn words_stay_whole_when_the_columns_can_give_way() {
        // Shared evenly, the first column would be 18 wide and cut its only word.
        let head = [cell("option"), cell("meaning")];
        let rows = [vec![
            cell("--incompatible-options"),
            cell("refuses to start when two options contradict each other"),
        ]];
        let lines = render_table(Some(&head), &rows, &[], 40, &Theme::plain());
        assert_eq!(
            text(&lines),
            vec![
                "option                 │ meaning",
                "───────────────────────┼────────────────",
                "--incompatible-options │ refuses to",
                "                       │ start when two",
                "                       │ options",
                "                       │ contradict each",
                "                       │ other",
            ]
        );
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
