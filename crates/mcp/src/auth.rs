//! OAuth 2.1 for the HTTP servers that ask for it, on rmcp's auth support
//! (`rmcp::transport::auth`): the protected resource's and the authorization server's
//! metadata found from the server's 401 challenge, dynamic client registration (or Claude
//! Code's `oauth.clientId`), the authorization-code flow with PKCE (S256) through a one-shot
//! loopback listener, the code exchanged for tokens, and their refresh.
//!
//! A server's tokens and its registered client live in `~/.cairn/mcp-auth/<key>.json` (a 0700
//! directory of 0600 files, each replaced whole), keyed by the server's name and URL ([`AuthStore`]).
//! A run never starts the flow itself, as Claude Code's `-p` does not: a server that answers
//! 401 without usable tokens fails with [`needs_login`], and `cairn mcp login <server>`
//! ([`login`]) runs the flow from the terminal. rmcp refreshes an expired token before a
//! request and a rejected one once on a 401; a refresh that fails is "needs authentication"
//! again. No token is ever printed or logged: rmcp's `StoredCredentials` redacts them in its
//! `Debug`, and no message here carries one.

use std::path::{Path, PathBuf};

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest, CredentialStore,
    OAuthState, StoredCredentials,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::config::HttpConfig;

/// Claude Code's `oauth` settings of an HTTP server (`"oauth": {"clientId": …}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OAuthConfig {
    /// A client registered with the authorization server beforehand, for servers without
    /// dynamic registration; without it cairn registers itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The redirect's port (`http://localhost:<port>/callback`, as registered with a
    /// pre-registered client); a free one otherwise (`http://127.0.0.1:<port>/callback`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_port: Option<u16>,
    /// The scopes to ask for, space-separated; otherwise those of the server's challenge or
    /// its metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<String>,
    /// Claude Code's override of metadata discovery. Read, not used: cairn always discovers
    /// the authorization server from the resource's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_server_metadata_url: Option<String>,
}

/// Why a server failed for want of authorization, with the command that fixes it.
pub fn needs_login(server: &str) -> String {
    format!("needs authentication: run `cairn mcp login {server}`")
}

/// Where the servers' tokens live: `~/.cairn/mcp-auth/`.
#[derive(Debug, Clone)]
pub struct AuthStore {
    dir: PathBuf,
}

impl AuthStore {
    /// The store under `cairn_home` (`~/.cairn`).
    pub fn new(cairn_home: &Path) -> Self {
        AuthStore {
            dir: cairn_home.join("mcp-auth"),
        }
    }

    /// The file of a server's tokens: its name (made safe for a file name) and a hash of its
    /// name and URL, so a server moved to another URL starts without the old tokens.
    pub fn file(&self, server: &str, url: &str) -> PathBuf {
        let mut hasher = Sha256::new();
        hasher.update(server.as_bytes());
        hasher.update([0]);
        hasher.update(url.as_bytes());
        let hash: String = hasher
            .finalize()
            .iter()
            .take(8)
            .map(|byte| format!("{byte:02x}"))
            .collect();
        let name: String = server
            .chars()
            .take(64)
            .map(
                |c| match c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    true => c,
                    false => '_',
                },
            )
            .collect();
        self.dir.join(format!("{name}-{hash}.json"))
    }

    /// Forgets a server's tokens; whether there were any.
    pub fn remove(&self, server: &str, url: &str) -> std::io::Result<bool> {
        match std::fs::remove_file(self.file(server, url)) {
            Ok(()) => Ok(true),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(err) => Err(err),
        }
    }

    fn credentials(&self, server: &str, url: &str) -> TokenFile {
        TokenFile {
            path: self.file(server, url),
            server: server.to_string(),
            url: url.to_string(),
        }
    }
}

/// What a token file holds: the server it is for, and rmcp's credentials (the registered
/// client's id, the token response with its refresh token, when it was received).
#[derive(Serialize, Deserialize)]
struct TokenFileContent {
    server: String,
    url: String,
    credentials: StoredCredentials,
}

/// One server's token file, as rmcp's credential store.
struct TokenFile {
    path: PathBuf,
    server: String,
    url: String,
}

fn store_error(path: &Path, what: &str, err: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(format!("{what} {}: {err}", path.display()))
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let bytes = match tokio::fs::read(&self.path).await {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(store_error(&self.path, "cannot read", err)),
        };
        // serde_json's messages give a position, never the text: no token leaks through.
        let content: TokenFileContent = serde_json::from_slice(&bytes)
            .map_err(|err| store_error(&self.path, "cannot parse", err))?;
        Ok(Some(content.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let content = TokenFileContent {
            server: self.server.clone(),
            url: self.url.clone(),
            credentials,
        };
        let bytes =
            serde_json::to_vec_pretty(&content).map_err(|err| store_error(&self.path, "", err))?;
        crate::private_write::replace_whole(&self.path, &bytes)
            .map_err(|err| store_error(&self.path, "cannot write", err))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match tokio::fs::remove_file(&self.path).await {
            Ok(()) => Ok(()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(store_error(&self.path, "cannot remove", err)),
        }
    }
}

/// reqwest is built without a default crypto provider; installing it twice is harmless.
fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The HTTP client and transport configuration for a server: its URL and its headers.
pub(crate) fn transport_parts(
    http: &HttpConfig,
) -> Result<(reqwest::Client, StreamableHttpClientTransportConfig), String> {
    let mut headers = std::collections::HashMap::new();
    for (name, value) in &http.headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|err| format!("its header {name:?} is not a valid name: {err}"))?;
        let value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|err| format!("its header {name} has a value HTTP cannot carry: {err}"))?;
        headers.insert(name, value);
    }
    install_crypto();
    let client = reqwest::Client::builder()
        .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|err| format!("cannot build an HTTP client: {err}"))?;
    let config =
        StreamableHttpClientTransportConfig::with_uri(http.url.as_str()).custom_headers(headers);
    Ok((client, config))
}

/// rmcp's authorization over a server's stored tokens, or `None` when it has none (it is then
/// tried without: a 401 is [`needs_login`]).
pub(crate) async fn stored_authorization(
    store: &AuthStore,
    server: &str,
    http: &HttpConfig,
) -> Result<Option<AuthorizationManager>, String> {
    let file = store.credentials(server, &http.url);
    if !file.path.exists() {
        return Ok(None);
    }
    let path = file.path.clone();
    install_crypto();
    let mut manager = AuthorizationManager::new(http.url.as_str())
        .await
        .map_err(|err| format!("its OAuth client cannot be set up: {err}"))?;
    manager.set_credential_store(file);
    match manager.initialize_from_store().await {
        Ok(true) => Ok(Some(manager)),
        Ok(false) => Ok(None),
        Err(err) => Err(format!(
            "its stored authorization ({}) cannot be used: {err}",
            path.display()
        )),
    }
}

/// What [`login`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginOutcome {
    /// The flow ran; the tokens are in this file.
    Authorized(PathBuf),
    /// The server accepted a connection without authorization: there is nothing to do.
    NotNeeded,
}

/// Why [`login`] failed.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// The server could not be reached, or failed otherwise than by asking for authorization.
    #[error("cannot connect to {url}: {reason}")]
    Unreachable {
        /// The server's URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The loopback listener for the redirect could not be opened.
    #[error("cannot listen for the authorization's redirect on 127.0.0.1:{port}: {source}")]
    Listen {
        /// The port asked for (0: any).
        port: u16,
        /// The system's reason.
        source: std::io::Error,
    },
    /// Discovery, registration or the authorization URL failed.
    #[error("the authorization could not start: {0}")]
    Start(AuthError),
    /// The authorization server redirected with an error (the user said no, say).
    #[error("the authorization server refused: {0}")]
    Refused(String),
    /// The redirect did not come back as OAuth says it should.
    #[error("the authorization's redirect is unusable: {0}")]
    Callback(String),
    /// The code could not be exchanged for tokens, or they could not be stored.
    #[error("the authorization code could not be exchanged for a token: {0}")]
    Exchange(AuthError),
}

/// Runs the authorization-code flow for a server: connects without authorization to get its
/// challenge, discovers, registers (unless `oauth.clientId` is set), hands the authorization
/// URL to `show` for the user to open, waits on a one-shot loopback listener for the
/// redirect, and exchanges the code; the tokens go to `store`. The caller bounds the wait
/// (a timeout, Ctrl+C) by dropping the future, which closes the listener.
pub async fn login(
    store: &AuthStore,
    server: &str,
    http: &HttpConfig,
    show: impl FnOnce(&str),
) -> Result<LoginOutcome, LoginError> {
    let Some(challenge) = challenge(http).await? else {
        return Ok(LoginOutcome::NotNeeded);
    };
    let oauth = http.oauth.clone().unwrap_or_default();
    let port = oauth.callback_port.unwrap_or(0);
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|source| LoginError::Listen { port, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| LoginError::Listen { port, source })?
        .port();
    // A pre-registered client's redirect is registered as Claude Code's: `localhost`.
    let host = match oauth.callback_port {
        Some(_) => "localhost",
        None => "127.0.0.1",
    };
    let redirect = format!("http://{host}:{bound}/callback");

    install_crypto();
    let mut manager = AuthorizationManager::new(http.url.as_str())
        .await
        .map_err(LoginError::Start)?;
    let file = store.credentials(server, &http.url);
    let path = file.path.clone();
    manager.set_credential_store(file);
    let mut request = AuthorizationRequest::new(redirect)
        .with_client_name("cairn")
        .with_initial_scope_selection()
        .with_challenge(challenge);
    if let Some(client_id) = &oauth.client_id {
        request = request.with_preregistered_client(client_id.clone());
    }
    if let Some(scopes) = &oauth.scopes {
        request = request.with_scopes(scopes.split_whitespace());
    }
    let mut state = OAuthState::Unauthorized(manager);
    state
        .start_authorization(request)
        .await
        .map_err(LoginError::Start)?;
    let url = state
        .get_authorization_url()
        .await
        .map_err(LoginError::Start)?;
    show(&url);
    let callback = wait_for_redirect(&listener, server).await?;
    state
        .handle_callback_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
        .map_err(LoginError::Exchange)?;
    Ok(LoginOutcome::Authorized(path))
}

/// The server's `WWW-Authenticate` challenge from a connection without authorization; `None`
/// when it connects without one.
async fn challenge(http: &HttpConfig) -> Result<Option<String>, LoginError> {
    let unreachable = |reason: String| LoginError::Unreachable {
        url: http.url.clone(),
        reason,
    };
    let (client, config) = transport_parts(http).map_err(unreachable)?;
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let mut info = rmcp::model::ClientConfig::default();
    info.protocol_version = rmcp::model::ProtocolVersion::V_2025_11_25;
    match rmcp::ServiceExt::serve(info, transport).await {
        Ok(running) => {
            let _ = running.cancel().await;
            Ok(None)
        }
        Err(err) => match err.auth_challenge() {
            Some(challenge) => Ok(Some(challenge.to_string())),
            None => Err(unreachable(err.to_string())),
        },
    }
}

/// The longest request the loopback listener reads.
const REDIRECT_REQUEST_LIMIT: usize = 16 * 1024;

/// Waits for the browser's `GET /callback?code=…&state=…`, answers it with a page saying what
/// happened, and returns its parameters. Other requests (a favicon) get a 404.
async fn wait_for_redirect(
    listener: &TcpListener,
    server: &str,
) -> Result<AuthorizationCallback, LoginError> {
    loop {
        let (mut stream, _) = listener
            .accept()
            .await
            .map_err(|err| LoginError::Callback(err.to_string()))?;
        let mut request = Vec::new();
        let mut chunk = [0u8; 2048];
        while !request.windows(4).any(|w| w == b"\r\n\r\n")
            && request.len() < REDIRECT_REQUEST_LIMIT
        {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => request.extend_from_slice(&chunk[..n]),
            }
        }
        let line = String::from_utf8_lossy(&request);
        let target = line
            .lines()
            .next()
            .and_then(|first| first.strip_prefix("GET "))
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or("");
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        if path != "/callback" {
            let _ = respond(
                &mut stream,
                "404 Not Found",
                "Not the authorization's redirect.",
            )
            .await;
            continue;
        }
        if let Some(error) = query_value(query, "error") {
            let description = query_value(query, "error_description").unwrap_or_default();
            let refused = format!("{error} {description}").trim().to_string();
            let page = format!("cairn was not authorized with {server}: {refused}.");
            let _ = respond(&mut stream, "400 Bad Request", &page).await;
            return Err(LoginError::Refused(refused));
        }
        match AuthorizationCallback::from_redirect_url(&format!("http://127.0.0.1{target}")) {
            Ok(callback) => {
                let page = format!("cairn is authorized with {server}. You can close this page.");
                let _ = respond(&mut stream, "200 OK", &page).await;
                return Ok(callback);
            }
            Err(err) => {
                let _ = respond(&mut stream, "400 Bad Request", &err.to_string()).await;
                return Err(LoginError::Callback(err.to_string()));
            }
        }
    }
}

/// A query parameter's value (the error codes OAuth sends are plain words; `+` is a space).
fn query_value(query: &str, name: &str) -> Option<String> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.replace('+', " ").replace("%20", " "))
}

async fn respond(
    stream: &mut tokio::net::TcpStream,
    status: &str,
    text: &str,
) -> std::io::Result<()> {
    let body = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>cairn</title><p>{}</p>",
        text.replace('&', "&amp;").replace('<', "&lt;")
    );
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}
