//! The system prompt from the command line's point of view: its options, and
//! `cairn debug prompt`.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use cairn_context::{PromptBuilder, PromptOptions, SectionPart, estimate_tokens};
use cairn_tools::{ToolContext, ToolExecutor, ToolRegistry};

use crate::args::Args;

/// The prompt options the flags ask for, for a session in `cwd` with `model`.
pub fn prompt_options(args: &Args, cwd: &Path, model: &str) -> anyhow::Result<PromptOptions> {
    let system_prompt = match (&args.system_prompt, &args.system_prompt_file) {
        (Some(text), _) => Some(text.clone()),
        (None, Some(path)) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("--system-prompt-file: cannot read {}", path.display()))?,
        ),
        (None, None) => None,
    };
    Ok(PromptOptions {
        cwd: cwd.to_path_buf(),
        home: std::env::home_dir(),
        model: model.to_string(),
        system_prompt,
        append_system_prompt: args.append_system_prompt.clone(),
        memory_index: None,
    })
}

/// `cairn debug prompt`: every section with its part and estimated tokens, then the totals
/// including the tool definitions.
pub fn print_debug_prompt(args: &Args) -> ExitCode {
    match render_debug_prompt(args) {
        Ok(text) => {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn render_debug_prompt(args: &Args) -> anyhow::Result<String> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let settings = crate::settings::load_settings(args, &cwd)?;
    let model = crate::setup::chosen_model(args, &settings);
    let builder = PromptBuilder::new(prompt_options(args, &cwd, &model)?);
    let mut out = String::new();
    let mut totals = [0usize; 2];
    let mut boundary_written = false;
    for section in builder.sections() {
        if section.part == SectionPart::Dynamic && !boundary_written {
            out.push_str(
                "=== boundary: everything above is cached; everything below is per session ===\n\n",
            );
            boundary_written = true;
        }
        let tokens = estimate_tokens(&section.text);
        let (label, total) = match section.part {
            SectionPart::Static => ("static", &mut totals[0]),
            SectionPart::Dynamic => ("dynamic", &mut totals[1]),
        };
        *total += tokens;
        out.push_str(&format!(
            "=== {label}: {} (~{tokens} tokens) ===\n{}\n\n",
            section.title, section.text
        ));
    }
    let tools = ToolRegistry::with_builtins(ToolContext::new(cwd)).specs();
    let tool_tokens = estimate_tokens(&serde_json::to_string(&tools).unwrap_or_default());
    out.push_str(&format!(
        "=== totals ===\nstatic prompt ~{} tokens, tool definitions ~{tool_tokens} tokens ({} tools), \
         dynamic prompt ~{} tokens\n",
        totals[0],
        tools.len(),
        totals[1]
    ));
    Ok(out)
}
