//! One MCP tool as cairn offers it: its name, its spec, the safety its server claims, and its
//! input schema, checked against each call.

use std::sync::OnceLock;

use cairn_protocol::ToolSpec;
use cairn_tools::{Access, Concurrency, Destructiveness, Reach, Safety};
use serde_json::{Value, json};

use crate::names::tool_name;

/// Claude Code's cap on a tool description from a server, in characters.
const MAX_DESCRIPTION: usize = 2_048;

/// How many schema errors a refusal lists.
const MAX_SCHEMA_ERRORS: usize = 3;

#[derive(Debug)]
pub(crate) struct McpTool {
    /// `mcp__<server>__<tool>`.
    pub(crate) name: String,
    /// The tool's own name on its server.
    pub(crate) remote: String,
    pub(crate) spec: ToolSpec,
    pub(crate) safety: Safety,
    pub(crate) reach: Reach,
    /// The server asks for it in every request, even when tool search defers the others
    /// (`_meta["anthropic/alwaysLoad"]`, as Claude Code reads it).
    pub(crate) always_load: bool,
    /// Compiled on the first call; `None` when the schema does not compile (the server then
    /// judges the input itself).
    validator: OnceLock<Option<jsonschema::Validator>>,
}

impl McpTool {
    /// A tool from one `tools/list` item (live or cached). The annotations are hints: read-only
    /// (`readOnlyHint`) also makes a call safe to run beside others; a tool that is not
    /// read-only is destructive unless it says otherwise, and open-world unless it says
    /// otherwise, as the MCP specification defaults them.
    pub(crate) fn from_listing(server: &str, listing: &Value) -> Option<McpTool> {
        let remote = listing.get("name")?.as_str()?.to_string();
        let hint = |name: &str| {
            listing
                .get("annotations")
                .and_then(|annotations| annotations.get(name))
                .and_then(Value::as_bool)
        };
        let read_only = hint("readOnlyHint") == Some(true);
        let destructive = !read_only && hint("destructiveHint") != Some(false);
        let safety = Safety {
            access: if read_only {
                Access::ReadOnly
            } else {
                Access::Writes
            },
            destructive: if destructive {
                Destructiveness::Destructive
            } else {
                Destructiveness::Harmless
            },
            concurrency: if read_only {
                Concurrency::Safe
            } else {
                Concurrency::Exclusive
            },
        };
        let reach = if hint("openWorldHint") == Some(false) {
            Reach::Local
        } else {
            Reach::OpenWorld
        };
        let mut description: String = listing
            .get("description")
            .and_then(Value::as_str)
            .or_else(|| listing.get("title").and_then(Value::as_str))
            .unwrap_or_default()
            .chars()
            .take(MAX_DESCRIPTION)
            .collect();
        if description.is_empty() {
            description = format!("The {remote} tool of the MCP server {server}.");
        }
        let input_schema = match listing.get("inputSchema") {
            Some(schema @ Value::Object(_)) => schema.clone(),
            _ => json!({"type": "object"}),
        };
        let name = tool_name(server, &remote);
        Some(McpTool {
            spec: ToolSpec {
                name: name.clone(),
                description,
                input_schema,
            },
            name,
            remote,
            safety,
            reach,
            always_load: listing
                .pointer("/_meta/anthropic~1alwaysLoad")
                .and_then(Value::as_bool)
                == Some(true),
            validator: OnceLock::new(),
        })
    }

    /// Checks `input` against the tool's schema; the error names the fields.
    pub(crate) fn check_input(&self, input: &Value) -> Result<(), String> {
        if !input.is_object() {
            return Err(format!(
                "Invalid input for {}: the input must be a JSON object.",
                self.name
            ));
        }
        let validator = self
            .validator
            .get_or_init(|| jsonschema::validator_for(&self.spec.input_schema).ok());
        let Some(validator) = validator else {
            return Ok(());
        };
        let errors: Vec<String> = validator
            .iter_errors(input)
            .take(MAX_SCHEMA_ERRORS)
            .map(|error| {
                let path = error.instance_path().to_string();
                if path.is_empty() {
                    error.to_string()
                } else {
                    format!(
                        "field `{}`: {error}",
                        path.trim_start_matches('/').replace('/', ".")
                    )
                }
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "Invalid input for {}: {}.",
                self.name,
                errors.join("; ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn annotations_become_safety_attributes() {
        let cases = [
            (
                json!({}),
                Access::Writes,
                Destructiveness::Destructive,
                Reach::OpenWorld,
            ),
            (
                json!({"readOnlyHint": true, "openWorldHint": false}),
                Access::ReadOnly,
                Destructiveness::Harmless,
                Reach::Local,
            ),
            (
                json!({"destructiveHint": false}),
                Access::Writes,
                Destructiveness::Harmless,
                Reach::OpenWorld,
            ),
        ];
        for (annotations, access, destructive, reach) in cases {
            let listing =
                json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": annotations});
            let tool = McpTool::from_listing("s", &listing).unwrap();
            assert_eq!(
                (tool.safety.access, tool.safety.destructive, tool.reach),
                (access, destructive, reach),
                "{annotations}"
            );
            let concurrent = tool.safety.concurrency == Concurrency::Safe;
            assert_eq!(concurrent, access == Access::ReadOnly);
        }
    }

    #[test]
    fn input_is_checked_against_the_schema() {
        let listing = json!({
            "name": "echo",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}, "n": {"type": "integer", "minimum": 1}},
                "required": ["text"]
            }
        });
        let tool = McpTool::from_listing("test", &listing).unwrap();
        assert_eq!(tool.name, "mcp__test__echo");
        let cases = [
            (json!({"text": "hi"}), Ok(())),
            (
                json!({}),
                Err("Invalid input for mcp__test__echo: \"text\" is a required property."),
            ),
            (
                json!({"text": 1, "n": 0}),
                Err(
                    "Invalid input for mcp__test__echo: field `n`: 0 is less than the minimum of 1; field `text`: 1 is not of type \"string\".",
                ),
            ),
            (
                json!("hi"),
                Err("Invalid input for mcp__test__echo: the input must be a JSON object."),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(
                tool.check_input(&input),
                expected.map_err(String::from),
                "{input}"
            );
        }
    }

    #[test]
    fn a_schema_with_a_remote_reference_is_never_fetched() {
        // Nothing listens on port 9: fetching would fail slowly or reach the network; the
        // validator has no HTTP client, so the schema does not compile and the server judges
        // the input itself.
        let listing = json!({
            "name": "remote",
            "inputSchema": {"$ref": "http://127.0.0.1:9/schema.json"}
        });
        let tool = McpTool::from_listing("s", &listing).unwrap();
        assert_eq!(tool.check_input(&json!({"anything": 1})), Ok(()));
    }

    #[test]
    fn a_tools_meta_can_ask_to_be_loaded_always() {
        let always = |listing: Value| McpTool::from_listing("s", &listing).unwrap().always_load;
        assert!(always(
            json!({"name": "t", "_meta": {"anthropic/alwaysLoad": true}})
        ));
        assert!(!always(
            json!({"name": "t", "_meta": {"anthropic/alwaysLoad": "yes"}})
        ));
        assert!(!always(json!({"name": "t"})));
    }
}
