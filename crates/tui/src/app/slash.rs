//! What the interactive UI adds to the slash commands of the shared table
//! ([`cairn_core::commands`]): the key hints under `/help` and the note `/init` leaves in the
//! transcript. The table resolves every line; nothing here reads one.

use cairn_core::commands::CommandTable;

/// The note under `/init` in the transcript, instead of the whole prompt.
pub const INIT_NOTE: &str = "Asked the model to study the project and write or improve CLAUDE.md.";

/// The keys the input box answers to, under the commands in `/help`.
const KEY_HINTS: &str = "Keys: Enter sends · Shift+Enter, Alt+Enter, Ctrl+J or \\ then Enter for a new line · \
     Esc interrupts · Ctrl+O shows the whole transcript · Ctrl+C clears, twice to exit · \
     Ctrl+D on an empty line exits";

/// The `/help` text: the table's commands, then the keys.
pub fn help_text(table: &CommandTable) -> String {
    format!("{}\n{KEY_HINTS}", cairn_core::reports::help_text(table))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_context::commands::{CommandScope, CommandSet, CustomCommand};

    #[test]
    fn help_lists_the_commands_custom_ones_included_then_the_keys() {
        let greet = CustomCommand {
            name: "greet".into(),
            scope: CommandScope::Project,
            path: "greet.md".into(),
            description: Some("say hello".into()),
            argument_hint: None,
            allowed_tools: Vec::new(),
            model: None,
            template: "Say hello to $ARGUMENTS".into(),
        };
        let help = help_text(&CommandTable::with_custom(CommandSet {
            commands: vec![greet],
            unread: Vec::new(),
        }));
        assert!(help.starts_with("Commands:\n  /help "), "{help}");
        let keys = help
            .find("\nKeys: Enter sends")
            .unwrap_or_else(|| panic!("{help}"));
        let greet = help.find("  /greet").unwrap_or_else(|| panic!("{help}"));
        assert!(greet < keys, "{help}");
        assert!(help.contains("say hello"), "{help}");
        assert!(help.contains("  /status"), "{help}");
    }
}
