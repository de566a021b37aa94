//! The context pipeline (DESIGN.md §6): what of the conversation each request sends.
//!
//! The engine owns the conversation (the message list is the state); before every request it
//! hands it to a [`ContextPipeline`] with the token accounting so far, and sends what the
//! pipeline projects. The pipeline compresses as late and as lightly as possible: step 1,
//! [`spill`], already acts on every tool-results message before it joins the conversation
//! ([`ContextPipeline::admit_tool_results`]); the later steps (snip, microcompact, collapse,
//! autocompact) act in [`ContextPipeline::project`], where a step that rewrites the stored
//! conversation (autocompact) does so in place and gives the summary in its [`Compaction`]. Steps that
//! need a model (summaries) get one from the face that builds the pipeline, as a
//! `cairn_llm::SideModel`.

pub mod spill;

use std::path::PathBuf;

use cairn_protocol::{BoxFuture, Compaction, ContentBlock, Message};

use spill::{SpillCandidate, Spilled, apply_budget};

/// What is known about the window before a request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenAccounting {
    /// The input tokens the API reported for the last request (cached and uncached together),
    /// and how many messages of the conversation that request sent; `None` before the first
    /// answer. Messages after those are estimated ([`crate::estimate_tokens`]).
    pub last_reported: Option<(u64, usize)>,
    /// The model's context window, in tokens; `None` when unknown.
    pub context_window: Option<u64>,
    /// The output tokens each request reserves.
    pub max_output_tokens: u32,
}

/// What one request sends, and what the pipeline did to get there.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    pub messages: Vec<Message>,
    /// Each step that made the conversation smaller, for the face and the session.
    pub compactions: Vec<Compaction>,
}

/// Why the pipeline is asked to compact now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// Before a request, as the thresholds say (the usual case).
    Auto,
    /// The user asked (`/compact [instructions]`): compact now, whatever the size.
    Manual { instructions: Option<String> },
    /// The API refused the last request as too long: compact now, then the request is retried
    /// once.
    Reactive,
}

/// Asks the session's model for a summary of the conversation, reusing the conversation's
/// cached prefix (the same system prompt and tools, `tool_choice: none`). The engine
/// implements it; it also runs the PreCompact hooks, which may refuse (`Err`).
pub trait Summarizer: Send + Sync {
    fn summarize<'a>(
        &'a self,
        conversation: Vec<Message>,
        instructions: String,
        trigger: &'a Trigger,
    ) -> BoxFuture<'a, Result<String, String>>;
}

/// Why a request cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PipelineError {
    /// Over the hard limit and compaction failed or is off: sending would be refused.
    #[error("{0}")]
    Blocked(String),
}

/// Projects the conversation into what fits the window.
pub trait ContextPipeline: Send + Sync + std::fmt::Debug {
    /// Step 1: one message's tool results, made to fit the budget before they join the
    /// conversation. Returns what was spilled, so the user can be told.
    fn admit_tool_results(&self, results: &mut [ContentBlock]) -> Vec<Spilled>;

    /// Before every request (and on `/compact`, and after the API refused a request as too
    /// long): the messages to send. A step that rewrites the stored conversation
    /// (autocompact) does so in `conversation` and reports it as a [`Compaction`] with its
    /// summary and the new conversation's opening messages.
    fn project<'a>(
        &'a self,
        conversation: &'a mut Vec<Message>,
        accounting: TokenAccounting,
        trigger: Trigger,
        summarizer: &'a dyn Summarizer,
    ) -> BoxFuture<'a, Result<Projection, PipelineError>>;
}

/// The pipeline of a session today: large results spill to `spill_dir`; every request sends
/// the whole conversation.
#[derive(Debug, Clone)]
pub struct StandardPipeline {
    spill_dir: PathBuf,
}

impl StandardPipeline {
    pub fn new(spill_dir: PathBuf) -> Self {
        StandardPipeline { spill_dir }
    }
}

impl ContextPipeline for StandardPipeline {
    fn admit_tool_results(&self, results: &mut [ContentBlock]) -> Vec<Spilled> {
        let mut candidates: Vec<SpillCandidate<'_>> = results
            .iter_mut()
            .filter_map(|block| match block {
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } => Some(SpillCandidate {
                    tool_use_id: tool_use_id.as_str(),
                    content,
                }),
                _ => None,
            })
            .collect();
        apply_budget(&mut candidates, &self.spill_dir)
    }

    fn project<'a>(
        &'a self,
        conversation: &'a mut Vec<Message>,
        _accounting: TokenAccounting,
        _trigger: Trigger,
        _summarizer: &'a dyn Summarizer,
    ) -> BoxFuture<'a, Result<Projection, PipelineError>> {
        let messages = conversation.clone();
        Box::pin(std::future::ready(Ok(Projection {
            messages,
            compactions: Vec::new(),
        })))
    }
}
