//! Recall: a small model reads the user's message and the heads of the memory files, names
//! the files that help, and those files become reminders for the next request.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use cairn_config::Rest;
use cairn_llm::SideModel;
use cairn_protocol::{BoxFuture, Message};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::file::{FileStamp, MemoryHead, MemoryScan, scan_heads};
use super::{Recall, RecallOutcome};
use crate::UnreadFile;
use crate::date::civil_date;
use crate::project_file::read_text_start;

/// The most files one recall may inject.
pub const MAX_SELECTED: usize = 5;

/// The most memory files shown to the recall model, newest first (Claude Code's number).
pub const MAX_CANDIDATES: usize = 200;

/// The most bytes of heads in one recall request (about 16K tokens), newest files first: a
/// recall goes with every message, so a large memory must stay cheap to ask about (and
/// cannot outgrow the small model's window).
pub const MAX_HEADS_BYTES: usize = 64 * 1024;

/// The most bytes of the user's message the recall model sees: enough to judge relevance.
const MAX_MESSAGE_BYTES: usize = 8 * 1024;

/// The most bytes of one recalled file injected; a longer one is cut with a note.
const MAX_MEMORY_BYTES: u64 = 64 * 1024;

/// The recall model's answer: a list of names is short.
const ANSWER_TOKENS: u32 = 512;

const SECONDS_PER_DAY: u64 = 86_400;

const SYSTEM: &str = "You choose which memory files will help an AI coding assistant with the \
user's message. You see each file's name and its first lines. Answer with JSON only, in this \
form: {\"selected_memories\": [\"file.md\"]}. Name at most 5 files, copied exactly as given, \
the most useful first. Choose a file only when it clearly bears on the message (a preference, \
a correction, a fact or a pointer the assistant should know for it); answer \
{\"selected_memories\": []} when none does.";

/// Recall over the memory files of one directory, through a small model.
///
/// [`start`](Recall::start) returns at once: the directory is read, and the model asked,
/// inside the future, off the engine's path to the main request. A file injected in this
/// session is not offered again until it changes (its modification time or size), nor
/// injected twice.
#[derive(Debug, Clone)]
pub struct MemoryRecall {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    directory: PathBuf,
    side: SideModel,
    /// Each injected file's version, by name.
    injected: Mutex<HashMap<String, FileStamp>>,
    /// Skipped files already reported, so a bad file is named once a session.
    reported: Mutex<HashSet<PathBuf>>,
}

impl MemoryRecall {
    /// Recall over the memories in `directory`, asking `side`.
    pub fn new(directory: impl Into<PathBuf>, side: SideModel) -> MemoryRecall {
        MemoryRecall {
            shared: Arc::new(Shared {
                directory: directory.into(),
                side,
                injected: Mutex::new(HashMap::new()),
                reported: Mutex::new(HashSet::new()),
            }),
        }
    }

    /// The memory directory recalled from.
    pub fn directory(&self) -> &Path {
        &self.shared.directory
    }
}

impl Recall for MemoryRecall {
    fn start(&self, message: String) -> BoxFuture<'static, RecallOutcome> {
        let shared = Arc::clone(&self.shared);
        Box::pin(async move { shared.recall(&message).await })
    }

    fn forget_injected(&self) {
        lock(&self.shared.injected).clear();
    }
}

impl Shared {
    async fn recall(&self, message: &str) -> RecallOutcome {
        let mut problems = Vec::new();
        let mut reported = Vec::new();
        let reminders = self.find(message, &mut problems, &mut reported).await;
        // Only now: a recall dropped before its end (the engine drops one that is late) has
        // shown nothing, so its skipped files are still to be named.
        lock(&self.reported).extend(reported);
        RecallOutcome {
            reminders,
            failure: (!problems.is_empty()).then(|| problems.join("; ")),
        }
    }

    /// The reminders for `message`; what went wrong goes to `problems`, and the skipped
    /// files named there to `reported`.
    async fn find(
        &self,
        message: &str,
        problems: &mut Vec<String>,
        reported: &mut Vec<PathBuf>,
    ) -> Vec<String> {
        let directory = self.directory.clone();
        let scan = match tokio::task::spawn_blocking(move || scan_heads(&directory)).await {
            Ok(scan) => scan,
            Err(error) => {
                problems.push(format!("reading the memory directory failed: {error}"));
                return Vec::new();
            }
        };
        let MemoryScan { heads, skipped } = scan;
        {
            let already = lock(&self.reported);
            for unread in skipped {
                if !already.contains(&unread.path) {
                    problems.push(unread.to_string());
                    reported.push(unread.path);
                }
            }
        }
        let every_name: HashSet<String> = heads.iter().map(|h| h.file_name.clone()).collect();
        let candidates = {
            let injected = lock(&self.injected);
            let fresh = heads
                .into_iter()
                .filter(|head| injected.get(&head.file_name) != Some(&head.stamp));
            within_budget(fresh)
        };
        if candidates.is_empty() {
            return Vec::new();
        }
        let request = recall_request(message, &candidates);
        let answer = match self
            .side
            .ask(
                SYSTEM,
                vec![Message::user_text(request)],
                ANSWER_TOKENS,
                &CancellationToken::new(),
            )
            .await
        {
            Ok(answer) => answer,
            Err(error) => {
                problems.push(error.to_string());
                return Vec::new();
            }
        };
        let names = match selected_memories(&answer.text) {
            Ok(names) => names,
            Err(reason) => {
                problems.push(reason);
                return Vec::new();
            }
        };
        let (chosen, unknown) = self.resolve(&names, &candidates, &every_name);
        if !unknown.is_empty() {
            problems.push(format!(
                "the model named files that are not memories (ignored): {}",
                unknown.join(", ")
            ));
        }
        let directory = self.directory.clone();
        let read = tokio::task::spawn_blocking(move || {
            chosen
                .into_iter()
                .map(|head| read_memory(&directory, head))
                .collect::<Vec<_>>()
        })
        .await;
        let read = match read {
            Ok(read) => read,
            Err(error) => {
                problems.push(format!("reading the recalled memories failed: {error}"));
                return Vec::new();
            }
        };
        let mut reminders = Vec::new();
        let mut injected = lock(&self.injected);
        for memory in read {
            match memory {
                Ok(memory) => {
                    if injected.get(&memory.file_name) == Some(&memory.stamp) {
                        continue;
                    }
                    injected.insert(memory.file_name.clone(), memory.stamp);
                    reminders.push(memory.reminder(&self.directory, SystemTime::now()));
                }
                Err(unread) => problems.push(unread.to_string()),
            }
        }
        reminders
    }

    /// The candidates the model named (at most [`MAX_SELECTED`], in its order, each once),
    /// and the names that are no memory file at all. A memory file that was not offered
    /// (injected already, or past the budget) is passed over quietly.
    fn resolve(
        &self,
        names: &[String],
        candidates: &[MemoryHead],
        every_name: &HashSet<String>,
    ) -> (Vec<MemoryHead>, Vec<String>) {
        let mut chosen: Vec<MemoryHead> = Vec::new();
        let mut unknown = Vec::new();
        for name in names {
            let bare = Path::new(name)
                .strip_prefix(&self.directory)
                .ok()
                .and_then(Path::to_str)
                .unwrap_or(name);
            match candidates.iter().find(|head| head.file_name == bare) {
                Some(head) if chosen.iter().all(|c| c.file_name != head.file_name) => {
                    if chosen.len() < MAX_SELECTED {
                        chosen.push(head.clone());
                    }
                }
                Some(_) => {}
                None if every_name.contains(bare) => {}
                None => unknown.push(format!("`{name}`")),
            }
        }
        (chosen, unknown)
    }
}

/// The newest candidates, at most [`MAX_CANDIDATES`] of them and [`MAX_HEADS_BYTES`] of heads.
fn within_budget(heads: impl Iterator<Item = MemoryHead>) -> Vec<MemoryHead> {
    let mut bytes = 0;
    heads
        .take(MAX_CANDIDATES)
        .take_while(|head| {
            bytes += head.head.len();
            bytes <= MAX_HEADS_BYTES
        })
        .collect()
}

/// The text of the recall request: the user's message (cut at [`MAX_MESSAGE_BYTES`]) and
/// each candidate's name, date and head.
pub(crate) fn recall_request(message: &str, candidates: &[MemoryHead]) -> String {
    let heads_len: usize = candidates.iter().map(|head| head.head.len() + 80).sum();
    let mut text = String::with_capacity(heads_len + message.len().min(MAX_MESSAGE_BYTES) + 64);
    text.push_str("<user_message>\n");
    if message.len() > MAX_MESSAGE_BYTES {
        let end = (0..=MAX_MESSAGE_BYTES)
            .rev()
            .find(|&index| message.is_char_boundary(index))
            .unwrap_or(0);
        text.push_str(&message[..end]);
        text.push_str("\n[the rest of the message was cut]");
    } else {
        text.push_str(message);
    }
    text.push_str("\n</user_message>\n\n<memory_files>\n");
    for head in candidates {
        let _ = writeln!(
            text,
            "<memory_file name=\"{}\" modified=\"{}\">\n{}\n</memory_file>",
            head.file_name,
            date_of(head.stamp.modified),
            head.head
        );
    }
    text.push_str("</memory_files>");
    text
}

fn date_of(time: SystemTime) -> String {
    let days = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs() / SECONDS_PER_DAY);
    civil_date(i64::try_from(days).unwrap_or(0))
}

/// The file names in the recall model's answer: the first JSON object in it that has a
/// `selected_memories` list, wherever it is (in a code fence, after a sentence).
pub(crate) fn selected_memories(answer: &str) -> Result<Vec<String>, String> {
    for (index, _) in answer.match_indices('{') {
        let mut values = serde_json::Deserializer::from_str(&answer[index..]).into_iter::<Value>();
        if let Some(Ok(Value::Object(object))) = values.next()
            && let Some(Value::Array(items)) = object.get("selected_memories")
        {
            return Ok(items
                .iter()
                .filter_map(Value::as_str)
                .map(|name| name.trim().to_owned())
                .collect());
        }
    }
    let preview: String = answer.chars().take(200).collect();
    Err(format!(
        "the model's answer has no {{\"selected_memories\": [...]}} in it: `{preview}`"
    ))
}

/// A recalled file, read whole.
#[derive(Debug)]
struct RecalledMemory {
    file_name: String,
    head: MemoryHead,
    text: String,
    stamp: FileStamp,
    rest: Rest,
}

fn read_memory(directory: &Path, head: MemoryHead) -> Result<RecalledMemory, UnreadFile> {
    let path = directory.join(&head.file_name);
    let unread = |reason: String| UnreadFile {
        path: path.clone(),
        reason,
    };
    let stamp = std::fs::metadata(&path)
        .map(|metadata| FileStamp {
            modified: metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            len: metadata.len(),
        })
        .map_err(|error| unread(format!("reading it failed: {error}")))?;
    let start = read_text_start(&path, MAX_MEMORY_BYTES)?
        .ok_or_else(|| unread("it was deleted".to_owned()))?;
    Ok(RecalledMemory {
        file_name: head.file_name.clone(),
        head,
        text: start.text,
        stamp,
        rest: start.rest,
    })
}

impl RecalledMemory {
    /// The reminder's text: which file, its type and its age when over a day, then the file.
    fn reminder(&self, directory: &Path, now: SystemTime) -> String {
        let age = now
            .duration_since(self.stamp.modified)
            .unwrap_or(Duration::ZERO);
        let days = age.as_secs() / SECONDS_PER_DAY;
        let when = match days {
            0 => String::new(),
            1 => ", written 1 day ago — it may be out of date".to_owned(),
            days => format!(", written {days} days ago — it may be out of date"),
        };
        let cut = match self.rest {
            Rest::None => "",
            Rest::More { .. } => "\n[the file goes on: read it for the rest]",
        };
        format!(
            "A memory recalled for this message, from {} ({} memory{when}):\n\n{}{cut}",
            directory.join(&self.file_name).display(),
            self.head.front_matter.memory_type,
            self.text.trim_end()
        )
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::file::{FrontMatter, MemoryType};
    use pretty_assertions::assert_eq;

    fn head(name: &str, bytes: usize) -> MemoryHead {
        MemoryHead {
            file_name: name.to_owned(),
            front_matter: FrontMatter {
                name: name.to_owned(),
                description: "d".to_owned(),
                memory_type: MemoryType::User,
            },
            head: "x".repeat(bytes),
            stamp: FileStamp {
                modified: SystemTime::UNIX_EPOCH + Duration::from_secs(20_000 * SECONDS_PER_DAY),
                len: bytes as u64,
            },
        }
    }

    #[test]
    fn the_answer_is_found_in_fences_and_prose() {
        assert_eq!(
            selected_memories("{\"selected_memories\": [\"a.md\", \" b.md \"]}"),
            Ok(vec!["a.md".to_owned(), "b.md".to_owned()])
        );
        assert_eq!(
            selected_memories(
                "These look relevant:\n```json\n{\"selected_memories\": [\"a.md\"]}\n```\nDone."
            ),
            Ok(vec!["a.md".to_owned()])
        );
        assert_eq!(
            selected_memories("{not json} then {\"other\": 1} then {\"selected_memories\": []}"),
            Ok(vec![])
        );
    }

    #[test]
    fn an_answer_without_the_list_is_an_error_quoting_it() {
        assert_eq!(
            selected_memories("I think a.md"),
            Err(
                "the model's answer has no {\"selected_memories\": [...]} in it: `I think a.md`"
                    .to_owned()
            )
        );
        assert_eq!(
            selected_memories("{\"selected_memories\": \"a.md\"}"),
            Err(
                "the model's answer has no {\"selected_memories\": [...]} in it: \
                 `{\"selected_memories\": \"a.md\"}`"
                    .to_owned()
            )
        );
    }

    #[test]
    fn the_request_carries_the_message_then_each_head_with_its_date() {
        let mut a = head("a.md", 3);
        a.head = "---\nname: a\n---".to_owned();
        let request = recall_request("how do I deploy?", &[a]);
        assert_eq!(
            request,
            "<user_message>\nhow do I deploy?\n</user_message>\n\n<memory_files>\n\
             <memory_file name=\"a.md\" modified=\"2024-10-04\">\n---\nname: a\n---\n\
             </memory_file>\n</memory_files>"
        );
    }

    #[test]
    fn a_long_message_is_cut_on_a_character_boundary() {
        let message = "é".repeat(MAX_MESSAGE_BYTES);
        let request = recall_request(&message, &[]);
        let expected = format!(
            "<user_message>\n{}\n[the rest of the message was cut]\n</user_message>",
            "é".repeat(MAX_MESSAGE_BYTES / 2)
        );
        assert!(request.starts_with(&expected), "{request}");
    }

    #[test]
    fn candidates_stop_at_the_file_count_and_the_byte_budget() {
        let many = (0..300).map(|n| head(&format!("{n}.md"), 10));
        assert_eq!(within_budget(many).len(), MAX_CANDIDATES);
        let large = (0..100).map(|n| head(&format!("{n}.md"), 4 * 1024));
        assert_eq!(within_budget(large).len(), 16);
    }

    #[test]
    fn the_reminder_gives_the_age_after_a_day() {
        let written = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000 * SECONDS_PER_DAY);
        let memory = RecalledMemory {
            file_name: "a.md".to_owned(),
            head: head("a.md", 1),
            text: "---\nname: a\n---\nUse tabs.\n".to_owned(),
            stamp: FileStamp {
                modified: written,
                len: 1,
            },
            rest: Rest::None,
        };
        let directory = Path::new("/m");
        assert_eq!(
            memory.reminder(directory, written + Duration::from_secs(3600)),
            "A memory recalled for this message, from /m/a.md (user memory):\n\n\
             ---\nname: a\n---\nUse tabs."
        );
        assert_eq!(
            memory.reminder(
                directory,
                written + Duration::from_secs(10 * SECONDS_PER_DAY + 5)
            ),
            "A memory recalled for this message, from /m/a.md (user memory, written 10 days \
             ago — it may be out of date):\n\n---\nname: a\n---\nUse tabs."
        );
    }
}
