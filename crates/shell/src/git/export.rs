//! git's option tables as plain data, for the tests that check them against the git
//! installed and that generate attacks from them (`crates/shell/tests/git_*.rs`). Not an API.

use crate::options::{self, Table};

/// A reading form of git (`log`, `stash show`) or a command whose completion lists options.
#[derive(Debug, Clone)]
pub struct Form {
    /// The words after `git` (`stash show`).
    pub words: &'static str,
    /// Its tables, in the order git reads them.
    pub layers: Vec<Layer>,
}

/// One table.
#[derive(Debug, Clone)]
pub struct Layer {
    /// Whether git takes unambiguous prefixes of its long options.
    pub prefixes: bool,
    /// Its options.
    pub options: Vec<Opt>,
}

/// One option.
#[derive(Debug, Clone)]
pub struct Opt {
    /// Its spellings (`-O`, `--open-files-in-pager`).
    pub names: &'static [&'static str],
    /// How many values it takes.
    pub arity: Arity,
    /// What it does.
    pub effect: Effect,
}

/// How many values an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// None.
    Flag,
    /// One, attached or next.
    Value,
    /// One, attached only.
    Optional,
}

/// What an option does, as far as the read-only verdict goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Nothing the verdict cares about.
    Harmless,
    /// Reads the file its value names.
    Reads,
    /// Writes the file its value names.
    Writes,
    /// Runs another program.
    Runs,
    /// Changes the repository.
    Changes,
}

fn layer(table: &Table) -> Layer {
    Layer {
        prefixes: table.long == options::LongMatch::Prefix,
        options: table
            .options
            .iter()
            .map(|def| Opt {
                names: def.names,
                arity: match def.arity {
                    options::Arity::Flag => Arity::Flag,
                    options::Arity::Value => Arity::Value,
                    options::Arity::Optional => Arity::Optional,
                },
                effect: match def.effect {
                    options::Effect::Harmless => Effect::Harmless,
                    options::Effect::Reads => Effect::Reads,
                    options::Effect::Writes => Effect::Writes,
                    options::Effect::Runs => Effect::Runs,
                    options::Effect::Changes(_) => Effect::Changes,
                },
            })
            .collect(),
    }
}

fn forms(list: &[(&'static str, &[&Table])]) -> Vec<Form> {
    list.iter()
        .map(|(words, layers)| Form {
            words,
            layers: layers.iter().map(|table| layer(table)).collect(),
        })
        .collect()
}

/// Every reading form and its tables.
pub fn read_forms() -> Vec<Form> {
    forms(super::READ_FORMS)
}

/// The commands whose `--git-completion-helper-all` lists options, each with the tables that
/// must hold every option it names.
pub fn checked() -> Vec<Form> {
    forms(super::CHECKED)
}

/// git's own options, before the subcommand.
pub fn global() -> Layer {
    layer(super::GLOBAL)
}
