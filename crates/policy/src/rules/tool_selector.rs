//! The tool-name half of a rule: `Bash`, `Edit`, `mcp__github`, `mcp__github__get_*`.

use super::wildcard::Wildcard;

/// The built-in tools that edit files: an `Edit` rule governs all of them, and `acceptEdits`
/// lets them write inside the workspace. The one list of them.
pub const EDIT_TOOLS: [&str; 4] = ["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// The built-in tools that read files; a `Read` rule governs all of them. For Glob, Grep and LS
/// the path judged is the directory searched. The one list of them.
pub const READ_TOOLS: [&str; 4] = ["Read", "Glob", "Grep", "LS"];

/// Tools known by two names, the current one first: a rule or hook matcher written for
/// either name governs a call of the tool under either (Claude Code renamed `KillShell` to
/// `TaskStop`). The one list of them.
pub const TOOL_ALIASES: [(&str, &str); 1] = [("TaskStop", "KillShell")];

/// `tool` and the other name it is known by, if any.
pub fn names_of(tool: &str) -> impl Iterator<Item = &str> {
    let other = TOOL_ALIASES.iter().find_map(|&(current, old)| {
        if tool == current {
            Some(old)
        } else if tool == old {
            Some(current)
        } else {
            None
        }
    });
    std::iter::once(tool).chain(other)
}

/// Claude Code's built-in tool names, to catch a rule written with the wrong case (`bash`),
/// which would otherwise never match anything.
const BUILT_IN_TOOLS: [&str; 21] = [
    "Agent",
    "Bash",
    "BashOutput",
    "Edit",
    "ExitPlanMode",
    "Glob",
    "Grep",
    "KillShell",
    "LS",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "Read",
    "SlashCommand",
    "Task",
    "TaskOutput",
    "TaskStop",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Write",
];

const MCP_PREFIX: &str = "mcp__";

/// Which tools a rule names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ToolSelector {
    /// One tool by its canonical name; `Edit` and `Read` also govern their families.
    Named(String),
    /// Every tool of one MCP server: `mcp__server` or `mcp__server__*`.
    McpServer(String),
    /// The tools of one MCP server whose names match a pattern: `mcp__server__get_*`.
    McpTools { server: String, tools: Wildcard },
}

impl ToolSelector {
    /// Reads the part of a rule before its parenthesis.
    pub(crate) fn parse(name: &str) -> Result<ToolSelector, String> {
        if name.is_empty() {
            return Err("the tool name is missing".to_owned());
        }
        if let Some(bad) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*')))
        {
            return Err(format!(
                "the tool name `{name}` contains {bad:?}; a tool name is letters, digits, `_` and `-`"
            ));
        }
        if let Some(rest) = name.strip_prefix(MCP_PREFIX) {
            return parse_mcp(name, rest);
        }
        if name.contains('*') {
            return Err(format!(
                "`*` in a tool name is only supported after an MCP server, as in `mcp__server__*`; \
                 write the tool's name, e.g. `Bash`, instead of `{name}`"
            ));
        }
        if let Some(known) = BUILT_IN_TOOLS
            .iter()
            .find(|known| known.eq_ignore_ascii_case(name) && **known != name)
        {
            return Err(format!(
                "tool names are case-sensitive: `{name}` matches no tool; write `{known}`"
            ));
        }
        Ok(ToolSelector::Named(name.to_owned()))
    }

    /// The name a plain rule was written with, for rules on one named tool.
    pub(crate) fn name(&self) -> Option<&str> {
        match self {
            ToolSelector::Named(name) => Some(name),
            ToolSelector::McpServer(_) | ToolSelector::McpTools { .. } => None,
        }
    }

    /// Whether a rule naming these tools governs a call of `tool`.
    pub(crate) fn governs(&self, tool: &str) -> bool {
        match self {
            ToolSelector::Named(name) => match name.as_str() {
                "Edit" => EDIT_TOOLS.contains(&tool),
                "Read" => READ_TOOLS.contains(&tool),
                name => names_of(tool).any(|known| known == name),
            },
            ToolSelector::McpServer(server) => {
                split_mcp_name(tool).is_some_and(|(s, _)| s == server.as_str())
            }
            ToolSelector::McpTools { server, tools } => {
                split_mcp_name(tool).is_some_and(|(s, t)| s == server.as_str() && tools.is_match(t))
            }
        }
    }
}

fn parse_mcp(name: &str, rest: &str) -> Result<ToolSelector, String> {
    let (server, tool) = match rest.split_once("__") {
        Some((server, tool)) => (server, Some(tool)),
        None => (rest, None),
    };
    if server.is_empty() {
        return Err(format!(
            "`{name}` names no MCP server; write `mcp__<server>` or `mcp__<server>__<tool>`"
        ));
    }
    if server.contains('*') {
        return Err(format!(
            "`*` is not supported in an MCP server's name (`{name}`); name the server, as in \
             `mcp__{}__*`",
            server.replace('*', "<server>")
        ));
    }
    match tool {
        None | Some("*") => Ok(ToolSelector::McpServer(server.to_owned())),
        Some("") => Err(format!(
            "`{name}` ends after the server; write `mcp__{server}` for all of its tools"
        )),
        Some(tool) if tool.contains('*') => Ok(ToolSelector::McpTools {
            server: server.to_owned(),
            tools: Wildcard::parse(tool),
        }),
        Some(_) => Ok(ToolSelector::Named(name.to_owned())),
    }
}

/// `mcp__server__tool` as (`server`, `tool`); None for a tool that is not an MCP tool.
fn split_mcp_name(tool: &str) -> Option<(&str, &str)> {
    let (server, name) = tool.strip_prefix(MCP_PREFIX)?.split_once("__")?;
    (!server.is_empty() && !name.is_empty()).then_some((server, name))
}
