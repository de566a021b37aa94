//! What both faces (`cairn -p` and the interactive UI) build before the first request:
//! settings, the model client, the session log, governance, the tools and the engine.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use cairn_config::project_level::Face;
use cairn_config::{LoadedSettings, PermissionMode};
use cairn_context::PromptBuilder;
use cairn_context::StandardPipeline;
use cairn_context::memory::{MemoryRecall, Recall};
use cairn_context::pipeline::PipelineSettings;
use cairn_core::agent::AgentCatalog;
use cairn_core::skill::{ProjectGrants, SkillTool};
use cairn_core::structured_output::{STRUCTURED_OUTPUT_TOOL, StructuredOutput};
use cairn_core::{EngineConfig, SessionHost, SessionParts};
use cairn_llm::models;
use cairn_llm::side::{SMALL_MODEL_VARIABLE, SideModel};
use cairn_protocol::PermissionBroker;
use cairn_tools::{PlanHandback, ToolContext, ToolExecutor, ToolRegistry, WorkspaceRoots};

use crate::args::Args;
use crate::governance::{GovernanceInputs, build_governance};
use crate::output::SessionInfo;
use crate::prompt::prompt_options;
use crate::session::{open_session, start_cleanup};
use crate::settings::load_settings;

const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 32_000;

/// How many sub-agents may run at once (Claude Code's variable).
const MAX_CONCURRENT_SUBAGENTS: &str = "CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS";

/// What a run is made of.
pub struct Prepared {
    /// The session, ready to start.
    pub host: SessionHost,
    pub session: SessionInfo,
    /// The run continues an earlier session.
    pub resumed: bool,
    pub cwd: PathBuf,
    pub home: PathBuf,
    /// What the user should hear about the instruction files (skipped imports, unreadable
    /// files), from the load that built the system prompt.
    pub instruction_warnings: Vec<String>,
    /// The run's memory directory, when it has memory (`#` and `/memory` in the UI).
    pub memory_dir: Option<PathBuf>,
    /// The `statusLine` setting's command, for the interactive UI.
    pub status_command: Option<String>,
    /// The run's MCP servers, started in the background; `None` without any.
    pub mcp: Option<Arc<cairn_mcp::McpTools>>,
    /// The settings files in force, for `/status`.
    pub settings_sources: Vec<String>,
    /// One line naming what the settings files say that cairn reads but does not act on yet,
    /// with each key's file; `None` when there is nothing. Shown dimmed at start-up in the
    /// TUI and by `--verbose`, besides `/doctor`.
    pub unsupported: Option<String>,
    /// The model client the session's requests go through: what the faces ask for a
    /// model's window and cost, never a table of their own.
    pub client: Arc<dyn cairn_llm::ModelClient>,
    /// The run's thinking switch (the interactive UI's Tab).
    pub thinking: cairn_llm::thinking::Thinking,
}

/// The note on what the settings say that cairn does not act on yet, each key once with the
/// file its value came from.
fn unsupported_note(settings: &LoadedSettings) -> Option<String> {
    let keys = settings.unsupported_keys();
    if keys.is_empty() {
        return None;
    }
    let listed: Vec<String> = keys.iter().map(ToString::to_string).collect();
    Some(format!(
        "cairn reads but does not act on yet: {} (/doctor lists them)",
        listed.join(", ")
    ))
}

/// The model the flags, environment and settings ask for (in that order), aliases resolved.
pub fn chosen_model(args: &Args, settings: &LoadedSettings) -> String {
    models::resolve_model(
        &args
            .model
            .clone()
            .or_else(|| std::env::var("ANTHROPIC_MODEL").ok())
            .or_else(|| settings.settings().model.clone())
            .unwrap_or_else(|| models::DEFAULT_MODEL.to_string()),
    )
}

/// The session's tools as `--tools` leaves the built-in ones (`default` or no flag: all of
/// them; `""`: none; else the names, comma- or space-separated, in any spelling the model
/// could use), and whether the `Agent` tool is among them. MCP servers' tools, and the tools
/// that serve them (ToolSearch, the resource tools), are kept whatever the flag says.
fn built_in_subset(
    flag: Option<&str>,
    tools: Arc<dyn ToolExecutor>,
) -> anyhow::Result<(Arc<dyn ToolExecutor>, bool)> {
    let Some(flag) = flag.map(str::trim).filter(|flag| *flag != "default") else {
        return Ok((tools, true));
    };
    let serves_mcp = |name: &str| {
        name.starts_with("mcp__")
            || name == cairn_tools::tool_search::TOOL_SEARCH
            || name == cairn_mcp::LIST_RESOURCES_TOOL
            || name == cairn_mcp::READ_RESOURCE_TOOL
    };
    let mut built_in: Vec<String> = vec![cairn_core::agent::AGENT_TOOL.to_string()];
    built_in.extend(
        tools
            .specs()
            .into_iter()
            .map(|spec| spec.name)
            .filter(|name| !serves_mcp(name)),
    );
    let mut kept = Vec::new();
    for given in flag.split([',', ' ']).filter(|name| !name.is_empty()) {
        let wanted = cairn_tools::canonical_spelling(given);
        let wanted = if wanted == "task" {
            "agent".to_string()
        } else {
            wanted
        };
        match built_in
            .iter()
            .find(|name| cairn_tools::canonical_spelling(name) == wanted)
        {
            Some(name) => kept.push(name.clone()),
            None => anyhow::bail!(
                "--tools: there is no built-in tool {given:?}; the built-in tools are {}",
                built_in.join(", ")
            ),
        }
    }
    let offers_agent = kept
        .iter()
        .any(|name| name == cairn_core::agent::AGENT_TOOL);
    let keeps: cairn_tools::ToolPredicate =
        Arc::new(move |name: &str| serves_mcp(name) || kept.iter().any(|kept| kept == name));
    Ok((
        Arc::new(cairn_tools::FilteredTools::new(tools, keeps)),
        offers_agent,
    ))
}

/// A variable as the run sees it: the settings' `env` over cairn's own environment.
fn run_variable(settings: &LoadedSettings, name: &str) -> Option<String> {
    settings
        .env()
        .get(name)
        .cloned()
        .or_else(|| std::env::var(name).ok())
}

/// The sub-agents of the run: the built-in roles, the agent files and `--agents`, the
/// `Explore` role on `small_model`, at most `CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS` at once.
/// Returns the warnings for agent files that could not be read.
fn agent_catalog(
    args: &Args,
    settings: &LoadedSettings,
    cwd: &std::path::Path,
    home: &std::path::Path,
    small_model: Option<String>,
    spill_dir: PathBuf,
) -> anyhow::Result<(AgentCatalog, Vec<String>)> {
    let (catalog, warnings) =
        AgentCatalog::load(cwd, Some(home), args.agents.as_deref()).map_err(anyhow::Error::msg)?;
    let max_concurrent = match run_variable(settings, MAX_CONCURRENT_SUBAGENTS) {
        Some(value) => match value.trim().parse::<usize>() {
            Ok(max) if max > 0 => max,
            _ => anyhow::bail!(
                "{MAX_CONCURRENT_SUBAGENTS} must be a whole number of sub-agents above 0, not \
                 {value:?}"
            ),
        },
        None => cairn_core::agent::DEFAULT_MAX_CONCURRENT,
    };
    let environment = format!(
        "Working directory: {}\nPlatform: {}",
        cwd.display(),
        std::env::consts::OS
    );
    Ok((
        catalog
            .with_small_model(small_model)
            .with_max_concurrent(max_concurrent)
            .with_spill_dir(spill_dir)
            .with_environment(environment)
            .with_worktrees(
                crate::session::cairn_home()?.join("worktrees"),
                cwd.to_path_buf(),
            ),
        warnings,
    ))
}

/// Everything a run needs before the first request: the credentials, the tools and the
/// session host. `face` says which rules for project-level settings hold; `broker` answers
/// permission questions, and whether anyone can be asked follows from it.
pub fn prepare(
    args: &Args,
    face: Face,
    broker: Arc<dyn PermissionBroker>,
) -> anyhow::Result<Prepared> {
    prepare_for_host(args, face, broker, HostParts::default())
}

/// What a program driving cairn (an Agent SDK host) adds to a session.
#[derive(Default)]
pub struct HostParts {
    /// Hooks it registered, and who answers them; they run beside the configured ones.
    pub callbacks: Option<(
        cairn_policy::hooks::CallbackHooks,
        Arc<dyn cairn_policy::hooks::HookCallback>,
    )>,
    /// The channel to its in-process MCP servers (`"type": "sdk"`).
    pub sdk_mcp: Option<Arc<dyn cairn_mcp::SdkMcpChannel>>,
    /// Who answers MCP servers' elicitations (the interactive UI's form); `None` declines.
    pub elicitation: Option<cairn_mcp::elicitation::Elicitation>,
}

/// [`prepare`], with what a program driving cairn adds.
pub fn prepare_for_host(
    args: &Args,
    face: Face,
    broker: Arc<dyn PermissionBroker>,
    HostParts {
        callbacks,
        sdk_mcp,
        elicitation,
    }: HostParts,
) -> anyhow::Result<Prepared> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    // A schema that is not one stops the run before anything starts.
    let structured_output = match (&args.json_schema, face) {
        (Some(schema), Face::Headless) => {
            Some(StructuredOutput::parse(schema).map_err(anyhow::Error::msg)?)
        }
        _ => None,
    };
    let mut settings = load_settings(args, &cwd)?;
    // Before the provider reads a base URL, the mode is chosen and the sandbox built.
    crate::settings::apply_project_rule(args, &mut settings, &cwd, face)?;
    // The provider checks its credentials after the settings load: their `env` may hold them.
    let model = chosen_model(args, &settings);
    let fallback_model = args.fallback_model.as_deref().map(models::resolve_model);
    if fallback_model.as_deref() == Some(model.as_str()) {
        anyhow::bail!(
            "--fallback-model: {model} is the session's model already; name another model"
        );
    }
    // The model's `<provider>/` prefix, when it names a built-in provider, chooses the client.
    let provider = crate::provider::model_client(&settings, &model, args.max_thinking_tokens)?;
    let api_key_source = provider.credential_variable;
    let max_output_tokens = match std::env::var("CLAUDE_CODE_MAX_OUTPUT_TOKENS") {
        Ok(value) => value.trim().parse().with_context(|| {
            format!("CLAUDE_CODE_MAX_OUTPUT_TOKENS must be a whole number of tokens, not {value:?}")
        })?,
        Err(_) => DEFAULT_MAX_OUTPUT_TOKENS,
    };
    let opened = open_session(args, &cwd, &model)?;
    let resumed = !opened.history.is_empty();
    if args.verbose {
        eprintln!(
            "session {} in {}",
            opened.id,
            opened.transcript_path.display()
        );
    }
    start_cleanup(settings.settings().cleanup_period_days, opened.id);
    let session_id = opened.id.to_string();
    let spill_dir = opened.dir.join("tool-results");
    let permission_mode = if args.dangerously_skip_permissions {
        PermissionMode::BypassPermissions
    } else {
        args.permission_mode
            .or(settings.settings().permissions.default_mode)
            .unwrap_or(PermissionMode::Default)
    };
    let home = std::env::home_dir().context("cannot find the home directory: set HOME")?;
    let mut governance = build_governance(&GovernanceInputs {
        args,
        settings: &settings,
        cwd: &cwd,
        home: &home,
        mode: permission_mode,
        session_id: &session_id,
        transcript_path: &opened.transcript_path,
    })?;
    if let Some((hooks, caller)) = callbacks {
        let built = &governance.governance;
        let runner = built.hooks().as_ref().clone().with_callbacks(hooks, caller);
        governance.governance = cairn_core::Governance::new(
            built.gate().clone(),
            Arc::new(runner),
            built.hook_common().clone(),
        );
    }
    // Where someone answers, "don't ask again" keeps the rule in the project's local settings.
    if broker.can_ask() {
        governance.governance = governance.governance.keeping_rules_in(cwd.clone());
    }
    let mut tool_context = ToolContext::new(cwd.clone());
    // Commands never see a credential, not even one the settings' `env` holds.
    tool_context.env = settings
        .env()
        .clone()
        .into_iter()
        .filter(|(name, _)| !cairn_protocol::is_credential_variable(name.as_ref()))
        .collect();
    tool_context.sandbox = governance.sandbox;
    // Directories the file tools create in cairn's own state (the memory directory) are 0700.
    tool_context.private_dirs = crate::session::cairn_home().into_iter().collect();
    let gate = governance.governance.gate().clone();
    tool_context.workspace_roots = WorkspaceRoots::live(move || gate.workspace_roots());
    let tool_state = tool_context.session.clone();
    // MCP servers are told the workspace and its added directories as their roots.
    let roots_gate = governance.governance.gate().clone();
    let roots = cairn_mcp::Roots::live(move || roots_gate.workspace_roots());
    let (mcp, mcp_warnings) = crate::mcp::start(
        args,
        &settings,
        &cwd,
        &home,
        roots,
        sdk_mcp,
        elicitation.unwrap_or_default(),
    )?;
    let mut registry = ToolRegistry::with_builtins(tool_context);
    // Plan mode hands its plan to whoever approves it; in `-p` nobody does, and the plan is
    // the run's result. The plan file is cairn's own, writable in plan mode: one per project,
    // so the tools' descriptions (and the prompt cache) are the same in every session.
    let plan_file = opened.dir.parent().map(|project| project.join("plan.md"));
    if let Some(file) = &plan_file {
        governance.governance.gate().allow_plan_file(file);
    }
    let handback = if broker.can_ask() {
        PlanHandback::Approved
    } else {
        PlanHandback::EndsTurn
    };
    registry.register_dialog_tools(handback, plan_file);
    // Skills: the model sees their names and descriptions in the Skill tool, and a project's
    // grants no more than the project's settings could (nothing when they are not read).
    let skills = cairn_context::skills::load_skills(&cwd, Some(&home));
    let skill_names: Vec<String> = skills.skills.iter().map(|s| s.name.clone()).collect();
    let skill_warnings: Vec<String> = skills.problems.iter().map(ToString::to_string).collect();
    let project_grants = match args.setting_sources {
        Some(sources) if !sources.project => ProjectGrants::Withheld,
        Some(_) | None => ProjectGrants::Honoured,
    };
    // A skill's `model` holds for the rest of the turn the model loads it in.
    let skill_model = cairn_core::skill::SkillModel::default();
    if let Some(tool) = SkillTool::offered(
        skills,
        governance.governance.gate().clone(),
        project_grants,
        cwd.clone(),
        home.clone(),
    ) {
        registry.register(tool.with_turn_model(skill_model.clone()));
    }
    // Side requests, WebFetch's answers and the Explore role: the provider's small model.
    let small_model = crate::provider::small_model(
        &settings,
        &model,
        run_variable(&settings, SMALL_MODEL_VARIABLE),
    );
    // Every side request of the session's tools and recall counts in its turns' totals.
    let side_tally = cairn_llm::SideTally::default();
    // The web tools follow the built-ins, before any MCP tool a session loads later.
    let builtins = cairn_core::web::with_web_tools(
        Arc::new(registry),
        governance.governance.gate().clone(),
        SideModel::small(provider.client.clone(), small_model.as_deref())
            .with_tally(side_tally.clone()),
    );
    let tools: Arc<dyn ToolExecutor> = crate::mcp::compose_tools(
        builtins,
        mcp.as_ref(),
        provider.client.model_info(&model).context_window,
        &settings,
        &opened.history,
    )?;
    let (tools, offers_agent) = built_in_subset(args.tools.as_deref(), tools)?;
    let mut session = SessionInfo {
        session_id,
        cwd: cwd.display().to_string(),
        model: model.clone(),
        tools: tools.specs().into_iter().map(|spec| spec.name).collect(),
        api_key_source,
        permission_mode: permission_mode.as_str(),
        mcp_servers: Vec::new(),
        // The commands of the one table every face parses with.
        slash_commands: cairn_core::commands::CommandTable::load(&cwd, &home)
            .entries()
            .iter()
            .map(|entry| entry.name.clone())
            .collect(),
        // The sub-agents' names, once their catalog is built below.
        agents: Vec::new(),
        skills: skill_names,
    };
    // Memory: its index goes in the system prompt, its directory is cairn's own state
    // (written without a question), and recall asks a small model beside each message.
    let (memory, memory_warnings) = crate::memory::run_memory(&settings, &cwd);
    let system_prompt = PromptBuilder::new(prompt_options(
        args,
        &cwd,
        &model,
        &settings,
        memory.as_ref(),
    )?);
    let mut instruction_warnings = crate::prompt::instruction_warnings(&system_prompt);
    instruction_warnings.extend(memory_warnings);
    instruction_warnings.extend(mcp_warnings);
    instruction_warnings.extend(skill_warnings);
    let memory_dir = memory.as_ref().map(|memory| memory.directory.clone());
    let status_command = crate::settings::status_command(&settings);
    let (agents, agent_warnings) = agent_catalog(
        args,
        &settings,
        &cwd,
        &home,
        small_model.clone(),
        opened.dir.join("tool-results").join("agents"),
    )?;
    instruction_warnings.extend(agent_warnings);
    if offers_agent {
        session
            .tools
            .insert(0, cairn_core::agent::AGENT_TOOL.to_string());
    }
    session.agents = agents
        .profiles()
        .iter()
        .map(|profile| profile.name.clone())
        .collect();
    let recall = memory.map(|memory| {
        governance
            .governance
            .gate()
            .allow_own_state(&memory.directory);
        let side = SideModel::small(provider.client.clone(), small_model.as_deref())
            .with_tally(side_tally.clone());
        Arc::new(MemoryRecall::new(memory.directory, side)) as Arc<dyn Recall>
    });
    let mut pipeline = StandardPipeline::new(spill_dir);
    // A resumed session's cache is warm or cold as its last answer says.
    if let Some(at) = opened.last_answer_at {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(at);
        pipeline = pipeline.with_last_request_at(at, opened.history.len());
    }
    let config = EngineConfig {
        system_prompt: Arc::new(system_prompt),
        model,
        max_requests: args.max_turns,
        max_output_tokens,
        recall,
        pipeline: Arc::new(
            pipeline
                .with_settings(PipelineSettings::from_env_and_settings(
                    // The run's environment: the settings' `env` over cairn's own.
                    |name| {
                        settings
                            .env()
                            .get(name)
                            .cloned()
                            .or_else(|| std::env::var(name).ok())
                    },
                    &serde_json::Value::Object(settings.raw().clone()),
                ))
                // A resumed session's requests show the view its last run collapsed to.
                .with_collapsed_through(opened.collapsed_through.unwrap_or(0)),
        ),
        governance: governance.governance,
    };
    let client = Arc::clone(&provider.client);
    let approved_plan = opened.approved_plan.clone();
    let host = SessionHost::new(
        SessionParts {
            client: provider.client,
            tools,
            config,
            history: opened.history,
            log: Some(opened.log),
            tool_state,
            agents: offers_agent.then_some(agents),
        },
        broker,
    )
    .with_side_tally(side_tally)
    .with_approved_plan(approved_plan)
    .with_skill_model(skill_model);
    let host = host.with_fallback_model(fallback_model);
    let host = match structured_output {
        Some(output) => {
            session.tools.push(STRUCTURED_OUTPUT_TOOL.to_string());
            host.with_structured_output(output)
        }
        None => host,
    };
    Ok(Prepared {
        unsupported: unsupported_note(&settings),
        settings_sources: settings.sources().iter().map(ToString::to_string).collect(),
        host,
        session,
        resumed,
        cwd,
        home,
        instruction_warnings,
        memory_dir,
        status_command,
        mcp,
        client,
        thinking: provider.thinking,
    })
}
