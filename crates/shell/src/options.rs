//! Splitting a command's arguments into options and operands, getopt style, and judging the
//! options against the command's own table.
//!
//! Two ways in. [`parse_args`] splits by a list of the options that take a value and knows
//! nothing else; it serves commands that are never read-only anyway. [`parse`] reads the
//! arguments against a [`Table`] of every option the command has, matched the way the program
//! matches them (GNU `getopt_long` and git accept any unambiguous prefix of a long option), and
//! reports every option the table does not know. That is the read-only rule: a command is
//! read-only only when every option it is given is in its table, is spelled so that the
//! program reads it as that option, and is known to be harmless ([`judge_options`]).

use super::classify::{Analyzer, Site};
use super::word::Word;

/// How a command takes its options (for [`parse_args`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OptionSpec<'a> {
    /// Options that take a value, short ones as `-o` and long ones as `--output`.
    pub(crate) with_value: &'a [&'a str],
    /// Everything from the first operand on is an operand (wrappers such as `sudo CMD -x`).
    pub(crate) stop_at_operand: bool,
}

/// One option as written: `name` is `-r` or `--recursive`; a value given as `--name=value`,
/// `-ovalue` or as the next argument is in `value`.
#[derive(Debug, Clone)]
pub(crate) struct Opt {
    pub(crate) name: String,
    pub(crate) value: Option<Word>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Args {
    pub(crate) options: Vec<Opt>,
    pub(crate) operands: Vec<Word>,
    /// Index in the original arguments of the first operand, if any.
    pub(crate) first_operand_index: Option<usize>,
}

impl Args {
    pub(crate) fn has(&self, names: &[&str]) -> bool {
        self.options
            .iter()
            .any(|option| names.contains(&option.name.as_str()))
    }

    /// The values given to any of `names`, in order.
    pub(crate) fn values<'s>(
        &'s self,
        names: &'s [&'s str],
    ) -> impl Iterator<Item = &'s Word> + 's {
        self.options
            .iter()
            .filter(move |option| names.contains(&option.name.as_str()))
            .filter_map(|option| option.value.as_ref())
    }
}

pub(crate) fn parse_args(args: &[Word], spec: OptionSpec<'_>) -> Args {
    let mut parsed = Args::default();
    let mut index = 0;
    let mut only_operands = false;
    while let Some(word) = args.get(index) {
        index += 1;
        let text = word.literal();
        let is_option = !only_operands
            && text
                .as_deref()
                .is_some_and(|text| text.len() > 1 && text.starts_with('-'));
        if !is_option {
            if parsed.first_operand_index.is_none() {
                parsed.first_operand_index = Some(index - 1);
            }
            parsed.operands.push(word.clone());
            if spec.stop_at_operand {
                only_operands = true;
            }
            continue;
        }
        let text = text.unwrap_or_default();
        if text == "--" {
            only_operands = true;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            if let Some((name, _)) = long.split_once('=') {
                parsed.options.push(Opt {
                    name: format!("--{name}"),
                    value: word.without_prefix(name.len() + 3),
                });
            } else if spec.with_value.contains(&text.as_str()) {
                parsed.options.push(Opt {
                    name: text.clone(),
                    value: args.get(index).cloned(),
                });
                index += 1;
            } else {
                parsed.options.push(Opt {
                    name: text.clone(),
                    value: None,
                });
            }
            continue;
        }
        for (offset, letter) in text.char_indices().skip(1) {
            let name = format!("-{letter}");
            if !spec.with_value.contains(&name.as_str()) {
                parsed.options.push(Opt { name, value: None });
                continue;
            }
            let attached = offset + letter.len_utf8();
            let value = if attached < text.len() {
                word.without_prefix(attached)
            } else {
                index += 1;
                args.get(index - 1).cloned()
            };
            parsed.options.push(Opt { name, value });
            break;
        }
    }
    parsed
}

/// How many values an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arity {
    /// None: `-v`, `--verbose`.
    Flag,
    /// One, attached (`-ofile`, `--output=file`) or as the next argument.
    Value,
    /// One only when attached (`-S:`, `--sep-string=:`); `-S` alone takes none, and the next
    /// argument is not its value.
    Optional,
}

/// What an option makes the command do, as far as the read-only verdict goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Changes only what is read or how it is shown: the command stays read-only.
    Harmless,
    /// Its value names a file the command reads (judged like any read path).
    Reads,
    /// Its value names a file the command creates or changes (judged like any written path).
    Writes,
    /// It makes the command run another program (its value, or a program the command
    /// chooses): judged by [`Analyzer::runs_program`], which no allow rule for the command
    /// alone lifts.
    Runs,
    /// The command stops being read-only in the way the text says ("edits files in place").
    Changes(&'static str),
}

/// One option of a command: all its spellings (`-o`, `--output`; the first long one is how
/// it is named in messages), how many values it takes and what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OptDef {
    pub(crate) names: &'static [&'static str],
    pub(crate) arity: Arity,
    pub(crate) effect: Effect,
}

impl OptDef {
    /// The spelling used in messages: the first long name, else the first name.
    pub(crate) fn canonical(&self) -> &'static str {
        self.names
            .iter()
            .find(|name| name.starts_with("--"))
            .or_else(|| self.names.first())
            .copied()
            .unwrap_or("")
    }

    pub(crate) fn is(&self, name: &str) -> bool {
        self.names.contains(&name)
    }
}

/// A harmless option that takes no value.
pub(crate) const fn flag(names: &'static [&'static str]) -> OptDef {
    OptDef {
        names,
        arity: Arity::Flag,
        effect: Effect::Harmless,
    }
}

/// A harmless option that takes a value.
pub(crate) const fn value(names: &'static [&'static str]) -> OptDef {
    OptDef {
        names,
        arity: Arity::Value,
        effect: Effect::Harmless,
    }
}

/// A harmless option whose value can only be attached.
pub(crate) const fn optional(names: &'static [&'static str]) -> OptDef {
    OptDef {
        names,
        arity: Arity::Optional,
        effect: Effect::Harmless,
    }
}

/// An option whose value is a file the command reads.
pub(crate) const fn reads(names: &'static [&'static str]) -> OptDef {
    OptDef {
        names,
        arity: Arity::Value,
        effect: Effect::Reads,
    }
}

/// An option whose value is a file the command writes.
pub(crate) const fn writes(names: &'static [&'static str]) -> OptDef {
    OptDef {
        names,
        arity: Arity::Value,
        effect: Effect::Writes,
    }
}

/// An option whose value is a program the command runs.
pub(crate) const fn runs(names: &'static [&'static str]) -> OptDef {
    OptDef {
        names,
        arity: Arity::Value,
        effect: Effect::Runs,
    }
}

/// An option with the given arity and effect.
pub(crate) const fn option(names: &'static [&'static str], arity: Arity, effect: Effect) -> OptDef {
    OptDef {
        names,
        arity,
        effect,
    }
}

/// How a program matches a long option it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LongMatch {
    /// Any unambiguous prefix names the option (GNU `getopt_long`, git's parse-options).
    Prefix,
    /// Only the full name (jq, and programs with hand-written parsers).
    Exact,
}

/// Every option a command has. A command judged by a table is read-only only if each option
/// it is given is found here ([`parse`]) and harmless ([`judge_options`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Table {
    pub(crate) options: &'static [OptDef],
    pub(crate) long: LongMatch,
    /// Everything from the first operand on is an operand (POSIX order, wrappers such as
    /// `timeout 5 CMD -x`); otherwise options and operands mix, as GNU programs take them.
    pub(crate) stop_at_operand: bool,
    /// `-NUM` is an option of its own (`head -5`, `uniq -2`).
    pub(crate) numeric: bool,
}

impl Table {
    /// A GNU-style table: unambiguous prefixes, options anywhere, no `-NUM`.
    pub(crate) const fn gnu(options: &'static [OptDef]) -> Table {
        Table {
            options,
            long: LongMatch::Prefix,
            stop_at_operand: false,
            numeric: false,
        }
    }

    /// A GNU-style table where `-NUM` is an option of its own (`head -5`, `uniq -2`).
    pub(crate) const fn gnu_numeric(options: &'static [OptDef]) -> Table {
        Table {
            options,
            long: LongMatch::Prefix,
            stop_at_operand: false,
            numeric: true,
        }
    }

    /// A table for a program that takes only whole option names (clap, hand-written
    /// parsers), options anywhere, no `-NUM`.
    pub(crate) const fn exact(options: &'static [OptDef]) -> Table {
        Table {
            options,
            long: LongMatch::Exact,
            stop_at_operand: false,
            numeric: false,
        }
    }

    /// The option `name` (`-o` or `--output`, no value) names: for a long name, the option
    /// it is a prefix of when the program takes prefixes.
    pub(crate) fn lookup(&self, name: &str) -> Lookup {
        if let Some(def) = self.options.iter().find(|def| def.is(name)) {
            return Lookup::Found(def);
        }
        if !name.starts_with("--") || self.long == LongMatch::Exact {
            return Lookup::Unknown;
        }
        let mut matches = self.options.iter().filter(|def| {
            def.names
                .iter()
                .any(|candidate| candidate.starts_with("--") && candidate.starts_with(name))
        });
        match (matches.next(), matches.next()) {
            (None, _) => Lookup::Unknown,
            (Some(def), None) => Lookup::Found(def),
            (Some(first), Some(second)) => {
                let mut names = vec![first.canonical(), second.canonical()];
                names.extend(matches.map(OptDef::canonical));
                Lookup::Ambiguous(names)
            }
        }
    }
}

/// What a written option name resolves to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lookup {
    Found(&'static OptDef),
    /// A prefix of more than one option: the program refuses it, or reads one we cannot tell.
    Ambiguous(Vec<&'static str>),
    Unknown,
}

/// An option as the program reads it.
#[derive(Debug, Clone)]
pub(crate) struct Given {
    pub(crate) def: &'static OptDef,
    /// The name as written, without a value (`--compress-prog`, `-o`).
    pub(crate) written: String,
    pub(crate) value: Option<Word>,
}

/// An argument that looks like an option but is not one the table vouches for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// The argument as written.
    pub(crate) written: String,
    pub(crate) why: ProblemKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProblemKind {
    /// Not an option the table has.
    Unknown,
    /// A prefix of several of the command's options.
    Ambiguous(Vec<&'static str>),
    /// A value given to an option that takes none (`--version=x`), or none to one that needs
    /// one (the last argument).
    WrongArity,
    /// The option's name is not known until run time (`-$FLAG`, `--$NAME=x`).
    NotLiteral,
}

/// A command's arguments read against its table.
#[derive(Debug, Clone, Default)]
pub(crate) struct Parsed {
    pub(crate) options: Vec<Given>,
    pub(crate) problems: Vec<Problem>,
    pub(crate) operands: Vec<Word>,
    /// Index in the original arguments of the first operand, if any.
    pub(crate) first_operand_index: Option<usize>,
}

impl Parsed {
    /// Whether any option given is one of `names` (any spelling in the table; abbreviations
    /// were resolved by [`parse`]).
    pub(crate) fn has(&self, names: &[&str]) -> bool {
        self.options
            .iter()
            .any(|given| names.iter().any(|name| given.def.is(name)))
    }

    /// The values given to any of `names`, in order.
    pub(crate) fn values<'s>(
        &'s self,
        names: &'s [&'s str],
    ) -> impl Iterator<Item = &'s Word> + 's {
        self.options
            .iter()
            .filter(move |given| names.iter().any(|name| given.def.is(name)))
            .filter_map(|given| given.value.as_ref())
    }

    /// The options given whose effect is `effect`.
    pub(crate) fn with_effect(&self, effect: Effect) -> impl Iterator<Item = &Given> {
        self.options
            .iter()
            .filter(move |given| given.def.effect == effect)
    }
}

/// Reads `args` against `table`, the way the program reads them: short options grouped
/// (`-rn`) and with attached values (`-ofile`), long options by their full name or, where the
/// program allows it, any unambiguous prefix, `--` ending the options. Whatever the table does
/// not vouch for is in [`Parsed::problems`].
pub(crate) fn parse(args: &[Word], table: &Table) -> Parsed {
    parse_layers(args, &[table])
}

/// Reads `args` against several tables, the way a program reads options in stages: each
/// option is looked up in the first table, and only if that table does not know it at all in
/// the next, each table matching long names its own way. git reads `git blame --cont` with
/// blame's own parser (prefixes allowed) and passes what that does not know to the revision
/// and diff parsers (full names only): `git log --out=x` is refused by git, and must not be
/// read as `--output`. Where the tables' layout differs (operand order, `-NUM`), the first
/// table's holds.
pub(crate) fn parse_layers(args: &[Word], layers: &[&Table]) -> Parsed {
    let Some(table) = layers.first() else {
        return Parsed::default();
    };
    let mut parsed = Parsed::default();
    let mut index = 0;
    let mut only_operands = false;
    while let Some(word) = args.get(index) {
        index += 1;
        let prefix = word.literal_prefix();
        // `-$FLAG` is an option whose name is known only at run time, not an operand.
        let looks_like_option = !only_operands
            && prefix.starts_with('-')
            && (prefix.len() > 1 || word.literal().is_none());
        if !looks_like_option {
            if parsed.first_operand_index.is_none() {
                parsed.first_operand_index = Some(index - 1);
            }
            parsed.operands.push(word.clone());
            if table.stop_at_operand {
                only_operands = true;
            }
            continue;
        }
        let literal = word.literal();
        if literal.as_deref() == Some("--") {
            only_operands = true;
            continue;
        }
        if let Some(long) = prefix.strip_prefix("--") {
            index = long_option(
                &mut parsed,
                layers,
                word,
                long,
                literal.is_some(),
                args,
                index,
            );
            continue;
        }
        let Some(text) = literal else {
            parsed.problems.push(Problem {
                written: word.display(),
                why: ProblemKind::NotLiteral,
            });
            continue;
        };
        if table.numeric && text[1..].chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        index = short_options(&mut parsed, layers, word, &text, args, index);
    }
    parsed
}

/// The option `name` names in the first of `layers` that knows it (found or ambiguous).
fn lookup_layers(layers: &[&Table], name: &str) -> Lookup {
    for table in layers {
        match table.lookup(name) {
            Lookup::Unknown => continue,
            known => return known,
        }
    }
    Lookup::Unknown
}

/// `--name`, `--name=value` or `--name value`; returns the index of the next argument.
fn long_option(
    parsed: &mut Parsed,
    layers: &[&Table],
    word: &Word,
    long: &str,
    literal: bool,
    args: &[Word],
    index: usize,
) -> usize {
    let (name, attached) = match long.split_once('=') {
        Some((name, _)) => (format!("--{name}"), word.without_prefix(name.len() + 3)),
        None if literal => (format!("--{long}"), None),
        None => {
            parsed.problems.push(Problem {
                written: word.display(),
                why: ProblemKind::NotLiteral,
            });
            return index;
        }
    };
    let def = match lookup_layers(layers, &name) {
        Lookup::Found(def) => def,
        Lookup::Ambiguous(names) => {
            parsed.problems.push(Problem {
                written: name,
                why: ProblemKind::Ambiguous(names),
            });
            return index;
        }
        Lookup::Unknown => {
            parsed.problems.push(Problem {
                written: name,
                why: ProblemKind::Unknown,
            });
            return index;
        }
    };
    let (value, next) = match (def.arity, attached) {
        (Arity::Flag, Some(_)) => {
            parsed.problems.push(Problem {
                written: word.display(),
                why: ProblemKind::WrongArity,
            });
            return index;
        }
        (Arity::Flag, None) | (Arity::Optional, None) => (None, index),
        (Arity::Value | Arity::Optional, Some(value)) => (Some(value), index),
        (Arity::Value, None) => match args.get(index) {
            Some(value) => (Some(value.clone()), index + 1),
            None => {
                parsed.problems.push(Problem {
                    written: name,
                    why: ProblemKind::WrongArity,
                });
                return index;
            }
        },
    };
    parsed.options.push(Given {
        def,
        written: name,
        value,
    });
    next
}

/// A group of short options (`-rn`, `-ofile`, `-n5`); returns the index of the next argument.
fn short_options(
    parsed: &mut Parsed,
    layers: &[&Table],
    word: &Word,
    text: &str,
    args: &[Word],
    mut index: usize,
) -> usize {
    for (offset, letter) in text.char_indices().skip(1) {
        let name = format!("-{letter}");
        let def = match lookup_layers(layers, &name) {
            Lookup::Found(def) => def,
            Lookup::Ambiguous(_) | Lookup::Unknown => {
                parsed.problems.push(Problem {
                    written: name,
                    why: ProblemKind::Unknown,
                });
                // The rest of the group may be this option's value: nothing after it is read.
                return index;
            }
        };
        let attached = offset + letter.len_utf8();
        let value = match def.arity {
            Arity::Flag => {
                parsed.options.push(Given {
                    def,
                    written: name,
                    value: None,
                });
                continue;
            }
            Arity::Optional if attached < text.len() => word.without_prefix(attached),
            Arity::Optional => None,
            Arity::Value if attached < text.len() => word.without_prefix(attached),
            Arity::Value => match args.get(index) {
                Some(value) => {
                    index += 1;
                    Some(value.clone())
                }
                None => {
                    parsed.problems.push(Problem {
                        written: name,
                        why: ProblemKind::WrongArity,
                    });
                    return index;
                }
            },
        };
        parsed.options.push(Given {
            def,
            written: name,
            value,
        });
        break;
    }
    index
}

/// The read-only rule for a command read against its table: every problem makes it not
/// read-only; each option's effect is applied (its value read, written, or run). Operands are
/// the caller's to judge.
pub(crate) fn judge_options(an: &mut Analyzer, command: &str, parsed: &Parsed, site: Site<'_>) {
    for problem in &parsed.problems {
        let written = &problem.written;
        match &problem.why {
            ProblemKind::Unknown => an.needs_approval(format!(
                "`{command} {written}` is not an option cairn knows to be harmless"
            )),
            ProblemKind::Ambiguous(names) => an.needs_approval(format!(
                "`{command} {written}` is ambiguous: it could be {}",
                names.join(" or ")
            )),
            ProblemKind::WrongArity => an.needs_approval(format!(
                "`{command} {written}` is not given the way the option takes a value"
            )),
            ProblemKind::NotLiteral => an.unanalysable(format!(
                "`{command} {written}`: the option is not known until run time"
            )),
        }
    }
    for given in &parsed.options {
        match given.def.effect {
            Effect::Harmless => {}
            Effect::Reads => {
                if let Some(file) = &given.value {
                    an.read_path(file, site);
                }
            }
            Effect::Writes => match &given.value {
                Some(file) => an.write_path(file, site),
                None => an.needs_approval(format!(
                    "`{command} {}` writes a file",
                    given.def.canonical()
                )),
            },
            Effect::Runs => an.runs_program(command, &given.written, given.def.canonical()),
            Effect::Changes(what) => {
                an.needs_approval(format!("`{command} {}` {what}", given.def.canonical()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Word> {
        text.split_whitespace().map(Word::unquoted).collect()
    }

    fn names(args: &Args) -> Vec<String> {
        args.options
            .iter()
            .map(|option| option.name.clone())
            .collect()
    }

    #[test]
    fn short_groups_long_options_and_values_split() {
        let spec = OptionSpec {
            with_value: &["-o", "--output"],
            stop_at_operand: false,
        };
        let args = parse_args(&words("-rf --force x -ofile --output=y -- -z"), spec);
        assert_eq!(names(&args), ["-r", "-f", "--force", "-o", "--output"]);
        let operands: Vec<String> = args.operands.iter().map(Word::display).collect();
        assert_eq!(operands, ["x", "-z"]);
        let values: Vec<String> = args
            .values(&["-o", "--output"])
            .map(Word::display)
            .collect();
        assert_eq!(values, ["file", "y"]);
    }

    #[test]
    fn wrappers_stop_at_the_command() {
        let spec = OptionSpec {
            with_value: &["-u"],
            stop_at_operand: true,
        };
        let args = parse_args(&words("-u root rm -rf /"), spec);
        assert_eq!(names(&args), ["-u"]);
        assert_eq!(args.first_operand_index, Some(2));
    }

    const SORTISH: Table = Table::gnu(&[
        flag(&["-r", "--reverse"]),
        flag(&["-n", "--numeric-sort"]),
        writes(&["-o", "--output"]),
        runs(&["--compress-program"]),
        value(&["--compress-level"]),
        optional(&["-S", "--sep-string"]),
        flag(&["--color", "--colour"]),
    ]);

    fn written(parsed: &Parsed) -> Vec<(String, &'static str, Option<String>)> {
        parsed
            .options
            .iter()
            .map(|given| {
                (
                    given.written.clone(),
                    given.def.canonical(),
                    given.value.as_ref().map(Word::display),
                )
            })
            .collect()
    }

    #[test]
    fn unambiguous_prefixes_resolve_to_the_option() {
        let parsed = parse(&words("--compress-prog=sh -rn --out x f --col"), &SORTISH);
        let expected: Vec<(String, &str, Option<String>)> = vec![
            (
                "--compress-prog".into(),
                "--compress-program",
                Some("sh".into()),
            ),
            ("-r".into(), "--reverse", None),
            ("-n".into(), "--numeric-sort", None),
            ("--out".into(), "--output", Some("x".into())),
            ("--col".into(), "--color", None),
        ];
        assert_eq!(written(&parsed), expected);
        assert!(parsed.problems.is_empty());
        assert_eq!(parsed.operands.len(), 1);
    }

    #[test]
    fn ambiguous_unknown_and_misvalued_options_are_problems() {
        let parsed = parse(&words("--compress -q --reverse=1 -Z -- -x"), &SORTISH);
        let whys: Vec<&ProblemKind> = parsed.problems.iter().map(|p| &p.why).collect();
        assert_eq!(
            whys,
            [
                &ProblemKind::Ambiguous(vec!["--compress-program", "--compress-level"]),
                &ProblemKind::Unknown,
                &ProblemKind::WrongArity,
                &ProblemKind::Unknown,
            ]
        );
        assert_eq!(parsed.operands.len(), 1, "`-x` after `--` is an operand");
    }

    #[test]
    fn optional_values_are_only_attached() {
        let parsed = parse(&words("-S file -S: --sep-string out"), &SORTISH);
        assert_eq!(
            written(&parsed)
                .into_iter()
                .map(|(_, _, value)| value)
                .collect::<Vec<_>>(),
            [None, Some(":".into()), None]
        );
        assert_eq!(parsed.operands.len(), 2);
    }
}
