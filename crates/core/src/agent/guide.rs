//! `CairnDocs`: cairn's own documentation, built into the binary, for the `cairn-guide` role.
//!
//! An installed cairn has no checkout to read, so the README, PARITY.md and docs/*.md are
//! embedded with `include_str!` and read through this tool, offered to that role only. A
//! document is read whole or searched: PARITY.md alone is tens of thousands of tokens, so the
//! tool's description tells the model to search first.

use std::path::PathBuf;

use async_trait::async_trait;
use cairn_tools::{Safety, Tool, ToolContext, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

/// The tool's name.
pub const CAIRN_DOCS_TOOL: &str = "CairnDocs";

/// The most matching lines a search returns.
const MAX_MATCHES: usize = 60;

/// One embedded document: the name the tool takes, what it covers, its text.
struct Doc {
    name: &'static str,
    about: &'static str,
    text: &'static str,
}

const DOCS: [Doc; 3] = [
    Doc {
        name: "README",
        about: "what cairn is, installing, first steps, configuration, the files it reads",
        text: include_str!("../../../../README.md"),
    },
    Doc {
        name: "PARITY",
        about: "every Claude Code feature and flag, whether cairn has it (done, partial, \
                missing) and how it differs; one table row per feature",
        text: include_str!("../../../../PARITY.md"),
    },
    Doc {
        name: "ARCHITECTURE",
        about: "how cairn is built: its crates, the engine, the faces, sessions, permissions",
        text: include_str!("../../../../docs/ARCHITECTURE.md"),
    },
];

/// `CairnDocs {doc, search?}`: a document whole, or its lines that contain every word of
/// `search`, with their line numbers.
#[derive(Debug, Clone, Copy, Default)]
pub struct CairnDocsTool;

/// What a call asks for.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CairnDocsInput {
    /// The document: README, PARITY or ARCHITECTURE.
    doc: String,
    /// Words to look for (case does not matter): only the lines holding all of them come
    /// back. Leave it out to read the whole document.
    #[serde(default)]
    search: Option<String>,
}

impl CairnDocsTool {
    fn find(name: &str) -> Option<&'static Doc> {
        let wanted = name.trim().trim_end_matches(".md").to_ascii_uppercase();
        let wanted = wanted.rsplit('/').next().unwrap_or(&wanted);
        DOCS.iter().find(|doc| doc.name == wanted)
    }
}

/// The lines of `text` holding every word of `search`, numbered, at most [`MAX_MATCHES`].
fn search_lines(text: &str, search: &str) -> String {
    let words: Vec<String> = search.split_whitespace().map(str::to_lowercase).collect();
    let mut found = Vec::new();
    let mut more = 0;
    for (index, line) in text.lines().enumerate() {
        let lower = line.to_lowercase();
        if words.iter().all(|word| lower.contains(word.as_str())) {
            if found.len() < MAX_MATCHES {
                found.push(format!("{}: {line}", index + 1));
            } else {
                more += 1;
            }
        }
    }
    if found.is_empty() {
        return format!("No line holds all of: {search}. Try fewer or other words.");
    }
    if more > 0 {
        found.push(format!("(… {more} more lines match: narrow the search.)"));
    }
    found.join("\n")
}

#[async_trait]
impl Tool for CairnDocsTool {
    type Input = CairnDocsInput;

    fn name(&self) -> &'static str {
        CAIRN_DOCS_TOOL
    }

    fn description(&self) -> String {
        let mut text = String::from(
            "Reads cairn's own documentation, as shipped with this cairn. Search a document \
             for a few words first (PARITY is long); read a whole document only when you need \
             it all. Documents (doc):\n",
        );
        for doc in &DOCS {
            text.push_str(&format!("- {}: {}\n", doc.name, doc.about));
        }
        text
    }

    fn safety(&self, _input: &CairnDocsInput, _ctx: &ToolContext) -> Safety {
        // It reads text compiled into the binary: no file, no state.
        Safety::READ_ONLY
    }

    fn touched_paths(&self, _input: &CairnDocsInput, _ctx: &ToolContext) -> Vec<PathBuf> {
        Vec::new()
    }

    async fn validate(&self, input: &CairnDocsInput, _ctx: &ToolContext) -> Result<(), String> {
        match CairnDocsTool::find(&input.doc) {
            Some(_) => Ok(()),
            None => Err(unknown_doc(&input.doc)),
        }
    }

    async fn run(
        &self,
        input: CairnDocsInput,
        _ctx: &ToolContext,
        _cancel: &CancellationToken,
    ) -> ToolOutput {
        let Some(doc) = CairnDocsTool::find(&input.doc) else {
            return ToolOutput::error(unknown_doc(&input.doc));
        };
        match input.search.as_deref().map(str::trim) {
            Some(search) if !search.is_empty() => ToolOutput::text(search_lines(doc.text, search)),
            _ => ToolOutput::text(doc.text),
        }
    }
}

fn unknown_doc(name: &str) -> String {
    let names: Vec<&str> = DOCS.iter().map(|doc| doc.name).collect();
    format!(
        "CairnDocs: no document named {name:?}; `doc` is one of {}.",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn documents_are_found_by_loose_names_and_searched_by_words() {
        for name in ["PARITY", "parity", "PARITY.md", "docs/parity.md"] {
            assert_eq!(
                CairnDocsTool::find(name).map(|doc| doc.name),
                Some("PARITY")
            );
        }
        assert!(CairnDocsTool::find("CHANGELOG").is_none());
        let text = "# Title\nThe Agent tool runs\nagent roles\nnothing here\n";
        assert_eq!(
            search_lines(text, "AGENT"),
            "2: The Agent tool runs\n3: agent roles"
        );
        assert_eq!(search_lines(text, "agent tool"), "2: The Agent tool runs");
        assert_eq!(
            search_lines(text, "missing"),
            "No line holds all of: missing. Try fewer or other words."
        );
        assert_eq!(
            unknown_doc("CHANGELOG"),
            "CairnDocs: no document named \"CHANGELOG\"; `doc` is one of README, PARITY, \
             ARCHITECTURE."
        );
    }

    #[test]
    fn the_embedded_parity_table_names_the_agent_tool() {
        let parity = CairnDocsTool::find("PARITY")
            .map(|doc| doc.text)
            .unwrap_or("");
        assert!(search_lines(parity, "| `Agent`").starts_with(char::is_numeric));
    }
}
