//! A sub-agent's tools: the session's, filtered by its role.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_protocol::ToolSpec;
use cairn_tools::{
    Assurance, CallContext, PrepareError, PreparedCall, Reach, TodoWriteTool, ToolCall,
    ToolContext, ToolExecutor, ToolOutput, ToolRegistry,
};

use super::ToolChoice;
use super::tool::AGENT_TOOL;

/// The session's tools as a role may use them: only the ones it lists (all, when it lists
/// none), less the ones it disallows, and never `Agent` or the tools that talk to the user. A
/// call of any other tool is refused as unknown, with the names the sub-agent can use instead. Its `TodoWrite` keeps a list of
/// its own, so a sub-agent never replaces its parent's todo list.
pub struct RoleTools {
    inner: Arc<dyn ToolExecutor>,
    allowed: ToolChoice,
    disallowed: Vec<String>,
    /// The MCP servers whose tools it gets; `None` for every server's.
    mcp_servers: Option<Vec<String>>,
    own_todos: ToolRegistry,
}

impl std::fmt::Debug for RoleTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoleTools")
            .field("allowed", &self.allowed)
            .field("disallowed", &self.disallowed)
            .finish_non_exhaustive()
    }
}

/// Tools that talk to the user or change the session's mode: a sub-agent's work goes back to
/// the model that started it, so none of these is ever a sub-agent's (as in Claude Code).
const MAIN_AGENT_ONLY: &[&str] = &["ExitPlanMode", "EnterPlanMode", "AskUserQuestion"];

/// The tool a name in an agent's list stands for: `Bash(git:*)` is `Bash`.
fn tool_of(entry: &str) -> &str {
    entry.split('(').next().unwrap_or(entry).trim()
}

impl RoleTools {
    /// `inner`'s tools as `allowed` and `disallowed` leave them.
    pub fn new(inner: Arc<dyn ToolExecutor>, allowed: ToolChoice, disallowed: Vec<String>) -> Self {
        // TodoWrite touches no file: the context only holds the list.
        let mut own_todos = ToolRegistry::new(ToolContext::new(std::env::temp_dir()));
        own_todos.register(TodoWriteTool);
        RoleTools {
            inner,
            allowed,
            disallowed,
            mcp_servers: None,
            own_todos,
        }
    }

    /// Only these MCP servers' tools (`mcp__<server>__…`), as an agent file's `mcpServers`
    /// names them; `None` keeps every server's.
    pub fn with_mcp_servers(mut self, servers: Option<Vec<String>>) -> Self {
        self.mcp_servers = servers;
        self
    }

    /// Whether the tool called `name` (canonical) is this role's.
    fn allows(&self, name: &str) -> bool {
        if name == AGENT_TOOL
            || MAIN_AGENT_ONLY.contains(&name)
            || self.disallowed.iter().any(|entry| tool_of(entry) == name)
        {
            return false;
        }
        if let (Some(servers), Some(rest)) = (&self.mcp_servers, name.strip_prefix("mcp__")) {
            let server = rest.split("__").next().unwrap_or_default();
            if !servers.iter().any(|named| named == server) {
                return false;
            }
        }
        match &self.allowed {
            ToolChoice::All => true,
            ToolChoice::Only(tools) => tools.iter().any(|entry| tool_of(entry) == name),
        }
    }

    fn unknown(&self, name: &str) -> PrepareError {
        PrepareError::UnknownTool {
            name: name.to_string(),
            available: self.specs().into_iter().map(|spec| spec.name).collect(),
        }
    }
}

#[async_trait]
impl ToolExecutor for RoleTools {
    fn commit_loads(&self) {
        self.inner.commit_loads();
    }

    fn specs(&self) -> Vec<ToolSpec> {
        self.inner
            .specs()
            .into_iter()
            .filter(|spec| self.allows(&spec.name))
            .collect()
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        self.try_prepare(call).map_err(PrepareError::into_output)
    }

    fn try_prepare(&self, call: &ToolCall) -> Result<PreparedCall, PrepareError> {
        match self.inner.try_prepare(call) {
            Ok(prepared) if self.allows(&prepared.name) => Ok(prepared),
            Ok(_) | Err(PrepareError::UnknownTool { .. }) => Err(self.unknown(&call.name)),
            Err(rejected @ PrepareError::RejectedInput { .. }) => Err(rejected),
            Err(unavailable @ PrepareError::Unavailable { .. }) => Err(unavailable),
        }
    }

    fn serves(&self, name: &str) -> bool {
        self.allows(name) && self.inner.serves(name)
    }

    fn tools_version(&self) -> u64 {
        self.inner.tools_version()
    }

    fn reach(&self, call: &PreparedCall) -> Reach {
        self.inner.reach(call)
    }

    fn assurance(&self, call: &PreparedCall) -> Assurance {
        self.inner.assurance(call)
    }

    async fn validate(&self, call: &PreparedCall) -> Result<(), ToolOutput> {
        if !self.allows(&call.name) {
            return Err(self.unknown(&call.name).into_output());
        }
        self.inner.validate(call).await
    }

    async fn execute(&self, call: &PreparedCall, cx: &CallContext) -> ToolOutput {
        if !self.allows(&call.name) {
            return self.unknown(&call.name).into_output();
        }
        if self.own_todos.serves(&call.name) {
            return self.own_todos.execute(call, cx).await;
        }
        self.inner.execute(call, cx).await
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    use super::*;

    fn todo_count(context: &ToolContext) -> usize {
        context
            .session
            .todos
            .lock()
            .map(|todos| todos.len())
            .unwrap_or(0)
    }

    #[tokio::test]
    async fn a_role_sees_only_its_tools_and_keeps_its_own_todo_list() {
        let workspace = tempfile::tempdir().unwrap();
        let session = ToolContext::new(workspace.path().to_path_buf());
        let parent = Arc::new(ToolRegistry::with_builtins(session.clone()));
        let role = RoleTools::new(
            parent,
            ToolChoice::Only(vec![
                "Read".into(),
                "TodoWrite".into(),
                "Bash(git:*)".into(),
            ]),
            vec!["Bash".into()],
        );
        let names: Vec<String> = role.specs().into_iter().map(|spec| spec.name).collect();
        assert_eq!(names, ["Read", "TodoWrite"]);
        let write = ToolCall {
            id: "w".into(),
            name: "write_file".into(),
            input: json!({"file_path": "x", "content": "x"}),
        };
        assert_eq!(
            role.try_prepare(&write),
            Err(PrepareError::UnknownTool {
                name: "write_file".into(),
                available: vec!["Read".into(), "TodoWrite".into()],
            })
        );

        let todo = ToolCall {
            id: "t".into(),
            name: "TodoWrite".into(),
            input: json!({"todos": [
                {"content": "Plan", "status": "in_progress", "activeForm": "Planning"}
            ]}),
        };
        let prepared = role.try_prepare(&todo).unwrap();
        let output = role
            .execute(&prepared, &CallContext::detached(CancellationToken::new()))
            .await;
        assert!(!output.is_error, "{output:?}");
        assert_eq!(todo_count(&session), 0, "the parent's list is untouched");
        assert_eq!(todo_count(role.own_todos.context()), 1);
    }

    #[test]
    fn mcp_servers_named_limit_the_mcp_tools_to_theirs() {
        let role = RoleTools::new(
            Arc::new(ToolRegistry::new(ToolContext::new(std::env::temp_dir()))),
            ToolChoice::All,
            Vec::new(),
        )
        .with_mcp_servers(Some(vec!["github".into()]));
        assert!(role.allows("mcp__github__create_issue"));
        assert!(!role.allows("mcp__slack__post"));
        assert!(role.allows("Read"));
        let every = RoleTools::new(
            Arc::new(ToolRegistry::new(ToolContext::new(std::env::temp_dir()))),
            ToolChoice::All,
            Vec::new(),
        );
        assert!(every.allows("mcp__slack__post"));
    }
}
