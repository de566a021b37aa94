//! What the tests that run one scenario on both dialects share: which API the scripted
//! server speaks, how `cairn` is pointed at it, and how each dialect sends tool results back.

#![allow(dead_code, reason = "each test file uses its own part")]

use std::process::Command;

use cairn_test_support::{RecordedRequest, ScriptedBlock};
use serde_json::{Value, json};

use crate::support::Harness;

/// Which API a scenario's server speaks, and how cairn is pointed at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// The default provider: `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`.
    Anthropic,
    /// `--model openai/gpt-4o` with `OPENAI_API_KEY` and `OPENAI_BASE_URL`, and no
    /// Anthropic variable set.
    OpenAi,
}

pub const BOTH: [Dialect; 2] = [Dialect::Anthropic, Dialect::OpenAi];

/// Every Anthropic variable a run could read; an OpenAI-dialect run has none of them.
pub const ANTHROPIC_VARIABLES: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
];

/// Removes every Anthropic variable from `command`.
pub fn without_anthropic(command: &mut Command) -> &mut Command {
    for name in ANTHROPIC_VARIABLES {
        command.env_remove(name);
    }
    command
}

impl Dialect {
    /// `cairn -p …` in `h`, pointed at its server in this dialect.
    pub fn command(self, h: &Harness) -> Command {
        let mut command = h.command();
        if self == Dialect::OpenAi {
            without_anthropic(&mut command)
                .env("OPENAI_API_KEY", "sk-openai-test")
                .env("OPENAI_BASE_URL", format!("{}/v1", h.server.url()))
                .args(["--model", "openai/gpt-4o"]);
        }
        command
    }

    pub fn path(self) -> &'static str {
        match self {
            Dialect::Anthropic => "/v1/messages",
            Dialect::OpenAi => "/v1/chat/completions",
        }
    }

    /// The tool results request `request` carries, as (call id, result text, is error).
    pub fn tool_results(self, request: &RecordedRequest) -> Vec<(String, String, bool)> {
        let messages = request.body["messages"].as_array().unwrap();
        match self {
            Dialect::Anthropic => messages
                .iter()
                .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
                .filter(|block| block["type"] == "tool_result")
                .map(|block| {
                    let text = block["content"]
                        .as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| block["content"].to_string());
                    (
                        block["tool_use_id"].as_str().unwrap().to_owned(),
                        text,
                        block["is_error"] == json!(true),
                    )
                })
                .collect(),
            Dialect::OpenAi => messages
                .iter()
                .filter(|message| message["role"] == "tool")
                .map(|message| {
                    let text = message["content"].as_str().unwrap().to_owned();
                    let error = text.starts_with("Error");
                    (
                        message["tool_call_id"].as_str().unwrap().to_owned(),
                        text,
                        error,
                    )
                })
                .collect(),
        }
    }
}

/// A tool call block of a scripted reply.
pub fn tool_use(id: &str, name: &str, input: Value) -> ScriptedBlock {
    ScriptedBlock::ToolUse {
        id: id.into(),
        name: name.into(),
        input,
    }
}

/// Runs `command` to its end: its exit code, standard output and standard error.
pub fn run(command: &mut Command) -> (Option<i32>, String, String) {
    let output = command.output().unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}
