//! When `old_string` is not in the file: the place the model most likely meant, so it can
//! copy the text exactly on its next try.
//!
//! Two measures, in order. First, whitespace-insensitive: a window of lines that contains
//! `old_string` once all whitespace is removed from both differs only in indentation, tabs
//! or line breaks. Failing that, similarity: the Sørensen–Dice coefficient of the character
//! pairs (bigrams) of the two texts after runs of whitespace are collapsed, i.e. twice the
//! number of shared pairs over the number of pairs in both. It is linear in the text's
//! length, unlike edit distance, so every window of a large file can be scored.

use std::collections::HashMap;

/// The window of the file's lines that is closest to `old_string`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NearMatch {
    /// 1-based number of the window's first line.
    pub(crate) first_line: usize,
    pub(crate) lines: Vec<String>,
    pub(crate) closeness: Closeness,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closeness {
    /// The same text once whitespace is ignored.
    WhitespaceOnly,
    /// Similar, by the bigram measure: 0 to 100.
    Similar { percent: u32 },
}

/// Below this similarity a window is not worth showing.
const MIN_SIMILARITY: f64 = 0.5;
/// Skip the search when windows × characters would exceed this (a huge file and a long
/// `old_string`): the suggestion is a courtesy, not worth seconds.
const MAX_WORK: usize = 50_000_000;

/// The closest window of lines in `text` with as many lines as `old`, if any is close enough.
pub(crate) fn find_near_match(text: &str, old: &str) -> Option<NearMatch> {
    let file_lines: Vec<&str> = text.lines().collect();
    let wanted: Vec<&str> = old.trim_matches(['\r', '\n']).lines().collect();
    let wanted_text = wanted.join("\n");
    let wanted_bare = without_whitespace(&wanted_text);
    if wanted_bare.is_empty() || file_lines.is_empty() {
        return None;
    }
    let size = wanted.len().min(file_lines.len());
    let windows = file_lines.len() - size + 1;
    if windows.saturating_mul(wanted_text.len() * 2) > MAX_WORK {
        return None;
    }
    let window_text = |start: usize| file_lines[start..start + size].join("\n");
    let found = |start: usize, closeness| NearMatch {
        first_line: start + 1,
        lines: file_lines[start..start + size]
            .iter()
            .map(|line| line.to_string())
            .collect(),
        closeness,
    };

    if let Some(start) =
        (0..windows).find(|&start| without_whitespace(&window_text(start)).contains(&wanted_bare))
    {
        return Some(found(start, Closeness::WhitespaceOnly));
    }

    let wanted_pairs = Bigrams::of(&collapse_whitespace(&wanted_text));
    let mut best: Option<(usize, f64)> = None;
    for start in 0..windows {
        let score = wanted_pairs.dice(&Bigrams::of(&collapse_whitespace(&window_text(start))));
        if best.is_none_or(|(_, best_score)| score > best_score) {
            best = Some((start, score));
        }
    }
    let (start, score) = best?;
    if score < MIN_SIMILARITY {
        return None;
    }
    // The score is in 0..=1, so the rounded percentage fits.
    let percent = (score * 100.0).round() as u32;
    Some(found(start, Closeness::Similar { percent }))
}

fn without_whitespace(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The multiset of adjacent character pairs of a text.
#[derive(Debug)]
struct Bigrams {
    counts: HashMap<(char, char), usize>,
    total: usize,
    text: String,
}

impl Bigrams {
    fn of(text: &str) -> Bigrams {
        let mut counts = HashMap::new();
        let mut total = 0;
        let mut chars = text.chars();
        if let Some(mut previous) = chars.next() {
            for next in chars {
                *counts.entry((previous, next)).or_insert(0) += 1;
                total += 1;
                previous = next;
            }
        }
        Bigrams {
            counts,
            total,
            text: text.to_string(),
        }
    }

    /// Twice the shared pairs over all pairs: 1 for the same text, 0 for nothing in common.
    fn dice(&self, other: &Bigrams) -> f64 {
        if self.total == 0 || other.total == 0 {
            return if self.text == other.text { 1.0 } else { 0.0 };
        }
        let shared: usize = self
            .counts
            .iter()
            .map(|(pair, &count)| count.min(other.counts.get(pair).copied().unwrap_or(0)))
            .sum();
        (2 * shared) as f64 / (self.total + other.total) as f64
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_difference_in_indentation_only_is_named_as_such() {
        let text = "fn main() {\n\tlet x = 1;\n\tlet y = 2;\n}\n";
        let near = find_near_match(text, "    let x = 1;\n    let y = 2;").unwrap();
        assert_eq!(
            near,
            NearMatch {
                first_line: 2,
                lines: vec!["\tlet x = 1;".into(), "\tlet y = 2;".into()],
                closeness: Closeness::WhitespaceOnly,
            }
        );
    }

    #[test]
    fn the_most_similar_window_is_found_and_scored() {
        let text = "alpha\nlet total = price * count;\nomega\n";
        let near = find_near_match(text, "let total = price * amount;").unwrap();
        assert_eq!(near.first_line, 2);
        assert_eq!(near.closeness, Closeness::Similar { percent: 90 });
    }

    #[test]
    fn nothing_similar_means_no_suggestion() {
        assert_eq!(
            find_near_match("alpha\nbeta\n", "completely different"),
            None
        );
        assert_eq!(find_near_match("alpha\n", "   \n"), None);
    }
}
