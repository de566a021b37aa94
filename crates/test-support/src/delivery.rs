//! Delivering a body the way a reply asks: in chunks that each reach the socket on their own,
//! then a clean end, an aborted connection, or a stall.
//!
//! hyper coalesces body frames that are ready together into one write, so [`PacedBody`] hands
//! out one frame and then waits until hyper has flushed it, which [`WatchedStream`] reports.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::reply::{Chunking, Ending};

/// Counts completed flushes on one connection and wakes the body waiting for the next one.
#[derive(Debug, Default)]
pub(crate) struct FlushWatch {
    flushes: AtomicU64,
    waiting: Mutex<Option<Waker>>,
}

impl FlushWatch {
    fn count(&self) -> u64 {
        self.flushes.load(Ordering::Acquire)
    }

    /// Whether a flush completed after `seen`; if not, `waker` is woken when one does.
    fn flushed_since(&self, seen: u64, waker: &Waker) -> bool {
        if self.count() > seen {
            return true;
        }
        *self.waiting.lock().unwrap_or_else(|e| e.into_inner()) = Some(waker.clone());
        self.count() > seen
    }

    fn record_flush(&self) {
        self.flushes.fetch_add(1, Ordering::AcqRel);
        let waiting = self
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(waker) = waiting {
            waker.wake();
        }
    }
}

/// A TCP stream that tells its [`FlushWatch`] whenever hyper's buffered bytes have all been
/// written (hyper flushes the stream only once its own buffer is empty).
#[derive(Debug)]
pub(crate) struct WatchedStream {
    pub(crate) stream: TcpStream,
    pub(crate) watch: Arc<FlushWatch>,
}

impl AsyncRead for WatchedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for WatchedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = Pin::new(&mut self.stream).poll_flush(cx);
        if let Poll::Ready(Ok(())) = flushed {
            self.watch.record_flush();
        }
        flushed
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// The error that makes hyper abort a connection for [`crate::Reply::cut_after`].
#[derive(Debug, thiserror::Error)]
#[error(
    "scripted server: connection cut after {sent} body bytes, as the reply asked (Reply::cut_after)"
)]
pub(crate) struct ConnectionCut {
    sent: usize,
}

/// What the body does after its last frame.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Finish {
    End,
    Abort,
    Stall,
    /// Sends this frame again and again, each after the last was flushed.
    Repeat(Bytes),
}

/// A response body that sends its frames one flush at a time, then finishes as scripted.
#[derive(Debug)]
pub(crate) struct PacedBody {
    frames: VecDeque<Bytes>,
    finish: Finish,
    sent: usize,
    /// The declared content length, or `None` for chunked transfer encoding.
    content_length: Option<u64>,
    watch: Arc<FlushWatch>,
    /// Set while something written (the head, then each frame) may still sit in hyper's
    /// buffer: the flush count at the time it was written.
    unflushed_since: Option<u64>,
}

impl PacedBody {
    /// A body of `pieces` (its natural frames), re-chunked and truncated as asked.
    ///
    /// Create it just before handing the response to hyper: the first frame waits for the
    /// first flush after this call, which is the one carrying the response head.
    ///
    /// With `repeated`, the body never ends: that frame is sent over and over once the pieces
    /// are sent, for as long as the client reads.
    pub(crate) fn new(
        pieces: Vec<Bytes>,
        chunking: Chunking,
        ending: Ending,
        known_length: bool,
        repeated: Option<Bytes>,
        watch: Arc<FlushWatch>,
    ) -> PacedBody {
        let total: usize = pieces.iter().map(Bytes::len).sum();
        let mut frames: VecDeque<Bytes> = match chunking {
            Chunking::Natural => pieces
                .into_iter()
                .filter(|piece| !piece.is_empty())
                .collect(),
            Chunking::Bytes(size) => {
                let whole = Bytes::from(pieces.concat());
                (0..whole.len())
                    .step_by(size)
                    .map(|start| whole.slice(start..whole.len().min(start + size)))
                    .collect()
            }
        };
        let (limit, finish) = match ending {
            Ending::Complete => (total, Finish::End),
            Ending::CompleteLess(bytes) => (total.saturating_sub(bytes), Finish::End),
            Ending::CutAfter(bytes) => (bytes, Finish::Abort),
            Ending::StallAfter(bytes) => (bytes, Finish::Stall),
        };
        let finish = match repeated {
            Some(frame) => Finish::Repeat(frame),
            None => finish,
        };
        truncate_frames(&mut frames, limit);
        let length = match ending {
            Ending::CompleteLess(_) => limit,
            Ending::Complete | Ending::CutAfter(_) | Ending::StallAfter(_) => total,
        };
        PacedBody {
            frames,
            finish,
            sent: 0,
            content_length: known_length.then_some(length as u64),
            unflushed_since: Some(watch.count()),
            watch,
        }
    }
}

/// Keeps only the first `limit` bytes of `frames`.
fn truncate_frames(frames: &mut VecDeque<Bytes>, limit: usize) {
    let mut kept = 0;
    let mut keep_frames = 0;
    for frame in frames.iter_mut() {
        if kept >= limit {
            break;
        }
        frame.truncate(limit - kept);
        kept += frame.len();
        keep_frames += 1;
    }
    frames.truncate(keep_frames);
}

impl Body for PacedBody {
    type Data = Bytes;
    type Error = ConnectionCut;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, ConnectionCut>>> {
        let this = self.get_mut();
        if let Some(seen) = this.unflushed_since {
            if !this.watch.flushed_since(seen, cx.waker()) {
                return Poll::Pending;
            }
            this.unflushed_since = None;
        }
        if let Some(frame) = this.frames.pop_front() {
            this.sent += frame.len();
            this.unflushed_since = Some(this.watch.count());
            return Poll::Ready(Some(Ok(Frame::data(frame))));
        }
        match &this.finish {
            Finish::Repeat(frame) => {
                this.sent += frame.len();
                this.unflushed_since = Some(this.watch.count());
                Poll::Ready(Some(Ok(Frame::data(frame.clone()))))
            }
            Finish::End => Poll::Ready(None),
            Finish::Abort => Poll::Ready(Some(Err(ConnectionCut { sent: this.sent }))),
            // Never woken: hyper keeps the connection until the client closes it or the
            // server shuts down.
            Finish::Stall => Poll::Pending,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self.content_length {
            Some(length) => SizeHint::with_exact(length.saturating_sub(self.sent as u64)),
            None => SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn frames(pieces: &[&str], chunking: Chunking, ending: Ending) -> Vec<Bytes> {
        let pieces = pieces.iter().map(|p| Bytes::from(p.to_string())).collect();
        let body = PacedBody::new(pieces, chunking, ending, false, None, Arc::default());
        body.frames.into_iter().collect()
    }

    #[test]
    fn natural_chunking_keeps_the_pieces() {
        assert_eq!(
            frames(&["abc", "de"], Chunking::Natural, Ending::Complete),
            vec![Bytes::from("abc"), Bytes::from("de")]
        );
    }

    #[test]
    fn byte_chunking_splits_across_pieces() {
        assert_eq!(
            frames(&["abc", "de"], Chunking::Bytes(2), Ending::Complete),
            vec![Bytes::from("ab"), Bytes::from("cd"), Bytes::from("e")]
        );
    }

    #[test]
    fn cut_keeps_exactly_the_first_bytes() {
        assert_eq!(
            frames(&["abc", "de", "f"], Chunking::Natural, Ending::CutAfter(4)),
            vec![Bytes::from("abc"), Bytes::from("d")]
        );
        assert_eq!(
            frames(&["abc"], Chunking::Natural, Ending::StallAfter(0)),
            Vec::<Bytes>::new()
        );
        assert_eq!(
            frames(&["abc"], Chunking::Natural, Ending::CutAfter(99)),
            vec![Bytes::from("abc")]
        );
    }
}
