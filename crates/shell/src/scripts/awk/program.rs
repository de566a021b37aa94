//! An awk program tokenized (strings, regular expression literals, comments, continuations)
//! and scanned for what can run, write or read: `system`, `|`, `print >`, `getline <`, `@`,
//! `ARGV`/`ARGC`/`SYMTAB`, and calls of functions that are neither builtins nor defined.

/// The builtin functions, POSIX's and gawk's, none of which runs a program or writes a file
/// (`close` and `fflush` only finish what a redirection started, and those are judged).
pub(super) const BUILTINS: &[&str] = &[
    "length",
    "substr",
    "index",
    "split",
    "sub",
    "gsub",
    "match",
    "sprintf",
    "sin",
    "cos",
    "atan2",
    "exp",
    "log",
    "sqrt",
    "int",
    "rand",
    "srand",
    "tolower",
    "toupper",
    "close",
    "fflush",
    "gensub",
    "strftime",
    "systime",
    "mktime",
    "asort",
    "asorti",
    "patsplit",
    "isarray",
    "typeof",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
    "compl",
    "strtonum",
    "bindtextdomain",
    "dcgettext",
    "dcngettext",
    "mkbool",
];

pub(super) const KEYWORDS: &[&str] = &[
    "BEGIN",
    "END",
    "BEGINFILE",
    "ENDFILE",
    "if",
    "else",
    "while",
    "for",
    "do",
    "break",
    "continue",
    "next",
    "nextfile",
    "exit",
    "return",
    "delete",
    "in",
    "getline",
    "print",
    "printf",
    "function",
    "func",
    "switch",
    "case",
    "default",
];

/// Variables whose change makes awk read files named only at run time.
pub(super) const INPUT_VARIABLES: &[&str] = &["ARGV", "ARGC", "SYMTAB"];

/// What a program does beyond reading its input and printing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AwkFinding {
    Reads(String),
    Writes(String),
    /// Runs a command, loads code, or does what cairn cannot follow: never read-only.
    Beyond(String),
    /// Calls a function that is neither a builtin nor defined in the program.
    Unknown(String),
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Name(String),
    Number,
    Str(Option<String>),
    Regex,
    Punct(&'static str),
    Newline,
}

#[derive(Debug, Clone)]
struct Lexed {
    token: Token,
    /// Whether a `(` follows a name directly (a call of a user function must be written so).
    paren_follows: bool,
    /// Whether this `)` closes the condition of `if`, `while`, `for` or `switch`: a statement
    /// follows, which may start with a regular expression (gawk reads `if (x) /re/` so).
    ends_condition: bool,
}

const PUNCTS: &[&str] = &[
    "|&", "||", "&&", ">>", "<=", ">=", "==", "!=", "!~", "++", "--", "+=", "-=", "*=", "/=", "%=",
    "^=", "**", "|", "<", ">", "(", ")", "[", "]", "{", "}", ";", ",", "+", "-", "*", "/", "%",
    "^", "!", "~", "?", ":", "=", "$", "@",
];

/// Splits a program into tokens, telling a regular expression literal from a division by
/// what comes before it.
fn tokenize(program: &str) -> Result<Vec<Lexed>, String> {
    let chars: Vec<char> = program.chars().collect();
    let mut tokens: Vec<Lexed> = Vec::new();
    // For each open `(`, whether it opens a condition.
    let mut parens: Vec<bool> = Vec::new();
    let mut at = 0;
    while let Some(&c) = chars.get(at) {
        match c {
            '\\' if chars.get(at + 1) == Some(&'\n') => at += 2,
            '\\' if chars.get(at + 1) == Some(&'\r') && chars.get(at + 2) == Some(&'\n') => {
                at += 3;
            }
            '\n' => {
                tokens.push(lexed(Token::Newline));
                at += 1;
            }
            c if c.is_whitespace() => at += 1,
            '#' => {
                while chars.get(at).is_some_and(|&c| c != '\n') {
                    at += 1;
                }
            }
            '"' => {
                let (text, next) = string(&chars, at + 1)?;
                tokens.push(lexed(Token::Str(text)));
                at = next;
            }
            '/' if regex_may_start(tokens.last())? => {
                at = regex(&chars, at + 1)?;
                tokens.push(lexed(Token::Regex));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = at;
                while chars
                    .get(at)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    at += 1;
                }
                let name: String = chars.get(start..at).unwrap_or_default().iter().collect();
                tokens.push(Lexed {
                    token: Token::Name(name),
                    paren_follows: chars.get(at) == Some(&'('),
                    ends_condition: false,
                });
            }
            c if c.is_ascii_digit() || c == '.' => {
                while chars
                    .get(at)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '.')
                {
                    at += 1;
                }
                tokens.push(lexed(Token::Number));
            }
            _ => {
                let end = (at + 2).min(chars.len());
                let rest: String = chars.get(at..end).unwrap_or_default().iter().collect();
                let Some(punct) = PUNCTS
                    .iter()
                    .find(|punct| rest.starts_with(*punct) || rest == **punct)
                else {
                    return Err(format!("unexpected `{c}`"));
                };
                at += punct.chars().count();
                let mut token = lexed(Token::Punct(punct));
                match *punct {
                    "(" => parens.push(matches!(
                        tokens.last().map(|last| &last.token),
                        Some(Token::Name(name))
                            if matches!(name.as_str(), "if" | "while" | "for" | "switch")
                    )),
                    ")" => token.ends_condition = parens.pop().unwrap_or(false),
                    _ => {}
                }
                tokens.push(token);
            }
        }
    }
    Ok(tokens)
}

fn lexed(token: Token) -> Lexed {
    Lexed {
        token,
        paren_follows: false,
        ends_condition: false,
    }
}

/// A `/` starts a regular expression where an operand is expected: not after a value (a
/// name, number, string, `)`, `]`), but after the `)` of a condition (and after `$`: `$/re/`
/// is the field numbered by the match). After `length`
/// (a value, or a call without parentheses) and `++`/`--` (postfix or prefix) gawk and mawk
/// disagree: that is refused.
fn regex_may_start(previous: Option<&Lexed>) -> Result<bool, String> {
    let Some(previous) = previous else {
        return Ok(true);
    };
    Ok(match &previous.token {
        Token::Name(name) if name == "length" => {
            return Err("a `/` after `length` reads differently in different awks".into());
        }
        Token::Name(name) => KEYWORDS.contains(&name.as_str()) && name != "getline",
        Token::Number | Token::Str(_) | Token::Regex => false,
        Token::Punct("++" | "--") => {
            return Err("a `/` after `++` or `--` reads differently in different awks".into());
        }
        Token::Punct(")") => previous.ends_condition,
        Token::Punct(punct) => *punct != "]",
        Token::Newline => true,
    })
}

/// A string's value (`None` when it has escapes other than `\\`, `\"` and `\/`) and the
/// index after its closing quote.
fn string(chars: &[char], mut at: usize) -> Result<(Option<String>, usize), String> {
    let mut text = Some(String::new());
    loop {
        match chars.get(at) {
            None | Some('\n') => return Err("unterminated string".into()),
            Some('"') => return Ok((text, at + 1)),
            Some('\\') => {
                match chars.get(at + 1) {
                    Some(&c @ ('\\' | '"' | '/')) => {
                        if let Some(text) = &mut text {
                            text.push(c);
                        }
                    }
                    Some(_) => text = None,
                    None => return Err("unterminated string".into()),
                }
                at += 2;
            }
            Some(&c) => {
                if let Some(text) = &mut text {
                    text.push(c);
                }
                at += 1;
            }
        }
    }
}

/// The index after a regular expression literal's closing `/`. A `/` inside a bracket
/// expression is refused: awks differ on whether it ends the literal.
fn regex(chars: &[char], mut at: usize) -> Result<usize, String> {
    let mut in_bracket = false;
    loop {
        match chars.get(at) {
            None | Some('\n') => return Err("unterminated regular expression".into()),
            Some('\\') => at += 2,
            Some('/') if in_bracket => {
                return Err("a `/` inside `[…]` ends the expression in some awks only".into());
            }
            Some('/') => return Ok(at + 1),
            Some('[') if !in_bracket => {
                in_bracket = true;
                at += 1;
                if chars.get(at) == Some(&'^') {
                    at += 1;
                }
                if chars.get(at) == Some(&']') {
                    at += 1;
                }
            }
            Some(']') => {
                in_bracket = false;
                at += 1;
            }
            Some(_) => at += 1,
        }
    }
}

/// Lists what a program reads, writes and runs; an error when it cannot be tokenized.
pub(crate) fn scan_program(program: &str) -> Result<Vec<AwkFinding>, String> {
    let tokens = tokenize(program)?;
    let defined: Vec<&str> = tokens
        .windows(2)
        .filter_map(|pair| match (&pair[0].token, &pair[1].token) {
            (Token::Name(keyword), Token::Name(name))
                if keyword == "function" || keyword == "func" =>
            {
                Some(name.as_str())
            }
            _ => None,
        })
        .collect();
    let mut findings = Vec::new();
    for (index, lexed) in tokens.iter().enumerate() {
        match &lexed.token {
            Token::Punct("|" | "|&") => findings.push(AwkFinding::Beyond(
                "pipes to or from a command (`|`)".into(),
            )),
            Token::Punct("@") => findings.push(AwkFinding::Beyond(
                "uses gawk's `@` (loading code, or calling a function by name)".into(),
            )),
            Token::Name(name) if name == "system" => {
                findings.push(AwkFinding::Beyond("runs a command with system()".into()));
            }
            Token::Name(name) if INPUT_VARIABLES.contains(&name.as_str()) => {
                findings.push(AwkFinding::Beyond(format!(
                    "uses {name}, which can name the files it reads at run time"
                )));
            }
            Token::Name(name) if name == "print" || name == "printf" => {
                output_redirect(&tokens[index + 1..], &mut findings);
            }
            Token::Name(name) if name == "getline" => {
                input_redirect(&tokens[index + 1..], &mut findings);
            }
            Token::Name(name) => {
                let called = lexed.paren_follows
                    || (BUILTINS.contains(&name.as_str())
                        && matches!(
                            tokens.get(index + 1).map(|next| &next.token),
                            Some(Token::Punct("("))
                        ));
                let after_function = index > 0
                    && matches!(&tokens[index - 1].token,
                        Token::Name(keyword) if keyword == "function" || keyword == "func");
                if called
                    && !after_function
                    && !KEYWORDS.contains(&name.as_str())
                    && !BUILTINS.contains(&name.as_str())
                    && !defined.contains(&name.as_str())
                {
                    findings.push(AwkFinding::Unknown(name.clone()));
                }
            }
            _ => {}
        }
    }
    Ok(findings)
}

/// The `>`/`>>` of a `print` statement: outside parentheses, before the statement ends.
fn output_redirect(rest: &[Lexed], findings: &mut Vec<AwkFinding>) {
    let mut depth = 0usize;
    let mut previous: Option<&Token> = None;
    for (index, lexed) in rest.iter().enumerate() {
        match &lexed.token {
            Token::Punct("(" | "[") => depth += 1,
            Token::Punct(")" | "]") => depth = depth.saturating_sub(1),
            Token::Punct(";" | "}") if depth == 0 => return,
            Token::Newline
                if depth == 0 && !matches!(previous, Some(Token::Punct("," | "&&" | "||"))) =>
            {
                return;
            }
            Token::Punct(">" | ">>") if depth == 0 => {
                let target = rest.get(index + 1).map(|next| &next.token);
                let after = rest.get(index + 2).map(|next| &next.token);
                let ends = matches!(after, None | Some(Token::Newline | Token::Punct(";" | "}")));
                match (target, ends) {
                    (Some(Token::Str(Some(file))), true) => {
                        findings.push(AwkFinding::Writes(file.clone()));
                    }
                    _ => findings.push(AwkFinding::Beyond(
                        "prints to a file named only at run time".into(),
                    )),
                }
                return;
            }
            _ => {}
        }
        previous = Some(&lexed.token);
    }
}

/// `getline [var] < FILE`.
fn input_redirect(rest: &[Lexed], findings: &mut Vec<AwkFinding>) {
    let mut at = 0;
    match rest.first().map(|lexed| &lexed.token) {
        Some(Token::Name(name)) if !KEYWORDS.contains(&name.as_str()) => {
            at = 1;
            at = skip_subscript(rest, at);
        }
        Some(Token::Punct("$")) => {
            at = 1;
            match rest.get(at).map(|lexed| &lexed.token) {
                Some(Token::Number) => at += 1,
                Some(Token::Name(_)) => at = skip_subscript(rest, at + 1),
                Some(Token::Punct("(")) => at = skip_group(rest, at),
                _ => {
                    findings.push(AwkFinding::Beyond(
                        "uses a `getline` cairn cannot read".into(),
                    ));
                    return;
                }
            }
        }
        _ => {}
    }
    if !matches!(
        rest.get(at).map(|lexed| &lexed.token),
        Some(Token::Punct("<"))
    ) {
        return;
    }
    let target = rest.get(at + 1).map(|lexed| &lexed.token);
    let after = rest.get(at + 2).map(|lexed| &lexed.token);
    let joined = matches!(
        after,
        Some(Token::Punct("+" | "-" | "*" | "/" | "%" | "^" | "**" | "$"))
            | Some(Token::Str(_) | Token::Name(_) | Token::Number)
    );
    match (target, joined) {
        (Some(Token::Str(Some(file))), false) => findings.push(AwkFinding::Reads(file.clone())),
        _ => findings.push(AwkFinding::Beyond(
            "reads a file named only at run time (`getline <`)".into(),
        )),
    }
}

fn skip_subscript(tokens: &[Lexed], at: usize) -> usize {
    match tokens.get(at).map(|lexed| &lexed.token) {
        Some(Token::Punct("[")) => skip_group(tokens, at),
        _ => at,
    }
}

/// The index after the bracket or parenthesis group that opens at `at`.
fn skip_group(tokens: &[Lexed], mut at: usize) -> usize {
    let mut depth = 0usize;
    while let Some(lexed) = tokens.get(at) {
        at += 1;
        match lexed.token {
            Token::Punct("(" | "[") => depth += 1,
            Token::Punct(")" | "]") => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::{AwkFinding, scan_program};
    use pretty_assertions::assert_eq;

    #[test]
    fn programs_that_only_read_and_print_have_no_findings() {
        for program in [
            "{print $1}",
            "NR>1 {s+=$3} END {print s}",
            "BEGIN { FS=\":\" } $3 >= 1000 { print $1 }",
            "{ n = length($0) / 2; print n }",
            "/a|b/ { print (NF > 2) }",
            "function f(x) { return x*2 } { print f($1) }",
            "{ x = a / b / c }",
            "# print | \"sh\"\n{ print }",
            "{ print \"a|b\" }",
            "{ while ((getline line) > 0) n++ } END { print n }",
            "{ sub(/x/, \"y\"); gsub(/[0-9]+/, \"#\"); print toupper($0) }",
            "{ print $1,\n $2 }",
        ] {
            assert_eq!(scan_program(program), Ok(vec![]), "{program}");
        }
    }

    #[test]
    fn what_runs_writes_or_reads_is_found() {
        let cases: Vec<(&str, AwkFinding)> = vec![
            (
                "{ print > \"out.txt\" }",
                AwkFinding::Writes("out.txt".into()),
            ),
            (
                "{ printf(\"%s\", $1) >> \"log\" }",
                AwkFinding::Writes("log".into()),
            ),
            (
                "BEGIN { while ((getline l < \"/etc/passwd\") > 0) print l }",
                AwkFinding::Reads("/etc/passwd".into()),
            ),
            ("{ print $1,\n $2 > \"x\" }", AwkFinding::Writes("x".into())),
            (
                "$3 >= 1000 { print $1 > \"/dev/stderr\" }",
                AwkFinding::Writes("/dev/stderr".into()),
            ),
        ];
        for (program, expected) in cases {
            assert_eq!(scan_program(program), Ok(vec![expected]), "{program}");
        }
        for program in [
            "BEGIN { system(\"id\") }",
            "BEGIN { system (\"id\") }",
            "{ print | \"sh\" }",
            "BEGIN { \"date\" | getline d }",
            "BEGIN { print \"x\" |& \"cat\" }",
            "@load \"filefuncs\"",
            "BEGIN { f = \"system\"; @f(\"id\") }",
            "{ print > $2 }",
            "{ print > \"a\" \"b\" }",
            "{ getline x < FILENAME \".bak\" }",
            "BEGIN { ARGV[1] = \"/etc/shadow\"; ARGC = 2 } { print }",
            "{ if (1) /\"/ ; system(\"id\") ; x = /\"/ }",
            "{ while ((getline l) > 0) /\"/ ; system(\"id\") ; /\"/ }",
            "{ x = $ /\"/ ; system(\"id\") ; y = $ /\"/ }",
        ] {
            let findings = scan_program(program).unwrap_or_default();
            assert!(
                findings.iter().any(|f| matches!(f, AwkFinding::Beyond(_))),
                "{program}: {findings:?}"
            );
        }
        assert_eq!(
            scan_program("{ spawn(\"x\") }"),
            Ok(vec![AwkFinding::Unknown("spawn".into())])
        );
    }

    #[test]
    fn what_awks_read_differently_is_an_error() {
        for program in [
            "{ print length / 2 }",
            "/[/]/",
            "{ print \"x }",
            "{ x++ /\"/ ; system(\"id\") ; /\"/ }",
        ] {
            assert!(scan_program(program).is_err(), "{program}");
        }
    }
}
