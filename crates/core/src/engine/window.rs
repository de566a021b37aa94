//! What fits the window: the context pipeline before each request, `/compact`, and the
//! memories recall brings in.

use cairn_context::{TokenAccounting, Trigger};
use cairn_policy::hooks::HookEvent;
use cairn_protocol::{AgentEvent, ContentBlock, EventSender, Message, TurnEnd, TurnSummary};
use tokio_util::sync::CancellationToken;

use super::Engine;
use super::plan::{approved_plan, carried_plan};
use super::side::add_side_requests;
use super::turn::TurnTally;
use crate::assembly::system_reminder;
use crate::summarize::{ConversationSummarizer, trigger_name};

impl Engine {
    /// The memories recall chose, as reminders, once it has finished; nothing while it still
    /// runs (it is never waited for). A recall that did not finish before the next message is
    /// dropped: its message is answered already.
    pub(super) async fn take_recalled(&mut self, events: &EventSender) -> Vec<ContentBlock> {
        let Some(running) = self.recall_running.take() else {
            return Vec::new();
        };
        if !running.is_finished() {
            running.abort();
            return Vec::new();
        }
        match running.await {
            Ok(outcome) => {
                if let Some(failure) = outcome.failure {
                    events.emit(AgentEvent::Debug {
                        message: format!("memory recall failed: {failure}"),
                    });
                }
                outcome
                    .reminders
                    .iter()
                    .map(|reminder| system_reminder(reminder))
                    .collect()
            }
            Err(_) => Vec::new(),
        }
    }

    /// What the next request sends: the conversation through the context pipeline, which
    /// may compact it first (reported, and PostCompact hooks told), and how many of its
    /// leading messages a clear of old results would leave as they are
    /// ([`cairn_context::pipeline::Projection::stable_prefix`]).
    pub(super) async fn project(
        &mut self,
        trigger: Option<Trigger>,
        events: &EventSender,
        cancel: &CancellationToken,
        tally: &mut TurnTally,
    ) -> Result<(Vec<Message>, Option<usize>), TurnEnd> {
        let trigger = trigger.unwrap_or(Trigger::Auto);
        let model_info = self.client.model_info(&self.config.model);
        let accounting = TokenAccounting {
            last_reported: self.last_reported,
            context_window: model_info.context_window,
            max_output_tokens: self.config.max_output_tokens,
            prompt_cache: Some(model_info.prompt_cache()),
        };
        let summarizer = ConversationSummarizer {
            client: self.client.as_ref(),
            model: self.request_model(),
            system: self.config.system_prompt.system_prompt(),
            tools: self.tools.specs(),
            governance: &self.config.governance,
            events,
            cancel,
            cost: Default::default(),
        };
        // A compaction summarises the approval away: the plan is carried over as it was.
        let plan = self.approved_plan.clone();
        let opening_before = self.messages.first().cloned();
        let projected = tokio::select! {
            projected = self.config.pipeline.project(
                &mut self.messages,
                accounting,
                trigger.clone(),
                &summarizer,
            ) => Some(projected),
            _ = cancel.cancelled() => None,
        };
        // What the summary requests cost counts even when the turn was interrupted after.
        for summaries in summarizer.cost.take() {
            // A summary is a request of the turn, as Claude Code counts it.
            tally.requests += summaries.requests;
            add_side_requests(tally, summaries, events);
        }
        let Some(projected) = projected else {
            return Err(TurnEnd::Interrupted);
        };
        let projection = projected.map_err(|err| TurnEnd::Failed {
            message: err.to_string(),
        })?;
        // Tools found since the last rewrite of the cached prefix join the tool list when this
        // request writes the prefix again anyway (see `ToolExecutor::commit_loads`).
        if projection.prefix_rewritten {
            self.tools.commit_loads();
        }
        for notice in projection.notices {
            events.emit(AgentEvent::Warning { message: notice });
        }
        let mut messages = projection.messages;
        for mut compaction in projection.compactions {
            if compaction.summary.is_some()
                && let Some(plan) = &plan
            {
                self.carry_plan_over(plan, &mut compaction, &mut messages, &opening_before);
            }
            if let Some(summary) = &compaction.summary {
                // What was reported belongs to the conversation before.
                self.last_reported = None;
                // Recalled memories were summarised away with it: recall may bring them again.
                if let Some(recall) = &self.config.recall {
                    recall.forget_injected();
                }
                let mut input = serde_json::Map::new();
                input.insert("trigger".into(), trigger_name(&trigger).into());
                input.insert("compact_summary".into(), summary.clone().into());
                self.config
                    .governance
                    .run_hooks(
                        HookEvent::PostCompact,
                        Some(trigger_name(&trigger)),
                        input,
                        events,
                        cancel,
                    )
                    .await;
            }
            events.emit(AgentEvent::Compacted(compaction));
        }
        Ok((messages, projection.stable_prefix))
    }

    /// Adds `plan` to the opening of the conversation `compaction` rewrote: in the stored
    /// conversation, in what this request sends, and in what the session records (so a
    /// resume opens with it too).
    fn carry_plan_over(
        &mut self,
        plan: &str,
        compaction: &mut cairn_protocol::Compaction,
        sent: &mut [Message],
        opening_before: &Option<Message>,
    ) {
        let Some(opening) = self.messages.first_mut() else {
            return;
        };
        // Nothing was rewritten, or the plan is there already.
        if Some(&*opening) == opening_before.as_ref()
            || approved_plan(std::slice::from_ref(opening)).is_some()
        {
            return;
        }
        let unchanged = opening.clone();
        opening.content.push(carried_plan(plan));
        let carried = opening.clone();
        for message in sent.iter_mut().chain(compaction.opening.iter_mut()) {
            if *message == unchanged {
                *message = carried.clone();
            }
        }
    }

    /// `/compact [instructions]`: summarizes the conversation now, as a turn of its own with
    /// no model request but the summary's.
    pub(super) async fn compact(
        &mut self,
        instructions: Option<String>,
        events: &EventSender,
        cancel: &CancellationToken,
    ) -> TurnSummary {
        let mut tally = TurnTally::default();
        let end = match self
            .project(
                Some(Trigger::Manual { instructions }),
                events,
                cancel,
                &mut tally,
            )
            .await
        {
            Ok(_) => {
                tally.result = "The conversation was compacted.".into();
                TurnEnd::Completed
            }
            Err(end) => end,
        };
        self.count_side_requests(&mut tally, events);
        let mut summary = tally.finish(end);
        summary.op_id = std::mem::take(&mut self.current_op);
        events.emit(AgentEvent::TurnFinished(summary.clone()));
        summary
    }
}
