//! MCP from the command line's point of view: the run's servers started beside the built-in
//! tools (their tools deferred behind tool search when they would fill too much of the
//! window), the short wait before the first request, and `cairn mcp list|get`.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use cairn_config::LoadedSettings;
use cairn_core::assembly::Turn;
use cairn_core::commands::{
    CommandEntry, CommandTable, McpPrompt, McpPromptArgument, McpPromptCall, McpReport,
};
use cairn_core::reports::doctor::{self, Check, McpHealth};
use cairn_mcp::config::{
    self, ConfigSources, Configured, ConfiguredServer, ProjectApproval, Scope,
};
use cairn_mcp::edit::Target;
use cairn_mcp::{Limits, McpAction, McpTools, Roots, StartOptions, Status};
use cairn_protocol::{ContentBlock, Message};
use cairn_tools::tool_search::{Deferral, DeferralBudget, DeferredTools, loaded_in_history};
use cairn_tools::{CallContext, ToolExecutor, ToolRegistry};
use serde_json::json;

use crate::args::{Args, McpCommand, McpScope};
use crate::output::SessionInfo;

/// The longest the first request waits for servers whose tools nobody knows yet (no cached
/// manifest). A server not up by then joins later; its tools appear in a later request.
pub const FIRST_REQUEST_WAIT: Duration = Duration::from_millis(500);

/// Claude Code's variable for tool search: `true`, `false`, `auto`, `auto:N`.
pub const ENABLE_TOOL_SEARCH: &str = "ENABLE_TOOL_SEARCH";

/// The window tool search measures against when the model's is unknown.
const FALLBACK_WINDOW: u64 = 200_000;

/// The tools of a run: the built-in ones, then the MCP servers' — deferred behind
/// `ToolSearch` when their definitions pass `ENABLE_TOOL_SEARCH`'s share of `model_window`
/// (the settings' `env` over cairn's own environment). Unset, it is `auto` (10%): Claude
/// Code's default of always deferring relies on the Anthropic API expanding the tools it
/// finds without changing the tool list, which no other provider does, so here a load
/// changes the list and is worth it only where the definitions cost that much. The tools of
/// a server configured with `alwaysLoad` (or a tool whose `_meta` says
/// `anthropic/alwaysLoad`) are never deferred. A resumed
/// session (`history`) offers again the tools it had loaded, in the same order.
pub fn compose_tools(
    builtins: Arc<dyn ToolExecutor>,
    mcp: Option<&Arc<McpTools>>,
    model_window: Option<u64>,
    settings: &LoadedSettings,
    history: &[Message],
) -> anyhow::Result<Arc<dyn ToolExecutor>> {
    let Some(mcp) = mcp else {
        return Ok(builtins);
    };
    let setting = settings
        .env()
        .get(ENABLE_TOOL_SEARCH)
        .cloned()
        .or_else(|| std::env::var(ENABLE_TOOL_SEARCH).ok());
    let deferral = match setting.as_deref().map(str::trim) {
        None | Some("") => Deferral::AbovePercent(Deferral::DEFAULT_PERCENT),
        Some(value) => Deferral::parse(value)?,
    };
    let budget = DeferralBudget {
        deferral,
        window: model_window.unwrap_or(FALLBACK_WINDOW),
        estimate: cairn_context::estimate_tokens,
    };
    let pinned = mcp.clone();
    let tools = DeferredTools::new(builtins, mcp.clone(), budget)
        .with_pinned(move |name| pinned.always_loads(name))
        .with_loaded(loaded_in_history(history));
    Ok(Arc::new(tools))
}

/// The run's servers, from the configuration files and `--mcp-config`.
pub fn configured(
    args: &Args,
    settings: &LoadedSettings,
    cwd: &Path,
    home: &Path,
) -> anyhow::Result<Configured> {
    let cairn_home = crate::session::cairn_home()?;
    Ok(config::load(&ConfigSources {
        home,
        cairn_home: &cairn_home,
        project: cwd,
        flags: &args.mcp_config,
        strict: args.strict_mcp_config,
        approval: ProjectApproval::from_settings(settings.raw()),
    })?)
}

/// Starts the run's servers in the background; `None` when there are none, so a project
/// without MCP servers pays nothing. Returns the warnings for the user beside them.
/// `roots` are what servers are told they may work in: the workspace and its added
/// directories.
/// Inside an Agent SDK host, its in-process servers are reached through `sdk`.
pub fn start(
    args: &Args,
    settings: &LoadedSettings,
    cwd: &Path,
    home: &Path,
    roots: Roots,
    sdk: Option<Arc<dyn cairn_mcp::SdkMcpChannel>>,
    elicitation: cairn_mcp::elicitation::Elicitation,
) -> anyhow::Result<(Option<Arc<McpTools>>, Vec<String>)> {
    let configured = configured(args, settings, cwd, home)?;
    let warnings = configured.warnings;
    if configured.servers.is_empty() {
        return Ok((None, warnings));
    }
    let env = settings.env().clone();
    let lookup = |name: &str| env.get(name).cloned().or_else(|| std::env::var(name).ok());
    // Servers get cairn's environment and the settings' `env`, never a credential of cairn's.
    let mut inherited_env = server_environment();
    inherited_env.extend(
        env.iter()
            .filter(|(name, _)| !cairn_protocol::is_credential_variable(name.as_ref()))
            .map(|(name, value)| (name.to_string(), value.to_string())),
    );
    let cairn_home = crate::session::cairn_home()?;
    // Servers the user turned off here (`/mcp disable`) stay off.
    let disabled = cairn_mcp::toggles::disabled_servers(home, &cairn_home, cwd);
    let tools = McpTools::start_toggled(
        configured.servers,
        StartOptions {
            cairn_home,
            project: cwd.to_path_buf(),
            inherited_env,
            limits: Limits::from_env(lookup),
            roots,
            elicitation,
        },
        sdk,
        &disabled,
    );
    Ok((Some(tools), warnings))
}

/// Before the first request: waits [`FIRST_REQUEST_WAIT`] at most for the servers, then
/// tells the `init` line their states and the tools the first request offers.
/// With `verbose`, says each server's state on stderr.
pub async fn settle(mcp: Option<&Arc<McpTools>>, session: &mut SessionInfo, verbose: bool) {
    let Some(mcp) = mcp else {
        return;
    };
    let started = std::time::Instant::now();
    mcp.settle(FIRST_REQUEST_WAIT).await;
    if verbose {
        for report in mcp.reports() {
            let state = match &report.status {
                Status::Connected => format!("connected, {} tools", report.tools),
                Status::Pending if report.tools > 0 => format!(
                    "still starting; its {} tools from the last connection are offered, and a \
                     call waits for it",
                    report.tools
                ),
                Status::Pending => "still starting; its tools join a later request".to_string(),
                Status::Failed(reason) => format!("failed: {reason}"),
                Status::Disabled => "disabled (/mcp enable turns it on)".to_string(),
            };
            eprintln!("MCP server {}: {state}", report.name);
        }
        eprintln!(
            "MCP: the first request waited {} ms for servers",
            started.elapsed().as_millis()
        );
    }
    session.mcp_servers = mcp
        .reports()
        .into_iter()
        .map(|report| (report.name, report.status.as_str()))
        .collect();
    for spec in mcp.specs() {
        if !session.tools.contains(&spec.name) {
            session.tools.push(spec.name);
        }
    }
    // The servers' prompts are commands too, as Claude Code's init line lists them.
    for prompt in mcp.prompts() {
        if !session.slash_commands.contains(&prompt.command) {
            session.slash_commands.push(prompt.command);
        }
    }
}

/// The command table of a line typed in `cwd`: the built-ins, the custom commands and the
/// connected servers' prompts. A line that names an MCP prompt (`/mcp__…`) waits for the
/// servers to start first (each within its start-up timeout), since its prompt may be on
/// one still starting.
pub async fn command_table(
    line: &str,
    cwd: &Path,
    home: &Path,
    mcp: Option<&Arc<McpTools>>,
) -> CommandTable {
    let table = CommandTable::load(cwd, home);
    let Some(mcp) = mcp else {
        return table;
    };
    let names_a_prompt = cairn_core::commands::command_line(line).is_some_and(|command| {
        command.name.starts_with("mcp__") && table.find(command.name).is_none()
    });
    if names_a_prompt {
        mcp.wait_all().await;
    }
    table.with_mcp_prompts(prompt_entries(mcp))
}

/// The connected servers' prompts as entries of the command table.
pub fn prompt_entries(mcp: &McpTools) -> Vec<CommandEntry> {
    mcp.prompts()
        .into_iter()
        .map(|prompt| {
            CommandEntry::mcp_prompt(
                prompt.command,
                prompt.description,
                McpPrompt {
                    server: prompt.server,
                    prompt: prompt.name,
                    arguments: prompt
                        .arguments
                        .into_iter()
                        .map(|(name, required)| McpPromptArgument { name, required })
                        .collect(),
                },
            )
        })
        .collect()
}

/// The turn an MCP prompt line becomes: the line in Claude Code's command tags, then what
/// the server returned for the prompt.
pub async fn prompt_turn(
    mcp: &McpTools,
    call: &McpPromptCall,
    cancel: tokio_util::sync::CancellationToken,
) -> Result<Turn, cairn_mcp::PromptError> {
    let cx = CallContext::detached(cancel);
    let blocks = mcp
        .get_prompt(&call.server, &call.prompt, &call.arguments, &cx)
        .await?;
    let name = call
        .shown
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string();
    let arguments = call.shown[name.len()..].trim();
    let mut content = vec![ContentBlock::text(format!(
        "<command-name>{name}</command-name>\n<command-args>{arguments}</command-args>"
    ))];
    content.extend(blocks);
    Ok(Turn::message(content))
}

/// Adds to `turn` the resources its text mentions as `@server:uri`; returns the warnings for
/// the mentions that could not be read.
pub async fn attach_mentions(mcp: Option<&Arc<McpTools>>, turn: &mut Turn) -> Vec<String> {
    let Some(mcp) = mcp else {
        return Vec::new();
    };
    let text: String = turn
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if mcp.mentions(&text).is_empty() {
        return Vec::new();
    }
    // A mention may name a server still starting: reading it waits for that one.
    let cx = CallContext::detached(tokio_util::sync::CancellationToken::new());
    let (blocks, warnings) = mcp.attach_mentions(&text, &cx).await;
    turn.content.extend(blocks);
    warnings
}

/// The `/mcp` report of a run's servers, for a face.
pub fn report_source(mcp: Arc<McpTools>) -> Arc<dyn McpReport> {
    Arc::new(ServersReport(mcp))
}

#[derive(Debug)]
struct ServersReport(Arc<McpTools>);

impl McpReport for ServersReport {
    fn report(&self) -> String {
        self.0.report_text()
    }

    fn act(&self, arguments: &str) -> String {
        let action = match McpAction::parse(arguments) {
            Ok(McpAction::Report) => return self.0.report_text(),
            Ok(action) => action,
            Err(message) => return message,
        };
        if let Err(message) = self.0.check(&action) {
            return message;
        }
        let started = match &action {
            McpAction::Report => String::new(),
            McpAction::Reconnect(server) => format!("Reconnecting the MCP server {server}"),
            McpAction::Toggle { server, enabled } => format!(
                "{} the MCP server {server}",
                if *enabled { "Enabling" } else { "Disabling" }
            ),
        };
        let mcp = self.0.clone();
        tokio::spawn(async move { mcp.run_action(&action).await });
        format!("{started}; /mcp shows how it went.")
    }

    fn health(&self) -> Vec<(String, McpHealth)> {
        health(Some(&self.0), &[], &[])
    }
}

/// Each server's state as `/doctor` checks it: the running ones', then the project servers
/// left out for want of trust or approval.
pub fn health(
    mcp: Option<&McpTools>,
    untrusted: &[String],
    unapproved: &[String],
) -> Vec<(String, McpHealth)> {
    let mut servers: Vec<(String, McpHealth)> = mcp
        .map(McpTools::reports)
        .unwrap_or_default()
        .into_iter()
        .map(|report| {
            let health = match report.status {
                Status::Connected => McpHealth::Connected {
                    tools: report.tools,
                },
                Status::Pending => McpHealth::Starting,
                Status::Failed(reason) => McpHealth::Failed(reason),
                Status::Disabled => McpHealth::Disabled,
            };
            (report.name, health)
        })
        .collect();
    servers.extend(
        untrusted
            .iter()
            .map(|name| (name.clone(), McpHealth::NotTrusted)),
    );
    servers.extend(
        unapproved
            .iter()
            .map(|name| (name.clone(), McpHealth::NeedsApproval)),
    );
    servers
}

/// The MCP part of `/doctor` in `-p`: the run's servers once each start ended, and the
/// project servers that wait for approval.
pub async fn doctor_checks(
    mcp: Option<&Arc<McpTools>>,
    args: &Args,
    cwd: &Path,
    home: &Path,
) -> Vec<Check> {
    if let Some(mcp) = mcp {
        mcp.wait_all().await;
    }
    // The run started with these settings: they load again the same.
    let unapproved: Vec<String> = crate::settings::load_settings(args, cwd)
        .and_then(|settings| configured(args, &settings, cwd, home))
        .map(|configured| configured.unapproved.into_iter().map(|s| s.name).collect())
        .unwrap_or_default();
    doctor::mcp_checks(&health(mcp.map(|mcp| mcp.as_ref()), &[], &unapproved))
}

/// The MCP part of `cairn doctor`: every configured server started (a project's own only in a
/// trusted folder) and waited for, as `cairn mcp list` does.
pub fn doctor_checks_standalone(
    args: &Args,
    cwd: &Path,
    home: &Path,
) -> anyhow::Result<Vec<Check>> {
    let settings = crate::settings::load_settings(args, cwd)?;
    let configured = configured(args, &settings, cwd, home)?;
    let cairn_home = crate::session::cairn_home()?;
    let (folders, _) = cairn_config::trust::TrustedFolders::load(&cairn_home, home);
    let trusted = folders.trust_of(cwd).is_trusted();
    let (servers, untrusted): (Vec<ConfiguredServer>, Vec<ConfiguredServer>) = configured
        .servers
        .into_iter()
        .partition(|server| trusted || server.scope != Scope::Project);
    let names = |servers: Vec<ConfiguredServer>| servers.into_iter().map(|s| s.name).collect();
    let untrusted: Vec<String> = names(untrusted);
    let unapproved: Vec<String> = names(configured.unapproved);
    if servers.is_empty() {
        return Ok(doctor::mcp_checks(&health(None, &untrusted, &unapproved)));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let checks = runtime.block_on(async {
        let lookup = |name: &str| std::env::var(name).ok();
        let disabled = cairn_mcp::toggles::disabled_servers(home, &cairn_home, cwd);
        let tools = McpTools::start_toggled(
            servers,
            StartOptions {
                cairn_home: cairn_home.clone(),
                project: cwd.to_path_buf(),
                inherited_env: server_environment(),
                limits: Limits::from_env(lookup),
                roots: Roots::fixed(vec![cwd.to_path_buf()]),
                elicitation: cairn_mcp::elicitation::Elicitation::decline(),
            },
            None,
            &disabled,
        );
        tools.wait_all().await;
        doctor::mcp_checks(&health(Some(&tools), &untrusted, &unapproved))
    });
    // Don't wait for servers that still run on the way out.
    runtime.shutdown_background();
    Ok(checks)
}

/// `/mcp [reconnect|enable|disable <server>]` for a face that waits for the outcome (`-p`,
/// the SDK face): the report, or what the action did; an error names what was wrong.
pub async fn run_command(mcp: Option<&Arc<McpTools>>, arguments: &str) -> Result<String, String> {
    let action = McpAction::parse(arguments)?;
    let Some(mcp) = mcp else {
        return match action {
            McpAction::Report => Ok("No MCP servers are configured here.".to_string()),
            McpAction::Reconnect(server) | McpAction::Toggle { server, .. } => Err(format!(
                "No MCP server is named \"{server}\": no MCP servers are configured here."
            )),
        };
    };
    if action == McpAction::Report {
        // The report says how each server's start ended, as `cairn mcp list` does.
        mcp.wait_all().await;
    }
    mcp.run_action(&action).await
}

/// `cairn mcp list` and `cairn mcp get NAME`.
pub fn run_mcp_command(args: &Args, what: &McpCommand) -> ExitCode {
    let result = match what {
        McpCommand::Serve => serve(args),
        McpCommand::Login { name } => crate::mcp_login::login(args, name),
        McpCommand::Logout { name } => crate::mcp_login::logout(args, name),
        _ => run(args, what),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args, what: &McpCommand) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    if let Some(code) = edit(what, &cwd)? {
        return Ok(code);
    }
    let home = std::env::home_dir().context("cannot find the home directory: set HOME")?;
    let settings = crate::settings::load_settings(args, &cwd)?;
    let configured = configured(args, &settings, &cwd, &home)?;
    let wanted = |server: &ConfiguredServer| match what {
        McpCommand::Get { name } => &server.name == name,
        McpCommand::List
        | McpCommand::Serve
        | McpCommand::Add { .. }
        | McpCommand::AddJson { .. }
        | McpCommand::Remove { .. }
        | McpCommand::Login { .. }
        | McpCommand::Logout { .. } => true,
    };
    // Listing connects, which runs each server's command: a project's own servers run only
    // in a folder the user trusted (the interactive UI asks), whatever its settings approve.
    let trusted = {
        let (folders, _) =
            cairn_config::trust::TrustedFolders::load(&crate::session::cairn_home()?, &home);
        folders.trust_of(&cwd).is_trusted()
    };
    let (servers, untrusted): (Vec<ConfiguredServer>, Vec<ConfiguredServer>) = configured
        .servers
        .iter()
        .filter(|s| wanted(s))
        .cloned()
        .partition(|server| trusted || server.scope != Scope::Project);
    let unapproved: Vec<&ConfiguredServer> =
        configured.unapproved.iter().filter(|s| wanted(s)).collect();
    if let McpCommand::Get { name } = what
        && servers.is_empty()
        && unapproved.is_empty()
        && untrusted.is_empty()
    {
        eprintln!(
            "error: no MCP server named \"{name}\" is configured here (`cairn mcp list` shows them)"
        );
        return Ok(ExitCode::FAILURE);
    }
    if servers.is_empty() && unapproved.is_empty() && untrusted.is_empty() {
        println!("No MCP servers are configured here.");
        return Ok(ExitCode::SUCCESS);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mut out = std::io::stdout().lock();
    runtime.block_on(async {
        let (mcp, _) = match servers.is_empty() {
            true => (None, Vec::new()),
            false => {
                let lookup = |name: &str| std::env::var(name).ok();
                let cairn_home = crate::session::cairn_home()?;
                let disabled = cairn_mcp::toggles::disabled_servers(&home, &cairn_home, &cwd);
                let tools = McpTools::start_toggled(
                    servers.clone(),
                    StartOptions {
                        cairn_home,
                        project: cwd.clone(),
                        inherited_env: server_environment(),
                        limits: Limits::from_env(lookup),
                        roots: Roots::fixed(vec![cwd.clone()]),
                        elicitation: cairn_mcp::elicitation::Elicitation::decline(),
                    },
                    None,
                    &disabled,
                );
                tools.wait_all().await;
                (Some(tools), Vec::<String>::new())
            }
        };
        let reports = mcp.as_ref().map(|mcp| mcp.reports()).unwrap_or_default();
        for (server, report) in servers.iter().zip(&reports) {
            let state = match &report.status {
                Status::Connected => format!("connected, {} tools", report.tools),
                Status::Pending => "still starting".to_string(),
                Status::Failed(reason) => format!("failed: {reason}"),
                Status::Disabled => "disabled (/mcp enable turns it on)".to_string(),
            };
            writeln!(out, "{}: {} - {state}", server.name, describe(server))?;
            if let McpCommand::Get { .. } = what {
                writeln!(
                    out,
                    "  scope: {} ({})",
                    server.scope.as_str(),
                    server.origin
                )?;
                if let Some(mcp) = &mcp {
                    for tool in mcp.tool_names(&server.name) {
                        writeln!(out, "  tool: {tool}")?;
                    }
                }
            }
        }
        for server in &untrusted {
            writeln!(
                out,
                "{}: {} - not started: this folder is not trusted yet (start cairn here to \
                 answer)",
                server.name,
                describe(server)
            )?;
        }
        for server in unapproved {
            writeln!(
                out,
                "{}: {} - needs approval (enabledMcpjsonServers or enableAllProjectMcpServers \
                 in .claude/settings.local.json)",
                server.name,
                describe(server)
            )?;
        }
        anyhow::Ok(())
    })?;
    // Don't wait for servers that still run (one that hung) on the way out.
    runtime.shutdown_background();
    Ok(ExitCode::SUCCESS)
}

/// How a server starts: its command line, or its URL.
pub(crate) fn describe(server: &ConfiguredServer) -> String {
    match &server.config {
        config::ServerConfig::Stdio(stdio) => {
            let mut line = stdio.command.clone();
            for arg in &stdio.args {
                line.push(' ');
                line.push_str(arg);
            }
            line
        }
        config::ServerConfig::Http(http) => format!("{} (HTTP)", http.url),
        config::ServerConfig::Sse(http) => format!("{} (SSE)", http.url),
        config::ServerConfig::Sdk { .. } => "an Agent SDK server".to_string(),
    }
}

fn scope_of(scope: McpScope) -> Scope {
    match scope {
        McpScope::Local => Scope::Local,
        McpScope::Project => Scope::Project,
        McpScope::User => Scope::User,
    }
}

/// `add`, `add-json` and `remove`; `None` for the commands that read.
fn edit(what: &McpCommand, cwd: &Path) -> anyhow::Result<Option<ExitCode>> {
    let cairn_home = crate::session::cairn_home()?;
    let target = |scope: McpScope| Target {
        scope: scope_of(scope),
        cairn_home: &cairn_home,
        project: cwd,
    };
    let (verb, name, file) = match what {
        McpCommand::List
        | McpCommand::Get { .. }
        | McpCommand::Serve
        | McpCommand::Login { .. }
        | McpCommand::Logout { .. } => return Ok(None),
        McpCommand::Add {
            scope,
            transport,
            env,
            header,
            name,
            command_or_url,
            args,
        } => {
            let server = match transport.as_str() {
                "stdio" => {
                    let mut variables = serde_json::Map::new();
                    for pair in env {
                        let (key, value) = pair
                            .split_once('=')
                            .with_context(|| format!("-e {pair}: write a variable as KEY=VALUE"))?;
                        variables.insert(key.to_string(), value.into());
                    }
                    json!({"type": "stdio", "command": command_or_url, "args": args, "env": variables})
                }
                "http" | "sse" => {
                    let mut headers = serde_json::Map::new();
                    for line in header {
                        let (key, value) = line.split_once(':').with_context(|| {
                            format!("-H {line}: write a header as \"Name: value\"")
                        })?;
                        headers.insert(key.trim().to_string(), value.trim().into());
                    }
                    json!({"type": transport, "url": command_or_url, "headers": headers})
                }
                other => anyhow::bail!("--transport {other}: expected stdio, http or sse"),
            };
            ("Added", name, target(*scope).add(name, server)?)
        }
        McpCommand::AddJson { scope, name, json } => {
            let server: serde_json::Value = serde_json::from_str(json)
                .with_context(|| format!("the server's JSON does not parse: {json}"))?;
            ("Added", name, target(*scope).add(name, server)?)
        }
        McpCommand::Remove { scope, name } => {
            let scopes = match scope {
                Some(scope) => vec![*scope],
                None => vec![McpScope::Local, McpScope::Project, McpScope::User],
            };
            let mut removed = None;
            let mut last_error = None;
            for scope in scopes {
                match target(scope).remove(name) {
                    Ok(file) => {
                        removed = Some(file);
                        break;
                    }
                    Err(err) => last_error = Some(err),
                }
            }
            match (removed, last_error, scope) {
                (Some(file), _, _) => ("Removed", name, file),
                (None, Some(err), Some(_)) => return Err(err.into()),
                (None, _, None) => anyhow::bail!(
                    "no MCP server named \"{name}\" in the local, project or user scope \
                     (cairn removes what `cairn mcp add` wrote and .mcp.json's servers, never \
                     ~/.claude.json's)"
                ),
                (None, None, Some(_)) => return Ok(Some(ExitCode::FAILURE)),
            }
        }
    };
    println!("{verb} MCP server \"{name}\" ({})", file.display());
    Ok(Some(ExitCode::SUCCESS))
}

/// `cairn mcp serve`: the built-in tools over stdio, each call judged by the permission rules
/// and hooks of this folder's settings with nobody to ask, so what would ask is refused with
/// the gate's reason and what the rules allow runs.
fn serve(args: &Args) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let home = std::env::home_dir().context("cannot find the home directory: set HOME")?;
    let mut settings = crate::settings::load_settings(args, &cwd)?;
    crate::settings::apply_project_rule(
        args,
        &mut settings,
        &cwd,
        cairn_config::project_level::Face::Headless,
    )?;
    let mode = if args.dangerously_skip_permissions {
        cairn_config::PermissionMode::BypassPermissions
    } else {
        args.permission_mode
            .or(settings.settings().permissions.default_mode)
            .unwrap_or(cairn_config::PermissionMode::Default)
    };
    let cairn_home = crate::session::cairn_home()?;
    let session_id = format!("mcp-serve-{}", std::process::id());
    let transcript_path = cairn_home.join("mcp-serve.jsonl");
    let governance = crate::governance::build_governance(&crate::governance::GovernanceInputs {
        args,
        settings: &settings,
        cwd: &cwd,
        home: &home,
        mode,
        session_id: &session_id,
        transcript_path: &transcript_path,
    })?;
    let mut context = cairn_tools::ToolContext::new(cwd.clone());
    // Commands never see a credential, not even one the settings' `env` holds.
    context.env = settings
        .env()
        .clone()
        .into_iter()
        .filter(|(name, _)| !cairn_protocol::is_credential_variable(name.as_ref()))
        .collect();
    context.sandbox = governance.sandbox;
    context.private_dirs = vec![cairn_home];
    let gate = governance.governance.gate().clone();
    context.workspace_roots = cairn_tools::WorkspaceRoots::live(move || gate.workspace_roots());
    let tools: Arc<dyn ToolExecutor> = Arc::new(ToolRegistry::with_builtins(context));
    let server =
        cairn_mcp::serve::ToolServer::new(tools, Arc::new(GovernedCalls(governance.governance)));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let served = runtime.block_on(server.serve_stdio());
    runtime.shutdown_background();
    served?;
    Ok(ExitCode::SUCCESS)
}

/// The session's governance as `cairn mcp serve`'s gate: nobody can be asked.
struct GovernedCalls(cairn_core::Governance);

#[async_trait::async_trait]
impl cairn_mcp::serve::CallGate for GovernedCalls {
    async fn authorize(
        &self,
        tools: &Arc<dyn ToolExecutor>,
        call: cairn_tools::PreparedCall,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<cairn_tools::PreparedCall, cairn_tools::ToolOutput> {
        self.0
            .authorize(
                tools,
                call,
                &cairn_protocol::NobodyToAsk,
                &cairn_protocol::EventSender::discard(),
                cancel,
            )
            .await
    }
}

/// What a server's process inherits of cairn's environment: every variable but cairn's
/// credentials (the one filter every child of cairn goes through), leaving out a variable
/// whose name or value is not UTF-8 rather than failing on it.
fn server_environment() -> Vec<(String, String)> {
    cairn_protocol::child_environment()
        .into_iter()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect()
}
