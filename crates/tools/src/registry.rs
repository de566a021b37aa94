//! The executor that holds the built-in tools: name matching, validation, dispatch.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_protocol::ToolSpec;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::input::{parse_input, schema_for};
use crate::{
    CallContext, PrepareError, PreparedCall, Safety, Tool, ToolCall, ToolContext, ToolExecutor,
    ToolOutput,
};

/// A [`Tool`] with its input type erased, so tools of different types share one list.
#[async_trait]
trait ErasedTool: Send + Sync {
    fn name(&self) -> &'static str;
    fn spec(&self) -> ToolSpec;
    fn inspect(
        &self,
        input: &Value,
        ctx: &ToolContext,
    ) -> Result<(Safety, Vec<std::path::PathBuf>), String>;
    async fn validate_json(&self, input: &Value, ctx: &ToolContext) -> Result<(), String>;
    async fn run_json(
        &self,
        input: &Value,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> ToolOutput;
}

#[async_trait]
impl<T: Tool> ErasedTool for T {
    fn name(&self) -> &'static str {
        Tool::name(self)
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: Tool::name(self).to_string(),
            description: self.description(),
            input_schema: schema_for::<T::Input>(),
        }
    }

    fn inspect(
        &self,
        input: &Value,
        ctx: &ToolContext,
    ) -> Result<(Safety, Vec<std::path::PathBuf>), String> {
        let input: T::Input = parse_input(Tool::name(self), input)?;
        Ok((self.safety(&input, ctx), self.touched_paths(&input, ctx)))
    }

    async fn validate_json(&self, input: &Value, ctx: &ToolContext) -> Result<(), String> {
        let input: T::Input = parse_input(Tool::name(self), input)?;
        self.validate(&input, ctx).await
    }

    async fn run_json(
        &self,
        input: &Value,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        match parse_input::<T::Input>(Tool::name(self), input) {
            Ok(input) => self.run(input, ctx, cancel).await,
            Err(message) => ToolOutput::error(message),
        }
    }
}

/// Built-in tools by name, in registration order.
#[derive(Clone)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn ErasedTool>>,
    context: ToolContext,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .field("context", &self.context)
            .finish()
    }
}

impl ToolRegistry {
    /// An empty registry whose tools will run in `context`.
    pub fn new(context: ToolContext) -> Self {
        ToolRegistry {
            tools: Vec::new(),
            context,
        }
    }

    /// The registry with every built-in tool cairn ships.
    pub fn with_builtins(context: ToolContext) -> Self {
        let mut registry = ToolRegistry::new(context);
        registry.register(crate::BashTool);
        registry.register(crate::BashOutputTool);
        registry.register(crate::TaskStopTool);
        registry.register(crate::TaskOutputTool);
        registry.register(crate::ReadTool);
        registry.register(crate::GlobTool);
        registry.register(crate::GrepTool);
        registry.register(crate::LsTool);
        registry.register(crate::WriteTool);
        registry.register(crate::EditTool);
        registry.register(crate::MultiEditTool);
        registry.register(crate::NotebookEditTool);
        registry.register(crate::TodoWriteTool);
        registry
    }

    /// Adds the tools that talk to the user: `ExitPlanMode` always (what becomes of its plan
    /// is `handback`'s), and where someone approves and answers (`PlanHandback::Approved`)
    /// `EnterPlanMode` and `AskUserQuestion` too; they mean nothing where nobody can answer.
    /// `plan_file` is where the model may write its plan instead of passing it.
    pub fn register_dialog_tools(
        &mut self,
        handback: crate::PlanHandback,
        plan_file: Option<std::path::PathBuf>,
    ) {
        self.register(crate::ExitPlanModeTool::new(handback, plan_file));
        match handback {
            crate::PlanHandback::Approved => {
                self.register(crate::EnterPlanModeTool);
                self.register(crate::AskUserQuestionTool);
            }
            crate::PlanHandback::EndsTurn => {}
        }
    }

    /// Adds `tool`, offered to the model after the ones already registered.
    pub fn register(&mut self, tool: impl Tool) {
        self.tools.push(Arc::new(tool));
    }

    /// The canonical names of the registered tools, in registration order.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|tool| tool.name()).collect()
    }

    /// The context every call runs in.
    pub fn context(&self) -> &ToolContext {
        &self.context
    }

    /// The tool the model meant: the exact name, else the same name in other case or spelling
    /// (`read`, `READ`, `read_file`, `list-files`).
    fn find(&self, name: &str) -> Option<&Arc<dyn ErasedTool>> {
        if let Some(tool) = self.tools.iter().find(|tool| tool.name() == name) {
            return Some(tool);
        }
        let wanted = canonical_spelling(name);
        self.tools.iter().find(|tool| {
            let own = canonical_spelling(tool.name());
            own == wanted || aliases(tool.name()).contains(&wanted.as_str())
        })
    }
}

/// A tool name as the registry matches it when the model spells it its own way: lower case,
/// letters and digits only, and a trailing "tool" dropped (`read_file`, `ReadFile` and
/// `readfile` are one; `WebFetchTool` is `webfetch`). Executors outside the registry (the
/// Agent and web tools) match their names with it too.
pub fn canonical_spelling(name: &str) -> String {
    let spelled: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    match spelled.strip_suffix("tool") {
        Some(stem) if !stem.is_empty() => stem.to_string(),
        _ => spelled,
    }
}

/// Other names models use for a built-in tool, already in canonical spelling.
fn aliases(tool: &str) -> &'static [&'static str] {
    match tool {
        "Read" => &["readfile", "viewfile", "cat", "view"],
        "Write" => &["writefile", "createfile"],
        "Edit" => &["editfile", "strreplace", "replace"],
        "MultiEdit" => &["multiedits", "editmany"],
        "Bash" => &[
            "shell",
            "runcommand",
            "execute",
            "exec",
            "terminal",
            "runshellcommand",
        ],
        "TaskStop" => &["killshell", "killbash", "stoptask", "killtask"],
        "Glob" => &["findfiles", "globfiles"],
        "Grep" => &["search", "searchfiles", "ripgrep", "rg"],
        "NotebookEdit" => &["editnotebook", "notebook"],
        "LS" => &["listfiles", "listdir", "listdirectory", "list"],
        "TodoWrite" => &["todo", "todos", "updatetodos", "writetodos"],
        "ExitPlanMode" => &["exitplan", "presentplan"],
        "EnterPlanMode" => &["enterplan", "planmode"],
        "AskUserQuestion" => &["askuser", "askquestion", "askquestions", "askuserquestions"],
        _ => &[],
    }
}

#[async_trait]
impl ToolExecutor for ToolRegistry {
    fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|tool| tool.spec()).collect()
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        self.try_prepare(call).map_err(PrepareError::into_output)
    }

    fn try_prepare(&self, call: &ToolCall) -> Result<PreparedCall, PrepareError> {
        let Some(tool) = self.find(&call.name) else {
            return Err(PrepareError::UnknownTool {
                name: call.name.clone(),
                available: self.names().into_iter().map(String::from).collect(),
            });
        };
        let (safety, paths) = tool
            .inspect(&call.input, &self.context)
            .map_err(|message| PrepareError::RejectedInput {
                tool: tool.name().to_string(),
                message,
            })?;
        Ok(PreparedCall {
            id: call.id.clone(),
            name: tool.name().to_string(),
            input: call.input.clone(),
            safety,
            paths,
        })
    }

    fn serves(&self, name: &str) -> bool {
        self.tools.iter().any(|tool| tool.name() == name)
    }

    async fn validate(&self, call: &PreparedCall) -> Result<(), ToolOutput> {
        match self.find(&call.name) {
            Some(tool) => tool
                .validate_json(&call.input, &self.context)
                .await
                .map_err(ToolOutput::error),
            None => Err(ToolOutput::error(format!(
                "No tool named \"{}\".",
                call.name
            ))),
        }
    }

    async fn execute(&self, call: &PreparedCall, cx: &CallContext) -> ToolOutput {
        match self.find(&call.name) {
            Some(tool) => {
                let context = self.context.for_call(&call.paths);
                tool.run_json(&call.input, &context, &cx.cancel).await
            }
            None => ToolOutput::error(format!("No tool named \"{}\".", call.name)),
        }
    }

    fn for_agent(&self, workdir: Option<&std::path::Path>) -> Option<Arc<dyn ToolExecutor>> {
        let mut context = self.context.clone();
        context.session = Arc::new(self.context.session.for_agent(workdir));
        if let Some(dir) = workdir {
            context.cwd = dir.to_path_buf();
        }
        Some(Arc::new(ToolRegistry {
            tools: self.tools.clone(),
            context,
        }))
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn registry() -> ToolRegistry {
        ToolRegistry::with_builtins(ToolContext::new(std::env::temp_dir()))
    }

    fn call(name: &str, input: Value) -> ToolCall {
        ToolCall {
            id: "t1".into(),
            name: name.into(),
            input,
        }
    }

    #[test]
    fn names_are_matched_tolerantly() {
        let registry = registry();
        for name in ["Read", "read", "READ", "read_file", "ReadFile", "read-tool"] {
            let prepared = registry.prepare(&call(name, json!({"file_path": "/etc/hostname"})));
            assert_eq!(prepared.map(|p| p.name), Ok("Read".to_string()), "{name}");
        }
    }

    #[test]
    fn unknown_names_list_the_available_tools() {
        let error = registry()
            .prepare(&call("Teleport", json!({})))
            .unwrap_err();
        assert!(error.is_error);
        let text = error.content.text();
        assert!(
            text.starts_with("No tool named \"Teleport\". Available tools: "),
            "{text}"
        );
        assert!(text.contains("Read") && text.contains("Bash"), "{text}");
    }

    #[test]
    fn invalid_input_is_refused_before_running_naming_the_field() {
        let error = registry()
            .prepare(&call("Read", json!({"file_path": 7})))
            .unwrap_err();
        assert_eq!(
            error,
            ToolOutput::error(
                "Invalid input for Read: field `file_path`: invalid type: integer `7`, expected a string."
            )
        );
    }

    #[test]
    fn prepared_calls_carry_safety_and_absolute_paths() {
        let registry = registry();
        let prepared = registry
            .prepare(&call("Read", json!({"file_path": "notes.txt"})))
            .unwrap();
        assert_eq!(prepared.safety, Safety::READ_ONLY);
        assert_eq!(prepared.paths, vec![std::env::temp_dir().join("notes.txt")]);
    }

    #[tokio::test]
    async fn validation_makes_each_tools_own_checks_and_finds_nothing_wrong_by_default() {
        let dir = tempfile::tempdir().unwrap();
        let registry = ToolRegistry::with_builtins(ToolContext::new(dir.path().to_path_buf()));
        let missing = dir.path().join("missing");
        let shown = missing.display();
        let cases = [
            (
                "LS",
                json!({"path": missing}),
                Err(format!("Directory does not exist: {shown}")),
            ),
            (
                "Glob",
                json!({"pattern": "*.rs", "path": missing}),
                Err(format!("Directory does not exist: {shown}")),
            ),
            (
                "Grep",
                json!({"pattern": "x", "path": missing}),
                Err(format!("Path does not exist: {shown}")),
            ),
            (
                "Read",
                json!({"file_path": missing}),
                Err(format!("File does not exist: {shown}")),
            ),
            ("LS", json!({"path": dir.path()}), Ok(())),
            ("Grep", json!({"pattern": "x"}), Ok(())),
            // Bash has nothing to check before it runs: the default.
            ("Bash", json!({"command": "cat missing"}), Ok(())),
        ];
        for (name, input, expected) in cases {
            let prepared = registry.prepare(&call(name, input)).unwrap();
            assert_eq!(
                registry.validate(&prepared).await,
                expected.map_err(ToolOutput::error),
                "{name}"
            );
        }
    }

    #[test]
    fn the_dialog_tools_are_offered_only_where_someone_answers() {
        let names = |handback| {
            let mut registry = registry();
            registry.register_dialog_tools(handback, None);
            registry.names()[registry.names().len() - 3..].to_vec()
        };
        assert_eq!(
            names(crate::PlanHandback::Approved),
            ["ExitPlanMode", "EnterPlanMode", "AskUserQuestion"]
        );
        assert_eq!(names(crate::PlanHandback::EndsTurn)[2], "ExitPlanMode");
        let mut registry = registry();
        registry.register_dialog_tools(crate::PlanHandback::Approved, None);
        let prepared = registry.prepare(&call("exit_plan_mode", json!({"plan": "1. Go"})));
        assert_eq!(prepared.map(|p| p.name), Ok("ExitPlanMode".to_string()));
    }

    #[test]
    fn every_builtin_schema_is_an_object_schema() {
        let mut registry = registry();
        registry.register_dialog_tools(crate::PlanHandback::Approved, None);
        for spec in registry.specs() {
            assert_eq!(spec.input_schema["type"], json!("object"), "{}", spec.name);
            assert!(!spec.description.is_empty(), "{}", spec.name);
        }
    }
}
