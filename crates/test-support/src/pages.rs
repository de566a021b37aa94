//! A plain web server on loopback for WebFetch's tests: fixed pages by path, redirects, and
//! a record of every request it got (so a test can prove a refused fetch never connected).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// One page the server answers with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebPage {
    /// The status code.
    pub status: u16,
    /// Headers beside `content-length`.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl WebPage {
    /// A `200 OK` HTML page.
    pub fn html(body: impl Into<String>) -> WebPage {
        WebPage {
            status: 200,
            headers: vec![("content-type".into(), "text/html; charset=utf-8".into())],
            body: body.into().into_bytes(),
        }
    }

    /// A `302 Found` to `location`.
    pub fn redirect(location: impl Into<String>) -> WebPage {
        WebPage {
            status: 302,
            headers: vec![("location".into(), location.into())],
            body: Vec::new(),
        }
    }
}

/// A request as the page server got it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageRequest {
    /// The path, e.g. `/docs`.
    pub path: String,
    /// The `host` header as sent.
    pub host: String,
}

#[derive(Debug, Default)]
struct Pages {
    pages: HashMap<String, WebPage>,
    requests: Vec<PageRequest>,
}

/// Serves [`WebPage`]s on `127.0.0.1` from its own thread; a path with no page is a 404.
/// Dropping it stops it.
///
/// ```
/// use cairn_test_support::{PageServer, WebPage};
///
/// let pages = PageServer::start();
/// pages.page("/", WebPage::html("<h1>Title</h1>"));
/// assert!(pages.url("/").starts_with("http://127.0.0.1:"));
/// assert!(pages.requests().is_empty());
/// ```
pub struct PageServer {
    port: u16,
    shared: Arc<Mutex<Pages>>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for PageServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageServer")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

fn lock(shared: &Mutex<Pages>) -> MutexGuard<'_, Pages> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl PageServer {
    /// Starts on a free port of 127.0.0.1. Panics if it cannot: no test runs without it.
    pub fn start() -> PageServer {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(err) => panic!("page server: cannot build a tokio runtime: {err}"),
        };
        let listener = {
            let _entered = runtime.enter();
            match std::net::TcpListener::bind(("127.0.0.1", 0))
                .and_then(|listener| {
                    listener.set_nonblocking(true)?;
                    Ok(listener)
                })
                .and_then(TcpListener::from_std)
            {
                Ok(listener) => listener,
                Err(err) => panic!("page server: cannot listen on 127.0.0.1: {err}"),
            }
        };
        let port = match listener.local_addr() {
            Ok(address) => address.port(),
            Err(err) => panic!("page server: cannot read the listening port: {err}"),
        };
        let shared = Arc::new(Mutex::new(Pages::default()));
        let (shutdown, mut stop) = oneshot::channel::<()>();
        let served = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name(format!("page-server-{port}"))
            .spawn(move || {
                runtime.block_on(async move {
                    loop {
                        let stream = tokio::select! {
                            accepted = listener.accept() => match accepted {
                                Ok((stream, _)) => stream,
                                Err(_) => continue,
                            },
                            _ = &mut stop => break,
                        };
                        let shared = Arc::clone(&served);
                        tokio::spawn(async move {
                            let service = service_fn(move |request| {
                                let shared = Arc::clone(&shared);
                                async move { Ok::<_, Infallible>(answer(&shared, &request)) }
                            });
                            let _ = http1::Builder::new()
                                .serve_connection(TokioIo::new(stream), service)
                                .await;
                        });
                    }
                });
            });
        let thread = match thread {
            Ok(thread) => thread,
            Err(err) => panic!("page server: cannot spawn its thread: {err}"),
        };
        PageServer {
            port,
            shared,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Serves `page` at `path` from now on.
    pub fn page(&self, path: &str, page: WebPage) {
        lock(&self.shared).pages.insert(path.to_string(), page);
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<PageRequest> {
        lock(&self.shared).requests.clone()
    }
}

fn answer(shared: &Mutex<Pages>, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_string();
    let host = request
        .headers()
        .get("host")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let page = {
        let mut pages = lock(shared);
        pages.requests.push(PageRequest {
            path: path.clone(),
            host,
        });
        pages.pages.get(&path).cloned()
    };
    let page = page.unwrap_or(WebPage {
        status: 404,
        headers: vec![("content-type".into(), "text/plain".into())],
        body: format!("no page at {path}").into_bytes(),
    });
    let mut response = Response::new(Full::new(Bytes::from(page.body)));
    *response.status_mut() = StatusCode::from_u16(page.status).unwrap_or(StatusCode::OK);
    for (name, value) in page.headers {
        if let (Ok(name), Ok(value)) = (
            hyper::header::HeaderName::from_bytes(name.as_bytes()),
            hyper::header::HeaderValue::from_str(&value),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    response
}

impl Drop for PageServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
