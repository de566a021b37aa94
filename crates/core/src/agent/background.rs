//! Sub-agents started with `run_in_background: true`: they run on after their `Agent` call
//! has answered, `TaskStop` stops them by id, and each one's final answer waits as a
//! `<task-notification>` (Claude Code's shape) for the parent's next request.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cairn_tools::{BackgroundTask, SessionState};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// How a background agent ended, as its notification's `status` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskStatus {
    /// It answered.
    Completed,
    /// Its turn failed (the model's error, a hook's block).
    Failed,
    /// `TaskStop`, or the end of the session, stopped it.
    Killed,
}

impl TaskStatus {
    fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Killed => "killed",
        }
    }
}

/// The notification of one background agent's end, for the parent's next request.
pub(crate) fn task_notification(
    task_id: &str,
    description: &str,
    status: TaskStatus,
    result: &str,
) -> String {
    let what = if description.is_empty() {
        "Agent".to_string()
    } else {
        format!("Agent \"{description}\"")
    };
    let summary = match status {
        TaskStatus::Completed => format!("{what} completed"),
        TaskStatus::Failed => format!("{what} failed"),
        TaskStatus::Killed => format!("{what} was stopped"),
    };
    format!(
        "<task-notification>\n<task-id>{task_id}</task-id>\n<status>{}</status>\n\
         <summary>{summary}</summary>\n<result>{}</result>\n</task-notification>",
        status.as_str(),
        result.trim()
    )
}

/// The background agents of one parent engine: the notifications of those that ended, until
/// the parent's next request takes them, and how many still run.
#[derive(Debug, Default)]
pub struct TaskNotifications {
    state: Mutex<NotificationState>,
    changed: Notify,
}

#[derive(Debug, Default)]
struct NotificationState {
    waiting: Vec<String>,
    running: usize,
}

impl TaskNotifications {
    fn state(&self) -> MutexGuard<'_, NotificationState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One more background agent runs.
    pub(crate) fn started(&self) {
        self.state().running += 1;
    }

    /// A background agent ended with `notification`.
    pub(crate) fn finished(&self, notification: String) {
        let mut state = self.state();
        state.running = state.running.saturating_sub(1);
        state.waiting.push(notification);
        drop(state);
        self.changed.notify_one();
    }

    /// The notifications waiting, oldest first; none wait afterwards.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.state().waiting)
    }

    /// Whether a background agent still runs or a notification waits.
    pub fn pending(&self) -> bool {
        let state = self.state();
        state.running > 0 || !state.waiting.is_empty()
    }

    /// Waits until a notification waits or no background agent runs any more.
    pub async fn next(&self) {
        loop {
            {
                let state = self.state();
                if !state.waiting.is_empty() || state.running == 0 {
                    return;
                }
            }
            // `notify_one` keeps its permit for a waiter that comes later, so an end between
            // the check and this wait is not missed.
            self.changed.notified().await;
        }
    }
}

/// Where a session's background agents go: the shells' task list (for `TaskStop` and the
/// end of the session) and the parent's notifications.
#[derive(Debug, Clone)]
pub struct Background {
    pub(crate) tasks: Arc<SessionState>,
    pub(crate) notifications: Arc<TaskNotifications>,
}

impl Background {
    /// Background agents listed among `tasks`' background shells, their results going to
    /// `notifications`.
    pub fn new(tasks: Arc<SessionState>, notifications: Arc<TaskNotifications>) -> Background {
        Background {
            tasks,
            notifications,
        }
    }
}

/// A background agent as `TaskStop` and `TaskOutput` see it.
#[derive(Debug)]
pub(crate) struct AgentTask {
    pub(crate) id: String,
    pub(crate) label: String,
    pub(crate) stop: CancellationToken,
    /// Its notification, once it has ended.
    result: Mutex<Option<String>>,
    ended: Notify,
}

impl AgentTask {
    pub(crate) fn new(id: String, label: String, stop: CancellationToken) -> AgentTask {
        AgentTask {
            id,
            label,
            stop,
            result: Mutex::new(None),
            ended: Notify::new(),
        }
    }

    /// It has ended with `notification`.
    pub(crate) fn ended(&self, notification: String) {
        *self.result.lock().unwrap_or_else(PoisonError::into_inner) = Some(notification);
        self.ended.notify_waiters();
    }

    fn result(&self) -> Option<String> {
        self.result
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait::async_trait]
impl BackgroundTask for AgentTask {
    fn id(&self) -> &str {
        &self.id
    }

    async fn wait_end(&self, timeout: std::time::Duration) {
        cairn_tools::wait_until(&self.ended, timeout, || self.result().is_some()).await;
    }

    fn output(&self) -> String {
        match self.result() {
            Some(notification) => notification,
            None => format!(
                "Background agent {} ({}) is still running; its answer comes as a \
                 <task-notification> when it ends.",
                self.id, self.label
            ),
        }
    }

    fn stop(&self) -> String {
        if self.result().is_some() || self.stop.is_cancelled() {
            return format!(
                "Background agent {} ({}) was no longer running; nothing to stop.",
                self.id, self.label
            );
        }
        self.stop.cancel();
        format!(
            "Stopped background agent {} ({}); its notification says so.",
            self.id, self.label
        )
    }
}
