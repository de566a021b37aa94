//! `cairn-test-mcp-server`: the test MCP server on stdio (see `cairn_test_support::mcp`).
//!
//! ```text
//! cairn-test-mcp-server [--sleep-before-initialize SECONDS] [--tools N] [--http]
//!     [--list-changes] [--resources] [--client-requests] [--permit]
//! ```

use std::io::Write;
use std::process::ExitCode;

use cairn_test_support::mcp::{McpServerOptions, TestMcpServer};

fn main() -> ExitCode {
    let options = match McpServerOptions::parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "cairn-test-mcp-server: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "cairn-test-mcp-server: {err}");
            return ExitCode::FAILURE;
        }
    };
    let server = TestMcpServer::new(options.clone());
    let served = if options.http {
        runtime.block_on(server.serve_http(|url| {
            let mut out = std::io::stdout();
            let _ = writeln!(out, "{url}");
            let _ = out.flush();
        }))
    } else {
        runtime.block_on(server.serve_stdio())
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "cairn-test-mcp-server: {message}");
            ExitCode::FAILURE
        }
    }
}
