//! The scripted sessions: their file format, and the messages each event becomes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use cairn_protocol::{ContentBlock, Message, Role};
use serde_json::{Value, json};

/// One line of a session file.
#[derive(Debug, Clone)]
pub enum Event {
    /// The user's message of about `tokens` tokens, `seconds` after the last answer.
    Prompt {
        tokens: u64,
        seconds: u64,
        words: String,
    },
    /// A tool call and its result of about `tokens` tokens; the next request goes out
    /// `seconds` later.
    Tool {
        kind: Tool,
        tokens: u64,
        seconds: u64,
        target: String,
    },
    /// The model's answer, ending the turn.
    Answer { tokens: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Read,
    Grep,
    Edit,
    Bash,
    Todo,
}

/// A session: its window and its events.
#[derive(Debug, Clone)]
pub struct Script {
    pub name: String,
    pub window: u64,
    pub events: Vec<Event>,
}

impl Script {
    /// Reads `path`; a line that does not parse is an error naming the file and the line.
    pub fn load(path: &Path) -> Result<Script, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| format!("{}: cannot read the session: {err}", path.display()))?;
        let name = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .unwrap_or("session")
            .to_string();
        let mut window = None;
        let mut events = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let at = || format!("{}:{}", path.display(), index + 1);
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.splitn(4, ' ');
            let kind = words.next().unwrap_or_default();
            let number = |word: Option<&str>, what: &str| {
                word.and_then(|word| word.parse::<u64>().ok())
                    .ok_or_else(|| format!("{}: expected {what} in `{line}`", at()))
            };
            let tokens = number(words.next(), "a number of tokens")?;
            let event = match kind {
                "window" => {
                    window = Some(tokens);
                    continue;
                }
                "answer" => Event::Answer { tokens },
                "prompt" => Event::Prompt {
                    tokens,
                    seconds: number(words.next(), "the seconds before the request")?,
                    words: words.next().unwrap_or_default().to_string(),
                },
                "read" | "grep" | "edit" | "bash" | "todo" => Event::Tool {
                    kind: match kind {
                        "read" => Tool::Read,
                        "grep" => Tool::Grep,
                        "edit" => Tool::Edit,
                        "bash" => Tool::Bash,
                        _ => Tool::Todo,
                    },
                    tokens,
                    seconds: number(words.next(), "the seconds before the request")?,
                    target: words.next().unwrap_or_default().to_string(),
                },
                other => {
                    return Err(format!(
                        "{}: unknown event `{other}` (expected window, prompt, read, grep, edit, \
                         bash, todo or answer)",
                        at()
                    ));
                }
            };
            events.push(event);
        }
        let window = window.ok_or_else(|| format!("{}: no `window` line", path.display()))?;
        Ok(Script {
            name,
            window,
            events,
        })
    }
}

/// Makes each event's messages, deterministically: the same script gives the same bytes.
pub struct Writer {
    project: PathBuf,
    next_id: usize,
    /// The last todo list written, as its items' text.
    pub todos: Vec<String>,
}

impl Writer {
    pub fn new(project: &Path) -> Self {
        Writer {
            project: project.to_path_buf(),
            next_id: 0,
            todos: Vec::new(),
        }
    }

    /// About `tokens` tokens of text (four characters a token), distinct for each `seed`.
    fn text(seed: &str, tokens: u64) -> String {
        let mut text = String::new();
        let mut line = 0;
        while (text.len() as u64) < tokens * 4 {
            line += 1;
            let _ = writeln!(
                text,
                "{line:>5}  {seed}: let value_{line} = compute(input, {line});"
            );
        }
        text.truncate(tokens as usize * 4);
        text
    }

    pub fn prompt(&self, turn: usize, tokens: u64, words: &str) -> Message {
        let mut text = format!("{words} (turn {turn}) ");
        while (text.len() as u64) < tokens * 4 {
            text.push_str("please keep the existing behaviour and the tests passing; ");
        }
        Message::user_text(text)
    }

    pub fn answer(&self, turn: usize, tokens: u64) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::text(Self::text(
                &format!("answer {turn}"),
                tokens,
            ))],
        }
    }

    /// The model's call and the message carrying its result. A file read or edited is also
    /// written to disk, where a compaction re-reads it.
    pub fn tool(&mut self, kind: Tool, tokens: u64, target: &str) -> (Message, Message) {
        self.next_id += 1;
        let id = format!("toolu_{:05}", self.next_id);
        let path = self.project.join(target);
        let (name, input, output): (&str, Value, String) = match kind {
            Tool::Read => {
                let content = Self::text(target, tokens);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &content).unwrap();
                (
                    "Read",
                    json!({"file_path": path.display().to_string()}),
                    content,
                )
            }
            Tool::Edit => {
                let mut content = Self::text(target, 3_000);
                let _ = writeln!(content, "// edited by call {id}");
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &content).unwrap();
                (
                    "Edit",
                    json!({
                        "file_path": path.display().to_string(),
                        "old_string": format!("compute(input, {})", self.next_id),
                        "new_string": format!("compute_checked(input, {})?", self.next_id),
                    }),
                    format!(
                        "The file {} has been updated. Here's the result of running `cat -n` on \
                         a snippet of the edited file:\n{}",
                        path.display(),
                        Self::text(&id, tokens)
                    ),
                )
            }
            Tool::Grep => (
                "Grep",
                json!({"pattern": target, "path": self.project.display().to_string()}),
                Self::text(&format!("src/hit.rs {id}"), tokens),
            ),
            Tool::Bash => (
                "Bash",
                json!({"command": target}),
                Self::text(&format!("test {id} ... ok"), tokens),
            ),
            Tool::Todo => {
                self.todos = vec![
                    format!("Finish change {}", self.next_id),
                    format!("Run the tests after change {}", self.next_id),
                ];
                (
                    "TodoWrite",
                    json!({"todos": [
                        {"content": self.todos[0], "status": "in_progress", "activeForm": "Working"},
                        {"content": self.todos[1], "status": "pending", "activeForm": "Testing"}
                    ]}),
                    "Todos have been modified successfully.".to_string(),
                )
            }
        };
        let call = Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::text(format!("Next, {name} {target}.")),
                ContentBlock::ToolUse {
                    id: id.clone(),
                    name: name.into(),
                    input,
                },
            ],
        };
        let result = Message {
            role: Role::User,
            content: vec![ContentBlock::tool_result(id, output, false)],
        };
        (call, result)
    }
}
