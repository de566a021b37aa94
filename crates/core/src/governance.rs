//! What stands between a tool call and its execution: the check that it can work at all,
//! PreToolUse hooks, the permission gate, and the user's answer when the gate asks; and the
//! hooks after a call.

use std::sync::Arc;

use cairn_policy::hooks::{HookCommon, HookEvent, HookOutcome, HookPermission, HookRunner};
use cairn_policy::{CallInfo, PermissionGate, Verdict};
use cairn_protocol::{
    AgentEvent, DecisionSource, EventSender, PermissionAnswer, PermissionBroker,
    PermissionDecision, PermissionMode, PermissionQuestion, ToolResultBlock, ToolResultContent,
};
use cairn_tools::{
    Access, Assurance, Destructiveness, PreparedCall, Reach, ToolCall, ToolExecutor, ToolOutput,
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// What the gate judges of a prepared call.
/// Attributes the tool's provider only claims (an MCP server's `readOnlyHint`) never make a
/// call read-only here: such a call asks unless a rule allows it.
/// `broker` says whether anyone can answer a question about it.
fn call_info<'a>(
    call: &'a PreparedCall,
    tools: &dyn ToolExecutor,
    broker: &dyn PermissionBroker,
) -> CallInfo<'a> {
    CallInfo {
        tool: &call.name,
        input: &call.input,
        paths: &call.paths,
        read_only: call.safety.access == Access::ReadOnly
            && tools.assurance(call) == Assurance::Checked,
        destructive: call.safety.destructive == Destructiveness::Destructive,
        asking: if broker.can_ask() {
            cairn_policy::Asking::Interactive
        } else {
            cairn_policy::Asking::NonInteractive
        },
    }
}

/// The gate's reason for a call whose attributes its provider only claims (an MCP tool),
/// worded from those attributes: the gate judged it as a change in the workspace (the claim
/// is not taken at its word), which is not what such a call does.
fn claimed_reason(verdict: Verdict, call: &PreparedCall, tools: &dyn ToolExecutor) -> Verdict {
    if tools.assurance(call) != Assurance::Claimed {
        return verdict;
    }
    let judged = format!("{} changes files in the workspace.", call.name);
    let claim = match (call.safety.access, call.safety.destructive) {
        (Access::ReadOnly, _) => "says it only reads",
        (Access::Writes, Destructiveness::Destructive) => "says it may change or delete things",
        (Access::Writes, Destructiveness::Harmless) => {
            "says it changes things, without destroying any"
        }
    };
    let reach = match tools.reach(call) {
        Reach::OpenWorld => ", and it may reach outside this machine",
        Reach::Local => "",
    };
    let worded = format!(
        "{} comes from an MCP server, which {claim}{reach}; cairn cannot check that.",
        call.name
    );
    let reword = |reason: String| match reason.strip_prefix(&judged) {
        Some(rest) => format!("{worded}{rest}"),
        None => reason,
    };
    match verdict {
        Verdict::Ask {
            reason,
            suggested_rule,
        } => Verdict::Ask {
            reason: reword(reason),
            suggested_rule,
        },
        Verdict::Deny {
            source,
            rule,
            reason,
        } => Verdict::Deny {
            source,
            rule,
            reason: reword(reason),
        },
        allow @ Verdict::Allow { .. } => allow,
    }
}

/// Who and what a question about a call goes through.
struct Asking<'a> {
    tools: &'a Arc<dyn ToolExecutor>,
    broker: &'a dyn PermissionBroker,
    events: &'a EventSender,
    cancel: &'a CancellationToken,
}

/// The governance of one session: the permission gate, the hooks and the fields every hook
/// input carries. Every engine has one, and there is no default that would allow every call:
/// a face builds it from the session's settings, and a nested engine (a sub-agent) gets its
/// parent's through the session host's spawner. A session without hooks has a runner with an
/// empty configuration, so a hook runner cannot be forgotten.
#[derive(Debug, Clone)]
pub struct Governance {
    gate: Arc<PermissionGate>,
    hooks: Arc<HookRunner>,
    hook_common: HookCommon,
    /// The project whose `.claude/settings.local.json` keeps the rules the user allows for
    /// good; `None` keeps them for the session only.
    rules_kept_in: Option<std::path::PathBuf>,
    /// The widest mode this engine's calls are judged by (a sub-agent's `permissionMode`):
    /// the gate's mode when it is narrower, this one otherwise. `None` for the gate's mode.
    mode_ceiling: Option<PermissionMode>,
}

/// How much a mode lets run without a question, narrowest first: `plan` refuses every
/// change, `dontAsk` refuses what no rule allows, `default` asks, `acceptEdits` lets edits
/// run, `bypassPermissions` lets everything run.
fn breadth(mode: PermissionMode) -> u8 {
    match mode {
        PermissionMode::Plan => 0,
        PermissionMode::DontAsk => 1,
        PermissionMode::Default => 2,
        PermissionMode::AcceptEdits => 3,
        PermissionMode::BypassPermissions => 4,
    }
}

impl Governance {
    /// The governance of a session judged by `gate`, whose hooks `hooks` runs with
    /// `hook_common` in every input. "Don't ask again" keeps its rules for the session only
    /// until [`Governance::keeping_rules_in`] names a project.
    pub fn new(gate: Arc<PermissionGate>, hooks: Arc<HookRunner>, hook_common: HookCommon) -> Self {
        Governance {
            gate,
            hooks,
            hook_common,
            rules_kept_in: None,
            mode_ceiling: None,
        }
    }

    /// This governance with calls judged by `mode` where it is narrower than the mode in
    /// force, never by a wider one: a sub-agent whose file asks for `plan` plans under a
    /// `default` parent, one that asks for `bypassPermissions` runs in `default` there. The
    /// gate, its rules and the hooks stay the parent's.
    pub fn narrowed_to(mut self, mode: PermissionMode) -> Self {
        let ceiling = match self.mode_ceiling {
            Some(before) if breadth(before) < breadth(mode) => before,
            Some(_) | None => mode,
        };
        self.mode_ceiling = Some(ceiling);
        self
    }

    /// The mode this engine's calls are judged by now: the gate's, narrowed by
    /// [`Governance::narrowed_to`].
    pub fn mode(&self) -> PermissionMode {
        let mode = self.gate.mode();
        match self.mode_ceiling {
            Some(ceiling) if breadth(ceiling) < breadth(mode) => ceiling,
            Some(_) | None => mode,
        }
    }

    /// Keeps the rules the user allows for good in `project`'s `.claude/settings.local.json`
    /// (where someone answers questions; in `-p` nobody can say "don't ask again").
    pub fn keeping_rules_in(mut self, project: std::path::PathBuf) -> Self {
        self.rules_kept_in = Some(project);
        self
    }

    /// The permission gate: its mode, rules and workspace, shared by every engine of the
    /// session.
    pub fn gate(&self) -> &Arc<PermissionGate> {
        &self.gate
    }

    /// The hook runner (its configuration may be empty).
    pub fn hooks(&self) -> &Arc<HookRunner> {
        &self.hooks
    }

    /// The fields every hook input carries (session id, transcript, directory, mode).
    pub fn hook_common(&self) -> &HookCommon {
        &self.hook_common
    }

    fn runner(&self, event: HookEvent) -> Option<(&HookRunner, &HookCommon)> {
        self.hooks
            .has_hooks(event)
            .then_some((self.hooks.as_ref(), &self.hook_common))
    }

    /// Runs the hooks of `event` (if any are configured) and reports their messages.
    pub async fn run_hooks(
        &self,
        event: HookEvent,
        subject: Option<&str>,
        input: Map<String, Value>,
        events: &EventSender,
        cancel: &CancellationToken,
    ) -> Option<HookOutcome> {
        let (runner, common) = self.runner(event)?;
        let outcome = runner.run(event, subject, common, input, cancel).await;
        for message in outcome.system_messages.iter().chain(&outcome.warnings) {
            events.emit(AgentEvent::Warning {
                message: format!("{} hook: {message}", event.as_str()),
            });
        }
        Some(outcome)
    }

    /// Decides whether `call` may run. Plan mode's refusal comes first, before anything
    /// else is checked. Then whether the call can work at all: a call bound to fail
    /// (an Edit whose `old_string` occurs 39 times, a Write of a file not read) fails here
    /// with its error, before any hook runs or anyone is asked. Then hooks (which may rewrite
    /// its input), the gate, and the user. Returns the call to run, or the error or refusal
    /// to send to the model.
    pub async fn authorize(
        &self,
        tools: &Arc<dyn ToolExecutor>,
        mut call: PreparedCall,
        broker: &dyn PermissionBroker,
        events: &EventSender,
        cancel: &CancellationToken,
    ) -> Result<PreparedCall, ToolOutput> {
        // In plan mode a change is refused before anything else: checking whether it could
        // work ("read the file first") would invite a retry that plan mode refuses anyway.
        if let Some(Verdict::Deny {
            source,
            rule,
            reason,
        }) = self
            .gate
            .plan_mode_refusal_in(&call_info(&call, tools.as_ref(), broker), self.mode())
        {
            return Err(self.refuse(&call, source, rule, reason, events));
        }
        self.validate(tools, &call, broker).await?;
        let mut hook_permission = None;
        let mut input = Map::new();
        input.insert("tool_name".into(), json!(call.name));
        input.insert("tool_input".into(), call.input.clone());
        input.insert("tool_use_id".into(), json!(call.id));
        if let Some(outcome) = self
            .run_hooks(
                HookEvent::PreToolUse,
                Some(&call.name),
                input,
                events,
                cancel,
            )
            .await
        {
            if let Some(message) = outcome.block {
                return Err(self.refuse(
                    &call,
                    DecisionSource::Hook,
                    None,
                    format!("A PreToolUse hook blocked this call: {message}"),
                    events,
                ));
            }
            if let Some(updated) = outcome.updated_input {
                let rewritten = ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    input: updated,
                };
                call = tools.prepare(&rewritten)?;
                self.validate(tools, &call, broker).await?;
            }
            hook_permission = outcome.permission;
        }

        let verdict = claimed_reason(
            self.gate
                .check_in(&call_info(&call, tools.as_ref(), broker), self.mode()),
            &call,
            tools.as_ref(),
        );
        // A deny rule beats whatever a hook said; otherwise the hook decides when it spoke.
        let verdict = match (verdict, hook_permission) {
            (
                deny @ Verdict::Deny {
                    source: DecisionSource::Rule,
                    ..
                },
                _,
            ) => deny,
            (_, Some((HookPermission::Deny, reason))) => Verdict::Deny {
                source: DecisionSource::Hook,
                rule: None,
                reason: format!(
                    "A PreToolUse hook denied this call: {}",
                    reason.unwrap_or_else(|| "no reason given".into())
                ),
            },
            (_, Some((HookPermission::Allow, _))) => Verdict::Allow {
                source: DecisionSource::Hook,
                rule: None,
            },
            (Verdict::Allow { .. }, Some((HookPermission::Ask, reason))) => Verdict::Ask {
                reason: reason.unwrap_or_else(|| "A PreToolUse hook asks before this call.".into()),
                suggested_rule: Some(call.name.clone()),
            },
            (verdict, _) => verdict,
        };

        // A question (or a refusal only because nobody can be asked) first goes to the
        // PermissionRequest hooks, which may answer it.
        let verdict = match verdict {
            Verdict::Ask { .. }
            | Verdict::Deny {
                source: DecisionSource::NonInteractive,
                ..
            } => match self.permission_request_hooks(&call, events, cancel).await {
                Some(answer) => answer,
                None => verdict,
            },
            other => other,
        };

        match verdict {
            Verdict::Allow { source, rule } => {
                events.emit(AgentEvent::PermissionDecided(PermissionDecision {
                    tool_use_id: call.id.clone(),
                    tool: call.name.clone(),
                    allowed: true,
                    source,
                    rule,
                    reason: None,
                    input: call.input.clone(),
                }));
                Ok(call)
            }
            Verdict::Deny {
                source,
                rule,
                reason,
            } => Err(self.refuse(&call, source, rule, reason, events)),
            Verdict::Ask {
                reason,
                suggested_rule,
            } => {
                let asking = Asking {
                    tools,
                    broker,
                    events,
                    cancel,
                };
                self.ask_user(call, reason, suggested_rule, asking).await
            }
        }
    }

    /// Whether `call` can work at all ([`ToolExecutor::validate`]), as Claude Code checks a
    /// call's input before its hooks and permission question. A call a deny rule refuses is
    /// not checked: its answer is the refusal, which tells the model no more about the paths
    /// it names (whether a file exists, whether it was read) than the rule allows.
    async fn validate(
        &self,
        tools: &Arc<dyn ToolExecutor>,
        call: &PreparedCall,
        broker: &dyn PermissionBroker,
    ) -> Result<(), ToolOutput> {
        let denied_by_rule = matches!(
            self.gate
                .check_in(&call_info(call, tools.as_ref(), broker), self.mode()),
            Verdict::Deny {
                source: DecisionSource::Rule,
                ..
            }
        );
        if denied_by_rule {
            return Ok(());
        }
        tools.validate(call).await
    }

    /// What PermissionRequest hooks decide, if any of them decides.
    async fn permission_request_hooks(
        &self,
        call: &PreparedCall,
        events: &EventSender,
        cancel: &CancellationToken,
    ) -> Option<Verdict> {
        let mut input = Map::new();
        input.insert("tool_name".into(), json!(call.name));
        input.insert("tool_input".into(), call.input.clone());
        input.insert("tool_use_id".into(), json!(call.id));
        let outcome = self
            .run_hooks(
                HookEvent::PermissionRequest,
                Some(&call.name),
                input,
                events,
                cancel,
            )
            .await?;
        if let Some(message) = outcome.block {
            return Some(Verdict::Deny {
                source: DecisionSource::Hook,
                rule: None,
                reason: format!("A PermissionRequest hook denied this call: {message}"),
            });
        }
        match outcome.permission {
            Some((HookPermission::Allow, _)) => Some(Verdict::Allow {
                source: DecisionSource::Hook,
                rule: None,
            }),
            Some((HookPermission::Deny, reason)) => Some(Verdict::Deny {
                source: DecisionSource::Hook,
                rule: None,
                reason: format!(
                    "A PermissionRequest hook denied this call: {}",
                    reason.unwrap_or_else(|| "no reason given".into())
                ),
            }),
            Some((HookPermission::Ask, _)) | None => None,
        }
    }

    async fn ask_user(
        &self,
        call: PreparedCall,
        reason: String,
        suggested_rule: Option<String>,
        asking: Asking<'_>,
    ) -> Result<PreparedCall, ToolOutput> {
        let Asking {
            tools,
            broker,
            events,
            cancel,
        } = asking;
        let question = PermissionQuestion {
            tool_use_id: call.id.clone(),
            tool: call.name.clone(),
            input: call.input.clone(),
            reason,
            suggested_rule,
        };
        // Dropping the question (an interrupt) withdraws it.
        let answer = tokio::select! {
            answer = broker.ask(question, events) => answer,
            _ = cancel.cancelled() => None,
        };
        match answer {
            Some(PermissionAnswer::AllowOnce) => {
                self.record_allow(&call, None, events);
                Ok(call)
            }
            Some(PermissionAnswer::AllowForSession { rule }) => {
                self.allow_for_session(&rule, events);
                self.record_allow(&call, Some(rule), events);
                Ok(call)
            }
            Some(PermissionAnswer::AllowAlways { rule }) => {
                if self.allow_for_session(&rule, events) {
                    self.keep_rule(&rule, events);
                }
                self.record_allow(&call, Some(rule), events);
                Ok(call)
            }
            Some(PermissionAnswer::AllowWith {
                updated_input,
                rules,
                mode,
            }) => {
                // The answerer's input (a question's answers) is the call that runs; it must
                // still fit the tool, and the gate judges it as it would any call.
                let call = match updated_input {
                    Some(input) => {
                        self.answered_call(tools, call, input, broker, events)
                            .await?
                    }
                    None => call,
                };
                for rule in &rules {
                    self.allow_for_session(rule, events);
                }
                if let Some(mode) = mode {
                    self.gate.set_mode(mode);
                    events.emit(AgentEvent::PermissionModeChanged { mode });
                }
                self.record_allow(&call, rules.into_iter().next(), events);
                Ok(call)
            }
            Some(PermissionAnswer::Deny { message }) => {
                let mut reason = "The user denied this tool call.".to_string();
                if let Some(message) = message.filter(|m| !m.trim().is_empty()) {
                    reason.push_str(&format!(" They said: {message}"));
                }
                Err(self.refuse(&call, DecisionSource::User, None, reason, events))
            }
            None if cancel.is_cancelled() => Err(self.refuse(
                &call,
                DecisionSource::User,
                None,
                "The user interrupted before answering whether this call may run.".into(),
                events,
            )),
            None => Err(self.refuse(
                &call,
                DecisionSource::NonInteractive,
                None,
                "This call needs approval and nobody could be asked, so it was refused.".into(),
                events,
            )),
        }
    }

    /// The call with the input the answerer gave it, prepared and validated again; a deny
    /// rule on the new input still refuses it.
    async fn answered_call(
        &self,
        tools: &Arc<dyn ToolExecutor>,
        call: PreparedCall,
        input: Value,
        broker: &dyn PermissionBroker,
        events: &EventSender,
    ) -> Result<PreparedCall, ToolOutput> {
        let answered = tools.prepare(&ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            input,
        })?;
        self.validate(tools, &answered, broker).await?;
        if let Verdict::Deny {
            source: DecisionSource::Rule,
            rule,
            reason,
        } = self
            .gate
            .check(&call_info(&answered, tools.as_ref(), broker))
        {
            return Err(self.refuse(&answered, DecisionSource::Rule, rule, reason, events));
        }
        Ok(answered)
    }

    /// "Yes, during this session": the rule holds until the session ends. A rule the gate
    /// cannot take is a warning (the call itself is allowed); returns whether it took it.
    fn allow_for_session(&self, rule: &str, events: &EventSender) -> bool {
        if let Err(err) = self.gate.allow_for_session(rule) {
            events.emit(AgentEvent::Warning {
                message: format!("{err}; allowed this once only"),
            });
            return false;
        }
        true
    }

    /// "Yes, and don't ask again" (after [`Governance::allow_for_session`]): where the face
    /// keeps rules ([`Governance::rules_kept_in`]), the rule is also saved in the project's
    /// local settings for later sessions. Failing to save it is a warning.
    fn keep_rule(&self, rule: &str, events: &EventSender) {
        let Some(project) = &self.rules_kept_in else {
            return;
        };
        let rules = cairn_policy::rules::split_rule_list(rule);
        match cairn_config::rules_file::save_allow_rules(project, &rules) {
            // Kept in the file now: `/permissions` says so, not "this session".
            Ok(file) => {
                let origin = cairn_policy::rules::RuleOrigin::new(
                    file.display().to_string(),
                    project.clone(),
                );
                for rule in &rules {
                    // It parsed when it was allowed for the session, so it parses again.
                    let _ = self.gate.keep_session_rule(rule, origin.clone());
                }
            }
            Err(err) => events.emit(AgentEvent::Warning {
                message: err.to_string(),
            }),
        }
    }

    fn record_allow(&self, call: &PreparedCall, rule: Option<String>, events: &EventSender) {
        events.emit(AgentEvent::PermissionDecided(PermissionDecision {
            tool_use_id: call.id.clone(),
            tool: call.name.clone(),
            allowed: true,
            source: DecisionSource::User,
            rule,
            reason: None,
            input: call.input.clone(),
        }));
    }

    fn refuse(
        &self,
        call: &PreparedCall,
        source: DecisionSource,
        rule: Option<String>,
        reason: String,
        events: &EventSender,
    ) -> ToolOutput {
        events.emit(AgentEvent::PermissionDecided(PermissionDecision {
            tool_use_id: call.id.clone(),
            tool: call.name.clone(),
            allowed: false,
            source,
            rule,
            reason: Some(reason.clone()),
            input: call.input.clone(),
        }));
        ToolOutput::error(reason)
    }

    /// PostToolUse (or PostToolUseFailure) hooks; what they say for the model is added to
    /// the result.
    pub async fn after_call(
        &self,
        call: &PreparedCall,
        output: &mut ToolOutput,
        events: &EventSender,
        cancel: &CancellationToken,
    ) {
        let event = if output.is_error {
            HookEvent::PostToolUseFailure
        } else {
            HookEvent::PostToolUse
        };
        let mut input = Map::new();
        input.insert("tool_name".into(), json!(call.name));
        input.insert("tool_input".into(), call.input.clone());
        input.insert("tool_use_id".into(), json!(call.id));
        let response = output.content.text();
        if output.is_error {
            input.insert("error".into(), json!(response));
        } else {
            input.insert("tool_response".into(), json!(response));
        }
        let Some(outcome) = self
            .run_hooks(event, Some(&call.name), input, events, cancel)
            .await
        else {
            return;
        };
        let mut notes: Vec<String> = outcome.additional_context;
        if let Some(block) = outcome.block {
            notes.insert(0, format!("A {} hook says: {block}", event.as_str()));
        }
        if notes.is_empty() {
            return;
        }
        let notes = notes.join("\n");
        match &mut output.content {
            ToolResultContent::Text(text) => {
                text.push_str("\n\n");
                text.push_str(&notes);
            }
            ToolResultContent::Blocks(blocks) => blocks.push(ToolResultBlock::Text { text: notes }),
        }
    }
}
