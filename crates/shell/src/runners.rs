//! Commands that run other commands: wrappers (`sudo`, `env`, `timeout`, …), shells given a
//! script (`bash -c`, `sh < file`, `curl … | sh`), `eval`, `source`, `xargs`, `watch`, and
//! language interpreters. (`find -exec` is in `find`.)
//!
//! The wrapped command is listed as a simple command of its own and judged like any other.

use std::path::PathBuf;

use super::BashVerdict;
use super::classify::{Analyzer, Site, is_dangerous_variable};
use super::links::{self, Access};
use super::options::{OptionSpec, parse_args};
use super::parse::Stdin;
use super::word::Word;

/// The standard input of a command started by `xargs` or `find -exec`.
pub(crate) static NO_STDIN: Stdin = Stdin::Inherited;

const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox",
];

const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "deno",
    "Rscript",
    "osascript",
    "tclsh",
    "pwsh",
];

/// Judges `name` if it runs other commands; returns whether it did.
pub(crate) fn judge(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) -> bool {
    match name {
        "sudo" | "doas" => privileged(an, name, args, site),
        "env" => env(an, args, site),
        "command" => {
            let parsed = parse_args(args, stop_at_operand(&[]));
            if !parsed.has(&["-v", "-V"]) {
                wrapped(an, args, parsed.first_operand_index, site);
            }
        }
        "builtin" | "nohup" => wrapped(an, args, Some(0), site),
        "nice" => {
            let parsed = parse_args(args, stop_at_operand(&["-n", "--adjustment"]));
            wrapped(an, args, parsed.first_operand_index, site);
        }
        "time" => {
            let parsed = parse_args(args, stop_at_operand(&["-f", "--format", "-o", "--output"]));
            for output in parsed.values(&["-o", "--output"]) {
                an.write_path(output, site);
            }
            wrapped(an, args, parsed.first_operand_index, site);
        }
        "timeout" => {
            let parsed = parse_args(
                args,
                stop_at_operand(&["-s", "--signal", "-k", "--kill-after"]),
            );
            // The first operand is the duration.
            wrapped(
                an,
                args,
                parsed.first_operand_index.map(|index| index + 1),
                site,
            );
        }
        "stdbuf" => {
            let parsed = parse_args(
                args,
                stop_at_operand(&["-i", "-o", "-e", "--input", "--output", "--error"]),
            );
            wrapped(an, args, parsed.first_operand_index, site);
        }
        "ionice" => {
            let parsed = parse_args(
                args,
                stop_at_operand(&[
                    "-c",
                    "-n",
                    "-p",
                    "-P",
                    "-u",
                    "--class",
                    "--classdata",
                    "--pid",
                    "--pgid",
                    "--uid",
                ]),
            );
            if parsed.has(&["-p", "-P", "-u", "--pid", "--pgid", "--uid"]) {
                an.needs_approval("`ionice` changes the priority of other processes");
            }
            wrapped(an, args, parsed.first_operand_index, site);
        }
        "setsid" | "exec" => {
            let parsed = parse_args(args, stop_at_operand(&["-a"]));
            wrapped(an, args, parsed.first_operand_index, site);
        }
        "xargs" => xargs(an, args, site),
        "find" => super::find::judge(an, args, site),
        "eval" => eval(an, args, site),
        "source" | "." => source(an, name, args, site),
        "watch" => watch(an, args, site),
        _ if SHELLS.contains(&name) => shell(an, name, args, site),
        _ if is_interpreter(name) => interpreter(an, name, args, site),
        // Judged further as commands this analysis does not know.
        "npm" | "pnpm" | "yarn" | "bun" => {
            package_scripts(an, name, args);
            return false;
        }
        "tar" | "gtar" | "bsdtar" => {
            tar(an, name, args, site);
            return false;
        }
        _ => return false,
    }
    true
}

/// Whether an environment variable configures git or a package manager, which can name a
/// program they run (`GIT_CONFIG_KEY_0=core.pager`, `npm_config_script_shell`).
pub(crate) fn configures_a_program(variable: &str) -> bool {
    variable.starts_with("GIT_CONFIG") || variable.to_ascii_lowercase().starts_with("npm_config_")
}

/// A package manager told which shell runs its scripts, or told to remember one, runs a
/// program of the caller's choosing for `npm test` and every script after it.
fn package_scripts(an: &mut Analyzer, name: &str, args: &[Word]) {
    /// Settings that name a program, or a file of settings or code, the package manager runs.
    const RUNS: &[&str] = &[
        "script-shell",
        "shell",
        "node-options",
        "userconfig",
        "globalconfig",
        "onload-script",
        "init-module",
        "editor",
        "git",
        "browser",
        "viewer",
        "prefix",
    ];
    for arg in args {
        let text = arg.literal_prefix();
        let Some(setting) = text.strip_prefix("--") else {
            continue;
        };
        let key = setting.split('=').next().unwrap_or_default();
        if RUNS.contains(&key) {
            an.destructive(format!(
                "{name} --{key} makes {name} run a program of the command's choosing"
            ));
        }
    }
    let words: Vec<String> = args.iter().map(Word::display).collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let setting = match words.as_slice() {
        ["config", "set", setting, ..] | ["set", setting, ..] => Some(*setting),
        _ => None,
    };
    let key = setting.map(|setting| setting.split('=').next().unwrap_or_default());
    if let Some(key) = key.filter(|key| RUNS.contains(key)) {
        an.destructive(format!(
            "{name} config set {key} makes every later {name} script run a program of the \
             command's choosing"
        ));
    }
}

/// `tar`: options that run a program for each file, or on the archive; `-h` follows links.
fn tar(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) {
    const RUNS: &[&str] = &[
        "--to-command",
        "--use-compress-program",
        "--info-script",
        "--new-volume-script",
        "--rsh-command",
        "--rmt-command",
    ];
    let mut follows = false;
    for (index, arg) in args.iter().enumerate() {
        let text = arg.literal_prefix();
        let option = text.split('=').next().unwrap_or_default();
        if RUNS.contains(&option) || matches!(option, "-I" | "-F") {
            an.destructive(format!("{name} {option} runs another program"));
        }
        if option == "--checkpoint-action" && text.contains("exec") {
            an.destructive(format!(
                "{name} --checkpoint-action=exec runs another program"
            ));
        }
        // `tar chf out.tar dir`: the first word may be letters without a dash.
        let short = text.strip_prefix('-').filter(|rest| !rest.starts_with('-'));
        let bundled = (index == 0).then_some(text.as_str()).filter(|first| {
            !first.starts_with('-') && first.chars().all(|c| c.is_ascii_alphabetic())
        });
        follows |= option == "--dereference"
            || short
                .or(bundled)
                .is_some_and(|letters| letters.contains('h'));
    }
    if follows {
        let starts: Vec<Word> = args
            .iter()
            .skip(1)
            .filter(|arg| !arg.literal_prefix().starts_with('-'))
            .cloned()
            .collect();
        links::follow(an, &format!("{name} -h"), &starts, site, Access::Reads);
    }
}

fn stop_at_operand<'a>(with_value: &'a [&'a str]) -> OptionSpec<'a> {
    OptionSpec {
        with_value,
        stop_at_operand: true,
    }
}

fn is_interpreter(name: &str) -> bool {
    INTERPRETERS.contains(&name)
        || name
            .strip_prefix("python")
            .is_some_and(|version| version.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Lists and judges the command that starts at `args[start]`, if there is one.
fn wrapped(an: &mut Analyzer, args: &[Word], start: Option<usize>, site: Site<'_>) {
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
    let with_value: &[&str] = if name == "doas" {
        &["-u", "-C"]
    } else {
        &[
            "-u",
            "-g",
            "-h",
            "-p",
            "-C",
            "-D",
            "-r",
            "-t",
            "-T",
            "-U",
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--close-from",
            "--chdir",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
        ]
    };
    let parsed = parse_args(args, stop_at_operand(with_value));
    match parsed.values(&["-u", "--user"]).next() {
        Some(user) => an.needs_approval(format!("runs as user {} via {name}", user.display())),
        None => an.needs_approval(format!("runs as root via {name}")),
    }
    if parsed.has(&["-e", "--edit"]) {
        an.needs_approval(format!("edits files as root via {name}"));
        return;
    }
    if parsed.first_operand_index.is_none() && parsed.has(&["-s", "-i", "--shell", "--login"]) {
        an.needs_approval(format!("opens a root shell via {name}"));
    }
    wrapped(an, args, parsed.first_operand_index, site);
}

fn env(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = parse_args(
        args,
        stop_at_operand(&["-u", "--unset", "-C", "--chdir", "-S", "--split-string"]),
    );
    if let Some(split) = parsed.values(&["-S", "--split-string"]).next() {
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
    let chdir = parsed.values(&["-C", "--chdir"]).next().cloned();
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

fn xargs(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = parse_args(
        args,
        stop_at_operand(&[
            "-a",
            "--arg-file",
            "-E",
            "--eof",
            "-I",
            "--replace",
            "-L",
            "--max-lines",
            "-n",
            "--max-args",
            "-P",
            "--max-procs",
            "-s",
            "--max-chars",
            "-d",
            "--delimiter",
            "--process-slot-var",
        ]),
    );
    for file in parsed.values(&["-a", "--arg-file"]) {
        an.read_path(file, site);
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

fn eval(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    an.needs_approval("eval runs its arguments as a command");
    match args.iter().map(Word::literal).collect::<Option<Vec<_>>>() {
        Some(texts) => an.analyze_nested(&texts.join(" "), site),
        None => {
            if let Some(downloader) = args.iter().find_map(|arg| an.downloader_in_word(arg, site)) {
                an.destructive(format!("eval runs a script downloaded by {downloader}"));
            }
            let unknown = args
                .iter()
                .find_map(Word::first_unknown)
                .unwrap_or_default();
            an.needs_approval(format!(
                "eval runs text not known until run time ({unknown})"
            ));
        }
    }
}

fn source(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) {
    let Some(file) = args.first() else {
        return;
    };
    if let Some(downloader) = an.downloader_in_word(file, site) {
        an.destructive(format!("{name} runs a script downloaded by {downloader}"));
    }
    an.needs_approval(format!("{name} runs the commands in {}", file.display()));
    an.read_path(file, site);
}

fn watch(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = parse_args(
        args,
        stop_at_operand(&["-n", "--interval", "-q", "--equexit", "--differences"]),
    );
    let inner = parsed.operands.as_slice();
    an.needs_approval(format!(
        "watch runs `{}` repeatedly",
        inner
            .iter()
            .map(Word::display)
            .collect::<Vec<_>>()
            .join(" ")
    ));
    if parsed.has(&["-x", "--exec"]) {
        an.record(inner);
        an.judge_argv(inner, site);
        return;
    }
    match inner.iter().map(Word::literal).collect::<Option<Vec<_>>>() {
        Some(texts) => an.analyze_nested(&texts.join(" "), site),
        None => an.needs_approval("watch runs a command line not known until run time"),
    }
}

/// `sh -c '…'`, `bash script.sh`, `bash < file`, `curl … | sh`.
fn shell(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) {
    let mut args = args;
    if name == "busybox" {
        // `busybox sh …` runs the applet named first; only its shells are handled here.
        match args.first().and_then(Word::literal) {
            Some(applet) if SHELLS.contains(&applet.as_str()) && applet != "busybox" => {
                args = args.get(1..).unwrap_or_default();
            }
            _ => {
                an.not_read_only(name);
                return;
            }
        }
    }
    let mut index = 0;
    let mut command_string = false;
    let mut reads_stdin = false;
    while let Some(text) = args.get(index).and_then(Word::literal) {
        if text == "--" || text == "-" {
            reads_stdin |= text == "-";
            index += 1;
            break;
        }
        if text.starts_with("--") {
            index += if text == "--rcfile" || text == "--init-file" {
                2
            } else {
                1
            };
            continue;
        }
        if text == "-o" || text == "+o" || text == "-O" || text == "+O" {
            index += 2;
            continue;
        }
        if text.len() > 1 && (text.starts_with('-') || text.starts_with('+')) {
            command_string |= text.contains('c');
            reads_stdin |= text.contains('s');
            index += 1;
            continue;
        }
        break;
    }
    let rest = args.get(index..).unwrap_or_default();
    if command_string {
        let Some(script) = rest.first() else {
            an.needs_approval(format!("{name} -c is missing its command"));
            return;
        };
        match script.literal() {
            Some(text) => an.analyze_nested(&text, site),
            None => {
                if let Some(downloader) = an.downloader_in_word(script, site) {
                    an.destructive(format!("{name} runs a script downloaded by {downloader}"));
                }
                an.needs_approval(format!(
                    "{name} -c runs a command line not known until run time ({})",
                    script.first_unknown().unwrap_or_default()
                ));
            }
        }
        return;
    }
    if let (Some(script), false) = (rest.first(), reads_stdin) {
        if let Some(downloader) = an.downloader_in_word(script, site) {
            an.destructive(format!("{name} runs a script downloaded by {downloader}"));
        }
        an.needs_approval(format!("{name} runs the script {}", script.display()));
        an.read_path(script, site);
        return;
    }
    stdin_program(an, name, "commands", site);
}

/// A shell or interpreter reading its program from standard input.
fn stdin_program(an: &mut Analyzer, name: &str, what: &str, site: Site<'_>) {
    if let Some(downloader) = an.downloader_upstream(site) {
        an.destructive(format!("pipes a download from {downloader} into {name}"));
        return;
    }
    if let Stdin::File(file) = site.stdin {
        an.needs_approval(format!("{name} runs the {what} in {}", file.display()));
        return;
    }
    if what == "commands"
        && let Some(text) = an.stdin_text(site)
    {
        an.analyze_nested(&text, site);
        return;
    }
    match site.stdin {
        Stdin::Inherited => an.needs_approval(format!("`{name}` runs {what} read from its input")),
        Stdin::Piped { .. } | Stdin::Heredoc { .. } | Stdin::HereString(_) | Stdin::File(_) => {
            an.needs_approval(format!(
                "{name} runs {what} read from its input, not known until run time"
            ));
        }
    }
}

fn interpreter(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) {
    let literals: Vec<Option<String>> = args.iter().map(Word::literal).collect();
    let module = literals
        .iter()
        .position(|arg| arg.as_deref() == Some("-m"))
        .and_then(|index| literals.get(index + 1..))
        .unwrap_or_default();
    if let [Some(module), Some(action), ..] = module
        && module == "pip"
        && matches!(action.as_str(), "install" | "download" | "wheel")
    {
        an.uses_network(&format!("pip {action}"));
    }
    let has_program = args.iter().any(|arg| {
        arg.literal().is_none_or(|text| {
            !text.starts_with('-') || matches!(text.as_str(), "-c" | "-e" | "-E" | "-m" | "-r")
        })
    });
    if !has_program {
        stdin_program(an, name, "a program", site);
        return;
    }
    an.needs_approval(format!("`{name}` runs a program that can do anything"));
    for arg in args {
        an.argument_path(name, arg, site);
    }
}
