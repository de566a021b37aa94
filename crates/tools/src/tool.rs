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
    ReadOnly,
    Writes,
}

/// Whether a call can destroy something that is hard to get back (deleting, overwriting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Destructiveness {
    Harmless,
    Destructive,
}

/// Whether a call may run at the same time as other concurrency-safe calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concurrency {
    Safe,
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
    pub access: Access,
    pub destructive: Destructiveness,
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

    async fn run(
        &self,
        input: Self::Input,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> ToolOutput;
}
