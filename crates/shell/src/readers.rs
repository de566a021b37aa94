//! The read-only tools that take files (`cat`, `grep`, `sort`, `sed`, `jq`, …): which
//! arguments are files they read, and which options make them write files or run programs.

use super::classify::{Analyzer, Site};
use super::links::{self, Access};
use super::options::{OptionSpec, parse_args};
use super::scripts;
use super::word::Word;

/// Judges `name` if it is a read-only file tool; returns whether it was.
pub(crate) fn judge(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) -> bool {
    match name {
        "sed" => scripts::sed(an, args, site),
        "jq" => scripts::jq(an, args, site),
        "uniq" | "xxd" => {
            // The second operand, if any, is the output file.
            let reader = Reader {
                with_value: &[
                    "-f",
                    "-s",
                    "-w",
                    "-c",
                    "-g",
                    "-l",
                    "-o",
                    "-n",
                    "--skip-fields",
                    "--skip-chars",
                    "--check-chars",
                ],
                ..Reader::default()
            };
            let parsed = parse_args(args, option_spec(&reader));
            for (position, operand) in parsed.operands.iter().enumerate() {
                if position == 0 {
                    an.read_path(operand, site);
                } else {
                    an.write_path(operand, site);
                }
            }
        }
        "file" if has_literal(args, &["-C", "--compile"]) => {
            an.needs_approval("`file -C` writes a compiled magic file");
        }
        "less" | "more" => {
            for arg in args {
                if arg.literal_prefix().starts_with('+') && arg.display().contains('!') {
                    an.needs_approval(format!("`{name} {}` runs a shell command", arg.display()));
                }
            }
            read_files(
                an,
                name,
                args,
                site,
                &Reader {
                    with_value: &[
                        "-o",
                        "--log-file",
                        "-O",
                        "--LOG-FILE",
                        "-x",
                        "--tabs",
                        "-y",
                        "-b",
                        "-h",
                        "-j",
                        "-k",
                        "-p",
                        "-P",
                        "-t",
                        "-T",
                        "-z",
                    ],
                    writes: &["-o", "--log-file", "-O", "--LOG-FILE"],
                    ..Reader::default()
                },
            );
        }
        _ => match reader(name) {
            Some(reader) => read_files(an, name, args, site, &reader),
            None => return false,
        },
    }
    true
}

fn has_literal(args: &[Word], names: &[&str]) -> bool {
    args.iter()
        .filter_map(Word::literal)
        .any(|text| names.contains(&text.as_str()))
}

/// How a command that reads files takes its arguments.
#[derive(Debug, Clone, Copy, Default)]
struct Reader<'a> {
    /// Options that take a value.
    with_value: &'a [&'a str],
    /// The first operand is a pattern or program, not a file, unless one of `pattern_options`
    /// gives it.
    pattern_first: bool,
    pattern_options: &'a [&'a str],
    /// Options whose value is a file the command reads.
    reads: &'a [&'a str],
    /// Options whose value is a file the command writes.
    writes: &'a [&'a str],
    /// Options that make the command run another program.
    runs: &'a [&'a str],
    /// Options that make it follow the symbolic links it meets while walking a directory
    /// tree (`grep -R`, `rg -L`).
    follows: &'a [&'a str],
    /// For commands that walk trees only when asked (`ls -R`), the options that ask; empty
    /// for those that always do (`du`, `rg`) or whose following option implies it (`grep -R`).
    walks: &'a [&'a str],
}

fn option_spec<'a>(reader: &Reader<'a>) -> OptionSpec<'a> {
    OptionSpec {
        with_value: reader.with_value,
        stop_at_operand: false,
    }
}

/// The read-only commands that take files, and how.
fn reader(name: &str) -> Option<Reader<'static>> {
    const GREP_PATTERNS: &[&str] = &["-e", "--regexp", "-f", "--file"];
    let reader = match name {
        // Each command's own options that take a value: an option wrongly taken to have one
        // would swallow the file after it (`cat -n ~/.ssh/id_rsa` reads the key).
        "cat" | "rev" | "md5sum" | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum"
        | "sha512sum" | "sum" | "zcat" | "bzcat" | "xzcat" | "zstdcat" | "tsort" => {
            Reader::default()
        }
        "tac" => Reader {
            with_value: &["-s", "--separator"],
            ..Reader::default()
        },
        "b2sum" | "cksum" | "shasum" => Reader {
            with_value: &["-a", "--algorithm", "-l", "--length"],
            ..Reader::default()
        },
        "wc" => Reader {
            with_value: &["--files0-from"],
            reads: &["--files0-from"],
            ..Reader::default()
        },
        "nl" => Reader {
            with_value: &[
                "-b",
                "-d",
                "-f",
                "-h",
                "-i",
                "-l",
                "-n",
                "-s",
                "-v",
                "-w",
                "--body-numbering",
                "--section-delimiter",
                "--footer-numbering",
                "--header-numbering",
                "--line-increment",
                "--join-blank-lines",
                "--number-format",
                "--number-separator",
                "--starting-line-number",
                "--number-width",
            ],
            ..Reader::default()
        },
        "fold" | "base64" | "base32" => Reader {
            with_value: &["-w", "--width", "--wrap"],
            ..Reader::default()
        },
        "fmt" => Reader {
            with_value: &["-w", "--width", "-p", "--prefix", "-g", "--goal"],
            ..Reader::default()
        },
        "expand" | "unexpand" => Reader {
            with_value: &["-t", "--tabs"],
            ..Reader::default()
        },
        "strings" => Reader {
            with_value: &[
                "-n",
                "--bytes",
                "-t",
                "--radix",
                "-e",
                "--encoding",
                "-T",
                "--target",
            ],
            ..Reader::default()
        },
        "bat" | "batcat" => Reader {
            with_value: &[
                "-l",
                "--language",
                "-H",
                "--highlight-line",
                "-r",
                "--line-range",
                "-m",
                "--map-syntax",
                "--theme",
                "--style",
                "--tabs",
                "--wrap",
                "--terminal-width",
                "--color",
                "--decorations",
                "--paging",
                "--pager",
                "--file-name",
                "--diff-context",
            ],
            runs: &["--pager"],
            ..Reader::default()
        },
        "cmp" => Reader {
            with_value: &["-i", "--ignore-initial", "-n", "--bytes"],
            ..Reader::default()
        },
        "comm" => Reader {
            with_value: &["--output-delimiter"],
            ..Reader::default()
        },
        "paste" => Reader {
            with_value: &["-d", "--delimiters"],
            ..Reader::default()
        },
        "join" => Reader {
            with_value: &["-1", "-2", "-j", "-t", "-e", "-o", "-a", "-v"],
            ..Reader::default()
        },
        "look" => Reader {
            with_value: &["-t", "--terminate"],
            ..Reader::default()
        },
        "pr" => Reader {
            with_value: &[
                "-w",
                "--width",
                "-l",
                "--length",
                "-h",
                "--header",
                "-o",
                "--indent",
                "-N",
                "--first-line-number",
                "-W",
                "--page-width",
                "-D",
                "--date-format",
                "-S",
                "--sep-string",
            ],
            ..Reader::default()
        },
        "column" => Reader {
            with_value: &[
                "-s",
                "--separator",
                "-c",
                "--output-width",
                "-o",
                "--output-separator",
                "-N",
                "--table-columns",
                "-R",
                "--table-right",
                "-H",
                "--table-hide",
                "-W",
                "--table-wrap",
            ],
            ..Reader::default()
        },
        "od" => Reader {
            with_value: &[
                "-A",
                "--address-radix",
                "-j",
                "--skip-bytes",
                "-N",
                "--read-bytes",
                "-t",
                "--format",
                "-S",
                "--strings",
            ],
            ..Reader::default()
        },
        "hexdump" => Reader {
            with_value: &["-n", "-s", "-e", "-f"],
            reads: &["-f"],
            ..Reader::default()
        },
        "df" => Reader {
            with_value: &["-B", "--block-size", "-t", "--type", "-x", "--exclude-type"],
            ..Reader::default()
        },
        "stat" => Reader {
            with_value: &["-c", "--format", "--printf"],
            ..Reader::default()
        },
        "file" => Reader {
            with_value: &[
                "-m",
                "--magic-file",
                "-F",
                "--separator",
                "-f",
                "--files-from",
                "-e",
                "--exclude",
                "-P",
                "--parameter",
            ],
            reads: &["-m", "--magic-file", "-f", "--files-from"],
            ..Reader::default()
        },
        "head" | "tail" => Reader {
            with_value: &[
                "-n",
                "-c",
                "--lines",
                "--bytes",
                "-s",
                "--sleep-interval",
                "--pid",
                "--max-unchanged-stats",
            ],
            ..Reader::default()
        },
        "cut" => Reader {
            with_value: &[
                "-d",
                "-f",
                "-b",
                "-c",
                "--delimiter",
                "--fields",
                "--bytes",
                "--characters",
                "--output-delimiter",
            ],
            ..Reader::default()
        },
        // GNU `ls -L` dereferences links (with `-R`, every link met); eza's `-L` is a depth.
        "ls" | "dir" | "vdir" => Reader {
            with_value: &[
                "-I",
                "--ignore",
                "-w",
                "--width",
                "-T",
                "--tabsize",
                "--hide",
                "--sort",
                "--format",
                "--time",
                "--time-style",
                "--block-size",
            ],
            follows: &["-L", "--dereference"],
            walks: &["-R", "--recursive"],
            ..Reader::default()
        },
        "exa" | "eza" | "lsd" => Reader {
            with_value: &[
                "-I",
                "--ignore",
                "-w",
                "--width",
                "-T",
                "--tabsize",
                "--hide",
                "--sort",
                "--format",
                "--time",
                "--time-style",
                "--block-size",
                "-L",
                "--level",
            ],
            ..Reader::default()
        },
        "du" => Reader {
            with_value: &[
                "-d",
                "--max-depth",
                "-t",
                "--threshold",
                "-B",
                "--block-size",
                "--exclude",
                "-X",
                "--exclude-from",
                "--files0-from",
                "--time-style",
            ],
            reads: &["-X", "--exclude-from", "--files0-from"],
            follows: &["-L", "--dereference"],
            ..Reader::default()
        },
        "tree" => Reader {
            with_value: &[
                "-o",
                "-L",
                "-P",
                "-I",
                "--filelimit",
                "--charset",
                "-H",
                "-T",
                "--sort",
                "--fromfile",
            ],
            writes: &["-o"],
            follows: &["-l"],
            ..Reader::default()
        },
        "sort" => Reader {
            with_value: &[
                "-o",
                "--output",
                "-k",
                "--key",
                "-t",
                "--field-separator",
                "-S",
                "--buffer-size",
                "-T",
                "--temporary-directory",
                "--parallel",
                "--batch-size",
                "--files0-from",
                "--compress-program",
                "--random-source",
            ],
            reads: &["--files0-from", "--random-source"],
            writes: &["-o", "--output", "-T", "--temporary-directory"],
            runs: &["--compress-program"],
            ..Reader::default()
        },
        "shuf" => Reader {
            with_value: &[
                "-o",
                "--output",
                "-n",
                "--head-count",
                "-i",
                "--input-range",
                "--random-source",
            ],
            reads: &["--random-source"],
            writes: &["-o", "--output"],
            ..Reader::default()
        },
        "diff" | "diff3" | "sdiff" => Reader {
            with_value: &[
                "-C",
                "-U",
                "-W",
                "--width",
                "-x",
                "--exclude",
                "-X",
                "--exclude-from",
                "-S",
                "--starting-file",
                "--label",
                "-L",
                "-I",
                "--ignore-matching-lines",
                "-F",
                "--show-function-line",
                "-o",
                "--output",
                "--from-file",
                "--to-file",
                "--diff-program",
            ],
            reads: &["-X", "--exclude-from", "--from-file", "--to-file"],
            writes: &["-o", "--output"],
            runs: &["--diff-program"],
            ..Reader::default()
        },
        "iconv" => Reader {
            with_value: &["-f", "--from-code", "-t", "--to-code", "-o", "--output"],
            writes: &["-o", "--output"],
            ..Reader::default()
        },
        "grep" | "egrep" | "fgrep" | "zgrep" => Reader {
            with_value: &[
                "-e",
                "--regexp",
                "-f",
                "--file",
                "-A",
                "-B",
                "-C",
                "-m",
                "--max-count",
                "-d",
                "--directories",
                "-D",
                "--devices",
                "--include",
                "--exclude",
                "--exclude-dir",
                "--exclude-from",
                "--label",
                "--context",
                "--after-context",
                "--before-context",
                "--binary-files",
                "--group-separator",
            ],
            pattern_first: true,
            pattern_options: GREP_PATTERNS,
            reads: &["-f", "--file", "--exclude-from"],
            // `-r` follows only the links named on the command line, which are resolved as
            // operands anyway; `-R` follows every link it meets.
            follows: &["-R", "--dereference-recursive"],
            ..Reader::default()
        },
        "rg" => Reader {
            with_value: &[
                "-e",
                "--regexp",
                "-f",
                "--file",
                "-g",
                "--glob",
                "--iglob",
                "-t",
                "--type",
                "-T",
                "--type-not",
                "-A",
                "-B",
                "-C",
                "-m",
                "-M",
                "--max-columns",
                "-j",
                "--threads",
                "--max-depth",
                "-d",
                "--max-filesize",
                "--type-add",
                "--colors",
                "--sort",
                "--sortr",
                "-E",
                "--encoding",
                "--engine",
                "-r",
                "--replace",
                "--ignore-file",
                "--path-separator",
                "--pre",
                "--pre-glob",
                "--context-separator",
                "--field-match-separator",
                "--field-context-separator",
                "--max-count",
                "--context",
                "--after-context",
                "--before-context",
                "--dfa-size-limit",
                "--regex-size-limit",
            ],
            pattern_first: true,
            pattern_options: &["-e", "--regexp", "-f", "--file", "--files", "--type-list"],
            reads: &["-f", "--file", "--ignore-file"],
            runs: &["--pre"],
            follows: &["-L", "--follow"],
            ..Reader::default()
        },
        "ag" | "ack" => Reader {
            with_value: &[
                "-A",
                "-B",
                "-C",
                "-m",
                "-G",
                "--ignore",
                "--ignore-dir",
                "-g",
                "--depth",
                "--pager",
            ],
            pattern_first: true,
            runs: &["--pager"],
            follows: &["-f", "--follow"],
            ..Reader::default()
        },
        _ => return None,
    };
    Some(reader)
}

/// A read-only command: its options are checked for writes and programs, its operands read.
fn read_files(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>, reader: &Reader<'_>) {
    let parsed = parse_args(args, option_spec(reader));
    for option in &parsed.options {
        if reader.runs.contains(&option.name.as_str()) {
            an.needs_approval(format!("`{name} {}` runs another program", option.name));
        }
    }
    for file in parsed.values(reader.reads) {
        an.read_path(file, site);
    }
    for file in parsed.values(reader.writes) {
        an.write_path(file, site);
    }
    let skip = usize::from(reader.pattern_first && !parsed.has(reader.pattern_options));
    let files = parsed.operands.get(skip..).unwrap_or_default();
    for operand in files {
        an.read_path(operand, site);
    }
    let following = parsed
        .options
        .iter()
        .find(|option| reader.follows.contains(&option.name.as_str()));
    if let Some(option) = following
        && (reader.walks.is_empty() || parsed.has(reader.walks))
    {
        let here = [Word::unquoted(".")];
        let starts = if files.is_empty() { &here[..] } else { files };
        let shown = format!("{name} {}", option.name);
        links::follow(an, &shown, starts, site, Access::Reads);
    }
}
