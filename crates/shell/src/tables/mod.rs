//! Every option of each read-only command cairn judges by table, with how many values it
//! takes and what it does. A command here is read-only only when every option it is given is
//! found in its table and is harmless ([`crate::options::judge_options`]); an option the
//! table lacks asks. The GNU tables were taken from each program's `--help` and from the
//! program itself (every long-option prefix tried, so hidden options are in too); the others
//! from their help and manual. The `interop` tests check them against the installed programs.

mod diff;
mod fileinfo;
pub mod listing;
mod pagers;
mod search;
mod text;
mod viewers;

pub(crate) use pagers::xxd_word;

use crate::options::Table;

/// Why an option whose value (or whose operands) lists file names is not read-only: the
/// files it reads are named only in that list, at run time.
pub(crate) const LISTED: &str = "reads files named only at run time, in the list it is given";

/// Why `md5sum -c` and its kin are not read-only: they read the files named in the checksum
/// lists, known only at run time.
pub(crate) const CHECKS: &str =
    "reads the files named in the checksum lists, known only at run time";

/// Every command with a table, and the table.
pub(crate) const TABLES: &[(&str, &Table)] = &[
    ("cat", &text::CAT),
    ("tac", &text::TAC),
    ("nl", &text::NL),
    ("fold", &text::FOLD),
    ("fmt", &text::FMT),
    ("expand", &text::EXPAND),
    ("unexpand", &text::UNEXPAND),
    ("head", &text::HEAD),
    ("tail", &text::TAIL),
    ("cut", &text::CUT),
    ("paste", &text::PASTE),
    ("join", &text::JOIN),
    ("pr", &text::PR),
    ("comm", &text::COMM),
    ("wc", &text::WC),
    ("sort", &text::SORT),
    ("uniq", &text::UNIQ),
    ("shuf", &text::SHUF),
    ("tsort", &text::TSORT),
    ("base64", &text::BASE64),
    ("base32", &text::BASE32),
    ("od", &text::OD),
    ("ls", &fileinfo::LS),
    ("dir", &fileinfo::LS),
    ("vdir", &fileinfo::LS),
    ("du", &fileinfo::DU),
    ("df", &fileinfo::DF),
    ("stat", &fileinfo::STAT),
    ("date", &fileinfo::DATE),
    ("md5sum", &fileinfo::MD5SUM),
    ("sha1sum", &fileinfo::SHA1SUM),
    ("sha224sum", &fileinfo::SHA224SUM),
    ("sha256sum", &fileinfo::SHA256SUM),
    ("sha384sum", &fileinfo::SHA384SUM),
    ("sha512sum", &fileinfo::SHA512SUM),
    ("b2sum", &fileinfo::B2SUM),
    ("cksum", &fileinfo::CKSUM),
    ("sum", &fileinfo::SUM),
    ("diff", &diff::DIFF),
    ("diff3", &diff::DIFF3),
    ("sdiff", &diff::SDIFF),
    ("cmp", &diff::CMP),
    ("grep", &search::GREP),
    ("egrep", &search::GREP),
    ("fgrep", &search::GREP),
    ("rg", &search::RG),
    ("file", &viewers::FILE),
    ("strings", &viewers::STRINGS),
    ("iconv", &viewers::ICONV),
    ("rev", &viewers::REV),
    ("look", &viewers::LOOK),
    ("column", &viewers::COLUMN),
    ("hexdump", &viewers::HEXDUMP),
    ("more", &viewers::MORE),
    ("zcat", &viewers::ZCAT),
    ("hostname", &viewers::HOSTNAME),
    ("less", &pagers::LESS),
    ("bat", &pagers::BAT),
    ("batcat", &pagers::BAT),
    ("tree", &pagers::TREE),
    ("xxd", &pagers::XXD),
];

/// The table of `command`, if cairn judges it by one.
pub(crate) fn table(command: &str) -> Option<&'static Table> {
    TABLES
        .iter()
        .find(|(name, _)| *name == command)
        .map(|(_, table)| *table)
}
