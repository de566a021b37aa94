//! The reports: what `/help`, `/cost`, `/context`, `/status` and `/agents` answer, as plain text, the
//! same on every face.
//!
//! Each report is written from a plain struct of facts that the face fills with what it has
//! (the TUI from its running session, `cairn -p` from the session it resumed or started), so
//! no report reaches into a face. A face may add what only it has (the TUI adds its key hints
//! under `/help`).
//!
//! ```
//! use std::time::Duration;
//! use cairn_core::reports::{CostFacts, cost_report};
//!
//! let facts = CostFacts {
//!     usage: Default::default(),
//!     cost_usd: 0.0,
//!     cost_unknown: false,
//!     session_time: Duration::from_secs(3),
//!     agents: &[],
//! };
//! assert!(cost_report(&facts).starts_with("Total cost: $0.0000\n"));
//! ```

use std::path::Path;
use std::time::Duration;

use cairn_protocol::Usage;

use crate::agent::{AgentCatalog, ModelChoice, ToolChoice};
use crate::commands::CommandTable;

mod context;
pub mod doctor;

pub use context::{ContextFacts, ContextUsage, context_report};

/// The widest command column in `/help`; a longer usage puts its description on the next line.
const HELP_COLUMN: usize = 20;

/// The `/help` text: every command of `table` in its order (the built-ins, then the custom
/// commands), its usage and what it does in one column, its aliases after the description.
pub fn help_text(table: &CommandTable) -> String {
    let mut text = String::from("Commands:");
    for entry in table.entries() {
        let usage = entry.usage();
        let mut what = entry.description.clone();
        if !entry.aliases.is_empty() {
            let aliases: Vec<String> = entry
                .aliases
                .iter()
                .map(|alias| format!("/{alias}"))
                .collect();
            what.push_str(&format!(" (also {})", aliases.join(", ")));
        }
        if usage.chars().count() > HELP_COLUMN {
            text.push_str(&format!("\n  {usage}\n  {:HELP_COLUMN$} {what}", ""));
        } else {
            text.push_str(&format!("\n  {usage:<HELP_COLUMN$} {what}"));
        }
    }
    text
}

/// What `/cost` reports on: the session's tally.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostFacts<'a> {
    /// The tokens of every request of the session, its sub-agents' included.
    pub usage: Usage,
    /// The cost of the requests whose model has known prices, in USD.
    pub cost_usd: f64,
    /// Some request went to a model whose prices cairn does not know: `cost_usd` counts only
    /// the others.
    pub cost_unknown: bool,
    /// How long the session has run.
    pub session_time: Duration,
    /// What each sub-agent of the session took, in the order they started: part of the
    /// totals above, listed on their own so their cost can be seen.
    pub agents: &'a [AgentCost],
}

/// One sub-agent's share of the session's cost.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCost {
    /// Its role and task (`Explore: find the config loader`).
    pub label: String,
    /// How many requests it made.
    pub requests: u32,
    /// Its requests' tokens.
    pub usage: Usage,
    /// Their cost in USD; `None` when one went to a model of unknown prices.
    pub cost_usd: Option<f64>,
}

/// The `/cost` report: the cost (saying so when part of it is unknown), the tokens by kind,
/// and the session's time.
pub fn cost_report(facts: &CostFacts<'_>) -> String {
    let usage = &facts.usage;
    let cost = match (facts.cost_unknown, facts.cost_usd > 0.0) {
        (false, _) => format!("${:.4}", facts.cost_usd),
        (true, true) => format!(
            "${:.4} for the requests of known prices, plus requests to a model whose prices \
             cairn does not know",
            facts.cost_usd
        ),
        (true, false) => "unknown (the model's prices are not in cairn's registry)".to_owned(),
    };
    let mut text = format!(
        "Total cost: {cost}\nTokens: {} input, {} output, {} cache read, {} cache write\n\
         Session time: {}s",
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_input_tokens,
        usage.cache_creation_input_tokens,
        facts.session_time.as_secs()
    );
    if !facts.agents.is_empty() {
        text.push_str("\nSub-agents (in the totals):");
        for agent in facts.agents {
            let cost = agent
                .cost_usd
                .map_or_else(|| "cost unknown".to_string(), |usd| format!("${usd:.4}"));
            let requests = match agent.requests {
                1 => "1 request".to_string(),
                n => format!("{n} requests"),
            };
            text.push_str(&format!(
                "\n  {}: {cost}, {requests}, {} input, {} output tokens",
                agent.label,
                agent.usage.input_total(),
                agent.usage.output_tokens
            ));
        }
    }
    text
}

/// What `/status` reports on.
#[derive(Debug, Clone, Copy)]
pub struct StatusFacts<'a> {
    /// cairn's version.
    pub version: &'a str,
    /// The model the session runs on.
    pub model: &'a str,
    /// The environment variable the credential came from (never its value); empty or
    /// `none` for a server that takes no key (Ollama, vLLM).
    pub credential_variable: &'a str,
    /// As settings spell it: `default`, `acceptEdits`, …
    pub permission_mode: &'a str,
    /// The working directory.
    pub cwd: &'a Path,
    /// The session's id.
    pub session_id: &'a str,
    /// The settings files in force, or why they could not be read.
    pub settings_sources: Result<&'a [String], &'a str>,
}

/// The `/status` report: one fact a line.
pub fn status_report(facts: &StatusFacts<'_>) -> String {
    let sources = match facts.settings_sources {
        Ok([]) => "none".to_string(),
        Ok(sources) => sources.join(", "),
        Err(message) => message.to_string(),
    };
    let auth = match facts.credential_variable {
        "" | "none" => "none".to_string(),
        variable => format!("the {variable} environment variable"),
    };
    format!(
        "cairn {}\nModel: {}\nAuth: {auth}\nPermission mode: {}\nWorking directory: {}\n\
         Session: {}\nSettings: {sources}",
        facts.version,
        facts.model,
        facts.permission_mode,
        facts.cwd.display(),
        facts.session_id,
    )
}

/// The `/agents` report: each sub-agent the `Agent` tool can start, by name, with where it
/// comes from, its tools and model, and when to use it; `None` when the session offers no
/// `Agent` tool.
pub fn agents_report(catalog: Option<&AgentCatalog>) -> String {
    let Some(catalog) = catalog else {
        return "This session offers no Agent tool, so no sub-agent can be started.".into();
    };
    let mut text = String::from("Agents (the Agent tool's subagent_type):");
    for profile in catalog.profiles() {
        let origin = match (&profile.origin, &profile.path) {
            (None, _) => "built-in".to_string(),
            (Some(origin), Some(path)) => format!("{}, {}", origin.as_str(), path.display()),
            (Some(origin), None) => origin.as_str().to_string(),
        };
        let mut tools = match &profile.tools {
            ToolChoice::All => "every tool".to_string(),
            ToolChoice::Only(tools) => tools.join(", "),
        };
        if !profile.disallowed_tools.is_empty() {
            tools.push_str(&format!(" but {}", profile.disallowed_tools.join(", ")));
        }
        let model = match &profile.model {
            ModelChoice::Inherit => "the session's model".to_string(),
            ModelChoice::Small => format!("the small model ({})", catalog.small_model()),
            ModelChoice::Named(model) => model.clone(),
        };
        text.push_str(&format!(
            "\n  {} ({origin})\n    {}\n    tools: {tools}; model: {model}",
            profile.name, profile.description
        ));
        if let Some(turns) = profile.max_turns {
            text.push_str(&format!("; at most {turns} requests"));
        }
        if let Some(mode) = &profile.permission_mode {
            text.push_str(&format!(
                "; permission mode {mode} (where narrower than the session's)"
            ));
        }
        if profile.worktree {
            text.push_str("; in a git worktree of its own");
        }
        if !profile.skills.is_empty() {
            text.push_str(&format!("; skills {}", profile.skills.join(", ")));
        }
        match profile.mcp_servers.as_deref() {
            Some([]) => text.push_str("; no MCP servers"),
            Some(servers) => text.push_str(&format!("; MCP servers {}", servers.join(", "))),
            None => {}
        }
    }
    if catalog
        .profiles()
        .iter()
        .all(|profile| profile.origin.is_none())
    {
        text.push_str(
            "\nNo custom agents: add Markdown files to .claude/agents/ (this project) or \
             ~/.claude/agents/ (every project), or pass --agents.",
        );
    }
    text
}

#[cfg(test)]
mod tests;
