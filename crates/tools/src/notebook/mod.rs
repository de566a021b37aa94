//! Jupyter notebooks (`.ipynb`, nbformat 4): the model Read renders and NotebookEdit changes.
//!
//! The notebook is kept as the JSON it was read from, so everything this module does not
//! touch (notebook and cell metadata, attachments, nbformat versions) is written back as it
//! was. The layout Jupyter writes (one-space indentation, sorted keys, a final newline, no
//! ASCII escaping) comes back out the same, so an edit changes only the lines of the cell it
//! edits. One caveat: keys are written sorted (as Jupyter and VS Code write them), so a
//! notebook written with another key order is reordered on its first edit.

mod edit;
mod render;

use std::hash::{BuildHasher, Hasher};

use serde::Serialize;
use serde_json::{Map, Value, json};

pub use edit::NotebookEditTool;

/// Why a file is not a notebook this module can work with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NotebookError {
    #[error("it is not valid JSON ({0})")]
    InvalidJson(String),
    #[error("it is not a Jupyter notebook (no `cells` list at the top level)")]
    NoCells,
    #[error("it is an nbformat {0} notebook; only nbformat 4 is supported")]
    UnsupportedFormat(u64),
}

/// How the file was laid out, to write it back the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Layout {
    /// The indentation of one level: `" "` as Jupyter writes it; empty for one-line JSON.
    indent: String,
    final_newline: bool,
    byte_order_mark: bool,
}

/// The type of a cell the model creates or converts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CellKind {
    Code,
    Markdown,
}

impl CellKind {
    fn as_str(self) -> &'static str {
        match self {
            CellKind::Code => "code",
            CellKind::Markdown => "markdown",
        }
    }
}

/// A parsed notebook.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Notebook {
    /// The notebook as read, with its `cells` list emptied: the cells live in `cells`.
    root: Map<String, Value>,
    cells: Vec<Value>,
    layout: Layout,
}

impl Notebook {
    pub(crate) fn parse(text: &str) -> Result<Notebook, NotebookError> {
        let (text, byte_order_mark) = match text.strip_prefix('\u{feff}') {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        let value: Value = serde_json::from_str(text)
            .map_err(|err| NotebookError::InvalidJson(err.to_string()))?;
        let Value::Object(mut root) = value else {
            return Err(NotebookError::NoCells);
        };
        if let Some(version) = root.get("nbformat").and_then(Value::as_u64)
            && version < 4
        {
            return Err(NotebookError::UnsupportedFormat(version));
        }
        // Taken out, not removed, so the key keeps its place if maps keep insertion order.
        let cells = match root.get_mut("cells") {
            Some(Value::Array(cells)) => std::mem::take(cells),
            _ => return Err(NotebookError::NoCells),
        };
        let layout = Layout {
            indent: detect_indent(text),
            final_newline: text.ends_with('\n'),
            byte_order_mark,
        };
        Ok(Notebook {
            root,
            cells,
            layout,
        })
    }

    /// The notebook as text, laid out as it was read.
    pub(crate) fn to_text(&self) -> String {
        let mut root = self.root.clone();
        root.insert("cells".into(), Value::Array(self.cells.clone()));
        let mut out = Vec::new();
        let written = if self.layout.indent.is_empty() {
            serde_json::to_writer(&mut out, &root)
        } else {
            let formatter =
                serde_json::ser::PrettyFormatter::with_indent(self.layout.indent.as_bytes());
            let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
            root.serialize(&mut serializer)
        };
        // Serializing a `Map` of `Value`s into memory cannot fail, and the output is UTF-8.
        debug_assert!(written.is_ok());
        let mut text = String::from_utf8_lossy(&out).into_owned();
        if self.layout.final_newline {
            text.push('\n');
        }
        if self.layout.byte_order_mark {
            text.insert(0, '\u{feff}');
        }
        text
    }

    pub(crate) fn cells(&self) -> &[Value] {
        &self.cells
    }

    /// The kernel's language (`python`), when the metadata says.
    pub(crate) fn language(&self) -> Option<&str> {
        let metadata = self.root.get("metadata")?;
        metadata
            .pointer("/kernelspec/language")
            .or_else(|| metadata.pointer("/language_info/name"))
            .and_then(Value::as_str)
    }

    /// Whether cells carry ids: nbformat 4.5 and later require them.
    fn uses_cell_ids(&self) -> bool {
        let major = self
            .root
            .get("nbformat")
            .and_then(Value::as_u64)
            .unwrap_or(4);
        let minor = self
            .root
            .get("nbformat_minor")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        (major, minor) >= (4, 5) || self.cells().iter().any(|cell| cell_id(cell).is_some())
    }

    /// The index of the cell `wanted` names: a cell's id, or else a 0-based index written as
    /// `3` or `cell-3`.
    pub(crate) fn find_cell(&self, wanted: &str) -> Result<usize, String> {
        let cells = self.cells();
        if let Some(index) = cells.iter().position(|cell| cell_id(cell) == Some(wanted)) {
            return Ok(index);
        }
        let number = wanted.strip_prefix("cell-").unwrap_or(wanted);
        if let Ok(index) = number.parse::<usize>() {
            if index < cells.len() {
                return Ok(index);
            }
            return Err(format!(
                "Cell index {index} is out of range: the notebook has {} cells (indices 0 to {}).",
                cells.len(),
                cells.len().saturating_sub(1)
            ));
        }
        const LISTED: usize = 20;
        let ids: Vec<&str> = cells.iter().filter_map(cell_id).take(LISTED).collect();
        let known = if ids.is_empty() {
            "Its cells have no ids; name a cell by its 0-based index, such as \"0\".".to_string()
        } else {
            let more = if cells.len() > LISTED { ", …" } else { "" };
            format!(
                "Its cell ids are {}{more}; a 0-based index such as \"0\" also works.",
                ids.join(", ")
            )
        };
        Err(format!(
            "No cell has the id \"{wanted}\". The notebook has {} cells. {known}",
            cells.len()
        ))
    }

    /// Replaces a cell's source, converting it to `kind` if given. A code cell's outputs and
    /// execution count are cleared, since they no longer belong to its source.
    pub(crate) fn replace_cell(&mut self, index: usize, source: &str, kind: Option<CellKind>) {
        let Some(Value::Object(cell)) = self.cells.get_mut(index) else {
            return;
        };
        set_source(cell, source);
        if let Some(kind) = kind {
            cell.insert("cell_type".into(), json!(kind.as_str()));
        }
        if cell.get("cell_type").and_then(Value::as_str) == Some("code") {
            cell.insert("outputs".into(), json!([]));
            cell.insert("execution_count".into(), Value::Null);
            // nbformat allows attachments on markdown and raw cells only.
            cell.remove("attachments");
        } else {
            cell.remove("outputs");
            cell.remove("execution_count");
        }
    }

    /// Inserts a new cell at `index`; its id, when the notebook uses ids.
    pub(crate) fn insert_cell(
        &mut self,
        index: usize,
        source: &str,
        kind: CellKind,
    ) -> Option<String> {
        let id = self.uses_cell_ids().then(|| self.new_cell_id());
        // Keys in Jupyter's (alphabetical) order.
        let mut cell = Map::new();
        cell.insert("cell_type".into(), json!(kind.as_str()));
        if kind == CellKind::Code {
            cell.insert("execution_count".into(), Value::Null);
        }
        if let Some(id) = &id {
            cell.insert("id".into(), json!(id));
        }
        cell.insert("metadata".into(), json!({}));
        if kind == CellKind::Code {
            cell.insert("outputs".into(), json!([]));
        }
        cell.insert("source".into(), json!([]));
        set_source(&mut cell, source);
        let at = index.min(self.cells.len());
        self.cells.insert(at, Value::Object(cell));
        id
    }

    pub(crate) fn delete_cell(&mut self, index: usize) -> Option<Value> {
        (index < self.cells.len()).then(|| self.cells.remove(index))
    }

    /// A fresh cell id like Jupyter's: eight random hex digits, unused in this notebook.
    fn new_cell_id(&self) -> String {
        // `RandomState` is seeded randomly; hashing a counter with it gives fresh values.
        let state = std::collections::hash_map::RandomState::new();
        let mut attempt = 0u64;
        loop {
            let mut hasher = state.build_hasher();
            hasher.write_u64(attempt);
            let id = format!("{:08x}", hasher.finish() & 0xffff_ffff);
            if !self
                .cells
                .iter()
                .any(|cell| cell_id(cell) == Some(id.as_str()))
            {
                return id;
            }
            attempt = attempt.wrapping_add(1);
        }
    }
}

/// One level of indentation as the file uses it: the leading whitespace of its second line.
fn detect_indent(text: &str) -> String {
    let Some((_, rest)) = text.split_once('\n') else {
        return String::new();
    };
    let indent: String = rest
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    if indent.is_empty() && !rest.trim().is_empty() {
        // Pretty-printed with no indentation is unusual; Jupyter's one space is the default.
        return " ".to_string();
    }
    indent
}

pub(crate) fn cell_id(cell: &Value) -> Option<&str> {
    cell.get("id").and_then(Value::as_str)
}

pub(crate) fn cell_type(cell: &Value) -> &str {
    cell.get("cell_type")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
}

/// A multi-line string as nbformat stores it: one string, or a list of lines to concatenate.
pub(crate) fn joined_text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// Sets a cell's source in the form it already has: a single string, or (as Jupyter writes
/// it) a list of lines, each but the last ending in a newline.
fn set_source(cell: &mut Map<String, Value>, source: &str) {
    let value = match cell.get("source") {
        Some(Value::String(_)) => json!(source),
        _ => json!(source.split_inclusive('\n').collect::<Vec<_>>()),
    };
    cell.insert("source".into(), value);
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const SMALL: &str = "{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"a1\",\n   \"metadata\": {},\n   \"source\": [\n    \"# Title\\n\",\n    \"text\"\n   ]\n  }\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n";

    #[test]
    fn round_trips_jupyter_layout_byte_for_byte() {
        let notebook = Notebook::parse(SMALL).unwrap();
        assert_eq!(notebook.to_text(), SMALL);
        let compact = r#"{"cells":[],"metadata":{},"nbformat":4,"nbformat_minor":2}"#;
        assert_eq!(Notebook::parse(compact).unwrap().to_text(), compact);
    }

    #[test]
    fn cells_are_found_by_id_or_index() {
        let notebook = Notebook::parse(SMALL).unwrap();
        assert_eq!(notebook.find_cell("a1"), Ok(0));
        assert_eq!(notebook.find_cell("0"), Ok(0));
        assert_eq!(notebook.find_cell("cell-0"), Ok(0));
        assert_eq!(
            notebook.find_cell("cell-4"),
            Err("Cell index 4 is out of range: the notebook has 1 cells (indices 0 to 0).".into())
        );
        assert_eq!(
            notebook.find_cell("zz"),
            Err("No cell has the id \"zz\". The notebook has 1 cells. Its cell ids are a1; a 0-based index such as \"0\" also works.".into())
        );
    }

    #[test]
    fn sources_keep_their_form() {
        let mut notebook = Notebook::parse(SMALL).unwrap();
        notebook.replace_cell(0, "one\ntwo\n", None);
        assert_eq!(notebook.cells()[0]["source"], json!(["one\n", "two\n"]));
        let id = notebook.insert_cell(1, "x = 1", CellKind::Code).unwrap();
        assert_eq!(
            notebook.cells()[1],
            json!({"cell_type": "code", "execution_count": null, "id": id, "metadata": {}, "outputs": [], "source": ["x = 1"]})
        );
    }

    #[test]
    fn older_formats_and_other_json_are_refused() {
        assert_eq!(
            Notebook::parse(r#"{"nbformat": 3, "worksheets": []}"#),
            Err(NotebookError::UnsupportedFormat(3))
        );
        assert_eq!(Notebook::parse("[1]"), Err(NotebookError::NoCells));
        assert!(matches!(
            Notebook::parse("{"),
            Err(NotebookError::InvalidJson(_))
        ));
    }
}
