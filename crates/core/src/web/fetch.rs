//! Fetching one page for WebFetch: the address checks, the caps, and redirects handled by
//! hand so that each hop is checked and a hop to another host goes back to the model.
//!
//! The host is resolved here, every address it resolves to is checked, and the connection
//! goes to those checked addresses only: the client's DNS resolver answers from what the
//! check pinned and never looks the name up again, so a name cannot resolve to a public
//! address for the check and to a private one for the connection.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{CONTENT_LENGTH, CONTENT_TYPE, LOCATION};
use tokio_util::sync::CancellationToken;
use url::{Host, Url};

use super::address::{ClosedAddress, closed_address};

/// Whether a permission rule names a host (`WebFetch(domain:127.0.0.1)`), which opens the
/// closed addresses it resolves to.
pub type HostRule = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// How much one fetch may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchLimits {
    /// The most bytes a page's body may hold.
    pub max_bytes: u64,
    /// The time for the whole fetch, redirects included.
    pub timeout: Duration,
    /// The most same-host redirects followed.
    pub max_redirects: usize,
}

impl Default for FetchLimits {
    /// 10 MB, 30 seconds and 10 redirects, as Claude Code's WebFetch.
    fn default() -> Self {
        FetchLimits {
            max_bytes: 10 * 1024 * 1024,
            timeout: Duration::from_secs(30),
            max_redirects: 10,
        }
    }
}

/// A page as fetched.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// Where it was fetched from, after the same-host redirects.
    pub url: Url,
    /// Its `content-type`, empty when the server sent none.
    pub content_type: String,
    /// Its body as text (invalid UTF-8 replaced).
    pub body: String,
}

/// What a fetch came back with.
#[derive(Debug, Clone, PartialEq)]
pub enum Fetched {
    /// The page.
    Page(Page),
    /// The server redirects to another host; it is not followed.
    Redirect {
        /// The URL that redirected.
        from: Url,
        /// Where it points.
        to: Url,
        /// The redirect's status code.
        status: u16,
    },
}

/// Why a fetch failed, in words for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The URL does not parse, or has no host.
    #[error("{url:?} is not a valid URL: {reason}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Not `http` or `https`.
    #[error("WebFetch fetches http and https URLs only, not {scheme}: {url}")]
    Scheme {
        /// The URL.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// The host is or resolves to an address WebFetch does not connect to.
    #[error(
        "WebFetch refused {host}: it resolves to {address}, which is {}. Only a permission \
         rule naming the host lets WebFetch reach it, e.g. `WebFetch(domain:{host})`.",
        why.describe()
    )]
    Closed {
        /// The host as the URL names it.
        host: String,
        /// The address that is closed.
        address: IpAddr,
        /// What kind of address it is.
        why: ClosedAddress,
    },
    /// The name did not resolve.
    #[error("cannot resolve {host}: {message}")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's error.
        message: String,
    },
    /// The connection or the exchange failed.
    #[error("fetching {url} failed: {message}")]
    Http {
        /// The URL.
        url: String,
        /// What failed, with its causes.
        message: String,
    },
    /// The server answered with an error status.
    #[error("fetching {url} returned HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status line's code and reason.
        status: String,
    },
    /// The body is over [`FetchLimits::max_bytes`].
    #[error("{url} is larger than the {limit} bytes WebFetch reads")]
    TooLarge {
        /// The URL.
        url: String,
        /// The limit.
        limit: u64,
    },
    /// The fetch took longer than [`FetchLimits::timeout`].
    #[error("fetching {url} took longer than {seconds} seconds")]
    TimedOut {
        /// The URL.
        url: String,
        /// The limit in seconds.
        seconds: u64,
    },
    /// More same-host redirects than [`FetchLimits::max_redirects`].
    #[error("{url} redirected more than {limit} times")]
    TooManyRedirects {
        /// The URL first asked for.
        url: String,
        /// The limit.
        limit: usize,
    },
    /// The user interrupted.
    #[error("the user interrupted the fetch")]
    Cancelled,
}

/// The addresses each host was checked to, for the client's resolver.
type Pinned = Arc<Mutex<HashMap<String, Vec<SocketAddr>>>>;

/// Fetches pages under the address checks and the caps. The HTTP client is built at the
/// first fetch, so a session that never fetches pays nothing for it.
pub struct Fetcher {
    client: OnceLock<Result<reqwest::Client, String>>,
    pinned: Pinned,
    names_host: HostRule,
    limits: FetchLimits,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// The client's resolver: only the addresses the check pinned for the name, never a lookup
/// of its own.
struct PinnedResolver(Pinned);

impl Resolve for PinnedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let found = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&name.as_str().to_ascii_lowercase())
            .cloned();
        Box::pin(async move {
            match found {
                Some(addresses) => Ok(Box::new(addresses.into_iter()) as Addrs),
                None => Err(format!("{} was not checked before connecting", name.as_str()).into()),
            }
        })
    }
}

/// Whether `url`'s host is this machine by name or address: such a URL keeps `http`.
fn is_loopback_host(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(address)) => address.is_loopback(),
        Some(Host::Ipv6(address)) => address.is_loopback(),
        None => false,
    }
}

/// The URL WebFetch fetches for `text`: parsed, `http` or `https` only, with `http`
/// upgraded to `https` except on this machine (where a test or a local server has no
/// certificate).
pub fn fetch_url(text: &str) -> Result<Url, FetchError> {
    let mut url = Url::parse(text.trim()).map_err(|error| FetchError::BadUrl {
        url: text.to_string(),
        reason: error.to_string(),
    })?;
    match url.scheme() {
        "https" => {}
        "http" if is_loopback_host(&url) => {}
        "http" => {
            // Changing between two special schemes always succeeds.
            let _ = url.set_scheme("https");
        }
        scheme => {
            return Err(FetchError::Scheme {
                url: text.to_string(),
                scheme: scheme.to_string(),
            });
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(FetchError::BadUrl {
            url: text.to_string(),
            reason: "it names no host".to_string(),
        });
    }
    Ok(url)
}

/// The host as rules name it: lowercase, without brackets or a trailing dot.
pub fn rule_host(url: &Url) -> String {
    match url.host() {
        Some(Host::Ipv6(address)) => address.to_string(),
        Some(Host::Ipv4(address)) => address.to_string(),
        Some(Host::Domain(name)) => name.trim_end_matches('.').to_ascii_lowercase(),
        None => String::new(),
    }
}

/// Whether a redirect from `from` to `to` stays on the same site: the same host (with or
/// without `www.`), the same port, and no step down from `https` to `http`.
fn same_site(from: &Url, to: &Url) -> bool {
    let bare = |url: &Url| {
        let host = rule_host(url);
        host.strip_prefix("www.")
            .map(str::to_string)
            .unwrap_or(host)
    };
    bare(from) == bare(to)
        && from.port_or_known_default() == to.port_or_known_default()
        && !(from.scheme() == "https" && to.scheme() == "http")
}

impl Fetcher {
    /// A fetcher within `limits`; `names_host` says which hosts rules open.
    pub fn new(names_host: HostRule, limits: FetchLimits) -> Fetcher {
        Fetcher {
            client: OnceLock::new(),
            pinned: Arc::new(Mutex::new(HashMap::new())),
            names_host,
            limits,
        }
    }

    fn client(&self) -> Result<&reqwest::Client, String> {
        self.client
            .get_or_init(|| {
                // reqwest is built without a default crypto provider; installing it twice
                // is harmless.
                let _ = rustls::crypto::ring::default_provider().install_default();
                reqwest::Client::builder()
                    // A proxy would resolve the name itself, past the address check.
                    .no_proxy()
                    .redirect(reqwest::redirect::Policy::none())
                    .dns_resolver(Arc::new(PinnedResolver(self.pinned.clone())))
                    .connect_timeout(Duration::from_secs(10))
                    .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION"), " (WebFetch)"))
                    .build()
                    .map_err(|error| crate::web::error_chain(&error))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Fetches `url` (see [`fetch_url`]), following same-host redirects.
    pub async fn fetch(&self, url: Url, cancel: &CancellationToken) -> Result<Fetched, FetchError> {
        let first = url.to_string();
        let work = self.follow(url);
        tokio::select! {
            outcome = tokio::time::timeout(self.limits.timeout, work) => match outcome {
                Ok(fetched) => fetched,
                Err(_) => Err(FetchError::TimedOut {
                    url: first,
                    seconds: self.limits.timeout.as_secs(),
                }),
            },
            _ = cancel.cancelled() => Err(FetchError::Cancelled),
        }
    }

    async fn follow(&self, mut url: Url) -> Result<Fetched, FetchError> {
        let first = url.to_string();
        let client = self.client().map_err(|message| FetchError::Http {
            url: first.clone(),
            message,
        })?;
        for _ in 0..=self.limits.max_redirects {
            self.check_host(&url).await?;
            let response = client
                .get(url.clone())
                .header("accept", "text/markdown, text/html;q=0.9, */*;q=0.8")
                .send()
                .await
                .map_err(|error| FetchError::Http {
                    url: url.to_string(),
                    message: crate::web::error_chain(&error),
                })?;
            let status = response.status();
            if status.is_redirection()
                && let Some(location) = response.headers().get(LOCATION)
            {
                let to = location
                    .to_str()
                    .ok()
                    .and_then(|location| url.join(location).ok())
                    .ok_or_else(|| FetchError::Http {
                        url: url.to_string(),
                        message: format!("it redirects to an unreadable location {location:?}"),
                    })?;
                let to = match to.scheme() {
                    "http" | "https" => fetch_url(to.as_str())?,
                    _ => to,
                };
                if !same_site(&url, &to) {
                    return Ok(Fetched::Redirect {
                        from: url,
                        to,
                        status: status.as_u16(),
                    });
                }
                url = to;
                continue;
            }
            if !status.is_success() {
                return Err(FetchError::Status {
                    url: url.to_string(),
                    status: status.to_string(),
                });
            }
            return self.read_page(url, response).await.map(Fetched::Page);
        }
        Err(FetchError::TooManyRedirects {
            url: first,
            limit: self.limits.max_redirects,
        })
    }

    /// Resolves `url`'s host, refuses it if any address is closed and no rule names it, and
    /// pins the checked addresses for the connection.
    async fn check_host(&self, url: &Url) -> Result<(), FetchError> {
        let host = rule_host(url);
        let port = url.port_or_known_default().unwrap_or(443);
        let addresses: Vec<SocketAddr> = match url.host() {
            Some(Host::Ipv4(address)) => vec![SocketAddr::new(address.into(), port)],
            Some(Host::Ipv6(address)) => vec![SocketAddr::new(address.into(), port)],
            Some(Host::Domain(name)) => tokio::net::lookup_host((name, port))
                .await
                .map_err(|error| FetchError::Resolve {
                    host: host.clone(),
                    message: error.to_string(),
                })?
                .collect(),
            None => Vec::new(),
        };
        if addresses.is_empty() {
            return Err(FetchError::Resolve {
                host,
                message: "it has no addresses".to_string(),
            });
        }
        let closed = addresses
            .iter()
            .find_map(|address| closed_address(address.ip()).map(|why| (address.ip(), why)));
        if let Some((address, why)) = closed
            && !(self.names_host)(&host)
        {
            return Err(FetchError::Closed { host, address, why });
        }
        if let Some(Host::Domain(name)) = url.host() {
            self.pinned
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .insert(name.to_ascii_lowercase(), addresses);
        }
        Ok(())
    }

    /// Reads the body within the size cap.
    async fn read_page(
        &self,
        url: Url,
        mut response: reqwest::Response,
    ) -> Result<Page, FetchError> {
        let limit = self.limits.max_bytes;
        let too_large = || FetchError::TooLarge {
            url: url.to_string(),
            limit,
        };
        let announced = response
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<u64>().ok());
        if announced.is_some_and(|length| length > limit) {
            return Err(too_large());
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let mut body = Vec::new();
        loop {
            let chunk = response.chunk().await.map_err(|error| FetchError::Http {
                url: url.to_string(),
                message: crate::web::error_chain(&error),
            })?;
            let Some(chunk) = chunk else { break };
            if body.len() as u64 + chunk.len() as u64 > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Page {
            url,
            content_type,
            body: String::from_utf8_lossy(&body).into_owned(),
        })
    }
}

#[cfg(test)]
#[path = "fetch_tests.rs"]
mod tests;
