//! The SDK host as the one who answers: permission questions become `can_use_tool` control
//! requests, and the hooks it registered become `hook_callback` requests.

use std::sync::{Arc, OnceLock};

use cairn_core::SessionInput;
use cairn_policy::hooks::{CallbackFuture, HookCallback};
use cairn_protocol::{
    BoxFuture, EventSender, Op, PermissionAnswer, PermissionBroker, PermissionMode,
    PermissionQuestion,
};
use serde_json::{Value, json};

use super::control::Channel;

/// Asks the SDK host whether a call may run (`--permission-prompt-tool stdio`).
#[derive(Debug)]
pub struct HostBroker {
    channel: Arc<Channel>,
    /// The session's input, once it started: a denial with `interrupt` stops the turn, and
    /// an answer's `setMode` changes the mode.
    input: Arc<OnceLock<SessionInput>>,
}

impl HostBroker {
    pub fn new(channel: Arc<Channel>, input: Arc<OnceLock<SessionInput>>) -> Self {
        HostBroker { channel, input }
    }

    fn send(&self, op: Op) {
        if let Some(input) = self.input.get() {
            let _ = input.send(op);
        }
    }
}

/// A permission answer (`can_use_tool`'s, or a `--permission-prompt-tool`'s) as the gate
/// takes it, and whether it asks to stop the turn (`deny` with `interrupt`). An answer that
/// cannot be read is a refusal that says why, naming `from`, never an allowance.
/// `need_input`: an `allow` must carry `updatedInput` (the MCP tool's contract).
fn read_answer(
    question: &PermissionQuestion,
    answer: &Value,
    from: &str,
    need_input: bool,
) -> (PermissionAnswer, bool) {
    let unreadable = |what: &str| {
        let answer = PermissionAnswer::Deny {
            message: Some(format!(
                "(cairn could not read the answer of {from}, {answer}: {what})"
            )),
        };
        (answer, false)
    };
    match answer.get("behavior").and_then(Value::as_str) {
        Some("allow") => {
            let input = match answer.get("updatedInput") {
                Some(input @ Value::Object(_)) => input.clone(),
                None if !need_input => question.input.clone(),
                _ => return unreadable("an \"allow\" needs \"updatedInput\", an object"),
            };
            let mut rules = Vec::new();
            let mut mode = None;
            for update in answer
                .get("updatedPermissions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match update.get("type").and_then(Value::as_str) {
                    Some("addRules")
                        if update.get("behavior").and_then(Value::as_str) == Some("allow") =>
                    {
                        rules.extend(added_rules(update));
                    }
                    Some("setMode") => {
                        // Set with the answer, so the call itself runs under it.
                        mode = update
                            .get("mode")
                            .and_then(Value::as_str)
                            .and_then(|mode| mode.parse::<PermissionMode>().ok())
                            .or(mode);
                    }
                    _ => {}
                }
            }
            let answer = PermissionAnswer::AllowWith {
                updated_input: Some(input),
                rules,
                mode,
            };
            (answer, false)
        }
        Some("deny") => {
            let interrupt = answer.get("interrupt").and_then(Value::as_bool) == Some(true);
            let answer = PermissionAnswer::Deny {
                message: answer
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            };
            (answer, interrupt)
        }
        _ => unreadable("expected \"behavior\": \"allow\" or \"deny\""),
    }
}

/// The rules of an `addRules` update, in Claude Code's rule syntax.
fn added_rules(update: &Value) -> Vec<String> {
    update
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|rule| {
            let tool = rule.get("toolName")?.as_str()?;
            Some(match rule.get("ruleContent").and_then(Value::as_str) {
                Some(content) => format!("{tool}({content})"),
                None => tool.to_owned(),
            })
        })
        .collect()
}

/// The gate's suggested rule as the SDKs' `permission_suggestions`.
fn suggestions(rule: Option<&str>) -> Value {
    let Some(rule) = rule else {
        return json!([]);
    };
    let (tool, content) = match rule.split_once('(') {
        Some((tool, rest)) => (tool, rest.strip_suffix(')')),
        None => (rule, None),
    };
    let mut entry = json!({"toolName": tool});
    if let Some(content) = content {
        entry["ruleContent"] = json!(content);
    }
    json!([{"type": "addRules", "rules": [entry], "behavior": "allow", "destination": "session"}])
}

impl PermissionBroker for HostBroker {
    fn ask<'a>(
        &'a self,
        question: PermissionQuestion,
        _events: &'a EventSender,
    ) -> BoxFuture<'a, Option<PermissionAnswer>> {
        Box::pin(async move {
            let request = json!({
                "subtype": "can_use_tool",
                "tool_name": question.tool,
                "input": question.input,
                "tool_use_id": question.tool_use_id,
                "permission_suggestions": suggestions(question.suggested_rule.as_deref()),
                "blocked_path": null,
                "decision_reason": question.reason,
                "agent_id": null,
            });
            match self.channel.request(request).await {
                Ok(answer) => {
                    let (answer, interrupt) =
                        read_answer(&question, &answer, "the SDK host's can_use_tool", false);
                    if interrupt {
                        self.send(Op::Interrupt);
                    }
                    Some(answer)
                }
                Err(error) => Some(PermissionAnswer::Deny {
                    message: Some(format!("(cairn could not ask the SDK host: {error})")),
                }),
            }
        })
    }

    fn can_ask(&self) -> bool {
        true
    }
}

/// Asks an MCP tool whether a call may run (`--permission-prompt-tool mcp__<server>__<tool>`,
/// Claude Code's contract): the tool is called with `{tool_name, input, tool_use_id}` and its
/// text result read as JSON, `{"behavior": "allow", "updatedInput": {…}}` (what runs) or
/// `{"behavior": "deny", "message": "…"}`. Anything else — no such tool, an error result, text
/// that is not that JSON — is a refusal that says what was wrong.
#[derive(Debug)]
pub struct McpToolBroker {
    tool: String,
    /// The run's MCP servers, once they started.
    mcp: Arc<OnceLock<Arc<cairn_mcp::McpTools>>>,
}

impl McpToolBroker {
    pub fn new(tool: String, mcp: Arc<OnceLock<Arc<cairn_mcp::McpTools>>>) -> Self {
        McpToolBroker { tool, mcp }
    }

    async fn answer(
        &self,
        question: &PermissionQuestion,
        events: &EventSender,
    ) -> Result<PermissionAnswer, String> {
        use cairn_tools::ToolExecutor;
        let from = format!("the --permission-prompt-tool {}", self.tool);
        let mcp = self
            .mcp
            .get()
            .ok_or_else(|| format!("{from} names an MCP tool, but no MCP server is configured"))?;
        let call = cairn_tools::ToolCall {
            id: question.tool_use_id.clone(),
            name: self.tool.clone(),
            input: json!({
                "tool_name": question.tool,
                "input": question.input,
                "tool_use_id": question.tool_use_id,
            }),
        };
        let prepared = mcp.try_prepare(&call).map_err(|error| match error {
            cairn_tools::PrepareError::UnknownTool { .. } => {
                let servers: Vec<String> = mcp
                    .reports()
                    .into_iter()
                    .map(|report| report.name)
                    .collect();
                format!(
                    "{from} is not a tool of the MCP servers ({}); it must be named \
                     mcp__<server>__<tool>",
                    servers.join(", ")
                )
            }
            other => format!("{from} does not take the question: {other}"),
        })?;
        let cx = cairn_tools::CallContext {
            cancel: tokio_util::sync::CancellationToken::new(),
            events: events.clone(),
            permissions: Arc::new(cairn_protocol::NobodyToAsk),
        };
        let output = mcp.execute(&prepared, &cx).await;
        let text = match &output.content {
            cairn_protocol::ToolResultContent::Text(text) => text.clone(),
            cairn_protocol::ToolResultContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(|block| match block {
                    cairn_protocol::ToolResultBlock::Text { text } => Some(text.as_str()),
                    cairn_protocol::ToolResultBlock::Image { .. } => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        };
        if output.is_error {
            return Err(format!("{from} failed: {text}"));
        }
        let answer: Value = serde_json::from_str(text.trim()).map_err(|err| {
            format!(
                "{from} answered {text:?}, which is not JSON ({err}); expected \
                 {{\"behavior\": \"allow\", \"updatedInput\": {{…}}}} or \
                 {{\"behavior\": \"deny\", \"message\": \"…\"}}"
            )
        })?;
        Ok(read_answer(question, &answer, &from, true).0)
    }
}

impl PermissionBroker for McpToolBroker {
    fn ask<'a>(
        &'a self,
        question: PermissionQuestion,
        events: &'a EventSender,
    ) -> BoxFuture<'a, Option<PermissionAnswer>> {
        Box::pin(async move {
            Some(
                self.answer(&question, events)
                    .await
                    .unwrap_or_else(|message| PermissionAnswer::Deny {
                        message: Some(format!("({message})")),
                    }),
            )
        })
    }

    fn can_ask(&self) -> bool {
        true
    }
}

/// The broker `--permission-prompt-tool` asks for outside the SDK's `stdio`: an MCP tool's,
/// whose servers go in `mcp` once they started; `None` without the flag.
pub fn prompt_tool_broker(
    value: Option<&str>,
    mcp: &Arc<OnceLock<Arc<cairn_mcp::McpTools>>>,
) -> Option<Arc<dyn PermissionBroker>> {
    let tool = value?;
    Some(Arc::new(McpToolBroker::new(tool.to_owned(), mcp.clone())))
}

/// Answers the hooks the host registered in `initialize` with `hook_callback` requests.
#[derive(Debug)]
pub struct HostHooks {
    channel: Arc<Channel>,
}

impl HostHooks {
    pub fn new(channel: Arc<Channel>) -> Self {
        HostHooks { channel }
    }
}

impl HookCallback for HostHooks {
    fn call<'a>(
        &'a self,
        callback_id: &'a str,
        input: &'a Value,
        tool_use_id: Option<&'a str>,
    ) -> CallbackFuture<'a> {
        Box::pin(async move {
            self.channel
                .request(json!({
                    "subtype": "hook_callback",
                    "callback_id": callback_id,
                    "input": input,
                    "tool_use_id": tool_use_id,
                }))
                .await
                .map_err(|error| error.to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn suggested_rules_become_add_rules_updates_and_back() {
        let suggested = suggestions(Some("Bash(npm test:*)"));
        assert_eq!(
            suggested,
            json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
                    "behavior": "allow", "destination": "session"}])
        );
        assert_eq!(
            added_rules(&suggested[0]),
            vec!["Bash(npm test:*)".to_owned()]
        );
        assert_eq!(
            added_rules(&suggestions(Some("Write"))[0]),
            vec!["Write".to_owned()]
        );
    }
}

/// Carries JSON-RPC to the host's in-process MCP servers in `mcp_message` requests.
#[derive(Debug)]
pub struct HostMcp {
    channel: Arc<Channel>,
}

impl HostMcp {
    pub fn new(channel: Arc<Channel>) -> Self {
        HostMcp { channel }
    }
}

impl cairn_mcp::SdkMcpChannel for HostMcp {
    fn exchange(&self, server: &str, message: Value) -> cairn_mcp::ExchangeFuture {
        let channel = self.channel.clone();
        let request = json!({"subtype": "mcp_message", "server_name": server, "message": message});
        Box::pin(async move {
            let answer = channel
                .request(request)
                .await
                .map_err(|error| error.to_string())?;
            answer
                .get("mcp_response")
                .cloned()
                .ok_or_else(|| format!("the mcp_message answer has no \"mcp_response\": {answer}"))
        })
    }
}
