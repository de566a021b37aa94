//! `find`: every option, test, action and operator read against GNU find's full list, each
//! with the number of arguments it takes, so that the expression is read as find reads it;
//! anything not on the list is not read-only. Its start paths are read; `-exec` and friends
//! run commands (a command that does more than read, run on every file found, is
//! destructive), `-delete` removes what it finds and `-fprint` and friends write a file (both
//! destructive), `-newer FILE` and friends read a file, `-files0-from` takes its start paths
//! from a file (known only at run time), and `-L`/`-follow` walk through links, which are
//! looked for at analysis time.

use super::BashVerdict;
use super::classify::{Analyzer, Site};
use super::links::{self, Access};
use super::paths::Resolved;
use super::runners::NO_STDIN;
use super::word::Word;

/// What one primary of the expression is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Primary {
    /// An option or operator, always true: it filters nothing.
    Option,
    /// A test (it selects files), with how many arguments it takes.
    Test(usize),
    /// A test whose argument is a file it reads (`-newer FILE`).
    ReadsFile,
    /// An option that takes an argument and filters nothing (`-maxdepth 2`).
    Setting,
    /// Prints, with how many arguments (`-printf FORMAT`).
    Prints(usize),
    /// Writes its first argument (`-fprint FILE`), with how many arguments in all.
    Writes(usize),
    /// Runs a command up to `;` or `{} +`.
    Runs,
    Delete,
    Follow,
    /// `-files0-from FILE`: the start paths are read from the file.
    StartsFrom,
}

/// GNU find 4.9's primaries (and `-d`, the BSD name of `-depth`).
fn primary(name: &str) -> Option<Primary> {
    use Primary::*;
    Some(match name {
        "(" | ")" | "!" | "," | "-not" | "-a" | "-and" | "-o" | "-or" => Option,
        "-depth"
        | "-d"
        | "-xdev"
        | "-mount"
        | "-noleaf"
        | "-ignore_readdir_race"
        | "-noignore_readdir_race"
        | "-daystart"
        | "-warn"
        | "-nowarn"
        | "-help"
        | "--help"
        | "-version"
        | "--version"
        | "-prune"
        | "-quit"
        | "-true" => Option,
        "-maxdepth" | "-mindepth" | "-regextype" => Setting,
        "-follow" => Follow,
        "-files0-from" => StartsFrom,
        "-empty" | "-false" | "-nouser" | "-nogroup" | "-readable" | "-writable"
        | "-executable" => Test(0),
        "-amin" | "-atime" | "-cmin" | "-ctime" | "-mmin" | "-mtime" | "-used" | "-context"
        | "-fstype" | "-gid" | "-uid" | "-group" | "-user" | "-ilname" | "-lname" | "-iname"
        | "-name" | "-inum" | "-ipath" | "-path" | "-iwholename" | "-wholename" | "-iregex"
        | "-regex" | "-links" | "-perm" | "-size" | "-type" | "-xtype" => Test(1),
        "-newer" | "-anewer" | "-cnewer" | "-samefile" => ReadsFile,
        "-print" | "-print0" | "-ls" => Prints(0),
        "-printf" => Prints(1),
        "-fprint" | "-fprint0" | "-fls" => Writes(1),
        "-fprintf" => Writes(2),
        "-exec" | "-execdir" | "-ok" | "-okdir" => Runs,
        "-delete" => Delete,
        _ => return newer_xy(name),
    })
}

/// `-newerXY`: X and Y are `a`, `B`, `c`, `m` or `t` (X not `t`); the argument is a time
/// when Y is `t`, else a file whose time is read.
fn newer_xy(name: &str) -> Option<Primary> {
    let rest = name.strip_prefix("-newer")?;
    let mut letters = rest.chars();
    let (x, y) = (letters.next()?, letters.next()?);
    if letters.next().is_some() || !"aBcm".contains(x) || !"aBcmt".contains(y) {
        return None;
    }
    Some(if y == 't' {
        Primary::Test(1)
    } else {
        Primary::ReadsFile
    })
}

/// `find [-H|-L|-P] [-D opts] [-Olevel] [start…] [expression]`.
pub(crate) fn judge(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let mut index = 0;
    // The last of `-H`, `-L` and `-P` wins; `-L` (or `-follow`) follows every link met.
    let mut follows = false;
    while let Some(text) = args.get(index).and_then(Word::literal) {
        match text.as_str() {
            "-H" | "-L" | "-P" => follows = text == "-L",
            "-D" => index += 1,
            // BSD find's (macOS): extended regexes, warnings, sorted, one file system.
            "-E" | "-X" | "-s" | "-x" => {}
            // BSD find's `-f PATH`: a start path.
            "-f" => {
                if let Some(start) = args.get(index + 1) {
                    an.read_path(start, site);
                }
                index += 1;
            }
            _ if text.starts_with("-O") && text[2..].chars().all(|c| c.is_ascii_digit()) => {}
            _ => break,
        }
        index += 1;
    }
    let mut starts = Vec::new();
    while let Some(word) = args.get(index) {
        let prefix = word.literal_prefix();
        if prefix.starts_with('-') || matches!(prefix.as_str(), "(" | "!" | ",") {
            break;
        }
        starts.push(word.clone());
        index += 1;
    }
    let mut filtered = false;
    let mut deletes = false;
    let mut files0 = false;
    while let Some(word) = args.get(index) {
        index += 1;
        let Some(text) = word.literal() else {
            an.unanalysable(format!(
                "`find {}`: the expression is not known until run time",
                word.display()
            ));
            continue;
        };
        let Some(kind) = primary(&text) else {
            an.needs_approval(format!(
                "`find {text}` is not a part of find's expression cairn knows to be harmless"
            ));
            continue;
        };
        let takes = match kind {
            Primary::Option | Primary::Test(0) | Primary::Prints(0) => 0,
            Primary::Test(count) | Primary::Prints(count) | Primary::Writes(count) => count,
            Primary::Setting | Primary::ReadsFile | Primary::StartsFrom => 1,
            Primary::Runs | Primary::Delete | Primary::Follow => 0,
        };
        let values = args.get(index..index + takes);
        if takes > 0 && values.is_none() {
            an.needs_approval(format!("`find {text}` is missing its argument"));
            break;
        }
        let first = values.and_then(|values| values.first());
        index += takes;
        match kind {
            Primary::Option | Primary::Setting | Primary::Prints(_) => {}
            Primary::Test(_) => filtered = true,
            Primary::ReadsFile => {
                filtered = true;
                if let Some(file) = first {
                    an.read_path(file, site);
                }
            }
            Primary::Writes(_) => {
                if let Some(file) = first {
                    an.destructive(format!(
                        "find {text} writes the list of files found to {}",
                        file.display()
                    ));
                    an.write_path(file, site);
                }
            }
            Primary::Runs => index = exec(an, &text, args, index, site),
            Primary::Delete => deletes = true,
            Primary::Follow => follows = true,
            Primary::StartsFrom => {
                files0 = true;
                if let Some(file) = first {
                    an.read_path(file, site);
                }
                an.unanalysable(
                    "find -files0-from reads its start paths from a file, known only at run time",
                );
            }
        }
    }
    if starts.is_empty() && !files0 {
        starts.push(Word::unquoted("."));
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
    if files0 && deletes {
        an.destructive("find -delete removes files under start paths known only at run time");
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

/// `-exec COMMAND ;` or `-exec COMMAND {} +` (a `+` ends it only right after `{}`): judges
/// the command and returns the index after the terminator.
fn exec(an: &mut Analyzer, action: &str, args: &[Word], mut index: usize, site: Site<'_>) -> usize {
    let mut inner: Vec<Word> = Vec::new();
    let mut terminated = false;
    while let Some(part) = args.get(index) {
        index += 1;
        let text = part.literal();
        let after_braces = inner
            .last()
            .and_then(Word::literal)
            .is_some_and(|last| last == "{}");
        match text.as_deref() {
            Some(";") => {
                terminated = true;
                break;
            }
            Some("+") if after_braces => {
                terminated = true;
                break;
            }
            _ => inner.push(part.clone()),
        }
    }
    if !terminated {
        an.needs_approval(format!("find {action} is missing its `;` or `{{}} +`"));
    }
    let shown = inner.first().map(Word::display).unwrap_or_default();
    an.needs_approval(format!("find {action} runs `{shown}` on each file found"));
    an.record(&inner);
    let part = an.judge_part(
        &inner,
        Site {
            stdin: &NO_STDIN,
            extra_args: true,
            ..site
        },
    );
    // Whatever is more than reading, done to every file found (or to files the names found
    // point to), is beyond what a rule for `find` can vouch for.
    if part > BashVerdict::ReadOnly {
        an.destructive(format!(
            "find {action} runs `{shown}`, which is not read-only, on every file found"
        ));
    }
    index
}

#[cfg(all(test, feature = "interop"))]
mod interop {
    use super::primary;

    /// Every `-word` in `find --help` (tests, actions, options, operators) is on the list.
    #[test]
    fn the_list_has_every_primary_gnu_find_lists() {
        let output = std::process::Command::new("find")
            .arg("--help")
            .output()
            .expect("run find --help");
        let text = String::from_utf8_lossy(&output.stdout);
        let body = text
            .split("Valid arguments for -D")
            .next()
            .unwrap_or_default();
        let mut missing = Vec::new();
        let mut listed = 0;
        for token in body.split(|c: char| c.is_whitespace() || c == '(' || c == ')') {
            let is_primary = token.len() > 2
                && token.starts_with('-')
                && token[1..]
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c == '0');
            listed += usize::from(is_primary);
            if is_primary && primary(token).is_none() && !["-and", "-or"].contains(&token) {
                missing.push(token.to_owned());
            }
        }
        assert_eq!(missing, Vec::<String>::new());
        assert!(listed > 50, "find --help listed only {listed} primaries");
    }
}
