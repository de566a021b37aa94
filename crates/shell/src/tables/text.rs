//! The text filters of GNU coreutils: every option each has, as `--help` and the program itself list them (hidden ones included).

use crate::options::{Arity, Effect, Table, flag, option, optional, reads, runs, value, writes};

use super::LISTED;

/// `cat`.
pub(crate) const CAT: Table = Table::gnu(&[
    flag(&["-A", "--show-all"]),
    flag(&["-b", "--number-nonblank"]),
    flag(&["-e"]),
    flag(&["-E", "--show-ends"]),
    flag(&["-n", "--number"]),
    flag(&["-s", "--squeeze-blank"]),
    flag(&["-t"]),
    flag(&["-T", "--show-tabs"]),
    flag(&["-u"]),
    flag(&["-v", "--show-nonprinting"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `tac`.
pub(crate) const TAC: Table = Table::gnu(&[
    flag(&["-b", "--before"]),
    flag(&["-r", "--regex"]),
    value(&["-s", "--separator"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `nl`.
pub(crate) const NL: Table = Table::gnu(&[
    value(&["-b", "--body-numbering"]),
    value(&["-d", "--section-delimiter"]),
    value(&["-f", "--footer-numbering"]),
    value(&["-h", "--header-numbering"]),
    value(&["-i", "--line-increment"]),
    value(&["-l", "--join-blank-lines"]),
    value(&["-n", "--number-format"]),
    flag(&["-p", "--no-renumber"]),
    value(&["-s", "--number-separator"]),
    value(&["-v", "--starting-line-number"]),
    value(&["-w", "--number-width"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `fold`.
pub(crate) const FOLD: Table = Table::gnu(&[
    flag(&["-b", "--bytes"]),
    flag(&["-s", "--spaces"]),
    value(&["-w", "--width"]),
    flag(&["--help"]),
    flag(&["--version"]),
    flag(&["-0"]),
    flag(&["-1"]),
    flag(&["-2"]),
    flag(&["-3"]),
    flag(&["-4"]),
    flag(&["-5"]),
    flag(&["-6"]),
    flag(&["-7"]),
    flag(&["-8"]),
    flag(&["-9"]),
]);

/// `fmt`.
pub(crate) const FMT: Table = Table::gnu(&[
    flag(&["-c", "--crown-margin"]),
    value(&["-p", "--prefix"]),
    flag(&["-s", "--split-only"]),
    flag(&["-t", "--tagged-paragraph"]),
    flag(&["-u", "--uniform-spacing"]),
    value(&["-w", "--width"]),
    value(&["-g", "--goal"]),
    flag(&["--help"]),
    flag(&["--version"]),
    flag(&["-0"]),
    flag(&["-1"]),
    flag(&["-2"]),
    flag(&["-3"]),
    flag(&["-4"]),
    flag(&["-5"]),
    flag(&["-6"]),
    flag(&["-7"]),
    flag(&["-8"]),
    flag(&["-9"]),
]);

/// `expand`.
pub(crate) const EXPAND: Table = Table::gnu(&[
    flag(&["-i", "--initial"]),
    value(&["-t", "--tabs"]),
    flag(&["--help"]),
    flag(&["--version"]),
    flag(&["-0"]),
    flag(&["-1"]),
    flag(&["-2"]),
    flag(&["-3"]),
    flag(&["-4"]),
    flag(&["-5"]),
    flag(&["-6"]),
    flag(&["-7"]),
    flag(&["-8"]),
    flag(&["-9"]),
]);

/// `unexpand`.
pub(crate) const UNEXPAND: Table = Table::gnu(&[
    flag(&["-a", "--all"]),
    flag(&["--first-only"]),
    value(&["-t", "--tabs"]),
    flag(&["--help"]),
    flag(&["--version"]),
    flag(&["-0"]),
    flag(&["-1"]),
    flag(&["-2"]),
    flag(&["-3"]),
    flag(&["-4"]),
    flag(&["-5"]),
    flag(&["-6"]),
    flag(&["-7"]),
    flag(&["-8"]),
    flag(&["-9"]),
]);

/// `head`.
pub(crate) const HEAD: Table = Table::gnu_numeric(&[
    value(&["-c", "--bytes"]),
    value(&["-n", "--lines"]),
    flag(&["-q", "--quiet", "--silent"]),
    flag(&["-v", "--verbose"]),
    flag(&["-z", "--zero-terminated"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `tail`.
pub(crate) const TAIL: Table = Table::gnu_numeric(&[
    value(&["-c", "--bytes"]),
    flag(&["-f"]),
    optional(&["--follow"]),
    flag(&["-F"]),
    value(&["-n", "--lines"]),
    value(&["--max-unchanged-stats"]),
    value(&["--pid"]),
    flag(&["-q", "--quiet", "--silent"]),
    flag(&["--retry"]),
    value(&["-s", "--sleep-interval"]),
    flag(&["-v", "--verbose"]),
    flag(&["-z", "--zero-terminated"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `cut`.
pub(crate) const CUT: Table = Table::gnu(&[
    value(&["-b", "--bytes"]),
    value(&["-c", "--characters"]),
    value(&["-d", "--delimiter"]),
    value(&["-f", "--fields"]),
    flag(&["-n"]),
    flag(&["--complement"]),
    flag(&["-s", "--only-delimited"]),
    value(&["--output-delimiter"]),
    flag(&["-z", "--zero-terminated"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `paste`.
pub(crate) const PASTE: Table = Table::gnu(&[
    value(&["-d", "--delimiters"]),
    flag(&["-s", "--serial"]),
    flag(&["-z", "--zero-terminated"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `join`.
pub(crate) const JOIN: Table = Table::gnu(&[
    value(&["-a"]),
    value(&["-e"]),
    flag(&["-i", "--ignore-case"]),
    value(&["-j"]),
    value(&["-o"]),
    value(&["-t"]),
    value(&["-v"]),
    value(&["-1"]),
    value(&["-2"]),
    flag(&["--check-order"]),
    flag(&["--nocheck-order"]),
    flag(&["--header"]),
    flag(&["-z", "--zero-terminated"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `pr`.
pub(crate) const PR: Table = Table::gnu(&[
    value(&["--columns"]),
    flag(&["-a", "--across"]),
    flag(&["-c", "--show-control-chars"]),
    flag(&["-d", "--double-space"]),
    value(&["-D", "--date-format"]),
    optional(&["-e", "--expand-tabs"]),
    flag(&["-F", "-f", "--form-feed"]),
    value(&["-h", "--header"]),
    optional(&["-i", "--output-tabs"]),
    flag(&["-J", "--join-lines"]),
    value(&["-l", "--length"]),
    flag(&["-m", "--merge"]),
    optional(&["-n", "--number-lines"]),
    value(&["-N", "--first-line-number"]),
    value(&["-o", "--indent"]),
    flag(&["-r", "--no-file-warnings"]),
    optional(&["-s", "--separator"]),
    optional(&["-S", "--sep-string"]),
    flag(&["-t", "--omit-header"]),
    flag(&["-T", "--omit-pagination"]),
    flag(&["-v", "--show-nonprinting"]),
    value(&["-w", "--width"]),
    value(&["-W", "--page-width"]),
    flag(&["--help"]),
    flag(&["--version"]),
    value(&["--pages"]),
    flag(&["-0"]),
    flag(&["-1"]),
    flag(&["-2"]),
    flag(&["-3"]),
    flag(&["-4"]),
    flag(&["-5"]),
    flag(&["-6"]),
    flag(&["-7"]),
    flag(&["-8"]),
    flag(&["-9"]),
    flag(&["-b"]),
]);

/// `comm`.
pub(crate) const COMM: Table = Table::gnu(&[
    flag(&["-1"]),
    flag(&["-2"]),
    flag(&["-3"]),
    flag(&["--check-order"]),
    flag(&["--nocheck-order"]),
    value(&["--output-delimiter"]),
    flag(&["--total"]),
    flag(&["-z", "--zero-terminated"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `wc`.
pub(crate) const WC: Table = Table::gnu(&[
    flag(&["-c", "--bytes"]),
    flag(&["-m", "--chars"]),
    flag(&["-l", "--lines"]),
    option(&["--files0-from"], Arity::Value, Effect::Changes(LISTED)),
    flag(&["-L", "--max-line-length"]),
    flag(&["-w", "--words"]),
    flag(&["--help"]),
    flag(&["--version"]),
    flag(&["--debug"]),
]);

/// `sort`.
pub(crate) const SORT: Table = Table::gnu(&[
    flag(&["-b", "--ignore-leading-blanks"]),
    flag(&["-d", "--dictionary-order"]),
    flag(&["-f", "--ignore-case"]),
    flag(&["-g", "--general-numeric-sort"]),
    flag(&["-i", "--ignore-nonprinting"]),
    flag(&["-M", "--month-sort"]),
    flag(&["-h", "--human-numeric-sort"]),
    flag(&["-n", "--numeric-sort"]),
    flag(&["-R", "--random-sort"]),
    reads(&["--random-source"]),
    flag(&["-r", "--reverse"]),
    value(&["--sort"]),
    flag(&["-V", "--version-sort"]),
    value(&["--batch-size"]),
    flag(&["-c"]),
    optional(&["--check"]),
    flag(&["-C"]),
    runs(&["--compress-program"]),
    flag(&["--debug"]),
    option(&["--files0-from"], Arity::Value, Effect::Changes(LISTED)),
    value(&["-k", "--key"]),
    flag(&["-m", "--merge"]),
    writes(&["-o", "--output"]),
    flag(&["-s", "--stable"]),
    value(&["-S", "--buffer-size"]),
    value(&["-t", "--field-separator"]),
    writes(&["-T", "--temporary-directory"]),
    value(&["--parallel"]),
    flag(&["-u", "--unique"]),
    flag(&["-z", "--zero-terminated"]),
    flag(&["--help"]),
    flag(&["--version"]),
    value(&["-y"]),
]);

/// `uniq`.
pub(crate) const UNIQ: Table = Table::gnu_numeric(&[
    flag(&["-c", "--count"]),
    flag(&["-d", "--repeated"]),
    flag(&["-D"]),
    optional(&["--all-repeated"]),
    value(&["-f", "--skip-fields"]),
    optional(&["--group"]),
    flag(&["-i", "--ignore-case"]),
    value(&["-s", "--skip-chars"]),
    flag(&["-u", "--unique"]),
    flag(&["-z", "--zero-terminated"]),
    value(&["-w", "--check-chars"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `shuf`.
pub(crate) const SHUF: Table = Table::gnu(&[
    flag(&["-e", "--echo"]),
    value(&["-i", "--input-range"]),
    value(&["-n", "--head-count"]),
    writes(&["-o", "--output"]),
    reads(&["--random-source"]),
    flag(&["-r", "--repeat"]),
    flag(&["-z", "--zero-terminated"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `tsort`.
pub(crate) const TSORT: Table = Table::gnu(&[flag(&["--help"]), flag(&["--version"])]);

/// `base64`.
pub(crate) const BASE64: Table = Table::gnu(&[
    flag(&["-d", "--decode"]),
    flag(&["-i", "--ignore-garbage"]),
    value(&["-w", "--wrap"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `base32`.
pub(crate) const BASE32: Table = Table::gnu(&[
    flag(&["-d", "--decode"]),
    flag(&["-i", "--ignore-garbage"]),
    value(&["-w", "--wrap"]),
    flag(&["--help"]),
    flag(&["--version"]),
]);

/// `od`.
pub(crate) const OD: Table = Table::gnu(&[
    value(&["-A", "--address-radix"]),
    value(&["--endian"]),
    value(&["-j", "--skip-bytes"]),
    value(&["-N", "--read-bytes"]),
    value(&["-S"]),
    optional(&["--strings"]),
    value(&["-t", "--format"]),
    flag(&["-v", "--output-duplicates"]),
    optional(&["-w", "--width"]),
    flag(&["--traditional"]),
    flag(&["--help"]),
    flag(&["--version"]),
    flag(&["-a"]),
    flag(&["-b"]),
    flag(&["-c"]),
    flag(&["-d"]),
    flag(&["-f"]),
    flag(&["-i"]),
    flag(&["-l"]),
    flag(&["-o"]),
    flag(&["-s"]),
    flag(&["-x"]),
    flag(&["-B"]),
    flag(&["-D"]),
    flag(&["-F"]),
    flag(&["-H"]),
    flag(&["-I"]),
    flag(&["-L"]),
    flag(&["-O"]),
    flag(&["-X"]),
    flag(&["-e"]),
    flag(&["-h"]),
]);
