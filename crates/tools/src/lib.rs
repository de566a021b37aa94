//! The tool layer of cairn: everything the model can do, behind one contract.
//!
//! The engine knows no tool by name: it hands each `tool_use` the model writes to a
//! [`ToolExecutor`] and feeds the [`ToolOutput`] back. A tool is one type implementing
//! [`Tool`]: a typed input whose JSON Schema is what the model sees, the three safety
//! attributes of each call ([`Safety`]), the paths a call will touch, the checks that tell a
//! call bound to fail before anyone is asked to allow it, and the work itself.
//! [`ToolRegistry`] is the executor that holds the built-in tools; it matches the model's
//! tool names tolerantly and validates input before anything runs. [`CompositeExecutor`] puts
//! several executors (the built-ins, MCP servers, an embedder's own) behind one.
//!
//! ```
//! use cairn_tools::{
//!     CallContext, PrepareError, Safety, ToolCall, ToolContext, ToolExecutor, ToolRegistry,
//! };
//! use serde_json::json;
//! use tokio_util::sync::CancellationToken;
//!
//! let project = tempfile::tempdir()?;
//! let notes = project.path().join("notes.txt");
//! std::fs::write(&notes, "hello\n")?;
//! let tools = ToolRegistry::with_builtins(ToolContext::new(project.path().to_path_buf()));
//!
//! // The model's spelling is matched tolerantly, and the call is judged before it runs.
//! let call = ToolCall {
//!     id: "toolu_1".into(),
//!     name: "read_file".into(),
//!     input: json!({"file_path": notes}),
//! };
//! let prepared = tools.prepare(&call).map_err(|refused| refused.content.text())?;
//! assert_eq!(prepared.name, "Read");
//! assert_eq!(prepared.safety, Safety::READ_ONLY);
//! assert_eq!(prepared.paths, vec![notes.clone()]);
//!
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! let detached = CallContext::detached(CancellationToken::new());
//! let output = runtime.block_on(tools.execute(&prepared, &detached));
//! assert!(!output.is_error);
//! assert!(output.content.text().contains("hello"));
//!
//! // A tool nobody offers is refused, with the names the model can pick from instead.
//! let unknown = ToolCall { id: "toolu_2".into(), name: "Teleport".into(), input: json!({}) };
//! assert!(matches!(
//!     tools.try_prepare(&unknown),
//!     Err(PrepareError::UnknownTool { available, .. }) if available.contains(&"Read".to_string())
//! ));
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! ```
//!
//! This crate must not decide permissions (a tool only declares its safety and its paths; the
//! gate in `cairn-policy` decides), print, or depend on `cairn-policy`: the sandbox arrives
//! as a [`CommandSandbox`] the binary builds.

#![deny(missing_docs)]

mod ask;
mod bash;
pub mod beneath;
mod composite;
mod edit;
mod file_state;
mod filtered;
mod input;
mod notebook;
pub mod plan;
mod read;
mod registry;
mod search;
mod todo;
mod tool;
pub mod tool_search;
mod write;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_protocol::{
    EventSender, NobodyToAsk, PermissionBroker, TodoItem, ToolResultContent, ToolSpec,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use ask::{AskUserQuestionInput, AskUserQuestionTool, QuestionOption, UserQuestion};
pub use bash::{
    BackgroundTask, BashOutputTool, BashTool, KillShellTool, Reaped, ShellRegistry, TaskOutputTool,
    TaskStopTool, WorkspaceRoots, forget_recorded_process_groups, hide_own_process_from_commands,
    reap_orphaned_process_groups, wait_until,
};
pub use composite::CompositeExecutor;
pub use edit::{EditTool, MultiEditTool};
pub use file_state::{FileStamp, FileTracker, StaleRead};
pub use filtered::{FilteredTools, ToolPredicate};
pub use notebook::NotebookEditTool;
pub use plan::{EnterPlanModeTool, ExitPlanModeTool, PlanHandback};
pub use read::ReadTool;
pub use registry::{ToolRegistry, canonical_spelling};
pub use search::{GlobTool, GrepTool, LsTool};
pub use todo::TodoWriteTool;
pub use tool::{
    Access, Assurance, Concurrency, Destructiveness, PrepareError, Reach, Safety, Tool,
};
pub use write::WriteTool;

/// One tool call as the model wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The `tool_use` block's id, which the result must carry back.
    pub id: String,
    /// The tool's name as the model wrote it, possibly in another spelling (`read_file`).
    pub name: String,
    /// The arguments, not yet checked against the tool's schema.
    pub input: Value,
}

/// A call that names a known tool and whose input is valid: what it is and what it touches,
/// known before it runs, so the permission layer and the orchestrator can judge it.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedCall {
    /// The `tool_use` block's id.
    pub id: String,
    /// The tool's canonical name (`Read`, even when the model wrote `read_file`).
    pub name: String,
    /// The arguments, valid for the tool's schema.
    pub input: Value,
    /// What this call does, judged from its input: what the gate decides on and whether it
    /// may run beside others.
    pub safety: Safety,
    /// Absolute paths the call will read or write. A file tool writing through a symbolic
    /// link declares the path as written and then where it leads, resolved once here: the
    /// last is the file it writes, with no link followed again (see [`beneath`]).
    pub paths: Vec<PathBuf>,
}

/// A change to session state that a tool call made, for the engine to report and record.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolEffect {
    /// `TodoWrite` replaced the session's todo list; the whole new list.
    TodosChanged(Vec<TodoItem>),
    /// `ExitPlanMode` ran once the user approved the plan: the engine leaves plan mode (if
    /// the answer did not choose a mode already) and the plan holds for the work ahead.
    PlanApproved {
        /// The plan, in Markdown.
        plan: String,
    },
    /// `ExitPlanMode` ran where nobody can approve a plan (`cairn -p`): the turn ends here,
    /// with the plan as its result.
    PlanHandedBack {
        /// The plan, in Markdown.
        plan: String,
    },
    /// `EnterPlanMode` ran once the user agreed: plan mode from now on.
    PlanModeEntered,
    /// A `StructuredOutput` call handed over a value that fits the run's schema
    /// (`--json-schema`): the turn ends with it as the result.
    StructuredOutput {
        /// The value, checked against the schema.
        value: serde_json::Value,
    },
}

/// What a tool call produced, for the model to read.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// What the model reads as the call's `tool_result`.
    pub content: ToolResultContent,
    /// Whether the call failed or was refused; the model is told so.
    pub is_error: bool,
    /// A change to session state the engine must report; `None` for most calls.
    pub effect: Option<ToolEffect>,
}

impl ToolOutput {
    /// A successful result holding `text`.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: ToolResultContent::Text(text.into()),
            is_error: false,
            effect: None,
        }
    }

    /// A failed result: `text` says what went wrong, for the model to act on.
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            content: ToolResultContent::Text(text.into()),
            is_error: true,
            effect: None,
        }
    }
}

/// State that lives as long as one agent's session and that tools share.
#[derive(Debug, Default)]
pub struct SessionState {
    /// What was read and when, so edits of unread or changed files are refused.
    pub files: FileTracker,
    /// The shell's working directory and the background shells.
    pub shells: ShellRegistry,
    /// The todo list as `TodoWrite` last wrote it; empty at the start of a session.
    pub todos: Mutex<Vec<TodoItem>>,
}

impl SessionState {
    /// The state of a sub-agent started from this one: nothing read yet, an empty todo list,
    /// and a shell of its own that starts in `workdir`, else where this one is (the background
    /// commands are shared, see [`ShellRegistry::for_agent`]).
    pub fn for_agent(&self, workdir: Option<&Path>) -> SessionState {
        SessionState {
            files: FileTracker::default(),
            shells: self.shells.for_agent(workdir),
            todos: Mutex::default(),
        }
    }
}

/// What every tool call may know about where it runs.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The project directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// The agent's session state, shared by every call (and every clone of this context).
    pub session: Arc<SessionState>,
    /// Variables added to the environment of commands the tools run (settings' `env`).
    pub env: Vec<(String, String)>,
    /// When set, shell commands run inside this sandbox unless a call asks to leave it (and
    /// the permission gate agreed).
    pub sandbox: Option<Arc<CommandSandbox>>,
    /// The directories the shell may stay in between commands; the project directory alone
    /// unless set.
    pub workspace_roots: WorkspaceRoots,
    /// The paths the permission layer judged for the call being run ([`PreparedCall::paths`]),
    /// set by the executor for each run; empty when a tool runs outside an executor. A file
    /// tool writes the last of them, its path as resolved when the call was prepared, and
    /// never resolves it again.
    pub call_paths: Vec<PathBuf>,
    /// Directories of cairn's own state (its home, `~/.cairn`): every directory a file tool
    /// creates under one of them is `0o700`, whatever the directory above it allows.
    pub private_dirs: Vec<PathBuf>,
}

/// How shell commands are started inside a sandbox: `program prefix… shell -c …`. The
/// governance layer builds it (it knows the policy); the tools only use it.
pub struct CommandSandbox {
    /// The wrapper that confines the command and then runs it (cairn itself, as
    /// `cairn __sandbox`).
    pub program: PathBuf,
    /// The wrapper's own arguments, up to and including the `--` before the command.
    pub prefix: Vec<std::ffi::OsString>,
    /// Given a failed command's exit code and stderr, a sentence saying the sandbox caused it,
    /// when it probably did.
    pub explain: SandboxExplainer,
    /// Files commands may not create or change although they lie in a writable directory (a
    /// project's `.mcp.json`, git's `commondir`, a new `.git`): the sandbox cannot mount what
    /// does not exist, so their state is recorded before each command and what it changed is
    /// undone when it ends, and the result says so.
    pub guarded_files: GuardedFiles,
}

/// Lists the guarded files of a [`CommandSandbox`] as they are now, existing or not. Asked
/// before and after every sandboxed command: a path listed only after it was created by it.
#[derive(Clone)]
pub struct GuardedFiles {
    list: Arc<dyn Fn() -> GuardedList + Send + Sync>,
}

/// One listing of the guarded files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GuardedList {
    /// Every guarded path, whether it exists or not.
    pub paths: Vec<PathBuf>,
    /// False when the listing stopped early (a huge tree): a path missing from the listing
    /// before a command then counts as created only if it changed while the command ran.
    pub complete: bool,
}

impl GuardedFiles {
    /// The same paths every time.
    pub fn fixed(paths: Vec<PathBuf>) -> GuardedFiles {
        GuardedFiles::listed_by(move || GuardedList {
            paths: paths.clone(),
            complete: true,
        })
    }

    /// Paths found anew by `list` each time (nested `.git` directories come and go).
    pub fn listed_by(list: impl Fn() -> GuardedList + Send + Sync + 'static) -> GuardedFiles {
        GuardedFiles {
            list: Arc::new(list),
        }
    }
}

impl std::fmt::Debug for GuardedFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardedFiles").finish_non_exhaustive()
    }
}

/// See [`CommandSandbox::explain`].
pub type SandboxExplainer = Box<dyn Fn(Option<i32>, &str) -> Option<String> + Send + Sync>;

impl std::fmt::Debug for CommandSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandSandbox")
            .field("program", &self.program)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// A context in `cwd` with a fresh session, no extra environment, no sandbox, and the
    /// project directory as the only workspace root.
    pub fn new(cwd: PathBuf) -> Self {
        ToolContext {
            cwd,
            session: Arc::default(),
            env: Vec::new(),
            sandbox: None,
            workspace_roots: WorkspaceRoots::default(),
            call_paths: Vec::new(),
            private_dirs: Vec::new(),
        }
    }

    /// This context for running a call whose judged paths are `paths`.
    pub fn for_call(&self, paths: &[PathBuf]) -> ToolContext {
        ToolContext {
            call_paths: paths.to_vec(),
            ..self.clone()
        }
    }

    /// What a file tool that writes `path` (as the model wrote it) declares it touches: the
    /// path as written, then, when a symbolic link makes it lead elsewhere, the path resolved
    /// now. The gate judges both (deny rules on the name as written, everything on where it
    /// leads); the tool writes the last one and resolves nothing again.
    pub(crate) fn written_paths(&self, path: &str) -> Vec<PathBuf> {
        let written = self.resolve(path);
        let resolved = self.judged(&written).path();
        if resolved == written {
            vec![written]
        } else {
            vec![written, resolved]
        }
    }

    /// Where a file tool writes `path`: the path the gate judged for this call when there is
    /// one (resolved at prepare time, not again), else `path` resolved now.
    pub(crate) fn write_target(&self, path: &str) -> beneath::JudgedPath {
        let roots = self.workspace_roots.all(&self.cwd);
        let target = match self.call_paths.last() {
            Some(judged) => beneath::JudgedPath::under_roots(judged, &roots),
            None => beneath::JudgedPath::resolve(&self.resolve(path), &roots),
        };
        target.private_under(&self.private_dirs)
    }

    fn judged(&self, absolute: &Path) -> beneath::JudgedPath {
        beneath::JudgedPath::resolve(absolute, &self.workspace_roots.all(&self.cwd))
    }

    /// `path` made absolute against the working directory (`~` is the home directory).
    pub fn resolve(&self, path: &str) -> PathBuf {
        if let Some(rest) = path.strip_prefix("~/")
            && let Some(home) = std::env::var_os("HOME")
        {
            return PathBuf::from(home).join(rest);
        }
        let path = Path::new(path);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        }
    }
}

/// Runs tool calls. The engine depends on this trait only, so tests can script it.
#[async_trait]
pub trait ToolExecutor: Send + Sync {
    /// The tools the model is offered, in a stable order.
    fn specs(&self) -> Vec<ToolSpec>;

    /// Resolves the tool and validates the input without running anything. An unknown tool or
    /// invalid input is an error output for the model that says what was wrong.
    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput>;

    /// [`ToolExecutor::prepare`] with the kind of refusal kept: an unknown tool or rejected
    /// input. Executors that can tell override it (and let `prepare` call it); the default
    /// calls an unlisted name unknown and any other refusal rejected input.
    fn try_prepare(&self, call: &ToolCall) -> Result<PreparedCall, PrepareError> {
        if !self.serves(&call.name) {
            return Err(PrepareError::UnknownTool {
                name: call.name.clone(),
                available: self.specs().into_iter().map(|spec| spec.name).collect(),
            });
        }
        self.prepare(call)
            .map_err(|output| PrepareError::RejectedInput {
                tool: call.name.clone(),
                message: output.content.text(),
            })
    }

    /// Whether a tool of exactly this name is among [`ToolExecutor::specs`]. Executors with
    /// many tools answer without building every spec.
    fn serves(&self, name: &str) -> bool {
        self.specs().iter().any(|spec| spec.name == name)
    }

    /// The version of the tool list: it changes whenever [`ToolExecutor::specs`] would return
    /// something else (an MCP server connected late, a server's `list_changed`). The engine
    /// reads the list before each request, so tools that arrive later are offered; the
    /// version lets a caller tell cheaply that nothing changed. A fixed list stays at 0.
    fn tools_version(&self) -> u64 {
        0
    }

    /// Tools found since the last commit (a `ToolSearch` load, a deferred tool called by name)
    /// join [`ToolExecutor::specs`] now. Until then they are callable by name and their
    /// definitions are in the search's result. The engine commits before a request whose
    /// cached prefix is rewritten anyway (a cold cache, a compaction), since a change to the
    /// tool list — the first cached block — rewrites all of it. The default has nothing
    /// pending.
    fn commit_loads(&self) {}

    /// Whether a prepared call can reach past this machine. Built-in tools act locally.
    fn reach(&self, _call: &PreparedCall) -> Reach {
        Reach::Local
    }

    /// Whose word the prepared call's safety attributes are; built-in tools' are checked.
    fn assurance(&self, _call: &PreparedCall) -> Assurance {
        Assurance::Checked
    }

    /// Checks that a prepared call can work at all in the current state (see
    /// [`Tool::validate`]). The engine calls it after [`ToolExecutor::prepare`] and before any
    /// hook or permission question; an `Err` is the call's result, and the call never runs.
    ///
    /// The default finds nothing wrong, for executors that cannot tell before running;
    /// [`ToolExecutor::execute`] reports the failure then.
    async fn validate(&self, _call: &PreparedCall) -> Result<(), ToolOutput> {
        Ok(())
    }

    /// Runs a prepared call. Never fails: every problem becomes an error output.
    async fn execute(&self, call: &PreparedCall, cx: &CallContext) -> ToolOutput;

    /// These tools for a sub-agent: the same tools over state of the agent's own (a shell
    /// working directory, a record of the files read, a todo list; see
    /// [`SessionState::for_agent`]), so agents running beside each other and their parent
    /// never share what one call leaves for the next; with `workdir`, working there instead
    /// of the project directory (an agent's own git worktree). `None` when the executor keeps
    /// no such state and the agent may use it as it is (the default).
    fn for_agent(&self, _workdir: Option<&Path>) -> Option<Arc<dyn ToolExecutor>> {
        None
    }
}

/// What one tool call gets from the engine that runs it, beside the tools' own
/// [`ToolContext`]: the way to stop, to report and to ask. An executor that runs a nested
/// engine (the `Agent` tool) streams its progress through `events.nested(…)` and lets the
/// sub-agent ask through `permissions`, so its questions reach the same face.
#[derive(Clone)]
pub struct CallContext {
    /// Cancelled when the user interrupts the turn.
    pub cancel: CancellationToken,
    /// The calling agent's events.
    pub events: EventSender,
    /// Whoever answers the calling agent's permission questions.
    pub permissions: Arc<dyn PermissionBroker>,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("events", &self.events)
            .finish_non_exhaustive()
    }
}

impl CallContext {
    /// A call nobody watches and nobody can be asked about, stopped by `cancel`: for running
    /// tools outside an engine.
    pub fn detached(cancel: CancellationToken) -> Self {
        CallContext {
            cancel,
            events: EventSender::discard(),
            permissions: Arc::new(NobodyToAsk),
        }
    }
}
