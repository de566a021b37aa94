//! A notebook as Read shows it: every cell in order with its index, id, type and source, and
//! the text of its outputs. Images in outputs are named, not inlined.

use serde_json::Value;

use super::{Notebook, cell_id, cell_type, joined_text};

/// One output's text is cut after this many characters.
const MAX_OUTPUT_CHARS: usize = 4_000;

impl Notebook {
    /// The notebook for the model to read; `path` names it in the heading.
    pub(crate) fn render(&self, path: &str) -> String {
        let cells = self.cells();
        let language = self
            .language()
            .map(|language| format!(", language {language}"))
            .unwrap_or_default();
        let mut out = format!(
            "Jupyter notebook {path}: {} cell{}{language}. Change cells with NotebookEdit, \
             naming a cell by its id (or its 0-based index).\n",
            cells.len(),
            if cells.len() == 1 { "" } else { "s" }
        );
        if cells.is_empty() {
            out.push_str("(the notebook has no cells)\n");
        }
        for (index, cell) in cells.iter().enumerate() {
            render_cell(&mut out, index, cell);
        }
        out
    }
}

fn render_cell(out: &mut String, index: usize, cell: &Value) {
    out.push_str(&format!("\n<cell index=\"{index}\""));
    if let Some(id) = cell_id(cell) {
        out.push_str(&format!(" id=\"{id}\""));
    }
    out.push_str(&format!(" type=\"{}\"", cell_type(cell)));
    if let Some(count) = cell.get("execution_count").and_then(Value::as_u64) {
        out.push_str(&format!(" execution_count=\"{count}\""));
    }
    out.push_str(">\n");
    push_block(out, &joined_text(cell.get("source")));
    if let Some(Value::Array(outputs)) = cell.get("outputs") {
        for output in outputs {
            render_output(out, output);
        }
    }
    out.push_str("</cell>\n");
}

fn render_output(out: &mut String, output: &Value) {
    let kind = output
        .get("output_type")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    match kind {
        "stream" => {
            let name = output
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("stdout");
            out.push_str(&format!("<output type=\"stream\" name=\"{name}\">\n"));
            push_block(out, &cut(&strip_ansi(&joined_text(output.get("text")))));
        }
        "execute_result" | "display_data" => {
            out.push_str(&format!("<output type=\"{kind}\">\n"));
            let data = output.get("data").and_then(Value::as_object);
            let plain = data.and_then(|data| data.get("text/plain"));
            if let Some(plain) = plain {
                push_block(out, &cut(&strip_ansi(&joined_text(Some(plain)))));
            }
            let mut others = Vec::new();
            for (mime, _) in data.into_iter().flatten() {
                if mime.starts_with("image/") {
                    out.push_str(&format!("[{mime} image, not shown]\n"));
                } else if mime != "text/plain" {
                    others.push(mime.as_str());
                }
            }
            if plain.is_none() && !others.is_empty() {
                out.push_str(&format!("[{} output, not shown]\n", others.join(", ")));
            }
        }
        "error" => {
            let name = output
                .get("ename")
                .and_then(Value::as_str)
                .unwrap_or("Error");
            let value = output.get("evalue").and_then(Value::as_str).unwrap_or("");
            out.push_str("<output type=\"error\">\n");
            push_block(out, &cut(&strip_ansi(&format!("{name}: {value}"))));
        }
        other => out.push_str(&format!("<output type=\"{other}\">\n")),
    }
    out.push_str("</output>\n");
}

/// `text` followed by exactly one newline (none for empty text).
fn push_block(out: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
}

fn cut(text: &str) -> String {
    let total = text.chars().count();
    if total <= MAX_OUTPUT_CHARS {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(MAX_OUTPUT_CHARS).collect();
    if !kept.ends_with('\n') {
        kept.push('\n');
    }
    kept.push_str(&format!(
        "[output cut: {} more characters]\n",
        total - MAX_OUTPUT_CHARS
    ));
    kept
}

/// Text without ANSI escape sequences (the colours of tracebacks and progress bars).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            // Parameters and intermediates, up to the final byte (`@` to `~`).
            for next in chars.by_ref() {
                if ('@'..='~').contains(&next) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn ansi_colours_are_removed() {
        assert_eq!(
            strip_ansi("\u{1b}[0;31mZeroDivisionError\u{1b}[0m: x"),
            "ZeroDivisionError: x"
        );
    }

    #[test]
    fn long_outputs_are_cut_with_a_note() {
        let long = "y".repeat(MAX_OUTPUT_CHARS + 5);
        let shown = cut(&long);
        assert!(
            shown.ends_with("\n[output cut: 5 more characters]\n"),
            "{shown}"
        );
    }
}
