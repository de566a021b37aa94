//! `cairn mcp login <server>` and `cairn mcp logout <server>`: the OAuth flow of an HTTP
//! server run from the terminal (`cairn_mcp::auth::login`), and its stored tokens forgotten.
//! As in Claude Code (`claude mcp login`, or `/mcp` → Authenticate), a run never starts the
//! flow by itself: a server that needs it is failed with the command to run.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use cairn_mcp::auth::{AuthStore, LoginOutcome};
use cairn_mcp::config::{ConfiguredServer, HttpConfig, ServerConfig};

use crate::args::Args;

/// How long `cairn mcp login` waits for the browser's redirect.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// The HTTP server named `name` in the run's configuration (approved or not: logging in
/// starts nothing).
fn http_server(args: &Args, name: &str) -> anyhow::Result<HttpConfig> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let home = std::env::home_dir().context("cannot find the home directory: set HOME")?;
    let settings = crate::settings::load_settings(args, &cwd)?;
    let configured = crate::mcp::configured(args, &settings, &cwd, &home)?;
    let found: Option<&ConfiguredServer> = configured
        .servers
        .iter()
        .chain(&configured.unapproved)
        .find(|server| server.name == name);
    match found.map(|server| &server.config) {
        Some(ServerConfig::Http(http)) => Ok(http.clone()),
        Some(ServerConfig::Sse(_)) => anyhow::bail!(
            "\"{name}\" is an sse server, which cairn does not support; OAuth is for its \
             \"http\" servers"
        ),
        Some(ServerConfig::Stdio(_) | ServerConfig::Sdk { .. }) => anyhow::bail!(
            "\"{name}\" is not an HTTP server: only \"type\": \"http\" servers use OAuth"
        ),
        None => anyhow::bail!(
            "no MCP server named \"{name}\" (`cairn mcp list` shows the configured ones)"
        ),
    }
}

/// `cairn mcp login NAME`.
pub fn login(args: &Args, name: &str) -> anyhow::Result<ExitCode> {
    let http = http_server(args, name)?;
    let store = AuthStore::new(&crate::session::cairn_home()?);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let show = |url: &str| {
        println!("To authorize cairn with \"{name}\", open this URL in your browser:\n\n  {url}\n");
        println!(
            "Waiting for the authorization (up to {} minutes; Ctrl+C to cancel)…",
            LOGIN_TIMEOUT.as_secs() / 60
        );
    };
    let outcome = runtime.block_on(async {
        tokio::select! {
            outcome = tokio::time::timeout(
                LOGIN_TIMEOUT,
                cairn_mcp::auth::login(&store, name, &http, show),
            ) => Some(outcome),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    runtime.shutdown_background();
    match outcome {
        None => anyhow::bail!("cancelled: \"{name}\" is not authorized"),
        Some(Err(_)) => anyhow::bail!(
            "the authorization did not come back within {} minutes: \"{name}\" is not \
             authorized (run `cairn mcp login {name}` again)",
            LOGIN_TIMEOUT.as_secs() / 60
        ),
        Some(Ok(Err(err))) => Err(err).with_context(|| format!("cannot authorize \"{name}\"")),
        Some(Ok(Ok(LoginOutcome::NotNeeded))) => {
            println!("\"{name}\" accepts cairn without authorization: there is nothing to do.");
            Ok(ExitCode::SUCCESS)
        }
        Some(Ok(Ok(LoginOutcome::Authorized(file)))) => {
            println!(
                "Authorized: \"{name}\"'s tokens are stored in {}.",
                file.display()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `cairn mcp logout NAME`.
pub fn logout(args: &Args, name: &str) -> anyhow::Result<ExitCode> {
    let http = http_server(args, name)?;
    let store = AuthStore::new(&crate::session::cairn_home()?);
    let file = store.file(name, &http.url);
    let removed = store
        .remove(name, &http.url)
        .with_context(|| format!("cannot remove {}", file.display()))?;
    match removed {
        true => println!("Removed \"{name}\"'s tokens ({}).", file.display()),
        false => println!("\"{name}\" has no stored tokens."),
    }
    Ok(ExitCode::SUCCESS)
}
