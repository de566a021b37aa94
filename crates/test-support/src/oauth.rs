//! An OAuth-protected streamable HTTP MCP server, for tests of cairn's OAuth client: the test
//! MCP server's tools ([`crate::mcp::TestMcpServer`], on rmcp's server side) behind bearer
//! tokens, and beside it on the same port a minimal authorization server — protected resource
//! and authorization server metadata, dynamic registration, an `authorize` endpoint that
//! approves at once (it redirects to the client's redirect URI with a code), and a token
//! endpoint for the code (PKCE S256 checked) and for refresh (rotating the refresh token).
//! rmcp has no server side of OAuth to build on, so this is the least a client needs.
//!
//! A test counts refreshes and revokes tokens through [`OAuthMcpServer`]; [`open_in_browser`]
//! plays the user's browser, following the redirects to the client's loopback listener.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::mcp::{McpServerOptions, TestMcpServer};

type Body = BoxBody<Bytes, std::convert::Infallible>;

/// A code handed out by `authorize`, waiting to be exchanged.
struct PendingCode {
    client_id: String,
    redirect_uri: String,
    challenge: String,
}

/// What the authorization server has handed out.
#[derive(Default)]
struct Grants {
    /// Registered clients and their redirect URIs.
    clients: HashMap<String, Vec<String>>,
    codes: HashMap<String, PendingCode>,
    access: HashSet<String>,
    refresh: HashSet<String>,
    next: u64,
    refreshes: usize,
    registrations: usize,
}

impl Grants {
    fn issue(&mut self) -> Value {
        self.next += 1;
        let access = format!("access-token-secret-{}", self.next);
        let refresh = format!("refresh-token-secret-{}", self.next);
        self.access.insert(access.clone());
        self.refresh.insert(refresh.clone());
        json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": refresh,
            "scope": "mcp"
        })
    }
}

/// The server, running on a thread of its own until the test process ends.
pub struct OAuthMcpServer {
    base: String,
    grants: Arc<Mutex<Grants>>,
}

impl std::fmt::Debug for OAuthMcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthMcpServer")
            .field("base", &self.base)
            .finish()
    }
}

impl OAuthMcpServer {
    /// Starts the server on 127.0.0.1 at a free port.
    pub fn start() -> Self {
        let grants = Arc::new(Mutex::new(Grants::default()));
        let (sender, receiver) = std::sync::mpsc::channel();
        let shared = grants.clone();
        std::thread::spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(err) => {
                    let _ = sender.send(Err(err.to_string()));
                    return;
                }
            };
            runtime.block_on(serve(shared, sender));
        });
        let base = match receiver.recv() {
            Ok(Ok(base)) => base,
            Ok(Err(err)) => panic!("the OAuth test server did not start: {err}"),
            Err(_) => panic!("the OAuth test server did not start"),
        };
        OAuthMcpServer { base, grants }
    }

    /// The MCP endpoint's URL.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    fn grants(&self) -> std::sync::MutexGuard<'_, Grants> {
        self.grants
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How many refresh-token grants it has honoured.
    pub fn refreshes(&self) -> usize {
        self.grants().refreshes
    }

    /// How many clients registered themselves.
    pub fn registrations(&self) -> usize {
        self.grants().registrations
    }

    /// Forgets every access token (refresh tokens still work).
    pub fn revoke_access_tokens(&self) {
        self.grants().access.clear();
    }

    /// Forgets every token: the client must authorize again.
    pub fn revoke_all(&self) {
        let mut grants = self.grants();
        grants.access.clear();
        grants.refresh.clear();
    }
}

async fn serve(grants: Arc<Mutex<Grants>>, ready: std::sync::mpsc::Sender<Result<String, String>>) {
    use rmcp::transport::StreamableHttpService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", 0)).await {
        Ok(listener) => listener,
        Err(err) => {
            let _ = ready.send(Err(err.to_string()));
            return;
        }
    };
    let base = match listener.local_addr() {
        Ok(address) => format!("http://{address}"),
        Err(err) => {
            let _ = ready.send(Err(err.to_string()));
            return;
        }
    };
    let handler = TestMcpServer::new(McpServerOptions::default());
    let mcp = Arc::new(StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        Default::default(),
    ));
    let _ = ready.send(Ok(base.clone()));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let (mcp, grants, base) = (mcp.clone(), grants.clone(), base.clone());
        tokio::spawn(async move {
            let serve = hyper::service::service_fn(
                move |request: hyper::Request<hyper::body::Incoming>| {
                    let (mcp, grants, base) = (mcp.clone(), grants.clone(), base.clone());
                    async move {
                        let path = request.uri().path().to_string();
                        let response = match path.as_str() {
                            "/mcp" => match bearer_is_valid(&request, &grants) {
                                true => mcp.handle(request).await,
                                false => unauthorized(&base),
                            },
                            path => authorization_server(path, request, &grants, &base).await,
                        };
                        Ok::<_, std::convert::Infallible>(response)
                    }
                },
            );
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), serve)
                .await;
        });
    }
}

fn bearer_is_valid(
    request: &hyper::Request<hyper::body::Incoming>,
    grants: &Mutex<Grants>,
) -> bool {
    let token = request
        .headers()
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    match (token, grants.lock()) {
        (Some(token), Ok(grants)) => grants.access.contains(token),
        _ => false,
    }
}

fn response(status: u16, headers: &[(&str, String)], body: Vec<u8>) -> hyper::Response<Body> {
    let mut builder = hyper::Response::builder().status(status);
    for (name, value) in headers {
        builder = builder.header(*name, value);
    }
    builder
        .body(Full::new(Bytes::from(body)).boxed())
        .unwrap_or_default()
}

fn json_response(status: u16, value: Value) -> hyper::Response<Body> {
    response(
        status,
        &[("content-type", "application/json".into())],
        value.to_string().into_bytes(),
    )
}

fn unauthorized(base: &str) -> hyper::Response<Body> {
    let challenge =
        format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"");
    response(
        401,
        &[("www-authenticate", challenge)],
        b"authorization required".to_vec(),
    )
}

fn oauth_error(error: &str) -> hyper::Response<Body> {
    json_response(400, json!({"error": error}))
}

fn query(request: &hyper::Request<hyper::body::Incoming>) -> HashMap<String, String> {
    url::form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes())
        .into_owned()
        .collect()
}

async fn body(request: hyper::Request<hyper::body::Incoming>) -> Vec<u8> {
    match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes().to_vec(),
        Err(_) => Vec::new(),
    }
}

async fn authorization_server(
    path: &str,
    request: hyper::Request<hyper::body::Incoming>,
    grants: &Mutex<Grants>,
    base: &str,
) -> hyper::Response<Body> {
    match path {
        "/.well-known/oauth-protected-resource/mcp" | "/.well-known/oauth-protected-resource" => {
            json_response(
                200,
                json!({
                    "resource": format!("{base}/mcp"),
                    "authorization_servers": [base],
                    "scopes_supported": ["mcp"]
                }),
            )
        }
        "/.well-known/oauth-authorization-server" => json_response(
            200,
            json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "scopes_supported": ["mcp"]
            }),
        ),
        "/register" => {
            let metadata: Value = serde_json::from_slice(&body(request).await).unwrap_or_default();
            let redirect_uris: Vec<String> = metadata["redirect_uris"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|uri| uri.as_str().map(str::to_string))
                .collect();
            let Ok(mut grants) = grants.lock() else {
                return oauth_error("server_error");
            };
            grants.registrations += 1;
            let client_id = format!("client-{}", grants.registrations);
            grants
                .clients
                .insert(client_id.clone(), redirect_uris.clone());
            json_response(
                201,
                json!({
                    "client_id": client_id,
                    "redirect_uris": redirect_uris,
                    "token_endpoint_auth_method": "none",
                    "grant_types": ["authorization_code", "refresh_token"],
                    "response_types": ["code"]
                }),
            )
        }
        "/authorize" => {
            let params = query(&request);
            let param = |name: &str| params.get(name).cloned().unwrap_or_default();
            let Ok(mut grants) = grants.lock() else {
                return oauth_error("server_error");
            };
            let (client_id, redirect_uri) = (param("client_id"), param("redirect_uri"));
            let registered = grants
                .clients
                .get(&client_id)
                .is_some_and(|uris| uris.contains(&redirect_uri));
            if !registered || param("code_challenge_method") != "S256" {
                return oauth_error("invalid_request");
            }
            grants.next += 1;
            let code = format!("code-{}", grants.next);
            grants.codes.insert(
                code.clone(),
                PendingCode {
                    client_id,
                    redirect_uri: redirect_uri.clone(),
                    challenge: param("code_challenge"),
                },
            );
            let location = url::Url::parse_with_params(
                &redirect_uri,
                [("code", code.as_str()), ("state", param("state").as_str())],
            )
            .map(String::from)
            .unwrap_or(redirect_uri);
            response(302, &[("location", location)], Vec::new())
        }
        "/token" => {
            let form: HashMap<String, String> = url::form_urlencoded::parse(&body(request).await)
                .into_owned()
                .collect();
            let field = |name: &str| form.get(name).cloned().unwrap_or_default();
            let Ok(mut grants) = grants.lock() else {
                return oauth_error("server_error");
            };
            match field("grant_type").as_str() {
                "authorization_code" => {
                    let Some(pending) = grants.codes.remove(&field("code")) else {
                        return oauth_error("invalid_grant");
                    };
                    let verified = base64::engine::general_purpose::URL_SAFE_NO_PAD
                        .encode(Sha256::digest(field("code_verifier").as_bytes()));
                    if verified != pending.challenge
                        || field("client_id") != pending.client_id
                        || field("redirect_uri") != pending.redirect_uri
                    {
                        return oauth_error("invalid_grant");
                    }
                    json_response(200, grants.issue())
                }
                "refresh_token" => {
                    if !grants.refresh.remove(&field("refresh_token")) {
                        return oauth_error("invalid_grant");
                    }
                    grants.refreshes += 1;
                    json_response(200, grants.issue())
                }
                _ => oauth_error("unsupported_grant_type"),
            }
        }
        _ => response(404, &[], b"not found".to_vec()),
    }
}

/// What the user's browser does with an authorization URL: GETs it and follows the
/// redirects (to the client's loopback listener, here); the last answer's status and body.
pub fn open_in_browser(url: &str) -> Result<(u16, String), String> {
    let mut url = url::Url::parse(url).map_err(|err| format!("{url}: {err}"))?;
    for _ in 0..5 {
        let host = url.host_str().unwrap_or("127.0.0.1").to_string();
        let port = url.port_or_known_default().unwrap_or(80);
        let mut stream = std::net::TcpStream::connect((host.as_str(), port))
            .map_err(|err| format!("{url}: {err}"))?;
        let target = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        };
        write!(
            stream,
            "GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
        )
        .map_err(|err| format!("{url}: {err}"))?;
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .map_err(|err| format!("{url}: {err}"))?;
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        let status: u16 = head
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .ok_or_else(|| format!("{url}: no status in {head:?}"))?;
        let location = head.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("location")
                .then(|| value.trim().to_string())
        });
        match (status, location) {
            (300..=399, Some(location)) => {
                url = url
                    .join(&location)
                    .map_err(|err| format!("{location}: {err}"))?;
            }
            _ => return Ok((status, body.to_string())),
        }
    }
    Err(format!("{url}: too many redirects"))
}
