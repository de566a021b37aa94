//! Text Bash evaluates although it looks like data: arithmetic and the array subscripts in
//! it, and the variable names builtins take.
//!
//! In an arithmetic context (`$((…))`, `((…))`, `let`, `[[ a -eq b ]]`, a subscript, the
//! offsets of `${x:1:2}`, a `declare -i` variable), Bash evaluates a variable's value as an
//! expression in turn, and an array subscript in it is expanded, running any `$(…)` inside:
//! `v='a[$(rm -rf ~)]'; echo $((v))` runs `rm`, from text that was single-quoted. Builtins
//! that take a variable name (`read`, `printf -v`, `declare`, `test -v`, …) evaluate a
//! subscript in the name the same way.
//!
//! The rule: every arithmetic operand must be a plain number or name, and every name must be
//! a plain identifier, whose values this command line sets only to such text. A variable the
//! command never sets comes from the environment cairn started the shell with, which a model
//! cannot change (each call gets a fresh shell), so `i=$((i+1))` stays read-only. Anything
//! else makes the command [`super::BashVerdict::Unanalysable`].
//!
//! Values are gathered from the whole command line before any check is made, so a loop that
//! assigns a variable after using it is judged by every value it can take.

use std::collections::{HashMap, HashSet};

use super::classify::Analyzer;
use super::declarations::{Target, check_name};
use super::options::{OptionSpec, parse_args};
use super::parse::{Evaluation, Invocation, InvocationKind, Script};
use super::variables;
use super::word::{Piece, SubstitutionKind, Word};

/// Variables whose values refer to other variables, deeper than this, are not followed.
const MAX_INDIRECTION: usize = 8;

/// Variables Bash fills from text it reads or matches (`read` with no name sets REPLY,
/// `[[ x =~ re ]]` sets BASH_REMATCH, `cd` sets PWD): never assigned in the command line, yet
/// not from cairn's environment either.
const SET_BY_THE_SHELL: &[&str] = &[
    "REPLY",
    "MAPFILE",
    "OPTARG",
    "BASH_REMATCH",
    "BASH_COMMAND",
    "BASH_EXECUTION_STRING",
    "BASH_ARGV",
    "BASH_SOURCE",
    "FUNCNAME",
    "PWD",
    "OLDPWD",
    "DIRSTACK",
    "READLINE_LINE",
    "COMP_LINE",
    "COMP_WORDS",
    "_",
];

/// What the command line assigns to each variable, and the arithmetic it evaluates; judged
/// once the whole line (and any `bash -c` or `eval` text in it) has been read.
#[derive(Debug, Default)]
pub(crate) struct Evaluations {
    /// Every value each variable is given anywhere in the command line.
    values: HashMap<String, Vec<Value>>,
    /// Variables declared with `-i`: every value given to them is arithmetic.
    integers: HashSet<String>,
    /// Arithmetic text to check, with what it is, for the reason sentence.
    pending: Vec<Pending>,
}

/// One value a variable is given.
#[derive(Debug, Clone)]
enum Value {
    /// Text known now; `${name}` stands for another variable's value.
    Text(String),
    /// Known only at run time; the sentence says where it comes from.
    Runtime(String),
}

/// A check made once every value in the command line is known; `what` names the text for
/// the reason sentence.
#[derive(Debug)]
enum Pending {
    /// Text evaluated as arithmetic.
    Arithmetic { text: String, what: String },
    /// Evaluated, and already known to be unsafe: `problem` says why.
    Unsafe { what: String, problem: String },
    /// A builtin's first operand that starts with this variable's value, which would be read
    /// as an option (`printf "$x" …` with `x=-v`).
    LeadingVariable { builtin: String, name: String },
}

impl Evaluations {
    /// Learns the values a script gives its variables and the arithmetic it evaluates.
    pub(crate) fn learn(&mut self, script: &Script) {
        for invocation in &script.invocations {
            self.learn_invocation(invocation);
        }
        for variable in &script.loop_variables {
            let values = match &variable.values {
                None => vec![Value::Runtime(
                    "the positional parameters of a loop".to_owned(),
                )],
                Some(words) => words.iter().map(loop_value).collect(),
            };
            self.assign_all(&variable.name, values);
        }
        for evaluation in &script.evaluations {
            match evaluation {
                Evaluation::Arithmetic(text) => {
                    self.check_later(text, format!("`{text}` as arithmetic"));
                }
                Evaluation::Parameter(source) => self.learn_parameter(source),
            }
        }
    }

    fn learn_invocation(&mut self, invocation: &Invocation) {
        let declares_integers = invocation.kind == InvocationKind::Declaration
            && invocation.words.iter().skip(1).any(|word| {
                word.literal()
                    .is_some_and(|text| text.starts_with('-') && text.contains('i'))
            });
        if declares_integers {
            for word in invocation.words.iter().skip(1) {
                let prefix = word.literal_prefix();
                let name = prefix
                    .split_once('=')
                    .map_or(prefix.as_str(), |(name, _)| name);
                if !name.starts_with('-') {
                    self.integers.insert(split_subscript(name).0.to_owned());
                }
            }
        }
        for assignment in &invocation.assignments {
            let (base, subscript) = split_subscript(&assignment.name);
            if let Some(subscript) = subscript {
                self.check_later(
                    subscript,
                    format!("the subscript of `{}=`", assignment.name),
                );
            }
            if declares_integers {
                self.integers.insert(base.to_owned());
            }
            let value = if assignment.appends {
                // `x+=…` joins text to what x held: the parts alone say little.
                Value::Runtime(format!("appended to with `{}+=`", assignment.name))
            } else {
                match arithmetic_text(&assignment.value) {
                    Ok(text) => Value::Text(text),
                    Err(problem) => Value::Runtime(problem),
                }
            };
            self.assign(base, value);
        }
        // Builtins that store what they read in the variables they are given.
        let words = skip_builtin_wrappers(&invocation.words);
        let Some((name, args)) = words.split_first() else {
            return;
        };
        let name = name.literal().unwrap_or_default();
        for target in name_operands(&name, args) {
            if let Some(text) = target.literal() {
                let (base, _) = split_subscript(&text);
                self.assign(base, Value::Runtime(format!("set by `{name}`")));
            }
        }
    }

    /// `${a[i]}`, `${x:off:len}`, `${!x}`, `${x@P}`, `${x:=v}`: the parts Bash evaluates.
    fn learn_parameter(&mut self, source: &str) {
        let Some(inner) = source
            .strip_prefix("${")
            .and_then(|rest| rest.strip_suffix('}'))
        else {
            return;
        };
        let (indirect, rest) = match inner.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (
                false,
                inner
                    .strip_prefix('#')
                    .filter(|r| !r.is_empty())
                    .unwrap_or(inner),
            ),
        };
        let (name, mut rest) = rest.split_at(parameter_name_len(rest));
        let mut whole_array = false;
        if let Some(after) = rest.strip_prefix('[') {
            let Some(close) = matching_bracket(after) else {
                self.unsafe_later(
                    format!("`{source}`"),
                    "its subscript is not closed".to_owned(),
                );
                return;
            };
            let subscript = after.get(..close).unwrap_or_default();
            whole_array = matches!(subscript, "@" | "*");
            if !whole_array {
                self.check_later(subscript, format!("the subscript in `{source}`"));
            }
            rest = after.get(close + 1..).unwrap_or_default();
        }
        if indirect && !whole_array && !rest.starts_with(['*', '@']) {
            // `${!x}` uses x's value as a variable name, subscript included.
            self.check_later(
                &format!("${{{name}}}"),
                format!("the variable name `{source}` reads"),
            );
        }
        if let Some(offsets) = rest.strip_prefix(':')
            && !offsets.starts_with(['-', '=', '?', '+'])
        {
            self.check_later(offsets, format!("the offsets in `{source}`"));
        }
        if rest.starts_with("@P") {
            self.check_later(
                &format!("${{{name}}}"),
                format!("the prompt `{source}` expands"),
            );
        }
        if rest.starts_with(":=") || rest.starts_with('=') {
            self.assign(name, Value::Runtime(format!("set by `{source}`")));
        }
    }

    fn assign(&mut self, name: &str, value: Value) {
        self.values.entry(name.to_owned()).or_default().push(value);
    }

    fn assign_all(&mut self, name: &str, values: Vec<Value>) {
        self.values
            .entry(name.to_owned())
            .or_default()
            .extend(values);
    }

    /// Arithmetic text to judge once every value in the command line is known.
    pub(crate) fn check_later(&mut self, text: &str, what: String) {
        self.pending.push(Pending::Arithmetic {
            text: text.to_owned(),
            what,
        });
    }

    /// Evaluated text already known to be unsafe, kept with the pending checks so that its
    /// sentence comes out with theirs.
    fn unsafe_later(&mut self, what: String, problem: String) {
        self.pending.push(Pending::Unsafe { what, problem });
    }

    /// The reason sentence for every pending check that could run a command.
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut sentences = Vec::new();
        for pending in &self.pending {
            let (what, problem) = match pending {
                Pending::Arithmetic { text, what } => (what, self.arithmetic_problem(text, 0)),
                Pending::Unsafe { what, problem } => (what, Some(problem.clone())),
                Pending::LeadingVariable { builtin, name } => {
                    if let Some(origin) = self.option_like(name) {
                        sentences.push(format!(
                            "`{builtin}` is given ${name} first, and {name} is {origin}: it could be read as an option such as -v, which names a variable Bash evaluates"
                        ));
                    }
                    continue;
                }
            };
            if let Some(problem) = problem {
                sentences.push(format!(
                    "Bash evaluates {what}, and {problem}: an array subscript in it could run a command"
                ));
            }
        }
        for (name, values) in &self.values {
            if !self.integers.contains(name) {
                continue;
            }
            for value in values {
                let problem = match value {
                    Value::Text(text) => self.arithmetic_problem(text, 0),
                    Value::Runtime(origin) => Some(format!("the value is {origin}")),
                };
                if let Some(problem) = problem {
                    sentences.push(format!(
                        "Bash evaluates what is assigned to the integer variable {name} as arithmetic, and {problem}: an array subscript in it could run a command"
                    ));
                }
            }
        }
        sentences.sort();
        sentences.dedup();
        sentences
    }

    /// The variables the command line's arithmetic assigns (`((HOME=1))`, `let x++`,
    /// `$((a[i]=2))`, `[[ 1 -eq HOME=2 ]]`), following the values of the names it reads,
    /// which Bash evaluates as arithmetic in turn (`v='HOME=1'; : $((v))`).
    pub(crate) fn arithmetic_assignments(&self) -> Vec<String> {
        let mut texts: Vec<(String, usize)> = self
            .pending
            .iter()
            .filter_map(|pending| match pending {
                Pending::Arithmetic { text, .. } => Some((text.clone(), 0)),
                Pending::Unsafe { .. } | Pending::LeadingVariable { .. } => None,
            })
            .collect();
        for name in &self.integers {
            texts.extend(self.text_values(name).map(|text| (text.to_owned(), 1)));
        }
        let mut assigned = Vec::new();
        let mut followed = HashSet::new();
        while let Some((text, depth)) = texts.pop() {
            let names = variables::arithmetic_names(&text);
            assigned.extend(names.assigned);
            // `$x=1` assigns the variable x names.
            for name in &names.through {
                for value in self.text_values(name) {
                    let (base, _) = split_subscript(value);
                    if is_identifier(base) {
                        assigned.push(base.to_owned());
                    }
                }
            }
            if depth >= MAX_INDIRECTION {
                continue;
            }
            for name in names.read {
                if followed.insert(name.clone()) {
                    texts.extend(
                        self.text_values(&name)
                            .map(|text| (text.to_owned(), depth + 1)),
                    );
                }
            }
        }
        assigned.sort();
        assigned.dedup();
        assigned
    }

    /// How many values the command line gives `name`, in every form it learns.
    pub(crate) fn value_count(&self, name: &str) -> usize {
        self.values.get(name).map_or(0, Vec::len)
    }

    fn text_values(&self, name: &str) -> impl Iterator<Item = &str> {
        self.values
            .get(name)
            .into_iter()
            .flatten()
            .filter_map(|value| match value {
                Value::Text(text) => Some(text.as_str()),
                Value::Runtime(_) => None,
            })
    }

    /// Why evaluating `text` as arithmetic could run a command, or `None` when it is only
    /// numbers, operators and names whose values are such text.
    fn arithmetic_problem(&self, text: &str, depth: usize) -> Option<String> {
        let mut chars = text.char_indices().peekable();
        while let Some((index, c)) = chars.next() {
            match c {
                _ if c.is_whitespace() => {}
                '+' | '-' | '*' | '/' | '%' | '<' | '>' | '=' | '!' | '&' | '|' | '^' | '~'
                | '?' | ':' | ',' | '(' | ')' | '[' | ']' | '"' => {}
                '0'..='9' => while chars.next_if(|(_, c)| is_number_char(*c)).is_some() {},
                'a'..='z' | 'A'..='Z' | '_' => {
                    let mut end = index + c.len_utf8();
                    while let Some((at, next)) = chars.next_if(|(_, c)| is_name_char(*c)) {
                        end = at + next.len_utf8();
                    }
                    let name = text.get(index..end).unwrap_or_default();
                    if let Some(problem) = self.variable_problem(name, depth) {
                        return Some(problem);
                    }
                }
                '$' => {
                    match chars.peek().map(|(_, c)| *c) {
                        // `$((…))` and `$[…]` nest arithmetic; the brackets are read as such.
                        Some('(') if text.get(index + 1..).is_some_and(|r| r.starts_with("((")) => {
                        }
                        Some('[') => {}
                        Some('(') => {
                            return Some("it contains a command substitution, whose output it would evaluate".to_owned());
                        }
                        Some('{') => {
                            let rest = text.get(index + 2..).unwrap_or_default();
                            let Some(close) = rest.find('}') else {
                                return Some("it contains an unclosed `${`".to_owned());
                            };
                            let inner = rest.get(..close).unwrap_or_default();
                            // Past `{`, the inside and `}`.
                            for _ in 0..inner.chars().count() + 2 {
                                chars.next();
                            }
                            if let Some(problem) = self.braced_problem(inner, depth) {
                                return Some(problem);
                            }
                        }
                        Some('#' | '?' | '$' | '!') => {
                            chars.next();
                        }
                        Some(first) if first.is_ascii_alphabetic() || first == '_' => {
                            let start = index + 1;
                            let mut end = start;
                            while let Some((at, next)) = chars.next_if(|(_, c)| is_name_char(*c)) {
                                end = at + next.len_utf8();
                            }
                            let name = text.get(start..end).unwrap_or_default();
                            if let Some(problem) = self.variable_problem(name, depth) {
                                return Some(problem);
                            }
                        }
                        _ => {
                            return Some(
                                "it uses a positional or special parameter, known only at run time"
                                    .to_owned(),
                            );
                        }
                    }
                }
                '`' => {
                    return Some(
                        "it contains a command substitution, whose output it would evaluate"
                            .to_owned(),
                    );
                }
                other => return Some(format!("it contains `{other}`")),
            }
        }
        None
    }

    /// Where `name`'s value comes from when it could start with `-`; `None` when every
    /// value is known text that does not.
    fn option_like(&self, name: &str) -> Option<String> {
        if SET_BY_THE_SHELL.contains(&name) {
            return Some("set by the shell".to_owned());
        }
        let values = self.values.get(name)?;
        values.iter().find_map(|value| match value {
            Value::Runtime(origin) => Some(origin.clone()),
            Value::Text(text) if text.starts_with(['-', '$']) => Some(format!("given `{text}`")),
            Value::Text(_) => None,
        })
    }

    /// `${…}` inside arithmetic: a name, or the length of one.
    fn braced_problem(&self, inner: &str, depth: usize) -> Option<String> {
        if inner == "#" || is_length_of_name(inner) {
            return None;
        }
        if is_identifier(inner) {
            return self.variable_problem(inner, depth);
        }
        Some(format!(
            "it contains `${{{inner}}}`, known only at run time"
        ))
    }

    /// Why the value of `name` could run a command when evaluated, or `None`.
    fn variable_problem(&self, name: &str, depth: usize) -> Option<String> {
        if SET_BY_THE_SHELL.contains(&name) {
            return Some(format!(
                "{name} is set by the shell from text known only at run time"
            ));
        }
        let Some(values) = self.values.get(name) else {
            // Never set in this command line: from the environment cairn gave the shell.
            return None;
        };
        if depth >= MAX_INDIRECTION {
            return Some(format!(
                "{name} refers to other variables too deeply to follow"
            ));
        }
        for value in values {
            match value {
                Value::Runtime(origin) => return Some(format!("{name} is {origin}")),
                Value::Text(text) => {
                    if self.arithmetic_problem(text, depth + 1).is_some() {
                        return Some(format!("{name} is given `{text}`"));
                    }
                }
            }
        }
        None
    }
}

/// Checks what a builtin does with the words it evaluates: `let`'s expressions, the names
/// `read`, `printf -v`, `mapfile`, `getopts`, `wait -p`, `test -v` take, and `mapfile -C`'s
/// callback.
pub(crate) fn judge(an: &mut Analyzer, name: &str, args: &[Word]) {
    match name {
        "let" => {
            for arg in args {
                an.evaluations
                    .check_word(arg, format!("`let {}` as arithmetic", arg.display()));
            }
        }
        "test" | "[" => {
            for pair in args.windows(2) {
                if let [flag, operand] = pair
                    && flag.literal().as_deref() == Some("-v")
                {
                    check_name(an, "test -v", operand, Target::Reads);
                }
            }
        }
        "mapfile" | "readarray" => {
            let parsed = parse_args(args, MAPFILE_OPTIONS);
            if parsed.has(&["-C"]) {
                an.unanalysable(format!(
                    "`{name} -C` evaluates its callback as a command for every few lines read"
                ));
            }
        }
        _ => {}
    }
    leading_operand(an, name, args);
    for target in name_operands(name, args) {
        check_name(an, name, &target, Target::Sets);
    }
}

/// A `[[ … ]]` test: the operands of its arithmetic operators, and `-v` names.
pub(crate) fn judge_test(an: &mut Analyzer, words: &[Word]) {
    const ARITHMETIC: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];
    // `[ a -eq b ]` wants plain integers and evaluates nothing; `[[ ]]` evaluates both sides.
    let opening = words.first().and_then(Word::literal).unwrap_or_default();
    let evaluates_arithmetic = opening == "[[";
    let label = format!("{opening} -v {}", if opening == "[[" { "]]" } else { "]" });
    for (index, word) in words.iter().enumerate() {
        let Some(operator) = word.literal() else {
            continue;
        };
        if evaluates_arithmetic && ARITHMETIC.contains(&operator.as_str()) {
            let neighbours = [index.checked_sub(1), Some(index + 1)];
            for operand in neighbours
                .into_iter()
                .flatten()
                .filter_map(|at| words.get(at))
            {
                an.evaluations.check_word(
                    operand,
                    format!(
                        "`{}`, an operand of {operator}, as arithmetic",
                        operand.display()
                    ),
                );
            }
        }
        if operator == "-v"
            && let Some(operand) = words.get(index + 1)
        {
            check_name(an, &label, operand, Target::Reads);
        }
    }
}

/// Options that take a value, for `mapfile`/`readarray`.
const MAPFILE_OPTIONS: OptionSpec<'static> = OptionSpec {
    with_value: &["-d", "-n", "-O", "-s", "-u", "-C", "-c"],
    stop_at_operand: true,
};

/// The words a builtin takes as names of variables it sets.
fn name_operands(name: &str, args: &[Word]) -> Vec<Word> {
    let option = |with_value: &[&str], option: &str| -> Vec<Word> {
        parse_args(
            args,
            OptionSpec {
                with_value,
                stop_at_operand: true,
            },
        )
        .values(&[option])
        .cloned()
        .collect()
    };
    match name {
        "read" => {
            let parsed = parse_args(
                args,
                OptionSpec {
                    with_value: &["-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"],
                    stop_at_operand: true,
                },
            );
            let mut names: Vec<Word> = parsed.values(&["-a"]).cloned().collect();
            names.extend(parsed.operands);
            names
        }
        "printf" => option(&["-v"], "-v"),
        "wait" => option(&["-p"], "-p"),
        "mapfile" | "readarray" => parse_args(args, MAPFILE_OPTIONS)
            .operands
            .into_iter()
            .take(1)
            .collect(),
        "getopts" => args.get(1).cloned().into_iter().collect(),
        _ => Vec::new(),
    }
}

/// `printf "$x" …` or `wait "$x" …`: a first operand that starts with a value known only at
/// run time could be `-v`/`-p`, making the next word a name Bash evaluates.
fn leading_operand(an: &mut Analyzer, name: &str, args: &[Word]) {
    if !matches!(name, "printf" | "wait") {
        return;
    }
    let parsed = parse_args(
        args,
        OptionSpec {
            with_value: &["-v", "-p"],
            stop_at_operand: true,
        },
    );
    let Some(first) = parsed.operands.first() else {
        return;
    };
    match first.pieces().first() {
        Some(Piece::Variable(variable)) => an.evaluations.pending.push(Pending::LeadingVariable {
            builtin: name.to_owned(),
            name: variable.clone(),
        }),
        Some(Piece::Substitution { source, .. }) => an.unanalysable(format!(
            "`{name}` is given {source} first, known only at run time: it could be read as an option such as -v, which names a variable Bash evaluates"
        )),
        Some(Piece::Text { .. }) | None => {}
    }
}

impl Evaluations {
    /// A word Bash evaluates as arithmetic after expanding it (`let`'s arguments, the
    /// operands of `[[ a -lt b ]]`).
    fn check_word(&mut self, word: &Word, what: String) {
        match arithmetic_text(word) {
            Ok(text) => self.check_later(&text, what),
            Err(problem) => self.unsafe_later(what, format!("it holds {problem}")),
        }
    }
}

/// A word as the arithmetic evaluator would see it after expansion, with `${name}` standing
/// for a variable's value; `Err` says what is known only at run time.
fn arithmetic_text(word: &Word) -> Result<String, String> {
    let mut text = String::new();
    for piece in word.pieces() {
        match piece {
            Piece::Text { text: part, .. } => text.push_str(part),
            Piece::Variable(name) => {
                text.push_str("${");
                text.push_str(name);
                text.push('}');
            }
            // Its value is a number; the expression itself is checked on its own.
            Piece::Substitution {
                kind: SubstitutionKind::Arithmetic,
                ..
            } => text.push('0'),
            Piece::Substitution {
                source,
                kind: SubstitutionKind::Parameter,
                ..
            } if source.starts_with("${#") => text.push('0'),
            Piece::Substitution { source, .. } => {
                return Err(format!("the output of {source}"));
            }
        }
    }
    Ok(text)
}

/// A loop variable's value from one word of its list: file names from a glob are known
/// only at run time.
fn loop_value(word: &Word) -> Value {
    let globs = word.pieces().iter().any(|piece| {
        matches!(piece, Piece::Text { text, quoted: false } if text.contains(['*', '?', '[']))
    });
    if globs {
        return Value::Runtime(format!("a file name matched by {}", word.display()));
    }
    match arithmetic_text(word) {
        Ok(text) => Value::Text(text),
        Err(problem) => Value::Runtime(problem),
    }
}

/// `a[i]` as `("a", Some("i"))`; a name without a subscript as `(name, None)`.
pub(crate) fn split_subscript(name: &str) -> (&str, Option<&str>) {
    match name.split_once('[') {
        Some((base, rest)) => (base, Some(rest.strip_suffix(']').unwrap_or(rest))),
        None => (name, None),
    }
}

/// The length of the parameter name at the start of `${…}`'s inside: an identifier, a
/// positional number, or one special character (`@`, `#`, `?`, …).
fn parameter_name_len(text: &str) -> usize {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) if first.is_ascii_alphabetic() || first == '_' => {
            text.find(|c: char| !is_name_char(c)).unwrap_or(text.len())
        }
        Some(first) if first.is_ascii_digit() => text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
        Some(first) => first.len_utf8(),
        None => 0,
    }
}

/// Where the `]` closing a subscript is, counting nested brackets.
fn matching_bracket(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (index, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' if depth == 0 => return Some(index),
            ']' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// `builtin read x` and `command printf -v x` store into names just as `read` does.
fn skip_builtin_wrappers(words: &[Word]) -> &[Word] {
    let mut rest = words;
    while let Some((first, after)) = rest.split_first() {
        match first.literal().as_deref() {
            Some("builtin" | "command") => rest = after,
            _ => break,
        }
    }
    rest
}

pub(crate) fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(is_name_char)
}

/// `#name`, `#name[@]`, `#name[*]`: a length, always a number.
fn is_length_of_name(inner: &str) -> bool {
    let Some(rest) = inner.strip_prefix('#') else {
        return false;
    };
    let name = rest
        .strip_suffix("[@]")
        .or_else(|| rest.strip_suffix("[*]"))
        .unwrap_or(rest);
    is_identifier(name)
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Digits and what may follow them in a number: `0x1f`, `16#ff`, `2#101`, `64#@_`.
fn is_number_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '#' | '@' | '_')
}
