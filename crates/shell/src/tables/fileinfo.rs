//! The GNU coreutils that list files and their data (`ls`, `du`, `df`, `stat`), `date`, and the checksum programs.

use crate::options::{Arity, Effect, Table, flag, option, optional, reads, value};

use super::{CHECKS, LISTED};

/// `ls`.
pub(crate) const LS: Table = Table::gnu(&[
    flag(&["-a", "--all"]),
    flag(&["-A", "--almost-all"]),
    flag(&["--author"]),
    flag(&["-b", "--escape"]),
    value(&["--block-size"]),
    flag(&["-B", "--ignore-backups"]),
    flag(&["-c"]),
    flag(&["-C"]),
    optional(&["--color"]),
    flag(&["-d", "--directory"]),
    flag(&["-D", "--dired"]),
    flag(&["-f"]),
    flag(&["-F"]),
    optional(&["--classify"]),
    flag(&["--file-type"]),
    value(&["--format"]),
    flag(&["--full-time"]),
    flag(&["-g"]),
    flag(&["--group-directories-first"]),
    flag(&["-G", "--no-group"]),
    flag(&["-h", "--human-readable"]),
    flag(&["--si"]),
    flag(&["-H", "--dereference-command-line"]),
    flag(&["--dereference-command-line-symlink-to-dir"]),
    value(&["--hide"]),
    optional(&["--hyperlink"]),
    value(&["--indicator-style"]),
    flag(&["-i", "--inode"]),
    value(&["-I", "--ignore"]),
    flag(&["-k", "--kibibytes"]),
    flag(&["-l"]),
    flag(&["-L", "--dereference"]),
    flag(&["-m"]),
    flag(&["-n", "--numeric-uid-gid"]),
    flag(&["-N", "--literal"]),
    flag(&["-o"]),
    flag(&["-p"]),
    flag(&["-q", "--hide-control-chars"]),
    flag(&["--show-control-chars"]),
    flag(&["-Q", "--quote-name"]),
    value(&["--quoting-style"]),
    flag(&["-r", "--reverse"]),
    flag(&["-R", "--recursive"]),
    flag(&["-s", "--size"]),
    flag(&["-S"]),
    value(&["--sort"]),
    value(&["--time"]),
    value(&["--time-style"]),
    flag(&["-t"]),
    value(&["-T", "--tabsize"]),
    flag(&["-u"]),
    flag(&["-U"]),
    flag(&["-v"]),
    value(&["-w", "--width"]),
    flag(&["-x"]),
    flag(&["-X"]),
    flag(&["-Z", "--context"]),
    flag(&["--zero"]),
    flag(&["-1"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `du`.
pub(crate) const DU: Table = Table::gnu(&[
    flag(&["-0", "--null"]),
    flag(&["-a", "--all"]),
    flag(&["--apparent-size"]),
    value(&["-B", "--block-size"]),
    flag(&["-b", "--bytes"]),
    flag(&["-c", "--total"]),
    flag(&["-D", "--dereference-args"]),
    value(&["-d", "--max-depth"]),
    flag(&["--summarize"]),
    option(&["--files0-from"], Arity::Value, Effect::Changes(LISTED)),
    flag(&["-H"]),
    flag(&["-h", "--human-readable"]),
    flag(&["--inodes"]),
    flag(&["-k"]),
    flag(&["-L", "--dereference"]),
    flag(&["-l", "--count-links"]),
    flag(&["-m"]),
    flag(&["-P", "--no-dereference"]),
    flag(&["-S", "--separate-dirs"]),
    flag(&["--si"]),
    flag(&["-s"]),
    value(&["-t", "--threshold"]),
    optional(&["--time"]),
    value(&["--time-style"]),
    reads(&["-X", "--exclude-from"]),
    value(&["--exclude"]),
    flag(&["-x", "--one-file-system"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `df`.
pub(crate) const DF: Table = Table::gnu(&[
    flag(&["-a", "--all"]),
    value(&["-B", "--block-size"]),
    flag(&["-h", "--human-readable"]),
    flag(&["-H", "--si"]),
    flag(&["-i", "--inodes"]),
    flag(&["-k"]),
    flag(&["-l", "--local"]),
    flag(&["--no-sync"]),
    optional(&["--output"]),
    flag(&["-P", "--portability"]),
    flag(&["--sync"]),
    flag(&["--total"]),
    value(&["-t", "--type"]),
    flag(&["-T", "--print-type"]),
    value(&["-x", "--exclude-type"]),
    flag(&["-v"]),
    flag(&["--help"]),
    flag(&["--version"]),
    value(&["-F"]),
    flag(&["-m"]),
]);

/// `stat`.
pub(crate) const STAT: Table = Table::gnu(&[
    flag(&["-L", "--dereference"]),
    flag(&["-f", "--file-system"]),
    value(&["--cached"]),
    value(&["-c"]),
    value(&["--printf"]),
    flag(&["-t", "--terse"]),
    flag(&["--help"]),
    flag(&["--version"]),
    value(&["--format"]),
]);

/// `date`.
pub(crate) const DATE: Table = Table::gnu(&[
    value(&["-d", "--date"]),
    flag(&["--debug"]),
    reads(&["-f", "--file"]),
    optional(&["-I", "--iso-8601"]),
    flag(&["--resolution"]),
    flag(&["-R", "--rfc-email"]),
    value(&["--rfc-3339"]),
    reads(&["-r", "--reference"]),
    option(
        &["-s", "--set"],
        Arity::Value,
        Effect::Changes("sets the system clock"),
    ),
    flag(&["-u", "--utc", "--universal", "--uct"]),
    flag(&["--help"]),
    flag(&["--version"]),
    flag(&["--rfc-2822"]),
    flag(&["--rfc-822"]),
]);

/// `md5sum`.
pub(crate) const MD5SUM: Table = Table::gnu(&[
    flag(&["-b", "--binary"]),
    option(&["-c", "--check"], Arity::Flag, Effect::Changes(CHECKS)),
    flag(&["--tag"]),
    flag(&["-t", "--text"]),
    flag(&["-z", "--zero"]),
    flag(&["--ignore-missing"]),
    flag(&["--quiet"]),
    flag(&["--status"]),
    flag(&["--strict"]),
    flag(&["-w", "--warn"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `sha1sum`.
pub(crate) const SHA1SUM: Table = Table::gnu(&[
    flag(&["-b", "--binary"]),
    option(&["-c", "--check"], Arity::Flag, Effect::Changes(CHECKS)),
    flag(&["--tag"]),
    flag(&["-t", "--text"]),
    flag(&["-z", "--zero"]),
    flag(&["--ignore-missing"]),
    flag(&["--quiet"]),
    flag(&["--status"]),
    flag(&["--strict"]),
    flag(&["-w", "--warn"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `sha224sum`.
pub(crate) const SHA224SUM: Table = Table::gnu(&[
    flag(&["-b", "--binary"]),
    option(&["-c", "--check"], Arity::Flag, Effect::Changes(CHECKS)),
    flag(&["--tag"]),
    flag(&["-t", "--text"]),
    flag(&["-z", "--zero"]),
    flag(&["--ignore-missing"]),
    flag(&["--quiet"]),
    flag(&["--status"]),
    flag(&["--strict"]),
    flag(&["-w", "--warn"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `sha256sum`.
pub(crate) const SHA256SUM: Table = Table::gnu(&[
    flag(&["-b", "--binary"]),
    option(&["-c", "--check"], Arity::Flag, Effect::Changes(CHECKS)),
    flag(&["--tag"]),
    flag(&["-t", "--text"]),
    flag(&["-z", "--zero"]),
    flag(&["--ignore-missing"]),
    flag(&["--quiet"]),
    flag(&["--status"]),
    flag(&["--strict"]),
    flag(&["-w", "--warn"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `sha384sum`.
pub(crate) const SHA384SUM: Table = Table::gnu(&[
    flag(&["-b", "--binary"]),
    option(&["-c", "--check"], Arity::Flag, Effect::Changes(CHECKS)),
    flag(&["--tag"]),
    flag(&["-t", "--text"]),
    flag(&["-z", "--zero"]),
    flag(&["--ignore-missing"]),
    flag(&["--quiet"]),
    flag(&["--status"]),
    flag(&["--strict"]),
    flag(&["-w", "--warn"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `sha512sum`.
pub(crate) const SHA512SUM: Table = Table::gnu(&[
    flag(&["-b", "--binary"]),
    option(&["-c", "--check"], Arity::Flag, Effect::Changes(CHECKS)),
    flag(&["--tag"]),
    flag(&["-t", "--text"]),
    flag(&["-z", "--zero"]),
    flag(&["--ignore-missing"]),
    flag(&["--quiet"]),
    flag(&["--status"]),
    flag(&["--strict"]),
    flag(&["-w", "--warn"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `b2sum`.
pub(crate) const B2SUM: Table = Table::gnu(&[
    flag(&["-b", "--binary"]),
    option(&["-c", "--check"], Arity::Flag, Effect::Changes(CHECKS)),
    value(&["-l", "--length"]),
    flag(&["--tag"]),
    flag(&["-t", "--text"]),
    flag(&["-z", "--zero"]),
    flag(&["--ignore-missing"]),
    flag(&["--quiet"]),
    flag(&["--status"]),
    flag(&["--strict"]),
    flag(&["-w", "--warn"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `cksum`.
pub(crate) const CKSUM: Table = Table::gnu(&[
    value(&["-a", "--algorithm"]),
    option(&["-c", "--check"], Arity::Flag, Effect::Changes(CHECKS)),
    value(&["-l", "--length"]),
    flag(&["--tag"]),
    flag(&["--untagged"]),
    flag(&["-z", "--zero"]),
    flag(&["--ignore-missing"]),
    flag(&["--quiet"]),
    flag(&["--status"]),
    flag(&["--strict"]),
    flag(&["-w", "--warn"]),
    flag(&["--debug"]),
    flag(&["--help"]),
    flag(&["--version"]),
    flag(&["-b"]),
    flag(&["-t"]),
]);

/// `sum`.
pub(crate) const SUM: Table = Table::gnu(&[
    flag(&["-r"]),
    flag(&["-s", "--sysv"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);
