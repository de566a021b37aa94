//! Splitting a byte stream into server-sent events, by the WHATWG event stream rules.
//!
//! The framer is fed the body's chunks as they arrive, cut anywhere, and hands out each event
//! the moment its closing blank line has been read. It holds only what it must between chunks:
//! the unfinished last line and the event being built, in buffers reused from event to event.
//! Complete lines are read straight from the chunk, never copied first.
//!
//! The rules kept, from the [HTML standard]:
//!
//! - a line ends with `\n`, `\r\n` or a lone `\r`; a blank line ends the event;
//! - a line starting with `:` is a comment;
//! - `name:value` sets field `name`, less one space at the start of `value`; a line without a
//!   colon is a field with an empty value;
//! - `data` lines are joined with `\n`; `event` names the event's type, `message` if none;
//! - an event without any `data` line is dropped;
//! - a byte order mark at the start of the stream is skipped.
//!
//! One rule is bent: the standard drops an event the stream ends inside, but a server that
//! closes the stream right after its last `data:` line, without the closing blank line, has
//! still said everything. [`SseFramer::finish`] hands out that last event; the caller decides
//! whether it is whole (cairn decodes its JSON, and a cut-off document counts as a cut
//! stream).
//!
//! `id` and `retry` are ignored along with unknown fields: they only serve to reconnect to a
//! stream, and cairn never does that (a broken request is sent again whole). Where a browser
//! decodes invalid UTF-8 with replacement characters, this framer reports an [`SseError`].
//!
//! [HTML standard]: https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation

use memchr::memchr2;

/// A UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One event of a server-sent event stream, borrowed from the [`SseFramer`] that read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event` field: the event's type, `message` when the event did not name one.
    pub event: &'a str,
    /// The `data` lines, joined with `\n`.
    pub data: &'a str,
}

/// A byte stream that cannot be read as server-sent events.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// The stream is not UTF-8 text.
    #[error("the event stream is not UTF-8: byte {offset} does not begin a valid character")]
    InvalidUtf8 {
        /// Where the invalid bytes begin, in bytes from the start of the stream (the byte
        /// order mark included).
        offset: u64,
    },
}

/// Splits a byte stream into [`SseEvent`]s, whatever the chunking.
///
/// Feed each chunk to [`feed`](Self::feed) in order; events go to a callback as they complete.
/// A chunk may end anywhere: inside a line, inside a UTF-8 character, or between the `\r` and
/// `\n` of one line end.
///
/// ```
/// use cairn_llm::sse::{SseError, SseFramer};
///
/// let mut framer = SseFramer::new();
/// let mut events = Vec::new();
/// for chunk in ["event: ping\r\nda", "ta: {}\r", "\n\r\n: a comment\n\ndata: 1\ndata: 2\n\n"] {
///     framer.feed(chunk.as_bytes(), |event| {
///         events.push((event.event.to_string(), event.data.to_string()));
///         Ok::<_, SseError>(())
///     })?;
/// }
/// assert_eq!(events, [("ping".into(), "{}".into()), ("message".into(), "1\n2".into())]);
/// # Ok::<_, SseError>(())
/// ```
#[derive(Debug, Default)]
pub struct SseFramer {
    /// The start of a line whose end has not arrived yet; empty between lines.
    partial: Vec<u8>,
    /// Where `partial` starts in the stream.
    partial_offset: u64,
    /// How many bytes of the stream came before the current chunk.
    fed: u64,
    /// The last chunk ended with `\r`, which ended a line already, so a `\n` at the start of
    /// the next chunk is the rest of that line end and not a blank line.
    after_cr: bool,
    /// A line has been read, so a byte order mark is no longer possible.
    started: bool,
    event: PendingEvent,
}

/// The fields of the event being read.
#[derive(Debug, Default)]
struct PendingEvent {
    /// The `event` field; empty means `message`.
    name: String,
    data: String,
    /// Whether a `data` line was read: `data:` alone gives an event with empty data, no `data`
    /// line gives no event.
    has_data: bool,
}

impl SseFramer {
    /// A framer at the start of a stream (a byte order mark may still come).
    pub fn new() -> Self {
        SseFramer::default()
    }

    /// Reads the next `chunk` of the stream, passing each event it completes to `on_event`.
    ///
    /// Stops at the first error, from the stream or from `on_event`; the rest of the chunk is
    /// not read, and the stream should be abandoned.
    pub fn feed<E>(
        &mut self,
        chunk: &[u8],
        mut on_event: impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E>
    where
        E: From<SseError>,
    {
        let chunk_offset = self.fed;
        self.fed += chunk.len() as u64;
        let mut start = 0;
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if chunk.first() == Some(&b'\n') {
                start = 1;
            }
        }
        if !self.partial.is_empty() {
            let Some(len) = memchr2(b'\n', b'\r', &chunk[start..]) else {
                self.partial.extend_from_slice(&chunk[start..]);
                return Ok(());
            };
            let end = start + len;
            self.partial.extend_from_slice(&chunk[start..end]);
            // Taken out of `self` for the call, then put back empty to keep its capacity.
            let mut line = std::mem::take(&mut self.partial);
            let read = self.read_line(&line, self.partial_offset, &mut on_event);
            line.clear();
            self.partial = line;
            read?;
            start = self.skip_line_end(chunk, end);
        }
        while let Some(len) = memchr2(b'\n', b'\r', &chunk[start..]) {
            let end = start + len;
            self.read_line(
                &chunk[start..end],
                chunk_offset + start as u64,
                &mut on_event,
            )?;
            start = self.skip_line_end(chunk, end);
        }
        if start < chunk.len() {
            self.partial_offset = chunk_offset + start as u64;
            self.partial.extend_from_slice(&chunk[start..]);
        }
        Ok(())
    }

    /// Ends the stream: the last line, if the stream ended inside it, is read as a whole line,
    /// and the event being built, if it has data, goes to `on_event` as if its closing blank
    /// line had come. A last line cut inside a UTF-8 character is dropped: the stream was cut.
    ///
    /// ```
    /// use cairn_llm::sse::{SseError, SseFramer};
    ///
    /// let mut framer = SseFramer::new();
    /// let mut events = Vec::new();
    /// let mut collect = |event: cairn_llm::sse::SseEvent<'_>| {
    ///     events.push(event.data.to_string());
    ///     Ok::<_, SseError>(())
    /// };
    /// framer.feed(b"event: message_stop\ndata: {\"type\":\"message_stop\"}", &mut collect)?;
    /// framer.finish(&mut collect)?;
    /// assert_eq!(events, ["{\"type\":\"message_stop\"}"]);
    /// # Ok::<_, SseError>(())
    /// ```
    pub fn finish<E>(
        &mut self,
        mut on_event: impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E>
    where
        E: From<SseError>,
    {
        let line = std::mem::take(&mut self.partial);
        if !line.is_empty() && std::str::from_utf8(&line).is_ok() {
            self.read_line(&line, self.partial_offset, &mut on_event)?;
        }
        self.event.dispatch(&mut on_event)
    }

    /// The index in `chunk` just past the line end at `end`, remembering a `\r` whose `\n`
    /// may be in the next chunk.
    fn skip_line_end(&mut self, chunk: &[u8], end: usize) -> usize {
        if chunk[end] == b'\n' {
            return end + 1;
        }
        match chunk.get(end + 1) {
            Some(b'\n') => end + 2,
            Some(_) => end + 1,
            None => {
                self.after_cr = true;
                end + 1
            }
        }
    }

    /// Reads one whole line, without its line end, that starts at `offset` in the stream.
    fn read_line<E>(
        &mut self,
        mut line: &[u8],
        mut offset: u64,
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E>
    where
        E: From<SseError>,
    {
        if !self.started {
            self.started = true;
            if let Some(rest) = line.strip_prefix(BOM) {
                line = rest;
                offset += BOM.len() as u64;
            }
        }
        if line.is_empty() {
            return self.event.dispatch(on_event);
        }
        let line = std::str::from_utf8(line).map_err(|error| SseError::InvalidUtf8 {
            offset: offset + error.valid_up_to() as u64,
        })?;
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => self.event.push_data(value),
            "event" => {
                self.event.name.clear();
                self.event.name.push_str(value);
            }
            // A comment (empty field name), `id`, `retry`, or a field of no known meaning.
            _ => {}
        }
        Ok(())
    }
}

impl PendingEvent {
    fn push_data(&mut self, value: &str) {
        if self.has_data {
            self.data.push('\n');
        }
        self.data.push_str(value);
        self.has_data = true;
    }

    /// Ends the event at a blank line: hands it to `on_event` if it has data, and starts the
    /// next one.
    fn dispatch<E>(
        &mut self,
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let result = if self.has_data {
            let event = match self.name.as_str() {
                "" => "message",
                name => name,
            };
            on_event(SseEvent {
                event,
                data: &self.data,
            })
        } else {
            Ok(())
        };
        self.name.clear();
        self.data.clear();
        self.has_data = false;
        result
    }
}

#[cfg(test)]
mod tests;
