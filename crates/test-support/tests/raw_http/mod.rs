//! A deliberately tiny HTTP/1.1 client over a raw TCP stream, so the tests see exactly what
//! went over the wire: chunk boundaries, and whether the body ended cleanly.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// How the response body ended on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The terminating chunk (or the whole content-length) arrived.
    Complete,
    /// The connection closed (or reset) before the body was complete.
    Truncated,
    /// Still open with the body incomplete when we stopped reading.
    Open,
}

#[derive(Clone, Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The size of each HTTP chunk, in order (empty without chunked encoding).
    pub chunk_sizes: Vec<usize>,
    pub ending: Ending,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub fn body_text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap()
    }
}

/// Connects to `url` (`http://127.0.0.1:PORT`) and sends a request with `Connection: close`.
pub fn send(url: &str, path: &str, headers: &[(&str, &str)], body: &str) -> TcpStream {
    let address = url.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(address).unwrap();
    // A safety net against a hung test, not a synchronisation device.
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nhost: {address}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

/// Sends a JSON POST and reads the whole response, until the server closes the connection.
pub fn post(url: &str, headers: &[(&str, &str)], body: &str) -> RawResponse {
    let stream = send(url, "/v1/messages", headers, body);
    read_until(stream, |_| false).0
}

/// Reads until the server closes the connection or `done` holds for what arrived so far.
/// Returns the stream too so the caller can keep probing it.
pub fn read_until(
    mut stream: TcpStream,
    done: impl Fn(&RawResponse) -> bool,
) -> (RawResponse, TcpStream) {
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        if let Some(response) = parse(&received, false)
            && done(&response)
        {
            return (response, stream);
        }
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => received.extend_from_slice(&buffer[..n]),
            Err(err) if err.kind() == ErrorKind::ConnectionReset => break,
            Err(err) => panic!("reading the response failed: {err}"),
        }
    }
    let response = parse(&received, true).unwrap_or_else(|| {
        panic!(
            "no response head in {:?}",
            String::from_utf8_lossy(&received)
        )
    });
    (response, stream)
}

/// Parses what arrived so far; `closed` says whether the connection has ended.
fn parse(received: &[u8], closed: bool) -> Option<RawResponse> {
    let head_end = received.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&received[..head_end]).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .map(|line| {
            let (name, value) = line.split_once(':').unwrap();
            (name.trim().to_lowercase(), value.trim().to_owned())
        })
        .collect();
    let mut response = RawResponse {
        status,
        headers,
        body: Vec::new(),
        chunk_sizes: Vec::new(),
        ending: Ending::Open,
    };
    let rest = &received[head_end + 4..];
    if response.header("transfer-encoding") == Some("chunked") {
        let mut at = 0;
        while let Some(line_len) = rest[at..].windows(2).position(|w| w == b"\r\n") {
            let size_text = std::str::from_utf8(&rest[at..at + line_len]).unwrap();
            let size = usize::from_str_radix(size_text, 16).unwrap();
            let data_start = at + line_len + 2;
            if size == 0 {
                if rest.len() >= data_start + 2 {
                    response.ending = Ending::Complete;
                }
                break;
            }
            if rest.len() < data_start + size + 2 {
                // A partial chunk counts as received body, as a streaming client sees it.
                let partial = &rest[data_start.min(rest.len())..rest.len().min(data_start + size)];
                if !partial.is_empty() {
                    response.body.extend_from_slice(partial);
                    response.chunk_sizes.push(partial.len());
                }
                break;
            }
            response
                .body
                .extend_from_slice(&rest[data_start..data_start + size]);
            response.chunk_sizes.push(size);
            at = data_start + size + 2;
        }
    } else if let Some(length) = response.header("content-length") {
        let length: usize = length.parse().unwrap();
        response.body = rest[..rest.len().min(length)].to_vec();
        if rest.len() >= length {
            response.ending = Ending::Complete;
        }
    } else {
        response.body = rest.to_vec();
        if closed {
            response.ending = Ending::Complete;
        }
    }
    if closed && response.ending == Ending::Open {
        response.ending = Ending::Truncated;
    }
    Some(response)
}
