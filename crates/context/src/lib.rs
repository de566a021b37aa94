//! What the model is told before the conversation: cairn's system prompt.
//!
//! The prompt is built from sections ([`sections`]) split by a boundary: the static half
//! (identity, rules, tool guidance) is the same for every session and is cached by the API;
//! the dynamic half holds the environment ([`environment`]), the git context and the
//! instruction files the user and the project keep ([`instructions`]: `CLAUDE.md`,
//! `AGENTS.md`, `.claude/rules/*.md`, with `@path` imports). [`PromptBuilder`] assembles
//! them once per session and re-reads instruction files that change. Imports from outside the
//! project need the user's approval, kept in cairn's own state ([`approvals`]).
//!
//! ```
//! use cairn_context::{PromptBuilder, PromptOptions, PromptSource};
//!
//! let project = tempfile::tempdir()?;
//! std::fs::write(project.path().join("CLAUDE.md"), "Run the tests with `make check`.")?;
//! let builder = PromptBuilder::new(PromptOptions {
//!     cwd: project.path().to_path_buf(),
//!     model: "claude-sonnet-4-5".into(),
//!     ..PromptOptions::default()
//! });
//! let prompt = builder.system_prompt();
//! // The project's instructions and the environment are in the dynamic half; the static half
//! // is the same for every project.
//! assert!(prompt.dynamic_part.contains("Run the tests with `make check`."));
//! assert!(prompt.dynamic_part.contains("Model: claude-sonnet-4-5"));
//! assert!(!prompt.static_part.contains("make check"));
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! ```
//!
//! Beside the prompt, the crate owns the rest of what the model sees: the custom commands of
//! `.claude/commands/` ([`commands`]), the skills of `.claude/skills/` ([`skills`]), the output styles ([`output_style`]), memory
//! ([`memory`]: the index in the prompt, recall, saving), and the context pipeline
//! ([`pipeline`]) that fits a long conversation into the model's window before each request.
//!
//! This crate must not send a request of its own (a summary goes through the engine's
//! [`Summarizer`], recall through a side model it is given) or know a face.

#![deny(missing_docs)]

pub mod agents;
pub mod approvals;
mod builder;
pub mod commands;
mod date;
pub mod environment;
pub mod git;
pub mod instructions;
pub mod memory;
pub mod output_style;
pub mod pipeline;
mod project_file;
pub mod sections;
pub mod skills;

pub use builder::{PromptBuilder, PromptOptions, PromptSource, Section, SectionPart};
/// `YYYY-MM-DD` of the day `days` after 1970-01-01.
pub use date::civil_date as date_from_days;
pub use pipeline::{
    ContextPipeline, PipelineError, Projection, StandardPipeline, Summarizer, TokenAccounting,
    Trigger,
};
pub use project_file::UnreadFile;

/// A rough token count: about four characters a token, the usual estimate for English text
/// and code. The API's reported usage corrects it where it matters.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}
