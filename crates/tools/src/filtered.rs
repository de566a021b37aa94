//! [`FilteredTools`]: another executor's tools, less the ones a predicate leaves out.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use cairn_protocol::ToolSpec;

use crate::{
    Assurance, CallContext, PrepareError, PreparedCall, Reach, ToolCall, ToolExecutor, ToolOutput,
};

/// Which tools, by canonical name, a [`FilteredTools`] keeps.
pub type ToolPredicate = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// `inner`'s tools as `keeps` leaves them: the others are neither offered nor run, and a call
/// of one is refused as unknown, naming the tools there are. A sub-agent's role and the
/// `--tools` flag each choose tools this way.
#[derive(Clone)]
pub struct FilteredTools {
    inner: Arc<dyn ToolExecutor>,
    keeps: ToolPredicate,
}

impl std::fmt::Debug for FilteredTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilteredTools")
            .field(
                "tools",
                &self.specs().into_iter().map(|s| s.name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl FilteredTools {
    /// `inner`'s tools whose canonical names `keeps` says yes to.
    pub fn new(inner: Arc<dyn ToolExecutor>, keeps: ToolPredicate) -> Self {
        FilteredTools { inner, keeps }
    }

    /// Whether the tool called `name` (canonical) is kept.
    pub fn keeps(&self, name: &str) -> bool {
        (self.keeps)(name)
    }

    fn unknown(&self, name: &str) -> PrepareError {
        PrepareError::UnknownTool {
            name: name.to_string(),
            available: self.specs().into_iter().map(|spec| spec.name).collect(),
        }
    }
}

#[async_trait]
impl ToolExecutor for FilteredTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.inner
            .specs()
            .into_iter()
            .filter(|spec| self.keeps(&spec.name))
            .collect()
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        self.try_prepare(call).map_err(PrepareError::into_output)
    }

    fn try_prepare(&self, call: &ToolCall) -> Result<PreparedCall, PrepareError> {
        match self.inner.try_prepare(call) {
            Ok(prepared) if self.keeps(&prepared.name) => Ok(prepared),
            Ok(_) | Err(PrepareError::UnknownTool { .. }) => Err(self.unknown(&call.name)),
            Err(rejected @ PrepareError::RejectedInput { .. }) => Err(rejected),
            Err(unavailable @ PrepareError::Unavailable { .. }) => Err(unavailable),
        }
    }

    fn serves(&self, name: &str) -> bool {
        self.keeps(name) && self.inner.serves(name)
    }

    fn tools_version(&self) -> u64 {
        self.inner.tools_version()
    }

    fn commit_loads(&self) {
        self.inner.commit_loads();
    }

    fn reach(&self, call: &PreparedCall) -> Reach {
        self.inner.reach(call)
    }

    fn assurance(&self, call: &PreparedCall) -> Assurance {
        self.inner.assurance(call)
    }

    async fn validate(&self, call: &PreparedCall) -> Result<(), ToolOutput> {
        if !self.keeps(&call.name) {
            return Err(self.unknown(&call.name).into_output());
        }
        self.inner.validate(call).await
    }

    async fn execute(&self, call: &PreparedCall, cx: &CallContext) -> ToolOutput {
        if !self.keeps(&call.name) {
            return self.unknown(&call.name).into_output();
        }
        self.inner.execute(call, cx).await
    }

    fn for_agent(&self, workdir: Option<&Path>) -> Option<Arc<dyn ToolExecutor>> {
        let inner = self.inner.for_agent(workdir)?;
        Some(Arc::new(FilteredTools::new(inner, self.keeps.clone())))
    }
}
