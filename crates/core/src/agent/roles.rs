//! The built-in roles: what each is for, the tools it gets and its system prompt.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_tools::{CompositeExecutor, ToolContext, ToolExecutor, ToolRegistry};

use super::confined::ConfinedTools;
use super::guide::{CAIRN_DOCS_TOOL, CairnDocsTool};
use super::{AgentCatalog, AgentProfile, ModelChoice, ToolChoice};

/// What every sub-agent is told before its role's prompt.
pub(super) const SUB_AGENT_PREAMBLE: &str = "You are a sub-agent of cairn, a coding agent: \
    another agent gave you one task and is waiting for your answer. You cannot ask it or the \
    user anything, so decide for yourself what the task needs, do it with the tools you have, \
    and stop. Your last message is the only thing the other agent sees of your work: make it \
    a complete, self-contained report (what you found or did, with file paths and line \
    numbers where they help), without preamble.";

/// The tools that only look: file reading and searching.
pub const READ_ONLY_TOOLS: [&str; 4] = ["Read", "Grep", "Glob", "LS"];

const GENERAL_PURPOSE: &str = "You handle a task that takes several steps: searching the \
    code, reading what you find, and making the changes the task asks for. Work through it \
    as a careful engineer would: look before you change, change only what the task needs, \
    and check your work when you can. Report what you changed and anything you could not do.";

const EXPLORE: &str = "You explore a codebase to answer a question. You can only read and \
    search: you cannot change files or run commands. Search broadly first (Glob for names, \
    Grep for contents), then read the files that matter. Be quick: stop as soon as you can \
    answer. Answer with the facts you found and where you found them.";

const PLAN: &str = "You plan a change without making it. You can read and search the code \
    and keep a todo list, but you cannot change files or run commands. Find the code the \
    change touches, the conventions it must follow and the risks, then answer with a plan: \
    the steps in order, the files each step changes, and how to check the result.";

const VERIFICATION: &str = "You check that a claimed change really works. You can read and \
    search the code and run commands, but you do not fix anything. Read the change, run the \
    tests and any check that bears on the claim, and look at what they print. Answer with a \
    verdict first, PASS or FAIL, then the evidence: each command you ran, whether it passed, \
    and the lines of output that show it.";

/// The role that sets up the status line.
pub(super) const STATUSLINE_SETUP: &str = "statusline-setup";

/// The role that answers questions about cairn.
pub(super) const CAIRN_GUIDE: &str = "cairn-guide";

const STATUSLINE: &str = "You set up cairn's status line: the line under the input box.     It is configured by `statusLine` in the user's settings file, as in Claude Code:     `{\"statusLine\": {\"type\": \"command\", \"command\": \"<shell command>\"}}`. cairn     runs the command with `sh`, gives it the session as JSON on standard input (`session_id`,     `model.id` and `model.display_name`, `workspace.current_dir` and `workspace.project_dir`,     `cwd`, `version`, `cost.total_cost_usd`) and shows the first line it prints, without     colours. You can only read and edit that settings file: read it first, then change or add     the `statusLine` key with one Edit, keeping every other key and the file valid JSON. A     command that reads the JSON is usually best written with `jq`. Answer with the command     you set and what it will show; if the file does not exist, say so and give the JSON to     put in it.";

const GUIDE: &str = "You answer questions about cairn itself: what it does, how to     install, configure and use it, which Claude Code features it has and how it differs.     Your only source is cairn's own documentation, through the CairnDocs tool: search it for     the words of the question, read what you find, and answer from it, quoting the setting,     flag or file names exactly. When the documents do not say, answer that they do not     rather than guess.";

/// The user's settings files `statusline-setup` may read and edit.
pub(super) fn statusline_settings(home: Option<&Path>) -> Vec<PathBuf> {
    home.map(|home| home.join(".claude").join("settings.json"))
        .into_iter()
        .collect()
}

/// A role's tools as it runs with them: `statusline-setup`'s held to the user's settings
/// file, `cairn-guide`'s with the documentation tool only it is offered. A custom agent of
/// either name gets its tools as its definition says.
pub(super) fn equip(
    profile: &AgentProfile,
    tools: Arc<dyn ToolExecutor>,
    catalog: &AgentCatalog,
) -> Arc<dyn ToolExecutor> {
    if profile.origin.is_some() {
        return tools;
    }
    match profile.name.as_str() {
        STATUSLINE_SETUP => Arc::new(ConfinedTools::new(
            tools,
            STATUSLINE_SETUP,
            statusline_settings(catalog.home.as_deref()),
        )),
        CAIRN_GUIDE => {
            // The documents are compiled in: the tool's context holds no files.
            let mut docs = ToolRegistry::new(ToolContext::new(std::env::temp_dir()));
            docs.register(CairnDocsTool);
            Arc::new(CompositeExecutor::new(vec![Arc::new(docs), tools]))
        }
        _ => tools,
    }
}

/// The built-in roles, in the order the `Agent` tool lists them.
pub(super) fn built_in() -> Vec<AgentProfile> {
    let read_only = || {
        READ_ONLY_TOOLS
            .iter()
            .map(|tool| tool.to_string())
            .collect()
    };
    let with = |extra: &[&str]| {
        let mut tools: Vec<String> = read_only();
        tools.extend(extra.iter().map(|tool| tool.to_string()));
        ToolChoice::Only(tools)
    };
    vec![
        AgentProfile::built_in(
            "general-purpose",
            "For a task of several steps: researching a question, searching code, making \
             changes. Has every tool of the session.",
            GENERAL_PURPOSE,
            ToolChoice::All,
            ModelChoice::Inherit,
        ),
        AgentProfile::built_in(
            "Explore",
            "Fast, read-only exploration of the codebase: finding files, searching for code, \
             answering questions about how it works. Runs on the small model.",
            EXPLORE,
            ToolChoice::Only(read_only()),
            ModelChoice::Small,
        ),
        AgentProfile::built_in(
            "Plan",
            "Plans a change without making it: reads the code and answers with the steps, the \
             files each touches and how to check them.",
            PLAN,
            with(&["TodoWrite"]),
            ModelChoice::Inherit,
        ),
        AgentProfile::built_in(
            "Verification",
            "Checks a claimed change: runs the tests and other checks and reports PASS or FAIL \
             with the evidence. Reads and runs commands; changes nothing.",
            VERIFICATION,
            with(&["Bash", "BashOutput"]),
            ModelChoice::Inherit,
        ),
        AgentProfile::built_in(
            STATUSLINE_SETUP,
            "Configures the user's cairn status line (`statusLine` in ~/.claude/settings.json). \
             Reads and edits that file only.",
            STATUSLINE,
            ToolChoice::Only(vec!["Read".into(), "Edit".into()]),
            ModelChoice::Inherit,
        ),
        AgentProfile::built_in(
            CAIRN_GUIDE,
            "Answers questions about cairn itself (features, settings, flags, how it differs \
             from Claude Code) from cairn's own documentation.",
            GUIDE,
            ToolChoice::Only(vec![CAIRN_DOCS_TOOL.into()]),
            ModelChoice::Small,
        ),
    ]
}
