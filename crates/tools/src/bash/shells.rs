//! [`ShellRegistry`]: what the shell remembers between calls in one session.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::background::BackgroundShell;

/// The session's shell: the working directory that a `cd` leaves behind for the next `Bash`
/// call, and the commands started with `run_in_background`.
///
/// A sub-agent's shell ([`ShellRegistry::for_agent`]) has a working directory of its own and
/// shares the list of background commands, so an agent's `cd` never moves its parent's shell
/// while either can read or stop a command the other started.
///
/// Dropping the last registry that shares the list (the session ending, cairn exiting) kills
/// every background command still running, with every process it started;
/// [`ShellRegistry::kill_all`] does the same on demand.
///
/// ```
/// use cairn_tools::ShellRegistry;
/// use std::path::Path;
///
/// let shells = ShellRegistry::default();
/// // Until a command has changed directory, commands run in the project directory.
/// assert_eq!(shells.working_dir(Path::new("/project")), Path::new("/project"));
/// ```
#[derive(Debug, Default)]
pub struct ShellRegistry {
    /// Where the last command that finished left the shell; `None` until one has.
    cwd: Mutex<Option<PathBuf>>,
    background: Arc<Mutex<BackgroundShells>>,
}

#[derive(Debug, Default)]
struct BackgroundShells {
    started: u64,
    /// In the order they were started.
    shells: Vec<Arc<BackgroundShell>>,
    /// The other background tasks (sub-agents), in the order they were added.
    tasks: Vec<Arc<dyn BackgroundTask>>,
}

/// A background task that is not a shell command (a sub-agent started with
/// `run_in_background`), which `TaskStop` stops by its id and the end of the session stops
/// too.
#[async_trait::async_trait]
pub trait BackgroundTask: Send + Sync + std::fmt::Debug {
    /// The id the model stops it by.
    fn id(&self) -> &str;

    /// Stops it if it still runs; the sentence `TaskStop` answers with.
    fn stop(&self) -> String;

    /// Waits until it has ended, or `timeout` has passed.
    async fn wait_end(&self, timeout: std::time::Duration);

    /// What `TaskOutput` answers: its status, and its result once it has one.
    fn output(&self) -> String;
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ShellRegistry {
    /// A shell for a sub-agent: it starts in `workdir`, else where this one is now, and keeps
    /// its own working directory from then on; the background commands are shared.
    pub fn for_agent(&self, workdir: Option<&Path>) -> ShellRegistry {
        let start = match workdir {
            Some(dir) => Some(dir.to_path_buf()),
            None => lock(&self.cwd).clone(),
        };
        ShellRegistry {
            cwd: Mutex::new(start),
            background: Arc::clone(&self.background),
        }
    }

    /// The directory the next command runs in: where the last one left the shell, or
    /// `project_dir` if none has run yet or that directory is gone.
    pub fn working_dir(&self, project_dir: &Path) -> PathBuf {
        match &*lock(&self.cwd) {
            Some(dir) if dir.is_dir() => dir.clone(),
            Some(_) | None => project_dir.to_path_buf(),
        }
    }

    /// Kills every background command still running, and everything it started, and stops
    /// every other background task.
    pub fn kill_all(&self) {
        let background = lock(&self.background);
        for shell in &background.shells {
            shell.kill();
        }
        for task in &background.tasks {
            task.stop();
        }
    }

    /// Adds a background task that is not a shell command, for `TaskStop` to find.
    pub fn add_task(&self, task: Arc<dyn BackgroundTask>) {
        lock(&self.background).tasks.push(task);
    }

    /// Stops the background task (not a shell) called `id`: what `TaskStop` answers, or
    /// `None` when no such task was added.
    pub(super) fn stop_task(&self, id: &str) -> Option<String> {
        self.find_task(id).map(|task| task.stop())
    }

    /// The background task (not a shell) called `id`.
    pub(super) fn find_task(&self, id: &str) -> Option<Arc<dyn BackgroundTask>> {
        lock(&self.background)
            .tasks
            .iter()
            .find(|task| task.id() == id)
            .cloned()
    }

    /// Like [`ShellRegistry::working_dir`], with a note for the model when the remembered
    /// directory has disappeared (and is forgotten).
    pub(super) fn take_working_dir(&self, project_dir: &Path) -> (PathBuf, Option<String>) {
        let mut cwd = lock(&self.cwd);
        match &*cwd {
            Some(dir) if dir.is_dir() => (dir.clone(), None),
            Some(gone) => {
                let note = format!(
                    "The shell's working directory {} no longer exists; the command ran in the \
                     project directory {} instead.",
                    gone.display(),
                    project_dir.display()
                );
                *cwd = None;
                (project_dir.to_path_buf(), Some(note))
            }
            None => (project_dir.to_path_buf(), None),
        }
    }

    pub(super) fn set_working_dir(&self, dir: PathBuf) {
        *lock(&self.cwd) = Some(dir);
    }

    /// A fresh id for a background shell: `bash_1`, `bash_2`, …
    pub(super) fn next_id(&self) -> String {
        let mut background = lock(&self.background);
        background.started += 1;
        format!("bash_{}", background.started)
    }

    pub(super) fn add(&self, shell: Arc<BackgroundShell>) {
        lock(&self.background).shells.push(shell);
    }

    /// The background shell called `id`, or an error for the model naming the ids there are.
    pub(super) fn find(&self, id: &str) -> Result<Arc<BackgroundShell>, String> {
        let background = lock(&self.background);
        if let Some(shell) = background.shells.iter().find(|shell| shell.id() == id) {
            return Ok(Arc::clone(shell));
        }
        if background.shells.is_empty() {
            return Err(format!(
                "No background shell with id \"{id}\": none has been started in this session. \
                 Start one with Bash and run_in_background: true."
            ));
        }
        let ids: Vec<&str> = background.shells.iter().map(|shell| shell.id()).collect();
        Err(format!(
            "No background shell with id \"{id}\". The shells in this session are: {}.",
            ids.join(", ")
        ))
    }
}

/// Waits until `done` holds, checked whenever `ended` is told (with `notify_waiters`), or
/// until `timeout` has passed.
pub async fn wait_until(
    ended: &tokio::sync::Notify,
    timeout: std::time::Duration,
    done: impl Fn() -> bool,
) {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let notified = ended.notified();
        tokio::pin!(notified);
        // Registered before the check, so a notification between the two is not missed.
        notified.as_mut().enable();
        if done() {
            return;
        }
        tokio::select! {
            () = notified => {}
            () = tokio::time::sleep_until(deadline) => return,
        }
    }
}

impl Drop for BackgroundShells {
    fn drop(&mut self) {
        for shell in &self.shells {
            shell.kill();
        }
        for task in &self.tasks {
            task.stop();
        }
    }
}
