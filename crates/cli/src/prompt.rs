//! The system prompt from the command line's point of view: its options, the approval of
//! instruction-file imports from outside the project, and `cairn debug prompt`.

use cairn_config::LoadedSettings;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use cairn_context::approvals::{ImportApprovals, claude_code_approves};
use cairn_context::instructions::{ExternalApproval, ExternalImport, ImportScope, InstructionSet};
use cairn_context::sections::CoAuthoredBy;
use cairn_context::{PromptBuilder, PromptOptions, SectionPart, estimate_tokens};
use cairn_tools::{ToolContext, ToolExecutor, ToolRegistry};

use crate::args::Args;
use crate::memory::RunMemory;

/// Set to `1`, every external import is included for this run. An environment variable (or
/// the interactive question) rather than a setting, so that no project file can turn it on.
pub const ALLOW_EXTERNAL_IMPORTS: &str = "CAIRN_ALLOW_EXTERNAL_IMPORTS";

/// What the user can do to include skipped imports, for the warnings that name them.
const HOW_TO_ALLOW: &str = "to include them, run `cairn` here once and answer Yes, \
                            or set CAIRN_ALLOW_EXTERNAL_IMPORTS=1 for one run";

/// Where `cwd`'s instruction files may import from, and which external imports are
/// approved: all of them with `CAIRN_ALLOW_EXTERNAL_IMPORTS=1` or when Claude Code's own
/// record approves the project, otherwise those the user approved in cairn
/// (`~/.cairn/approvals.json`). A damaged approvals file approves nothing.
pub fn import_scope(args: &Args, cwd: &Path, home: Option<&Path>) -> ImportScope {
    let workspace_roots = args.add_dir.iter().map(|dir| cwd.join(dir)).collect();
    let allowed_for_run = std::env::var(ALLOW_EXTERNAL_IMPORTS).is_ok_and(|value| value == "1");
    let external = if allowed_for_run || home.is_some_and(|home| claude_code_approves(home, cwd)) {
        ExternalApproval::All
    } else {
        let approved = approvals().ok().and_then(|store| store.approved(cwd).ok());
        ExternalApproval::Only(approved.unwrap_or_default())
    };
    ImportScope {
        workspace_roots,
        external,
    }
}

/// cairn's approvals file.
fn approvals() -> anyhow::Result<ImportApprovals> {
    Ok(ImportApprovals::new(&crate::session::cairn_home()?))
}

/// The warnings about the instruction files the prompt was built from: imports from outside
/// the project that nobody approved (each one, the file that imports it, and how to include
/// them), and files that could not be read (a FIFO, a link to a device, not text), each naming
/// the file.
pub fn instruction_warnings(builder: &PromptBuilder) -> Vec<String> {
    describe_skipped(builder.skipped_imports().iter())
        .into_iter()
        .chain(builder.unread_files().iter().map(ToString::to_string))
        .chain(builder.output_style_problem().map(str::to_owned))
        .collect()
}

fn describe_skipped<'a>(skipped: impl Iterator<Item = &'a ExternalImport>) -> Option<String> {
    let listed: Vec<String> = skipped.map(ToString::to_string).collect();
    if listed.is_empty() {
        return None;
    }
    Some(format!(
        "instruction files import files from outside this project, left out because they \
         are not approved: {}; {HOW_TO_ALLOW}",
        listed.join(", ")
    ))
}

/// The external imports the interactive UI asks about before the first prompt: every one
/// `cwd`'s instruction files reach that is not approved yet.
pub fn unapproved_imports(args: &Args, cwd: &Path) -> Vec<ExternalImport> {
    let home = std::env::home_dir();
    let scope = import_scope(args, cwd, home.as_deref());
    InstructionSet::unapproved_imports(cwd, home.as_deref(), &scope)
}

/// Remembers the user's Yes for `imports` in `cwd`'s project.
pub fn approve_imports(cwd: &Path, imports: &[ExternalImport]) -> anyhow::Result<()> {
    let paths: Vec<PathBuf> = imports.iter().map(|import| import.path.clone()).collect();
    approvals()?.approve(cwd, &paths)?;
    Ok(())
}

/// The prompt options the flags ask for, for a session in `cwd` with `model`.
/// The options of the system prompt for this run: the flags, the `settings` the run loaded,
/// and the run's memory (its index), if it has one.
pub fn prompt_options(
    args: &Args,
    cwd: &Path,
    model: &str,
    settings: &LoadedSettings,
    memory: Option<&RunMemory>,
) -> anyhow::Result<PromptOptions> {
    let system_prompt = match (&args.system_prompt, &args.system_prompt_file) {
        (Some(text), _) => Some(text.clone()),
        (None, Some(path)) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("--system-prompt-file: cannot read {}", path.display()))?,
        ),
        (None, None) => None,
    };
    let home = std::env::home_dir();
    let memory_index = memory.map(|memory| memory.prompt.clone());
    let settings = settings.settings();
    Ok(PromptOptions {
        cwd: cwd.to_path_buf(),
        imports: import_scope(args, cwd, home.as_deref()),
        home,
        model: model.to_string(),
        system_prompt,
        append_system_prompt: args.append_system_prompt.clone(),
        memory_index,
        output_style: settings.output_style.clone(),
        co_authored_by: match settings.include_co_authored_by {
            Some(false) => CoAuthoredBy::LeftOut,
            Some(true) | None => CoAuthoredBy::Included,
        },
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
    let memory = crate::memory::run_memory(&settings, &cwd).0;
    let builder = PromptBuilder::new(prompt_options(
        args,
        &cwd,
        &model,
        &settings,
        memory.as_ref(),
    )?);
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
    let skipped = builder.skipped_imports();
    if !skipped.is_empty() {
        out.push_str("=== skipped imports: outside this project and not approved ===\n");
        for import in &skipped {
            out.push_str(&format!("{import}\n"));
        }
        out.push_str(&format!("({HOW_TO_ALLOW})\n\n"));
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
