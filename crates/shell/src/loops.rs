//! Paths named through a `for` loop's variable: `for f in *.rs; do wc -l "$f"; done` reads
//! each file the glob matches, so each is judged as a read, instead of `$f` counting as a
//! path known only at run time.
//!
//! This holds only while the loop is the variable's one source. Whether it is can be known
//! only once the whole command line (and any `eval` text in it) has been read, so every
//! variable used this way is checked again at the end ([`judge_loop_paths`]).

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
    /// Variables whose values were used for paths.
    used: Vec<String>,
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
    let values = an.loops.words.get(&name)?.clone()?;
    if !an.loops.used.contains(&name) {
        an.loops.used.push(name.clone());
    }
    let mut out = Vec::new();
    for value in values.iter().flat_map(Word::brace_expand) {
        for each in expand_value(an, &value, site) {
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
    Some(out)
}

/// What one loop word gives the variable: the glob's matches (relative to the directory when
/// the pattern is), or the word itself.
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
    for name in used {
        let loop_words = an
            .loops
            .words
            .get(&name)
            .and_then(Option::as_ref)
            .map_or(0, Vec::len);
        let elsewhere = an.evaluations.value_count(&name) != loop_words
            || arithmetic.contains(&name)
            || an.assigned_literally(&name);
        if elsewhere {
            an.unanalysable(format!(
                "a path is named through ${name}, which the command line assigns besides its loop: where it leads is known only at run time"
            ));
        }
    }
}
