//! `sed`: its options read against GNU sed's full table, and its script parsed as GNU sed
//! parses it (addresses, blocks, `a`/`i`/`c` text, `s` and `y` with any delimiter, labels,
//! file names). A script is read-only only when every command in it is one that only reads
//! and prints; the files `r`/`R` read and `w`/`W`/`s///w` write are judged like any path, and
//! `e`/`s///e`, which run shell commands, are never read-only.

use crate::classify::{Analyzer, Site};
use crate::globs::quoted_path;
use crate::options::{Arity, Effect, Table, flag, judge_options, option, parse, runs, value};
use crate::word::Word;

/// GNU sed 4.9's options, the hidden ones included (`-b`, `--binary`, `--zero-terminated`).
const SED: Table = Table::gnu(&[
    flag(&["-n", "--quiet", "--silent"]),
    flag(&["--debug"]),
    value(&["-e", "--expression"]),
    // A script read from a file is code cairn cannot see at the time of the check: the file
    // may be one the model wrote unasked (the memory directory) or changed since.
    runs(&["-f", "--file"]),
    flag(&["--follow-symlinks"]),
    option(
        &["-i", "--in-place"],
        Arity::Optional,
        Effect::Changes("edits the files it is given in place"),
    ),
    value(&["-l", "--line-length"]),
    flag(&["--posix"]),
    flag(&["-E", "-r", "--regexp-extended"]),
    flag(&["-s", "--separate"]),
    flag(&["--sandbox"]),
    flag(&["-u", "--unbuffered"]),
    flag(&["-z", "--null-data", "--zero-terminated"]),
    flag(&["-b", "--binary"]),
    option(&["--help", "--version"], Arity::Flag, Effect::Harmless),
]);

/// What a script does beyond reading its input and printing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SedFinding {
    /// `r FILE`, `R FILE`: reads the file.
    Reads(String),
    /// `w FILE`, `W FILE`, `s///w FILE`: creates or truncates the file, even if never used.
    Writes(String),
    /// `e`, `e COMMAND`, `s///e`: runs a shell command.
    Runs(String),
}

/// `sed`: read-only unless it edits in place, reads its script from a file, or its script
/// does more than read and print.
pub(crate) fn sed(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    let parsed = parse(args, &SED);
    judge_options(an, "sed", &parsed, site);
    for file in parsed.values(&["-f", "--file"]) {
        an.read_path(file, site);
    }
    let in_place = parsed.has(&["-i"]);
    let given = parsed.has(&["-e", "-f"]);
    let scripts: Vec<&Word> = if given {
        parsed.values(&["-e"]).collect()
    } else {
        parsed.operands.first().into_iter().collect()
    };
    // GNU sed joins the `-e` fragments with newlines before parsing (`-e 'a\' -e text`).
    let texts: Option<Vec<String>> = scripts.iter().map(|word| word.literal()).collect();
    match texts {
        Some(texts) => judge_script(an, &texts.join("\n"), site),
        None => an.unanalysable("the sed script is not known until run time"),
    }
    for file in parsed.operands.iter().skip(usize::from(!given)) {
        if in_place {
            an.write_path(file, site);
        } else {
            an.read_path(file, site);
        }
    }
    if in_place && (parsed.operands.len() <= usize::from(!given) || site.extra_args) {
        an.needs_approval("`sed -i` edits files named only at run time");
    }
}

fn judge_script(an: &mut Analyzer, script: &str, site: Site<'_>) {
    let findings = match parse_script(script) {
        Ok(findings) => findings,
        Err(error) => {
            // GNU sed would refuse it, or cairn reads it differently: no rule vouches for it.
            an.unanalysable(format!("cairn cannot read the sed script: {error}"));
            return;
        }
    };
    for finding in findings {
        match finding {
            SedFinding::Reads(file) => an.read_path(&file_word(&file), site),
            SedFinding::Writes(file) => an.write_path(&file_word(&file), site),
            SedFinding::Runs(command) => an.unanalysable(format!(
                "the sed script runs shell commands ({command}), which no rule vouches for"
            )),
        }
    }
}

/// A file name in a script, taken literally: sed expands no `~` or globs, and `-` is a file.
fn file_word(name: &str) -> Word {
    if name == "-" {
        return quoted_path("./-");
    }
    quoted_path(name)
}

/// Parses a GNU sed script and lists what in it reads, writes or runs; an error for anything
/// it cannot read as GNU sed would (which makes the command not read-only).
pub(crate) fn parse_script(script: &str) -> Result<Vec<SedFinding>, String> {
    let mut parser = Parser {
        chars: script.chars().collect(),
        at: 0,
        findings: Vec::new(),
        depth: 0,
    };
    parser.script()?;
    Ok(parser.findings)
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    findings: Vec<SedFinding>,
    /// How many `{` are open.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        if c.is_some() {
            self.at += 1;
        }
        c
    }

    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(|c| c.is_whitespace() && c != '\n') {
            self.at += 1;
        }
    }

    fn script(&mut self) -> Result<(), String> {
        loop {
            while self.peek().is_some_and(|c| c.is_whitespace() || c == ';') {
                self.at += 1;
            }
            if self.peek().is_none() {
                break;
            }
            self.command()?;
        }
        if self.depth > 0 {
            return Err("unmatched `{`".into());
        }
        Ok(())
    }

    fn command(&mut self) -> Result<(), String> {
        if self.address()? {
            self.skip_blanks();
            if self.peek() == Some(',') {
                self.at += 1;
                self.skip_blanks();
                if !self.second_address()? {
                    return Err("expected an address after `,`".into());
                }
            }
        }
        self.skip_blanks();
        if self.peek() == Some('!') {
            self.at += 1;
            self.skip_blanks();
        }
        let Some(command) = self.next() else {
            return Err("missing command".into());
        };
        match command {
            '{' => {
                self.depth += 1;
                Ok(())
            }
            '}' => {
                if self.depth == 0 {
                    return Err("unexpected `}`".into());
                }
                self.depth -= 1;
                self.end_of_command()
            }
            '#' => {
                self.rest_of_line();
                Ok(())
            }
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {
                self.end_of_command()
            }
            'l' | 'q' | 'Q' => {
                self.skip_blanks();
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.at += 1;
                }
                self.end_of_command()
            }
            ':' | 'b' | 't' | 'T' | 'v' => {
                let label = self.label();
                if command == ':' && label.is_empty() {
                    return Err("`:` lacks a label".into());
                }
                Ok(())
            }
            'a' | 'i' | 'c' => self.text(),
            'r' | 'R' => {
                let file = self.file_name()?;
                self.findings.push(SedFinding::Reads(file));
                Ok(())
            }
            'w' | 'W' => {
                let file = self.file_name()?;
                self.findings.push(SedFinding::Writes(file));
                Ok(())
            }
            'e' => {
                let command = self.rest_of_line();
                let shown = if command.trim().is_empty() {
                    "`e`, the pattern space as a command".to_owned()
                } else {
                    format!("`e {}`", command.trim())
                };
                self.findings.push(SedFinding::Runs(shown));
                Ok(())
            }
            's' => self.substitute(),
            'y' => {
                let delimiter = self.delimiter()?;
                self.delimited(delimiter, false)?;
                self.delimited(delimiter, false)?;
                self.end_of_command()
            }
            other => Err(format!("`{other}` is not a sed command cairn knows")),
        }
    }

    /// An address, if one starts here: a line number (`3`, `0`, `first~step`), `$`, or a
    /// regular expression (`/re/`, `\cREc`) with its `I`/`M` flags.
    fn address(&mut self) -> Result<bool, String> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.number();
                if self.peek() == Some('~') {
                    self.at += 1;
                    self.number();
                }
                Ok(true)
            }
            Some('$') => {
                self.at += 1;
                Ok(true)
            }
            Some('/') => {
                self.at += 1;
                self.delimited('/', true)?;
                self.regex_flags();
                Ok(true)
            }
            Some('\\') => {
                self.at += 1;
                let delimiter = self.delimiter()?;
                self.delimited(delimiter, true)?;
                self.regex_flags();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// The address after `,`: any first address, or `+N` / `~N`.
    fn second_address(&mut self) -> Result<bool, String> {
        if matches!(self.peek(), Some('+' | '~')) {
            self.at += 1;
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err("expected a number after `+` or `~`".into());
            }
            self.number();
            return Ok(true);
        }
        self.address()
    }

    fn number(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.at += 1;
        }
    }

    /// The delimiter of `s`, `y` or `\cREc`: any character but a newline or backslash.
    fn delimiter(&mut self) -> Result<char, String> {
        match self.next() {
            Some('\n' | '\\') | None => Err("bad delimiter".into()),
            Some(c) => Ok(c),
        }
    }

    /// Skips to the closing `delimiter`. In a regular expression a bracket expression
    /// (`[/]`, `[[:alpha:]/]`) hides the delimiter, as GNU sed reads it; an unescaped newline
    /// ends the command unterminated.
    fn delimited(&mut self, delimiter: char, regex: bool) -> Result<(), String> {
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated `s`, `y` or address".into()),
                Some('\\') => {
                    if self.next().is_none() {
                        return Err("trailing backslash".into());
                    }
                }
                Some('[') if regex => self.bracket()?,
                Some(c) if c == delimiter => return Ok(()),
                Some(_) => {}
            }
        }
    }

    /// The rest of a bracket expression after its `[`.
    fn bracket(&mut self) -> Result<(), String> {
        if self.peek() == Some('^') {
            self.at += 1;
        }
        if self.peek() == Some(']') {
            self.at += 1;
        }
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated bracket expression".into()),
                Some(']') => return Ok(()),
                Some('[') if matches!(self.peek(), Some(':' | '.' | '=')) => {
                    let kind = self.next().unwrap_or(':');
                    loop {
                        match self.next() {
                            None | Some('\n') => {
                                return Err("unterminated character class".into());
                            }
                            Some(c) if c == kind && self.peek() == Some(']') => {
                                self.at += 1;
                                break;
                            }
                            Some(_) => {}
                        }
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// `s/re/replacement/flags`.
    fn substitute(&mut self) -> Result<(), String> {
        let delimiter = self.delimiter()?;
        self.delimited(delimiter, true)?;
        self.delimited(delimiter, false)?;
        loop {
            match self.peek() {
                None | Some('\n' | ';') => return Ok(()),
                Some('}' | '#') => return Ok(()),
                Some(c) if c.is_whitespace() => self.at += 1,
                Some('g' | 'p' | 'i' | 'I' | 'm' | 'M') => self.at += 1,
                Some(c) if c.is_ascii_digit() => self.at += 1,
                Some('e') => {
                    self.at += 1;
                    self.findings
                        .push(SedFinding::Runs("`s///e`, the pattern space".into()));
                }
                Some('w') => {
                    self.at += 1;
                    let file = self.file_name()?;
                    self.findings.push(SedFinding::Writes(file));
                    return Ok(());
                }
                Some(other) => return Err(format!("unknown option `{other}` to `s`")),
            }
        }
    }

    /// After a command: blanks, then the end of the line or script, `;`, or a `}` or `#`
    /// (left for the next command).
    fn end_of_command(&mut self) -> Result<(), String> {
        self.skip_blanks();
        match self.peek() {
            None | Some('}' | '#') => Ok(()),
            Some('\n' | ';') => {
                self.at += 1;
                Ok(())
            }
            Some(other) => Err(format!("unexpected `{other}` after a command")),
        }
    }

    /// A label (`:a`, `b end`): up to a blank, `;`, `}` or the end of the line, as GNU sed
    /// 4.9 reads it (`/x/{p;b}`).
    fn label(&mut self) -> String {
        self.skip_blanks();
        let mut label = String::new();
        while let Some(c) = self.peek() {
            if c.is_whitespace() || c == ';' || c == '}' {
                break;
            }
            label.push(c);
            self.at += 1;
        }
        label
    }

    /// A file name: after blanks, the rest of the line (`;` and `}` are part of it).
    fn file_name(&mut self) -> Result<String, String> {
        self.skip_blanks();
        let name = self.rest_of_line();
        if name.is_empty() {
            return Err("missing file name in r/R/w/W".into());
        }
        Ok(name)
    }

    fn rest_of_line(&mut self) -> String {
        let mut line = String::new();
        while let Some(c) = self.next() {
            if c == '\n' {
                break;
            }
            line.push(c);
        }
        line
    }

    /// The text of `a`, `i` or `c`: one line (GNU's `a text`) or, after `a\`, the lines
    /// that follow; a backslash before a newline continues it.
    fn text(&mut self) -> Result<(), String> {
        self.skip_blanks();
        match self.peek() {
            None => return Err("expected `\\` after `a`, `c` or `i`".into()),
            Some('\\') => {
                // GNU sed takes the character after `a\` as text as it is, a backslash or a
                // newline included: it escapes nothing.
                self.at += 2;
            }
            Some(_) => {}
        }
        while let Some(c) = self.next() {
            match c {
                '\\' => {
                    self.next();
                }
                '\n' => break,
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{SedFinding, parse_script};
    use pretty_assertions::assert_eq;

    fn reads(file: &str) -> SedFinding {
        SedFinding::Reads(file.into())
    }

    fn writes(file: &str) -> SedFinding {
        SedFinding::Writes(file.into())
    }

    #[test]
    fn scripts_that_only_read_and_print_have_no_findings() {
        let scripts = [
            "s/a/b/g",
            "1,20p",
            "/foo/d; s|x|y|2",
            ":label\nb label",
            ":a;N;$!ba;s/\\n/ /g",
            "1i hello; w not-a-file",
            "$a\\",
            "a\\\nline one\\\nline two",
            "0,/re/s//x/",
            "2,+3{p;d}",
            "1~2!{/x/I,/y/Mp}",
            "\\,a/b,p",
            "s/[/]/x/g",
            "s/[^/]*$//",
            "s/[[:alpha:]/]/x/",
            "y/abc/xyz/",
            "s/a/b/gI2p ; p",
            "# comment w out\np",
            "$!N;P;D",
            "l 5;q3",
            "F;=;z",
            "/a/{p;b}",
            "/a/{:x}",
        ];
        for script in scripts {
            assert_eq!(parse_script(script), Ok(vec![]), "{script}");
        }
    }

    #[test]
    fn files_and_commands_in_scripts_are_found() {
        let cases: Vec<(&str, Vec<SedFinding>)> = vec![
            ("s/a/b/w out.txt", vec![writes("out.txt")]),
            ("/x/w /etc/passwd;p", vec![writes("/etc/passwd;p")]),
            ("$W log", vec![writes("log")]),
            ("1r /etc/shadow", vec![reads("/etc/shadow")]),
            ("/x/{R secret\n}", vec![reads("secret")]),
            ("s/[/]/x/w out", vec![writes("out")]),
            ("y/a/b/;w o", vec![writes("o")]),
            ("a\\\ntext\nw second", vec![writes("second")]),
            // The character after `a\` is text as it is: this backslash escapes nothing.
            ("a\\\\\nw out", vec![writes("out")]),
        ];
        for (script, expected) in cases {
            assert_eq!(parse_script(script), Ok(expected), "{script}");
        }
        for script in ["1e rm -rf /", "s/x/id/e", "e", "s/a/b/ge", "/x/ !e ls"] {
            let findings = parse_script(script).unwrap_or_default();
            assert!(
                findings.iter().any(|f| matches!(f, SedFinding::Runs(_))),
                "{script}: {findings:?}"
            );
        }
    }

    #[test]
    fn what_gnu_sed_would_refuse_is_an_error() {
        for script in [
            "k", "s/a/b", "s/a/b/x", "{p", "}", "p x", "w", "s/[/x/", "1,p", "L",
        ] {
            assert!(parse_script(script).is_err(), "{script}");
        }
    }
}

#[cfg(all(test, feature = "interop"))]
mod interop {
    use super::SED;
    use crate::runners::help::missing;

    #[test]
    fn the_table_has_every_option_gnu_sed_lists() {
        assert_eq!(missing(&SED, "sed", &["--help"]), Vec::<String>::new());
    }
}
