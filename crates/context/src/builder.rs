//! Assembling the sections into the two halves of the system prompt.

use std::path::PathBuf;
use std::sync::Mutex;

use cairn_protocol::SystemPrompt;

use crate::UnreadFile;
use crate::environment::{Environment, GitContext};
use crate::instructions::{ExternalImport, ImportScope, InstructionSet};
use crate::output_style::OutputStyle;
use crate::sections::{CoAuthoredBy, STATIC_SECTIONS, committing};

/// Gives the system prompt for the next request. The engine asks before every request, so a
/// source can refresh what changed (instruction files); a fixed [`SystemPrompt`] is a source too.
pub trait PromptSource: Send + Sync + std::fmt::Debug {
    /// The system prompt to send now; cheap when nothing changed.
    fn system_prompt(&self) -> SystemPrompt;
}

impl PromptSource for SystemPrompt {
    fn system_prompt(&self) -> SystemPrompt {
        self.clone()
    }
}

/// Which half of the prompt a section is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionPart {
    /// Before the boundary: the same for every session, cached.
    Static,
    /// After the boundary: fixed within one session.
    Dynamic,
}

/// One named part of the prompt, for assembling and for `cairn debug prompt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// A short name for listings (`environment`, `git context`, `memory index`).
    pub title: String,
    /// The half of the prompt it goes in.
    pub part: SectionPart,
    /// The text as the model reads it.
    pub text: String,
}

/// What the prompt is built from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptOptions {
    /// The project directory: where instruction files are found and git is asked.
    pub cwd: PathBuf,
    /// The home directory, for `~/.claude/CLAUDE.md` and `~/` imports.
    pub home: Option<PathBuf>,
    /// The session's model, named in the environment section.
    pub model: String,
    /// `--system-prompt`: replaces cairn's static sections.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt`: added at the end of the static half.
    pub append_system_prompt: Option<String>,
    /// The memory index (`MEMORY.md`), when memory is in use.
    pub memory_index: Option<String>,
    /// Where instruction-file imports may reach, and the external ones the user approved.
    pub imports: ImportScope,
    /// `outputStyle`: the name of the style the answers follow; `None` for cairn's own.
    pub output_style: Option<String>,
    /// `includeCoAuthoredBy`: whether commits the model writes credit cairn.
    pub co_authored_by: CoAuthoredBy,
}

/// Builds the system prompt of one session: the environment and git context are read once;
/// instruction files are read again whenever one of them changes.
#[derive(Debug)]
pub struct PromptBuilder {
    options: PromptOptions,
    static_sections: Vec<Section>,
    environment: Section,
    git: Option<Section>,
    instructions: Mutex<InstructionSet>,
    style_problem: Option<String>,
}

impl PromptBuilder {
    /// Reads the environment, the git context and the instruction files now (blocking: git
    /// runs and files are read), and keeps them for the session.
    pub fn new(options: PromptOptions) -> Self {
        let git = GitContext::read(&options.cwd);
        let environment = Environment::detect(&options.cwd, &options.model, git.is_some());
        let instructions =
            InstructionSet::load(&options.cwd, options.home.as_deref(), &options.imports);
        let mut static_sections: Vec<Section> = match &options.system_prompt {
            Some(replacement) => vec![section(
                "custom system prompt",
                SectionPart::Static,
                replacement,
            )],
            None => STATIC_SECTIONS
                .iter()
                .map(|(title, text)| section(title, SectionPart::Static, text))
                .chain([section(
                    "committing",
                    SectionPart::Static,
                    &committing(options.co_authored_by),
                )])
                .collect(),
        };
        let mut style_problem = None;
        let style = options.output_style.as_deref().and_then(|name| {
            OutputStyle::find(name, &options.cwd, options.home.as_deref())
                .map_err(|problem| style_problem = Some(problem.to_string()))
                .ok()
                .flatten()
        });
        if let Some(style) = style {
            static_sections.push(section(
                &format!("output style: {}", style.name),
                SectionPart::Static,
                &style.prompt_text(),
            ));
        }
        if let Some(extra) = &options.append_system_prompt {
            static_sections.push(section(
                "appended system prompt",
                SectionPart::Static,
                extra,
            ));
        }
        PromptBuilder {
            environment: section("environment", SectionPart::Dynamic, &environment.render()),
            git: git.map(|git| section("git context", SectionPart::Dynamic, &git.render())),
            static_sections,
            instructions: Mutex::new(instructions),
            options,
            style_problem,
        }
    }

    /// Why the output style the settings name is not in the prompt (unknown, unreadable),
    /// for a warning that names it.
    pub fn output_style_problem(&self) -> Option<&str> {
        self.style_problem.as_deref()
    }

    /// Every section as it stands now, static ones first.
    pub fn sections(&self) -> Vec<Section> {
        let mut sections = self.static_sections.clone();
        sections.push(self.environment.clone());
        sections.extend(self.git.clone());
        let instructions = self.current_instructions();
        if !instructions.is_empty() {
            sections.push(section(
                "instruction files",
                SectionPart::Dynamic,
                &instructions,
            ));
        }
        if let Some(memory) = &self.options.memory_index {
            sections.push(section("memory index", SectionPart::Dynamic, memory));
        }
        sections
    }

    /// The external imports the instruction files ask for that were left out, unapproved.
    pub fn skipped_imports(&self) -> Vec<ExternalImport> {
        self.instructions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .skipped_imports()
            .cloned()
            .collect()
    }

    /// The instruction files that could not be read, for a warning.
    pub fn unread_files(&self) -> Vec<UnreadFile> {
        self.instructions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .unread
            .clone()
    }

    /// The instruction text, re-read first if a file changed.
    fn current_instructions(&self) -> String {
        let mut instructions = self
            .instructions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if instructions.is_stale() {
            *instructions = InstructionSet::load(
                &self.options.cwd,
                self.options.home.as_deref(),
                &self.options.imports,
            );
        }
        instructions.render()
    }
}

impl PromptSource for PromptBuilder {
    fn system_prompt(&self) -> SystemPrompt {
        let sections = self.sections();
        let join = |part: SectionPart| {
            sections
                .iter()
                .filter(|section| section.part == part)
                .map(|section| section.text.as_str())
                .collect::<Vec<_>>()
                .join("\n\n")
        };
        SystemPrompt {
            static_part: join(SectionPart::Static),
            dynamic_part: join(SectionPart::Dynamic),
        }
    }
}

fn section(title: &str, part: SectionPart, text: &str) -> Section {
    Section {
        title: title.to_string(),
        part,
        text: text.trim().to_string(),
    }
}
