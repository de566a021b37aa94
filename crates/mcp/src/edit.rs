//! `cairn mcp add|add-json|remove`: servers written where their scope keeps them. The project
//! scope is the project's `.mcp.json` (shared through the repository, as Claude Code writes
//! it); the user and local scopes are cairn's own `~/.cairn/mcp.json` (top level, and under
//! `projects[<path>]`), never Claude Code's `~/.claude.json`, which cairn only reads.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::config::{ConfigError, Scope};

/// Where a scope's servers are written.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    /// The scope to write: project, user or local ([`Scope::Flag`] has no file).
    pub scope: Scope,
    /// cairn's own state (`~/.cairn`), for the user and local scopes.
    pub cairn_home: &'a Path,
    /// The project, for its `.mcp.json` and as the local scope's key.
    pub project: &'a Path,
}

/// Why a server could not be written or removed.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// The file, or the server given, does not read.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The file cannot be written.
    #[error("cannot write {}: {error}", file.display())]
    Unwritable {
        /// The file that could not be written (`.mcp.json` or `~/.cairn/mcp.json`).
        file: PathBuf,
        /// Kept in the message, not as a source, so a chain prints it once.
        error: std::io::Error,
    },
    /// `remove` of a server the scope does not have.
    #[error("{} holds no MCP server named \"{name}\"", file.display())]
    NoSuchServer {
        /// The scope's file.
        file: PathBuf,
        /// The name given to `remove`.
        name: String,
    },
    /// The command line's scope has no file.
    #[error(
        "servers from the command line are not written anywhere; choose --scope local, project or user"
    )]
    NotWritable,
}

impl Target<'_> {
    /// The file this scope writes.
    pub fn file(&self) -> Result<PathBuf, EditError> {
        match self.scope {
            Scope::Project => Ok(self.project.join(".mcp.json")),
            Scope::User | Scope::Local => Ok(crate::config::own_servers_file(self.cairn_home)),
            Scope::Flag => Err(EditError::NotWritable),
        }
    }

    /// Adds (or replaces) `name`, after checking that `server` reads as a server.
    pub fn add(&self, name: &str, server: Value) -> Result<PathBuf, EditError> {
        let file = self.file()?;
        let mut check = Map::new();
        check.insert(name.to_string(), server.clone());
        let mut wrapper = Map::new();
        wrapper.insert("mcpServers".into(), Value::Object(check));
        crate::config::check_servers(&Value::Object(wrapper), &file.display().to_string())?;
        let mut document = read_object(&file)?;
        with_servers(&mut document, self.scope, self.project, |servers| {
            servers.insert(name.to_string(), server)
        });
        write_object(&file, &document, self.scope)?;
        Ok(file)
    }

    /// Removes `name`; an error when this scope has no such server.
    pub fn remove(&self, name: &str) -> Result<PathBuf, EditError> {
        let file = self.file()?;
        let mut document = read_object(&file)?;
        let removed = with_servers(&mut document, self.scope, self.project, |servers| {
            servers.remove(name)
        });
        if removed.flatten().is_none() {
            return Err(EditError::NoSuchServer {
                file,
                name: name.to_string(),
            });
        }
        write_object(&file, &document, self.scope)?;
        Ok(file)
    }
}

/// Runs `change` on the `mcpServers` object this scope edits, made if missing (a non-object
/// in its way is replaced: the file is cairn's, or a `.mcp.json` whose servers it is asked to
/// change).
fn with_servers<R>(
    document: &mut Map<String, Value>,
    scope: Scope,
    project: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> R,
) -> Option<R> {
    match scope {
        Scope::Local => with_object(document, "projects", |projects| {
            with_object(projects, &project.display().to_string(), |holder| {
                with_object(holder, "mcpServers", change)
            })
        })
        .flatten()
        .flatten(),
        Scope::User | Scope::Project | Scope::Flag => with_object(document, "mcpServers", change),
    }
}

fn with_object<R>(
    map: &mut Map<String, Value>,
    key: &str,
    change: impl FnOnce(&mut Map<String, Value>) -> R,
) -> Option<R> {
    let entry = map
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    entry.as_object_mut().map(change)
}

pub(crate) fn read_object(file: &Path) -> Result<Map<String, Value>, EditError> {
    match std::fs::read_to_string(file) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(object)) => Ok(object),
            Ok(_) => Err(EditError::Config(ConfigError::Invalid {
                origin: file.display().to_string(),
                field: "(top level)".into(),
                message: "expected a JSON object".into(),
            })),
            Err(err) => Err(EditError::Config(ConfigError::Invalid {
                origin: file.display().to_string(),
                field: format!("line {}, column {}", err.line(), err.column()),
                message: err.to_string(),
            })),
        },
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(error) => Err(EditError::Config(ConfigError::Unreadable {
            file: file.to_path_buf(),
            error,
        })),
    }
}

/// Replaces the file whole (a temp file renamed over it); cairn's own file is private.
pub(crate) fn write_object(
    file: &Path,
    document: &Map<String, Value>,
    scope: Scope,
) -> Result<(), EditError> {
    let unwritable = |error| EditError::Unwritable {
        file: file.to_path_buf(),
        error,
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut options = match scope {
        Scope::Project => std::fs::OpenOptions::new(),
        Scope::User | Scope::Local | Scope::Flag => {
            cairn_protocol::private_dir_builder()
                .create(dir)
                .map_err(unwritable)?;
            cairn_protocol::private_file_options()
        }
    };
    let temp = dir.join(format!(".mcp.json.{}.tmp", std::process::id()));
    let mut text = serde_json::to_string_pretty(document).unwrap_or_default();
    text.push('\n');
    options
        .write(true)
        .create(true)
        .truncate(true)
        .open(&temp)
        .and_then(|mut out| out.write_all(text.as_bytes()))
        .and_then(|()| std::fs::rename(&temp, file))
        .map_err(unwritable)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::config::{ConfigSources, ProjectApproval, load};

    #[test]
    fn each_scope_writes_its_own_file_and_the_loader_reads_it_back() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let cairn_home = home.path().join(".cairn");
        for (scope, name) in [
            (Scope::User, "u"),
            (Scope::Local, "l"),
            (Scope::Project, "p"),
        ] {
            let target = Target {
                scope,
                cairn_home: &cairn_home,
                project: project.path(),
            };
            target
                .add(name, json!({"command": format!("run-{name}")}))
                .unwrap();
        }
        let configured = load(&ConfigSources {
            home: home.path(),
            cairn_home: &cairn_home,
            project: project.path(),
            flags: &[],
            strict: false,
            approval: ProjectApproval {
                enable_all: true,
                ..ProjectApproval::default()
            },
        })
        .unwrap();
        let got: Vec<(&str, Scope)> = configured
            .servers
            .iter()
            .map(|server| (server.name.as_str(), server.scope))
            .collect();
        assert_eq!(
            got,
            [
                ("u", Scope::User),
                ("p", Scope::Project),
                ("l", Scope::Local)
            ]
        );
        // Claude Code's own file is never written.
        assert!(!home.path().join(".claude.json").exists());

        let local = Target {
            scope: Scope::Local,
            cairn_home: &cairn_home,
            project: project.path(),
        };
        local.remove("l").unwrap();
        assert!(matches!(
            local.remove("l"),
            Err(EditError::NoSuchServer { .. })
        ));
    }

    #[test]
    fn a_server_that_does_not_read_is_refused_naming_the_field() {
        let home = tempfile::tempdir().unwrap();
        let target = Target {
            scope: Scope::User,
            cairn_home: home.path(),
            project: home.path(),
        };
        let error = target
            .add("bad", json!({"type": "http", "url": 5}))
            .unwrap_err()
            .to_string();
        assert!(
            error.ends_with(
                "mcp.json: mcpServers.bad.url: invalid type: integer `5`, expected a string"
            ),
            "{error}"
        );
        assert!(!home.path().join("mcp.json").exists());
    }
}
