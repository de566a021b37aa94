//! The command line.

use std::path::PathBuf;

use cairn_config::{SettingSources, UnknownSettingSource};
use cairn_protocol::PermissionMode;
use clap::{Parser, Subcommand, ValueEnum};

/// cairn: a terminal coding agent.
#[derive(Debug, Parser)]
#[command(name = "cairn", version, about, long_about = None, disable_version_flag = true)]
pub struct Args {
    /// Print the version (`-v`, `-V` or `--version`, as Claude Code takes it; the Agent SDKs
    /// run `cli -v`).
    #[arg(short = 'v', short_alias = 'V', long, action = clap::ArgAction::Version)]
    version: Option<bool>,

    #[command(subcommand)]
    pub command: Option<Command>,

    /// The prompt. With -p it is answered and cairn exits; piped standard input is appended.
    pub prompt: Option<String>,

    /// Print the answer and exit (headless mode).
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// How the headless answer is printed.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// The model: a full id or an alias (opus, sonnet, haiku). Default: $ANTHROPIC_MODEL, then sonnet.
    #[arg(long)]
    pub model: Option<String>,

    /// The most tokens the model may think for in each answer (0: no thinking), as Claude
    /// Code's flag. Wins over MAX_THINKING_TOKENS and alwaysThinkingEnabled; on OpenAI's
    /// reasoning models it is sent as reasoning_effort (low, medium, high).
    #[arg(long, value_name = "TOKENS", value_parser = parse_thinking_tokens)]
    pub max_thinking_tokens: Option<u32>,

    /// Stop after this many model requests in one turn (at least 1).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,

    /// Report progress (tool calls, retries, usage) on standard error.
    #[arg(long)]
    pub verbose: bool,

    /// How tool calls are permitted: default (ask before changes), acceptEdits (edits in the
    /// workspace run unasked), plan (read-only), bypassPermissions (nothing asks) or dontAsk
    /// (what no rule allows is refused). Default: permissions.defaultMode from settings.
    #[arg(long, value_name = "MODE")]
    pub permission_mode: Option<PermissionMode>,

    /// Permission rules to allow, e.g. "Bash(git log:*)" Read (comma or space separated).
    #[arg(long = "allowedTools", alias = "allowed-tools", value_name = "RULES", num_args = 1..)]
    pub allowed_tools: Vec<String>,

    /// Permission rules to deny, e.g. "Bash(rm:*)" WebFetch.
    #[arg(long = "disallowedTools", alias = "disallowed-tools", value_name = "RULES", num_args = 1..)]
    pub disallowed_tools: Vec<String>,

    /// Another directory the tools may work in, beside the working directory.
    #[arg(long = "add-dir", value_name = "DIR", num_args = 1..)]
    pub add_dir: Vec<String>,

    /// Same as --permission-mode bypassPermissions.
    #[arg(long)]
    pub dangerously_skip_permissions: bool,

    /// Replace cairn's own system prompt (environment, git and instruction files are kept).
    #[arg(long, conflicts_with = "system_prompt_file")]
    pub system_prompt: Option<String>,

    /// Like --system-prompt, from a file.
    #[arg(long)]
    pub system_prompt_file: Option<PathBuf>,

    /// Text added at the end of the system prompt's static part.
    #[arg(long)]
    pub append_system_prompt: Option<String>,

    /// Continue the most recent session in this directory.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_session: bool,

    /// Resume a session by id (`cairn sessions` lists them).
    #[arg(short = 'r', long, value_name = "SESSION_ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,

    /// With --continue or --resume: continue in a new session, leaving the old one untouched.
    #[arg(long)]
    pub fork_session: bool,

    /// Use this id (a UUID) for the new session.
    #[arg(long, value_name = "UUID")]
    pub session_id: Option<String>,

    /// Extra settings, above every settings file: a JSON file or an inline JSON object.
    #[arg(long, value_name = "FILE_OR_JSON")]
    pub settings: Option<String>,

    /// Which settings files to read, comma separated: user (~/.claude/settings.json), project
    /// (.claude/settings.json), local (.claude/settings.local.json). "" reads none of them;
    /// --settings is read either way. Default: all three.
    #[arg(long, value_name = "SOURCES", value_parser = parse_setting_sources)]
    pub setting_sources: Option<SettingSources>,

    /// MCP servers to start: a JSON file or an inline JSON object of `mcpServers` (repeatable).
    #[arg(long = "mcp-config", value_name = "FILE_OR_JSON", num_args = 1..)]
    pub mcp_config: Vec<String>,

    /// Start only the --mcp-config servers, none from the configuration files.
    #[arg(long = "strict-mcp-config")]
    pub strict_mcp_config: bool,

    /// How standard input is read with -p: text (the prompt) or stream-json (one JSON
    /// message or control request per line, the Agent SDKs' protocol; needs
    /// --output-format stream-json).
    #[arg(long, value_enum, default_value_t = InputFormat::Text)]
    pub input_format: InputFormat,

    /// With stream-json output: also print the model's stream as it comes (`stream_event`
    /// lines).
    #[arg(long)]
    pub include_partial_messages: bool,

    /// Who answers permission questions in -p: `stdio` asks the Agent SDK host with a
    /// `can_use_tool` control request (with --input-format stream-json).
    #[arg(long, value_name = "TOOL")]
    pub permission_prompt_tool: Option<String>,

    /// Stop the session once its requests have cost this many US dollars.
    #[arg(long, value_name = "USD", value_parser = parse_budget)]
    pub max_budget_usd: Option<f64>,

    /// With stream-json input: echo each user message back on standard output.
    #[arg(long)]
    pub replay_user_messages: bool,

    /// Print hook lifecycle events in stream-json output.
    #[arg(long)]
    pub include_hook_events: bool,

    /// A JSON Schema the final answer must fit (with -p): the model hands it over through a
    /// `StructuredOutput` tool, checked against the schema and retried, and the result's
    /// `structured_output` holds it.
    #[arg(long, value_name = "SCHEMA")]
    pub json_schema: Option<String>,

    /// The built-in tools the session offers: `default` for all, `""` for none, or names
    /// (`Read,Grep,Bash`); MCP servers' tools are offered either way.
    #[arg(long, value_name = "TOOLS")]
    pub tools: Option<String>,

    /// The model requests go to once the session's model is overloaded (after its retries),
    /// for the rest of the session; an alias (`sonnet`) or an id, of any provider.
    #[arg(long, value_name = "MODEL")]
    pub fallback_model: Option<String>,

    /// Debug output, optionally filtered by category (`--debug=api,hooks`).
    #[arg(short = 'd', long, value_name = "FILTER", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub debug: Option<String>,

    /// Write debug output to this file.
    #[arg(long, value_name = "PATH")]
    pub debug_file: Option<PathBuf>,

    /// Write debug output to standard error.
    #[arg(long)]
    pub debug_to_stderr: bool,

    /// Flags the Agent SDKs pass for features cairn does not have; each is accepted with a
    /// debug line (see [`Args::ignored_flags`]).
    #[command(flatten)]
    pub sdk_extras: SdkExtras,

    /// Custom sub-agents as JSON, over those of .claude/agents/: {"name": {"description":
    /// "…", "prompt": "…", "tools": ["Read"], "model": "haiku"}}.
    #[arg(long, value_name = "JSON")]
    pub agents: Option<String>,
}

/// Flags the Agent SDKs may pass that cairn accepts and has no use for.
#[derive(Debug, Default, clap::Args)]
pub struct SdkExtras {
    /// A plugin directory to load.
    #[arg(long = "plugin-dir", value_name = "DIR")]
    pub plugin_dir: Vec<String>,
    /// API beta headers to send.
    #[arg(long, value_name = "BETAS")]
    pub betas: Option<String>,
    /// A token budget for the task.
    #[arg(long, value_name = "TOKENS")]
    pub task_budget: Option<String>,
    /// Mirror the session to the SDK's session store.
    #[arg(long)]
    pub session_mirror: bool,
    /// Resume at this message of the resumed session.
    #[arg(long, value_name = "UUID")]
    pub resume_session_at: Option<String>,
    /// Drop this turn of the resumed session.
    #[arg(long, value_name = "UUID")]
    pub resume_drops_turn: Option<String>,
    /// Thinking mode: adaptive, enabled or disabled.
    #[arg(long, value_name = "MODE")]
    pub thinking: Option<String>,
    /// How thinking is shown.
    #[arg(long, value_name = "DISPLAY")]
    pub thinking_display: Option<String>,
    /// Reasoning effort.
    #[arg(long, value_name = "LEVEL")]
    pub effort: Option<String>,
}

impl Args {
    /// The flags given that cairn accepts without acting on them, each with its value, for a
    /// debug line: a program passing them still gets a run rather than exit 2.
    pub fn ignored_flags(&self) -> Vec<String> {
        let extras = &self.sdk_extras;
        let valued = [
            ("--betas", extras.betas.clone()),
            ("--task-budget", extras.task_budget.clone()),
            ("--resume-session-at", extras.resume_session_at.clone()),
            ("--resume-drops-turn", extras.resume_drops_turn.clone()),
            ("--thinking", extras.thinking.clone()),
            ("--thinking-display", extras.thinking_display.clone()),
            ("--effort", extras.effort.clone()),
            // `--debug` turns debug lines on; its category filter does nothing yet.
            (
                "--debug",
                self.debug.clone().filter(|filter| !filter.is_empty()),
            ),
            (
                "--include-hook-events",
                self.include_hook_events.then(String::new),
            ),
            ("--session-mirror", extras.session_mirror.then(String::new)),
        ];
        let mut ignored: Vec<String> = valued
            .into_iter()
            .filter_map(|(flag, value)| {
                value.map(|value| match value.is_empty() {
                    true => flag.to_owned(),
                    false => format!("{flag} {value}"),
                })
            })
            .collect();
        ignored.extend(
            extras
                .plugin_dir
                .iter()
                .map(|dir| format!("--plugin-dir {dir}")),
        );
        ignored
    }
}

/// `--max-budget-usd`: a positive number of dollars.
fn parse_budget(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(usd) if usd > 0.0 && usd.is_finite() => Ok(usd),
        _ => Err("expected a positive number of US dollars, such as 0.50".to_owned()),
    }
}

/// `--setting-sources`: clap names the flag and shows this error's bad word.
fn parse_setting_sources(text: &str) -> Result<SettingSources, UnknownSettingSource> {
    text.parse()
}

/// `--max-thinking-tokens`: 0, or at least the API's minimum budget.
fn parse_thinking_tokens(text: &str) -> Result<u32, String> {
    match cairn_llm::thinking::parse_budget(text, "--max-thinking-tokens") {
        Ok(budget) => Ok(budget.unwrap_or(0)),
        Err(_) => Err(format!(
            "expected a whole number of tokens, at least {} (0 turns thinking off)",
            cairn_llm::thinking::MIN_THINKING_BUDGET
        )),
    }
}

/// The exit status of a usage error, clap's own included (README: "2 for usage errors").
pub const USAGE_STATUS: u8 = 2;

/// A command line that asks for something cairn cannot do, found after parsing
/// (`--fork-session` without `--continue`, a session id that is not a UUID): the run exits
/// with [`USAGE_STATUS`], as for a flag clap refuses.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The output format a command line asks for, read from the raw arguments: for reporting a
/// command line clap refused in the format the caller reads. Anything unreadable is text.
pub fn requested_output_format(raw: &[std::ffi::OsString]) -> OutputFormat {
    let mut format = OutputFormat::Text;
    let mut arguments = raw.iter().skip(1).map(|argument| argument.to_str());
    while let Some(argument) = arguments.next() {
        let value = match argument {
            // Everything after `--` is the prompt.
            Some("--") => break,
            Some("--output-format") => arguments.next().flatten(),
            Some(other) => other.strip_prefix("--output-format="),
            None => None,
        };
        if let Some(value) = value {
            format = OutputFormat::from_str(value, false).unwrap_or(OutputFormat::Text);
        }
    }
    format
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the merged settings and where each value comes from.
    Config {
        #[command(subcommand)]
        what: ConfigCommand,
    },
    /// List this directory's sessions, newest first.
    Sessions,
    /// Check the installation (what /doctor reports); exits 1 when a check fails.
    Doctor,
    /// The sub-agents the model can start here: the roles and the custom agents.
    Agents,
    /// Say how to update cairn (it does not update itself).
    Update,
    /// Say how to install or update cairn (it does not install itself).
    Install {
        /// Claude Code's release channel (stable, latest, a version); cairn has none.
        #[arg(hide = true)]
        target: Option<String>,
    },
    /// The MCP servers: list them (connecting to each) or show one.
    Mcp {
        #[command(subcommand)]
        what: McpCommand,
    },
    /// Look inside cairn.
    Debug {
        #[command(subcommand)]
        what: DebugCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Every configured server, its state (connecting to it) and its tool count.
    List,
    /// One server: where it is configured, how it starts, its state and its tools.
    Get { name: String },
    /// Add a server: `cairn mcp add NAME -- COMMAND [ARGS...]`, or a URL with --transport http.
    Add {
        #[arg(short, long, value_enum, default_value_t = McpScope::Local)]
        scope: McpScope,
        /// stdio (a command), http (streamable HTTP) or sse.
        #[arg(short, long, default_value = "stdio")]
        transport: String,
        /// A variable for a stdio server: KEY=VALUE (repeatable).
        #[arg(short, long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// A header for an HTTP server: "Name: value" (repeatable).
        #[arg(short = 'H', long = "header", value_name = "HEADER")]
        header: Vec<String>,
        name: String,
        command_or_url: String,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Add a server from its JSON, as it would stand under `mcpServers`.
    AddJson {
        #[arg(short, long, value_enum, default_value_t = McpScope::Local)]
        scope: McpScope,
        name: String,
        json: String,
    },
    /// Serve cairn's own tools to another MCP client over standard input and output; each
    /// call goes through the permission rules and hooks, and one that would ask is refused.
    Serve,
    /// Remove a server from a scope (without --scope: from the first that has it, local
    /// first).
    Remove {
        #[arg(short, long, value_enum)]
        scope: Option<McpScope>,
        name: String,
    },
    /// Authorize cairn with an HTTP server that asks for OAuth: prints the URL to open, waits
    /// for the browser's redirect, and stores the tokens under ~/.cairn/mcp-auth.
    Login { name: String },
    /// Forget the OAuth tokens stored for a server.
    Logout { name: String },
}

/// Where `cairn mcp add` writes: this project for you alone (cairn's own file), the project's
/// `.mcp.json` (shared), or every project of yours (cairn's own file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum McpScope {
    Local,
    Project,
    User,
}

#[derive(Debug, Subcommand)]
pub enum DebugCommand {
    /// Print the system prompt cairn would send here, with section markers and token estimates.
    Prompt,
}

/// How `-p` reads standard input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// The prompt, as text.
    Text,
    /// One JSON object per line: user messages and control requests (the Agent SDKs').
    StreamJson,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The final answer as plain text.
    Text,
    /// One JSON result object at the end.
    Json,
    /// One JSON object per line as the session goes (the Agent SDK's format).
    StreamJson,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Every effective setting with the file it comes from.
    List,
    /// One setting (a dotted key such as permissions.defaultMode) and where it comes from.
    Get { key: String },
    /// Set a setting: VALUE is JSON when it parses as JSON, else text. Written to
    /// .claude/settings.local.json, or .claude/settings.json with --project, or
    /// ~/.claude/settings.json with --global.
    Set {
        #[command(flatten)]
        file: ConfigFile,
        key: String,
        value: String,
    },
    /// Add values to a list setting (such as permissions.allow), each once.
    Add {
        #[command(flatten)]
        file: ConfigFile,
        key: String,
        #[arg(required = true)]
        values: Vec<String>,
    },
    /// Take values out of a list setting, or remove the setting itself when no value is given.
    Remove {
        #[command(flatten)]
        file: ConfigFile,
        key: String,
        values: Vec<String>,
    },
}

/// Which settings file `cairn config set|add|remove` writes.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct ConfigFile {
    /// The user's settings, ~/.claude/settings.json.
    #[arg(short, long, conflicts_with = "project")]
    pub global: bool,
    /// The project's shared settings, .claude/settings.json.
    #[arg(long)]
    pub project: bool,
}
