//! The result of a load: the merged settings, raw and typed, with provenance.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

use crate::load::{check_known_keys, typed_view};
use crate::merge::{self, SourceId, Tree};
use crate::{ConfigError, ConfigWarning, Problem, Settings, Source};

/// The merged settings of one session, kept twice: as raw JSON (every key, known or not,
/// readable by dotted key) and as the typed [`Settings`]. Each value remembers the layer it
/// came from.
///
/// `Default` is a load that found no files.
#[derive(Debug, Clone, Default)]
pub struct LoadedSettings {
    sources: Vec<Source>,
    /// Each source's own layer, as read, beside `sources`: what a level says on its own, for
    /// the rule on project-level keys ([`crate::project_level`]).
    layers: Vec<Map<String, Value>>,
    tree: BTreeMap<String, Tree>,
    raw: Map<String, Value>,
    settings: Settings,
    warnings: Vec<ConfigWarning>,
}

/// One effective leaf setting, as `cairn config list` shows it.
///
/// `Display` gives `key = value  (source, …)`, the value as compact JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingEntry<'a> {
    /// Dotted key (`permissions.defaultMode`).
    pub key: String,
    /// The effective value: a scalar, an array, or an empty object.
    pub value: &'a Value,
    /// Every layer that contributed, lowest precedence first; one for a plain value, several
    /// for an accumulated list.
    pub sources: Vec<&'a Source>,
}

impl<'a> SettingEntry<'a> {
    /// The layer that decided the value (the highest-precedence contributor).
    pub fn origin(&self) -> Option<&'a Source> {
        self.sources.last().copied()
    }
}

impl fmt::Display for SettingEntry<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}  (", self.key, self.value)?;
        for (index, source) in self.sources.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{source}")?;
        }
        f.write_str(")")
    }
}

impl LoadedSettings {
    pub(crate) fn from_parts(
        sources: Vec<Source>,
        layers: Vec<Map<String, Value>>,
        tree: BTreeMap<String, Tree>,
        warnings: Vec<ConfigWarning>,
    ) -> Result<Self, ConfigError> {
        let mut loaded = LoadedSettings {
            sources,
            layers,
            tree,
            raw: Map::new(),
            settings: Settings::default(),
            warnings,
        };
        loaded.refresh()?;
        Ok(loaded)
    }

    /// Renders the raw view and the typed view from the tree.
    fn refresh(&mut self) -> Result<(), ConfigError> {
        self.raw = merge::render(&self.tree);
        // Each layer was checked on its own, so the merge of them cannot fail to type; if it
        // ever does, blame the layer that supplied the top-level key.
        self.settings = typed_view(&Value::Object(self.raw.clone())).map_err(|problem| {
            let origin = match &problem {
                Problem::InvalidValue { key, .. } => key
                    .split(['.', '['])
                    .next()
                    .and_then(|top| self.origin(top)),
                Problem::Syntax { .. } | Problem::NotAnObject { .. } => None,
            };
            ConfigError::Invalid {
                origin: origin
                    .or_else(|| self.sources.last())
                    .cloned()
                    .unwrap_or_else(|| Source::Override("merged settings".to_owned())),
                problem,
            }
        })?;
        Ok(())
    }

    /// The typed view of the keys cairn acts on.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The merged JSON, unknown keys included.
    pub fn raw(&self) -> &Map<String, Value> {
        &self.raw
    }

    /// The environment variables the settings give every tool subprocess. The caller applies
    /// them; this crate never touches its own process environment.
    pub fn env(&self) -> &BTreeMap<String, String> {
        &self.settings.env
    }

    /// The effective value at a dotted key: `get("permissions.defaultMode")`. A numeric part
    /// indexes an array (`hooks.PreToolUse.0`). `None` if no layer sets it.
    pub fn get(&self, key: &str) -> Option<&Value> {
        merge::resolve(&self.raw, key).map(|(_, value)| value)
    }

    /// The layer that supplied the effective value at `key`. For an object or an
    /// accumulated list, the highest-precedence layer among those that contributed; for one
    /// item of an accumulated list (`permissions.allow.2`), the layer that brought that item.
    pub fn origin(&self, key: &str) -> Option<&Source> {
        self.origins(key).last().copied()
    }

    /// Every layer that contributed to the value at `key`, lowest precedence first: one for
    /// a replaced value, each contributing layer for a merged object or accumulated list.
    pub fn origins(&self, key: &str) -> Vec<&Source> {
        merge::resolve(&self.raw, key)
            .and_then(|(steps, _)| merge::sources_at(&self.tree, &steps))
            .map(|ids| self.named(&ids))
            .unwrap_or_default()
    }

    /// Every effective leaf setting with its value and sources, sorted by key. Objects are
    /// walked into; arrays are one entry (an accumulated list names every contributor); an
    /// empty object is an entry of its own so that nothing set is hidden.
    pub fn list(&self) -> Vec<SettingEntry<'_>> {
        let mut entries = Vec::new();
        let mut prefix = String::new();
        self.collect_entries(&self.tree, &self.raw, &mut prefix, &mut entries);
        entries
    }

    fn collect_entries<'a>(
        &'a self,
        tree: &'a BTreeMap<String, Tree>,
        raw: &'a Map<String, Value>,
        prefix: &mut String,
        entries: &mut Vec<SettingEntry<'a>>,
    ) {
        for (key, node) in tree {
            let Some(value) = raw.get(key) else {
                continue;
            };
            let len = prefix.len();
            if !prefix.is_empty() {
                prefix.push('.');
            }
            prefix.push_str(key);
            match (node, value) {
                (
                    Tree::Object {
                        entries: children, ..
                    },
                    Value::Object(members),
                ) if !children.is_empty() => {
                    self.collect_entries(children, members, prefix, entries);
                }
                _ => entries.push(SettingEntry {
                    key: prefix.clone(),
                    value,
                    sources: self.named(&node.sources()),
                }),
            }
            prefix.truncate(len);
        }
    }

    /// The layers that were read, lowest precedence first (missing and skipped files are
    /// not among them).
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// The value `key` (dotted) would have from only the layers `keep` accepts, with the
    /// layer that would supply it: the highest such layer that sets it. For a scalar this is
    /// the value the merge would give without the other layers; `value_without(key, |source|
    /// !source.is_project_level())` is what the user's own settings and flags say.
    pub fn value_without(
        &self,
        key: &str,
        keep: impl Fn(&Source) -> bool,
    ) -> Option<(&Source, &Value)> {
        self.sources
            .iter()
            .zip(&self.layers)
            .rev()
            .filter(|(source, _)| keep(source))
            .find_map(|(source, layer)| {
                merge::resolve(layer, key).map(|(_, value)| (source, value))
            })
    }

    /// What the load skipped (broken legacy files); the caller shows these.
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }

    /// Applies a value over every file, as the last layer: `--model opus` is
    /// `apply_override("model", json!("opus"), "--model")`. The key is dotted; the value is
    /// merged like a layer of its own, so an override of `permissions.allow` adds rules.
    /// `label` names the flag or variable in provenance answers and errors.
    ///
    /// The value is checked first; on error nothing changes.
    pub fn apply_override(
        &mut self,
        key: &str,
        value: Value,
        label: impl Into<String>,
    ) -> Result<(), ConfigError> {
        let label = label.into();
        let parts: Vec<&str> = key.split('.').collect();
        let Some((first, rest)) = parts.split_first() else {
            return Err(ConfigError::InvalidOverrideKey {
                label,
                key: key.to_owned(),
            });
        };
        if parts.iter().any(|part| part.is_empty()) {
            return Err(ConfigError::InvalidOverrideKey {
                label,
                key: key.to_owned(),
            });
        }
        let nested = rest.iter().rev().fold(value, |inner, part| {
            let mut member = Map::new();
            member.insert((*part).to_owned(), inner);
            Value::Object(member)
        });
        let mut layer = Map::new();
        layer.insert((*first).to_owned(), nested);

        let origin = Source::Override(label);
        if let Err(problem) = check_known_keys(&layer) {
            return Err(ConfigError::Invalid { origin, problem });
        }
        let mut tree = self.tree.clone();
        merge::merge_layer(&mut tree, layer.clone(), self.sources.len());
        let previous = std::mem::replace(&mut self.tree, tree);
        self.sources.push(origin);
        self.layers.push(layer);
        if let Err(error) = self.refresh() {
            self.tree = previous;
            self.sources.pop();
            self.layers.pop();
            self.raw = merge::render(&self.tree);
            return Err(error);
        }
        Ok(())
    }

    fn named(&self, ids: &[SourceId]) -> Vec<&Source> {
        ids.iter().filter_map(|id| self.sources.get(*id)).collect()
    }
}
