//! The contract every built-in tool implements.

use std::path::PathBuf;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::{ToolContext, ToolOutput};

/// Whether a call changes anything outside cairn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads only; nothing outside cairn changes.
    ReadOnly,
    /// Changes files, processes or anything else outside cairn.
    Writes,
}

/// Whether a call can destroy something that is hard to get back (deleting, overwriting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Destructiveness {
    /// What it changes can be got back, or it changes nothing.
    Harmless,
    /// It can destroy something for good (`rm`, overwriting a whole file).
    Destructive,
}

/// Whether a call may run at the same time as other concurrency-safe calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concurrency {
    /// May run at the same time as the `Safe` calls next to it in the same assistant message.
    Safe,
    /// Runs alone, after the calls before it and before those after it.
    Exclusive,
}

/// The three safety attributes of one call. Every field must be given: there are no defaults,
/// so a tool cannot forget one.
///
/// ```compile_fail
/// use cairn_tools::{Access, Concurrency, Safety};
/// // Leaving out `destructive` does not compile.
/// let safety = Safety { access: Access::ReadOnly, concurrency: Concurrency::Safe };
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Safety {
    /// Whether the call changes anything.
    pub access: Access,
    /// Whether what it changes can be lost for good.
    pub destructive: Destructiveness,
    /// Whether it may run beside other calls.
    pub concurrency: Concurrency,
}

impl Safety {
    /// Reads only, harmless, and safe to run beside other such calls.
    pub const READ_ONLY: Safety = Safety {
        access: Access::ReadOnly,
        destructive: Destructiveness::Harmless,
        concurrency: Concurrency::Safe,
    };
}

/// One built-in tool.
///
/// `safety` and `touched_paths` have no default implementation: a tool that does not state
/// its safety does not compile. `validate` has one (nothing to check), because most tools
/// cannot tell before running that a call will fail.
///
/// ```compile_fail
/// use std::path::PathBuf;
/// use cairn_tools::{Tool, ToolContext, ToolOutput};
/// use tokio_util::sync::CancellationToken;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Input { path: String }
///
/// struct Forgetful;
///
/// #[async_trait::async_trait]
/// impl Tool for Forgetful {
///     type Input = Input;
///     fn name(&self) -> &'static str { "Forgetful" }
///     fn description(&self) -> String { "forgets its safety".into() }
///     fn touched_paths(&self, _: &Input, _: &ToolContext) -> Vec<PathBuf> { Vec::new() }
///     async fn run(&self, _: Input, _: &ToolContext, _: &CancellationToken) -> ToolOutput {
///         ToolOutput::text("")
///     }
///     // no `fn safety`: error[E0046]: not all trait items implemented
/// }
/// ```
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The typed input. Its derived JSON Schema is what the model sees; input that does not
    /// deserialise never reaches [`Tool::run`].
    type Input: DeserializeOwned + JsonSchema + Send + Sync;

    /// The name the model calls the tool by; Claude Code's names, so rules and hooks carry over.
    fn name(&self) -> &'static str;

    /// What the tool does and how to use it, for the model ([`cairn_protocol::ToolSpec`]'s
    /// description).
    fn description(&self) -> String;

    /// The safety attributes of this call. They may depend on the input and on where the call
    /// runs: a shell command's on what the command does from the shell's working directory,
    /// a Write's on whether the file it names exists.
    fn safety(&self, input: &Self::Input, ctx: &ToolContext) -> Safety;

    /// The absolute paths this call will read or write, for the permission layer.
    fn touched_paths(&self, input: &Self::Input, ctx: &ToolContext) -> Vec<PathBuf>;

    /// Whether the call can work at all, judged from its input and the current state (the
    /// file exists, was read in this session and has not changed since, `old_string` occurs
    /// once). It runs before any hook and before the user is asked whether the call may run,
    /// so that nobody approves a call that is bound to fail (Claude Code's `validateInput`).
    /// `Err` is the call's error result, in the words [`Tool::run`] would use.
    ///
    /// The default finds nothing wrong: override it only for checks that are cheap and
    /// certain. `run` must still make the same checks, since the state can change between
    /// validation and execution; share the code rather than repeating it.
    async fn validate(&self, _input: &Self::Input, _ctx: &ToolContext) -> Result<(), String> {
        Ok(())
    }

    /// Does the work. Never fails: every problem becomes an error output in words the model
    /// can act on. `cancel` fires when the user interrupts; a long call stops soon after.
    async fn run(
        &self,
        input: Self::Input,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> ToolOutput;
}

/// Whether a call can reach past this machine (the network, another service), beside the
/// three safety attributes: a read of a web page or an issue tracker is read-only for the
/// workspace but not private to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The call acts on this machine only.
    Local,
    /// The call talks to the world outside (an MCP server's `openWorldHint`).
    OpenWorld,
}

/// Whose word a call's safety attributes are. cairn works out a built-in tool's attributes
/// from the input itself; an MCP server only claims its tools' (`readOnlyHint` is a hint),
/// so the permission gate asks before such a call unless a rule allows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assurance {
    /// cairn derived the attributes from the call.
    Checked,
    /// The tool's provider states them; nothing in cairn checks them.
    Claimed,
}

/// Why [`crate::ToolExecutor::try_prepare`] refused a call: the kind stays data, so a composite
/// executor can ask the next executor when one does not know the tool, and a face can tell the
/// two apart without reading the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrepareError {
    /// No executor offers a tool of that name (in any spelling it accepts).
    #[error("No tool named \"{name}\". Available tools: {}.", available.join(", "))]
    UnknownTool {
        /// The name as the model wrote it.
        name: String,
        /// Every tool that could have been called instead, for the model to pick from.
        available: Vec<String>,
    },
    /// The tool exists but its input does not fit it (a missing field, a wrong type, a value
    /// its schema forbids).
    #[error("{message}")]
    RejectedInput {
        /// The tool's canonical name.
        tool: String,
        /// What was wrong, naming the field.
        message: String,
    },
    /// The tool is one cairn has, but not in this session (its provider lacks what it needs),
    /// so it was never offered.
    #[error("{tool} is not available in this session: {why}")]
    Unavailable {
        /// The tool's canonical name.
        tool: String,
        /// Why not, and what to do instead.
        why: String,
    },
}

impl PrepareError {
    /// The error result the model reads.
    pub fn into_output(self) -> ToolOutput {
        ToolOutput::error(self.to_string())
    }
}
