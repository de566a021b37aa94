//! Running the hooks of an event: choosing them, giving them their input, running them
//! together and folding their answers.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::join_all;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::callback::{CallbackHooks, HookCallback};
use super::config::HookConfig;
use super::event::HookEvent;
use super::output::HookOutcome;
use super::process::run_command;

/// The fields every hook's input carries, whatever the event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookCommon {
    /// The session's id.
    pub session_id: String,
    /// Path of the session's transcript file.
    pub transcript_path: String,
    /// The session's working directory.
    pub cwd: String,
    /// The permission mode in Claude Code's spelling (`default`, `acceptEdits`, `plan`,
    /// `bypassPermissions`, `dontAsk`).
    pub permission_mode: String,
}

/// Runs configured hooks in a project.
///
/// ```no_run
/// # async fn example() {
/// use cairn_policy::hooks::{HookCommon, HookConfig, HookEvent, HookRunner};
/// use tokio_util::sync::CancellationToken;
///
/// let (config, _problems) = HookConfig::from_settings(&serde_json::json!({
///     "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "./check.sh" }] }]
/// }));
/// let runner = HookRunner::new(config, "/path/to/project".into());
/// let mut input = serde_json::Map::new();
/// input.insert("tool_name".into(), "Bash".into());
/// input.insert("tool_input".into(), serde_json::json!({ "command": "ls" }));
/// let outcome = runner
///     .run(HookEvent::PreToolUse, Some("Bash"), &HookCommon::default(), input, &CancellationToken::new())
///     .await;
/// if let Some(reason) = outcome.block {
///     // refuse the tool call, telling the model `reason`
/// #   let _ = reason;
/// }
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct HookRunner {
    config: HookConfig,
    project_dir: PathBuf,
    /// Hooks a program driving cairn registered, and who answers them.
    callbacks: Option<(CallbackHooks, Arc<dyn HookCallback>)>,
}

impl HookRunner {
    /// A runner for `config`, whose commands run in `project_dir` (also given to them as
    /// `CLAUDE_PROJECT_DIR`).
    pub fn new(config: HookConfig, project_dir: PathBuf) -> Self {
        HookRunner {
            config,
            project_dir,
            callbacks: None,
        }
    }

    /// The same runner, with `hooks` answered by `caller` beside the configured commands.
    pub fn with_callbacks(mut self, hooks: CallbackHooks, caller: Arc<dyn HookCallback>) -> Self {
        self.callbacks = Some((hooks, caller));
        self
    }

    /// Whether `event` has any hook at all (a command or a callback), whatever its matcher.
    pub fn has_hooks(&self, event: HookEvent) -> bool {
        self.config.has_hooks(event)
            || self
                .callbacks
                .as_ref()
                .is_some_and(|(hooks, _)| hooks.has_hooks(event))
    }

    /// The configuration this runner runs.
    pub fn config(&self) -> &HookConfig {
        &self.config
    }

    /// Runs every hook of `event` whose matcher accepts `subject` (the tool name at tool
    /// events; `source`, `trigger` or the notification's type at others; `None` where
    /// Claude Code has no matcher, and then every hook of the event runs).
    ///
    /// The hooks run in parallel and this returns when all have finished, timed out or been
    /// cancelled through `cancel` (which kills them). A command string configured more than
    /// once runs once. Each hook gets on stdin `input` (the event's own fields: `tool_name`,
    /// `tool_input`, `tool_use_id`, `tool_response`, `prompt`, `stop_hook_active`, …) plus
    /// the fields of `common` and `hook_event_name`, which replace same-named keys of
    /// `input`.
    pub async fn run(
        &self,
        event: HookEvent,
        subject: Option<&str>,
        common: &HookCommon,
        mut input: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> HookOutcome {
        let mut outcome = HookOutcome::default();
        let hooks = self.config.matching(event, subject);
        let callbacks = match &self.callbacks {
            Some((registered, caller)) => registered
                .matching(event, subject)
                .into_iter()
                .map(|(id, timeout)| (id, timeout, caller))
                .collect(),
            None => Vec::new(),
        };
        if hooks.is_empty() && callbacks.is_empty() {
            return outcome;
        }
        let common_fields = [
            ("session_id", &common.session_id),
            ("transcript_path", &common.transcript_path),
            ("cwd", &common.cwd),
            ("permission_mode", &common.permission_mode),
        ];
        for (key, value) in common_fields {
            input.insert(key.to_owned(), Value::String(value.clone()));
        }
        input.insert(
            "hook_event_name".to_owned(),
            Value::String(event.as_str().to_owned()),
        );
        let tool_use_id = input
            .get("tool_use_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let input = Value::Object(input);
        let stdin = match serde_json::to_vec(&input) {
            Ok(stdin) => stdin,
            Err(error) => {
                outcome.warnings.push(format!(
                    "hooks ({event}) not run: their input could not be encoded: {error}"
                ));
                return outcome;
            }
        };
        let runs = hooks.iter().map(|hook| {
            run_command(
                &hook.command,
                &self.project_dir,
                &stdin,
                hook.timeout,
                cancel,
            )
        });
        let calls = callbacks.iter().map(|(id, timeout, caller)| {
            let call = caller.call(id, &input, tool_use_id.as_deref());
            async move {
                tokio::select! {
                    answer = tokio::time::timeout(*timeout, call) => match answer {
                        Ok(answer) => answer,
                        Err(_) => Err(format!("no answer within {} s", timeout.as_secs_f64())),
                    },
                    () = cancel.cancelled() => Err("cancelled".to_owned()),
                }
            }
        });
        let (results, answers) = tokio::join!(join_all(runs), join_all(calls));
        for (hook, finished) in hooks.into_iter().zip(results) {
            outcome.absorb(event, hook, finished);
        }
        for ((id, _, _), answer) in callbacks.iter().zip(answers) {
            outcome.absorb_callback(event, id, answer);
        }
        outcome
    }
}
