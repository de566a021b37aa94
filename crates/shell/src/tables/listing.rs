//! The option tables as plain data, for tests that check them against the installed programs
//! and generate attacks from them. Not part of the crate's API.

use crate::options::{Arity, Effect, LongMatch};

/// How many values an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionArity {
    /// None.
    Flag,
    /// One, attached or as the next argument.
    Value,
    /// One, only when attached.
    Optional,
}

/// What an option does, as far as the read-only verdict goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionEffect {
    /// Nothing that changes the verdict.
    Harmless,
    /// Its value is a file the command reads.
    Reads,
    /// Its value is a file the command writes.
    Writes,
    /// It makes the command run another program.
    Runs,
    /// It makes the command not read-only in another way.
    Changes,
}

/// One option of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionEntry {
    /// Every spelling (`-o`, `--output`).
    pub names: Vec<&'static str>,
    /// How many values it takes.
    pub arity: OptionArity,
    /// What it does.
    pub effect: OptionEffect,
}

/// A command's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandTable {
    /// The command's name.
    pub command: &'static str,
    /// Whether long options are matched only by their whole name (otherwise any unambiguous
    /// prefix names one).
    pub exact: bool,
    /// Whether `-NUM` is an option of its own.
    pub numeric: bool,
    /// Every option.
    pub options: Vec<OptionEntry>,
}

/// Every table cairn judges commands by.
pub fn command_tables() -> Vec<CommandTable> {
    super::TABLES
        .iter()
        .map(|(command, table)| CommandTable {
            command,
            exact: table.long == LongMatch::Exact,
            numeric: table.numeric,
            options: table
                .options
                .iter()
                .map(|def| OptionEntry {
                    names: def.names.to_vec(),
                    arity: match def.arity {
                        Arity::Flag => OptionArity::Flag,
                        Arity::Value => OptionArity::Value,
                        Arity::Optional => OptionArity::Optional,
                    },
                    effect: match def.effect {
                        Effect::Harmless => OptionEffect::Harmless,
                        Effect::Reads => OptionEffect::Reads,
                        Effect::Writes => OptionEffect::Writes,
                        Effect::Runs => OptionEffect::Runs,
                        Effect::Changes(_) => OptionEffect::Changes,
                    },
                })
                .collect(),
        })
        .collect()
}
