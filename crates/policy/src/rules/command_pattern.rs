//! The specifier of a Bash rule: `Bash(npm run build)`, `Bash(git *)`, `Bash(npm test:*)`.

use super::wildcard::Wildcard;

/// What a Bash rule's specifier matches, judged against one simple command at a time (its
/// words joined by single spaces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CommandPattern {
    /// `Bash(npm run build)`: that command and nothing else.
    Exact(String),
    /// `Bash(npm test:*)`, the legacy form: the command itself, or it followed by a space and
    /// anything (`npm test --watch`), but not `npm testing`.
    Prefix(String),
    /// `Bash(git * main)`: `*` matches any run of characters, spaces included. When the
    /// pattern's only star ends it after a space (`git *`), the command without arguments
    /// matches too (`git`), as in Claude Code; `ls*` has no such word boundary and matches
    /// `lsof`.
    Wildcard {
        pattern: Wildcard,
        /// The command that also matches when the trailing ` *` is left out.
        bare: Option<String>,
    },
}

impl CommandPattern {
    /// Reads a specifier; `*` alone is handled by the caller as "every command".
    pub(crate) fn parse(spec: &str) -> Result<CommandPattern, String> {
        if let Some(prefix) = spec.strip_suffix(":*") {
            let prefix = Wildcard::parse(prefix.trim_end());
            return match prefix.as_literal() {
                Some("") => Err(
                    "the prefix before `:*` is empty; write `Bash` to match every command"
                        .to_owned(),
                ),
                Some(prefix) => Ok(CommandPattern::Prefix(prefix.to_owned())),
                None => Err(format!(
                    "the legacy `:*` suffix cannot be combined with other `*` wildcards; write \
                     `Bash({} *)` instead",
                    spec.trim_end_matches(":*").trim_end()
                )),
            };
        }
        let pattern = Wildcard::parse(spec);
        if let Some(command) = pattern.as_literal() {
            return Ok(CommandPattern::Exact(command.to_owned()));
        }
        let bare = match (pattern.star_count(), spec.strip_suffix(" *")) {
            (1, Some(_)) => Some(pattern.head().trim_end().to_owned()),
            _ => None,
        };
        Ok(CommandPattern::Wildcard { pattern, bare })
    }

    /// Whether one simple command matches.
    pub(crate) fn matches(&self, command: &str) -> bool {
        match self {
            CommandPattern::Exact(exact) => command == exact,
            CommandPattern::Prefix(prefix) => command
                .strip_prefix(prefix.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' ')),
            CommandPattern::Wildcard { pattern, bare } => {
                pattern.is_match(command) || bare.as_deref() == Some(command)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CommandPattern;

    #[test]
    fn parses_the_three_forms() {
        let got: Vec<Result<CommandPattern, String>> =
            ["npm run build", "npm test:*", "npm test :*"]
                .iter()
                .map(|spec| CommandPattern::parse(spec))
                .collect();
        pretty_assertions::assert_eq!(
            got,
            vec![
                Ok(CommandPattern::Exact("npm run build".to_owned())),
                Ok(CommandPattern::Prefix("npm test".to_owned())),
                Ok(CommandPattern::Prefix("npm test".to_owned())),
            ]
        );
    }

    #[test]
    fn an_escaped_trailing_star_is_not_a_wildcard() {
        let pattern =
            CommandPattern::parse("echo \\*").map(|p| (p.matches("echo *"), p.matches("echo x")));
        assert_eq!(pattern, Ok((true, false)));
    }
}
