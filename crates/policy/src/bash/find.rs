//! `find`: its start paths are read; `-exec` and friends run commands, `-delete` removes
//! what it finds (everything, when nothing filters it), `-fprint` writes a file.

use super::classify::{Analyzer, Site};
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
    while let Some(text) = args.get(index).and_then(Word::literal) {
        match text.as_str() {
            "-H" | "-L" | "-P" => index += 1,
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
                an.judge_argv(
                    &inner,
                    Site {
                        stdin: &NO_STDIN,
                        extra_args: true,
                        ..site
                    },
                );
            }
            "-delete" => deletes = true,
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                if let Some(file) = args.get(index) {
                    an.write_path(file, site);
                }
                index += if text == "-fprintf" { 2 } else { 1 };
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
            _ => an.needs_approval("find -delete removes the files it finds"),
        }
        an.write_path_as(start, site, "deletes files in");
    }
}
