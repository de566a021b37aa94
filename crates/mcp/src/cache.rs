//! The manifest cache: each server's tool list from its last good connection, so that the
//! first request of a run can offer a slow server's tools before it has started.
//!
//! One file per server under `~/.cairn/mcp-cache/` (a 0700 directory of 0600 files), named by
//! a hash of the server's name and configuration: a changed command or argument is another
//! server, whose old list is never offered.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::ServerConfig;

/// Where the manifests live.
#[derive(Debug, Clone)]
pub struct ManifestCache {
    dir: PathBuf,
}

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    server: String,
    /// The tools as the server listed them (`tools/list` items).
    tools: Vec<Value>,
}

impl ManifestCache {
    /// The cache under `cairn_home` (`~/.cairn`).
    pub fn new(cairn_home: &Path) -> Self {
        ManifestCache {
            dir: cairn_home.join("mcp-cache"),
        }
    }

    /// The key of a server: a hash of its name and its expanded configuration.
    pub fn key(name: &str, config: &ServerConfig) -> String {
        let mut hasher = Sha256::new();
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update(serde_json::to_vec(config).unwrap_or_default());
        hasher
            .finalize()
            .iter()
            .take(16)
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }

    /// The cairn home the cache lives in (`~/.cairn`), where the servers' tokens live too.
    pub(crate) fn cairn_home(&self) -> &Path {
        self.dir.parent().unwrap_or(&self.dir)
    }

    fn file(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The tools the server listed last time, if it ever connected with this configuration.
    pub fn load(&self, key: &str) -> Option<Vec<Value>> {
        let text = std::fs::read_to_string(self.file(key)).ok()?;
        serde_json::from_str::<Manifest>(&text)
            .ok()
            .map(|manifest| manifest.tools)
    }

    /// Keeps the server's tool list for the next run. Replaced whole (a temp file renamed
    /// over it), so a reader never sees half of one.
    pub fn store(&self, key: &str, server: &str, tools: &[Value]) -> std::io::Result<()> {
        let manifest = Manifest {
            server: server.to_string(),
            tools: tools.to_vec(),
        };
        let bytes = serde_json::to_vec(&manifest).map_err(std::io::Error::other)?;
        crate::private_write::replace_whole(&self.file(key), &bytes)
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn stdio(command: &str) -> ServerConfig {
        serde_json::from_value(json!({"type": "stdio", "command": command})).unwrap()
    }

    #[test]
    fn a_manifest_comes_back_for_the_same_configuration_only() {
        let home = tempfile::tempdir().unwrap();
        let cache = ManifestCache::new(home.path());
        let key = ManifestCache::key("s", &stdio("a"));
        assert_eq!(cache.load(&key), None);
        let tools = vec![json!({"name": "echo", "inputSchema": {"type": "object"}})];
        cache.store(&key, "s", &tools).unwrap();
        assert_eq!(cache.load(&key), Some(tools));
        assert_ne!(key, ManifestCache::key("s", &stdio("b")));
        assert_ne!(key, ManifestCache::key("t", &stdio("a")));
    }

    #[cfg(unix)]
    #[test]
    fn the_cache_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let cache = ManifestCache::new(home.path());
        cache.store("k", "s", &[]).unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&home.path().join("mcp-cache")), 0o700);
        assert_eq!(mode(&home.path().join("mcp-cache/k.json")), 0o600);
    }
}
