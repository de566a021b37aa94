//! What ordinary commands do: the commands that change nothing, the files each command
//! writes, and the dispatch to the other tables: read-only file tools in `readers`, network
//! tools in `network`, known disasters in `destructive`, git in `git`. Commands that run other
//! commands are in `runners`.

use super::classify::{Analyzer, Site};
use super::options::{OptionSpec, judge_options, parse, parse_args};
use super::word::Word;
use super::{destructive, git, network, readers, tables};

/// Commands that touch no files and change nothing (their redirections are judged apart).
const PURE: &[&str] = &[
    "echo", "printf", "true", "false", ":", "pwd", "whoami", "id", "uname", "sleep", "which",
    "type", "basename", "dirname", "realpath", "readlink", "test", "[", "[[", "seq", "yes", "expr",
    "nproc", "arch", "tty", "groups", "users", "who", "w", "uptime", "locale", "getconf",
    "printenv", "cal", "dirs", "jobs", "wait", "exit", "return", "set", "shopt", "read", "shift",
    "let", "ps", "free", "numfmt", "factor", "whereis", "whatis", "apropos", "logname", "popd",
    "hash", "times", "umask", "tr",
];

/// Judges a command that does not run other commands.
pub(crate) fn judge(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) {
    if let Some(what) = network::network_use(name, args) {
        an.uses_network(&what);
    }
    if destructive::machine(an, name, args) {
        return;
    }
    if PURE.contains(&name) {
        return;
    }
    match name {
        "git" => git::judge(an, args, site),
        "cd" | "pushd" => {
            let parsed = parse_args(args, OptionSpec::default());
            match parsed.operands.first() {
                Some(dir) => an.read_path(dir, site),
                None => an.read_path(&Word::unquoted("~"), site),
            }
        }
        "date" | "hostname" => {
            let Some(table) = tables::table(name) else {
                return;
            };
            let parsed = parse(args, table);
            judge_options(an, name, &parsed, site);
            // `date MMDDhhmm` and `hostname NAME` set the clock and the host name.
            let sets = parsed
                .operands
                .iter()
                .any(|operand| name == "hostname" || !operand.literal_prefix().starts_with('+'));
            if sets {
                an.needs_approval(if name == "date" {
                    "`date` sets the system clock"
                } else {
                    "`hostname NAME` sets the host name"
                });
            }
        }
        "alias" => {
            if args.iter().any(|arg| arg.literal_prefix().contains('=')) {
                an.needs_approval("`alias` defines a command");
            }
        }
        "rm" => destructive::rm(an, args, site),
        "mv" => destructive::mv(an, args, site),
        "chmod" | "chown" | "chgrp" => destructive::change_owner_or_mode(an, name, args, site),
        "dd" => destructive::dd(an, args, site),
        "kill" => destructive::kill(an, args, site),
        "cp" | "install" => copy(an, name, args, site),
        "ln" => link(an, args, site),
        "touch" | "mkdir" | "rmdir" | "unlink" | "shred" | "truncate" => {
            let parsed = parse_args(
                args,
                OptionSpec {
                    with_value: &[
                        "-m",
                        "--mode",
                        "-s",
                        "--size",
                        "-r",
                        "--reference",
                        "-d",
                        "--date",
                        "-t",
                        "-n",
                        "--iterations",
                    ],
                    stop_at_operand: false,
                },
            );
            for reference in parsed.values(&["-r", "--reference"]) {
                an.read_path(reference, site);
            }
            let verb = if matches!(name, "rmdir" | "unlink") {
                "removes"
            } else {
                "writes to"
            };
            for operand in &parsed.operands {
                an.write_path_as(operand, site, verb);
            }
            if parsed.operands.is_empty() || site.extra_args {
                an.needs_approval(format!("`{name}` changes files named only at run time"));
            }
        }
        "tee" => {
            let parsed = parse_args(args, OptionSpec::default());
            for operand in &parsed.operands {
                an.write_path(operand, site);
            }
        }
        "awk" | "gawk" | "mawk" | "nawk" => super::scripts::awk(an, name, args, site),
        _ if network::judge(an, name, args, site) || readers::judge(an, name, args, site) => {}
        _ => {
            an.not_read_only(name);
            for arg in args {
                an.argument_path(name, arg, site);
            }
        }
    }
}

fn copy(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) {
    let parsed = parse_args(
        args,
        OptionSpec {
            with_value: &[
                "-t",
                "--target-directory",
                "-S",
                "--suffix",
                "-m",
                "--mode",
                "-o",
                "--owner",
                "-g",
                "--group",
            ],
            stop_at_operand: false,
        },
    );
    let targets: Vec<&Word> = parsed.values(&["-t", "--target-directory"]).collect();
    let (sources, destination) = match (targets.first(), parsed.operands.split_last()) {
        (Some(target), _) => (parsed.operands.as_slice(), Some(*target)),
        (None, Some((last, sources))) => (sources, Some(last)),
        (None, None) => (&[][..], None),
    };
    for source in sources {
        an.read_path(source, site);
    }
    if parsed.has(&["-L", "--dereference"])
        && parsed.has(&["-r", "-R", "--recursive", "-a", "--archive"])
    {
        super::links::follow(an, "cp -L", sources, site, super::links::Access::Reads);
    }
    match destination {
        Some(destination) => an.write_path(destination, site),
        None => an.not_read_only(name),
    }
    if site.extra_args {
        an.needs_approval(format!("`{name}` copies files named only at run time"));
    }
}

fn link(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = parse_args(
        args,
        OptionSpec {
            with_value: &["-t", "--target-directory", "-S", "--suffix"],
            stop_at_operand: false,
        },
    );
    match parsed.operands.split_last() {
        Some((last, targets)) if !targets.is_empty() => {
            for target in targets {
                an.read_path(target, site);
            }
            an.write_path(last, site);
        }
        Some((only, _)) => {
            an.read_path(only, site);
            an.not_read_only("ln");
        }
        None => an.not_read_only("ln"),
    }
}
