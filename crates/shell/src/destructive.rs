//! Commands whose known disasters are judged [`BashVerdict::Destructive`]: recursive removal
//! or permission changes of `/`, `~` or the workspace, formatting or overwriting disks,
//! signalling every process, and shutting the machine down.
//!
//! [`BashVerdict::Destructive`]: super::BashVerdict::Destructive

use super::classify::{Analyzer, Site};
use super::links::{self, Access};
use super::options::{OptionSpec, parse_args};
use super::paths::{Resolved, is_block_device, is_harmless_device};
use super::word::Word;

/// `rm`: every operand is removed; with `-r` on a protected directory it is a disaster.
pub(crate) fn rm(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = parse_args(args, OptionSpec::default());
    let written: Vec<String> = args
        .iter()
        .filter_map(Word::literal)
        .filter(|text| text.starts_with('-') && text != "--")
        .collect();
    let shown = std::iter::once("rm".to_owned())
        .chain(written)
        .collect::<Vec<_>>()
        .join(" ");
    if parsed.has(&["--no-preserve-root"]) {
        an.destructive("rm --no-preserve-root disables the safeguard against deleting /");
    }
    let recursive = parsed.has(&["-r", "-R", "--recursive"]);
    for operand in &parsed.operands {
        if recursive {
            match an.places.resolve(operand, site.cwd) {
                Resolved::Path(path) => {
                    if let Some(protected) = an.places.protected(&path) {
                        an.destructive(format!("{shown} on {}", protected.describe()));
                    }
                }
                Resolved::Unknown(unknown) => an.needs_approval(format!(
                    "{shown} on a path not known until run time ({unknown})"
                )),
                Resolved::Stream => {}
            }
        }
        an.write_path_as(operand, site, "removes");
    }
    if parsed.operands.is_empty() || site.extra_args {
        an.needs_approval(format!("{shown} removes files named only at run time"));
    }
}

/// `mv`: the sources disappear from where they were.
pub(crate) fn mv(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = parse_args(
        args,
        OptionSpec {
            with_value: &["-t", "--target-directory", "-S", "--suffix"],
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
        if let Resolved::Path(path) = an.places.resolve(source, site.cwd)
            && let Some(protected) = an.places.protected(&path)
        {
            an.destructive(format!("mv moves away {}", protected.describe()));
        }
        an.write_path_as(source, site, "moves");
    }
    if let Some(destination) = destination {
        an.write_path(destination, site);
    }
    if site.extra_args || destination.is_none() {
        an.needs_approval("`mv` moves files named only at run time");
    }
}

/// `chmod`, `chown`, `chgrp`: recursive on a protected directory is a disaster.
pub(crate) fn change_owner_or_mode(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) {
    let parsed = parse_args(
        args,
        OptionSpec {
            with_value: &["--reference", "--from"],
            stop_at_operand: false,
        },
    );
    let recursive = parsed.has(&["-R", "--recursive"]);
    let skip = usize::from(!parsed.has(&["--reference"]));
    let verb = if name == "chmod" {
        "changes the mode of"
    } else {
        "changes the owner of"
    };
    for reference in parsed.values(&["--reference"]) {
        an.read_path(reference, site);
    }
    for operand in parsed.operands.iter().skip(skip) {
        if recursive
            && let Resolved::Path(path) = an.places.resolve(operand, site.cwd)
            && let Some(protected) = an.places.protected(&path)
        {
            an.destructive(format!("recursive {name} of {}", protected.describe()));
        }
        an.write_path_as(operand, site, verb);
    }
    if parsed.operands.len() <= skip {
        an.needs_approval(format!("`{name}` {verb} files named only at run time"));
    }
    // `-R -L` changes whatever every link met leads to.
    if recursive && parsed.has(&["-L"]) {
        let targets = parsed.operands.get(skip..).unwrap_or_default();
        links::follow(an, &format!("{name} -RL"), targets, site, Access::Writes);
    }
}

/// `dd`: `if=` is read, `of=` is written; `of=` a device is a disaster.
pub(crate) fn dd(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    an.not_read_only("dd");
    for arg in args {
        let prefix = arg.literal_prefix();
        if let Some(file) = prefix.strip_prefix("if=").and(arg.without_prefix(3)) {
            an.read_path(&file, site);
        } else if let Some(file) = prefix.strip_prefix("of=").and(arg.without_prefix(3)) {
            if let Resolved::Path(path) = an.places.resolve(&file, site.cwd) {
                // Block devices are caught by `write_path`; any other device is no better.
                if path.starts_with("/dev") && !is_harmless_device(&path) && !is_block_device(&path)
                {
                    an.destructive(format!("dd writes to the device {}", path.display()));
                }
            }
            an.write_path(&file, site);
        }
    }
}

/// `kill`: signalling pid -1 reaches every process the user may signal.
pub(crate) fn kill(an: &mut Analyzer, args: &[Word], _site: Site<'_>) {
    let texts: Vec<Option<String>> = args.iter().map(Word::literal).collect();
    if let Some(Some(first)) = texts.first()
        && matches!(first.as_str(), "-l" | "-L" | "--list" | "--table")
    {
        return;
    }
    let mut signal_given = false;
    let mut index = 0;
    while let Some(text) = texts.get(index) {
        index += 1;
        let Some(text) = text else {
            continue;
        };
        if !signal_given {
            if matches!(text.as_str(), "-s" | "-n" | "--signal") {
                signal_given = true;
                index += 1;
                continue;
            }
            if text == "--" || (text.starts_with('-') && text.len() > 1) {
                signal_given = true;
                continue;
            }
        }
        if text == "-1" {
            an.destructive("kill -1 signals every process the user can reach");
        }
    }
    an.needs_approval("`kill` sends signals to processes");
}

/// Formatting, shutting down and other whole-machine commands; returns whether `name` is one.
pub(crate) fn machine(an: &mut Analyzer, name: &str, args: &[Word]) -> bool {
    let first = args.first().and_then(Word::literal).unwrap_or_default();
    if name.starts_with("mkfs")
        || matches!(name, "mke2fs" | "mkswap" | "wipefs" | "mkdosfs" | "mkntfs")
    {
        an.destructive(format!(
            "{name} formats a filesystem, erasing what was on the device"
        ));
    } else if matches!(name, "shutdown" | "reboot" | "halt" | "poweroff") {
        an.destructive(format!("{name} shuts down or restarts the machine"));
    } else if matches!(name, "init" | "telinit") && matches!(first.as_str(), "0" | "6") {
        an.destructive(format!("{name} {first} shuts down or restarts the machine"));
    } else if name == "systemctl"
        && matches!(
            first.as_str(),
            "poweroff" | "reboot" | "halt" | "kexec" | "soft-reboot" | "emergency" | "rescue"
        )
    {
        an.destructive(format!(
            "systemctl {first} shuts down or restarts the machine"
        ));
    } else {
        return false;
    }
    true
}
