//! The built-in roles: what each is for, the tools it gets and its system prompt.

use super::{AgentProfile, ModelChoice, ToolChoice};

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
    ]
}
