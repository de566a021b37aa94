//! The command line.

use clap::{Parser, ValueEnum};

/// cairn: a terminal coding agent.
#[derive(Debug, Parser)]
#[command(name = "cairn", version, about, long_about = None)]
pub struct Args {
    /// The prompt. With -p it is answered and cairn exits; piped standard input is appended.
    pub prompt: Option<String>,

    /// Print the answer and exit (headless mode).
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// How the headless answer is printed.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// The model: a full id or an alias (opus, sonnet, haiku). Default: $ANTHROPIC_MODEL, then sonnet.
    #[arg(long)]
    pub model: Option<String>,

    /// Stop after this many model requests in one turn.
    #[arg(long)]
    pub max_turns: Option<u32>,

    /// Report progress (tool calls, retries, usage) on standard error.
    #[arg(long)]
    pub verbose: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The final answer as plain text.
    Text,
    /// One JSON result object at the end.
    Json,
    /// One JSON object per line as the session goes (the Agent SDK's format).
    StreamJson,
}
