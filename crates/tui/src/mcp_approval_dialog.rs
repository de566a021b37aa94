//! The question cairn asks, after the trust dialog and before the app starts, about each MCP
//! server of the project's `.mcp.json` that the settings neither enable nor disable: a
//! repository's file names a program to run, so it runs only once the user says so. The
//! choices are Claude Code's: this server and all future ones of the project
//! (`enableAllProjectMcpServers`), this server (`enabledMcpjsonServers`), or continue without
//! it (`disabledMcpjsonServers`); the caller writes the answer to the project's
//! `.claude/settings.local.json`.
//!
//! [`McpApprovalDialog`] is the state and the drawing, with no I/O;
//! [`run_mcp_approval_dialog`] owns the terminal while it asks.

use ratatui::crossterm::event::KeyEvent;
use ratatui::style::Style;

use crate::choice::{
    self, ChoiceBox, ChoiceDialog, ListKey, OptionLabel, OptionList, Overflow, wrapped,
};
use crate::theme::Theme;
use crate::wrap::{Prefix, sanitize};

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpApproval {
    /// `enableAllProjectMcpServers: true`: this one and every later one of the project.
    UseAll,
    /// Appended to `enabledMcpjsonServers`.
    Use,
    /// Appended to `disabledMcpjsonServers` (also Esc).
    Skip,
}

/// The options, in the order shown.
const CHOICES: [(McpApproval, &str); 3] = [
    (
        McpApproval::UseAll,
        "Use this and all future MCP servers in this project",
    ),
    (McpApproval::Use, "Use this MCP server"),
    (McpApproval::Skip, "Continue without using this MCP server"),
];

/// One server asked about, and where the cursor is (on "Use this MCP server").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpApprovalDialog {
    name: String,
    runs: String,
    options: OptionList,
}

impl McpApprovalDialog {
    /// The question about the server `name`, which would run `runs` (its command line, or its
    /// URL).
    pub fn new(name: &str, runs: &str) -> McpApprovalDialog {
        McpApprovalDialog {
            name: name.to_string(),
            runs: runs.to_string(),
            options: OptionList::new(CHOICES.len(), 1),
        }
    }

    /// Handles one key; returns the answer once there is one. Up/Down move, Enter or `1`–`3`
    /// choose, Esc continues without the server.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<McpApproval> {
        match self.options.handle_key(key)? {
            ListKey::Moved => None,
            ListKey::Chosen(index) => Some(CHOICES[index].0),
            ListKey::Cancelled => Some(McpApproval::Skip),
        }
    }
}

impl ChoiceDialog for McpApprovalDialog {
    fn layout(&self, width: u16, theme: &Theme) -> ChoiceBox {
        let columns = usize::from(width);
        let mut body = wrapped(
            format!(
                "This project's .mcp.json has the MCP server \"{}\", which would run:",
                sanitize(&self.name)
            ),
            Style::new(),
            columns,
            &Prefix::none(),
        );
        body.extend(wrapped(
            sanitize(&self.runs),
            theme.warning,
            columns,
            &Prefix::hanging("  ".into()),
        ));
        ChoiceBox {
            title: "New MCP server found in .mcp.json",
            body,
            overflow: Overflow::Cut,
            question: wrapped(
                "MCP servers may run code, reach the network and read your files. Use it?",
                Style::new(),
                columns,
                &Prefix::none(),
            ),
            options: CHOICES
                .iter()
                .map(|&(_, label)| OptionLabel::plain(label))
                .collect(),
            selected: self.options.selected(),
            below: Vec::new(),
            hint: "↑↓ to select · enter to confirm · esc to continue without it",
        }
    }
}

/// Asks about one server on the terminal, inline, before the app starts (blocking: call it
/// off the async runtime's threads).
pub fn run_mcp_approval_dialog(
    name: &str,
    runs: &str,
    theme: &Theme,
) -> std::io::Result<McpApproval> {
    choice::ask_inline(
        McpApprovalDialog::new(name, runs),
        theme,
        McpApprovalDialog::handle_key,
    )
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};

    use super::*;
    use crate::choice::plain_rows as rows;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn the_question_names_the_server_what_it_runs_and_the_three_choices() {
        let dialog = McpApprovalDialog::new("notes", "npx -y notes-server --port 3");
        let shown = rows(&dialog, 80, 16).join("\n");
        for expected in [
            "New MCP server found in .mcp.json",
            "MCP server \"notes\", which would run:",
            "npx -y notes-server --port 3",
            "1. Use this and all future MCP servers in this project",
            "❯ 2. Use this MCP server",
            "3. Continue without using this MCP server",
        ] {
            assert!(shown.contains(expected), "{expected:?} in\n{shown}");
        }
    }

    #[test]
    fn each_key_gives_its_answer() {
        let answer = |code| McpApprovalDialog::new("s", "x").handle_key(key(code));
        assert_eq!(answer(KeyCode::Enter), Some(McpApproval::Use));
        assert_eq!(answer(KeyCode::Char('1')), Some(McpApproval::UseAll));
        assert_eq!(answer(KeyCode::Char('3')), Some(McpApproval::Skip));
        assert_eq!(answer(KeyCode::Esc), Some(McpApproval::Skip));
        let mut dialog = McpApprovalDialog::new("s", "x");
        assert_eq!(dialog.handle_key(key(KeyCode::Down)), None);
        assert_eq!(
            dialog.handle_key(key(KeyCode::Enter)),
            Some(McpApproval::Skip)
        );
    }
}
