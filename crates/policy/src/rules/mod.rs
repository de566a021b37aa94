//! Permission rules in Claude Code's syntax, and the rule that decides a tool call.
//!
//! Rules come from the `permissions.allow`, `permissions.ask` and `permissions.deny` lists of
//! settings files and from flags. Each is `Tool` or `Tool(specifier)`:
//!
//! | rule                              | matches                                                  |
//! |-----------------------------------|----------------------------------------------------------|
//! | `Bash`, `Read`, `WebFetch`        | every call of the tool (`Bash(*)` too)                   |
//! | `Bash(npm run build)`             | that exact command                                       |
//! | `Bash(git *)`                     | `*` is any text: `git status`, and `git` alone; not `gitk` |
//! | `Bash(npm test:*)`                | legacy prefix: `npm test`, `npm test --watch`; not `npm testing` |
//! | `Edit(src/**)`                    | files under `<cwd>/src`, written by Edit, Write, MultiEdit or NotebookEdit |
//! | `Read(./.env)`, `Read(*.env)`     | read by Read, Glob, Grep or LS (for those three, the directory searched) |
//! | `Read(//etc/**)`, `Read(~/.ssh/**)` | from the filesystem root; from home                    |
//! | `Edit(/src/**)`                   | from the rule's [`RuleOrigin::base_dir`] (see there)     |
//! | `WebFetch(domain:example.com)`    | fetches of that host; `domain:*.example.com` its subdomains |
//! | `Skill(changelog)`, `Skill(review:*)` | loading that skill; those whose names start with `review` |
//! | `mcp__github`, `mcp__github__*`   | every tool of that MCP server                            |
//! | `mcp__github__get_issue`          | that one tool; `mcp__github__get_*` a pattern of them    |
//!
//! Tool names are compared exactly, as canonical names. Paths are detailed [below](#paths).
//!
//! # Deciding a call
//!
//! [`RuleSet::evaluate`] returns the deciding rule: any matching deny rule, else any matching
//! ask rule, else an allow rule, whatever order they were written in. A Bash command line is
//! judged by its simple commands: `Bash(git *)` does not allow `git status && rm -rf ~`,
//! because `rm -rf ~` matches no allow rule, while a deny rule matching any one part denies the
//! whole line. Likewise a call touching several paths is allowed only if every path is.
//!
//! # Paths
//!
//! Read and Edit specifiers are gitignore-style globs (`*` within a segment, `**` across):
//!
//! | written          | anchored at                          |
//! |------------------|--------------------------------------|
//! | `//path`         | the filesystem root                  |
//! | `~/path`         | the home directory                   |
//! | `/path`          | the rule's [`RuleOrigin::base_dir`]  |
//! | `path`, `./path` | the working directory, [`CallFacts::cwd`] |
//!
//! A relative pattern without a slash (`*.env`) matches at any depth under the working
//! directory; `dir/**` in a deny or ask rule also matches a `dir` at any depth, while in an
//! allow rule it covers `<cwd>/dir` only (as in Claude Code since 2.1.214). A pattern naming a
//! directory covers what is inside it; in an allow rule, only when its last segment is literal
//! (`Edit(src)` covers `src/a/b.rs`, `Edit(src/*)` does not).
//!
//! # Malformed rules
//!
//! A rule that does not parse is reported as a [`RuleError`] naming its source and text, and
//! left out: it neither allows nor denies anything. That covers unbalanced or empty
//! parentheses, `*` in a tool name outside `mcp__server__*`, a tool name in the wrong case
//! (`bash`), and specifiers a tool does not take: path rules on Write, MultiEdit, NotebookEdit,
//! Glob, Grep or LS (Claude Code accepts these and never consults them; here the message says
//! to write them on `Edit` or `Read`), `domain:` outside WebFetch, parentheses on MCP rules, and
//! any specifier on other tools.

mod command_pattern;
mod domain_pattern;
mod path_pattern;
mod rule;
mod rule_set;
mod skill_pattern;
mod suggest;
mod tool_selector;
mod wildcard;

pub use path_pattern::PrefixReach;
pub(crate) use rule::Specifier;
pub use rule::{Rule, RuleError, RuleKind, RuleOrigin};
pub use rule_set::{CallFacts, RuleSet};
pub use tool_selector::{EDIT_TOOLS, READ_TOOLS, TOOL_ALIASES, names_of};

/// Splits a list of rules as `--allowedTools` takes it, and as a suggestion for a compound
/// command is written: separated by commas or spaces outside parentheses.
///
/// ```
/// use cairn_policy::rules::split_rule_list;
///
/// assert_eq!(
///     split_rule_list("Bash(git log:*) Read, Edit(src/a b.rs)"),
///     ["Bash(git log:*)", "Read", "Edit(src/a b.rs)"]
/// );
/// ```
pub fn split_rule_list(list: &str) -> Vec<String> {
    let mut rules = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in list.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' | ' ' if depth == 0 => {
                if !current.trim().is_empty() {
                    rules.push(current.trim().to_string());
                }
                current.clear();
            }
            _ => current.push(c),
        }
    }
    if !current.trim().is_empty() {
        rules.push(current.trim().to_string());
    }
    rules
}
