//! One configured server: started in the background, its state watched, its tools listed
//! (live, or from the manifest cache until it connects), and the tail of its stderr kept for
//! the error a failure turns into.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio::sync::watch;

use crate::cache::ManifestCache;
use crate::config::{ConfiguredServer, HttpConfig, ServerConfig, StdioConfig};
use crate::tool::McpTool;

/// How many lines of a server's stderr its failure quotes.
const STDERR_LINES: usize = 20;

/// How long a failure waits for the rest of a server's stderr.
const STDERR_GRACE: Duration = Duration::from_millis(500);

type Client = RunningService<RoleClient, ClientSide>;

/// The directories a server may work in, asked afresh each time a server asks
/// (`roots/list`): the workspace and the directories added to it.
#[derive(Clone)]
pub struct Roots(Arc<dyn Fn() -> Vec<PathBuf> + Send + Sync>);

impl Roots {
    /// The roots `list` gives each time a server asks.
    pub fn live(list: impl Fn() -> Vec<PathBuf> + Send + Sync + 'static) -> Roots {
        Roots(Arc::new(list))
    }

    /// Always the same directories.
    pub fn fixed(roots: Vec<PathBuf>) -> Roots {
        Roots::live(move || roots.clone())
    }

    fn list(&self) -> Vec<PathBuf> {
        (self.0)()
    }
}

impl std::fmt::Debug for Roots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Roots").field(&self.list()).finish()
    }
}

/// A directory as a `file://` URI, every byte outside the unreserved set and `/` escaped.
pub(crate) fn file_uri(path: &std::path::Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(char::from(byte));
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri
}

/// The client side of a connection: cairn's name and capabilities, the roots it answers
/// with, sampling declined, elicitation answered by the face, and a wake-up when the server
/// says its tools, prompts or resources changed
/// (`notifications/{tools,prompts,resources}/list_changed`).
pub(crate) struct ClientSide {
    config: ClientConfig,
    changed: Arc<Changes>,
    roots: Roots,
    /// The server's name and who answers its elicitations.
    elicitation: (String, crate::elicitation::Elicitation),
}

/// What a server said changed on one connection, each kept as a permit until its follower
/// takes it, so a change is never missed. A connection has its own, so a follower of a
/// connection that ended cannot take the next one's changes.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    tools: tokio::sync::Notify,
    prompts: tokio::sync::Notify,
    resources: tokio::sync::Notify,
}

#[allow(
    deprecated,
    reason = "roots and sampling are deprecated in MCP's newest revision, but servers still ask"
)]
impl rmcp::ClientHandler for ClientSide {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let roots: Vec<Value> = self
            .roots
            .list()
            .iter()
            .map(|root| {
                let name = root
                    .file_name()
                    .map(|name| name.to_string_lossy().into_owned());
                serde_json::json!({"uri": file_uri(root), "name": name})
            })
            .collect();
        serde_json::from_value(serde_json::json!({ "roots": roots }))
            .map_err(|err| rmcp::ErrorData::internal_error(err.to_string(), None))
    }

    async fn create_message(
        &self,
        _params: rmcp::model::CreateMessageRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        Err(rmcp::ErrorData::new(
            rmcp::model::ErrorCode::INVALID_REQUEST,
            "cairn declines sampling requests: it does not let MCP servers use its model",
            None,
        ))
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        // The face answers (a form, or a decline where nobody can); a mode other than a form
        // (`url`) is declined.
        let (server, elicitation) = &self.elicitation;
        let answer = match crate::elicitation::request_of(server, &request) {
            Some(request) => elicitation.answer(request).await,
            None => crate::elicitation::ElicitationAnswer::Decline,
        };
        serde_json::from_value(crate::elicitation::result_of(answer))
            .map_err(|err| rmcp::ErrorData::internal_error(err.to_string(), None))
    }

    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        // A permit is kept if nobody waits yet, so a change is never missed.
        self.changed.tools.notify_one();
    }

    async fn on_prompt_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.changed.prompts.notify_one();
    }

    async fn on_resource_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.changed.resources.notify_one();
    }
}

/// The version of the tool list of every server of a run: bumped on every change, with a
/// wake-up for whoever waits for one.
#[derive(Debug, Default)]
pub(crate) struct Version {
    value: AtomicU64,
    changed: tokio::sync::Notify,
}

impl Version {
    pub(crate) fn get(&self) -> u64 {
        self.value.load(Ordering::SeqCst)
    }

    fn bump(&self) {
        self.value.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// Waits until the version is past `seen`.
    pub(crate) async fn changed_since(&self, seen: u64) {
        loop {
            let notified = self.changed.notified();
            if self.get() > seen {
                return;
            }
            notified.await;
        }
    }
}

/// What a server is doing.
#[derive(Clone)]
pub(crate) enum State {
    Starting,
    Connected(rmcp::Peer<RoleClient>),
    Failed(String),
    /// Turned off (`/mcp disable`, the SDK's `mcp_toggle`): stopped, offering nothing.
    Disabled,
}

/// A server's state as a face shows it (`cairn mcp list`, the stream-json `init` line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Still starting: its tools, if any, come from the manifest cache.
    Pending,
    /// Connected: its live tools are offered.
    Connected,
    /// It did not start, or stopped; the reason says why.
    Failed(String),
    /// Turned off by the user: not running, offering no tools or prompts.
    Disabled,
}

impl Status {
    /// The word Claude Code's `init` line uses.
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Connected => "connected",
            Status::Failed(_) => "failed",
            Status::Disabled => "disabled",
        }
    }
}

/// Limits that come from the environment (`MCP_TIMEOUT`, `MCP_TOOL_TIMEOUT`,
/// `MAX_MCP_OUTPUT_TOKENS`) and the server's own configuration.
#[derive(Debug, Clone)]
pub struct Limits {
    /// How long a server may take to start (`MCP_TIMEOUT`).
    pub startup: Duration,
    /// How long one call may take (`MCP_TOOL_TIMEOUT`).
    pub call: Duration,
    /// The cap on one result (`MAX_MCP_OUTPUT_TOKENS`).
    pub max_output_tokens: usize,
}

impl Limits {
    /// Claude Code's defaults, overridden by the variables `lookup` finds (milliseconds).
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let number = |name: &str| lookup(name).and_then(|value| value.trim().parse::<u64>().ok());
        Limits {
            startup: Duration::from_millis(number("MCP_TIMEOUT").unwrap_or(30_000)),
            call: Duration::from_millis(number("MCP_TOOL_TIMEOUT").unwrap_or(600_000)),
            max_output_tokens: number("MAX_MCP_OUTPUT_TOKENS")
                .and_then(|tokens| usize::try_from(tokens).ok())
                .unwrap_or(crate::result::DEFAULT_MAX_OUTPUT_TOKENS),
        }
    }
}

pub(crate) struct Server {
    pub(crate) configured: ConfiguredServer,
    key: String,
    state: watch::Sender<State>,
    /// The live list once connected; the cached one before.
    pub(crate) tools: RwLock<Vec<Arc<McpTool>>>,
    /// The running client, kept so the connection lives as long as the server does.
    client: tokio::sync::Mutex<Option<Client>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// The task reading stderr; it ends when the server exits.
    stderr_reader: Mutex<Option<tokio::task::JoinHandle<()>>>,
    pub(crate) limits: Limits,
    cache: ManifestCache,
    /// The directory stdio servers start in.
    project: PathBuf,
    /// Variables stdio servers inherit (cairn's environment without its credentials).
    inherited_env: Vec<(String, String)>,
    /// Bumped on every change of any server's tool list.
    version: Arc<Version>,
    /// Turned off by the user: not started, and stopped if running.
    pub(crate) disabled: AtomicBool,
    /// The number of the latest start, so a start overtaken by a newer one (a reconnect) or
    /// by a disable leaves the state alone.
    generation: AtomicU64,
    /// The roots it is told about.
    roots: Roots,
    /// Its prompts, listed when it connected.
    pub(crate) prompts: RwLock<Vec<Value>>,
    /// Whether the cache had a tool list when the run started.
    pub(crate) had_manifest: bool,
    /// The host's channel for its in-process (`sdk`) servers; `None` outside an SDK host.
    sdk: Option<Arc<dyn crate::sdk_transport::SdkMcpChannel>>,
    /// Who answers its elicitations.
    pub(crate) elicitation: crate::elicitation::Elicitation,
}

impl Server {
    pub(crate) fn new(
        configured: ConfiguredServer,
        limits: Limits,
        cache: ManifestCache,
        project: PathBuf,
        inherited_env: Vec<(String, String)>,
        version: Arc<Version>,
        roots: Roots,
    ) -> Self {
        let key = ManifestCache::key(&configured.name, &configured.config);
        let cached: Vec<Arc<McpTool>> = cache
            .load(&key)
            .unwrap_or_default()
            .iter()
            .filter_map(|tool| McpTool::from_listing(&configured.name, tool))
            .map(Arc::new)
            .collect();
        let limits = Limits {
            startup: configured
                .config
                .startup_timeout_ms()
                .map_or(limits.startup, Duration::from_millis),
            call: configured
                .config
                .timeout_ms()
                .map_or(limits.call, Duration::from_millis),
            ..limits
        };
        Server {
            had_manifest: !cached.is_empty(),
            configured,
            key,
            state: watch::channel(State::Starting).0,
            tools: RwLock::new(cached),
            client: tokio::sync::Mutex::new(None),
            stderr: Arc::default(),
            stderr_reader: Mutex::new(None),
            limits,
            cache,
            project,
            inherited_env,
            version,
            disabled: AtomicBool::new(false),
            generation: AtomicU64::new(0),
            sdk: None,
            roots,
            prompts: RwLock::new(Vec::new()),
            elicitation: crate::elicitation::Elicitation::default(),
        }
    }

    /// The same server, reaching an `sdk` server through the host's `channel`.
    pub(crate) fn with_sdk_channel(
        mut self,
        channel: Option<Arc<dyn crate::sdk_transport::SdkMcpChannel>>,
    ) -> Self {
        self.sdk = channel;
        self
    }

    pub(crate) fn name(&self) -> &str {
        &self.configured.name
    }

    pub(crate) fn state(&self) -> State {
        self.state.borrow().clone()
    }

    pub(crate) fn status(&self) -> Status {
        match self.state() {
            State::Starting => Status::Pending,
            State::Connected(_) => Status::Connected,
            State::Failed(reason) => Status::Failed(reason),
            State::Disabled => Status::Disabled,
        }
    }

    /// Waits until the server has connected or failed.
    pub(crate) async fn started(&self) -> State {
        let mut receiver = self.state.subscribe();
        match receiver
            .wait_for(|state| !matches!(state, State::Starting))
            .await
        {
            Ok(state) => state.clone(),
            // The sender lives in `self`: it cannot be gone while we borrow it.
            Err(_) => State::Failed("the server's state is gone".into()),
        }
    }

    /// Starts (or restarts) the server: connects, lists its tools, keeps them in the cache.
    /// Never fails: a failure becomes the server's state, with the reason.
    pub(crate) async fn connect(self: Arc<Self>) {
        if self.disabled.load(Ordering::SeqCst) {
            self.state.send_replace(State::Disabled);
            self.version.bump();
            return;
        }
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        self.state.send_replace(State::Starting);
        let attempt = tokio::time::timeout(self.limits.startup, self.open());
        let attempt = attempt.await;
        if self.generation.load(Ordering::SeqCst) != generation
            || self.disabled.load(Ordering::SeqCst)
        {
            // A newer start, or a disable, came while this one ran: its connection is dropped.
            if let Ok(Ok((client, ..))) = attempt {
                let _ = client.cancel().await;
            }
            return;
        }
        let state = match attempt {
            Ok(Ok((client, listing, changes))) => {
                let tools: Vec<Arc<McpTool>> = listing
                    .iter()
                    .filter_map(|tool| McpTool::from_listing(self.name(), tool))
                    .map(Arc::new)
                    .collect();
                // A cache that cannot be written costs the next run its head start, nothing
                // more.
                let _ = self.cache.store(&self.key, self.name(), &listing);
                if let Ok(mut live) = self.tools.write() {
                    *live = tools;
                }
                let peer = client.peer().clone();
                self.list_prompts(&peer).await;
                *self.client.lock().await = Some(client);
                tokio::spawn(self.clone().follow_list_changes(peer.clone(), changes));
                State::Connected(peer)
            }
            Ok(Err(reason)) => State::Failed(self.with_stderr_after_exit(reason).await),
            Err(_) => State::Failed(self.with_stderr(format!(
                "it did not start within {} s (MCP_TIMEOUT, or the server's startupTimeout)",
                self.limits.startup.as_secs_f32()
            ))),
        };
        self.state.send_replace(state);
        self.version.bump();
    }

    /// Lists the server's prompts (a server whose prompts cannot be listed still serves its
    /// tools).
    async fn list_prompts(&self, peer: &rmcp::Peer<RoleClient>) {
        let prompts = match supports(peer, |caps| caps.prompts.is_some()) {
            true => peer.list_all_prompts().await.unwrap_or_default(),
            false => Vec::new(),
        };
        if let Ok(mut live) = self.prompts.write() {
            *live = prompts
                .iter()
                .filter_map(|prompt| serde_json::to_value(prompt).ok())
                .collect();
        }
    }

    /// Lists the tools or prompts again each time the server says they changed, for as long
    /// as this connection lasts. Resources need nothing: the resource tools list them afresh
    /// on every call.
    async fn follow_list_changes(
        self: Arc<Self>,
        peer: rmcp::Peer<RoleClient>,
        changes: Arc<Changes>,
    ) {
        loop {
            let tools = tokio::select! {
                () = changes.tools.notified() => true,
                () = changes.prompts.notified() => false,
                () = changes.resources.notified() => continue,
            };
            if peer.is_transport_closed() {
                return;
            }
            if !tools {
                self.list_prompts(&peer).await;
                self.version.bump();
                continue;
            }
            let Ok(tools) = peer.list_all_tools().await else {
                return;
            };
            let listing: Vec<Value> = tools
                .iter()
                .filter_map(|tool| serde_json::to_value(tool).ok())
                .collect();
            let _ = self.cache.store(&self.key, self.name(), &listing);
            if let Ok(mut live) = self.tools.write() {
                *live = listing
                    .iter()
                    .filter_map(|tool| McpTool::from_listing(self.name(), tool))
                    .map(Arc::new)
                    .collect();
            }
            self.version.bump();
        }
    }

    /// Stops the running client, if any (its child process is killed), and forgets the
    /// stderr of that run. A start under way is overtaken: its connection is dropped when it
    /// ends.
    pub(crate) async fn stop(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        let client = self.client.lock().await.take();
        if let Some(client) = client {
            let _ = client.cancel().await;
        }
        if let Ok(mut slot) = self.stderr_reader.lock() {
            slot.take();
        }
        if let Ok(mut tail) = self.stderr.lock() {
            tail.clear();
        }
    }

    /// Turns the server off: stopped, and `Disabled` until it is enabled again.
    pub(crate) async fn disable(&self) {
        self.disabled.store(true, Ordering::SeqCst);
        self.state.send_replace(State::Disabled);
        self.version.bump();
        self.stop().await;
    }

    /// Marks a connected server as failed (it stopped answering or exited mid-call).
    pub(crate) async fn fail(&self, reason: String) -> String {
        let reason = self.with_stderr_after_exit(reason).await;
        // A server the user stopped (disabled, or restarting) keeps the state that says so.
        if matches!(self.state(), State::Connected(_)) && !self.disabled.load(Ordering::SeqCst) {
            self.state.send_replace(State::Failed(reason.clone()));
            self.version.bump();
        }
        reason
    }

    /// [`Server::with_stderr`] once the server's stderr has ended (it exited), so its last
    /// words are in; waiting at most a moment for a server that is still alive.
    pub(crate) async fn with_stderr_after_exit(&self, reason: String) -> String {
        let reader = self
            .stderr_reader
            .lock()
            .ok()
            .and_then(|mut slot| slot.take());
        if let Some(reader) = reader {
            let _ = tokio::time::timeout(STDERR_GRACE, reader).await;
        }
        self.with_stderr(reason)
    }

    /// `reason`, and the last lines the server wrote on stderr, if any.
    pub(crate) fn with_stderr(&self, reason: String) -> String {
        let tail: Vec<String> = self
            .stderr
            .lock()
            .map(|lines| lines.iter().cloned().collect())
            .unwrap_or_default();
        if tail.is_empty() {
            reason
        } else {
            format!("{reason}. Its stderr ended with:\n{}", tail.join("\n"))
        }
    }

    async fn open(&self) -> Result<(Client, Vec<Value>, Arc<Changes>), String> {
        let watcher = self.watcher();
        let changes = watcher.changed.clone();
        let client = match &self.configured.config {
            ServerConfig::Stdio(stdio) => self.open_stdio(stdio, watcher).await?,
            ServerConfig::Http(http) => {
                open_http(self.name(), http, self.cache.cairn_home(), watcher).await?
            }
            ServerConfig::Sse(_) => {
                return Err(
                    "the legacy SSE transport is not supported (rmcp has no client \
                            for it); use \"type\": \"http\" if the server speaks streamable \
                            HTTP"
                        .into(),
                );
            }
            ServerConfig::Sdk { name } => match &self.sdk {
                Some(channel) => {
                    let server = name.clone().unwrap_or_else(|| self.name().to_owned());
                    let transport =
                        crate::sdk_transport::SdkTransport::new(server, channel.clone());
                    watcher
                        .serve(transport)
                        .await
                        .map_err(|err| format!("it did not complete the MCP handshake: {err}"))?
                }
                None => {
                    return Err(
                        "SDK servers run inside an Agent SDK host, which this run has not".into(),
                    );
                }
            },
        };
        let tools = client
            .peer()
            .list_all_tools()
            .await
            .map_err(|err| format!("it failed to list its tools: {err}"))?;
        let listing = tools
            .iter()
            .filter_map(|tool| serde_json::to_value(tool).ok())
            .collect();
        Ok((client, listing, changes))
    }

    async fn open_stdio(&self, stdio: &StdioConfig, watcher: ClientSide) -> Result<Client, String> {
        let mut command = tokio::process::Command::new(&stdio.command);
        command
            .args(&stdio.args)
            .env_clear()
            .envs(self.inherited_env.iter().map(|(k, v)| (k, v)))
            .envs(&stdio.env)
            .current_dir(&self.project)
            .kill_on_drop(true);
        let (transport, stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|err| format!("cannot run `{}`: {err}", stdio.command))?;
        if let Some(stderr) = stderr {
            let tail = self.stderr.clone();
            let reader = tokio::spawn(async move {
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if let Ok(mut tail) = tail.lock() {
                        if tail.len() == STDERR_LINES {
                            tail.pop_front();
                        }
                        tail.push_back(line);
                    }
                }
            });
            if let Ok(mut slot) = self.stderr_reader.lock() {
                *slot = Some(reader);
            }
        }
        watcher
            .serve(transport)
            .await
            .map_err(|err| format!("it did not complete the MCP handshake: {err}"))
    }
}

/// Connects over streamable HTTP, with the server's stored OAuth tokens if it has any (rmcp
/// refreshes them when they expire or are refused); a server that asks for authorization
/// and has no usable tokens fails with the command that gets them.
async fn open_http(
    name: &str,
    http: &HttpConfig,
    cairn_home: &std::path::Path,
    watcher: ClientSide,
) -> Result<Client, String> {
    let (client, config) = crate::auth::transport_parts(http)?;
    let store = crate::auth::AuthStore::new(cairn_home);
    let served = match crate::auth::stored_authorization(&store, name, http).await? {
        Some(manager) => {
            let client = rmcp::transport::AuthClient::new(client, manager);
            watcher
                .serve(StreamableHttpClientTransport::with_client(client, config))
                .await
        }
        None => {
            watcher
                .serve(StreamableHttpClientTransport::with_client(client, config))
                .await
        }
    };
    served.map_err(|err| match err.is_authorization_required() {
        true => crate::auth::needs_login(name),
        false => format!(
            "it did not complete the MCP handshake at {}: {err}",
            http.url
        ),
    })
}

impl Server {
    /// The client side of a new connection, with its own [`Changes`].
    fn watcher(&self) -> ClientSide {
        ClientSide {
            config: client_config(),
            changed: Arc::default(),
            roots: self.roots.clone(),
            elicitation: (self.configured.name.clone(), self.elicitation.clone()),
        }
    }
}

/// Whether the server said, in its handshake, that it has what `has` looks for.
pub(crate) fn supports(
    peer: &rmcp::Peer<RoleClient>,
    has: impl Fn(&rmcp::model::ServerCapabilities) -> bool,
) -> bool {
    peer.peer_info().is_some_and(|info| has(&info.capabilities))
}

/// cairn's side of the handshake: protocol revision 2025-11-25, roots (the workspace), and
/// elicitation (forms), which the face answers; no sampling.
fn client_config() -> ClientConfig {
    let capabilities: ClientCapabilities = serde_json::from_value(serde_json::json!({
        "roots": {"listChanged": false},
        "elicitation": {"form": {}}
    }))
    .unwrap_or_default();
    let mut config = ClientConfig::new(
        capabilities,
        Implementation::new("cairn", env!("CARGO_PKG_VERSION")),
    );
    // The revision servers and clients speak today (Claude Code's, the conformance suite's);
    // rmcp's default, 2026-07-28, forbids the server-to-client requests (roots, elicitation)
    // that servers of this revision still make.
    config.protocol_version = rmcp::model::ProtocolVersion::V_2025_11_25;
    config
}
