//! Elicitation: a server asking the user for a few values in the middle of a call
//! (`elicitation/create`). The client only carries the question; who answers it is the face's
//! business, through an [`Elicitor`] it hands the client in [`crate::StartOptions`]: the
//! interactive UI shows a form, `-p` declines (nobody is there to ask).
//!
//! The schema of a form is flat: an object whose properties are strings, numbers, integers,
//! booleans or enums (a string with `enum`, or `oneOf` of `const`s). [`defaults_of`] gives
//! its defaults and [`validate`] checks an answer against it before it is sent, whatever the
//! face: a server gets accepted content that fits what it asked for, or no content.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};

/// What a server asks: which server, its message, the schema of the answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    /// The server's name under `mcpServers`.
    pub server: String,
    /// What the server says it needs, for the user to read.
    pub message: String,
    /// The answer's JSON schema (`requestedSchema`): an object of flat properties.
    pub schema: Value,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    /// Sent, with these values (checked against the schema before they go).
    Accept(Map<String, Value>),
    /// Not answered, the call goes on without it.
    Decline,
    /// The whole operation is called off.
    Cancel,
}

/// The future an [`Elicitor`] answers with.
pub type ElicitationFuture = Pin<Box<dyn Future<Output = ElicitationAnswer> + Send>>;

/// Who answers a server's elicitation: supplied by the face.
pub trait Elicitor: Send + Sync {
    /// The answer to `request`; it may take as long as the user does.
    fn elicit(&self, request: ElicitationRequest) -> ElicitationFuture;
}

/// The elicitor that declines everything: for faces with nobody to ask (`-p`, the SDK).
#[derive(Debug, Clone, Copy, Default)]
pub struct Decline;

impl Elicitor for Decline {
    fn elicit(&self, _request: ElicitationRequest) -> ElicitationFuture {
        Box::pin(std::future::ready(ElicitationAnswer::Decline))
    }
}

/// The elicitor of a run, shared by its servers.
#[derive(Clone)]
pub struct Elicitation(Arc<dyn Elicitor>);

impl Elicitation {
    /// Answers through `elicitor`.
    pub fn new(elicitor: impl Elicitor + 'static) -> Elicitation {
        Elicitation(Arc::new(elicitor))
    }

    /// Declines every request.
    pub fn decline() -> Elicitation {
        Elicitation::new(Decline)
    }

    /// The answer to `request`, with accepted content checked against the schema: content
    /// that does not fit is never sent (the request is declined instead).
    pub async fn answer(&self, request: ElicitationRequest) -> ElicitationAnswer {
        let schema = request.schema.clone();
        match self.0.elicit(request).await {
            ElicitationAnswer::Accept(content) => match validate(&schema, &content) {
                Ok(()) => ElicitationAnswer::Accept(content),
                Err(_) => ElicitationAnswer::Decline,
            },
            other => other,
        }
    }
}

impl Default for Elicitation {
    fn default() -> Self {
        Elicitation::decline()
    }
}

impl std::fmt::Debug for Elicitation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Elicitation")
    }
}

/// The kind of value a property of a flat schema takes.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// Free text.
    String,
    /// A number (`integer`: a whole one).
    Number {
        /// Whether only whole numbers fit.
        integer: bool,
    },
    /// Yes or no.
    Boolean,
    /// One of these values (with the titles to show, when the schema gives them).
    Enum {
        /// The values, as sent.
        values: Vec<String>,
        /// What to show for each value.
        titles: Vec<String>,
    },
}

/// One property of a flat schema, as a form shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The property's name: the key of the answer.
    pub name: String,
    /// What to call it (`title`, else the name).
    pub title: String,
    /// Its `description`, if any.
    pub description: Option<String>,
    /// What it takes.
    pub kind: FieldKind,
    /// Whether the schema lists it in `required`.
    pub required: bool,
    /// Its `default`, if any.
    pub default: Option<Value>,
}

/// The properties of a flat schema, by name (a parsed schema keeps no order); an error names
/// the property whose type a form cannot take.
pub fn fields_of(schema: &Value) -> Result<Vec<Field>, String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(Vec::new());
    };
    properties
        .iter()
        .map(|(name, property)| {
            Ok(Field {
                name: name.clone(),
                title: property
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or(name)
                    .to_string(),
                description: property
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                kind: kind_of(name, property)?,
                required: required.contains(&name.as_str()),
                default: property.get("default").cloned(),
            })
        })
        .collect()
}

fn kind_of(name: &str, property: &Value) -> Result<FieldKind, String> {
    let strings = |values: &Value| -> Vec<String> {
        values
            .as_array()
            .map(|values| {
                values
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Some(values) = property.get("enum") {
        let values = strings(values);
        let titles = property
            .get("enumNames")
            .map(strings)
            .filter(|titles| titles.len() == values.len())
            .unwrap_or_else(|| values.clone());
        return Ok(FieldKind::Enum { values, titles });
    }
    if let Some(options) = property.get("oneOf").and_then(Value::as_array) {
        let mut values = Vec::new();
        let mut titles = Vec::new();
        for option in options {
            let Some(value) = option.get("const").and_then(Value::as_str) else {
                return Err(format!("property `{name}`: a oneOf option without a const"));
            };
            values.push(value.to_string());
            titles.push(
                option
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or(value)
                    .to_string(),
            );
        }
        return Ok(FieldKind::Enum { values, titles });
    }
    match property.get("type").and_then(Value::as_str) {
        Some("string") => Ok(FieldKind::String),
        Some("number") => Ok(FieldKind::Number { integer: false }),
        Some("integer") => Ok(FieldKind::Number { integer: true }),
        Some("boolean") => Ok(FieldKind::Boolean),
        Some(other) => Err(format!(
            "property `{name}`: type `{other}` is not one a form takes"
        )),
        None => Err(format!("property `{name}`: no type")),
    }
}

/// The schema's defaults: each property's `default`, by name.
pub fn defaults_of(schema: &Value) -> Map<String, Value> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .filter_map(|(name, property)| {
                    Some((name.clone(), property.get("default")?.clone()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `content` fits `schema`: every required property there, each value of its
/// property's type (and among its values, for an enum), no property the schema lacks. The
/// error names the property.
pub fn validate(schema: &Value, content: &Map<String, Value>) -> Result<(), String> {
    let fields = fields_of(schema)?;
    for field in &fields {
        let Some(value) = content.get(&field.name) else {
            if field.required {
                return Err(format!("`{}` is required", field.name));
            }
            continue;
        };
        let fits = match &field.kind {
            FieldKind::String => value.is_string(),
            FieldKind::Number { integer: false } => value.is_number(),
            FieldKind::Number { integer: true } => {
                value.is_i64()
                    || value.is_u64()
                    || value.as_f64().is_some_and(|number| number.fract() == 0.0)
            }
            FieldKind::Boolean => value.is_boolean(),
            FieldKind::Enum { values, .. } => value
                .as_str()
                .is_some_and(|value| values.iter().any(|allowed| allowed == value)),
        };
        if !fits {
            return Err(match &field.kind {
                FieldKind::Enum { values, .. } => {
                    format!("`{}` must be one of {}", field.name, values.join(", "))
                }
                kind => format!("`{}` must be {}", field.name, kind_word(kind)),
            });
        }
    }
    if let Some(extra) = content
        .keys()
        .find(|key| !fields.iter().any(|field| &field.name == *key))
    {
        return Err(format!("`{extra}` is not in the schema"));
    }
    Ok(())
}

fn kind_word(kind: &FieldKind) -> &'static str {
    match kind {
        FieldKind::String => "a string",
        FieldKind::Number { integer: false } => "a number",
        FieldKind::Number { integer: true } => "a whole number",
        FieldKind::Boolean => "true or false",
        FieldKind::Enum { .. } => "one of the listed values",
    }
}

/// The request rmcp hands the client, as cairn's: `None` for a mode a form cannot answer
/// (`url`).
pub(crate) fn request_of(
    server: &str,
    params: &rmcp::model::ElicitRequestParams,
) -> Option<ElicitationRequest> {
    let wire = serde_json::to_value(params).ok()?;
    if wire.get("mode").and_then(Value::as_str).unwrap_or("form") != "form" {
        return None;
    }
    Some(ElicitationRequest {
        server: server.to_string(),
        message: wire
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        schema: wire.get("requestedSchema").cloned().unwrap_or(Value::Null),
    })
}

/// The answer as rmcp sends it.
pub(crate) fn result_of(answer: ElicitationAnswer) -> Value {
    match answer {
        ElicitationAnswer::Accept(content) => {
            serde_json::json!({"action": "accept", "content": content})
        }
        ElicitationAnswer::Decline => serde_json::json!({"action": "decline"}),
        ElicitationAnswer::Cancel => serde_json::json!({"action": "cancel"}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "Ada"},
                "age": {"type": "integer", "default": 36},
                "score": {"type": "number", "default": 9.5},
                "subscribed": {"type": "boolean", "default": true},
                "colour": {"type": "string", "enum": ["red", "green"], "default": "green"},
                "note": {"type": "string"}
            },
            "required": ["name", "colour"]
        })
    }

    #[test]
    fn defaults_are_each_propertys_default() {
        assert_eq!(
            Value::Object(defaults_of(&schema())),
            json!({"name": "Ada", "age": 36, "score": 9.5, "subscribed": true, "colour": "green"})
        );
        assert!(defaults_of(&json!({"type": "object"})).is_empty());
    }

    #[test]
    fn the_defaults_fit_their_schema() {
        assert_eq!(validate(&schema(), &defaults_of(&schema())), Ok(()));
    }

    #[test]
    fn validation_names_the_property_that_does_not_fit() {
        let content = |value: Value| value.as_object().cloned().unwrap_or_default();
        assert_eq!(
            validate(&schema(), &content(json!({"colour": "red"}))),
            Err("`name` is required".to_string())
        );
        assert_eq!(
            validate(&schema(), &content(json!({"name": "x", "colour": "blue"}))),
            Err("`colour` must be one of red, green".to_string())
        );
        assert_eq!(
            validate(
                &schema(),
                &content(json!({"name": "x", "colour": "red", "age": 1.5}))
            ),
            Err("`age` must be a whole number".to_string())
        );
        assert_eq!(
            validate(
                &schema(),
                &content(json!({"name": "x", "colour": "red", "subscribed": "yes"}))
            ),
            Err("`subscribed` must be true or false".to_string())
        );
        assert_eq!(
            validate(
                &schema(),
                &content(json!({"name": "x", "colour": "red", "other": 1}))
            ),
            Err("`other` is not in the schema".to_string())
        );
    }

    #[test]
    fn fields_follow_the_schema() {
        let fields = fields_of(&schema()).unwrap();
        let names: Vec<&str> = fields.iter().map(|field| field.name.as_str()).collect();
        assert_eq!(
            names,
            ["age", "colour", "name", "note", "score", "subscribed"]
        );
        assert!(fields[1].required && !fields[0].required);
        assert_eq!(fields[0].kind, FieldKind::Number { integer: true });
        let titled = fields_of(&json!({"properties": {"size": {"type": "string", "oneOf": [
            {"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}
        ]}}}))
        .unwrap();
        assert_eq!(
            titled[0].kind,
            FieldKind::Enum {
                values: vec!["s".into(), "l".into()],
                titles: vec!["Small".into(), "Large".into()]
            }
        );
        assert_eq!(
            fields_of(&json!({"properties": {"list": {"type": "array"}}})),
            Err("property `list`: type `array` is not one a form takes".to_string())
        );
    }

    #[tokio::test]
    async fn content_that_does_not_fit_is_declined() {
        struct Answers(Map<String, Value>);
        impl Elicitor for Answers {
            fn elicit(&self, _request: ElicitationRequest) -> ElicitationFuture {
                Box::pin(std::future::ready(ElicitationAnswer::Accept(
                    self.0.clone(),
                )))
            }
        }
        let request = ElicitationRequest {
            server: "s".into(),
            message: "m".into(),
            schema: schema(),
        };
        let wrong = Elicitation::new(Answers(Map::new()));
        assert_eq!(
            wrong.answer(request.clone()).await,
            ElicitationAnswer::Decline
        );
        let right = Elicitation::new(Answers(defaults_of(&schema())));
        assert_eq!(
            right.answer(request).await,
            ElicitationAnswer::Accept(defaults_of(&schema()))
        );
    }
}
