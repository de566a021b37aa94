//! Which servers the user turned off (`/mcp disable`, the SDK's `mcp_toggle`), per project.
//!
//! Claude Code keeps them in `~/.claude.json` as `projects[<path>].disabledMcpServers`; cairn
//! reads that but never writes it, so a toggle made in cairn goes to cairn's own
//! `~/.cairn/mcp.json` (the file of its local scope), under the same key, with
//! `enabledMcpServers` beside it for a server Claude Code's file turns off and the user turned
//! back on in cairn. A server is off when either file says so and cairn's does not enable it.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::config::Scope;

/// The key of the servers turned off, as Claude Code names it.
pub const DISABLED_KEY: &str = "disabledMcpServers";
/// The key of the servers turned back on in cairn.
pub const ENABLED_KEY: &str = "enabledMcpServers";

/// The names under `projects[<project>].<key>` of one file's JSON text.
fn names(text: &str, project: &Path, key: &str) -> Vec<String> {
    // `~/.claude.json` can be large: a file that never names the key costs no parse.
    if !text.contains(key) {
        return Vec::new();
    }
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    value
        .get("projects")
        .and_then(|projects| projects.get(project.display().to_string()))
        .and_then(|holder| holder.get(key))
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The servers turned off in `project`: by Claude Code's `~/.claude.json` (in `home`) or
/// cairn's own file (in `cairn_home`), less those cairn's file turned back on. A file that
/// cannot be read turns nothing off.
pub fn disabled_servers(home: &Path, cairn_home: &Path, project: &Path) -> Vec<String> {
    let read = |file: PathBuf| std::fs::read_to_string(file).unwrap_or_default();
    let claude = read(home.join(".claude.json"));
    let own = read(crate::config::own_servers_file(cairn_home));
    let enabled = names(&own, project, ENABLED_KEY);
    let mut disabled = names(&claude, project, DISABLED_KEY);
    for name in names(&own, project, DISABLED_KEY) {
        if !disabled.contains(&name) {
            disabled.push(name);
        }
    }
    disabled.retain(|name| !enabled.contains(name));
    disabled
}

/// Saves that `server` is on or off in `project`, in cairn's own file; returns the file.
pub(crate) fn save(
    cairn_home: &Path,
    project: &Path,
    server: &str,
    enabled: bool,
) -> Result<PathBuf, String> {
    let file = crate::config::own_servers_file(cairn_home);
    let mut document = crate::edit::read_object(&file).map_err(|err| err.to_string())?;
    let projects = object_in(&mut document, "projects");
    let holder = object_in(projects, &project.display().to_string());
    let (add, remove) = match enabled {
        true => (ENABLED_KEY, DISABLED_KEY),
        false => (DISABLED_KEY, ENABLED_KEY),
    };
    let added = array_in(holder, add);
    if !added.iter().any(|name| name == server) {
        added.push(Value::String(server.to_owned()));
    }
    array_in(holder, remove).retain(|name| name != server);
    crate::edit::write_object(&file, &document, Scope::Local).map_err(|err| err.to_string())?;
    Ok(file)
}

/// The array under `key`, made (or replacing a non-array) if need be.
fn array_in<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Vec<Value> {
    let entry = map
        .entry(key.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()));
    if !entry.is_array() {
        *entry = Value::Array(Vec::new());
    }
    match entry {
        Value::Array(names) => names,
        _ => unreachable!("made an array above"),
    }
}

/// The object under `key`, made (or replacing a non-object) if need be.
fn object_in<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let entry = map
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    match entry {
        Value::Object(object) => object,
        _ => unreachable!("made an object above"),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_toggle_is_saved_in_cairns_file_and_wins_over_claude_codes() {
        let home = tempfile::tempdir().unwrap();
        let cairn_home = home.path().join(".cairn");
        let project = Path::new("/work/app");
        std::fs::write(
            home.path().join(".claude.json"),
            json!({"projects": {"/work/app": {"disabledMcpServers": ["claude-off"]}}}).to_string(),
        )
        .unwrap();
        assert_eq!(
            disabled_servers(home.path(), &cairn_home, project),
            vec!["claude-off".to_owned()]
        );
        save(&cairn_home, project, "mine", false).unwrap();
        save(&cairn_home, project, "claude-off", true).unwrap();
        assert_eq!(
            disabled_servers(home.path(), &cairn_home, project),
            vec!["mine".to_owned()]
        );
        // Another project is untouched.
        assert!(disabled_servers(home.path(), &cairn_home, Path::new("/elsewhere")).is_empty());
        save(&cairn_home, project, "mine", true).unwrap();
        assert!(disabled_servers(home.path(), &cairn_home, project).is_empty());
        let saved: Value = serde_json::from_str(
            &std::fs::read_to_string(crate::config::own_servers_file(&cairn_home)).unwrap(),
        )
        .unwrap();
        assert_eq!(
            saved["projects"]["/work/app"],
            json!({"disabledMcpServers": [], "enabledMcpServers": ["claude-off", "mine"]})
        );
    }
}
