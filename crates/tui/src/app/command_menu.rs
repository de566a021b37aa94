//! The command menu: typing `/` at the start of the input box lists the slash commands, built
//! in and custom, narrowed as the name is typed.

use cairn_core::commands::{CommandSource, CommandTable};

/// One command the menu offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandEntry {
    /// Without the slash: `model`, `frontend:review`.
    pub name: String,
    /// What follows the name, as `/help` writes it: `[name]`, `<path>`.
    pub hint: Option<String>,
    pub description: String,
    /// Whether it does nothing useful without an argument (`/add-dir <path>`): choosing it
    /// fills in the name for the argument to follow instead of running it.
    pub needs_argument: bool,
}

/// The table's commands in its order: the built-ins, then the custom commands.
pub fn entries(table: &CommandTable) -> Vec<CommandEntry> {
    table
        .entries()
        .iter()
        .map(|entry| {
            let hint = entry.argument_hint.clone();
            // A built-in's hint in `<>` is required; a custom command's hint is all it says.
            let needs_argument = match entry.source {
                CommandSource::BuiltIn | CommandSource::Mcp => {
                    hint.as_ref().is_some_and(|hint| hint.starts_with('<'))
                }
                CommandSource::Project | CommandSource::User => hint.is_some(),
            };
            CommandEntry {
                name: entry.name.clone(),
                hint,
                description: entry.description.clone(),
                needs_argument,
            }
        })
        .collect()
}

/// The entries whose name matches `query`, best first: the name itself, names starting with
/// it, then names containing it, then names holding its letters in order. At most `limit`.
pub fn matches(entries: &[CommandEntry], query: &str, limit: usize) -> Vec<usize> {
    let query = query.to_lowercase();
    let mut ranked: Vec<(u8, usize)> = entries
        .iter()
        .enumerate()
        .filter_map(|(index, entry)| {
            let name = entry.name.to_lowercase();
            let rank = if name == query {
                0
            } else if name.starts_with(&query) {
                1
            } else if name.contains(&query) {
                2
            } else if is_subsequence(&query, &name) {
                3
            } else {
                return None;
            };
            Some((rank, index))
        })
        .collect();
    ranked.sort();
    ranked
        .into_iter()
        .take(limit)
        .map(|(_, index)| index)
        .collect()
}

fn is_subsequence(needle: &str, haystack: &str) -> bool {
    let mut rest = haystack.chars();
    needle.chars().all(|wanted| rest.any(|c| c == wanted))
}

/// The command name being typed: the whole box is `/` and a name, with the cursor at its end.
pub fn typed_name(text: &str, cursor: usize) -> Option<&str> {
    cairn_core::commands::completing_name(text).filter(|_| cursor == text.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_context::commands::{CommandScope, CommandSet, CustomCommand};
    use pretty_assertions::assert_eq;

    fn entries(custom: &[CustomCommand]) -> Vec<CommandEntry> {
        super::entries(&CommandTable::with_custom(CommandSet {
            commands: custom.to_vec(),
            unread: Vec::new(),
        }))
    }

    fn custom(name: &str, hint: Option<&str>) -> CustomCommand {
        CustomCommand {
            name: name.into(),
            scope: CommandScope::Project,
            path: format!("{name}.md").into(),
            description: Some(format!("the {name} command")),
            argument_hint: hint.map(Into::into),
            allowed_tools: Vec::new(),
            model: None,
            template: String::new(),
        }
    }

    fn names(entries: &[CommandEntry], found: &[usize]) -> Vec<String> {
        found
            .iter()
            .map(|&index| entries[index].name.clone())
            .collect()
    }

    #[test]
    fn lists_each_command_once_with_custom_ones_after() {
        let entries = entries(&[custom("review", Some("[file]"))]);
        let count = |name: &str| entries.iter().filter(|entry| entry.name == name).count();
        assert_eq!(count("permissions"), 1);
        assert_eq!(count("review"), 1);
        let add_dir = entries
            .iter()
            .find(|entry| entry.name == "add-dir")
            .unwrap();
        assert!(add_dir.needs_argument);
        let export = entries.iter().find(|entry| entry.name == "export").unwrap();
        assert!(!export.needs_argument, "its argument is optional");
        assert_eq!(entries.last().unwrap().name, "review");
    }

    #[test]
    fn prefix_matches_come_before_fuzzy_ones() {
        let entries = entries(&[custom("commit-push", None)]);
        assert_eq!(
            names(&entries, &matches(&entries, "co", 8))[..5],
            ["cost", "context", "config", "compact", "commit-push"]
        );
        assert_eq!(names(&entries, &matches(&entries, "mdl", 8)), ["model"]);
        let entries = self::entries(&[custom("c", None)]);
        assert_eq!(
            names(&entries, &matches(&entries, "c", 8))[0],
            "c",
            "exact first"
        );
        assert!(matches(&entries, "zzz", 8).is_empty());
        assert_eq!(matches(&entries, "", 3).len(), 3);
    }

    #[test]
    fn only_a_lone_name_at_the_start_is_completed() {
        assert_eq!(typed_name("/mo", 3), Some("mo"));
        assert_eq!(typed_name("/", 1), Some(""));
        assert_eq!(typed_name("/model opus", 11), None);
        assert_eq!(typed_name("/mo", 1), None);
        assert_eq!(typed_name("hi /mo", 6), None);
    }
}
