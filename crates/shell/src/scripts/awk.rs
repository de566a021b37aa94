//! `awk` (gawk, mawk, nawk): the options read against a table of every option gawk and mawk
//! have, and the program tokenized (strings, regular expression literals, comments) so that
//! what can run or write is found wherever it is: `system()`, any `|` (`print | "cmd"`,
//! `"cmd" | getline`, gawk's `|&`), `print >`/`>>` redirections (a literal file is judged as a
//! write, anything else is not read-only), `getline < FILE` (judged as a read), gawk's `@`
//! (`@load`, `@include`, indirect calls, which reach `system` by name), and changes to
//! `ARGV`/`ARGC`/`SYMTAB`, which name the input files at run time. Every function called must
//! be a builtin on the list below or one the program defines.

use crate::classify::{Analyzer, Site};
use crate::globs::quoted_path;
use crate::options::{
    Arity, Effect, Parsed, Table, flag, judge_options, option, optional, parse, runs, value,
};
use crate::word::Word;

mod program;

use program::{AwkFinding, INPUT_VARIABLES, scan_program};

/// gawk 5's options and mawk's (`-W`), POSIX order: options end at the program.
const AWK: Table = Table {
    options: &[
        // Code read from a file (or a library loaded) is not visible at the time of the check.
        runs(&["-f", "--file"]),
        runs(&["-E", "--exec"]),
        runs(&["-i", "--include"]),
        runs(&["-l", "--load"]),
        // The debugger runs the commands it reads, from its input or a file.
        option(&["-D", "--debug"], Arity::Optional, Effect::Runs),
        value(&["-F", "--field-separator"]),
        value(&["-v", "--assign"]),
        value(&["-e", "--source"]),
        value(&["-W"]),
        // Write `awkvars.out` / `awkprof.out`, or the file given.
        optional(&["-d", "--dump-variables"]),
        optional(&["-o", "--pretty-print"]),
        optional(&["-p", "--profile"]),
        optional(&["-L", "--lint"]),
        flag(&["-b", "--characters-as-bytes"]),
        flag(&["-c", "--traditional"]),
        flag(&["-C", "--copyright"]),
        flag(&["-g", "--gen-pot"]),
        flag(&["-h", "--help"]),
        flag(&["-I", "--trace"]),
        flag(&["-k", "--csv"]),
        flag(&["-M", "--bignum"]),
        flag(&["-N", "--use-lc-numeric"]),
        flag(&["-n", "--non-decimal-data"]),
        flag(&["-O", "--optimize"]),
        flag(&["-P", "--posix"]),
        flag(&["-r", "--re-interval"]),
        flag(&["-s", "--no-optimize"]),
        flag(&["-S", "--sandbox"]),
        flag(&["-t", "--lint-old"]),
        flag(&["-V", "--version"]),
    ],
    long: crate::options::LongMatch::Prefix,
    stop_at_operand: true,
    numeric: false,
};

/// The `-W` names: gawk reads `-W name` as `--name` (any unambiguous prefix), mawk as its own
/// options (also abbreviated). Harmless only when harmless in both readings.
const W_HARMLESS: &[&str] = &[
    "version",
    "help",
    "usage",
    "interactive",
    "posix_space",
    "random",
    "sprintf",
    "traditional",
    "posix",
    "lint",
    "lint-old",
    "sandbox",
    "re-interval",
    "characters-as-bytes",
    "copyright",
    "non-decimal-data",
    "use-lc-numeric",
    "optimize",
    "no-optimize",
    "bignum",
    "csv",
    "trace",
    "gen-pot",
];
const W_DANGEROUS: &[&str] = &[
    "exec",
    "file",
    "source",
    "include",
    "load",
    "debug",
    "dump",
    "dump-variables",
    "pretty-print",
    "profile",
    "assign",
    "field-separator",
];

pub(crate) fn judge(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) {
    let parsed = parse(args, &AWK);
    judge_options(an, name, &parsed, site);
    judge_special_options(an, name, &parsed, site);
    let from_file = parsed.has(&["-f", "-E"]);
    let mut programs: Vec<&Word> = parsed.values(&["-e"]).collect();
    let mut operands = parsed.operands.iter();
    if !from_file && programs.is_empty() {
        // With no program at all, awk prints its usage (or, with `-W version`, its version).
        programs.extend(operands.next());
    }
    let texts: Option<Vec<String>> = programs.iter().map(|word| word.literal()).collect();
    match texts {
        Some(texts) => judge_program(an, name, &texts.join("\n"), site),
        None => an.unanalysable(format!("the {name} program is not known until run time")),
    }
    for operand in operands {
        match assignment(operand) {
            Some(variable) if INPUT_VARIABLES.contains(&variable.as_str()) => {
                an.unanalysable(format!("`{name}` is told to set {variable}"));
            }
            Some(_) => {}
            None => an.read_path(operand, site),
        }
    }
}

/// `var=value` operands are assignments, not files (POSIX: a name, then `=`).
fn assignment(word: &Word) -> Option<String> {
    let prefix = word.literal_prefix();
    let (name, _) = prefix.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let is_name = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    is_name.then(|| name.to_owned())
}

/// The options the table cannot judge alone: those that write a default file, `-W`, and
/// `-v` assignments.
fn judge_special_options(an: &mut Analyzer, name: &str, parsed: &Parsed, site: Site<'_>) {
    // The program files (`-f`, `-E`, `-i`) are read, besides being code.
    for given in parsed.with_effect(Effect::Runs) {
        if let (Some(file), false) = (&given.value, given.def.is("-l")) {
            an.read_path(file, site);
        }
    }
    for given in &parsed.options {
        let default = match given.def.canonical() {
            "--dump-variables" => "awkvars.out",
            "--pretty-print" | "--profile" => "awkprof.out",
            "--assign" => {
                if let Some(variable) = given.value.as_ref().and_then(assignment)
                    && INPUT_VARIABLES.contains(&variable.as_str())
                {
                    an.unanalysable(format!("`{name}` is told to set {variable}"));
                }
                continue;
            }
            "-W" => {
                judge_w(an, name, given.value.as_ref());
                continue;
            }
            _ => continue,
        };
        match &given.value {
            Some(file) => an.write_path(file, site),
            None => an.write_path(&quoted_path(default), site),
        }
    }
}

fn judge_w(an: &mut Analyzer, name: &str, value: Option<&Word>) {
    let Some(text) = value.and_then(Word::literal) else {
        an.unanalysable(format!(
            "`{name} -W` is given an option not known until run time"
        ));
        return;
    };
    for part in text.split(',') {
        let key = part.split('=').next().unwrap_or_default().trim();
        let dangerous = W_DANGEROUS.iter().any(|full| full.starts_with(key));
        let harmless = W_HARMLESS.iter().any(|full| full.starts_with(key));
        if key.is_empty() || dangerous || !harmless {
            an.runs_program(name, &format!("-W {key}"), &format!("-W {key}"));
        }
    }
}

fn judge_program(an: &mut Analyzer, name: &str, program: &str, site: Site<'_>) {
    let findings = match scan_program(program) {
        Ok(findings) => findings,
        Err(error) => {
            // awk would refuse it, or awks read it differently: no rule vouches for it.
            an.unanalysable(format!("cairn cannot read the {name} program: {error}"));
            return;
        }
    };
    for finding in findings {
        match finding {
            AwkFinding::Reads(file) => an.read_path(&quoted_path(&file), site),
            AwkFinding::Writes(file) => {
                let file = if file == "-" { "./-".to_owned() } else { file };
                an.write_path(&quoted_path(&file), site);
            }
            AwkFinding::Beyond(what) => {
                an.unanalysable(format!(
                    "the {name} program {what}, which no rule vouches for"
                ));
            }
            AwkFinding::Unknown(function) => an.needs_approval(format!(
                "the {name} program calls {function}(), which cairn does not know"
            )),
        }
    }
}

#[cfg(all(test, feature = "interop"))]
mod interop {
    use super::AWK;
    use crate::runners::help::missing;

    /// Every `-W` option mawk lists is judged one way or the other.
    #[test]
    fn every_mawk_w_option_is_known() {
        let output = std::process::Command::new("mawk")
            .args(["-W", "usage"])
            .output()
            .expect("run mawk");
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        let names: Vec<String> = text
            .lines()
            .filter_map(|line| line.trim_start().strip_prefix("-W "))
            .filter_map(|rest| rest.split([' ', '=']).next())
            .map(str::to_owned)
            .collect();
        assert!(names.len() > 5, "{text}");
        let unknown: Vec<&String> = names
            .iter()
            .filter(|name| {
                !super::W_HARMLESS.contains(&name.as_str())
                    && !super::W_DANGEROUS.contains(&name.as_str())
            })
            .collect();
        assert_eq!(unknown, Vec::<&String>::new());
    }

    #[test]
    fn the_table_has_every_option_gawk_lists() {
        assert_eq!(missing(&AWK, "gawk", &["--help"]), Vec::<String>::new());
    }
}
