//! Which MCP servers a run has, read as Claude Code reads them: `mcpServers` in `~/.claude.json`
//! (user scope, and per project under `projects[<path>]`, local scope), the project's
//! `.mcp.json` (project scope, run only once approved), and `--mcp-config` (trusted).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::expand::expand_server;

/// One server as a configuration file writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ServerConfig {
    /// A program cairn starts and talks to over its standard input and output.
    Stdio(StdioConfig),
    /// A streamable-HTTP endpoint.
    Http(HttpConfig),
    /// The legacy HTTP+SSE transport (not supported: rmcp ships no client for it).
    Sse(HttpConfig),
    /// An Agent SDK host's in-process server (not supported in this face yet).
    Sdk {
        /// The server's name in its host.
        #[serde(default)]
        name: Option<String>,
    },
}

/// A server cairn starts as a child process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StdioConfig {
    /// The program, found on `PATH` unless it is a path.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables added to the environment it inherits.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// How long one tool call may take, in milliseconds (`MCP_TOOL_TIMEOUT` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// How long the server may take to start, in milliseconds (`MCP_TIMEOUT` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout: Option<u64>,
    /// Its tools go in every request even when tool search defers the others (Claude
    /// Code's `alwaysLoad`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub always_load: bool,
}

/// A server cairn reaches over HTTP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HttpConfig {
    /// The server's streamable HTTP endpoint.
    pub url: String,
    /// Headers sent with every request (an `Authorization` token, say).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// How long one tool call may take, in milliseconds (`MCP_TOOL_TIMEOUT` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// How long the connection may take, in milliseconds (`MCP_TIMEOUT` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout: Option<u64>,
    /// Its tools go in every request even when tool search defers the others (Claude
    /// Code's `alwaysLoad`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub always_load: bool,
    /// How cairn authorizes with a server that asks for OAuth (Claude Code's `oauth`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<crate::auth::OAuthConfig>,
}

impl ServerConfig {
    /// The per-call timeout the server's configuration sets, in milliseconds.
    pub fn timeout_ms(&self) -> Option<u64> {
        match self {
            ServerConfig::Stdio(stdio) => stdio.timeout,
            ServerConfig::Http(http) | ServerConfig::Sse(http) => http.timeout,
            ServerConfig::Sdk { .. } => None,
        }
    }

    /// Whether its tools are never deferred behind tool search (`alwaysLoad`).
    pub fn always_load(&self) -> bool {
        match self {
            ServerConfig::Stdio(stdio) => stdio.always_load,
            ServerConfig::Http(http) | ServerConfig::Sse(http) => http.always_load,
            ServerConfig::Sdk { .. } => false,
        }
    }

    /// The start-up timeout the server's configuration sets, in milliseconds.
    pub fn startup_timeout_ms(&self) -> Option<u64> {
        match self {
            ServerConfig::Stdio(stdio) => stdio.startup_timeout,
            ServerConfig::Http(http) | ServerConfig::Sse(http) => http.startup_timeout,
            ServerConfig::Sdk { .. } => None,
        }
    }
}

/// Where a server's configuration came from; a later scope replaces an earlier server of the
/// same name (local over project over user; `--mcp-config` over all).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Every project of the user's (`~/.claude.json`, `~/.cairn/mcp.json`).
    User,
    /// The project's `.mcp.json`, shared through its repository.
    Project,
    /// This project, for this user alone (`projects[<path>]` of those files).
    Local,
    /// `--mcp-config` on the command line.
    Flag,
}

impl Scope {
    /// The scope's name as `cairn mcp` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::Flag => "command line",
        }
    }
}

/// One configured server, its `${VAR}`s expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredServer {
    /// Its name under `mcpServers`.
    pub name: String,
    /// The scope it came from.
    pub scope: Scope,
    /// The file it was read from (or `--mcp-config` for inline JSON).
    pub origin: String,
    /// How to reach it.
    pub config: ServerConfig,
}

/// A configuration file that does not read, naming the file and the field.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but cannot be read.
    #[error("cannot read {}: {error}", file.display())]
    Unreadable {
        /// The file that exists but could not be read.
        file: PathBuf,
        /// Kept in the message, not as a source, so a chain prints it once.
        error: std::io::Error,
    },
    /// A value that does not fit.
    #[error("{origin}: {field}: {message}")]
    Invalid {
        /// The file, or `--mcp-config`.
        origin: String,
        /// The JSON path of the bad value (`mcpServers.github.args[0]`).
        field: String,
        /// What is wrong with it.
        message: String,
    },
}

/// Whether the user approved the project's `.mcp.json` servers, from the settings
/// `enableAllProjectMcpServers`, `enabledMcpjsonServers` and `disabledMcpjsonServers`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectApproval {
    /// `enableAllProjectMcpServers`.
    pub enable_all: bool,
    /// `enabledMcpjsonServers`.
    pub enabled: Vec<String>,
    /// `disabledMcpjsonServers`: never started, whatever else says.
    pub disabled: Vec<String>,
}

impl ProjectApproval {
    /// Read from the merged settings' raw JSON.
    pub fn from_settings(raw: &serde_json::Map<String, Value>) -> Self {
        let names = |key: &str| -> Vec<String> {
            raw.get(key)
                .and_then(Value::as_array)
                .map(|names| {
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default()
        };
        ProjectApproval {
            enable_all: raw
                .get("enableAllProjectMcpServers")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            enabled: names("enabledMcpjsonServers"),
            disabled: names("disabledMcpjsonServers"),
        }
    }

    fn decide(&self, name: &str) -> Approval {
        if self.disabled.iter().any(|disabled| disabled == name) {
            Approval::Disabled
        } else if self.enable_all || self.enabled.iter().any(|enabled| enabled == name) {
            Approval::Approved
        } else {
            Approval::Pending
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Approval {
    Approved,
    Pending,
    Disabled,
}

/// Where to look, and what the command line says.
#[derive(Debug, Clone)]
pub struct ConfigSources<'a> {
    /// The home directory, which holds `~/.claude.json`.
    pub home: &'a Path,
    /// cairn's own state (`~/.cairn`), which holds the servers `cairn mcp add` wrote.
    pub cairn_home: &'a Path,
    /// The project directory, which holds `.mcp.json`.
    pub project: &'a Path,
    /// `--mcp-config` values: each a file or a JSON object.
    pub flags: &'a [String],
    /// `--strict-mcp-config`: only the `--mcp-config` servers.
    pub strict: bool,
    /// What the settings approve of `.mcp.json`.
    pub approval: ProjectApproval,
}

/// The servers of a run, and what the user should hear about the ones left out.
#[derive(Debug, Default)]
pub struct Configured {
    /// The servers to start, one per name.
    pub servers: Vec<ConfiguredServer>,
    /// Project servers that wait for approval, and servers whose `${VAR}` has no value.
    pub warnings: Vec<String>,
    /// Project servers not approved yet (for `cairn mcp list`).
    pub unapproved: Vec<ConfiguredServer>,
}

/// A file of servers: `{"mcpServers": {name: server}}`.
#[derive(Debug, Default, Deserialize)]
struct ServersFile {
    #[serde(default, rename = "mcpServers")]
    mcp_servers: BTreeMap<String, Value>,
}

/// Reads every source. A file that is missing has no servers. A file that does not read is
/// left out with a warning naming it and the field (a typo in one file must not stop the run
/// or the other files' servers); a `--mcp-config` that does not read is an error, since the
/// caller asked for exactly those servers.
pub fn load(sources: &ConfigSources<'_>) -> Result<Configured, ConfigError> {
    let mut found: Vec<ConfiguredServer> = Vec::new();
    let mut configured = Configured::default();
    if !sources.strict {
        let project_key = sources.project.display().to_string();
        for file in [
            sources.home.join(".claude.json"),
            own_servers_file(sources.cairn_home),
        ] {
            let origin = file.display().to_string();
            let servers = read_json(&file).and_then(|value| {
                let Some(value) = value else {
                    return Ok(Vec::new());
                };
                let mut servers = servers_in(&value, "", &origin, Scope::User)?;
                if let Some(local) = value
                    .get("projects")
                    .and_then(|projects| projects.get(&project_key))
                {
                    let field = format!("projects[{project_key:?}].");
                    servers.extend(servers_in(local, &field, &origin, Scope::Local)?);
                }
                Ok(servers)
            });
            match servers {
                Ok(servers) => found.extend(servers),
                Err(err) => configured
                    .warnings
                    .push(format!("the MCP servers of {origin} do not start: {err}")),
            }
        }
        let mcp_json = sources.project.join(".mcp.json");
        let project = read_json(&mcp_json).and_then(|value| match value {
            Some(value) => servers_in(&value, "", ".mcp.json", Scope::Project),
            None => Ok(Vec::new()),
        });
        let project = match project {
            Ok(servers) => servers,
            Err(err) => {
                configured
                    .warnings
                    .push(format!("the MCP servers of .mcp.json do not start: {err}"));
                Vec::new()
            }
        };
        for server in project {
            match sources.approval.decide(&server.name) {
                Approval::Approved => found.push(server),
                Approval::Disabled => {}
                Approval::Pending => {
                    configured.warnings.push(format!(
                        "MCP server \"{}\" from .mcp.json is not approved and does not \
                         start: add it to enabledMcpjsonServers (or set \
                         enableAllProjectMcpServers) in .claude/settings.local.json",
                        server.name
                    ));
                    configured.unapproved.push(server);
                }
            }
        }
    }
    for flag in sources.flags {
        let (value, origin) = match serde_json::from_str::<Value>(flag) {
            Ok(value) if value.is_object() => (value, "--mcp-config".to_string()),
            _ => {
                let file = PathBuf::from(flag);
                if let Err(error) = std::fs::metadata(&file) {
                    return Err(ConfigError::Unreadable { file, error });
                }
                let value = read_json(&file)?.unwrap_or_else(|| Value::Object(Default::default()));
                (value, file.display().to_string())
            }
        };
        found.extend(servers_in(&value, "", &origin, Scope::Flag)?);
    }
    // A later scope wins; the order among names stays the first appearance.
    found.sort_by_key(|server| server.scope);
    for server in found {
        match expand_server(&server.config, server.scope) {
            Ok(config) => {
                let server = ConfiguredServer { config, ..server };
                match configured
                    .servers
                    .iter_mut()
                    .find(|seen| seen.name == server.name)
                {
                    Some(seen) => *seen = server,
                    None => configured.servers.push(server),
                }
            }
            Err(missing) => configured.warnings.push(format!(
                "MCP server \"{}\" ({}) does not start: {missing}",
                server.name, server.origin
            )),
        }
    }
    Ok(configured)
}

/// cairn's own file of servers added with `cairn mcp add --scope user|local`.
pub fn own_servers_file(cairn_home: &Path) -> PathBuf {
    cairn_home.join("mcp.json")
}

fn read_json(file: &Path) -> Result<Option<Value>, ConfigError> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        // A path through a file (an unusable `~/.cairn`) holds no servers either.
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None);
        }
        Err(error) => {
            return Err(ConfigError::Unreadable {
                file: file.to_path_buf(),
                error,
            });
        }
    };
    // `~/.claude.json` can be megabytes of Claude Code's own state, already parsed once for
    // the settings: a file that never names `mcpServers` holds none, and costs no parse.
    if !text.contains("\"mcpServers\"") {
        return Ok(None);
    }
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|err| ConfigError::Invalid {
            origin: file.display().to_string(),
            field: format!("line {}, column {}", err.line(), err.column()),
            message: err.to_string(),
        })
}

/// Checks that every server under `mcpServers` of `value` reads, naming the bad field.
pub(crate) fn check_servers(value: &Value, origin: &str) -> Result<(), ConfigError> {
    servers_in(value, "", origin, Scope::User).map(|_| ())
}

/// The servers under `mcpServers` of `value`, each checked field by field.
fn servers_in(
    value: &Value,
    prefix: &str,
    origin: &str,
    scope: Scope,
) -> Result<Vec<ConfiguredServer>, ConfigError> {
    let file: ServersFile = decode(value, "", origin)?;
    let mut servers = Vec::new();
    for (name, raw) in file.mcp_servers {
        let field = format!("{prefix}mcpServers.{name}");
        let mut raw = raw;
        // Claude Code's files leave out `"type": "stdio"`. The kind is read first so that a
        // bad value's path stays known (serde forgets it inside a tagged enum).
        let kind = match &mut raw {
            Value::Object(object) => match object.remove("type") {
                None => "stdio".to_string(),
                Some(Value::String(kind)) => kind,
                Some(other) => {
                    return Err(ConfigError::Invalid {
                        origin: origin.to_string(),
                        field: format!("{field}.type"),
                        message: format!("expected a string, found {other}"),
                    });
                }
            },
            _ => String::new(),
        };
        let config = match kind.as_str() {
            "stdio" => ServerConfig::Stdio(decode(&raw, &field, origin)?),
            "http" => ServerConfig::Http(decode(&raw, &field, origin)?),
            "sse" => ServerConfig::Sse(decode(&raw, &field, origin)?),
            "sdk" => ServerConfig::Sdk {
                name: raw.get("name").and_then(Value::as_str).map(String::from),
            },
            other => {
                return Err(ConfigError::Invalid {
                    origin: origin.to_string(),
                    field: format!("{field}.type"),
                    message: format!(
                        "unknown kind {other:?}: expected \"stdio\", \"http\", \"sse\" or \"sdk\""
                    ),
                });
            }
        };
        servers.push(ConfiguredServer {
            name,
            scope,
            origin: origin.to_string(),
            config,
        });
    }
    Ok(servers)
}

fn decode<T: serde::de::DeserializeOwned>(
    value: &Value,
    prefix: &str,
    origin: &str,
) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        let field = match (prefix.is_empty(), path.as_str()) {
            (true, _) => path.clone(),
            (false, ".") => prefix.to_string(),
            (false, _) => format!("{prefix}.{path}"),
        };
        ConfigError::Invalid {
            origin: origin.to_string(),
            field,
            message: err.into_inner().to_string(),
        }
    })
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
