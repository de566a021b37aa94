//! Structured output (`--json-schema`): the answer of a turn is one JSON value that fits a
//! schema, handed over through a `StructuredOutput` tool whose input is that value.
//!
//! A tool works on every provider and lets the provider's own tool-input machinery shape the
//! value. The input is checked against the schema before it counts; a value that does not fit
//! is an error result naming what is wrong, and the model tries again. A turn that ends without
//! a fitting value is sent back once more with a reminder, within
//! [`MAX_STRUCTURED_OUTPUT_ATTEMPTS`] in all; past that it ends as
//! [`TurnEnd::StructuredOutputRetries`](cairn_protocol::TurnEnd::StructuredOutputRetries).
//! The turn's result is then the value as JSON text.

use async_trait::async_trait;
use cairn_protocol::{ToolSpec, json_kind};
use cairn_tools::{
    CallContext, PreparedCall, Safety, ToolCall, ToolEffect, ToolExecutor, ToolOutput,
};
use serde_json::{Value, json};

/// The tool's name, as Claude Code names it.
pub const STRUCTURED_OUTPUT_TOOL: &str = "StructuredOutput";

/// How many times a turn may fail to give a fitting value (a call that does not fit, or an
/// answer without a call) before it ends in error.
pub const MAX_STRUCTURED_OUTPUT_ATTEMPTS: u32 = 5;

/// The schema errors one result lists at most.
const MAX_ERRORS: usize = 10;

/// The property a schema that is not an object is wrapped in: a tool's input is an object.
const WRAPPED: &str = "output";

/// The schema a turn's answer must fit, compiled.
pub struct StructuredOutput {
    spec: ToolSpec,
    validator: jsonschema::Validator,
    /// Whether the schema was wrapped in an object (`{"output": …}`) to be a tool's input.
    wrapped: bool,
}

impl std::fmt::Debug for StructuredOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StructuredOutput")
            .field("schema", &self.spec.input_schema)
            .finish_non_exhaustive()
    }
}

impl StructuredOutput {
    /// The schema of `--json-schema`'s text; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<StructuredOutput, String> {
        let schema: Value =
            serde_json::from_str(text).map_err(|err| format!("--json-schema: not JSON: {err}"))?;
        StructuredOutput::new(schema)
    }

    /// The answer must fit `schema`, a JSON Schema (no remote `$ref`).
    pub fn new(schema: Value) -> Result<StructuredOutput, String> {
        if !schema.is_object() {
            return Err(format!(
                "--json-schema: a JSON Schema is an object, found {}",
                json_kind(&schema)
            ));
        }
        let validator = jsonschema::validator_for(&schema)
            .map_err(|err| format!("--json-schema: not a valid JSON Schema: {err}"))?;
        let is_object = schema.get("type").and_then(Value::as_str) == Some("object");
        let input_schema = if is_object {
            schema
        } else {
            json!({
                "type": "object",
                "properties": {WRAPPED: schema},
                "required": [WRAPPED],
                "additionalProperties": false
            })
        };
        Ok(StructuredOutput {
            spec: ToolSpec {
                name: STRUCTURED_OUTPUT_TOOL.to_string(),
                description: "Gives your final answer as structured data. Call this once, at \
                              the end, with the answer as its input, which must fit the input \
                              schema exactly; this is the only answer the user receives. If \
                              the call is refused, fix what it names and call it again."
                    .to_string(),
                input_schema,
            },
            validator,
            wrapped: !is_object,
        })
    }

    /// What the model is told when a turn ends without a fitting value.
    pub(crate) fn reminder() -> String {
        format!(
            "You have not given your final answer through the {STRUCTURED_OUTPUT_TOOL} tool. \
             Call {STRUCTURED_OUTPUT_TOOL} now with the answer as its input, fitting its schema."
        )
    }

    /// The value a call hands over, if it fits; else what does not.
    fn check(&self, input: &Value) -> Result<Value, String> {
        let value = if self.wrapped {
            input.get(WRAPPED).cloned().unwrap_or(Value::Null)
        } else {
            input.clone()
        };
        let errors: Vec<String> = self
            .validator
            .iter_errors(&value)
            .take(MAX_ERRORS)
            .map(|error| {
                let path = error.instance_path().to_string();
                if path.is_empty() {
                    error.to_string()
                } else {
                    format!("at {path}: {error}")
                }
            })
            .collect();
        if errors.is_empty() {
            Ok(value)
        } else {
            Err(format!(
                "The value does not fit the required schema: {}. Fix it and call \
                 {STRUCTURED_OUTPUT_TOOL} again.",
                errors.join("; ")
            ))
        }
    }
}

#[async_trait]
impl ToolExecutor for StructuredOutput {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![self.spec.clone()]
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        Ok(PreparedCall {
            id: call.id.clone(),
            name: STRUCTURED_OUTPUT_TOOL.to_string(),
            input: call.input.clone(),
            // It only hands the answer over: nothing is read or changed.
            safety: Safety::READ_ONLY,
            paths: Vec::new(),
        })
    }

    async fn execute(&self, call: &PreparedCall, _cx: &CallContext) -> ToolOutput {
        match self.check(&call.input) {
            Ok(value) => ToolOutput {
                effect: Some(ToolEffect::StructuredOutput { value }),
                ..ToolOutput::text("Structured output provided successfully.")
            },
            Err(message) => ToolOutput::error(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_schema_is_the_input_and_a_value_that_does_not_fit_names_the_field() {
        let schema = json!({
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"]
        });
        let output = StructuredOutput::new(schema.clone()).unwrap();
        assert_eq!(output.spec.input_schema, schema);
        assert_eq!(output.check(&json!({"count": 3})), Ok(json!({"count": 3})));
        let refused = output.check(&json!({"count": "three"})).unwrap_err();
        assert!(refused.contains("at /count:"), "{refused}");
        let missing = output.check(&json!({})).unwrap_err();
        assert!(
            missing.contains("\"count\" is a required property"),
            "{missing}"
        );
    }

    #[test]
    fn another_schema_is_wrapped_in_an_object_and_unwrapped_again() {
        let output =
            StructuredOutput::new(json!({"type": "array", "items": {"type": "string"}})).unwrap();
        assert_eq!(output.spec.input_schema["required"], json!(["output"]));
        assert_eq!(
            output.check(&json!({"output": ["a", "b"]})),
            Ok(json!(["a", "b"]))
        );
        assert!(output.check(&json!({"output": [1]})).is_err());
    }

    #[test]
    fn a_schema_that_is_not_one_is_refused_saying_why() {
        assert_eq!(
            StructuredOutput::parse("{oops")
                .unwrap_err()
                .split(':')
                .next(),
            Some("--json-schema")
        );
        assert_eq!(
            StructuredOutput::parse("[1]").unwrap_err(),
            "--json-schema: a JSON Schema is an object, found an array"
        );
        let invalid = StructuredOutput::parse(r#"{"type": "no-such-type"}"#).unwrap_err();
        assert!(
            invalid.starts_with("--json-schema: not a valid JSON Schema"),
            "{invalid}"
        );
    }
}
