//! `find`: its start paths are read; `-exec` and friends run commands (a command that does
//! more than read, run on every file found, is destructive), `-delete` removes what it finds
//! and `-fprint` writes a file (both destructive), and `-L`/`-follow` walk through links, which
//! are looked for at analysis time.

use super::BashVerdict;
use super::classify::{Analyzer, Site};
use super::links::{self, Access};
use super::paths::Resolved;
use super::runners::NO_STDIN;
use super::word::Word;

/// `find`'s actions that run commands, delete, or write files; its start paths are reads.
pub(crate) fn judge(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    const GLOBAL: &[&str] = &[
        "-depth",
        "-d",
        "-xdev",
        "-mount",
        "-follow",
        "-noleaf",
        "-ignore_readdir_race",
        "-noignore_readdir_race",
        "-daystart",
        "-warn",
        "-nowarn",
        "-print",
        "-print0",
        "-ls",
        "-prune",
        "-quit",
    ];
    const WITH_VALUE: &[&str] = &[
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-lname",
        "-ilname",
        "-type",
        "-xtype",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-newer",
        "-anewer",
        "-cnewer",
        "-perm",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-links",
        "-inum",
        "-samefile",
        "-used",
        "-fstype",
        "-context",
        "-maxdepth",
        "-mindepth",
        "-regextype",
        "-printf",
        "-newermt",
        "-newerct",
        "-newerat",
    ];
    let mut index = 0;
    // The last of `-H`, `-L` and `-P` wins; `-L` (or `-follow`) follows every link met.
    let mut follows = false;
    while let Some(text) = args.get(index).and_then(Word::literal) {
        match text.as_str() {
            "-H" | "-L" | "-P" => {
                follows = text == "-L";
                index += 1;
            }
            "-D" => index += 2,
            _ if text.starts_with("-O") => index += 1,
            _ => break,
        }
    }
    let mut starts = Vec::new();
    while let Some(word) = args.get(index) {
        let text = word.literal().unwrap_or_default();
        if text.starts_with('-') || text == "(" || text == "!" || text == "," {
            break;
        }
        starts.push(word.clone());
        index += 1;
    }
    if starts.is_empty() {
        starts.push(Word::unquoted("."));
    }
    let mut filtered = false;
    let mut deletes = false;
    while let Some(word) = args.get(index) {
        index += 1;
        let text = word.literal().unwrap_or_default();
        match text.as_str() {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let mut inner = Vec::new();
                while let Some(part) = args.get(index) {
                    index += 1;
                    match part.literal().as_deref() {
                        Some(";" | "+") => break,
                        _ => inner.push(part.clone()),
                    }
                }
                let shown = inner.first().map(Word::display).unwrap_or_default();
                an.needs_approval(format!("find {text} runs `{shown}` on each file found"));
                an.record(&inner);
                let part = an.judge_part(
                    &inner,
                    Site {
                        stdin: &NO_STDIN,
                        extra_args: true,
                        ..site
                    },
                );
                // Whatever is more than reading, done to every file found (or to files the
                // names found point to), is beyond what a rule for `find` can vouch for.
                if part > BashVerdict::ReadOnly {
                    an.destructive(format!(
                        "find {text} runs `{shown}`, which is not read-only, on every file found"
                    ));
                }
            }
            "-delete" => deletes = true,
            "-follow" => follows = true,
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                if let Some(file) = args.get(index) {
                    an.destructive(format!(
                        "find {text} writes the list of files found to {}",
                        file.display()
                    ));
                    an.write_path(file, site);
                }
                index += if text == "-fprintf" { 2 } else { 1 };
            }
            "-newer" | "-anewer" | "-cnewer" | "-samefile" => {
                if let Some(file) = args.get(index) {
                    an.read_path(file, site);
                }
                filtered = true;
                index += 1;
            }
            _ if WITH_VALUE.contains(&text.as_str()) || text.starts_with("-newer") => {
                if text != "-maxdepth"
                    && text != "-mindepth"
                    && text != "-regextype"
                    && text != "-printf"
                {
                    filtered = true;
                }
                index += 1;
            }
            _ if GLOBAL.contains(&text.as_str()) => {}
            _ => filtered = true,
        }
    }
    for start in &starts {
        an.read_path(start, site);
        if !deletes {
            continue;
        }
        let protected = match an.places.resolve(start, site.cwd) {
            Resolved::Path(path) => an.places.protected(&path),
            Resolved::Stream | Resolved::Unknown(_) => None,
        };
        match protected {
            Some(protected) if !filtered => an.destructive(format!(
                "find -delete with no filter removes everything in {}",
                protected.describe()
            )),
            _ => an.destructive(format!(
                "find -delete removes every file it matches under {}",
                start.display()
            )),
        }
        an.write_path_as(start, site, "deletes files in");
    }
    if follows {
        let access = if deletes {
            Access::Writes
        } else {
            Access::Reads
        };
        links::follow(an, "find -L", &starts, site, access);
    }
}
