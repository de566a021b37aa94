//! Where edits changed a file, and those places shown with line numbers, so the model sees
//! the result without reading the file again.

use std::ops::Range;

/// One place a replacement was made: `old_len` bytes at byte `at` of the text before it
/// became `new_len` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Splice {
    pub(crate) at: usize,
    pub(crate) old_len: usize,
    pub(crate) new_len: usize,
}

/// Lines of context shown around each change.
const CONTEXT_LINES: usize = 3;
/// At most this many lines are shown in all.
const MAX_SHOWN_LINES: usize = 60;

/// The byte ranges of the current text that edits wrote, kept up to date as later edits move
/// them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ChangedRanges(Vec<Range<usize>>);

impl ChangedRanges {
    /// Takes in the splices of one replacement (in text order), moving the ranges of earlier
    /// ones to where they are in the new text.
    pub(crate) fn record(&mut self, splices: &[Splice]) {
        for range in &mut self.0 {
            let start = new_position(range.start, splices, Side::Start);
            let end = new_position(range.end, splices, Side::End).max(start);
            *range = start..end;
        }
        let (mut added, mut removed) = (0, 0);
        for splice in splices {
            let at = splice.at - removed + added;
            self.0.push(at..at + splice.new_len);
            added += splice.new_len;
            removed += splice.old_len;
        }
        self.0.sort_by_key(|range| range.start);
        let mut merged: Vec<Range<usize>> = Vec::with_capacity(self.0.len());
        for range in self.0.drain(..) {
            match merged.last_mut() {
                Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
                _ => merged.push(range),
            }
        }
        self.0 = merged;
    }

    pub(crate) fn ranges(&self) -> &[Range<usize>] {
        &self.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Start,
    End,
}

/// Where byte `position` of the old text is in the new one. A position inside a replaced
/// span moves to that span's start or end, so a range only ever grows to cover the change.
fn new_position(position: usize, splices: &[Splice], side: Side) -> usize {
    let (mut added, mut removed) = (0, 0);
    for splice in splices {
        if splice.at + splice.old_len <= position {
            added += splice.new_len;
            removed += splice.old_len;
        } else if splice.at < position {
            let start = splice.at - removed + added;
            return match side {
                Side::Start => start,
                Side::End => start + splice.new_len,
            };
        } else {
            break;
        }
    }
    position - removed + added
}

/// The changed places of `text` with a few lines of context, numbered like `cat -n`.
pub(crate) fn render_changes(text: &str, changed: &ChangedRanges) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return "(the file is now empty)\n".to_string();
    }
    let last_line = lines.len() - 1;
    let line_index = |offset: usize| {
        let index = text.as_bytes()[..offset.min(text.len())]
            .iter()
            .filter(|&&byte| byte == b'\n')
            .count();
        index.min(last_line)
    };
    let mut hunks: Vec<Range<usize>> = Vec::new();
    for range in changed.ranges() {
        let first = line_index(range.start);
        let last = if range.end > range.start {
            line_index(range.end - 1)
        } else {
            first
        };
        let hunk = first.saturating_sub(CONTEXT_LINES)..(last + CONTEXT_LINES).min(last_line) + 1;
        match hunks.last_mut() {
            Some(previous) if hunk.start <= previous.end => {
                previous.end = previous.end.max(hunk.end);
            }
            _ => hunks.push(hunk),
        }
    }
    let mut out = String::new();
    let mut shown = 0;
    for (number, hunk) in hunks.iter().enumerate() {
        if shown >= MAX_SHOWN_LINES {
            let left = hunks.len() - number;
            out.push_str(&format!("({left} more changed places not shown)\n"));
            break;
        }
        if number > 0 {
            out.push_str("...\n");
        }
        for index in hunk.clone() {
            if shown >= MAX_SHOWN_LINES {
                out.push_str(&format!("({} more lines not shown)\n", hunk.end - index));
                break;
            }
            out.push_str(&crate::read::numbered_line(index + 1, lines[index]));
            shown += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn span(start: usize, end: usize) -> Range<usize> {
        start..end
    }

    #[test]
    fn earlier_ranges_move_with_later_splices() {
        let mut changed = ChangedRanges::default();
        // "aaXbb" -> "aaYYYbb"
        changed.record(&[Splice {
            at: 2,
            old_len: 1,
            new_len: 3,
        }]);
        assert_eq!(changed.ranges(), &[span(2, 5)]);
        // delete "aa" at the start: "YYYbb"
        changed.record(&[Splice {
            at: 0,
            old_len: 2,
            new_len: 0,
        }]);
        assert_eq!(changed.ranges(), &[span(0, 3)]);
        // replace "bb" at the end with "c": "YYYc"
        changed.record(&[Splice {
            at: 3,
            old_len: 2,
            new_len: 1,
        }]);
        assert_eq!(changed.ranges(), &[span(0, 4)]);
    }

    #[test]
    fn a_splice_inside_a_range_keeps_the_range_whole() {
        let mut changed = ChangedRanges::default();
        changed.record(&[Splice {
            at: 10,
            old_len: 0,
            new_len: 10,
        }]);
        changed.record(&[Splice {
            at: 12,
            old_len: 2,
            new_len: 5,
        }]);
        assert_eq!(changed.ranges(), &[span(10, 23)]);
    }

    #[test]
    fn renders_context_around_each_change() {
        let text: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        let start = text.find("line 10").unwrap();
        let mut changed = ChangedRanges::default();
        changed.record(&[Splice {
            at: start,
            old_len: 0,
            new_len: 7,
        }]);
        assert_eq!(
            render_changes(&text, &changed),
            "     7\tline 7\n     8\tline 8\n     9\tline 9\n    10\tline 10\n    11\tline 11\n    12\tline 12\n    13\tline 13\n"
        );
    }
}
