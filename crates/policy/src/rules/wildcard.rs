//! `*` patterns over plain strings, as Bash rules and MCP tool-name rules write them.

/// A pattern in which `*` matches any run of characters, spaces and slashes included.
///
/// `\*`, `\\`, `\(` and `\)` stand for the character itself; any other backslash is literal.
/// Matching is on the whole string: `git *` matches `git status` but not `ungit status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Wildcard {
    /// The literal text around the stars: one more element than there are stars.
    literals: Vec<String>,
}

impl Wildcard {
    /// Splits `text` at its unescaped stars.
    pub(crate) fn parse(text: &str) -> Wildcard {
        let mut literals = vec![String::new()];
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(escaped @ ('*' | '\\' | '(' | ')')) => push_char(&mut literals, escaped),
                    Some(other) => {
                        push_char(&mut literals, '\\');
                        push_char(&mut literals, other);
                    }
                    None => push_char(&mut literals, '\\'),
                },
                '*' => literals.push(String::new()),
                c => push_char(&mut literals, c),
            }
        }
        Wildcard { literals }
    }

    /// How many unescaped stars the pattern has.
    pub(crate) fn star_count(&self) -> usize {
        self.literals.len().saturating_sub(1)
    }

    /// The pattern's text with escapes resolved, when it has no star.
    pub(crate) fn as_literal(&self) -> Option<&str> {
        match self.literals.as_slice() {
            [only] => Some(only),
            _ => None,
        }
    }

    /// The literal text before the first star.
    pub(crate) fn head(&self) -> &str {
        self.literals.first().map_or("", String::as_str)
    }

    /// Whether the whole of `text` matches.
    pub(crate) fn is_match(&self, text: &str) -> bool {
        let Some((first, rest)) = self.literals.split_first() else {
            return text.is_empty();
        };
        let Some((last, middle)) = rest.split_last() else {
            return text == first;
        };
        if text.len() < first.len() + last.len()
            || !text.starts_with(first.as_str())
            || !text.ends_with(last.as_str())
        {
            return false;
        }
        // With `*` as the only wildcard, taking each middle literal at its leftmost place
        // leaves the most room for the rest, so a greedy scan is exact.
        let mut window = &text[first.len()..text.len() - last.len()];
        for literal in middle {
            match window.find(literal.as_str()) {
                Some(at) => window = &window[at + literal.len()..],
                None => return false,
            }
        }
        true
    }
}

fn push_char(literals: &mut [String], c: char) {
    if let Some(last) = literals.last_mut() {
        last.push(c);
    }
}

/// Escapes the characters [`Wildcard::parse`] treats specially, so that `text` matches only
/// itself.
pub(crate) fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::{Wildcard, escape};

    #[test]
    fn stars_match_any_run_and_escapes_match_themselves() {
        let cases = [
            ("git *", "git status", true),
            ("git *", "git", false),
            ("git *", "gitk", false),
            ("* --help", "cargo --help", true),
            ("a*b*c", "abc", true),
            ("a*b*c", "aXbYbZc", true),
            ("a*b*c", "acb", false),
            ("ab*ba", "aba", false),
            ("echo \\*", "echo *", true),
            ("echo \\*", "echo x", false),
            ("echo \\\\n", "echo \\n", true),
            ("echo \\q", "echo \\q", true),
            ("", "", true),
            ("*", "", true),
        ];
        let got: Vec<(&str, &str, bool)> = cases
            .iter()
            .map(|(pattern, text, _)| (*pattern, *text, Wildcard::parse(pattern).is_match(text)))
            .collect();
        pretty_assertions::assert_eq!(got, cases.to_vec());
    }

    #[test]
    fn escape_round_trips() {
        let text = "echo * \\ done";
        assert_eq!(Wildcard::parse(&escape(text)).as_literal(), Some(text));
    }
}
