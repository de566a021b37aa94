//! What every test of the `cairn` binary needs: the scripted model server, a temp HOME and
//! working directory, and a command pointed at them.

#![allow(dead_code, reason = "each test file uses its own part")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use cairn_test_support::ScriptedServer;

pub mod faces;
pub mod terminal;

/// How long a test waits for something the binary should do.
pub const WAIT: Duration = Duration::from_secs(20);

/// A `cairn` command in `work`, with `home` as HOME (and `home/.cairn` as CAIRN_HOME),
/// talking to `server`, with no standard input and none of the caller's credentials.
pub fn cairn(server: &ScriptedServer, home: &Path, work: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command
        .current_dir(work)
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("ANTHROPIC_MODEL")
        .env_remove("CAIRN_MAX_RETRIES")
        .env_remove("DISABLE_PROMPT_CACHING")
        .env("ANTHROPIC_API_KEY", "sk-test-key")
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("HOME", home)
        .env("CAIRN_HOME", home.join(".cairn"))
        .stdin(Stdio::null());
    command
}

/// A server, a HOME and a working directory, for one test.
pub struct Harness {
    pub server: ScriptedServer,
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
}

impl Harness {
    pub fn new() -> Self {
        Harness {
            server: ScriptedServer::start(),
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        }
    }

    pub fn command(&self) -> Command {
        cairn(&self.server, self.home.path(), self.work.path())
    }

    pub fn cairn_home(&self) -> PathBuf {
        self.home.path().join(".cairn")
    }

    /// A path in the working directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.work.path().join(name)
    }

    /// The session file of this HOME's first project with one.
    pub fn transcript(&self) -> PathBuf {
        std::fs::read_dir(self.cairn_home().join("projects"))
            .unwrap()
            .flat_map(|project| std::fs::read_dir(project.unwrap().path()).unwrap())
            .map(|entry| entry.unwrap().path())
            .find(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
            .unwrap()
    }

    /// Trusts `folder` (and the folders under it) in this HOME's trust file, as answering yes
    /// to cairn's question would: the interactive UI then asks nothing there.
    pub fn trust_folder(&self, folder: &Path) {
        let (mut folders, warning) =
            cairn_config::trust::TrustedFolders::load(&self.cairn_home(), self.home.path());
        assert_eq!(warning, None);
        folders.trust(folder).unwrap();
    }

    /// Writes the user's own `~/.claude/settings.json` (in this HOME). What a project file may
    /// not decide in `-p` — `sandbox.enabled: false`, `bypassPermissions`, a provider's base
    /// URL or key, `apiKeyHelper` — holds from here.
    pub fn user_settings(&self, json: serde_json::Value) {
        let dir = self.home.path().join(".claude");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("settings.json"), json.to_string()).unwrap();
    }

    /// Writes the project's `.claude/settings.json`.
    pub fn settings(&self, json: serde_json::Value) {
        let dir = self.work.path().join(".claude");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("settings.json"), json.to_string()).unwrap();
    }
}

/// The tool result the model received in request `n` (0-based): whether it is an error, and
/// its text.
pub fn tool_result(requests: &[cairn_test_support::RecordedRequest], n: usize) -> (bool, String) {
    let messages = requests[n].body["messages"]
        .as_array()
        .expect("the request has messages");
    let result = &messages.last().expect("a last message")["content"][0];
    assert_eq!(result["type"], "tool_result", "{result}");
    let text = match &result["content"] {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    (result["is_error"] == true, text)
}

/// The texts of the first user message of a request.
pub fn user_texts(request: &serde_json::Value) -> Vec<String> {
    request["messages"][0]["content"]
        .as_array()
        .expect("the first message has content blocks")
        .iter()
        .filter_map(|block| block["text"].as_str().map(str::to_string))
        .collect()
}

/// `value` (a request body or a part of one) without its prompt-cache marks, which say where
/// a request's cached prefix ends, not what it says.
pub fn without_cache_marks(mut value: serde_json::Value) -> serde_json::Value {
    fn strip(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(object) => {
                object.remove("cache_control");
                object.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}
