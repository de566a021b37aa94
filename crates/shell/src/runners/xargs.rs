//! `xargs`: its options read against GNU xargs's full table (POSIX order: they end at the
//! command), the command it runs judged with arguments known only at run time, unless the
//! input is literal text piped in (`echo a b | xargs grep -l foo`), whose words are then the
//! arguments.

use crate::BashVerdict;
use crate::classify::{Analyzer, Site, is_dangerous_variable};
use crate::globs::quoted_path;
use crate::options::{LongMatch, Table, flag, judge_options, optional, parse, reads, value};
use crate::parse::Stdin;
use crate::word::Word;

use super::NO_STDIN;

/// GNU findutils 4.9 xargs.
const XARGS: Table = Table {
    options: &[
        flag(&["-0", "--null"]),
        reads(&["-a", "--arg-file"]),
        value(&["-d", "--delimiter"]),
        value(&["-E"]),
        optional(&["-e", "--eof"]),
        value(&["-I"]),
        optional(&["-i", "--replace"]),
        value(&["-L", "--max-lines"]),
        optional(&["-l"]),
        value(&["-n", "--max-args"]),
        flag(&["-o", "--open-tty"]),
        value(&["-P", "--max-procs"]),
        flag(&["-p", "--interactive"]),
        value(&["--process-slot-var"]),
        flag(&["-r", "--no-run-if-empty"]),
        value(&["-s", "--max-chars"]),
        flag(&["--show-limits"]),
        flag(&["-t", "--verbose"]),
        flag(&["-x", "--exit"]),
        flag(&["--help"]),
        flag(&["--version"]),
    ],
    long: LongMatch::Prefix,
    stop_at_operand: true,
    numeric: false,
};

/// Options after which the input's words are not simply the arguments appended.
const RESHAPING: &[&str] = &["-0", "-a", "-d", "-E", "-e", "-I", "-i"];

pub(crate) fn judge(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = parse(args, &XARGS);
    judge_options(an, "xargs", &parsed, site);
    for variable in parsed.values(&["--process-slot-var"]) {
        let name = variable.literal().unwrap_or_default();
        if name.is_empty() || is_dangerous_variable(&name) {
            an.unanalysable(format!(
                "xargs --process-slot-var sets {}, which changes what the commands run",
                variable.display()
            ));
        }
    }
    let echo = [Word::unquoted("echo")];
    let inner = match parsed
        .first_operand_index
        .and_then(|index| args.get(index..))
    {
        Some(inner) if !inner.is_empty() => inner,
        _ => &echo[..],
    };
    let shown = inner.first().map(Word::display).unwrap_or_default();
    let known = if parsed.has(RESHAPING) {
        None
    } else {
        literal_input(an, site)
    };
    if let Some(words) = known {
        // The arguments are known: judge the command as it will run.
        let mut full = inner.to_vec();
        full.extend(words);
        an.record(&full);
        an.judge_argv(
            &full,
            Site {
                stdin: &NO_STDIN,
                ..site
            },
        );
        return;
    }
    an.needs_approval(format!(
        "xargs runs `{shown}` with arguments read from its input"
    ));
    an.record(inner);
    let part = an.judge_part(
        inner,
        Site {
            stdin: &NO_STDIN,
            extra_args: true,
            ..site
        },
    );
    // The files it reads or changes are named only by its input, which nothing here can see:
    // they may be anywhere (`echo ~/.ssh/id_rsa | xargs cat`).
    if part > BashVerdict::ReadOnly {
        an.destructive(format!(
            "xargs runs `{shown}`, which is not read-only, on whatever its input names"
        ));
    } else if !matches!(shown.as_str(), "echo" | "printf" | "true" | "false") {
        an.unanalysable(format!(
            "xargs gives `{shown}` arguments read from its input, which may name files outside \
             the workspace"
        ));
    }
}

/// The words xargs reads, when its input is a literal here-string, here-document, or the
/// output of `echo WORDS` / `printf '%s\n' WORDS` piped in, and has none of the quotes and
/// backslashes xargs gives meaning to. Each word is as the shell gave it to `echo` (so a
/// `~` or a glob is what the shell expanded it to).
fn literal_input(an: &Analyzer, site: Site<'_>) -> Option<Vec<Word>> {
    let words: Vec<Word> = match site.stdin {
        Stdin::Piped { pipeline, stage } => {
            let pipeline = site.script.pipelines.get(*pipeline)?;
            let previous = pipeline.stages.get(stage.checked_sub(1)?)?;
            let [invocation] = site.script.invocations.get(previous.clone())? else {
                return None;
            };
            let (name, args) = invocation.words.split_first()?;
            match name.literal()?.as_str() {
                "echo"
                    if args
                        .iter()
                        .all(|arg| !arg.literal_prefix().starts_with('-')) =>
                {
                    args.to_vec()
                }
                "printf" => {
                    let (format, args) = args.split_first()?;
                    if !matches!(format.literal()?.as_str(), "%s\\n" | "%s " | "%s\\t") {
                        return None;
                    }
                    args.to_vec()
                }
                _ => return None,
            }
        }
        Stdin::HereString(_) | Stdin::Heredoc { .. } => {
            let text = an.stdin_text(site)?;
            text.split_whitespace().map(quoted_path).collect()
        }
        Stdin::Inherited | Stdin::File(_) => return None,
    };
    let plain = words.iter().all(|word| {
        word.literal().is_some_and(|text| {
            !text.is_empty()
                && !text.contains(['\'', '"', '\\', '$', '`'])
                && !text.chars().any(char::is_whitespace)
                // A glob, `~` or braces expand (to names with blanks, which xargs splits).
                && !text.contains(['*', '?', '[', '~', '{', '}'])
        })
    });
    (plain && !words.is_empty()).then_some(words)
}

#[cfg(all(test, feature = "interop"))]
mod interop {
    use super::XARGS;
    use crate::runners::help::missing;

    #[test]
    fn the_table_has_every_option_xargs_lists() {
        assert_eq!(missing(&XARGS, "xargs", &["--help"]), Vec::<String>::new());
    }
}
