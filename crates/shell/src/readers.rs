//! The read-only tools that take files (`cat`, `grep`, `sort`, `less`, …): which arguments
//! are files they read, and which of their options make them write files or run programs.
//!
//! Each command's options are read against its table in [`crate::tables`], which lists every
//! option the program has: an option the table does not know, a prefix of several, or a value
//! given the wrong way makes the command not read-only ([`judge_options`]). What is left here
//! is what the tables cannot say: which operands are patterns, which are outputs, and which
//! options make the command follow the links it meets.

use super::classify::{Analyzer, Site};
use super::links::{self, Access};
use super::options::{Arity, Given, Parsed, Table, judge_options, parse};
use super::scripts;
use super::tables;
use super::word::Word;

/// Judges `name` if it is a read-only file tool; returns whether it was.
pub(crate) fn judge(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) -> bool {
    match name {
        "sed" => scripts::sed(an, args, site),
        "jq" => scripts::jq(an, args, site),
        "xxd" => xxd(an, args, site),
        "less" => {
            let options = initial_commands(an, name, args);
            if let Some(reader) = reader(name) {
                read_files(an, name, &options, site, &reader);
            }
        }
        _ => match reader(name) {
            Some(reader) => {
                special_operands(an, name, args);
                read_files(an, name, args, site, &reader);
            }
            None => return false,
        },
    }
    true
}

/// What a command's operands are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operands {
    /// Files it reads.
    Read,
    /// The first is a pattern, not a file, unless one of these options gives the pattern.
    PatternFirst(&'static [&'static str]),
    /// The first is read; the second, if any, is the file it writes (`uniq IN OUT`).
    InputThenOutput,
}

/// How a command that reads files takes its arguments, beyond its option table.
#[derive(Debug, Clone, Copy)]
struct Reader {
    table: &'static Table,
    operands: Operands,
    /// Options that make it follow the symbolic links it meets while walking a directory
    /// tree (`grep -R`, `rg -L`).
    follows: &'static [&'static str],
    /// For commands that walk trees only when asked (`ls -R`), the options that ask; empty
    /// for those that always do (`du`, `rg`) or whose following option implies it (`grep -R`).
    walks: &'static [&'static str],
    /// Options that turn the following off again (`diff --no-dereference`).
    unless: &'static [&'static str],
}

impl Reader {
    fn new(table: &'static Table) -> Reader {
        Reader {
            table,
            operands: Operands::Read,
            follows: &[],
            walks: &[],
            unless: &[],
        }
    }
}

/// The read-only commands that take files, and how.
fn reader(name: &str) -> Option<Reader> {
    const GREP_PATTERNS: &[&str] = &["-e", "--regexp", "-f", "--file"];
    let table = tables::table(name)?;
    let plain = Reader::new(table);
    let reader = match name {
        "grep" | "egrep" | "fgrep" => Reader {
            operands: Operands::PatternFirst(GREP_PATTERNS),
            // `-r` follows only the links named on the command line, which are resolved as
            // operands anyway; `-R` follows every link it meets.
            follows: &["-R"],
            ..plain
        },
        "rg" => Reader {
            operands: Operands::PatternFirst(&[
                "-e",
                "--regexp",
                "-f",
                "--file",
                "--files",
                "--type-list",
            ]),
            follows: &["-L"],
            ..plain
        },
        "uniq" => Reader {
            operands: Operands::InputThenOutput,
            ..plain
        },
        // GNU `ls -L` dereferences links (with `-R`, every link met).
        "ls" | "dir" | "vdir" => Reader {
            follows: &["-L"],
            walks: &["-R"],
            ..plain
        },
        "du" => Reader {
            follows: &["-L"],
            ..plain
        },
        "tree" => Reader {
            follows: &["-l"],
            ..plain
        },
        // diff follows the links it meets in the trees it compares unless told not to.
        "diff" => Reader {
            follows: &["-r"],
            unless: &["--no-dereference"],
            ..plain
        },
        // Judged by their own code in `commands`.
        "date" | "hostname" => return None,
        _ => plain,
    };
    Some(reader)
}

/// Operands that some commands read as something other than a file.
fn special_operands(an: &mut Analyzer, name: &str, args: &[Word]) {
    match name {
        // binutils reads `@FILE` as more arguments, known only at run time.
        "strings" if args.iter().any(|arg| arg.literal_prefix().starts_with('@')) => {
            an.needs_approval("`strings @FILE` reads its options from a file");
        }
        // `bat cache --build` and `--clear` write bat's cache.
        "bat" | "batcat" => {
            let first = args
                .iter()
                .find(|arg| !arg.literal_prefix().starts_with('-'));
            if first.and_then(Word::literal).as_deref() == Some("cache") {
                an.needs_approval(format!("`{name} cache` changes bat's cache"));
            }
        }
        _ => {}
    }
}

/// A read-only command: its options judged against its table, its operands read (or, for
/// an output operand, written).
fn read_files(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>, reader: &Reader) {
    let parsed = parse(args, reader.table);
    judge_options(an, name, &parsed, site);
    let skip = match reader.operands {
        Operands::PatternFirst(given_by) => usize::from(!parsed.has(given_by)),
        Operands::Read | Operands::InputThenOutput => 0,
    };
    let files = parsed.operands.get(skip..).unwrap_or_default();
    for (position, operand) in files.iter().enumerate() {
        if reader.operands == Operands::InputThenOutput && position > 0 {
            an.write_path(operand, site);
        } else {
            an.read_path(operand, site);
        }
    }
    follow_links(an, name, &parsed, files, site, reader);
}

fn follow_links(
    an: &mut Analyzer,
    name: &str,
    parsed: &Parsed,
    files: &[Word],
    site: Site<'_>,
    reader: &Reader,
) {
    let following = parsed
        .options
        .iter()
        .find(|given| reader.follows.iter().any(|name| given.def.is(name)));
    let Some(Given { written, .. }) = following else {
        return;
    };
    if (!reader.walks.is_empty() && !parsed.has(reader.walks)) || parsed.has(reader.unless) {
        return;
    }
    let here = [Word::unquoted(".")];
    let starts = if files.is_empty() { &here[..] } else { files };
    let shown = format!("{name} {written}");
    links::follow(an, &shown, starts, site, Access::Reads);
}

/// `less +cmd`: the commands less runs at start. Returns the other arguments. Only moving
/// and searching are read-only; `+!cmd`, `+|cmd`, `+s file`, `+v` and the rest run programs
/// or write files.
fn initial_commands(an: &mut Analyzer, name: &str, args: &[Word]) -> Vec<Word> {
    let mut rest = Vec::new();
    let mut options_ended = false;
    for arg in args {
        let prefix = arg.literal_prefix();
        if options_ended || !prefix.starts_with('+') {
            options_ended |= arg.literal().as_deref() == Some("--");
            rest.push(arg.clone());
            continue;
        }
        let harmless = arg
            .literal()
            .is_some_and(|text| is_harmless_less_command(&text));
        if !harmless {
            an.needs_approval(format!(
                "`{name} {}` runs a command that is not known to be read-only",
                arg.display()
            ));
        }
    }
    rest
}

/// `+G`, `+50`, `+50%`, `+/pattern`, `+?pattern`, `+F`, `++G` (every file).
fn is_harmless_less_command(text: &str) -> bool {
    let command = text.trim_start_matches('+');
    if command.starts_with('/') || command.starts_with('?') {
        return true;
    }
    let letters = command.trim_start_matches(|c: char| c.is_ascii_digit());
    matches!(letters, "" | "g" | "G" | "F" | "p" | "P" | "%")
}

/// `xxd [options] [infile [outfile]]`: single-dash words (`-ps`, `-cols 8`) or a letter with
/// its value attached (`-c8`); the second operand is the output.
fn xxd(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let mut operands = Vec::new();
    let mut index = 0;
    let mut options_ended = false;
    while let Some(arg) = args.get(index) {
        index += 1;
        let prefix = arg.literal_prefix();
        if options_ended || prefix.len() < 2 || !prefix.starts_with('-') {
            operands.push(arg);
            continue;
        }
        let Some(text) = arg.literal() else {
            an.unanalysable(format!(
                "`xxd {}`: the option is not known until run time",
                arg.display()
            ));
            continue;
        };
        if text == "--" {
            options_ended = true;
            continue;
        }
        match tables::xxd_word(&text) {
            Some((def, false)) if def.arity == Arity::Value => {
                if args.get(index).is_none() {
                    an.needs_approval(format!("`xxd {text}` is not given its value"));
                }
                index += 1;
            }
            Some(_) => {}
            None => an.needs_approval(format!(
                "`xxd {text}` is not an option cairn knows to be harmless"
            )),
        }
    }
    for (position, operand) in operands.into_iter().enumerate() {
        if position == 0 {
            an.read_path(operand, site);
        } else {
            an.write_path(operand, site);
        }
    }
}
