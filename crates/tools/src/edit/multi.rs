//! `MultiEdit`: several replacements in one file, applied in order, all or nothing.

use std::path::PathBuf;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{EDIT_SAFETY, EditKind, OwnedEdit, run_edits, validate_edits};
use crate::edit::replace::Scope;
use crate::{Safety, Tool, ToolContext, ToolOutput};

/// Makes several replacements in one file at once.
#[derive(Debug, Clone, Copy)]
pub struct MultiEditTool;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MultiEditInput {
    /// The absolute path of the file to change.
    file_path: String,
    /// The replacements, applied in this order, each to the text the ones before it left.
    #[schemars(length(min = 1))]
    edits: Vec<MultiEditItem>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MultiEditItem {
    /// The exact text to replace, copied from the file as Read shows it, without the
    /// line-number prefix, with the same indentation. It must occur exactly once unless
    /// replace_all is true.
    old_string: String,
    /// The text to put in its place. It must differ from old_string.
    new_string: String,
    /// Replace every occurrence of old_string instead of requiring exactly one. Defaults to
    /// false.
    replace_all: Option<bool>,
}

#[async_trait]
impl Tool for MultiEditTool {
    type Input = MultiEditInput;

    fn name(&self) -> &'static str {
        "MultiEdit"
    }

    fn description(&self) -> String {
        "Makes several exact text replacements in one file in a single step. Each edit works \
         like Edit (old_string must match the file exactly, once, unless replace_all) and \
         applies to the text as the edits before it left it, so later edits must not rely on \
         text an earlier one replaced. It is all or nothing: if any edit fails, none is made \
         and the error names the edit. Read the file in this session first; the file's line \
         endings, byte-order mark, final newline and permissions are kept. An empty old_string \
         in the first edit creates a new file."
            .into()
    }

    fn safety(&self, _input: &MultiEditInput, _ctx: &ToolContext) -> Safety {
        EDIT_SAFETY
    }

    fn touched_paths(&self, input: &MultiEditInput, ctx: &ToolContext) -> Vec<PathBuf> {
        ctx.written_paths(&input.file_path)
    }

    async fn validate(&self, input: &MultiEditInput, ctx: &ToolContext) -> Result<(), String> {
        let target = ctx.write_target(&input.file_path);
        validate_edits(target, input.edits()?, EditKind::Multi, ctx).await
    }

    async fn run(
        &self,
        input: MultiEditInput,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        let edits = match input.edits() {
            Ok(edits) => edits,
            Err(message) => return ToolOutput::error(message),
        };
        let target = ctx.write_target(&input.file_path);
        run_edits(target, edits, EditKind::Multi, ctx, cancel).await
    }
}

impl MultiEditInput {
    fn edits(&self) -> Result<Vec<OwnedEdit>, String> {
        if self.edits.is_empty() {
            return Err("MultiEdit needs at least one edit in `edits`.".into());
        }
        Ok(self
            .edits
            .iter()
            .map(|item| OwnedEdit {
                old: item.old_string.clone(),
                new: item.new_string.clone(),
                scope: Scope::from_replace_all(item.replace_all),
            })
            .collect())
    }
}
