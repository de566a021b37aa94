//! Tool search, done by cairn itself so it works on every provider: when the definitions of
//! many tools (an MCP server's hundreds) would take too much of the model's window, requests
//! carry a `ToolSearch` tool instead of them, and the model loads the tools it needs.
//!
//! [`DeferredTools`] sits over two executors: the tools every request carries (the built-in
//! ones) and the tools that may be deferred (MCP tools). While the deferrable tools'
//! definitions stay under the [`Deferral`] threshold, it offers both in full, as a
//! [`CompositeExecutor`] would. Past it, each request carries the built-in tools, then the
//! deferrable tools pinned to every request (an MCP server's `alwaysLoad`), then `ToolSearch`
//! (whose description lists the deferred tools), then every tool loaded so far in the order
//! it was loaded: loading only appends, so the start of the tool list — the first block a
//! provider caches — stays the same.
//!
//! Even an append changes the tool list, and the tool list comes first in what a provider
//! caches: the request after it writes its whole prefix again. So a found tool is not
//! appended at once: it is callable by name from the moment it is found (its definition is in
//! the search's result), and the tools found since the last commit join the list together
//! when the engine commits them ([`ToolExecutor::commit_loads`]), before a request that
//! rewrites the prefix anyway (a cold cache, a compaction). Carrying a definition in the
//! tool list instead of in the result saves nothing, so there is no other moment at which
//! the rewrite pays. The same holds for the search tool's listing when a server connects
//! late or its tools change (`list_changed`): requests carry the listing as it was at the
//! last commit, while a search already finds the new tools.

mod catalog;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_protocol::ToolSpec;
use serde_json::{Value, json};

pub use catalog::loaded_in_history;
use catalog::{best_matches, search_result, search_spec};

use crate::{
    Assurance, CallContext, CompositeExecutor, PrepareError, PreparedCall, Reach, Safety, ToolCall,
    ToolExecutor, ToolOutput,
};

/// The search tool's name, as Claude Code calls it.
pub const TOOL_SEARCH: &str = "ToolSearch";

/// How many tools a keyword query loads unless it says otherwise.
const DEFAULT_MAX_RESULTS: usize = 5;

/// The longest a deferred tool's description runs in the search tool's listing.
const LISTED_DESCRIPTION_CHARS: usize = 80;

/// The share of the window (1/40, 2.5%) the listing may take with one-line descriptions;
/// past it the listing gives names only.
const DESCRIBED_LISTING_DIVISOR: u64 = 40;

/// The share of the window (1/20, 5%) the listing may take with names only; past it the
/// listing gives each server's prefix and how many tools it has, and keywords find them.
const NAMED_LISTING_DIVISOR: u64 = 20;

/// When the deferrable tools are kept out of requests: Claude Code's `ENABLE_TOOL_SEARCH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deferral {
    /// `false`: every definition goes in every request.
    Never,
    /// `true`: deferred whatever they cost.
    Always,
    /// `auto` (10) or `auto:N`: deferred once their definitions pass N% of the window.
    AbovePercent(u8),
}

/// An `ENABLE_TOOL_SEARCH` value that is none of the documented ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "ENABLE_TOOL_SEARCH={value:?} is not understood: write true, false, auto, or auto:N with \
     N a percentage of the context window from 0 to 100"
)]
pub struct DeferralError {
    /// The value as written.
    pub value: String,
}

impl Deferral {
    /// The threshold of `auto`, in percent of the window.
    pub const DEFAULT_PERCENT: u8 = 10;

    /// Reads a value of `ENABLE_TOOL_SEARCH`: `true`/`false` (or `1`/`0`, `yes`/`no`,
    /// `on`/`off`, in any case), `auto`, `auto:N`.
    pub fn parse(value: &str) -> Result<Deferral, DeferralError> {
        let written = value.trim().to_ascii_lowercase();
        let invalid = || DeferralError {
            value: value.to_string(),
        };
        match written.as_str() {
            "true" | "1" | "yes" | "on" => Ok(Deferral::Always),
            "false" | "0" | "no" | "off" => Ok(Deferral::Never),
            "auto" => Ok(Deferral::AbovePercent(Deferral::DEFAULT_PERCENT)),
            _ => {
                let percent = written.strip_prefix("auto:").ok_or_else(invalid)?;
                match percent.trim().parse::<u8>() {
                    Ok(percent) if percent <= 100 => Ok(Deferral::AbovePercent(percent)),
                    _ => Err(invalid()),
                }
            }
        }
    }
}

/// What decides deferral: the setting, the model's window, and how cairn estimates tokens.
#[derive(Debug, Clone, Copy)]
pub struct DeferralBudget {
    /// What `ENABLE_TOOL_SEARCH` says.
    pub deferral: Deferral,
    /// The model's context window, in tokens.
    pub window: u64,
    /// The token estimate used everywhere else in cairn, so the threshold means the same.
    pub estimate: fn(&str) -> usize,
}

impl DeferralBudget {
    /// The estimated tokens of one tool definition as a request carries it: the estimate of
    /// its JSON, framing included (the framing is a fifth of a small tool's cost).
    pub fn spec_tokens(&self, spec: &ToolSpec) -> u64 {
        let definition = json!({
            "name": spec.name,
            "description": spec.description,
            "input_schema": spec.input_schema,
        });
        (self.estimate)(&definition.to_string()) as u64
    }

    /// The estimated tokens of several definitions.
    pub fn specs_tokens(&self, specs: &[ToolSpec]) -> u64 {
        specs.iter().map(|spec| self.spec_tokens(spec)).sum()
    }

    fn defers(&self, deferrable: &[ToolSpec]) -> bool {
        match self.deferral {
            Deferral::Never => false,
            Deferral::Always => !deferrable.is_empty(),
            Deferral::AbovePercent(percent) => {
                !deferrable.is_empty()
                    && self.specs_tokens(deferrable) * 100 > self.window * u64::from(percent)
            }
        }
    }
}

/// The tools every request carries, and others deferred behind `ToolSearch` once their
/// definitions pass the budget. See the module documentation.
pub struct DeferredTools {
    always: Arc<dyn ToolExecutor>,
    deferrable: Arc<dyn ToolExecutor>,
    both: CompositeExecutor,
    budget: DeferralBudget,
    /// Deferrable tools that go in every request all the same (an MCP server's `alwaysLoad`).
    pinned: Pinned,
    /// Names loaded so far, in the order they were loaded.
    loaded: Mutex<Vec<String>>,
    /// Names found since the last commit, in the order they were found: callable, and
    /// appended to `loaded` by [`ToolExecutor::commit_loads`].
    pending: Mutex<Vec<String>>,
    /// How many times `loaded` grew, for the tool list's version.
    loads: AtomicU64,
    /// The plan for the latest versions of the tool lists.
    plan: Mutex<Option<Arc<Plan>>>,
    /// The search tool as requests carry it: the listing of the plan current at the last
    /// commit (or the first request), until the next commit.
    shown_search: Mutex<Option<ToolSpec>>,
}

/// Says which deferrable tools are never deferred.
pub type Pinned = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// What requests carry for one version of the underlying tool lists.
struct Plan {
    /// The versions of the two tool lists it was made for.
    made_for: (u64, u64),
    /// When deferring: the pinned tools, the deferred ones, and the search tool listing them.
    deferred: Option<Deferred>,
}

struct Deferred {
    pinned: Vec<ToolSpec>,
    specs: Vec<ToolSpec>,
    search: ToolSpec,
}

impl std::fmt::Debug for DeferredTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredTools")
            .field("budget", &self.budget)
            .field("loaded", &self.loaded_names())
            .finish_non_exhaustive()
    }
}

impl DeferredTools {
    /// `always` is carried by every request; `deferrable` is deferred past `budget`. A name
    /// both offer is `always`'s.
    pub fn new(
        always: Arc<dyn ToolExecutor>,
        deferrable: Arc<dyn ToolExecutor>,
        budget: DeferralBudget,
    ) -> Self {
        DeferredTools {
            both: CompositeExecutor::new(vec![always.clone(), deferrable.clone()]),
            always,
            deferrable,
            budget,
            pinned: Arc::new(|_| false),
            loaded: Mutex::new(Vec::new()),
            pending: Mutex::new(Vec::new()),
            loads: AtomicU64::new(0),
            plan: Mutex::new(None),
            shown_search: Mutex::new(None),
        }
    }

    /// The deferrable tools for which `pinned` is true go in every request, after the
    /// `always` ones, and count for nothing against the threshold.
    pub fn with_pinned(mut self, pinned: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.pinned = Arc::new(pinned);
        self
    }

    /// These tools count as loaded already (a resumed session's, from
    /// [`loaded_in_history`]), in this order.
    pub fn with_loaded(self, names: Vec<String>) -> Self {
        self.load(names);
        self
    }

    /// The names loaded so far, in order.
    pub fn loaded_names(&self) -> Vec<String> {
        self.loaded
            .lock()
            .map(|loaded| loaded.clone())
            .unwrap_or_default()
    }

    /// The names found since the last commit, in order: callable, not in the tool list yet.
    pub fn pending_names(&self) -> Vec<String> {
        self.pending
            .lock()
            .map(|pending| pending.clone())
            .unwrap_or_default()
    }

    /// Adds the names neither loaded nor pending to the pending ones.
    fn find(&self, names: impl IntoIterator<Item = String>) {
        let loaded = self.loaded_names();
        let Ok(mut pending) = self.pending.lock() else {
            return;
        };
        for name in names {
            if !loaded.contains(&name) && !pending.contains(&name) {
                pending.push(name);
            }
        }
    }

    /// Whether requests carry `ToolSearch` instead of the deferrable tools now.
    pub fn is_deferring(&self) -> bool {
        self.current_plan().deferred.is_some()
    }

    /// Appends the names not loaded yet.
    fn load(&self, names: impl IntoIterator<Item = String>) {
        let Ok(mut loaded) = self.loaded.lock() else {
            return;
        };
        let before = loaded.len();
        for name in names {
            if !loaded.contains(&name) {
                loaded.push(name);
            }
        }
        if loaded.len() > before {
            self.loads.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// The plan for the tool lists as they are now, made again only when one changed.
    fn current_plan(&self) -> Arc<Plan> {
        let key = (self.always.tools_version(), self.deferrable.tools_version());
        if let Ok(cached) = self.plan.lock()
            && let Some(plan) = cached.as_ref()
            && plan.made_for == key
        {
            return plan.clone();
        }
        let always: Vec<String> = self.always.specs().into_iter().map(|s| s.name).collect();
        let mut pinned: Vec<ToolSpec> = Vec::new();
        let mut deferrable: Vec<ToolSpec> = Vec::new();
        for spec in self.deferrable.specs() {
            if always.contains(&spec.name)
                || pinned
                    .iter()
                    .chain(&deferrable)
                    .any(|s| s.name == spec.name)
            {
                continue;
            }
            if (self.pinned)(&spec.name) {
                pinned.push(spec);
            } else {
                deferrable.push(spec);
            }
        }
        let deferred = self.budget.defers(&deferrable).then(|| Deferred {
            pinned,
            search: search_spec(&deferrable, self.budget),
            specs: deferrable,
        });
        let plan = Arc::new(Plan {
            made_for: key,
            deferred,
        });
        if let Ok(mut cached) = self.plan.lock() {
            *cached = Some(plan.clone());
        }
        plan
    }

    /// A deferred tool the model called by name without loading it first: found (it ran, so
    /// the model knew its input), or with `now`, loaded at once (its input was rejected: the
    /// next request must carry the definition the model lacked).
    fn load_if_deferred(&self, name: &str, now: bool) {
        if let Some(deferred) = &self.current_plan().deferred
            && deferred.specs.iter().any(|spec| spec.name == name)
        {
            if now {
                if let Ok(mut pending) = self.pending.lock() {
                    pending.retain(|pending| pending != name);
                }
                self.load([name.to_string()]);
            } else {
                self.find([name.to_string()]);
            }
        }
    }

    /// Runs a `ToolSearch` query: loads what it finds and returns the definitions.
    fn search(&self, input: &Value) -> ToolOutput {
        let plan = self.current_plan();
        let Some(Deferred {
            specs: deferred, ..
        }) = &plan.deferred
        else {
            return ToolOutput::text("No tool is deferred now: every tool is already offered.");
        };
        let query = input["query"].as_str().unwrap_or_default().trim();
        let max = input["max_results"]
            .as_u64()
            .map_or(DEFAULT_MAX_RESULTS, |n| n.max(1) as usize);
        let (found, missing): (Vec<&ToolSpec>, Vec<String>) = match query.strip_prefix("select:") {
            Some(names) => {
                let mut found = Vec::new();
                let mut missing = Vec::new();
                for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    match deferred.iter().find(|spec| spec.name == name) {
                        Some(spec) => found.push(spec),
                        None => missing.push(name.to_string()),
                    }
                }
                (found, missing)
            }
            None => (best_matches(deferred, query, max), Vec::new()),
        };
        self.find(found.iter().map(|spec| spec.name.clone()));
        ToolOutput::text(search_result(query, &found, &missing, &self.always_names()))
    }

    /// The tools every request carries, pinned ones included.
    fn always_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.always.specs().into_iter().map(|s| s.name).collect();
        if let Some(deferred) = &self.current_plan().deferred {
            names.extend(deferred.pinned.iter().map(|spec| spec.name.clone()));
        }
        names
    }
}

#[async_trait]
impl ToolExecutor for DeferredTools {
    fn specs(&self) -> Vec<ToolSpec> {
        let plan = self.current_plan();
        let Some(deferred) = &plan.deferred else {
            return self.both.specs();
        };
        let mut specs = self.always.specs();
        specs.extend(deferred.pinned.iter().cloned());
        let search = match self.shown_search.lock() {
            Ok(mut shown) => shown.get_or_insert_with(|| deferred.search.clone()).clone(),
            Err(_) => deferred.search.clone(),
        };
        specs.push(search);
        for name in self.loaded_names() {
            if let Some(spec) = deferred.specs.iter().find(|spec| spec.name == name) {
                specs.push(spec.clone());
            }
        }
        specs
    }

    fn serves(&self, name: &str) -> bool {
        (name == TOOL_SEARCH && self.is_deferring()) || self.both.serves(name)
    }

    fn commit_loads(&self) {
        let pending = match self.pending.lock() {
            Ok(mut pending) => std::mem::take(&mut *pending),
            Err(_) => return,
        };
        self.load(pending);
        if let Ok(mut shown) = self.shown_search.lock() {
            *shown = None;
        }
        self.both.commit_loads();
    }

    fn tools_version(&self) -> u64 {
        self.both
            .tools_version()
            .wrapping_add(self.loads.load(Ordering::SeqCst))
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        self.try_prepare(call).map_err(PrepareError::into_output)
    }

    fn try_prepare(&self, call: &ToolCall) -> Result<PreparedCall, PrepareError> {
        if call.name == TOOL_SEARCH && self.is_deferring() {
            return match call.input.get("query").and_then(Value::as_str) {
                Some(_) => Ok(PreparedCall {
                    id: call.id.clone(),
                    name: TOOL_SEARCH.to_string(),
                    input: call.input.clone(),
                    safety: Safety::READ_ONLY,
                    paths: Vec::new(),
                }),
                None => Err(PrepareError::RejectedInput {
                    tool: TOOL_SEARCH.to_string(),
                    message: "ToolSearch needs a `query` string: `select:<name>,<name>` or \
                              keywords."
                        .to_string(),
                }),
            };
        }
        let prepared = self.both.try_prepare(call);
        // Called without being loaded: it is loaded now, whether or not this input fits, so
        // the next request carries the definition the model lacked.
        match &prepared {
            Ok(call) => self.load_if_deferred(&call.name, false),
            Err(PrepareError::RejectedInput { tool, .. }) => self.load_if_deferred(tool, true),
            Err(PrepareError::UnknownTool { .. } | PrepareError::Unavailable { .. }) => {}
        }
        prepared
    }

    async fn validate(&self, call: &PreparedCall) -> Result<(), ToolOutput> {
        if call.name == TOOL_SEARCH {
            return Ok(());
        }
        self.both.validate(call).await
    }

    async fn execute(&self, call: &PreparedCall, cx: &CallContext) -> ToolOutput {
        if call.name == TOOL_SEARCH {
            return self.search(&call.input);
        }
        self.both.execute(call, cx).await
    }

    fn reach(&self, call: &PreparedCall) -> Reach {
        if call.name == TOOL_SEARCH {
            return Reach::Local;
        }
        self.both.reach(call)
    }

    fn assurance(&self, call: &PreparedCall) -> Assurance {
        if call.name == TOOL_SEARCH {
            return Assurance::Checked;
        }
        self.both.assurance(call)
    }
    /// A sub-agent's conversation starts with nothing loaded, over its own built-in state.
    fn for_agent(&self, workdir: Option<&std::path::Path>) -> Option<Arc<dyn ToolExecutor>> {
        let always = self
            .always
            .for_agent(workdir)
            .unwrap_or_else(|| self.always.clone());
        let deferrable = self
            .deferrable
            .for_agent(workdir)
            .unwrap_or_else(|| self.deferrable.clone());
        let mut tools = DeferredTools::new(always, deferrable, self.budget);
        tools.pinned = self.pinned.clone();
        Some(Arc::new(tools))
    }
}

#[cfg(test)]
#[path = "tool_search_tests.rs"]
mod tests;
