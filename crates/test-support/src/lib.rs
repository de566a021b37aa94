//! A scripted Anthropic Messages API server for cairn's tests.
//!
//! [`ScriptedServer`] listens on `127.0.0.1` on a random port, speaks real HTTP/1.1 and answers
//! each request with the next queued [`Reply`], streamed as Server-Sent Events exactly like the
//! Anthropic streaming Messages API. Tests of the `cairn` binary and of the HTTP client point
//! `ANTHROPIC_BASE_URL` at [`ScriptedServer::url`], queue replies, and assert on the
//! [`RecordedRequest`]s. Replies can also misbehave on purpose: arrive late, in tiny chunks, cut
//! off mid-body or stalled, so retry and timeout paths can be tested without a network.
//!
//! ```no_run
//! use std::time::Duration;
//! use cairn_test_support::{Reply, ScriptedServer};
//!
//! let server = ScriptedServer::start();
//! server.push(Reply::text("Hello from the script"));
//! // Run the client or the `cairn` binary with ANTHROPIC_BASE_URL=server.url(), then:
//! let requests = server.wait_for_requests(1, Duration::from_secs(10));
//! assert_eq!(requests[0].path, "/v1/messages");
//! assert_eq!(requests[0].header("x-api-key"), Some("test-key"));
//! ```
//!
//! A request to a path ending in `/chat/completions` is answered in the OpenAI Chat
//! Completions dialect instead: the same replies, as `chat.completion.chunk`s (see the
//! `openai` module), so one scripted scenario runs against both providers. The endpoints a
//! client asks for a model's window (`/v1/models`, `/props`, `/api/show`) answer what the test
//! sets ([`ScriptedServer::answer_model_facts`]), and take no queued reply.
//!
//! The `cairn-scripted-server` binary serves a script of replies from a file, then one text
//! reply to every later request, for benchmarks and for trying cairn by hand. The
//! `cairn-test-mcp-server` binary is a test MCP server on stdio or streamable HTTP ([`mcp`]).
//!
//! This crate must not be a normal dependency of any crate: it is for tests and benchmarks
//! only.

#![deny(missing_docs)]

pub mod cache;
mod delivery;
mod facts;
pub mod mcp;
pub mod oauth;
mod openai;
mod pages;
mod reply;
mod server;
mod sse;

pub use pages::{PageRequest, PageServer, WebPage};
pub use reply::{Reply, ScriptedBlock};
pub use server::{RecordedRequest, ScriptedServer};
