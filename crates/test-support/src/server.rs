//! The loopback HTTP/1.1 server: accepts connections on its own thread and runtime, records
//! each request and answers it with the next queued [`Reply`].

use std::collections::VecDeque;
use std::convert::Infallible;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use crate::cache::PromptCache;
use crate::delivery::{FlushWatch, PacedBody, WatchedStream};
use crate::reply::Reply;

/// The model reported in `message_start` when the request body names none.
const FALLBACK_MODEL: &str = "scripted-model";

/// A scripted Anthropic Messages API on `127.0.0.1`, for tests.
///
/// It runs on its own thread with its own tokio runtime, so sync tests (driving the `cairn`
/// binary with `assert_cmd`) and async tests can both use it. Dropping it shuts it down.
///
/// ```
/// use cairn_test_support::{Reply, ScriptedServer};
///
/// let server = ScriptedServer::start();
/// server.push(Reply::tool_use("toolu_1", "bash", serde_json::json!({"command": "ls"})));
/// server.push(Reply::text("Done."));
/// assert!(server.url().starts_with("http://127.0.0.1:"));
/// ```
pub struct ScriptedServer {
    url: String,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// One request as the server received it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    /// `POST`, `GET`, ...
    pub method: String,
    /// The path without the query string, e.g. `/v1/messages`.
    pub path: String,
    /// Every header in arrival order; names are lowercase.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON; `Value::Null` if the body was not JSON.
    pub body: serde_json::Value,
    /// When the request's head arrived, before its body was read: the moment the client had
    /// its request ready, for latency measurements.
    pub received_at: Instant,
}

impl RecordedRequest {
    /// The first value of header `name`, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// State shared between the test's thread and the server's.
#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    /// Notified each time a request is recorded.
    arrived: Condvar,
    /// Notified each time a request with a held reply arrives.
    held: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct State {
    queue: VecDeque<Reply>,
    /// Served when the queue is empty, instead of the "no reply queued" error.
    default_reply: Option<Reply>,
    requests: Vec<RecordedRequest>,
    messages_served: u64,
    /// When set, message replies report the usage this simulated prompt cache computes.
    prompt_cache: Option<PromptCache>,
    /// Requests whose body is larger get a 400, as the API answers a prompt that is too long.
    max_body_bytes: Option<usize>,
    /// Replies for side requests (no tools, or `tool_choice: none`), taken in order before the
    /// main queue; the last one repeats.
    text_only_replies: VecDeque<Reply>,
    /// How many requests got a held reply ([`Reply::held_until_waiting`]) so far.
    held_requests: usize,
    /// What each model-fact path answers (`/v1/models`, `/props`, `/api/show`).
    facts: Vec<(String, serde_json::Value)>,
    /// The requests to those paths, apart from `requests`.
    fact_requests: Vec<RecordedRequest>,
    /// How long each answer to those paths waits before it is sent.
    facts_delay: Option<Duration>,
    /// Requests waiting on a reply held until released ([`Reply::held_until_released`]).
    awaiting_release: usize,
    /// Releases given ([`ScriptedServer::release_held`]) and not yet taken by a reply.
    releases: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A test that panicked while holding the lock leaves the state usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a request of `body_len` bytes and picks its reply. Both happen under one lock,
    /// so the n-th request to arrive gets the n-th reply; a request over the size limit gets
    /// the API's 400 instead and leaves the queue as it is.
    fn record(&self, request: RecordedRequest, body_len: usize) -> Answer {
        let mut state = self.lock();
        if let Some(limit) = state.max_body_bytes.filter(|limit| body_len > *limit) {
            state.requests.push(request);
            let request_number = state.requests.len();
            let message_number = state.messages_served;
            drop(state);
            self.arrived.notify_all();
            return Answer {
                request_number,
                reply: Reply::error(
                    400,
                    "invalid_request_error",
                    &format!("prompt is too long: {body_len} bytes > {limit} maximum"),
                ),
                message_number,
            };
        }
        let cache_usage = state
            .prompt_cache
            .as_mut()
            .map(|cache| cache.account(&request.body));
        // A side request: a summary (tools sent but not callable) or a request with no tools
        // at all (memory recall).
        let text_only = request.body["tool_choice"]["type"] == "none"
            || request.body["tool_choice"] == "none"
            || request.body.get("tools").is_none();
        state.requests.push(request);
        let request_number = state.requests.len();
        let reply = match state.text_only_replies.len() {
            0 => None,
            1 if text_only => state.text_only_replies.front().cloned(),
            _ if text_only => state.text_only_replies.pop_front(),
            _ => None,
        }
        .or_else(|| state.queue.pop_front())
        .or_else(|| state.default_reply.clone());
        let answer = match reply {
            Some(reply) => {
                if reply.is_message() {
                    state.messages_served += 1;
                }
                let reply = match cache_usage {
                    Some(usage) => reply.with_cache_usage(usage),
                    None => reply,
                };
                Answer {
                    request_number,
                    reply,
                    message_number: state.messages_served,
                }
            }
            None => Answer {
                request_number,
                reply: Reply::error(
                    500,
                    "api_error",
                    &format!(
                        "scripted server: no reply queued for request {request_number} \
                         (push a Reply before the client sends it)"
                    ),
                ),
                message_number: state.messages_served,
            },
        };
        drop(state);
        self.arrived.notify_all();
        answer
    }
}

impl Shared {
    /// Counts one more held request, then waits until `requests` of them have arrived.
    async fn hold(&self, requests: usize) {
        self.lock().held_requests += 1;
        self.held.notify_waiters();
        loop {
            let notified = self.held.notified();
            tokio::pin!(notified);
            // Registered before the count is read, so no arrival is missed in between.
            notified.as_mut().enable();
            if self.lock().held_requests >= requests {
                return;
            }
            notified.await;
        }
    }
}

impl Shared {
    /// Waits for one release ([`ScriptedServer::release_held`]) and takes it.
    async fn wait_for_release(&self) {
        self.lock().awaiting_release += 1;
        self.arrived.notify_all();
        loop {
            let notified = self.held.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = self.lock();
                if state.releases > 0 {
                    state.releases -= 1;
                    state.awaiting_release -= 1;
                    return;
                }
            }
            notified.await;
        }
    }
}

/// The reply picked for one request.
#[derive(Debug)]
struct Answer {
    request_number: usize,
    reply: Reply,
    message_number: u64,
}

impl ScriptedServer {
    /// Starts on 127.0.0.1:0 on its own background thread with its own tokio runtime, so it works from sync tests (assert_cmd) and async tests alike.
    ///
    /// Panics if the port cannot be bound or the runtime cannot be built: there is no test
    /// to run without it.
    pub fn start() -> ScriptedServer {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(err) => panic!("scripted server: cannot build a tokio runtime: {err}"),
        };
        let listener = {
            // The listener registers with the runtime's reactor, so bind inside it.
            let _entered = runtime.enter();
            match std::net::TcpListener::bind(("127.0.0.1", 0))
                .and_then(|listener| {
                    listener.set_nonblocking(true)?;
                    Ok(listener)
                })
                .and_then(TcpListener::from_std)
            {
                Ok(listener) => listener,
                Err(err) => panic!("scripted server: cannot listen on 127.0.0.1: {err}"),
            }
        };
        let port = match listener.local_addr() {
            Ok(address) => address.port(),
            Err(err) => panic!("scripted server: cannot read the listening port: {err}"),
        };
        let shared = Arc::new(Shared::default());
        let (shutdown, shutdown_requested) = oneshot::channel();
        let thread_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name(format!("scripted-server-{port}"))
            .spawn(move || {
                runtime.block_on(accept_connections(
                    listener,
                    thread_shared,
                    shutdown_requested,
                ));
                // Dropping the runtime here ends every open connection, stalled ones included.
            });
        let thread = match thread {
            Ok(thread) => thread,
            Err(err) => panic!("scripted server: cannot spawn its thread: {err}"),
        };
        ScriptedServer {
            url: format!("http://127.0.0.1:{port}"),
            shared,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// The base URL, `http://127.0.0.1:PORT` without a trailing slash: the value for
    /// `ANTHROPIC_BASE_URL`.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// Queues one reply; replies are served first in, first out, one per request.
    pub fn push(&self, reply: Reply) {
        self.shared.lock().queue.push_back(reply);
    }

    /// Serves `reply` to every request that finds the queue empty, instead of the
    /// "no reply queued" 500. For benchmarks and other open-ended runs.
    pub fn set_default_reply(&self, reply: Reply) {
        self.shared.lock().default_reply = Some(reply);
    }

    /// From now on, message replies report input usage as the API's prompt cache would
    /// (see [`PromptCache`]): cache reads and writes at the request's breakpoints.
    pub fn simulate_prompt_cache(&self) {
        self.shared.lock().prompt_cache = Some(PromptCache::default());
    }

    /// From now on, a request whose body is over `bytes` bytes is answered with a 400
    /// `invalid_request_error` ("prompt is too long: …"), as the API answers a conversation
    /// over its limit, and takes no queued reply.
    pub fn reject_bodies_over(&self, bytes: usize) {
        self.shared.lock().max_body_bytes = Some(bytes);
    }

    /// Answers side requests — those that forbid tool calls (`tool_choice: {"type": "none"}`: a
    /// conversation summary) or offer no tools (a memory recall) — with `replies` in order, the
    /// last one for every later such request, instead of taking from the main queue. Other
    /// requests are unaffected.
    pub fn reply_to_side_requests(&self, replies: Vec<Reply>) {
        self.shared.lock().text_only_replies = replies.into();
    }

    /// From now on a request to `path` (`/v1/models`, `/props` or `/api/show`, where a
    /// compatible server says a model's window) is answered with `body`, and takes no queued
    /// reply; such a path the test did not set answers 404.
    pub fn answer_model_facts(&self, path: &str, body: serde_json::Value) {
        self.shared.lock().facts.push((path.to_owned(), body));
    }

    /// From now on the answers to the model-fact paths wait `delay` before they are sent (a
    /// slow server), for a test that the request it is asked beside does not wait for them.
    pub fn delay_model_facts(&self, delay: Duration) {
        self.shared.lock().facts_delay = Some(delay);
    }

    /// The requests to the model-fact paths received so far, in arrival order; they are not
    /// among [`ScriptedServer::requests`].
    pub fn fact_requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().fact_requests.clone()
    }

    /// Sends one reply held by [`Reply::held_until_released`]: the first still held, or, if
    /// none has arrived yet, the next one to arrive.
    pub fn release_held(&self) {
        self.shared.lock().releases += 1;
        self.shared.held.notify_waiters();
    }

    /// Blocks (Condvar, no sleeping loops) until a request whose reply is held until released
    /// is waiting; panics with a clear message after `timeout`.
    pub fn wait_held(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        while state.awaiting_release == 0 {
            let now = Instant::now();
            if now >= deadline {
                let arrived = state.requests.len();
                drop(state);
                panic!(
                    "scripted server at {}: waited {timeout:?} for a request with a held reply, \
                     but none is waiting ({arrived} request(s) arrived)",
                    self.url,
                );
            }
            state = self
                .shared
                .arrived
                .wait_timeout(state, deadline - now)
                .map(|(state, _)| state)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Blocks (Condvar, no sleeping loops) until at least n requests have arrived; panics with a clear message after `timeout`.
    ///
    /// Returns every request so far, in arrival order.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        self.wait_for(n, timeout, |state| &state.requests)
    }

    /// As [`ScriptedServer::wait_for_requests`], for the requests to the model-fact paths
    /// ([`ScriptedServer::fact_requests`]).
    pub fn wait_for_fact_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        self.wait_for(n, timeout, |state| &state.fact_requests)
    }

    fn wait_for(
        &self,
        n: usize,
        timeout: Duration,
        list: fn(&State) -> &Vec<RecordedRequest>,
    ) -> Vec<RecordedRequest> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        while list(&state).len() < n {
            let now = Instant::now();
            if now >= deadline {
                let arrived: Vec<String> = list(&state)
                    .iter()
                    .map(|request| format!("{} {}", request.method, request.path))
                    .collect();
                drop(state);
                panic!(
                    "scripted server at {}: waited {timeout:?} for {n} request(s), but {} arrived: {arrived:?}",
                    self.url,
                    arrived.len(),
                );
            }
            state = self
                .shared
                .arrived
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        list(&state).clone()
    }
}

impl fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("ScriptedServer")
            .field("url", &self.url)
            .field("queued_replies", &state.queue.len())
            .field("requests", &state.requests.len())
            .finish_non_exhaustive()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            // Err means the server thread already ended, which is what we want anyway.
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            // A panic on the server thread has nothing left to clean up.
            let _ = thread.join();
        }
    }
}

async fn accept_connections(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut shutdown_requested: oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            _ = &mut shutdown_requested => return,
            accepted = listener.accept() => {
                // An accept error concerns one would-be connection; keep serving the others.
                if let Ok((stream, _)) = accepted {
                    tokio::spawn(serve_connection(stream, Arc::clone(&shared)));
                }
            }
        }
    }
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    // Chunks are meant to reach the client one by one, not coalesced by Nagle's algorithm.
    let _ = stream.set_nodelay(true);
    let watch = Arc::new(FlushWatch::default());
    let io = TokioIo::new(WatchedStream {
        stream,
        watch: Arc::clone(&watch),
    });
    let service = service_fn(move |request| {
        let shared = Arc::clone(&shared);
        let watch = Arc::clone(&watch);
        async move { Ok::<_, Infallible>(respond(request, &shared, watch).await) }
    });
    // Errors here are clients going away and scripted cuts: both expected, neither reportable.
    let _ = http1::Builder::new().serve_connection(io, service).await;
}

async fn respond(
    request: Request<Incoming>,
    shared: &Shared,
    watch: Arc<FlushWatch>,
) -> Response<PacedBody> {
    let received_at = Instant::now();
    let (parts, body) = request.into_parts();
    // A body the client failed to send is recorded as not JSON.
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => bytes::Bytes::new(),
    };
    let body_len = body.len();
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    let model = body
        .get("model")
        .and_then(serde_json::Value::as_str)
        .unwrap_or(FALLBACK_MODEL)
        .to_owned();
    let recorded = RecordedRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        headers: parts
            .headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), value)
            })
            .collect(),
        body,
        received_at,
    };
    if crate::facts::is_fact_path(&recorded.path) {
        let (status, body, delay) = {
            let mut state = shared.lock();
            let (status, body) = crate::facts::answer(&state.facts, &recorded.path);
            state.fact_requests.push(recorded);
            (status, body, state.facts_delay)
        };
        shared.arrived.notify_all();
        if let Some(delay) = delay {
            tokio::time::sleep(delay).await;
        }
        let body = PacedBody::new(
            vec![bytes::Bytes::from(body)],
            crate::reply::Chunking::Natural,
            crate::reply::Ending::Complete,
            true,
            None,
            watch,
        );
        let mut response = Response::new(body);
        *response.status_mut() = status;
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        return response;
    }
    let answer = shared.record(recorded, body_len);
    if let Some(requests) = answer.reply.hold_until() {
        shared.hold(requests).await;
    }
    if answer.reply.held_for_release() {
        shared.wait_for_release().await;
    }
    let chat = crate::openai::is_chat_completions(parts.uri.path());
    let rendered = answer.reply.render_in(chat, &model, answer.message_number);
    if let Some(delay) = rendered.delay {
        tokio::time::sleep(delay).await;
    }
    let body = PacedBody::new(
        rendered.pieces,
        rendered.chunking,
        rendered.ending,
        rendered.known_length,
        rendered.repeated,
        watch,
    );
    let mut response = Response::new(body);
    *response.status_mut() = rendered.status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static(rendered.content_type),
    );
    if let Ok(request_id) =
        HeaderValue::from_str(&format!("req_scripted_{}", answer.request_number))
    {
        headers.insert(HeaderName::from_static("request-id"), request_id);
    }
    // A scripted header replaces a default of the same name; repeating it adds values.
    for (name, _) in &rendered.headers {
        headers.remove(name);
    }
    for (name, value) in rendered.headers {
        headers.append(name, value);
    }
    response
}
