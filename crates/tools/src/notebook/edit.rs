//! `NotebookEdit`: replaces, inserts or deletes one cell of a Jupyter notebook.

use std::io::ErrorKind;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{CellKind, Notebook, cell_id, cell_type};
use crate::beneath::{self, BeneathError, JudgedPath, Walk};
use crate::write::write_judged;
use crate::{
    Access, Concurrency, Destructiveness, FileTracker, Safety, Tool, ToolContext, ToolOutput,
};

/// Changes one cell of a Jupyter notebook.
#[derive(Debug, Clone, Copy)]
pub struct NotebookEditTool;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotebookEditInput {
    /// The absolute path of the .ipynb notebook to change.
    notebook_path: String,
    /// The cell to change: its id as Read shows it, or its 0-based index ("3" or "cell-3").
    /// For insert, the new cell goes right after this cell, or first when cell_id is left out.
    cell_id: Option<String>,
    /// The new source of the cell. Required for replace and insert; not used by delete.
    new_source: Option<String>,
    /// The cell's type. Required for insert; for replace, converts the cell to this type
    /// (it keeps its type when left out).
    cell_type: Option<NotebookCellType>,
    /// What to do: replace the cell's source (the default), insert a new cell, or delete the
    /// cell.
    edit_mode: Option<NotebookEditMode>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum NotebookCellType {
    Code,
    Markdown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum NotebookEditMode {
    Replace,
    Insert,
    Delete,
}

impl From<NotebookCellType> for CellKind {
    fn from(kind: NotebookCellType) -> CellKind {
        match kind {
            NotebookCellType::Code => CellKind::Code,
            NotebookCellType::Markdown => CellKind::Markdown,
        }
    }
}

#[async_trait]
impl Tool for NotebookEditTool {
    type Input = NotebookEditInput;

    fn name(&self) -> &'static str {
        "NotebookEdit"
    }

    fn description(&self) -> String {
        "Changes one cell of a Jupyter notebook (.ipynb): replace a cell's source, insert a new \
         cell, or delete a cell. Read the notebook in this session first; a notebook that was \
         not read, or changed on disk since, is refused. Name the cell by the id Read shows, \
         or by its 0-based index. insert puts the new cell after cell_id (first, without \
         cell_id) and needs cell_type. Replacing a code cell clears its outputs and execution \
         count. The rest of the notebook (metadata, other cells, formatting) is kept."
            .into()
    }

    fn safety(&self, input: &NotebookEditInput, _ctx: &ToolContext) -> Safety {
        // Replace and delete drop a cell's old source and outputs, which the call does not
        // carry (the outputs may not be reproducible); insert only adds.
        let destructive = match input.edit_mode.unwrap_or(NotebookEditMode::Replace) {
            NotebookEditMode::Insert => Destructiveness::Harmless,
            NotebookEditMode::Replace | NotebookEditMode::Delete => Destructiveness::Destructive,
        };
        Safety {
            access: Access::Writes,
            destructive,
            concurrency: Concurrency::Exclusive,
        }
    }

    fn touched_paths(&self, input: &NotebookEditInput, ctx: &ToolContext) -> Vec<PathBuf> {
        ctx.written_paths(&input.notebook_path)
    }

    async fn validate(&self, input: &NotebookEditInput, ctx: &ToolContext) -> Result<(), String> {
        let target = ctx.write_target(&input.notebook_path);
        let input = input.clone();
        let session = Arc::clone(&ctx.session);
        // On a blocking thread: it reads and parses the notebook.
        let result = tokio::task::spawn_blocking(move || {
            plan_notebook_edit(&target, &input, &session.files).map(drop)
        })
        .await;
        match result {
            Ok(checked) => checked,
            Err(join) => Err(format!(
                "Checking the notebook edit stopped unexpectedly: {join}"
            )),
        }
    }

    async fn run(
        &self,
        input: NotebookEditInput,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        if cancel.is_cancelled() {
            return ToolOutput::error(
                "NotebookEdit was cancelled before it started; nothing was changed.",
            );
        }
        let target = ctx.write_target(&input.notebook_path);
        let session = Arc::clone(&ctx.session);
        let result =
            tokio::task::spawn_blocking(move || edit_notebook(&target, &input, &session.files))
                .await;
        match result {
            Ok(Ok(text)) => ToolOutput::text(text),
            Ok(Err(message)) => ToolOutput::error(message),
            Err(join) => ToolOutput::error(format!("NotebookEdit stopped unexpectedly: {join}")),
        }
    }
}

/// Loads the notebook and makes the change in memory; writes it back; the report for the
/// model, or why nothing was written.
fn edit_notebook(
    target: &JudgedPath,
    input: &NotebookEditInput,
    files: &FileTracker,
) -> Result<String, String> {
    let path = &target.path();
    let shown = path.display();
    let (notebook, report) = plan_notebook_edit(target, input, files)?;
    write_judged(target, notebook.to_text().as_bytes())?;
    files.record(path);
    let count = notebook.cells().len();
    Ok(format!(
        "{report} {shown} now has {count} cell{}.",
        if count == 1 { "" } else { "s" }
    ))
}

/// Loads the notebook and makes the change in memory: everything NotebookEdit checks (a
/// notebook, read and unchanged since, the cell found, the fields the mode needs), and
/// nothing written. Returns the changed notebook and what was done to it. Validation and
/// execution share it.
fn plan_notebook_edit(
    target: &JudgedPath,
    input: &NotebookEditInput,
    files: &FileTracker,
) -> Result<(Notebook, String), String> {
    let path = &target.path();
    let shown = path.display();
    if !path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("ipynb"))
    {
        return Err(format!(
            "{shown} is not a Jupyter notebook (.ipynb). Use Edit to change other files."
        ));
    }
    let bytes = match beneath::read(target, Walk::Kernel) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == ErrorKind::IsADirectory => {
            return Err(format!("{shown} is a directory, not a notebook."));
        }
        Err(err) if err.kind() == ErrorKind::NotFound => {
            return Err(format!(
                "Notebook does not exist: {shown}. Create it with Write (as nbformat 4 JSON)."
            ));
        }
        Err(BeneathError::Io { source, .. }) => {
            return Err(format!("Cannot read {shown}: {source}"));
        }
        Err(other) => return Err(other.to_string()),
    };
    files.check_fresh(path).map_err(|err| err.to_string())?;
    let text = String::from_utf8(bytes).map_err(|err| format!("Cannot read {shown}: {err}"))?;
    let mut notebook =
        Notebook::parse(&text).map_err(|err| format!("Cannot edit {shown}: {err}."))?;

    let mode = input.edit_mode.unwrap_or(NotebookEditMode::Replace);
    let source = || {
        input
            .new_source
            .as_deref()
            .ok_or_else(|| format!("new_source is required to {} a cell.", mode_verb(mode)))
    };
    let target = || {
        let wanted = input.cell_id.as_deref().ok_or_else(|| {
            format!(
                "cell_id is required to {} a cell: give the cell's id or 0-based index.",
                mode_verb(mode)
            )
        })?;
        notebook.find_cell(wanted)
    };
    let report = match mode {
        NotebookEditMode::Replace => {
            let index = target()?;
            let source = source()?;
            notebook.replace_cell(index, source, input.cell_type.map(CellKind::from));
            let cell = &notebook.cells()[index];
            format!("Replaced the source of {}.", describe_cell(index, cell))
        }
        NotebookEditMode::Insert => {
            let kind = input.cell_type.map(CellKind::from).ok_or_else(|| {
                "cell_type is required to insert a cell: \"code\" or \"markdown\".".to_string()
            })?;
            let index = match input.cell_id {
                Some(_) => target()? + 1,
                None => 0,
            };
            let source = source()?;
            notebook.insert_cell(index, source, kind);
            let cell = &notebook.cells()[index];
            format!("Inserted {}.", describe_cell(index, cell))
        }
        NotebookEditMode::Delete => {
            let index = target()?;
            let description = describe_cell(index, &notebook.cells()[index]);
            notebook.delete_cell(index);
            format!("Deleted {description}; the cells after it moved up by one.")
        }
    };
    Ok((notebook, report))
}

fn mode_verb(mode: NotebookEditMode) -> &'static str {
    match mode {
        NotebookEditMode::Replace => "replace",
        NotebookEditMode::Insert => "insert",
        NotebookEditMode::Delete => "delete",
    }
}

/// `code cell 2 (id "a1b2c3d4")`.
fn describe_cell(index: usize, cell: &serde_json::Value) -> String {
    match cell_id(cell) {
        Some(id) => format!("{} cell {index} (id \"{id}\")", cell_type(cell)),
        None => format!("{} cell {index}", cell_type(cell)),
    }
}
