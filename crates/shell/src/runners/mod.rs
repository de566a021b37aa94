//! Commands that run other commands: wrappers (`sudo`, `env`, `timeout`, …), shells given a
//! script (`bash -c`, `sh < file`, `curl … | sh`), `eval`, `source`, `xargs`, `watch`, and
//! language interpreters. (`find -exec` is in `find`.)
//!
//! The wrapped command is listed as a simple command of its own and judged like any other.

use super::classify::{Analyzer, Site};
use super::links::{self, Access};
use super::parse::Stdin;
use super::word::Word;

mod wrappers;
mod xargs;

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
    if wrappers::judge(an, name, args, site) {
        return true;
    }
    match name {
        "xargs" => xargs::judge(an, args, site),
        "find" => super::find::judge(an, args, site),
        "eval" => eval(an, args, site),
        "source" | "." => source(an, name, args, site),
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
        // npm's option parser expands any unambiguous abbreviation (`--script-sh`); an
        // ambiguous one it leaves alone, so taking every prefix errs only toward asking.
        if let Some(full) = RUNS.iter().find(|full| abbreviates(key, full, 2)) {
            let shown = if key == *full {
                format!("--{key}")
            } else {
                format!("--{key} (that is, --{full})")
            };
            an.destructive(format!(
                "{name} {shown} makes {name} run a program of the command's choosing"
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
        // GNU tar takes any unambiguous prefix of a long option (`--to-comm`); an ambiguous one
        // it refuses, so taking every prefix errs only toward asking.
        let long_runs = option.strip_prefix("--").is_some_and(|long| {
            RUNS.iter()
                .any(|full| abbreviates(long, full.trim_start_matches('-'), 3))
        });
        if long_runs || matches!(option, "-I" | "-F") {
            an.destructive(format!("{name} {option} runs another program"));
        }
        let checkpoint_action = option
            .strip_prefix("--")
            .is_some_and(|long| abbreviates(long, "checkpoint-action", 11));
        if checkpoint_action && text.contains("exec") {
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

/// Whether `written` (an option name without its dashes) is `full` or a prefix of it at least
/// `shortest` characters long.
fn abbreviates(written: &str, full: &str, shortest: usize) -> bool {
    written.len() >= shortest.min(full.len()) && full.starts_with(written)
}

fn is_interpreter(name: &str) -> bool {
    INTERPRETERS.contains(&name)
        || name
            .strip_prefix("python")
            .is_some_and(|version| version.chars().all(|c| c.is_ascii_digit() || c == '.'))
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

/// Reading a program's own `--help`, to check that a table has every option the program
/// lists (the interop suite: it needs the programs installed).
#[cfg(all(test, feature = "interop"))]
pub(crate) mod help {
    use crate::options::{Lookup, Table};

    /// The options a `--help` text lists: on each line that starts (after blanks) with `-`,
    /// every `--long` name and the leading `-x` letters.
    pub(crate) fn options(program: &str, args: &[&str]) -> Vec<String> {
        let output = std::process::Command::new(program)
            .args(args)
            .output()
            .unwrap_or_else(|error| panic!("run {program}: {error}"));
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        let mut found = Vec::new();
        for line in text.lines() {
            let trimmed = line.trim_start();
            if !trimmed.starts_with('-') {
                continue;
            }
            for token in trimmed.split(|c: char| c.is_whitespace() || c == ',' || c == '[') {
                let name: String = token
                    .split('=')
                    .next()
                    .unwrap_or_default()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                    .collect();
                let long = name.starts_with("--") && name.len() > 3;
                let short = name.len() == 2 && name.starts_with('-') && name != "--";
                if (long || short) && !found.contains(&name) {
                    found.push(name);
                }
            }
        }
        assert!(!found.is_empty(), "{program} listed no options: {text}");
        found
    }

    /// The options `program` lists that `table` does not have.
    pub(crate) fn missing(table: &Table, program: &str, args: &[&str]) -> Vec<String> {
        options(program, args)
            .into_iter()
            .filter(|name| !table.options.iter().any(|def| def.is(name)))
            .filter(|name| !matches!(table.lookup(name), Lookup::Found(def) if def.is(name)))
            .collect()
    }
}
