//! Commands whose argument is a program in a small language of its own: sed scripts, awk
//! programs, jq filters. Such a command is read-only only when its program is parsed and
//! every command, function or statement in it is one that only reads and prints; the files
//! the program names are judged as reads or writes like any path, and a program read from a
//! file is code cairn cannot see at the time of the check (a program option, which no allow
//! rule for the command alone lifts).

mod awk;
mod jq;
mod sed;

use super::classify::{Analyzer, Site};
use super::word::Word;

/// `awk`, `gawk`, `mawk`, `nawk`: read-only when the program only reads its input and
/// prints.
pub(crate) fn awk(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) {
    awk::judge(an, name, args, site);
}

/// `sed`: read-only unless it edits in place, reads its script from a file, or its script
/// writes files or runs commands.
pub(crate) fn sed(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    sed::sed(an, args, site);
}

/// `jq FILTER FILES…`: read-only unless it loads modules or a filter from a file.
pub(crate) fn jq(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    jq::judge(an, args, site);
}
