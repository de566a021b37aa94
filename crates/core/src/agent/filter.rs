//! A sub-agent's tools: the session's, filtered by its role.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_protocol::ToolSpec;
use cairn_tools::{
    Assurance, CallContext, FilteredTools, PrepareError, PreparedCall, Reach, TodoWriteTool,
    ToolCall, ToolContext, ToolExecutor, ToolOutput, ToolRegistry,
};

use super::ToolChoice;
use super::tool::AGENT_TOOL;

/// The session's tools as a role may use them: only the ones it lists (all, when it lists
/// none), less the ones it disallows, and never `Agent` or the tools that talk to the user. A
/// call of any other tool is refused as unknown, with the names the sub-agent can use
/// instead. Its `TodoWrite` keeps a list of its own, so a sub-agent never replaces its
/// parent's todo list.
pub struct RoleTools {
    inner: Arc<dyn ToolExecutor>,
    rule: Arc<RoleRule>,
    filtered: FilteredTools,
    own_todos: ToolRegistry,
}

/// Which of the session's tools a role gets.
#[derive(Debug)]
struct RoleRule {
    allowed: ToolChoice,
    disallowed: Vec<String>,
    /// The MCP servers whose tools it gets; `None` for every server's.
    mcp_servers: Option<Vec<String>>,
}

impl std::fmt::Debug for RoleTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoleTools")
            .field("rule", &self.rule)
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

impl RoleRule {
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
}

impl RoleTools {
    /// `inner`'s tools as `allowed` and `disallowed` leave them.
    pub fn new(inner: Arc<dyn ToolExecutor>, allowed: ToolChoice, disallowed: Vec<String>) -> Self {
        // TodoWrite touches no file: the context only holds the list.
        let mut own_todos = ToolRegistry::new(ToolContext::new(std::env::temp_dir()));
        own_todos.register(TodoWriteTool);
        RoleTools::with_rule(
            inner,
            RoleRule {
                allowed,
                disallowed,
                mcp_servers: None,
            },
            own_todos,
        )
    }

    fn with_rule(inner: Arc<dyn ToolExecutor>, rule: RoleRule, own_todos: ToolRegistry) -> Self {
        let rule = Arc::new(rule);
        let keeps = rule.clone();
        RoleTools {
            filtered: FilteredTools::new(inner.clone(), Arc::new(move |name| keeps.allows(name))),
            inner,
            rule,
            own_todos,
        }
    }

    /// Only these MCP servers' tools (`mcp__<server>__…`), as an agent file's `mcpServers`
    /// names them; `None` keeps every server's.
    pub fn with_mcp_servers(self, servers: Option<Vec<String>>) -> Self {
        let RoleTools {
            inner,
            rule,
            own_todos,
            ..
        } = self;
        let rule = RoleRule {
            allowed: rule.allowed.clone(),
            disallowed: rule.disallowed.clone(),
            mcp_servers: servers,
        };
        RoleTools::with_rule(inner, rule, own_todos)
    }
}

#[async_trait]
impl ToolExecutor for RoleTools {
    fn commit_loads(&self) {
        self.filtered.commit_loads();
    }

    fn specs(&self) -> Vec<ToolSpec> {
        self.filtered.specs()
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        self.filtered.prepare(call)
    }

    fn try_prepare(&self, call: &ToolCall) -> Result<PreparedCall, PrepareError> {
        self.filtered.try_prepare(call)
    }

    fn serves(&self, name: &str) -> bool {
        self.filtered.serves(name)
    }

    fn tools_version(&self) -> u64 {
        self.filtered.tools_version()
    }

    fn reach(&self, call: &PreparedCall) -> Reach {
        self.filtered.reach(call)
    }

    fn assurance(&self, call: &PreparedCall) -> Assurance {
        self.filtered.assurance(call)
    }

    async fn validate(&self, call: &PreparedCall) -> Result<(), ToolOutput> {
        self.filtered.validate(call).await
    }

    async fn execute(&self, call: &PreparedCall, cx: &CallContext) -> ToolOutput {
        if self.filtered.keeps(&call.name) && self.own_todos.serves(&call.name) {
            return self.own_todos.execute(call, cx).await;
        }
        self.filtered.execute(call, cx).await
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
        assert!(role.rule.allows("mcp__github__create_issue"));
        assert!(!role.rule.allows("mcp__slack__post"));
        assert!(role.rule.allows("Read"));
        let every = RoleTools::new(
            Arc::new(ToolRegistry::new(ToolContext::new(std::env::temp_dir()))),
            ToolChoice::All,
            Vec::new(),
        );
        assert!(every.rule.allows("mcp__slack__post"));
    }
}
