//! Tools held to a few files: the `statusline-setup` role reads and edits the user's settings
//! file and nothing else.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use cairn_protocol::ToolSpec;
use cairn_tools::{
    Assurance, CallContext, PrepareError, PreparedCall, Reach, ToolCall, ToolExecutor, ToolOutput,
};

/// A role's tools, each call of which may touch only `files`: a call that names another path,
/// or none, is refused before it is judged or run, saying which files it may use.
pub struct ConfinedTools {
    inner: Arc<dyn ToolExecutor>,
    role: String,
    /// The files, as given and as their links resolve.
    files: Vec<PathBuf>,
    shown: Vec<String>,
}

impl std::fmt::Debug for ConfinedTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfinedTools")
            .field("role", &self.role)
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

impl ConfinedTools {
    /// `inner`'s tools for `role`, confined to `files`.
    pub fn new(inner: Arc<dyn ToolExecutor>, role: &str, files: Vec<PathBuf>) -> ConfinedTools {
        let shown = files
            .iter()
            .map(|file| file.display().to_string())
            .collect();
        let mut all = files.clone();
        // A settings file kept in a dotfiles folder is a link: where it leads is the same file.
        all.extend(
            files
                .iter()
                .filter_map(|file| std::fs::canonicalize(file).ok()),
        );
        ConfinedTools {
            inner,
            role: role.to_string(),
            files: all,
            shown,
        }
    }

    fn allows(&self, path: &Path) -> bool {
        self.files.iter().any(|file| file == path)
    }

    fn refusal(&self, call: &PreparedCall) -> Option<PrepareError> {
        let outside = call.paths.iter().find(|path| !self.allows(path));
        let what = match (outside, call.paths.is_empty()) {
            (Some(path), _) => format!("{} is not one of them", path.display()),
            (None, true) => "this call names none of them".to_string(),
            (None, false) => return None,
        };
        Some(PrepareError::RejectedInput {
            tool: call.name.clone(),
            message: format!(
                "The {} agent may only use these files: {}; {what}.",
                self.role,
                self.shown.join(", ")
            ),
        })
    }
}

#[async_trait]
impl ToolExecutor for ConfinedTools {
    fn commit_loads(&self) {
        self.inner.commit_loads();
    }

    fn specs(&self) -> Vec<ToolSpec> {
        self.inner.specs()
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        self.try_prepare(call).map_err(PrepareError::into_output)
    }

    fn try_prepare(&self, call: &ToolCall) -> Result<PreparedCall, PrepareError> {
        let prepared = self.inner.try_prepare(call)?;
        match self.refusal(&prepared) {
            Some(refusal) => Err(refusal),
            None => Ok(prepared),
        }
    }

    fn serves(&self, name: &str) -> bool {
        self.inner.serves(name)
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
        if let Some(refusal) = self.refusal(call) {
            return Err(refusal.into_output());
        }
        self.inner.validate(call).await
    }

    async fn execute(&self, call: &PreparedCall, cx: &CallContext) -> ToolOutput {
        if let Some(refusal) = self.refusal(call) {
            return refusal.into_output();
        }
        self.inner.execute(call, cx).await
    }
}

#[cfg(test)]
mod tests {
    use cairn_tools::{ToolContext, ToolRegistry};
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    use super::*;

    #[tokio::test]
    async fn only_the_given_files_are_read() {
        let home = tempfile::tempdir().unwrap();
        let settings = home.path().join("settings.json");
        let other = home.path().join("other.json");
        std::fs::write(&settings, "{}\n").unwrap();
        std::fs::write(&other, "{}\n").unwrap();
        let registry = ToolRegistry::with_builtins(ToolContext::new(home.path().to_path_buf()));
        let tools = ConfinedTools::new(
            Arc::new(registry),
            "statusline-setup",
            vec![settings.clone()],
        );
        let read = |path: &Path| ToolCall {
            id: "r".into(),
            name: "Read".into(),
            input: json!({"file_path": path}),
        };
        let prepared = tools.try_prepare(&read(&settings)).unwrap();
        let output = tools
            .execute(&prepared, &CallContext::detached(CancellationToken::new()))
            .await;
        assert!(!output.is_error, "{output:?}");
        assert_eq!(
            tools.try_prepare(&read(&other)),
            Err(PrepareError::RejectedInput {
                tool: "Read".into(),
                message: format!(
                    "The statusline-setup agent may only use these files: {}; {} is not one \
                     of them.",
                    settings.display(),
                    other.display()
                ),
            })
        );
    }
}
