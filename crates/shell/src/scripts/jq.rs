//! `jq`: its options read exactly as jq reads them (full names only, no prefixes, short
//! letters grouped), every option from jq's manual (its `--help` lists only some), and its
//! filter scanned for the module system.
//!
//! Why the filter needs no longer list: jq's language has no builtin that writes a file, runs
//! a program or opens a file by name. What it reads beyond its inputs is its environment
//! (`env`, `$ENV`, which `printenv` shows just as well), its own inputs again (`input`,
//! `inputs`, `input_filename`, `$__loc__`, `input_line_number`), and it writes only to
//! standard output and error (`debug`, `stderr`, `halt_error`). The one way to files is the
//! module system: `import`/`include` load code or JSON data from the library path (`-L`,
//! `~/.jq`, `$ORIGIN/../lib/jq`), and `modulemeta` reads a module's file. Those are not
//! read-only; everything else in a filter only computes.

use crate::classify::{Analyzer, Site};
use crate::options::{Arity, Effect, LongMatch, Lookup, Table, flag, option, runs, value};
use crate::word::Word;

/// jq 1.6 and 1.7's options. `--arg`, `--argjson`, `--slurpfile` and `--rawfile` take two
/// values and are read before the table.
const JQ: Table = Table {
    options: &[
        flag(&["-n", "--null-input"]),
        flag(&["-R", "--raw-input"]),
        flag(&["-s", "--slurp"]),
        flag(&["-c", "--compact-output"]),
        flag(&["-r", "--raw-output"]),
        flag(&["--raw-output0"]),
        flag(&["-j", "--join-output"]),
        flag(&["-0", "--nul-output"]),
        flag(&["-a", "--ascii-output"]),
        flag(&["-S", "--sort-keys"]),
        flag(&["-C", "--color-output"]),
        flag(&["-M", "--monochrome-output"]),
        flag(&["--tab"]),
        value(&["--indent"]),
        flag(&["--unbuffered"]),
        flag(&["--stream"]),
        flag(&["--stream-errors"]),
        flag(&["--seq"]),
        flag(&["-e", "--exit-status"]),
        flag(&["-b", "--binary"]),
        flag(&["-h", "--help"]),
        flag(&["-V", "--version"]),
        flag(&["--build-configuration"]),
        flag(&["--debug-dump-disasm"]),
        option(&["--debug-trace"], Arity::Optional, Effect::Harmless),
        // The filter is read from the file named by the first operand: code cairn cannot
        // see at the time of the check.
        option(&["-f", "--from-file"], Arity::Flag, Effect::Runs),
        // Modules (code and data) are loaded from the directory.
        runs(&["-L", "--library-path"]),
        // Runs the jq programs in a file of tests.
        option(&["--run-tests"], Arity::Flag, Effect::Runs),
    ],
    long: LongMatch::Exact,
    stop_at_operand: false,
    numeric: false,
};

pub(crate) fn judge(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let mut index = 0;
    let mut only_operands = false;
    let mut operands_are_files = true;
    let mut from_file = false;
    // Each operand, and whether it is a file (operands after `--args` are strings).
    let mut operands: Vec<(&Word, bool)> = Vec::new();
    while let Some(word) = args.get(index) {
        index += 1;
        let prefix = word.literal_prefix();
        if only_operands || prefix.len() < 2 || !prefix.starts_with('-') {
            operands.push((word, operands_are_files));
            continue;
        }
        let Some(text) = word.literal() else {
            an.unanalysable(format!(
                "`jq {}`: the option is not known until run time",
                word.display()
            ));
            continue;
        };
        match text.as_str() {
            "--" => only_operands = true,
            "--arg" | "--argjson" | "--slurpfile" | "--rawfile" => {
                if args.get(index + 1).is_none() {
                    an.needs_approval(format!("`jq {text}` takes two values"));
                }
                if matches!(text.as_str(), "--slurpfile" | "--rawfile")
                    && let Some(file) = args.get(index + 1)
                {
                    an.read_path(file, site);
                }
                index += 2;
            }
            "--args" | "--jsonargs" => operands_are_files = false,
            _ => {
                let (next, file) = option_word(an, &text, index);
                index = next;
                from_file |= file;
            }
        }
    }
    let mut operands = operands.into_iter();
    match operands.next() {
        Some((program, _)) if from_file => an.read_path(program, site),
        Some((filter, _)) => match filter.literal() {
            Some(text) => judge_filter(an, &text),
            None => an.unanalysable("the jq filter is not known until run time"),
        },
        None => {}
    }
    for (operand, is_file) in operands {
        if is_file {
            an.read_path(operand, site);
        }
    }
}

/// One option word (`--tab`, `-nr`, `-L dir`, `-Ldir`); returns the index of the next
/// argument and whether the filter comes from a file.
fn option_word(an: &mut Analyzer, text: &str, mut index: usize) -> (usize, bool) {
    let names: Vec<String> = if text.starts_with("--") {
        vec![text.split('=').next().unwrap_or_default().to_owned()]
    } else {
        text.chars()
            .skip(1)
            .map(|letter| format!("-{letter}"))
            .collect()
    };
    let mut from_file = false;
    for name in names {
        let Lookup::Found(def) = JQ.lookup(&name) else {
            an.needs_approval(format!(
                "`jq {text}` is not an option cairn knows to be harmless"
            ));
            return (index, from_file);
        };
        if def.effect == Effect::Runs {
            an.runs_program("jq", &name, def.canonical());
        }
        from_file |= def.is("-f");
        if def.arity == Arity::Value {
            // `-Ldir` has its value attached; `--indent 2` and `-L dir` take the next word.
            if !(name == "-L" && text.len() > 2) {
                index += 1;
            }
            return (index, from_file);
        }
        if def.arity == Arity::Flag && text.starts_with("--") && text.contains('=') {
            an.needs_approval(format!("`jq {text}` is not an option jq takes"));
        }
    }
    (index, from_file)
}

fn judge_filter(an: &mut Analyzer, filter: &str) {
    if let Some(what) = module_use(filter) {
        an.unanalysable(format!(
            "the jq filter uses `{what}`, which loads code or data from files"
        ));
    }
}

/// The first use of the module system in a filter: `import`, `include` or `modulemeta`,
/// outside strings and comments (but inside `\(…)` interpolations), not as a field name
/// (`.import`) or an object key (`{include: 1}`).
pub(crate) fn module_use(filter: &str) -> Option<&'static str> {
    let chars: Vec<char> = filter.chars().collect();
    // Open string interpolations, each with its parenthesis depth.
    let mut interpolations: Vec<usize> = Vec::new();
    let mut in_string = false;
    let mut at = 0;
    let mut previous = ' ';
    while let Some(&c) = chars.get(at) {
        if in_string {
            match c {
                '\\' if chars.get(at + 1) == Some(&'(') => {
                    interpolations.push(0);
                    in_string = false;
                    at += 2;
                }
                '\\' => at += 2,
                '"' => {
                    in_string = false;
                    at += 1;
                }
                _ => at += 1,
            }
            previous = '"';
            continue;
        }
        match c {
            '"' => in_string = true,
            '#' => {
                while chars.get(at).is_some_and(|&c| c != '\n') {
                    at += 1;
                }
                continue;
            }
            '(' => {
                if let Some(depth) = interpolations.last_mut() {
                    *depth += 1;
                }
            }
            ')' => match interpolations.last_mut() {
                Some(0) => {
                    interpolations.pop();
                    in_string = true;
                }
                Some(depth) => *depth -= 1,
                None => {}
            },
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = at;
                while chars
                    .get(at)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    at += 1;
                }
                let name: String = chars.get(start..at).unwrap_or_default().iter().collect();
                let rest: String = chars.get(at..).unwrap_or_default().iter().collect();
                let is_key =
                    rest.trim_start().starts_with(':') && !rest.trim_start().starts_with("::");
                let is_field = matches!(previous, '.' | '$' | '@');
                previous = 'a';
                if is_field || is_key {
                    continue;
                }
                for keyword in ["import", "include", "modulemeta"] {
                    if name == keyword {
                        return Some(keyword);
                    }
                }
                continue;
            }
            _ => {}
        }
        if !c.is_whitespace() {
            previous = c;
        }
        at += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::module_use;

    #[test]
    fn modules_are_found_outside_strings_and_fields() {
        for filter in [
            ".name",
            ".[] | .id",
            "select(.type == \"import\")",
            ".import, .include",
            "{include: 1, import: 2}",
            "# import \"x\" as $x;\n.",
            "input_filename, $__loc__, env.HOME, $ENV.PATH, [inputs], debug, stderr",
            "\"\\(.a) and \\(.b | tostring)\"",
        ] {
            assert_eq!(module_use(filter), None, "{filter}");
        }
        for (filter, found) in [
            ("import \"evil\" as e; e::f", "import"),
            ("include \"lib\"; .", "include"),
            ("\"a\" | modulemeta", "modulemeta"),
            ("\"\\(\"x\" | modulemeta)\"", "modulemeta"),
            (".a | (include \"m\"; .)", "include"),
        ] {
            assert_eq!(module_use(filter), Some(found), "{filter}");
        }
    }
}

#[cfg(all(test, feature = "interop"))]
mod interop {
    use super::JQ;
    use crate::runners::help::options;

    /// jq's `--help` lists only some of its options (the rest are in its manual, from which
    /// the table was written); those it lists are all there, exactly as spelt.
    #[test]
    fn the_table_has_every_option_jq_lists() {
        let missing: Vec<String> = options("jq", &["--help"])
            .into_iter()
            .filter(|name| !JQ.options.iter().any(|def| def.is(name)))
            .filter(|name| {
                !matches!(
                    name.as_str(),
                    "--arg" | "--argjson" | "--slurpfile" | "--rawfile" | "--args" | "--jsonargs"
                )
            })
            .collect();
        assert_eq!(missing, Vec::<String>::new());
    }
}
