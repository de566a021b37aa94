//! What the interactive UI asks of the session's MCP servers, which the binary supplies: their
//! prompts as commands of the one table (`/mcp__server__prompt args`), a prompt's turn, the
//! resources a message mentions as `@server:uri`, and the resources `@` completion offers.
//! The same functions serve `-p`, so both faces read a line the same way.

use cairn_core::assembly::Turn;
use cairn_core::commands::{CommandEntry, McpPromptCall};

/// The future of what an [`McpFace`] does off the UI.
pub type McpFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;

/// The session's MCP servers, as the interactive UI uses them.
pub trait McpFace: Send + Sync + std::fmt::Debug {
    /// The connected servers' prompts, as entries of the command table.
    fn prompts(&self) -> Vec<CommandEntry>;

    /// The turn a prompt line becomes: the line in Claude Code's command tags, then what the
    /// server returned; or why it could not be fetched.
    fn prompt_turn(&self, call: McpPromptCall) -> McpFuture<Result<Turn, String>>;

    /// Whether `text` mentions a configured server's resource (`@server:uri`).
    fn mentions_resources(&self, text: &str) -> bool;

    /// `turn` with the resources its text mentions attached after it, and the warnings for
    /// the mentions that could not be read.
    fn attach_mentions(&self, turn: Turn) -> McpFuture<(Turn, Vec<String>)>;

    /// Done once every server has connected or failed (each within its start-up timeout).
    fn settled(&self) -> McpFuture<()>;

    /// The connected servers' resources as `server:uri`, for `@` completion.
    fn resources(&self) -> McpFuture<Vec<String>>;
}
