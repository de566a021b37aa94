//! The host's control requests: `initialize`, `interrupt`, the mode and model switches, the
//! reports, reconnecting and toggling MCP servers, and an `error` answer for what cairn
//! cannot do, after which the session goes on.

use cairn_llm::models;
use cairn_policy::hooks::CallbackHooks;
use cairn_protocol::{Op, PermissionMode};
use serde_json::{Map, Value, json};

use super::SdkFace;

/// Answers cairn gives to requests for what it has not got, named by their subtype.
const NOT_SUPPORTED: &[(&str, &str)] = &[(
    "rewind_files",
    "not supported: cairn does not checkpoint files, so there is nothing to rewind to",
)];

impl SdkFace {
    /// Answers one control request of the host: its `response`, or the error to send.
    pub(super) async fn host_request(&mut self, request: &Value) -> Result<Value, String> {
        let Some(subtype) = request.get("subtype").and_then(Value::as_str) else {
            return Err("the control request has no \"subtype\"".to_owned());
        };
        match subtype {
            "initialize" => self.initialize(request).await,
            "interrupt" => {
                if let Some(running) = &self.running {
                    let _ = running.input.send(Op::Interrupt);
                }
                Ok(json!({}))
            }
            "set_permission_mode" => {
                let mode = request
                    .get("mode")
                    .and_then(Value::as_str)
                    .ok_or("set_permission_mode needs a \"mode\"")?;
                let mode: PermissionMode = mode.parse().map_err(|_| {
                    format!(
                        "unknown permission mode {mode:?} (expected default, acceptEdits, plan, \
                         bypassPermissions or dontAsk)"
                    )
                })?;
                self.start_session().await?;
                self.send(Op::SetPermissionMode { mode })?;
                Ok(json!({}))
            }
            "set_model" => {
                let model = match request.get("model") {
                    Some(Value::String(model)) => models::resolve_model(model),
                    None | Some(Value::Null) => models::DEFAULT_MODEL.to_owned(),
                    Some(_) => return Err("set_model's \"model\" must be a string".to_owned()),
                };
                self.start_session().await?;
                self.send(Op::SetModel { model })?;
                Ok(json!({}))
            }
            "set_max_thinking_tokens" => {
                let max = match request.get("max_thinking_tokens") {
                    None | Some(Value::Null) => None,
                    Some(value) => Some(
                        value
                            .as_u64()
                            .and_then(|tokens| u32::try_from(tokens).ok())
                            .ok_or_else(|| {
                                format!(
                                    "set_max_thinking_tokens's \"max_thinking_tokens\" must be \
                                     a number of tokens or null, not {value}"
                                )
                            })?,
                    ),
                };
                self.start_session().await?;
                let running = self.running.as_ref().ok_or("no session")?;
                running.thinking.set_max_tokens(max);
                Ok(json!({}))
            }
            "stop_task" => {
                let id = request
                    .get("task_id")
                    .and_then(Value::as_str)
                    .ok_or("stop_task needs a \"task_id\"")?;
                self.start_session().await?;
                let running = self.running.as_ref().ok_or("no session")?;
                running.session.background_shells().stop(id)?;
                Ok(json!({}))
            }
            "get_context_usage" => {
                self.start_session().await?;
                let running = self.running.as_ref().ok_or("no session")?;
                let window = running
                    .client
                    .model_info(&running.info.model)
                    .context_window;
                let percentage = window.map(|window| {
                    (running.context_tokens as f64 * 100.0 / window as f64 * 10.0).round() / 10.0
                });
                Ok(json!({
                    "totalTokens": running.context_tokens,
                    "maxTokens": window,
                    "percentage": percentage,
                    "model": running.info.model,
                    "categories": [],
                }))
            }
            "mcp_status" => {
                self.start_session().await?;
                let running = self.running.as_ref().ok_or("no session")?;
                let servers: Vec<Value> = running
                    .mcp
                    .iter()
                    .flat_map(|mcp| mcp.reports())
                    .map(|report| {
                        let mut server = json!({
                            "name": report.name,
                            "status": report.status.as_str(),
                            "scope": report.scope.as_str(),
                        });
                        if let cairn_mcp::Status::Failed(reason) = &report.status {
                            server["error"] = json!(reason);
                        }
                        server
                    })
                    .collect();
                Ok(json!({"mcpServers": servers}))
            }
            "mcp_reconnect" | "mcp_toggle" => {
                let server = request
                    .get("serverName")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("{subtype} needs a \"serverName\""))?;
                let enabled = match (subtype, request.get("enabled")) {
                    ("mcp_toggle", Some(Value::Bool(enabled))) => Some(*enabled),
                    ("mcp_toggle", _) => {
                        return Err("mcp_toggle needs \"enabled\": true or false".to_owned());
                    }
                    _ => None,
                };
                self.start_session().await?;
                let running = self.running.as_ref().ok_or("no session")?;
                let mcp = running.mcp.as_ref().ok_or_else(|| {
                    format!("No MCP server is named \"{server}\": no MCP servers are configured")
                })?;
                let status = match enabled {
                    None => mcp.reconnect(server).await?,
                    Some(enabled) => {
                        let (status, unsaved) = mcp.set_enabled(server, enabled).await?;
                        if let Some(unsaved) = unsaved {
                            eprintln!("warning: mcp_toggle {server}: {unsaved}");
                        }
                        status
                    }
                };
                // A reconnect that ends in a failure is the host's error to see.
                match status {
                    cairn_mcp::Status::Failed(reason) => Err(format!(
                        "the MCP server \"{server}\" failed to start: {reason}"
                    )),
                    _ => Ok(json!({})),
                }
            }
            other => match NOT_SUPPORTED.iter().find(|(name, _)| *name == other) {
                Some((_, why)) => Err(format!("{other}: {why}")),
                None => Err(format!("unsupported control request subtype: {other}")),
            },
        }
    }

    fn send(&self, op: Op) -> Result<(), String> {
        let running = self.running.as_ref().ok_or("no session")?;
        running
            .input
            .send(op)
            .map_err(|_| "the engine has stopped".to_owned())
    }

    /// `initialize`: takes the host's hooks, agents and system prompt into the session it
    /// builds now, and answers with what the session offers.
    async fn initialize(&mut self, request: &Value) -> Result<Value, String> {
        if self.running.is_some() || self.setup_error.is_some() {
            return Err("already initialized: initialize comes once, before any message".into());
        }
        let (hooks, problems) =
            CallbackHooks::from_registration(request.get("hooks").unwrap_or(&Value::Null));
        for problem in problems {
            eprintln!("warning: initialize: {problem} (this hook is ignored)");
        }
        self.hooks = hooks;
        if let Some(agents) = request.get("agents").filter(|agents| !agents.is_null()) {
            let Value::Object(added) = agents else {
                return Err(
                    "initialize's \"agents\" must be an object of agent definitions".into(),
                );
            };
            let mut merged = match self.args.agents.as_deref().map(serde_json::from_str) {
                Some(Ok(Value::Object(existing))) => existing,
                Some(_) | None => Map::new(),
            };
            merged.extend(added.clone());
            self.args.agents = Some(Value::Object(merged).to_string());
        }
        if let Some(prompt) = request.get("systemPrompt").and_then(Value::as_str) {
            self.args.system_prompt = Some(prompt.to_owned());
        }
        if let Some(append) = request.get("appendSystemPrompt").and_then(Value::as_str) {
            self.args.append_system_prompt = Some(append.to_owned());
        }
        self.start_session().await?;
        let running = self.running.as_ref().ok_or("no session")?;
        let commands: Vec<Value> = running
            .commands
            .iter()
            .map(|entry| {
                json!({
                    "name": entry.name,
                    "description": entry.description,
                    "argumentHint": entry.argument_hint.clone().unwrap_or_default(),
                })
            })
            .collect();
        let agents: Vec<Value> = running
            .agents
            .iter()
            .map(|(name, description)| json!({"name": name, "description": description}))
            .collect();
        let models: Vec<Value> = models::ALIASES
            .iter()
            .map(|(alias, id)| {
                json!({
                    "value": alias,
                    "displayName": models::display_name(id),
                    "description": id,
                })
            })
            .collect();
        Ok(json!({
            "commands": commands,
            "agents": agents,
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": models,
            "account": {},
            "pid": std::process::id(),
        }))
    }
}
