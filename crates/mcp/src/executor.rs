//! [`McpTools`]: every configured server's tools behind one [`ToolExecutor`], started in the
//! background and never in the way of the first request.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cairn_protocol::ToolSpec;
use cairn_tools::{
    Assurance, CallContext, PrepareError, PreparedCall, Reach, ToolCall, ToolExecutor, ToolOutput,
};
use rmcp::model::CallToolRequestParams;
use serde_json::Value;

use crate::cache::ManifestCache;
use crate::config::{ConfiguredServer, Scope};
use crate::resources::{self, RESOURCE_SAFETY, is_resource_tool};
use crate::server::{Limits, Roots, Server, State, Status, Version};
use crate::tool::McpTool;

/// Where and how servers start.
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// cairn's own state (`~/.cairn`), where the manifest cache lives.
    pub cairn_home: PathBuf,
    /// The directory stdio servers start in.
    pub project: PathBuf,
    /// The environment stdio servers inherit, beside their own `env`; nothing else of cairn's
    /// environment reaches them, so the caller leaves cairn's credentials out.
    pub inherited_env: Vec<(String, String)>,
    /// Timeouts and the result cap.
    pub limits: Limits,
    /// The directories servers are told they may work in (`roots/list`).
    pub roots: Roots,
    /// Who answers the servers' elicitations: the face's form, or a decline.
    pub elicitation: crate::elicitation::Elicitation,
}

/// One server as `cairn mcp list` and the `init` line show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerReport {
    /// Its name under `mcpServers`: the `<server>` in its tools' `mcp__<server>__<tool>`.
    pub name: String,
    /// The scope its configuration came from.
    pub scope: Scope,
    /// The file its configuration came from.
    pub origin: String,
    /// Its state now.
    pub status: Status,
    /// The tools it offers now (live, or cached while it starts).
    pub tools: usize,
}

/// The tools of every configured MCP server, named `mcp__<server>__<tool>`.
///
/// [`McpTools::start`] starts every server on its own task and returns at once. Until a
/// server connects, the tools its last good connection listed (the manifest cache) are
/// offered; calling one waits for that server only. A server that fails, crashes or stops
/// answering turns its calls into error results naming the reason and quoting its stderr.
pub struct McpTools {
    pub(crate) servers: Vec<Arc<Server>>,
    version: Arc<Version>,
    /// Where a toggle is saved: cairn's own state and the project it is saved for.
    cairn_home: PathBuf,
    project: PathBuf,
}

/// What `/mcp` with arguments asks for (and the SDK's `mcp_reconnect` and `mcp_toggle`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpAction {
    /// `/mcp`: the report.
    Report,
    /// `/mcp reconnect <server>`: stop the server and start it again.
    Reconnect(String),
    /// `/mcp enable <server>` / `/mcp disable <server>`.
    Toggle {
        /// The server's name.
        server: String,
        /// On or off.
        enabled: bool,
    },
}

impl McpAction {
    /// Reads what follows `/mcp`: nothing, `reconnect <server>`, `enable <server>` or
    /// `disable <server>`.
    pub fn parse(arguments: &str) -> Result<McpAction, String> {
        let words: Vec<&str> = arguments.split_whitespace().collect();
        let server = |verb: &str| match words.as_slice() {
            [_, server] => Ok((*server).to_owned()),
            [_] => Err(format!(
                "/mcp {verb} needs the name of a server: /mcp {verb} <server>"
            )),
            _ => Err(format!(
                "/mcp {verb} takes one server name, not {}",
                words.len() - 1
            )),
        };
        match words.first().copied() {
            None => Ok(McpAction::Report),
            Some("reconnect") => server("reconnect").map(McpAction::Reconnect),
            Some(verb @ ("enable" | "disable")) => server(verb).map(|server| McpAction::Toggle {
                server,
                enabled: verb == "enable",
            }),
            Some(other) => Err(format!(
                "unknown /mcp action \"{other}\": use /mcp, /mcp reconnect <server>, \
                 /mcp enable <server> or /mcp disable <server>"
            )),
        }
    }
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools")
            .field(
                "servers",
                &self.servers.iter().map(|s| s.name()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl McpTools {
    /// Starts every server in the background (on the current tokio runtime) and returns.
    pub fn start(servers: Vec<ConfiguredServer>, options: StartOptions) -> Arc<McpTools> {
        McpTools::start_with_sdk(servers, options, None)
    }

    /// [`McpTools::start`] inside an Agent SDK host: its in-process (`sdk`) servers are
    /// reached through `sdk`.
    pub fn start_with_sdk(
        servers: Vec<ConfiguredServer>,
        options: StartOptions,
        sdk: Option<Arc<dyn crate::SdkMcpChannel>>,
    ) -> Arc<McpTools> {
        McpTools::start_toggled(servers, options, sdk, &[])
    }

    /// [`McpTools::start_with_sdk`], the servers named in `disabled` left off (the user
    /// turned them off: [`crate::toggles::disabled_servers`]).
    pub fn start_toggled(
        servers: Vec<ConfiguredServer>,
        options: StartOptions,
        sdk: Option<Arc<dyn crate::SdkMcpChannel>>,
        disabled: &[String],
    ) -> Arc<McpTools> {
        let version = Arc::new(Version::default());
        let cache = ManifestCache::new(&options.cairn_home);
        let servers: Vec<Arc<Server>> = servers
            .into_iter()
            .map(|configured| {
                let mut server = Server::new(
                    configured,
                    options.limits.clone(),
                    cache.clone(),
                    options.project.clone(),
                    options.inherited_env.clone(),
                    version.clone(),
                    options.roots.clone(),
                )
                .with_sdk_channel(sdk.clone());
                server.elicitation = options.elicitation.clone();
                Arc::new(server)
            })
            .collect();
        for server in &servers {
            if disabled.iter().any(|name| name == server.name()) {
                server
                    .disabled
                    .store(true, std::sync::atomic::Ordering::SeqCst);
            }
            tokio::spawn(server.clone().connect());
        }
        Arc::new(McpTools {
            servers,
            version,
            cairn_home: options.cairn_home,
            project: options.project,
        })
    }

    /// The server of that name, or the message naming the configured ones.
    fn server(&self, name: &str) -> Result<&Arc<Server>, String> {
        self.servers
            .iter()
            .find(|server| server.name() == name)
            .ok_or_else(|| self.no_such_server(name))
    }

    /// Whether `action` can be carried out (its server is configured); the message saying
    /// why not otherwise.
    pub fn check(&self, action: &McpAction) -> Result<(), String> {
        match action {
            McpAction::Report => Ok(()),
            McpAction::Reconnect(name) => {
                if self
                    .server(name)?
                    .disabled
                    .load(std::sync::atomic::Ordering::SeqCst)
                {
                    return Err(format!(
                        "The MCP server \"{name}\" is disabled: /mcp enable {name} starts it."
                    ));
                }
                Ok(())
            }
            McpAction::Toggle { server, .. } => self.server(server).map(|_| ()),
        }
    }

    /// Stops the server (a failed one too) and starts it again; returns its state once the
    /// start ended. A disabled server is not started: enable it.
    pub async fn reconnect(&self, name: &str) -> Result<Status, String> {
        self.check(&McpAction::Reconnect(name.to_owned()))?;
        let server = self.server(name)?;
        server.stop().await;
        server.clone().connect().await;
        // A start that overtook this one (the run's first) is the one to wait for.
        server.started().await;
        Ok(server.status())
    }

    /// Turns a server on (started, waited for) or off (stopped: no tools, no prompts, its
    /// calls refused saying so). The choice is saved for this project in cairn's own
    /// `~/.cairn/mcp.json` ([`crate::toggles`]); returns the server's state and, if the
    /// choice could not be saved, why (it still holds for this session).
    pub async fn set_enabled(
        &self,
        name: &str,
        enabled: bool,
    ) -> Result<(Status, Option<String>), String> {
        let server = self.server(name)?;
        let unsaved = crate::toggles::save(&self.cairn_home, &self.project, name, enabled)
            .err()
            .map(|why| format!("the choice holds for this session only: {why}"));
        let was_disabled = server.disabled.load(std::sync::atomic::Ordering::SeqCst);
        if enabled {
            server
                .disabled
                .store(false, std::sync::atomic::Ordering::SeqCst);
            if was_disabled {
                server.clone().connect().await;
                server.started().await;
            }
        } else if !was_disabled {
            server.disable().await;
        }
        Ok((server.status(), unsaved))
    }

    /// Carries out `action` and says how it went, as `/mcp` shows it on every face.
    pub async fn run_action(&self, action: &McpAction) -> Result<String, String> {
        let state = |name: &str| {
            self.reports()
                .into_iter()
                .find(|report| report.name == name)
                .map(|report| state_text(&report))
                .unwrap_or_default()
        };
        match action {
            McpAction::Report => Ok(self.report_text()),
            McpAction::Reconnect(name) => {
                self.reconnect(name).await?;
                Ok(format!(
                    "Reconnected the MCP server {name}: {}",
                    state(name)
                ))
            }
            McpAction::Toggle { server, enabled } => {
                let (_, unsaved) = self.set_enabled(server, *enabled).await?;
                let verb = if *enabled { "Enabled" } else { "Disabled" };
                let mut text = format!("{verb} the MCP server {server}: {}", state(server));
                if let Some(unsaved) = unsaved {
                    text.push_str(&format!(" ({unsaved})"));
                }
                Ok(text)
            }
        }
    }

    /// Whether the run has no servers.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Waits, at most `bound`, for the servers whose tools nobody knows yet (no manifest) to
    /// connect or fail, so a fast server's tools are in the first request and a slow one
    /// costs at most `bound`.
    pub async fn settle(&self, bound: Duration) {
        let unknown = self
            .servers
            .iter()
            .filter(|server| !server.had_manifest)
            .map(|server| server.started());
        let _ = tokio::time::timeout(bound, futures_util::future::join_all(unknown)).await;
    }

    /// Waits until every server has connected or failed (each within its start-up timeout).
    pub async fn wait_all(&self) {
        futures_util::future::join_all(self.servers.iter().map(|server| server.started())).await;
    }

    /// Waits until the tool list's version is past `seen` (a server connected, failed, or
    /// changed its tools).
    pub async fn changed_since(&self, seen: u64) {
        self.version.changed_since(seen).await;
    }

    /// Every server's state and tool count now.
    pub fn reports(&self) -> Vec<ServerReport> {
        self.servers
            .iter()
            .map(|server| ServerReport {
                name: server.name().to_string(),
                scope: server.configured.scope,
                origin: server.configured.origin.clone(),
                status: server.status(),
                tools: server.tools.read().map(|tools| tools.len()).unwrap_or(0),
            })
            .collect()
    }

    /// The names of one server's tools, as the model calls them.
    pub fn tool_names(&self, server: &str) -> Vec<String> {
        self.servers
            .iter()
            .filter(|candidate| candidate.name() == server)
            .flat_map(|server| {
                server
                    .tools
                    .read()
                    .map(|tools| tools.iter().map(|tool| tool.name.clone()).collect())
                    .unwrap_or_else(|_| Vec::new())
            })
            .collect()
    }

    /// Whether the tool of that name goes in every request even when tool search defers the
    /// others: its server's configuration says `alwaysLoad`, or the tool's own
    /// `_meta["anthropic/alwaysLoad"]` does.
    pub fn always_loads(&self, name: &str) -> bool {
        // Two tools whose definitions cost little and which no search would find by name.
        if is_resource_tool(name) {
            return true;
        }
        self.find(name).is_some_and(|(server, tool)| {
            server.configured.config.always_load() || tool.always_load
        })
    }

    /// The disabled server whose tools' names `name` is one of (`mcp__<server>__…`).
    fn disabled_owner(&self, name: &str) -> Option<&Arc<Server>> {
        self.servers.iter().find(|server| {
            server.disabled.load(std::sync::atomic::Ordering::SeqCst)
                && name.starts_with(&format!("mcp__{}__", crate::names::sanitize(server.name())))
        })
    }

    /// The tool of that name and its server; the first server keeps a name two share.
    fn find(&self, name: &str) -> Option<(&Arc<Server>, Arc<McpTool>)> {
        self.servers.iter().find_map(|server| {
            let tools = server.tools.read().ok()?;
            let tool = tools.iter().find(|tool| tool.name == name)?.clone();
            Some((server, tool))
        })
    }

    /// The `/mcp` report: each server, its state, its tool count, and why one failed.
    pub fn report_text(&self) -> String {
        let mut text = String::from("MCP servers:");
        for report in self.reports() {
            text.push_str(&format!(
                "\n  {} ({}, {}): {}",
                report.name,
                report.scope.as_str(),
                report.origin,
                state_text(&report)
            ));
        }
        text
    }

    /// The peer of a server once it is connected: waits while it starts, and starts again one
    /// that stopped; or why it is not available.
    pub(crate) async fn connected(
        &self,
        server: &Arc<Server>,
        cx: &CallContext,
    ) -> Result<rmcp::Peer<rmcp::RoleClient>, String> {
        let name = server.name().to_string();
        let mut state = server.state();
        if let State::Disabled = state {
            return Err(disabled_message(&name));
        }
        if let State::Failed(_) = state {
            // A server that stopped is started again on its next use.
            if server.tools.read().is_ok_and(|tools| !tools.is_empty()) {
                tokio::spawn(server.clone().connect());
                tokio::task::yield_now().await;
            }
        }
        if matches!(state, State::Starting | State::Failed(_)) {
            state = tokio::select! {
                state = server.started() => state,
                _ = cx.cancel.cancelled() => {
                    return Err(format!(
                        "The user interrupted while the MCP server \"{name}\" was starting."
                    ));
                }
            };
        }
        match state {
            State::Connected(peer) => Ok(peer),
            State::Failed(reason) => Err(format!(
                "The MCP server \"{name}\" is not available: {reason}"
            )),
            State::Starting => Err(format!("The MCP server \"{name}\" is still starting.")),
            State::Disabled => Err(disabled_message(&name)),
        }
    }

    async fn call(
        &self,
        server: &Arc<Server>,
        tool: &McpTool,
        input: &Value,
        cx: &CallContext,
    ) -> ToolOutput {
        let name = server.name().to_string();
        let peer = match self.connected(server, cx).await {
            Ok(peer) => peer,
            Err(reason) => return ToolOutput::error(reason),
        };
        let mut params = CallToolRequestParams::new(tool.remote.clone());
        if let Value::Object(arguments) = input {
            params = params.with_arguments(arguments.clone());
        }
        let limit = server.limits.call;
        // Dropping the request (interrupt, timeout) sends the server `notifications/cancelled`.
        let outcome = tokio::select! {
            outcome = tokio::time::timeout(limit, peer.call_tool(params)) => outcome,
            _ = cx.cancel.cancelled() => {
                return ToolOutput::error("The user interrupted this tool call.");
            }
        };
        match outcome {
            Ok(Ok(result)) => match serde_json::to_value(&result) {
                Ok(result) => crate::result::to_output(&result, server.limits.max_output_tokens),
                Err(err) => ToolOutput::error(format!(
                    "The MCP server \"{name}\" answered with a result cairn cannot read: {err}"
                )),
            },
            Ok(Err(err)) => {
                let reason = if peer.is_transport_closed() {
                    server
                        .fail(format!(
                            "it stopped during a call to {} ({err})",
                            tool.remote
                        ))
                        .await
                } else {
                    server.with_stderr(format!("the call to {} failed: {err}", tool.remote))
                };
                ToolOutput::error(format!("The MCP server \"{name}\" failed: {reason}"))
            }
            Err(_) => ToolOutput::error(format!(
                "The MCP server \"{name}\" did not answer the call to {} within {} s \
                 (MCP_TOOL_TIMEOUT, or the server's timeout).",
                tool.remote,
                limit.as_secs_f32()
            )),
        }
    }
}

/// A server's state in one phrase, as `/mcp` and its actions show it.
fn state_text(report: &ServerReport) -> String {
    match &report.status {
        Status::Connected => format!("connected, {} tools", report.tools),
        Status::Pending if report.tools > 0 => format!(
            "starting ({} tools known from its last connection)",
            report.tools
        ),
        Status::Pending => "starting".to_string(),
        Status::Failed(reason) => format!("failed: {reason}"),
        Status::Disabled => format!("disabled (/mcp enable {} turns it on)", report.name),
    }
}

/// What a call to a disabled server's tool, prompt or resource is told.
fn disabled_message(name: &str) -> String {
    format!(
        "The MCP server \"{name}\" is disabled. The user can turn it on with /mcp enable \
         {name} (or an Agent SDK host with mcp_toggle)."
    )
}

#[async_trait]
impl ToolExecutor for McpTools {
    /// The tools of servers that are connected or still starting (from the cache); a failed
    /// server's are left out, so the model stops seeing what cannot run.
    fn specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = Vec::new();
        if self.has_resources() {
            specs.extend(resources::specs());
        }
        for server in &self.servers {
            if matches!(server.state(), State::Failed(_) | State::Disabled) {
                continue;
            }
            if let Ok(tools) = server.tools.read() {
                for tool in tools.iter() {
                    if !specs.iter().any(|seen| seen.name == tool.name) {
                        specs.push(tool.spec.clone());
                    }
                }
            }
        }
        specs
    }

    fn serves(&self, name: &str) -> bool {
        (is_resource_tool(name) && self.has_resources())
            || self.find(name).is_some()
            || self.disabled_owner(name).is_some()
    }

    fn tools_version(&self) -> u64 {
        self.version.get()
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        self.try_prepare(call).map_err(PrepareError::into_output)
    }

    fn try_prepare(&self, call: &ToolCall) -> Result<PreparedCall, PrepareError> {
        if is_resource_tool(&call.name) && self.has_resources() {
            resources::check_input(&call.name, &call.input).map_err(|message| {
                PrepareError::RejectedInput {
                    tool: call.name.clone(),
                    message,
                }
            })?;
            return Ok(PreparedCall {
                id: call.id.clone(),
                name: call.name.clone(),
                input: call.input.clone(),
                safety: RESOURCE_SAFETY,
                paths: Vec::new(),
            });
        }
        // A disabled server's tool (known or not: it may never have connected) is refused
        // before anyone is asked about it, saying how to turn the server on.
        if let Some(server) = self.disabled_owner(&call.name) {
            return Err(PrepareError::Unavailable {
                tool: call.name.clone(),
                why: disabled_message(server.name()),
            });
        }
        let Some((_, tool)) = self.find(&call.name) else {
            return Err(PrepareError::UnknownTool {
                name: call.name.clone(),
                available: self.specs().into_iter().map(|spec| spec.name).collect(),
            });
        };
        tool.check_input(&call.input)
            .map_err(|message| PrepareError::RejectedInput {
                tool: tool.name.clone(),
                message,
            })?;
        Ok(PreparedCall {
            id: call.id.clone(),
            name: tool.name.clone(),
            input: call.input.clone(),
            safety: tool.safety,
            paths: Vec::new(),
        })
    }

    async fn execute(&self, call: &PreparedCall, cx: &CallContext) -> ToolOutput {
        if is_resource_tool(&call.name) {
            return self.run_resource_tool(&call.name, &call.input, cx).await;
        }
        match self.find(&call.name) {
            Some((server, tool)) => self.call(server, &tool, &call.input, cx).await,
            None => ToolOutput::error(format!("No tool named \"{}\".", call.name)),
        }
    }

    fn reach(&self, call: &PreparedCall) -> Reach {
        self.find(&call.name)
            .map_or(Reach::OpenWorld, |(_, tool)| tool.reach)
    }

    /// A server's annotations are its word only; the two resource tools are cairn's own,
    /// and only list or read.
    fn assurance(&self, call: &PreparedCall) -> Assurance {
        if is_resource_tool(&call.name) {
            Assurance::Checked
        } else {
            Assurance::Claimed
        }
    }
}
