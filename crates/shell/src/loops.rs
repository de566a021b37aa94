//! Paths named through a variable whose values are known: a `for` loop's
//! (`for f in *.rs; do wc -l "$f"; done` reads each file the glob matches) or one literal
//! assignment's (`x=list.txt; cat "$x"`). Each value is judged as the path, instead of `$f`
//! counting as a path known only at run time.
//!
//! This holds only while the loop or the one assignment is the variable's only source.
//! Whether it is can be known only once the whole command line (and any `eval` text in it)
//! has been read, so every variable used this way is checked again at the end
//! ([`judge_loop_paths`]). A value that Bash would split or glob (blanks, `*`) is not used:
//! whether the variable is quoted is not known here.

use std::collections::HashMap;

use super::classify::{Analyzer, Site};
use super::globs;
use super::parse::LoopVariable;
use super::word::{Piece, Word};

/// The values `for` loops give their variables.
#[derive(Debug, Default)]
pub(crate) struct LoopValues {
    /// The words of each variable's loops, as written; `None` once a loop takes the
    /// positional parameters (`for x; do …`).
    words: HashMap<String, Option<Vec<Word>>>,
    /// Variables whose values were used for paths, with how many values the command line
    /// may give them.
    used: Vec<(String, usize)>,
}

impl LoopValues {
    pub(crate) fn learn(&mut self, variable: &LoopVariable) {
        let entry = self
            .words
            .entry(variable.name.clone())
            .or_insert_with(|| Some(Vec::new()));
        match (entry.as_mut(), &variable.values) {
            (Some(known), Some(values)) => known.extend(values.iter().cloned()),
            (Some(_), None) => *entry = None,
            (None, _) => {}
        }
    }
}

/// The words a path word stands for when its one variable is a loop variable: the word with
/// each of the loop's values (a glob's matches, relative as the loop gives them) in place of
/// the variable. `None` when the word has no such variable.
pub(crate) fn substitute(an: &mut Analyzer, word: &Word, site: Site<'_>) -> Option<Vec<Word>> {
    let mut names = word.pieces().iter().filter_map(|piece| match piece {
        Piece::Variable(name) => Some(name.clone()),
        Piece::Text { .. } | Piece::Substitution { .. } => None,
    });
    let name = names.next()?;
    if names.any(|other| other != name) {
        return None;
    }
    let (values, sources) = match an.loops.words.get(&name) {
        Some(Some(words)) => (words.clone(), words.len()),
        Some(None) => return None,
        None => {
            let text = an.literal_value(&name)?;
            (vec![Word::unquoted(&text)], 1)
        }
    };
    let mut out = Vec::new();
    for value in values.iter().flat_map(Word::brace_expand) {
        for each in expand_value(an, &value, site) {
            if each
                .literal()
                .is_none_or(|text| text.is_empty() || text.contains(char::is_whitespace))
            {
                return None;
            }
            let mut spliced = Word::default();
            for piece in word.pieces() {
                match piece {
                    Piece::Variable(variable) if *variable == name => spliced.append(each.clone()),
                    other => spliced.push(other.clone()),
                }
            }
            out.push(spliced);
        }
    }
    if !an.loops.used.iter().any(|(known, _)| *known == name) {
        an.loops.used.push((name, sources));
    }
    Some(out)
}

/// What one value gives the variable: a glob's matches (relative to the directory when the
/// pattern is), or the word itself (a glob that matches nothing stays the pattern, judged
/// again where it is used).
fn expand_value(an: &mut Analyzer, value: &Word, site: Site<'_>) -> Vec<Word> {
    let Some(matches) = globs::matches(an, value, site) else {
        return vec![value.clone()];
    };
    let relative = !value.literal_prefix().starts_with('/');
    matches
        .iter()
        .map(|path| {
            let text = path.display();
            let shown = match site.cwd {
                Some(cwd) if relative => {
                    let base = format!("{}/", cwd.display());
                    text.strip_prefix(&base).unwrap_or(&text).to_owned()
                }
                _ => text,
            };
            globs::quoted_path(&shown)
        })
        .collect()
}

/// Checks, once the whole command line is known, that each loop variable used for paths is
/// given values by its loops alone.
pub(crate) fn judge_loop_paths(an: &mut Analyzer) {
    let used = std::mem::take(&mut an.loops.used);
    let arithmetic = an.evaluations.arithmetic_assignments();
    for (name, sources) in used {
        let elsewhere = an.evaluations.value_count(&name) != sources || arithmetic.contains(&name);
        if elsewhere {
            an.unanalysable(format!(
                "a path is named through ${name}, which the command line assigns more than once: where it leads is known only at run time"
            ));
        }
    }
}
