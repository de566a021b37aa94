//! The typed view: the settings keys cairn acts on today, with Claude Code's JSON names.
//!
//! Unknown keys are allowed everywhere (Claude Code has many more); they stay in the raw view.
//! The hand-written deserializers below exist for their error messages: a user who wrote
//! `"allow": "Bash"` should read "expected an array of strings", not serde's "a sequence".

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The top-level keys of [`Settings`]. A legacy `.claude.json` contributes only these (the
/// rest of that file is Claude Code's own state, not settings).
pub(crate) const KNOWN_KEYS: [&str; 11] = [
    "apiKeyHelper",
    "cleanupPeriodDays",
    "env",
    "hooks",
    "includeCoAuthoredBy",
    "model",
    "outputStyle",
    "permissions",
    "providers",
    "sandbox",
    "statusLine",
];

/// The merged settings, typed. Every field is optional in the files; absent means "not
/// configured", and the crate that acts on a field chooses its default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    default,
    rename_all = "camelCase",
    expecting = "a JSON object of settings"
)]
pub struct Settings {
    /// The model to use unless a flag says otherwise (`"claude-sonnet-4-5"`, `"opus"`).
    pub model: Option<String>,
    /// Permission rules, the starting mode and additional directories.
    #[serde(deserialize_with = "permissions_object")]
    pub permissions: Permissions,
    /// Environment variables for every tool subprocess. Numbers and booleans are accepted
    /// and turned into strings, as Claude Code does.
    #[serde(deserialize_with = "env_map")]
    pub env: BTreeMap<String, String>,
    /// Hook configuration, kept as JSON (`Null` when no level sets it); the governance layer
    /// gives it types.
    pub hooks: Value,
    /// How many days of session transcripts to keep.
    #[serde(deserialize_with = "days")]
    pub cleanup_period_days: Option<u32>,
    /// Whether shell commands run confined; `None` when no level has a `sandbox` object.
    #[serde(deserialize_with = "sandbox_object")]
    pub sandbox: Option<SandboxSettings>,
    /// Whether commits and pull requests get a co-authored-by line.
    pub include_co_authored_by: Option<bool>,
    /// A command whose output is the API key.
    pub api_key_helper: Option<String>,
    /// The output style the answers follow (`"Explanatory"`, or a style file's name).
    pub output_style: Option<String>,
    /// A command whose first line of output replaces the interactive UI's status line.
    pub status_line: Option<StatusLineCommand>,
    /// cairn's model providers by name (`--model <name>/<model>`): only what is typed here
    /// (each one's `models`) is checked at load; the rest of an entry (`kind`, `baseUrl`,
    /// `apiKeyEnv`, `headers`, `smallModel`) is read from the raw view where a provider is
    /// built.
    pub providers: BTreeMap<String, ProviderSettings>,
}

/// `providers.<name>`: a custom provider, or additions to a built-in one (`anthropic`,
/// `ollama`, …).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ProviderSettings {
    /// What the settings say of the provider's models, by id as the provider names it: they
    /// override the model registry's entries.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub models: BTreeMap<String, ModelSettings>,
}

/// `providers.<name>.models.<id>`: a model's facts, each replacing the registry's. Prices are
/// in US dollars per million tokens. A field cairn does not know is an error naming it, so a
/// misspelt price is not silently left out of the cost.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
#[allow(
    missing_docs,
    reason = "each field is the setting of the same name, as documented above"
)]
pub struct ModelSettings {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<std::num::NonZeroU64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<std::num::NonZeroU32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_price: Option<UsdPerMtok>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_price: Option<UsdPerMtok>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_price: Option<UsdPerMtok>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_read_price: Option<UsdPerMtok>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_caching: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_replay: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nine_char_tool_ids: Option<bool>,
}

/// A price in US dollars per million tokens: a finite number, 0 or more.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(transparent)]
pub struct UsdPerMtok(pub f64);

// Never NaN: the deserializer refuses anything but a finite number.
impl Eq for UsdPerMtok {}

impl<'de> Deserialize<'de> for UsdPerMtok {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let price = f64::deserialize(deserializer)?;
        if price.is_finite() && price >= 0.0 {
            Ok(UsdPerMtok(price))
        } else {
            Err(de::Error::invalid_value(
                de::Unexpected::Float(price),
                &"a price in US dollars per million tokens, 0 or more",
            ))
        }
    }
}

/// `statusLine`: `{"type": "command", "command": "~/.claude/statusline.sh"}`, run with the
/// session's JSON on its standard input. Each field may come from another file (they merge
/// key by key), so each may be missing from one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct StatusLineCommand {
    /// `command`, the one kind there is.
    #[serde(rename = "type")]
    pub kind: String,
    /// The shell command to run.
    pub command: String,
    /// Claude Code's spaces before the line; read, not used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub padding: Option<u32>,
}

const PERMISSIONS_EXPECTED: &str =
    "an object with allow, ask, deny, defaultMode or additionalDirectories";
const SANDBOX_EXPECTED: &str = "an object such as {\"enabled\": true}";

/// `permissions`: rules (Claude Code's syntax, e.g. `Bash(npm run test:*)`), the starting
/// mode, and directories outside the project the agent may touch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Permissions {
    /// Rules whose calls run without asking; accumulated over every level.
    #[serde(deserialize_with = "string_list")]
    pub allow: Vec<String>,
    /// Rules whose calls are always asked about; accumulated over every level.
    #[serde(deserialize_with = "string_list")]
    pub ask: Vec<String>,
    /// Rules whose calls are refused, whatever else matches; accumulated over every level.
    #[serde(deserialize_with = "string_list")]
    pub deny: Vec<String>,
    /// The permission mode a session starts in; `None` for the default mode.
    pub default_mode: Option<PermissionMode>,
    /// Directories beyond the project the tools may use as part of the workspace, as
    /// written (`~` and relative paths are resolved by the caller).
    #[serde(deserialize_with = "string_list")]
    pub additional_directories: Vec<String>,
}

/// `sandbox`: whether commands run confined, and whether they may use the network.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SandboxSettings {
    /// Whether shell commands run in the sandbox; `None` when not set.
    pub enabled: Option<bool>,
    /// `true` or `false` is cairn's switch for network access from sandboxed commands.
    /// Claude Code writes an object here instead (`allowedDomains`, proxy ports, …); such a
    /// file is accepted, this field is `None`, and the object stays in the raw view.
    #[serde(deserialize_with = "network_switch")]
    pub network: Option<bool>,
}

/// `permissions.defaultMode`'s type is the one every crate uses, from `cairn-protocol`:
/// settings files, the command line, the gate and the faces name modes alike.
pub use cairn_protocol::{PermissionMode, UnknownPermissionMode};

/// `permissions`: an object, or null for none. (serde's derive alone would also take an
/// array, as the fields in order, and then complain about the wrong thing.)
fn permissions_object<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Permissions, D::Error> {
    deserializer
        .deserialize_any(ObjectVisitor::new(PERMISSIONS_EXPECTED))
        .map(Option::unwrap_or_default)
}

/// `sandbox`: an object, or null for none.
fn sandbox_object<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<SandboxSettings>, D::Error> {
    deserializer.deserialize_any(ObjectVisitor::new(SANDBOX_EXPECTED))
}

/// Accepts a JSON object (deserialized as `T`) or null, and nothing else.
struct ObjectVisitor<T> {
    expected: &'static str,
    target: PhantomData<T>,
}

impl<T> ObjectVisitor<T> {
    fn new(expected: &'static str) -> Self {
        ObjectVisitor {
            expected,
            target: PhantomData,
        }
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = Option<T>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expected)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<T>, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Some)
    }
}

/// An array of strings: permission rules, directories.
fn string_list<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    struct ListVisitor;
    impl<'de> Visitor<'de> for ListVisitor {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an array of strings")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
            while let Some(item) = seq.next_element::<String>()? {
                items.push(item);
            }
            Ok(items)
        }
    }
    deserializer.deserialize_seq(ListVisitor)
}

/// The `env` object; values may be strings, numbers or booleans.
fn env_map<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    struct EnvVisitor;
    impl<'de> Visitor<'de> for EnvVisitor {
        type Value = BTreeMap<String, String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object of environment variables, such as {\"FOO\": \"bar\"}")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut env = BTreeMap::new();
            while let Some((name, EnvValue(value))) = map.next_entry::<String, EnvValue>()? {
                env.insert(name, value);
            }
            Ok(env)
        }
    }
    deserializer.deserialize_map(EnvVisitor)
}

struct EnvValue(String);

impl<'de> Deserialize<'de> for EnvValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ValueVisitor;
        impl Visitor<'_> for ValueVisitor {
            type Value = EnvValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string (numbers and booleans are turned into strings)")
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<EnvValue, E> {
                Ok(EnvValue(value.to_owned()))
            }
            fn visit_bool<E: de::Error>(self, value: bool) -> Result<EnvValue, E> {
                Ok(EnvValue(value.to_string()))
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> Result<EnvValue, E> {
                Ok(EnvValue(value.to_string()))
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<EnvValue, E> {
                Ok(EnvValue(value.to_string()))
            }
            fn visit_f64<E: de::Error>(self, value: f64) -> Result<EnvValue, E> {
                Ok(EnvValue(value.to_string()))
            }
        }
        deserializer.deserialize_any(ValueVisitor)
    }
}

/// `cleanupPeriodDays`: a whole number of days, or null.
fn days<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u32>, D::Error> {
    struct DaysVisitor;
    impl Visitor<'_> for DaysVisitor {
        type Value = Option<u32>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a whole number of days, 0 or more")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Option<u32>, E> {
            Ok(None)
        }
        fn visit_u64<E: de::Error>(self, value: u64) -> Result<Option<u32>, E> {
            u32::try_from(value)
                .map(Some)
                .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(value), &self))
        }
        fn visit_i64<E: de::Error>(self, value: i64) -> Result<Option<u32>, E> {
            u32::try_from(value)
                .map(Some)
                .map_err(|_| E::invalid_value(de::Unexpected::Signed(value), &self))
        }
    }
    deserializer.deserialize_any(DaysVisitor)
}

/// `sandbox.network`: cairn's boolean, or Claude Code's object (read as "not set here").
fn network_switch<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<bool>, D::Error> {
    struct NetworkVisitor;
    impl<'de> Visitor<'de> for NetworkVisitor {
        type Value = Option<bool>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("true, false, or Claude Code's network object")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Option<bool>, E> {
            Ok(None)
        }
        fn visit_bool<E: de::Error>(self, value: bool) -> Result<Option<bool>, E> {
            Ok(Some(value))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<bool>, A::Error> {
            while map
                .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                .is_some()
            {}
            Ok(None)
        }
    }
    deserializer.deserialize_any(NetworkVisitor)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn known_keys_are_the_typed_fields() {
        let value = serde_json::to_value(Settings::default()).unwrap();
        let keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, KNOWN_KEYS.to_vec());
    }

    #[test]
    fn env_values_become_strings() {
        let settings: Settings = serde_json::from_value(json!({
            "env": {"A": "x", "B": 8000, "C": true, "D": 1.5}
        }))
        .unwrap();
        let expected: BTreeMap<String, String> =
            [("A", "x"), ("B", "8000"), ("C", "true"), ("D", "1.5")]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
        assert_eq!(settings.env, expected);
    }

    #[test]
    fn sandbox_network_accepts_claude_codes_object() {
        let settings: Settings = serde_json::from_value(json!({
            "sandbox": {"enabled": true, "network": {"allowedDomains": ["example.com"]}}
        }))
        .unwrap();
        assert_eq!(
            settings.sandbox,
            Some(SandboxSettings {
                enabled: Some(true),
                network: None
            })
        );
        let settings: Settings =
            serde_json::from_value(json!({"sandbox": {"network": false}})).unwrap();
        assert_eq!(
            settings.sandbox,
            Some(SandboxSettings {
                enabled: None,
                network: Some(false)
            })
        );
    }

    #[test]
    fn cleanup_days_must_be_a_whole_number() {
        let error = serde_json::from_value::<Settings>(json!({"cleanupPeriodDays": -1}))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "invalid value: integer `-1`, expected a whole number of days, 0 or more"
        );
    }
}
