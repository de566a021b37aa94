//! Several executors behind one: the built-in tools beside tools that arrive at run time (an
//! MCP server's), routed by exact name.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_protocol::ToolSpec;

use crate::{
    Assurance, CallContext, PrepareError, PreparedCall, Reach, ToolCall, ToolExecutor, ToolOutput,
};

/// Executors in order of precedence. Its tool list is theirs, in order, each name once (the
/// first executor that offers a name keeps it); a call goes to the executor that lists its
/// exact name, and only a name nobody lists is offered to each in turn, so the built-in
/// registry can still match `read_file` to `Read` while `mcp__github__search` never reaches
/// it.
///
/// ```
/// use std::sync::Arc;
/// use cairn_tools::{CompositeExecutor, ToolContext, ToolExecutor, ToolRegistry};
///
/// let builtins = ToolRegistry::with_builtins(ToolContext::new(std::env::temp_dir()));
/// let tools = CompositeExecutor::new(vec![Arc::new(builtins)]);
/// assert!(tools.serves("Read"));
/// ```
#[derive(Clone)]
pub struct CompositeExecutor {
    executors: Vec<Arc<dyn ToolExecutor>>,
}

impl std::fmt::Debug for CompositeExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompositeExecutor")
            .field("executors", &self.executors.len())
            .finish()
    }
}

impl CompositeExecutor {
    /// The executors, first first: the first to list a name keeps it.
    pub fn new(executors: Vec<Arc<dyn ToolExecutor>>) -> Self {
        CompositeExecutor { executors }
    }

    /// The executor that lists `name` exactly.
    fn owner(&self, name: &str) -> Option<&Arc<dyn ToolExecutor>> {
        self.executors.iter().find(|executor| executor.serves(name))
    }
}

#[async_trait]
impl ToolExecutor for CompositeExecutor {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = Vec::new();
        for executor in &self.executors {
            for spec in executor.specs() {
                if !specs.iter().any(|seen| seen.name == spec.name) {
                    specs.push(spec);
                }
            }
        }
        specs
    }

    fn serves(&self, name: &str) -> bool {
        self.owner(name).is_some()
    }

    fn commit_loads(&self) {
        for executor in &self.executors {
            executor.commit_loads();
        }
    }

    fn tools_version(&self) -> u64 {
        // Each part only grows its version, so the sum changes whenever one of them does.
        self.executors
            .iter()
            .map(|executor| executor.tools_version())
            .fold(0, u64::wrapping_add)
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        self.try_prepare(call).map_err(PrepareError::into_output)
    }

    fn try_prepare(&self, call: &ToolCall) -> Result<PreparedCall, PrepareError> {
        if let Some(owner) = self.owner(&call.name) {
            return owner.try_prepare(call);
        }
        for executor in &self.executors {
            match executor.try_prepare(call) {
                Err(PrepareError::UnknownTool { .. }) => continue,
                decided @ (Ok(_)
                | Err(
                    PrepareError::RejectedInput { .. } | PrepareError::Unavailable { .. },
                )) => {
                    return decided;
                }
            }
        }
        Err(PrepareError::UnknownTool {
            name: call.name.clone(),
            available: self.specs().into_iter().map(|spec| spec.name).collect(),
        })
    }

    async fn validate(&self, call: &PreparedCall) -> Result<(), ToolOutput> {
        match self.owner(&call.name) {
            Some(owner) => owner.validate(call).await,
            None => Err(unknown(&call.name)),
        }
    }

    async fn execute(&self, call: &PreparedCall, cx: &CallContext) -> ToolOutput {
        match self.owner(&call.name) {
            Some(owner) => owner.execute(call, cx).await,
            None => unknown(&call.name),
        }
    }

    fn reach(&self, call: &PreparedCall) -> Reach {
        // A call nobody owns any more is judged as the worst case.
        self.owner(&call.name)
            .map_or(Reach::OpenWorld, |owner| owner.reach(call))
    }

    fn assurance(&self, call: &PreparedCall) -> Assurance {
        self.owner(&call.name)
            .map_or(Assurance::Claimed, |owner| owner.assurance(call))
    }

    fn for_agent(&self, workdir: Option<&std::path::Path>) -> Option<Arc<dyn ToolExecutor>> {
        let parts: Vec<Option<Arc<dyn ToolExecutor>>> = self
            .executors
            .iter()
            .map(|executor| executor.for_agent(workdir))
            .collect();
        if parts.iter().all(Option::is_none) {
            return None;
        }
        let executors = parts
            .into_iter()
            .zip(&self.executors)
            .map(|(own, shared)| own.unwrap_or_else(|| Arc::clone(shared)))
            .collect();
        Some(Arc::new(CompositeExecutor { executors }))
    }
}

/// The result of a prepared call whose tool went away (its server stopped offering it).
fn unknown(name: &str) -> ToolOutput {
    ToolOutput::error(format!("No tool named \"{name}\" is available any more."))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;
    use crate::{Safety, ToolContext, ToolRegistry};

    /// An executor with fixed tools that answers every call with its own name.
    struct Fixed {
        names: Vec<&'static str>,
        version: u64,
    }

    #[async_trait]
    impl ToolExecutor for Fixed {
        fn specs(&self) -> Vec<ToolSpec> {
            self.names
                .iter()
                .map(|name| ToolSpec {
                    name: name.to_string(),
                    description: "fixed".into(),
                    input_schema: json!({"type": "object"}),
                })
                .collect()
        }

        fn tools_version(&self) -> u64 {
            self.version
        }

        fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
            if call.input.get("bad").is_some() {
                return Err(ToolOutput::error("bad input"));
            }
            Ok(PreparedCall {
                id: call.id.clone(),
                name: call.name.clone(),
                input: call.input.clone(),
                safety: Safety::READ_ONLY,
                paths: Vec::new(),
            })
        }

        async fn execute(&self, call: &PreparedCall, _cx: &CallContext) -> ToolOutput {
            ToolOutput::text(format!("fixed ran {}", call.name))
        }

        fn reach(&self, _call: &PreparedCall) -> Reach {
            Reach::OpenWorld
        }

        fn assurance(&self, _call: &PreparedCall) -> Assurance {
            Assurance::Claimed
        }
    }

    fn composite() -> CompositeExecutor {
        let builtins = ToolRegistry::with_builtins(ToolContext::new(std::env::temp_dir()));
        CompositeExecutor::new(vec![
            Arc::new(builtins),
            Arc::new(Fixed {
                names: vec!["mcp__s__echo", "Read", "mcp__s__read"],
                version: 3,
            }),
        ])
    }

    fn call(name: &str, input: Value) -> ToolCall {
        ToolCall {
            id: "t1".into(),
            name: name.into(),
            input,
        }
    }

    #[test]
    fn every_name_is_listed_once_the_first_executor_keeping_it() {
        let names: Vec<String> = composite().specs().into_iter().map(|s| s.name).collect();
        assert_eq!(names.iter().filter(|name| *name == "Read").count(), 1);
        assert_eq!(&names[names.len() - 2..], ["mcp__s__echo", "mcp__s__read"]);
    }

    #[test]
    fn calls_go_by_exact_name_and_tolerant_spelling_reaches_only_who_accepts_it() {
        let tools = composite();
        let cases = [
            // (name written, input, canonical name or the error kind)
            ("mcp__s__echo", json!({}), Ok("mcp__s__echo")),
            // The built-in registry keeps "Read" and spells `read_file` as it.
            ("read_file", json!({"file_path": "x"}), Ok("Read")),
            // An MCP tool's name is matched exactly: the registry's tolerance never takes it.
            ("mcp__s__read", json!({}), Ok("mcp__s__read")),
            ("mcp__s__echo", json!({"bad": 1}), Err("rejected")),
            ("Read", json!({"file_path": 7}), Err("rejected")),
            ("mcp__s__missing", json!({}), Err("unknown")),
        ];
        for (name, input, expected) in cases {
            let got = tools.try_prepare(&call(name, input));
            let got = match &got {
                Ok(prepared) => Ok(prepared.name.as_str()),
                Err(PrepareError::UnknownTool { .. }) => Err("unknown"),
                Err(PrepareError::RejectedInput { .. }) => Err("rejected"),
                Err(PrepareError::Unavailable { .. }) => Err("unavailable"),
            };
            assert_eq!(got, expected, "{name}");
        }
    }

    #[test]
    fn an_unknown_tool_lists_every_executors_tools() {
        let error = composite()
            .try_prepare(&call("Teleport", json!({})))
            .unwrap_err();
        let PrepareError::UnknownTool { available, .. } = &error else {
            panic!("{error:?}");
        };
        assert!(available.iter().any(|name| name == "Bash"), "{available:?}");
        assert!(available.iter().any(|name| name == "mcp__s__echo"));
        assert!(error.into_output().is_error);
    }

    #[tokio::test]
    async fn execution_and_attributes_come_from_the_owner() {
        let tools = composite();
        let prepared = tools.try_prepare(&call("mcp__s__echo", json!({}))).unwrap();
        let output = tools
            .execute(
                &prepared,
                &CallContext::detached(tokio_util::sync::CancellationToken::new()),
            )
            .await;
        assert_eq!(output, ToolOutput::text("fixed ran mcp__s__echo"));
        assert_eq!(tools.reach(&prepared), Reach::OpenWorld);
        assert_eq!(tools.assurance(&prepared), Assurance::Claimed);
        let read = tools
            .try_prepare(&call("Read", json!({"file_path": "x"})))
            .unwrap();
        assert_eq!(tools.reach(&read), Reach::Local);
        assert_eq!(tools.assurance(&read), Assurance::Checked);
        assert_eq!(tools.tools_version(), 3);
    }
}
