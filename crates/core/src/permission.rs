//! Waiting for the user's answer to a permission question.
//!
//! The turn that needs an answer registers a request and waits on it; the operation loop
//! hands the `PermissionAnswer` op to [`PermissionBroker::answer`]. Requests are keyed by an
//! id the engine makes, so answers that arrive late or twice are simply ignored.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use cairn_protocol::PermissionAnswer;
use tokio::sync::oneshot;

/// Outstanding permission questions.
#[derive(Debug, Default)]
pub struct PermissionBroker {
    next_id: AtomicU64,
    pending: Mutex<HashMap<String, oneshot::Sender<PermissionAnswer>>>,
}

impl PermissionBroker {
    /// A new question: its id (for the event) and where its answer will arrive.
    pub fn ask(&self) -> (String, oneshot::Receiver<PermissionAnswer>) {
        let id = format!("perm_{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        let (sender, receiver) = oneshot::channel();
        self.lock().insert(id.clone(), sender);
        (id, receiver)
    }

    /// Delivers an answer; returns whether a question was waiting for it.
    pub fn answer(&self, request_id: &str, answer: PermissionAnswer) -> bool {
        match self.lock().remove(request_id) {
            Some(sender) => sender.send(answer).is_ok(),
            None => false,
        }
    }

    /// Forgets a question nobody will answer any more (the turn was interrupted).
    pub fn withdraw(&self, request_id: &str) {
        self.lock().remove(request_id);
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<PermissionAnswer>>> {
        self.pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_answer_reaches_its_question_once() {
        let broker = PermissionBroker::default();
        let (id, receiver) = broker.ask();
        assert!(broker.answer(&id, PermissionAnswer::AllowOnce));
        assert!(
            !broker.answer(&id, PermissionAnswer::AllowOnce),
            "no second delivery"
        );
        assert_eq!(receiver.await.ok(), Some(PermissionAnswer::AllowOnce));
        assert!(!broker.answer("perm_unknown", PermissionAnswer::AllowOnce));
    }
}
