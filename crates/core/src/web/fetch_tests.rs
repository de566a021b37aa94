//! The fetcher against loopback servers that hang, overflow or redirect without end, and
//! the address and URL rules on their own.

use pretty_assertions::assert_eq;

use super::*;

fn parsed(text: &str) -> Url {
    Url::parse(text).unwrap_or_else(|error| panic!("{text}: {error}"))
}

#[test]
fn http_is_upgraded_except_on_this_machine() {
    let cases = [
        ("http://example.com/a?b=1", "https://example.com/a?b=1"),
        ("https://example.com/", "https://example.com/"),
        ("http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x"),
        ("http://localhost:3000/", "http://localhost:3000/"),
        ("http://[::1]:3000/", "http://[::1]:3000/"),
    ];
    for (given, fetched) in cases {
        assert_eq!(
            fetch_url(given).map(|url| url.to_string()),
            Ok(fetched.to_string())
        );
    }
}

#[test]
fn other_schemes_and_bad_urls_are_refused_by_name() {
    assert_eq!(
        fetch_url("file:///etc/passwd").map_err(|error| error.to_string()),
        Err("WebFetch fetches http and https URLs only, not file: file:///etc/passwd".into())
    );
    assert_eq!(
        fetch_url("not a url").map_err(|error| error.to_string()),
        Err("\"not a url\" is not a valid URL: relative URL without a base".into())
    );
}

#[test]
fn a_redirect_stays_on_the_site_only_with_the_same_host_and_port() {
    let from = parsed("https://example.com/a");
    assert!(same_site(&from, &parsed("https://www.example.com/b")));
    assert!(same_site(&from, &parsed("https://example.com:443/b")));
    assert!(!same_site(&from, &parsed("https://example.org/a")));
    assert!(!same_site(&from, &parsed("https://example.com:8443/a")));
    assert!(!same_site(&from, &parsed("http://example.com/a")));
    assert!(!same_site(&from, &parsed("https://evil.example.com/a")));
}

#[tokio::test]
async fn a_closed_address_is_refused_before_connecting_unless_a_rule_names_it() {
    let refuse_all = Fetcher::new(Arc::new(|_: &str| false), FetchLimits::default());
    let cancel = CancellationToken::new();
    for (url, address, why) in [
        ("http://127.0.0.1:9/", "127.0.0.1", ClosedAddress::Loopback),
        (
            "https://169.254.169.254/latest/meta-data/",
            "169.254.169.254",
            ClosedAddress::Metadata,
        ),
        ("https://10.0.0.8/", "10.0.0.8", ClosedAddress::Private),
        ("https://[fe80::1]/", "fe80::1", ClosedAddress::LinkLocal),
    ] {
        let host = address.to_string();
        assert_eq!(
            refuse_all.fetch(parsed(url), &cancel).await,
            Err(FetchError::Closed {
                host,
                address: address.parse().unwrap_or_else(|_| panic!("{address}")),
                why,
            }),
            "{url}"
        );
    }
    // `localhost` is a name: it is refused for what it resolves to.
    let refused = refuse_all
        .fetch(parsed("http://localhost:9/"), &cancel)
        .await;
    assert!(
        matches!(&refused, Err(FetchError::Closed { host, why: ClosedAddress::Loopback, .. }) if host == "localhost"),
        "{refused:?}"
    );
}

/// A loopback server that accepts connections and answers each with `reply`, or with
/// nothing at all (a server that hangs) when `reply` is `None`.
async fn server(reply: Option<Vec<u8>>) -> (u16, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap_or_else(|error| panic!("bind: {error}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
    let task = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut head = [0u8; 1024];
            let _ = stream.read(&mut head).await;
            if let Some(reply) = &reply {
                let _ = stream.write_all(reply).await;
            }
            match reply {
                // Held open, so a hanging server stays silent rather than closing.
                None => open.push(stream),
                Some(_) => drop(stream),
            }
        }
    });
    (port, task)
}

fn open_to_all(limits: FetchLimits) -> Fetcher {
    Fetcher::new(Arc::new(|_: &str| true), limits)
}

#[tokio::test]
async fn a_fetch_past_its_time_is_stopped() {
    let (port, server) = server(None).await;
    let limits = FetchLimits {
        timeout: Duration::from_millis(200),
        ..FetchLimits::default()
    };
    let url = parsed(&format!("http://127.0.0.1:{port}/slow"));
    assert_eq!(
        open_to_all(limits)
            .fetch(url.clone(), &CancellationToken::new())
            .await,
        Err(FetchError::TimedOut {
            url: url.to_string(),
            seconds: 0
        })
    );
    server.abort();
}

#[tokio::test]
async fn a_body_past_the_cap_is_refused_even_without_a_length() {
    let mut reply =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n".to_vec();
    reply.extend(std::iter::repeat_n(b'a', 4096));
    let (port, server) = server(Some(reply)).await;
    let limits = FetchLimits {
        max_bytes: 1000,
        ..FetchLimits::default()
    };
    let url = parsed(&format!("http://127.0.0.1:{port}/"));
    assert_eq!(
        open_to_all(limits)
            .fetch(url.clone(), &CancellationToken::new())
            .await,
        Err(FetchError::TooLarge {
            url: url.to_string(),
            limit: 1000
        })
    );
    server.abort();
}

#[tokio::test]
async fn redirects_past_the_cap_are_an_error() {
    let reply = b"HTTP/1.1 302 Found\r\nlocation: /again\r\ncontent-length: 0\r\n\r\n".to_vec();
    let (port, server) = server(Some(reply)).await;
    let limits = FetchLimits {
        max_redirects: 2,
        ..FetchLimits::default()
    };
    let url = parsed(&format!("http://127.0.0.1:{port}/"));
    assert_eq!(
        open_to_all(limits)
            .fetch(url.clone(), &CancellationToken::new())
            .await,
        Err(FetchError::TooManyRedirects {
            url: url.to_string(),
            limit: 2
        })
    );
    server.abort();
}
