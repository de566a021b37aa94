//! Wrappers: commands that run the command given after their own options and operands
//! (`sudo`, `env`, `timeout 5`, `nice -n 10`, `flock FILE`, …). Each reads its arguments
//! against its full table of options, in POSIX order (the options end at the first operand),
//! so that the wrapped command is found where the wrapper finds it: `timeout --kill-a 5 10
//! rm` runs `rm`, not `10`. An option the table does not know makes the command not
//! read-only, and the wrapped command is still judged where it would be.

use std::path::PathBuf;

use crate::classify::{Analyzer, Site, is_dangerous_variable};
use crate::options::{
    LongMatch, Parsed, Table, flag, judge_options, optional, parse, value, writes,
};
use crate::word::Word;

/// A wrapper's table: options end at the first operand, long options by unambiguous prefix.
const fn posix(options: &'static [crate::options::OptDef]) -> Table {
    Table {
        options,
        long: LongMatch::Prefix,
        stop_at_operand: true,
        numeric: false,
    }
}

/// sudo 1.9 (`-h` alone is `--help`; `-hHOST` and `--host HOST` name a host).
const SUDO: Table = posix(&[
    flag(&["-A", "--askpass"]),
    value(&["-a", "--auth-type"]),
    flag(&["-B", "--bell"]),
    flag(&["-b", "--background"]),
    value(&["-C", "--close-from"]),
    value(&["-c", "--login-class"]),
    value(&["-D", "--chdir"]),
    optional(&["-E", "--preserve-env"]),
    flag(&["-e", "--edit"]),
    value(&["-g", "--group"]),
    flag(&["-H", "--set-home"]),
    optional(&["-h"]),
    value(&["--host"]),
    flag(&["--help"]),
    flag(&["-i", "--login"]),
    flag(&["-K", "--remove-timestamp"]),
    flag(&["-k", "--reset-timestamp"]),
    flag(&["-l", "--list"]),
    flag(&["-N", "--no-update"]),
    flag(&["-n", "--non-interactive"]),
    flag(&["-P", "--preserve-groups"]),
    value(&["-p", "--prompt"]),
    value(&["-R", "--chroot"]),
    value(&["-r", "--role"]),
    flag(&["-S", "--stdin"]),
    flag(&["-s", "--shell"]),
    value(&["-T", "--command-timeout"]),
    value(&["-t", "--type"]),
    value(&["-U", "--other-user"]),
    value(&["-u", "--user"]),
    flag(&["-V", "--version"]),
    flag(&["-v", "--validate"]),
]);

const DOAS: Table = posix(&[
    value(&["-C"]),
    flag(&["-L"]),
    flag(&["-n"]),
    flag(&["-s"]),
    value(&["-u"]),
]);

/// coreutils env (`-a`/`--argv0` from 9.2).
const ENV: Table = posix(&[
    value(&["-a", "--argv0"]),
    flag(&["-i", "--ignore-environment"]),
    flag(&["-0", "--null"]),
    value(&["-u", "--unset"]),
    value(&["-C", "--chdir"]),
    value(&["-S", "--split-string"]),
    optional(&["--block-signal"]),
    optional(&["--default-signal"]),
    optional(&["--ignore-signal"]),
    flag(&["--list-signal-handling"]),
    flag(&["-v", "--debug"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// Bash's `command` builtin.
const COMMAND: Table = Table {
    long: LongMatch::Exact,
    ..posix(&[flag(&["-p"]), flag(&["-v"]), flag(&["-V"])])
};

/// Bash's `exec` builtin.
const EXEC: Table = Table {
    long: LongMatch::Exact,
    ..posix(&[flag(&["-c"]), flag(&["-l"]), value(&["-a"])])
};

const NOHUP: Table = posix(&[flag(&["--help"]), flag(&["--version"])]);

const NICE: Table = Table {
    numeric: true,
    ..posix(&[
        value(&["-n", "--adjustment"]),
        flag(&["--help"]),
        flag(&["--version"]),
    ])
};

/// GNU time.
const TIME: Table = posix(&[
    flag(&["-a", "--append"]),
    value(&["-f", "--format"]),
    writes(&["-o", "--output"]),
    flag(&["-p", "--portability"]),
    flag(&["-q", "--quiet"]),
    flag(&["-v", "--verbose"]),
    flag(&["-h", "--help"]),
    flag(&["-V", "--version"]),
]);

const TIMEOUT: Table = posix(&[
    flag(&["--preserve-status"]),
    flag(&["--foreground"]),
    value(&["-k", "--kill-after"]),
    value(&["-s", "--signal"]),
    flag(&["-v", "--verbose"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

const STDBUF: Table = posix(&[
    value(&["-i", "--input"]),
    value(&["-o", "--output"]),
    value(&["-e", "--error"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

const IONICE: Table = posix(&[
    value(&["-c", "--class"]),
    value(&["-n", "--classdata"]),
    value(&["-p", "--pid"]),
    value(&["-P", "--pgid"]),
    value(&["-u", "--uid"]),
    flag(&["-t", "--ignore"]),
    flag(&["-h", "--help"]),
    flag(&["-V", "--version"]),
]);

const CHRT: Table = posix(&[
    flag(&["-a", "--all-tasks"]),
    flag(&["-b", "--batch"]),
    flag(&["-d", "--deadline"]),
    flag(&["-e", "--ext"]),
    flag(&["-f", "--fifo"]),
    flag(&["-i", "--idle"]),
    flag(&["-o", "--other"]),
    flag(&["-r", "--rr"]),
    flag(&["-R", "--reset-on-fork"]),
    value(&["-T", "--sched-runtime"]),
    value(&["-P", "--sched-period"]),
    value(&["-D", "--sched-deadline"]),
    flag(&["-m", "--max"]),
    flag(&["-p", "--pid"]),
    flag(&["-v", "--verbose"]),
    flag(&["-h", "--help"]),
    flag(&["-V", "--version"]),
]);

const TASKSET: Table = posix(&[
    flag(&["-a", "--all-tasks"]),
    flag(&["-p", "--pid"]),
    flag(&["-c", "--cpu-list"]),
    flag(&["-h", "--help"]),
    flag(&["-V", "--version"]),
]);

const SETSID: Table = posix(&[
    flag(&["-c", "--ctty"]),
    flag(&["-f", "--fork"]),
    flag(&["-w", "--wait"]),
    flag(&["-h", "--help"]),
    flag(&["-V", "--version"]),
]);

/// procps-ng 4 watch.
const WATCH: Table = posix(&[
    flag(&["-b", "--beep"]),
    flag(&["-c", "--color"]),
    flag(&["-C", "--no-color"]),
    optional(&["-d", "--differences"]),
    flag(&["-e", "--errexit"]),
    flag(&["-g", "--chgexit"]),
    value(&["-q", "--equexit"]),
    value(&["-n", "--interval"]),
    flag(&["-p", "--precise"]),
    flag(&["-r", "--no-rerun"]),
    flag(&["-t", "--no-title"]),
    flag(&["-w", "--no-wrap"]),
    flag(&["-x", "--exec"]),
    flag(&["-h", "--help"]),
    flag(&["-v", "--version"]),
]);

/// util-linux flock (its `-c COMMAND` comes after the file, not among the options).
const FLOCK: Table = posix(&[
    flag(&["-s", "--shared"]),
    flag(&["-x", "-e", "--exclusive"]),
    flag(&["-u", "--unlock"]),
    flag(&["-n", "--nb", "--nonblock"]),
    value(&["-w", "--wait", "--timeout"]),
    value(&["-E", "--conflict-exit-code"]),
    flag(&["-o", "--close"]),
    flag(&["-F", "--no-fork"]),
    flag(&["--verbose"]),
    flag(&["-h", "--help"]),
    flag(&["-V", "--version"]),
]);

/// Judges `name` if it is a wrapper; returns whether it was.
pub(crate) fn judge(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) -> bool {
    match name {
        "sudo" | "doas" => privileged(an, name, args, site),
        "env" => env(an, args, site),
        "command" => {
            let parsed = read(an, name, args, &COMMAND, site);
            if !parsed.has(&["-v", "-V"]) {
                wrapped(an, args, parsed.first_operand_index, site);
            }
        }
        "builtin" => wrapped(an, args, Some(0), site),
        "nohup" => simple(an, name, args, &NOHUP, 0, site),
        "nice" => simple(an, name, args, &NICE, 0, site),
        "time" => simple(an, name, args, &TIME, 0, site),
        // The first operand is the duration.
        "timeout" => simple(an, name, args, &TIMEOUT, 1, site),
        "stdbuf" => simple(an, name, args, &STDBUF, 0, site),
        "setsid" => simple(an, name, args, &SETSID, 0, site),
        "exec" => {
            let parsed = read(an, name, args, &EXEC, site);
            if parsed.has(&["-a"]) {
                an.unanalysable("`exec -a` renames the program it runs, which changes what a multi-call program does");
            }
            wrapped(an, args, parsed.first_operand_index, site);
        }
        "ionice" => {
            let parsed = read(an, name, args, &IONICE, site);
            if parsed.has(&["-p", "-P", "-u"]) {
                an.needs_approval("`ionice` changes the priority of other processes");
            } else {
                wrapped(an, args, parsed.first_operand_index, site);
            }
        }
        "chrt" | "taskset" => {
            let table = if name == "chrt" { &CHRT } else { &TASKSET };
            let parsed = read(an, name, args, table, site);
            if parsed.has(&["-p"]) {
                an.needs_approval(format!("`{name} -p` changes other processes"));
            } else if !parsed.has(&["-m"]) {
                // `chrt PRIORITY COMMAND`, `taskset MASK COMMAND`.
                let skip = usize::from(name == "taskset" || numeric(parsed.operands.first()));
                wrapped(an, args, parsed.first_operand_index.map(|i| i + skip), site);
            }
        }
        "watch" => watch(an, args, site),
        "flock" => flock(an, args, site),
        _ => return false,
    }
    true
}

fn numeric(word: Option<&Word>) -> bool {
    word.and_then(Word::literal)
        .is_some_and(|text| !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()))
}

/// Reads a wrapper's options against its table and judges them.
fn read(an: &mut Analyzer, name: &str, args: &[Word], table: &Table, site: Site<'_>) -> Parsed {
    let parsed = parse(args, table);
    judge_options(an, name, &parsed, site);
    parsed
}

/// A wrapper whose command starts `skip` operands after its options.
fn simple(
    an: &mut Analyzer,
    name: &str,
    args: &[Word],
    table: &Table,
    skip: usize,
    site: Site<'_>,
) {
    let parsed = read(an, name, args, table, site);
    wrapped(
        an,
        args,
        parsed.first_operand_index.map(|index| index + skip),
        site,
    );
}

/// Lists and judges the command that starts at `args[start]`, if there is one.
pub(super) fn wrapped(an: &mut Analyzer, args: &[Word], start: Option<usize>, site: Site<'_>) {
    let Some(inner) = start.and_then(|start| args.get(start..)) else {
        return;
    };
    if inner.is_empty() {
        return;
    }
    an.record(inner);
    an.judge_argv(inner, site);
}

fn privileged(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) {
    let table = if name == "doas" { &DOAS } else { &SUDO };
    let parsed = read(an, name, args, table, site);
    match parsed.values(&["-u"]).next() {
        Some(user) => an.needs_approval(format!("runs as user {} via {name}", user.display())),
        None => an.needs_approval(format!("runs as root via {name}")),
    }
    if parsed.has(&["-e"]) && name == "sudo" {
        an.needs_approval(format!("edits files as root via {name}"));
        return;
    }
    if parsed.first_operand_index.is_none() && parsed.has(&["-s", "-i"]) {
        an.needs_approval(format!("opens a root shell via {name}"));
    }
    if name == "sudo" && parsed.has(&["-R"]) {
        an.unanalysable("`sudo -R` runs the command under another root directory");
    }
    let dir: Option<PathBuf>;
    let site = match parsed.values(&["-D"]).next().filter(|_| name == "sudo") {
        Some(target) => {
            dir = an.places.change_dir(site.cwd, target);
            Site {
                cwd: dir.as_deref(),
                ..site
            }
        }
        None => site,
    };
    wrapped(an, args, parsed.first_operand_index, site);
}

fn env(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = read(an, "env", args, &ENV, site);
    if parsed.has(&["-a"]) {
        an.unanalysable("`env --argv0` renames the program it runs, which changes what a multi-call program does");
    }
    if let Some(split) = parsed.values(&["-S"]).next() {
        let rest = parsed
            .operands
            .iter()
            .map(Word::literal)
            .collect::<Option<Vec<_>>>();
        match (split.literal(), rest) {
            (Some(text), Some(rest)) => {
                let script = std::iter::once(text)
                    .chain(rest)
                    .collect::<Vec<_>>()
                    .join(" ");
                an.analyze_nested(&script, site);
            }
            _ => an.needs_approval("`env -S` runs a command line not known until run time"),
        }
        return;
    }
    let mut start = parsed.first_operand_index;
    while let Some(word) = start.and_then(|index| args.get(index)) {
        // A lone `-` is `-i`.
        if word.literal().as_deref() == Some("-") {
            start = start.map(|index| index + 1);
            continue;
        }
        let Some((variable, _)) = word
            .literal_prefix()
            .split_once('=')
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
        else {
            break;
        };
        // What runs under `env PATH=… ls` or `env GIT_CONFIG_KEY_0=core.pager …` cannot be
        // judged from the command's name.
        if is_dangerous_variable(&variable) {
            an.unanalysable(format!(
                "sets {variable}, which changes what the commands run"
            ));
        }
        start = start.map(|index| index + 1);
    }
    let chdir = parsed.values(&["-C"]).next().cloned();
    let dir: Option<PathBuf>;
    let site = match chdir {
        Some(target) => {
            an.read_path(&target, site);
            dir = an.places.change_dir(site.cwd, &target);
            Site {
                cwd: dir.as_deref(),
                ..site
            }
        }
        None => site,
    };
    wrapped(an, args, start, site);
}

fn watch(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = read(an, "watch", args, &WATCH, site);
    let inner = parsed.operands.as_slice();
    an.needs_approval(format!(
        "watch runs `{}` repeatedly",
        inner
            .iter()
            .map(Word::display)
            .collect::<Vec<_>>()
            .join(" ")
    ));
    if parsed.has(&["-x"]) {
        an.record(inner);
        an.judge_argv(inner, site);
        return;
    }
    match inner.iter().map(Word::literal).collect::<Option<Vec<_>>>() {
        Some(texts) => an.analyze_nested(&texts.join(" "), site),
        None => an.needs_approval("watch runs a command line not known until run time"),
    }
}

/// `flock FILE COMMAND…`, `flock FILE -c 'COMMAND'`, `flock FD`. The lock file is created
/// when it does not exist.
fn flock(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = read(an, "flock", args, &FLOCK, site);
    let Some(first) = parsed.first_operand_index else {
        return;
    };
    let Some(file) = args.get(first) else {
        return;
    };
    let Some(next) = args.get(first + 1) else {
        // `flock 9`: a descriptor the shell already opened.
        return;
    };
    an.write_path_as(file, site, "creates or locks");
    match next.literal().as_deref() {
        Some("-c" | "--command") => match args.get(first + 2).map(Word::literal) {
            Some(Some(text)) => an.analyze_nested(&text, site),
            _ => an.needs_approval("`flock -c` runs a command line not known until run time"),
        },
        _ => wrapped(an, args, Some(first + 1), site),
    }
}

#[cfg(all(test, feature = "interop"))]
mod interop {
    use super::*;
    use crate::runners::help::missing;

    #[test]
    fn the_tables_have_every_option_the_wrappers_list() {
        let cases: [(&Table, &str); 12] = [
            (&ENV, "env"),
            (&NOHUP, "nohup"),
            (&NICE, "nice"),
            (&TIME, "/usr/bin/time"),
            (&TIMEOUT, "timeout"),
            (&STDBUF, "stdbuf"),
            (&IONICE, "ionice"),
            (&CHRT, "chrt"),
            (&TASKSET, "taskset"),
            (&SETSID, "setsid"),
            (&WATCH, "watch"),
            (&FLOCK, "flock"),
        ];
        for (table, program) in cases {
            let mut missing = missing(table, program, &["--help"]);
            if program == "flock" {
                // `flock FILE -c COMMAND`: read after the file, not as an option.
                missing.retain(|name| name != "-c" && name != "--command");
            }
            assert_eq!(missing, Vec::<String>::new(), "{program}");
        }
    }
}
