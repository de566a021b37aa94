//! Commands that change what a later name in the same command line runs: `hash -p`, `alias`,
//! `enable`, function definitions, `PATH=`/`BASH_ENV=` and the other variables that name
//! programs, `source`, `trap`, and the shell options that change how commands are read.
//!
//! The analysis judges each simple command by its name; once a name can mean something else
//! (`hash -p /bin/rm cat; cat -f x` runs `rm`), nothing after it can be judged, so these make
//! the whole command [`super::BashVerdict::Unanalysable`]: it is asked about even when an
//! allow rule matches. What only lists or forgets (`hash`, `hash -r`, `alias` with no `=`,
//! `enable` with no operand, `trap -p`) stays as it was: it leaves every name meaning what
//! it meant.

use super::classify::Analyzer;
use super::variables;
use super::word::Word;

/// `set -o` options that change how later commands are read or run: `keyword` puts
/// `NAME=value` arguments into the command's environment, `posix` turns alias expansion on,
/// `histexpand` and `history` make `!…` re-run earlier text.
const DANGEROUS_SET_OPTIONS: &[&str] = &["keyword", "posix", "histexpand", "history"];

/// `set` flags with the same effect as [`DANGEROUS_SET_OPTIONS`]: `-k` is `keyword`, `-H` is
/// `histexpand`.
const DANGEROUS_SET_FLAGS: &[char] = &['k', 'H'];

/// `shopt -s` options that leave names, words and paths meaning what the analysis assumes.
/// Everything else (`expand_aliases`, `extdebug`, `sourcepath`, `cdable_vars`, `dotglob`,
/// `execfail`, the `compat*` levels, …) changes what a later command runs or touches.
const HARMLESS_SHOPT_OPTIONS: &[&str] = &[
    "checkhash",
    "checkjobs",
    "checkwinsize",
    "cmdhist",
    "extglob",
    "failglob",
    "globasciiranges",
    "globskipdots",
    "globstar",
    "gnu_errfmt",
    "histappend",
    "huponexit",
    "inherit_errexit",
    "lastpipe",
    "lithist",
    "nocasematch",
    "nullglob",
    "shift_verbose",
    "xpg_echo",
];

/// Flags what `name` does to the meaning of later names; the command is still judged
/// afterwards for what else it does.
pub(crate) fn judge(an: &mut Analyzer, name: &str, args: &[Word]) {
    match name {
        "hash" => hash(an, args),
        "alias"
            if args
                .iter()
                .any(|arg| arg.literal().is_none_or(|text| text.contains('='))) =>
        {
            an.unanalysable(
                "`alias` defines a command name, so later names may run something else",
            );
        }
        "enable" => enable(an, args),
        "source" | "." => {
            let file = args.first().map(Word::display).unwrap_or_default();
            an.unanalysable(format!(
                "`{name} {file}` runs commands that are not known here and can redefine any command name"
            ));
        }
        "trap" => trap(an, args),
        "set" => set(an, args),
        "shopt" => shopt(an, args),
        "env" => env(an, args),
        "sh" | "bash" | "dash" | "ksh" | "mksh" | "zsh" | "ash" => shell_options(an, name, args),
        _ => variables::judge_command(an, name, args),
    }
}

/// A function definition: the name runs the body from now on, with arguments the body sees
/// only as `$1`, `$@`; it may shadow a builtin the analysis (or cairn's own `pwd` after the
/// command) relies on.
pub(crate) fn function_defined(an: &mut Analyzer, name: &str) {
    an.unanalysable(format!(
        "defines the function {name}, which changes what the name `{name}` runs"
    ));
}

/// NAME set in the shell (standalone `NAME=value`, `declare`, `local`, `read`, `printf -v`, a
/// loop variable), judged by [`variables::set_in_shell`].
pub(crate) fn variable_set(an: &mut Analyzer, name: &str) {
    variables::set_in_shell(an, name);
}

/// `hash` lists, forgets (`-r`, `-d`) or looks names up in PATH as bash would anyway; only
/// `-p PATH NAME` makes a name run another program.
fn hash(an: &mut Analyzer, args: &[Word]) {
    let mut options = true;
    for arg in args {
        let Some(text) = arg.literal() else {
            an.unanalysable("`hash` is given a word known only at run time, which may be `-p`");
            return;
        };
        if options && text == "--" {
            options = false;
        } else if options && text.starts_with('-') && text.len() > 1 {
            if text.contains('p') {
                an.unanalysable(
                    "`hash -p` makes a command name run another program, so later names may run something else",
                );
                return;
            }
        } else {
            options = false;
        }
    }
}

/// `enable` alone, or with only `-a`, `-p`, `-s`, lists builtins; any operand loads
/// (`-f`), turns off (`-n`), removes (`-d`) or turns on a builtin.
fn enable(an: &mut Analyzer, args: &[Word]) {
    let changes = args.iter().any(|arg| {
        arg.literal().is_none_or(|text| {
            !text.starts_with('-') || text.contains(['f', 'n', 'd']) || text == "--"
        })
    });
    if changes {
        an.unanalysable("`enable` changes which builtins later names run");
    }
}

/// `trap`, `trap -l` and `trap -p` list; anything else sets commands that run later (or
/// removes cairn's own exit trap).
fn trap(an: &mut Analyzer, args: &[Word]) {
    let sets = args.iter().any(|arg| {
        arg.literal()
            .is_none_or(|text| !matches!(text.as_str(), "-l" | "-p"))
    });
    if sets {
        an.unanalysable("`trap` sets commands that run later, outside this analysis");
    }
}

fn set(an: &mut Analyzer, args: &[Word]) {
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        let Some(text) = arg.literal() else {
            an.unanalysable("`set` is given an option known only at run time");
            return;
        };
        if text == "--" || text == "-" || !(text.starts_with('-') || text.starts_with('+')) {
            // The rest are positional parameters.
            return;
        }
        let turns_on = text.starts_with('-');
        let flags = text.get(1..).unwrap_or_default();
        if turns_on && flags.contains('a') {
            variables::allexport(an, &format!("set {text}"));
        }
        if turns_on && let Some(flag) = flags.chars().find(|c| DANGEROUS_SET_FLAGS.contains(c)) {
            an.unanalysable(format!("`set -{flag}` changes how later commands are read"));
            return;
        }
        if flags.contains('o') {
            let Some(option) = words.next() else {
                return;
            };
            match option.literal() {
                Some(option) if turns_on && option == "allexport" => {
                    variables::allexport(an, "set -o allexport");
                }
                Some(option) if turns_on && DANGEROUS_SET_OPTIONS.contains(&option.as_str()) => {
                    an.unanalysable(format!(
                        "`set -o {option}` changes how later commands are read"
                    ));
                    return;
                }
                Some(_) => {}
                None => {
                    an.unanalysable("`set -o` is given an option known only at run time");
                    return;
                }
            }
        }
    }
}

fn shopt(an: &mut Analyzer, args: &[Word]) {
    let mut setting = None;
    let mut set_options = false;
    let mut names = Vec::new();
    for arg in args {
        let Some(text) = arg.literal() else {
            an.unanalysable("`shopt` is given a word known only at run time");
            return;
        };
        match text.strip_prefix('-') {
            Some(flags) if !flags.is_empty() && names.is_empty() => {
                if flags.contains('s') {
                    setting = Some(true);
                }
                if flags.contains('u') {
                    setting = Some(false);
                }
                set_options |= flags.contains('o');
            }
            _ => names.push(text),
        }
    }
    let Some(turns_on) = setting else {
        // Without -s or -u, shopt only reports.
        return;
    };
    for name in names {
        if set_options && turns_on && name == "allexport" {
            variables::allexport(an, "shopt -so allexport");
        }
        let harmful = if set_options {
            turns_on && DANGEROUS_SET_OPTIONS.contains(&name.as_str())
        } else if turns_on {
            !HARMLESS_SHOPT_OPTIONS.contains(&name.as_str())
        } else {
            // Turning an option off returns to what a fresh non-interactive bash does,
            // except for these.
            matches!(name.as_str(), "interactive_comments" | "globskipdots")
        };
        if harmful {
            let flag = if turns_on { "-s" } else { "-u" };
            an.unanalysable(format!(
                "`shopt {flag} {name}` changes how later commands are read or what they touch"
            ));
        }
    }
}

/// `env NAME=value … command`: the variables `env` gives the command it runs, and those it
/// takes away (`-u NAME`).
fn env(an: &mut Analyzer, args: &[Word]) {
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        let Some(text) = arg.literal() else {
            let prefix = arg.literal_prefix();
            match prefix.split_once('=') {
                Some((name, _)) if !name.starts_with('-') => variables::exported(an, name, None),
                _ => an.unanalysable(format!(
                    "`env` is given {}, known only at run time: it may set or unset any variable",
                    arg.display()
                )),
            }
            continue;
        };
        if text == "-u" || text == "--unset" {
            match words.next().and_then(Word::literal) {
                Some(name) => variables::unset(an, &name),
                None => an.unanalysable("`env -u` unsets a variable named only at run time"),
            }
        } else if let Some(name) = text
            .strip_prefix("--unset=")
            .or_else(|| text.strip_prefix("-u").filter(|name| !name.is_empty()))
        {
            variables::unset(an, name);
        } else if let Some((name, value)) = text.split_once('=')
            && !name.starts_with('-')
        {
            variables::exported(an, name, Some(value));
        } else if !text.starts_with('-') {
            // The command `env` runs, and its arguments.
            return;
        }
    }
}

/// `bash -a -c …`, `sh -o allexport -c …`: the options a shell is started with, before the
/// script or command string.
fn shell_options(an: &mut Analyzer, name: &str, args: &[Word]) {
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        let Some(text) = arg.literal() else {
            an.unanalysable(format!(
                "`{name}` is given an option known only at run time, which may be -a (export every assignment)"
            ));
            return;
        };
        if text == "--" || text == "-" || !(text.starts_with('-') || text.starts_with('+')) {
            return;
        }
        if text.starts_with("--") {
            continue;
        }
        let flags = text.get(1..).unwrap_or_default();
        if text.starts_with('-') && flags.contains('a') {
            variables::allexport(an, &format!("{name} {text}"));
        }
        if flags.contains('o') || flags.contains('O') {
            let option = words.next().and_then(Word::literal);
            if text.starts_with('-') && option.as_deref() == Some("allexport") {
                variables::allexport(an, &format!("{name} -o allexport"));
            }
        }
    }
}
