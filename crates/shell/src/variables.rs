//! Which variables a command line may set, and how.
//!
//! Three kinds of variables, from the programs' point of view:
//!
//! - **Dangerous** ones decide which programs run, which configuration or startup file they
//!   trust, or where they look for one (`PATH`, `BASH_ENV`, `HOME`, every `XDG_*`,
//!   `GIT_CONFIG_GLOBAL`, `RIPGREP_CONFIG_PATH`, …). Set, exported or unset by any form —
//!   a prefix, a plain assignment, `export`, `declare`, `read`, `printf -v`, `for`, `${X:=v}`,
//!   arithmetic, `{X}<file`, `env` — they make the rest of the command line
//!   [`super::BashVerdict::Unanalysable`].
//! - **Harmless** ones only change how output looks or is labelled ([`HARMLESS_VARIABLES`]):
//!   any command may be given them.
//! - Everything else is unknown: a command given one in its environment (a prefix, `export`,
//!   `declare -x`, `env X=…`, or any assignment after `set -a`) is not read-only, since the
//!   program may read it for anything. A variable set only in the shell (`x=1; echo $x`) stays
//!   read-only, unless its name looks like one the environment may already export to the
//!   commands (an upper-case name, or `http_proxy`): assigning it changes what they are given.

use std::collections::HashSet;

use super::classify::Analyzer;
use super::declarations;
use super::word::Word;

/// Variables that change which programs run or how, or which files they trust.
const DANGEROUS_VARIABLES: &[&str] = &[
    "PATH",
    "IFS",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "CDPATH",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "LESSOPEN",
    "LESSCLOSE",
    // Bash's own tables and lookups: `BASH_CMDS[cat]=/bin/rm` is `hash -p`,
    // `BASH_ALIASES` is `alias`, `EXECIGNORE` hides programs from the PATH search,
    // `BASH_LOADABLES_PATH` is where `enable -f` loads code from, `POSIXLY_CORRECT` turns on
    // posix mode (and with it alias expansion), `BASH_COMPAT` changes how text is read.
    "BASH_CMDS",
    "BASH_ALIASES",
    "BASH_LOADABLES_PATH",
    "BASH_COMPAT",
    "POSIXLY_CORRECT",
    "EXECIGNORE",
    "GLOBIGNORE",
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    // Where programs find their configuration: git's global config and attributes, ripgrep's
    // options (`--pre=PROGRAM`), less's key bindings, readline's, wget's and curl's rc files,
    // zsh's startup files, gpg's home (which `git log --show-signature` runs). `PWD` and
    // `OLDPWD` are what `$PWD`, `~+` and `~-` name.
    "HOME",
    "PWD",
    "OLDPWD",
    "SHELL",
    "ZDOTDIR",
    "INPUTRC",
    "RIPGREP_CONFIG_PATH",
    "WGETRC",
    "CURL_HOME",
    "GNUPGHOME",
    "LESSSECURE",
    "LESSSECURE_ALLOW",
    "MANOPT",
    "TAR_OPTIONS",
    // glibc loads code from GCONV_PATH, runs programs from GETCONF_DIR, and reads locales and
    // message catalogs (format strings) from LOCPATH and NLSPATH.
    "GCONV_PATH",
    "GETCONF_DIR",
    "LOCPATH",
    "NLSPATH",
    // Code that interpreters and build tools load or run before the program asked for.
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "RUSTC",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTDOC",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "MANPAGER",
    "BROWSER",
];

/// Whether setting (or unsetting) the variable changes which programs run or how.
pub(crate) fn is_dangerous(name: &str) -> bool {
    DANGEROUS_VARIABLES.contains(&name)
        || name.starts_with("LD_")
        || name.starts_with("DYLD_")
        || name.starts_with("XDG_")
        || name.starts_with("LESSKEY")
        // GIT_PAGER, SYSTEMD_PAGER, GIT_EDITOR, SUDO_EDITOR, SSH_ASKPASS, GIT_SSH_COMMAND,
        // FZF_DEFAULT_COMMAND: each names a program.
        || name.ends_with("_PAGER")
        || name.ends_with("_EDITOR")
        || name.ends_with("_ASKPASS")
        || name.ends_with("_COMMAND")
        // `GIT_CONFIG_COUNT`/`_KEY_n`/`_VALUE_n` are `git -c`; `npm_config_script_shell` is
        // `--script-shell`.
        || super::runners::configures_a_program(name)
        // `env 'BASH_FUNC_ls%%=() { …; }' bash -c ls` defines a function in the child.
        || name.starts_with("BASH_FUNC_")
        // GIT_DIR, GIT_EXEC_PATH, GIT_PROXY_COMMAND, GIT_TEMPLATE_DIR…: most of git's
        // variables name a program, or a config or directory it trusts.
        || (name.starts_with("GIT_") && !is_harmless(name))
        || (name.starts_with("CARGO_TARGET_") && name.ends_with("_RUNNER"))
}

/// Variables any command may be given: each only changes how output looks (language,
/// colours, width, time zone) or how a commit is labelled. `TZ=:file` reads a time zone file,
/// which is data, not code; glibc refuses locale names that are paths. Left out on purpose:
/// `LANGUAGE` (gettext takes message catalogs, whose format strings it trusts, from the
/// names in it), `TMPDIR` (where programs write), `TERMINFO`, `LESS`, `DEBUG` (no common
/// meaning: a program may do anything with it).
const HARMLESS_VARIABLES: &[&str] = &[
    "LANG",
    "TZ",
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "FORCE_COLOR",
    "COLORTERM",
    "TERM",
    "COLUMNS",
    "LINES",
    "GREP_COLOR",
    "GREP_COLORS",
    "LS_COLORS",
    "TIME_STYLE",
    "QUOTING_STYLE",
    "RUST_LOG",
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    "CI",
    "GIT_TERMINAL_PROMPT",
    "GIT_OPTIONAL_LOCKS",
];

/// Whether any command may be given the variable without it changing what the command runs,
/// reads or writes.
pub(crate) fn is_harmless(name: &str) -> bool {
    HARMLESS_VARIABLES.contains(&name)
        || name.starts_with("LC_")
        || name.starts_with("GIT_AUTHOR_")
        || name.starts_with("GIT_COMMITTER_")
}

/// Whether giving the variable this value is harmless: the locale and time zone variables
/// name files when their value has a `/` (`LC_ALL=/repo/locale`, `TZ=:/repo/zone`), which
/// glibc then trusts as it trusts its own; `TERM` names a terminfo entry the same way.
/// `None` is a value known only at run time.
fn is_harmless_value(name: &str, value: Option<&str>) -> bool {
    let names_a_file = name == "LANG" || name == "TZ" || name == "TERM" || name.starts_with("LC_");
    is_harmless(name) && (!names_a_file || value.is_some_and(|value| !value.contains('/')))
}

/// Whether the environment cairn's shell starts with may already export the variable, so
/// that a plain assignment changes what every later command is given: environment variables
/// are upper case by convention, and the proxy variables lower case.
fn may_be_inherited(name: &str) -> bool {
    let upper = name.chars().any(|c| c.is_ascii_uppercase())
        && !name.chars().any(|c| c.is_ascii_lowercase());
    upper || name.ends_with("_proxy")
}

/// What the command line does with variables beyond each assignment: whether `set -a` is on,
/// which names `export NAME` exports, and which names are assigned in the shell; judged
/// together at the end, since a loop or a function may assign before it exports.
#[derive(Debug, Default)]
pub(crate) struct Exports {
    /// How `allexport` was turned on (`set -a`), if it was anywhere in the command line.
    allexport: Option<String>,
    /// Names given to `export` or `declare -x` without a value.
    exported: HashSet<String>,
    /// Names assigned in the shell only, in the order first seen.
    assigned: Vec<String>,
}

/// Commands that assign variables without looking like declarations: a declaration reached
/// through `builtin` or `command`, `time`'s prefix assignments, `coproc NAME`, and
/// `compgen -C`, which runs a command.
pub(crate) fn judge_command(an: &mut Analyzer, name: &str, args: &[Word]) {
    match name {
        "export" | "declare" | "typeset" | "local" | "readonly" | "unset" => {
            let mut words = vec![Word::unquoted(name)];
            words.extend(args.iter().cloned());
            declarations::judge_declaration(an, &words);
        }
        // `time HOME=x git …`: `time` is a keyword, so what follows it is a command with
        // prefix assignments.
        "time" => {
            let assignments = args
                .iter()
                .skip_while(|arg| arg.literal().is_some_and(|text| text.starts_with('-')))
                .map_while(|arg| Some((assignment_name(&arg.literal_prefix())?, arg)));
            for (variable, arg) in assignments {
                exported(an, &variable, assigned_value(arg).as_deref());
            }
        }
        // `coproc NAME { …; }` sets the array NAME to the coprocess's descriptors.
        "coproc" => {
            if let Some(variable) = args
                .first()
                .and_then(Word::literal)
                .filter(|text| is_name(text))
            {
                set_in_shell(an, &variable);
            }
        }
        "compgen" => {
            let runs = args.iter().any(|arg| {
                arg.literal().is_none_or(|text| {
                    text.starts_with('-') && !text.starts_with("--") && text.contains(['C', 'F'])
                })
            });
            if runs {
                an.unanalysable(
                    "`compgen -C` or `-F` runs a command or function to complete words",
                );
            }
        }
        _ => {}
    }
}

/// The value of a literal word `NAME=value`.
pub(crate) fn assigned_value(word: &Word) -> Option<String> {
    Some(word.literal()?.split_once('=')?.1.to_owned())
}

/// `NAME` of a word `NAME=value` or `NAME+=value`.
fn assignment_name(text: &str) -> Option<String> {
    let (name, _) = text.split_once('=')?;
    let name = name.strip_suffix('+').unwrap_or(name);
    let base = base_name(name);
    is_name(base).then(|| name.to_owned())
}

fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `a[1]` is `a`.
fn base_name(name: &str) -> &str {
    name.split_once('[').map_or(name, |(base, _)| base)
}

/// NAME set in the shell: a plain assignment, `read`, `printf -v`, `mapfile`, `getopts`, a
/// loop variable, `${NAME:=value}`, arithmetic, `declare` without `-x`.
pub(crate) fn set_in_shell(an: &mut Analyzer, name: &str) {
    set_in_shell_to(an, name, None);
}

/// [`set_in_shell`] with the value, when it is literal text.
pub(crate) fn set_in_shell_to(an: &mut Analyzer, name: &str, value: Option<&str>) {
    let base = base_name(name);
    if is_dangerous(base) {
        an.unanalysable(format!("sets {base}, which changes what the commands run"));
        return;
    }
    if is_harmless_value(base, value) {
        return;
    }
    if may_be_inherited(base) {
        an.needs_approval(format!(
            "sets {base}, which the environment may already export to the commands it runs, \
             and which is not known to be harmless to them"
        ));
    }
    if !an.exports.assigned.iter().any(|known| known == base) {
        an.exports.assigned.push(base.to_owned());
    }
}

/// NAME given to the commands in their environment: a prefix (`NAME=1 cmd`), `export NAME=…`,
/// `declare -x`, `env NAME=… cmd`.
pub(crate) fn exported(an: &mut Analyzer, name: &str, value: Option<&str>) {
    let base = base_name(name);
    if is_dangerous(base) {
        an.unanalysable(format!("sets {base}, which changes what the commands run"));
    } else if !is_harmless_value(base, value) {
        an.needs_approval(not_harmless(&format!(
            "gives the commands it runs the variable {base}"
        )));
    }
}

/// `NAME=value command`: exported to the command, except `IFS=… read` (and `mapfile`),
/// where IFS only says how the builtin splits what it reads.
pub(crate) fn prefixed(an: &mut Analyzer, name: &str, value: Option<&str>, command: Option<&str>) {
    let splits_input = matches!(command, Some("read" | "mapfile" | "readarray"));
    if !(name == "IFS" && splits_input) {
        exported(an, name, value);
    }
}

/// `export NAME` or `declare -x NAME` without a value: exports whatever NAME holds or is
/// given later in the command line.
pub(crate) fn marked_exported(an: &mut Analyzer, name: &str) {
    an.exports.exported.insert(base_name(name).to_owned());
}

/// `unset NAME`, `env -u NAME`: a dangerous variable's absence changes what runs too
/// (`unset HOME` makes git skip the user's config for another's).
pub(crate) fn unset(an: &mut Analyzer, name: &str) {
    let base = base_name(name);
    if is_dangerous(base) {
        an.unanalysable(format!(
            "unsets {base}, which changes what the commands run"
        ));
    }
}

/// `declare -a NAME`, `declare -l NAME`: NAME keeps a value, but not as the programs had it.
pub(crate) fn changed(an: &mut Analyzer, name: &str) {
    let base = base_name(name);
    if is_dangerous(base) {
        an.unanalysable(format!(
            "changes {base}, which changes what the commands run"
        ));
    }
}

/// `set -a`, `set -o allexport`, `bash -a -c …`: every later assignment is exported.
pub(crate) fn allexport(an: &mut Analyzer, how: &str) {
    if an.exports.allexport.is_none() {
        an.exports.allexport = Some(how.to_owned());
    }
}

/// Judges the shell assignments that the command line exports after all: every one after
/// `set -a`, and those of names given to `export` alone.
pub(crate) fn judge_exports(an: &mut Analyzer) {
    let exports = std::mem::take(&mut an.exports);
    for name in &exports.assigned {
        if let Some(how) = &exports.allexport {
            an.needs_approval(not_harmless(&format!(
                "exports {name} to the commands it runs (after `{how}`)"
            )));
        } else if exports.exported.contains(name) {
            an.needs_approval(not_harmless(&format!(
                "exports {name} to the commands it runs"
            )));
        }
    }
    an.exports = exports;
}

fn not_harmless(what: &str) -> String {
    format!(
        "{what}, which is not known to be harmless: a program may read it to decide what to \
         run or read"
    )
}

/// The names in an arithmetic expression, by what Bash does with them.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ArithmeticNames {
    /// Assigned: `x=1`, `x+=2`, `x++`, `--x`, `a[i]=3`.
    pub(crate) assigned: Vec<String>,
    /// Read: their values are evaluated as arithmetic in turn (`x='HOME=1'; ((x))`).
    pub(crate) read: Vec<String>,
    /// Expanded where an assignment's target goes (`$x=1`, `${x}++`): the variable named by
    /// their value is assigned.
    pub(crate) through: Vec<String>,
}

/// Sorts the names in an arithmetic expression (as written, or with `${name}` standing for
/// a variable's value) into what Bash does with them.
pub(crate) fn arithmetic_names(text: &str) -> ArithmeticNames {
    let bytes = text.as_bytes();
    let mut names = ArithmeticNames::default();
    let mut index = 0;
    let mut after_step = false;
    while let Some(&c) = bytes.get(index) {
        if c.is_ascii_digit() {
            while bytes
                .get(index)
                .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'#' | b'@' | b'_'))
            {
                index += 1;
            }
            after_step = false;
            continue;
        }
        let expanded = c == b'$';
        let braced = expanded && bytes.get(index + 1) == Some(&b'{');
        let start = index + usize::from(expanded) + usize::from(braced);
        if bytes
            .get(start)
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        {
            let mut end = start;
            while bytes
                .get(end)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
            {
                end += 1;
            }
            let name = text.get(start..end).unwrap_or_default().to_owned();
            index = end + usize::from(braced && bytes.get(end) == Some(&b'}'));
            let assigns = after_step || assigns_next(text, index);
            match (expanded, assigns) {
                (false, true) => names.assigned.push(name.clone()),
                (true, true) => names.through.push(name.clone()),
                (_, false) => {}
            }
            names.read.push(name);
            after_step = false;
            continue;
        }
        let rest = text.get(index..).unwrap_or_default();
        if rest.starts_with("++") || rest.starts_with("--") {
            after_step = true;
            index += 2;
            continue;
        }
        if !c.is_ascii_whitespace() {
            after_step = false;
        }
        index += 1;
    }
    names
}

/// Whether what follows a name at `at` (after an optional subscript) assigns to it.
fn assigns_next(text: &str, at: usize) -> bool {
    let mut rest = text.get(at..).unwrap_or_default();
    if rest.starts_with('[')
        && let Some(close) = rest.find(']')
    {
        rest = rest.get(close + 1..).unwrap_or_default();
    }
    let next = rest.trim_start();
    next.starts_with("++")
        || next.starts_with("--")
        || (next.starts_with('=') && !next.starts_with("=="))
        || ["+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "<<=", ">>="]
            .iter()
            .any(|op| next.starts_with(op))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_assignments_are_found() {
        let assigned = |text: &str| arithmetic_names(text).assigned;
        assert_eq!(assigned("HOME=1"), ["HOME"]);
        assert_eq!(assigned("a == b"), Vec::<String>::new());
        assert_eq!(assigned("x <= 3 || y != 2"), Vec::<String>::new());
        assert_eq!(assigned("i++ + ++j"), ["i", "j"]);
        assert_eq!(assigned("a[2] += 3, b <<= 1"), ["a", "b"]);
        assert_eq!(assigned("1 ? x : (y = 2)"), ["y"]);
        assert_eq!(assigned("0x1f + 16#ff"), Vec::<String>::new());
        assert_eq!(arithmetic_names("${n} + m").read, ["n", "m"]);
        assert_eq!(arithmetic_names("${n}++ + $m=2").through, ["n", "m"]);
        assert_eq!(arithmetic_names("$n + 1").through, Vec::<String>::new());
    }

    #[test]
    fn only_names_that_look_inherited_count() {
        assert!(may_be_inherited("TMPDIR"));
        assert!(may_be_inherited("X1"));
        assert!(may_be_inherited("https_proxy"));
        assert!(!may_be_inherited("x"));
        assert!(!may_be_inherited("myVar"));
        assert!(!may_be_inherited("_1"));
    }
}
