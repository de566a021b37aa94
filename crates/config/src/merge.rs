//! The merge of layers, remembering which layer supplied each value.
//!
//! Layers are merged one at a time, lowest precedence first, into a [`Tree`] whose nodes
//! carry their sources; the raw JSON view is rendered from it. A source is a [`SourceId`]:
//! its index in the load's list of sources, so a higher id is a higher precedence.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};

pub(crate) type SourceId = usize;

/// How a list merges when more than one layer sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListMerge {
    /// Permission rules and directories: lower levels first, each value once.
    Union,
    /// Hook entries: lower levels first, every entry kept.
    Concat,
}

/// Which lists accumulate instead of being replaced.
fn list_merge(path: &[String]) -> Option<ListMerge> {
    match path {
        [first, second] if first == "permissions" => match second.as_str() {
            "allow" | "ask" | "deny" | "additionalDirectories" => Some(ListMerge::Union),
            _ => None,
        },
        [first, _event] if first == "hooks" => Some(ListMerge::Concat),
        _ => None,
    }
}

/// A merged value with its provenance.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tree {
    /// An object, merged key by key; `defined_by` lists every layer that had it.
    Object {
        defined_by: Vec<SourceId>,
        entries: BTreeMap<String, Tree>,
    },
    /// An accumulated list; each item remembers the layer that first brought it.
    List {
        defined_by: Vec<SourceId>,
        items: Vec<(Value, SourceId)>,
    },
    /// A scalar or a replaced array, taken whole from one layer.
    Leaf { value: Value, source: SourceId },
}

/// One step of a resolved key: an object member or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    Key(String),
    Index(usize),
}

/// Merges `layer` (from `source`) over `into`.
pub(crate) fn merge_layer(
    into: &mut BTreeMap<String, Tree>,
    layer: Map<String, Value>,
    source: SourceId,
) {
    merge_object(into, layer, source, &mut Vec::new());
}

fn merge_object(
    into: &mut BTreeMap<String, Tree>,
    layer: Map<String, Value>,
    source: SourceId,
    path: &mut Vec<String>,
) {
    for (key, value) in layer {
        path.push(key.clone());
        let mode = list_merge(path);
        let merged = match (into.remove(&key), value) {
            (
                Some(Tree::Object {
                    mut defined_by,
                    mut entries,
                }),
                Value::Object(members),
            ) => {
                defined_by.push(source);
                merge_object(&mut entries, members, source, path);
                Tree::Object {
                    defined_by,
                    entries,
                }
            }
            (
                Some(Tree::List {
                    mut defined_by,
                    mut items,
                }),
                Value::Array(new_items),
            ) => {
                defined_by.push(source);
                let mode = mode.unwrap_or(ListMerge::Concat);
                append_items(&mut items, new_items, source, mode);
                Tree::List { defined_by, items }
            }
            (_, value) => Tree::from_value(value, source, path),
        };
        into.insert(key, merged);
        path.pop();
    }
}

fn append_items(
    items: &mut Vec<(Value, SourceId)>,
    new_items: Vec<Value>,
    source: SourceId,
    mode: ListMerge,
) {
    // Seen values by their JSON text: one lookup per item, so that 100,000 rules merge in
    // linear time (comparing each with all before it took seconds).
    let mut seen: HashSet<String> = match mode {
        ListMerge::Union => items.iter().map(|(value, _)| value.to_string()).collect(),
        ListMerge::Concat => HashSet::new(),
    };
    for item in new_items {
        let duplicate = match mode {
            ListMerge::Union => !seen.insert(item.to_string()),
            ListMerge::Concat => false,
        };
        if !duplicate {
            items.push((item, source));
        }
    }
}

impl Tree {
    /// A value as one layer has it, before anything is merged over it.
    fn from_value(value: Value, source: SourceId, path: &mut Vec<String>) -> Tree {
        match value {
            Value::Object(members) => {
                let mut entries = BTreeMap::new();
                merge_object(&mut entries, members, source, path);
                Tree::Object {
                    defined_by: vec![source],
                    entries,
                }
            }
            Value::Array(new_items) => match list_merge(path) {
                Some(mode) => {
                    let mut items = Vec::new();
                    append_items(&mut items, new_items, source, mode);
                    Tree::List {
                        defined_by: vec![source],
                        items,
                    }
                }
                None => Tree::Leaf {
                    value: Value::Array(new_items),
                    source,
                },
            },
            value => Tree::Leaf { value, source },
        }
    }

    /// The merged JSON.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Tree::Object { entries, .. } => Value::Object(render(entries)),
            Tree::List { items, .. } => {
                Value::Array(items.iter().map(|(value, _)| value.clone()).collect())
            }
            Tree::Leaf { value, .. } => value.clone(),
        }
    }

    /// Every layer that contributed to this value, lowest precedence first.
    pub(crate) fn sources(&self) -> Vec<SourceId> {
        match self {
            Tree::Object { defined_by, .. } | Tree::List { defined_by, .. } => defined_by.clone(),
            Tree::Leaf { source, .. } => vec![*source],
        }
    }

    /// The layers behind the value at `steps` below this node.
    fn sources_at(&self, steps: &[Step]) -> Option<Vec<SourceId>> {
        let Some((step, rest)) = steps.split_first() else {
            return Some(self.sources());
        };
        match (self, step) {
            (Tree::Object { entries, .. }, Step::Key(key)) => entries.get(key)?.sources_at(rest),
            (Tree::List { items, .. }, Step::Index(index)) => {
                items.get(*index).map(|(_, source)| vec![*source])
            }
            (Tree::Leaf { source, .. }, _) => Some(vec![*source]),
            (Tree::Object { .. }, Step::Index(_)) | (Tree::List { .. }, Step::Key(_)) => None,
        }
    }
}

/// The merged JSON of a whole tree.
pub(crate) fn render(entries: &BTreeMap<String, Tree>) -> Map<String, Value> {
    entries
        .iter()
        .map(|(key, tree)| (key.clone(), tree.to_value()))
        .collect()
}

/// The layers behind the value at `steps` (which must start with a key).
pub(crate) fn sources_at(
    entries: &BTreeMap<String, Tree>,
    steps: &[Step],
) -> Option<Vec<SourceId>> {
    match steps.split_first()? {
        (Step::Key(key), rest) => entries.get(key)?.sources_at(rest),
        (Step::Index(_), _) => None,
    }
}

/// Resolves a dotted key (`permissions.defaultMode`, `hooks.PreToolUse.0.matcher`) against
/// merged JSON. A numeric part indexes an array. A member whose own name contains dots
/// (`env.` plus `"A.B"`) is found too: the shortest name that leads to a value wins.
pub(crate) fn resolve<'v>(
    root: &'v Map<String, Value>,
    key: &str,
) -> Option<(Vec<Step>, &'v Value)> {
    let parts: Vec<&str> = key.split('.').collect();
    let mut steps = Vec::new();
    let value = resolve_in_object(root, &parts, &mut steps)?;
    Some((steps, value))
}

fn resolve_in_object<'v>(
    members: &'v Map<String, Value>,
    parts: &[&str],
    steps: &mut Vec<Step>,
) -> Option<&'v Value> {
    for take in 1..=parts.len() {
        let name = parts[..take].join(".");
        if let Some(child) = members.get(&name) {
            steps.push(Step::Key(name));
            if let Some(found) = resolve_in(child, &parts[take..], steps) {
                return Some(found);
            }
            steps.pop();
        }
    }
    None
}

fn resolve_in<'v>(value: &'v Value, parts: &[&str], steps: &mut Vec<Step>) -> Option<&'v Value> {
    let Some(first) = parts.first() else {
        return Some(value);
    };
    match value {
        Value::Object(members) => resolve_in_object(members, parts, steps),
        Value::Array(items) => {
            let index: usize = first.parse().ok()?;
            steps.push(Step::Index(index));
            let found = resolve_in(items.get(index)?, &parts[1..], steps);
            if found.is_none() {
                steps.pop();
            }
            found
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(members) => members,
            other => panic!("not an object: {other}"),
        }
    }

    fn merged(layers: Vec<Value>) -> BTreeMap<String, Tree> {
        let mut tree = BTreeMap::new();
        for (source, layer) in layers.into_iter().enumerate() {
            merge_layer(&mut tree, object(layer), source);
        }
        tree
    }

    #[test]
    fn objects_merge_scalars_and_arrays_are_replaced_rules_accumulate() {
        let tree = merged(vec![
            json!({"a": {"x": 1, "y": [1, 2]}, "permissions": {"allow": ["A", "B"]}}),
            json!({"a": {"y": [3], "z": true}, "permissions": {"allow": ["B", "C"]}}),
        ]);
        assert_eq!(
            Value::Object(render(&tree)),
            json!({
                "a": {"x": 1, "y": [3], "z": true},
                "permissions": {"allow": ["A", "B", "C"]}
            })
        );
        let rules = &tree["permissions"];
        assert_eq!(
            rules.sources_at(&[Step::Key("allow".into())]),
            Some(vec![0, 1])
        );
        assert_eq!(
            rules.sources_at(&[Step::Key("allow".into()), Step::Index(2)]),
            Some(vec![1])
        );
    }

    #[test]
    fn a_higher_scalar_replaces_an_object_and_back() {
        let tree = merged(vec![
            json!({"a": {"x": 1}}),
            json!({"a": "flat"}),
            json!({"a": {"y": 2}}),
        ]);
        assert_eq!(Value::Object(render(&tree)), json!({"a": {"y": 2}}));
        assert_eq!(sources_at(&tree, &[Step::Key("a".into())]), Some(vec![2]));
    }

    #[test]
    fn dotted_member_names_resolve() {
        let root = object(json!({"env": {"A.B": "1"}, "list": [{"m": "x"}]}));
        assert_eq!(
            resolve(&root, "env.A.B"),
            Some((
                vec![Step::Key("env".into()), Step::Key("A.B".into())],
                &json!("1")
            ))
        );
        assert_eq!(
            resolve(&root, "list.0.m"),
            Some((
                vec![
                    Step::Key("list".into()),
                    Step::Index(0),
                    Step::Key("m".into())
                ],
                &json!("x")
            ))
        );
        assert_eq!(resolve(&root, "list.1"), None);
        assert_eq!(resolve(&root, "env.A"), None);
    }
}
