//! Turning a tool's typed input into what the model sees (a JSON Schema) and the model's JSON
//! back into the typed input, with errors that name the field.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The JSON Schema of `T` as the model should see it: inlined, without `$schema` or `title`,
/// and with optional fields written as their plain type rather than "type or null".
pub fn schema_for<T: JsonSchema>() -> Value {
    let mut schema = SchemaSettings::draft07()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
    }
    drop_null_types(&mut schema);
    schema
}

/// `{"type": ["string", "null"]}` → `{"type": "string"}`, everywhere: an absent field is how
/// the model leaves an option out, and a lone `null` type only confuses it.
fn drop_null_types(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if let Some(Value::Array(types)) = object.get_mut("type") {
                types.retain(|kind| kind != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    object.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(options)) = object.get_mut("anyOf") {
                options.retain(|option| option.get("type").is_none_or(|kind| kind != "null"));
                if options.len() == 1 {
                    let only = options.remove(0);
                    object.remove("anyOf");
                    if let Value::Object(inner) = only {
                        object.extend(inner);
                    }
                }
            }
            if let Some(Value::Array(values)) = object.get_mut("enum") {
                values.retain(|value| !value.is_null());
            }
            object.values_mut().for_each(drop_null_types);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null_types),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

/// Reads the model's JSON as `T`. The error names the field (`edits[1].old_string`) and what
/// was wrong with it, in words the model can act on.
pub fn parse_input<T: DeserializeOwned>(tool: &str, input: &Value) -> Result<T, String> {
    serde_path_to_error::deserialize(input).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        if path == "." {
            format!("Invalid input for {tool}: {inner}.")
        } else {
            format!("Invalid input for {tool}: field `{path}`: {inner}.")
        }
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Example {
        /// The file.
        path: String,
        limit: Option<u32>,
        mode: Option<Mode>,
        items: Vec<Item>,
    }

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        Content,
        Count,
    }

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Item {
        name: String,
    }

    #[test]
    fn schema_is_inlined_and_optional_fields_have_plain_types() {
        let schema = schema_for::<Example>();
        assert_eq!(schema["type"], json!("object"));
        assert_eq!(
            schema["properties"]["path"]["description"],
            json!("The file.")
        );
        assert_eq!(schema["properties"]["limit"]["type"], json!("integer"));
        assert_eq!(
            schema["properties"]["mode"]["enum"],
            json!(["content", "count"])
        );
        assert_eq!(
            schema["properties"]["items"]["items"]["properties"]["name"]["type"],
            json!("string")
        );
        assert_eq!(schema["required"], json!(["path", "items"]));
        assert_eq!(schema["additionalProperties"], json!(false));
        assert!(
            schema.get("$schema").is_none() && schema.get("$defs").is_none(),
            "{schema}"
        );
    }

    #[test]
    fn errors_name_the_field_and_the_expectation() {
        let wrong_type = parse_input::<Example>("X", &json!({"path": 3, "items": []})).unwrap_err();
        assert_eq!(
            wrong_type,
            "Invalid input for X: field `path`: invalid type: integer `3`, expected a string."
        );
        let missing = parse_input::<Example>("X", &json!({"items": []})).unwrap_err();
        assert_eq!(missing, "Invalid input for X: missing field `path`.");
        let bad_enum =
            parse_input::<Example>("X", &json!({"path": "a", "items": [], "mode": "lines"}))
                .unwrap_err();
        assert_eq!(
            bad_enum,
            "Invalid input for X: field `mode`: unknown variant `lines`, expected `content` or `count`."
        );
        let nested =
            parse_input::<Example>("X", &json!({"path": "a", "items": [{"name": "a"}, {}]}))
                .unwrap_err();
        assert_eq!(
            nested,
            "Invalid input for X: field `items[1]`: missing field `name`."
        );
    }
}
