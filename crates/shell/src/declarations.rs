//! The variable names builtins take: `declare`, `typeset`, `local`, `export`, `readonly` and
//! `unset` with their options (`-x` exports, `-n` makes a reference, `-a`/`-l` change what a
//! variable is), and the check made on any name a builtin is given (`read`, `printf -v`,
//! `test -v`, …): a plain identifier, whose subscript is safe arithmetic.

use super::classify::Analyzer;
use super::evaluated::{is_identifier, split_subscript};
use super::word::Word;
use super::{names, variables};

/// `declare`, `typeset`, `local`, `export`, `readonly`, `unset`: the names they take.
pub(crate) fn judge_declaration(an: &mut Analyzer, words: &[Word]) {
    let Some((builtin, args)) = words.split_first() else {
        return;
    };
    let builtin = builtin.literal().unwrap_or_default();
    let mut options_done = false;
    let mut functions = false;
    let mut exports = builtin == "export";
    let mut changes = false;
    for arg in args {
        let text = arg.literal();
        if !options_done
            && let Some(text) = &text
            && (text.starts_with('-') || text.starts_with('+'))
            && text.len() > 1
        {
            if text == "--" {
                options_done = true;
                continue;
            }
            let flags = text.get(1..).unwrap_or_default();
            functions |= flags.contains(['f', 'F']);
            exports |= text.starts_with('-') && flags.contains('x') && builtin != "unset";
            // `declare -a HOME` makes HOME an array, which Bash does not export.
            changes |= text.starts_with('-') && flags.contains(['a', 'A', 'i', 'l', 'u', 'c']);
            let nameref = flags.contains('n')
                && text.starts_with('-')
                && matches!(builtin.as_str(), "declare" | "typeset" | "local" | "unset");
            if nameref && builtin != "unset" {
                an.unanalysable(format!(
                    "`{builtin} -n` makes a name refer to another variable, array subscripts included"
                ));
            }
            continue;
        }
        options_done = true;
        if functions {
            continue;
        }
        // `name=value`: the value was learnt as an assignment; the name is checked here.
        let name_part = match arg.literal_prefix().split_once('=') {
            Some((name, _)) => Word::unquoted(name.strip_suffix('+').unwrap_or(name)),
            None if text.is_none() && arg.literal_prefix().contains('[') => {
                Word::unquoted(&arg.literal_prefix())
            }
            None => arg.clone(),
        };
        let valued = arg.literal_prefix().contains('=');
        let target = match (builtin.as_str(), valued, exports) {
            ("unset", _, _) => Target::Unsets,
            (_, true, true) => Target::Exports(variables::assigned_value(arg)),
            (_, true, false) => Target::SetsTo(variables::assigned_value(arg)),
            // `export PATH` keeps the value PATH had, and exports what it is given later.
            (_, false, true) => Target::MarksExported,
            (_, false, false) if changes => Target::Changes,
            (_, false, false) => Target::Reads,
        };
        check_name(an, &builtin, &name_part, target);
    }
}

/// Whether the builtin stores a value in the variable, or only looks at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// Sets it in the shell.
    Sets,
    /// Sets it to this value (`None` when known only at run time).
    SetsTo(Option<String>),
    /// Sets it and exports it to the commands run after.
    Exports(Option<String>),
    /// Exports it, with the value it has or is given later.
    MarksExported,
    /// Changes what it is (an array, lower case) without a new value.
    Changes,
    Unsets,
    Reads,
}

/// A word a builtin takes as a variable name: a plain identifier, or one with a subscript
/// that is itself safe arithmetic.
pub(crate) fn check_name(an: &mut Analyzer, builtin: &str, word: &Word, target: Target) {
    let Some(text) = word.literal() else {
        an.unanalysable(format!(
            "`{builtin}` takes a variable name and is given {}, known only at run time: Bash evaluates an array subscript in a name, which can run a command",
            word.display()
        ));
        return;
    };
    let (base, subscript) = split_subscript(&text);
    if !is_identifier(base) {
        an.unanalysable(format!(
            "`{builtin}` takes a variable name and is given `{text}`, which is not a plain name: Bash evaluates what it holds"
        ));
        return;
    }
    if let Some(subscript) = subscript {
        an.evaluations.check_later(
            subscript,
            format!("the subscript of `{text}` given to `{builtin}`"),
        );
    }
    match target {
        Target::Sets => names::variable_set(an, base),
        Target::SetsTo(value) => variables::set_in_shell_to(an, base, value.as_deref()),
        Target::Exports(value) => variables::exported(an, base, value.as_deref()),
        Target::MarksExported => variables::marked_exported(an, base),
        Target::Unsets => variables::unset(an, base),
        Target::Changes => variables::changed(an, base),
        Target::Reads => {}
    }
}
