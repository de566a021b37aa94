use pretty_assertions::assert_eq;

use super::*;

/// An event as the tests compare it: (type, data).
type Owned = (String, String);

fn event(name: &str, data: &str) -> Owned {
    (name.to_string(), data.to_string())
}

/// Frames `chunks` in order with one framer, collecting every event.
fn frame_chunks<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Result<Vec<Owned>, SseError> {
    let mut framer = SseFramer::new();
    let mut events = Vec::new();
    for chunk in chunks {
        framer.feed(chunk, |event| {
            events.push((event.event.to_string(), event.data.to_string()));
            Ok::<_, SseError>(())
        })?;
    }
    Ok(events)
}

fn frame(text: &str) -> Result<Vec<Owned>, SseError> {
    frame_chunks([text.as_bytes()])
}

/// A stream exercising every rule at once, with `\n` line ends: comments, named and unnamed
/// events, multi-line and empty data, fields without a colon, ignored fields, multi-byte
/// characters, and an event with no data.
const STREAM: &str = concat!(
    "\u{feff}: opening comment\n",
    "\n",
    "event: message_start\n",
    "data: {\"type\":\"message_start\"}\n",
    "\n",
    "id: 7\n",
    "retry: 3000\n",
    "data: first line\n",
    ":comment between data lines\n",
    "data:second line, no space\n",
    "data:  two spaces, one kept\n",
    "\n",
    "event: only a name, no data\n",
    "\n",
    "event: text\n",
    "data: héllo wörld — ✓ 🦀 a:b::c\n",
    "unknown: field\n",
    "\n",
    "data\n",
    "\n",
    "event\n",
    "data:\n",
    "data:\n",
    "\n",
    "event: message_stop\n",
    "data: {\"type\":\"message_stop\"}\n",
    "\n",
    "data: never finished\n",
);

fn stream_events() -> Vec<Owned> {
    vec![
        event("message_start", r#"{"type":"message_start"}"#),
        event(
            "message",
            "first line\nsecond line, no space\n two spaces, one kept",
        ),
        event("text", "héllo wörld — ✓ 🦀 a:b::c"),
        event("message", ""),
        event("message", "\n"),
        event("message_stop", r#"{"type":"message_stop"}"#),
    ]
}

/// [`STREAM`] with each line end written as `line_end`.
fn stream_with(line_end: &str) -> String {
    STREAM.replace('\n', line_end)
}

#[test]
fn every_rule_on_one_stream() {
    assert_eq!(frame(STREAM), Ok(stream_events()));
}

#[test]
fn lf_crlf_and_cr_line_ends_give_the_same_events() {
    for line_end in ["\n", "\r\n", "\r"] {
        assert_eq!(
            frame(&stream_with(line_end)),
            Ok(stream_events()),
            "{line_end:?}"
        );
    }
    // Line ends mixed within one stream.
    let mut mixed = String::new();
    for (n, line) in STREAM.split_inclusive('\n').enumerate() {
        mixed.push_str(line.trim_end_matches('\n'));
        mixed.push_str(["\n", "\r\n", "\r"][n % 3]);
    }
    assert_eq!(frame(&mixed), Ok(stream_events()));
}

#[test]
fn a_split_at_any_byte_gives_the_same_events() {
    for line_end in ["\n", "\r\n", "\r"] {
        let text = stream_with(line_end);
        let bytes = text.as_bytes();
        for split in 0..=bytes.len() {
            let (first, second) = bytes.split_at(split);
            assert_eq!(
                frame_chunks([first, second]),
                Ok(stream_events()),
                "{line_end:?} split at {split}"
            );
        }
    }
}

#[test]
fn two_splits_anywhere_give_the_same_events() {
    // Every pair of cut points, so a line can begin in one chunk, cross a whole chunk and end
    // in a third.
    let text = stream_with("\r\n");
    let bytes = text.as_bytes();
    for first in 0..=bytes.len() {
        for second in first..=bytes.len() {
            let chunks = [&bytes[..first], &bytes[first..second], &bytes[second..]];
            assert_eq!(
                frame_chunks(chunks),
                Ok(stream_events()),
                "cut at {first} and {second}"
            );
        }
    }
}

#[test]
fn one_byte_at_a_time_gives_the_same_events() {
    for line_end in ["\n", "\r\n", "\r"] {
        let text = stream_with(line_end);
        assert_eq!(
            frame_chunks(text.as_bytes().chunks(1)),
            Ok(stream_events()),
            "{line_end:?}"
        );
    }
}

#[test]
fn empty_chunks_change_nothing() {
    let text = stream_with("\r\n");
    let chunks = text
        .as_bytes()
        .chunks(1)
        .flat_map(|byte| [byte, &[][..], &[][..]]);
    assert_eq!(frame_chunks(chunks), Ok(stream_events()));
}

#[test]
fn a_cr_ending_a_chunk_and_its_lf_starting_the_next_are_one_line_end() {
    // Read as two line ends, the `\n` would be a blank line ending the event early.
    let chunks: [&[u8]; 2] = [b"data: a\r", b"\ndata: b\r\n\r\n"];
    assert_eq!(frame_chunks(chunks), Ok(vec![event("message", "a\nb")]));
    // The same with an empty chunk between the two halves.
    let chunks: [&[u8]; 3] = [b"data: a\r", b"", b"\ndata: b\r\n\r\n"];
    assert_eq!(frame_chunks(chunks), Ok(vec![event("message", "a\nb")]));
    // A lone `\r` ends its line at once: the event is out before the next chunk arrives.
    let chunks: [&[u8]; 1] = [b"data: a\r\r"];
    assert_eq!(frame_chunks(chunks), Ok(vec![event("message", "a")]));
    // `\r` then `\r\n`: two line ends, so a blank line.
    let chunks: [&[u8]; 2] = [b"data: a\r", b"\r\ndata: b\n\n"];
    assert_eq!(
        frame_chunks(chunks),
        Ok(vec![event("message", "a"), event("message", "b")])
    );
}

#[test]
fn lf_cr_is_two_line_ends() {
    assert_eq!(
        frame("data: a\n\rdata: b\n\n"),
        Ok(vec![event("message", "a"), event("message", "b")])
    );
}

#[test]
fn several_events_in_one_chunk() {
    let text = "data: 1\n\ndata: 2\n\nevent: e\ndata: 3\n\n";
    assert_eq!(
        frame(text),
        Ok(vec![
            event("message", "1"),
            event("message", "2"),
            event("e", "3")
        ])
    );
}

#[test]
fn comments_are_ignored() {
    assert_eq!(
        frame(": hi\n:\n\n:data: x\n\ndata: y\n: between\n\n"),
        Ok(vec![event("message", "y")])
    );
}

#[test]
fn one_space_after_the_colon_is_dropped() {
    assert_eq!(
        frame("data:x\n\ndata: x\n\ndata:  x\n\ndata:\tx\n\ndata: \n\n"),
        Ok(vec![
            event("message", "x"),
            event("message", "x"),
            event("message", " x"),
            event("message", "\tx"),
            event("message", ""),
        ])
    );
    assert_eq!(
        frame("event:  spaced\ndata: x\n\n"),
        Ok(vec![event(" spaced", "x")])
    );
}

#[test]
fn a_line_without_a_colon_is_a_field_with_an_empty_value() {
    // `data` alone adds an empty data line; `event` alone clears the name back to `message`.
    assert_eq!(
        frame("data\ndata\n\nevent: named\nevent\ndata: x\n\n"),
        Ok(vec![event("message", "\n"), event("message", "x")])
    );
}

#[test]
fn field_names_are_exact() {
    assert_eq!(
        frame("Data: x\ndata : y\n data: z\nevent: e\n\n"),
        Ok(vec![])
    );
}

#[test]
fn an_event_without_data_is_not_dispatched_and_its_name_does_not_leak() {
    assert_eq!(
        frame("event: ping\n\ndata: x\n\nevent: a\nid: 1\n\n\n\ndata: y\n\n"),
        Ok(vec![event("message", "x"), event("message", "y")])
    );
}

#[test]
fn the_last_event_line_wins() {
    assert_eq!(
        frame("event: a\nevent: b\ndata: x\n\n"),
        Ok(vec![event("b", "x")])
    );
}

#[test]
fn id_and_retry_are_ignored() {
    assert_eq!(
        frame("id: 1\nretry: 10\ndata: x\nid\nretry: soon\n\n"),
        Ok(vec![event("message", "x")])
    );
}

#[test]
fn an_event_the_stream_ends_inside_is_dropped() {
    assert_eq!(
        frame("data: x\n\ndata: y\n"),
        Ok(vec![event("message", "x")])
    );
    assert_eq!(frame("data: x\n\ndata: y"), Ok(vec![event("message", "x")]));
    assert_eq!(
        frame("data: x\n\ndata: y\r"),
        Ok(vec![event("message", "x")])
    );
    assert_eq!(frame(""), Ok(vec![]));
}

#[test]
fn a_byte_order_mark_is_skipped_only_at_the_start() {
    assert_eq!(
        frame("\u{feff}data: x\n\n"),
        Ok(vec![event("message", "x")])
    );
    // Split inside the mark.
    let text = "\u{feff}data: x\n\n".as_bytes();
    for split in 0..=3 {
        let (first, second) = text.split_at(split);
        assert_eq!(
            frame_chunks([first, second]),
            Ok(vec![event("message", "x")])
        );
    }
    // A second mark, or one later in the stream, is part of a field name nobody knows.
    assert_eq!(frame("\u{feff}\u{feff}data: x\n\n"), Ok(vec![]));
    assert_eq!(
        frame("data: x\n\n\u{feff}data: y\n\n"),
        Ok(vec![event("message", "x")])
    );
    // A mark alone on the first line is a blank line.
    assert_eq!(
        frame("\u{feff}\ndata: x\n\n"),
        Ok(vec![event("message", "x")])
    );
}

#[test]
fn invalid_utf8_is_an_error_with_its_offset() {
    let error = |offset| Err(SseError::InvalidUtf8 { offset });
    assert_eq!(frame_chunks([&b"data: \xff\n\n"[..]]), error(6));
    // In a line carried over from an earlier chunk.
    assert_eq!(
        frame_chunks([&b"data: x\n\ndata: ab"[..], b"c\xc3\x28\n\n"]),
        error(18)
    );
    // A character cut off by its line's end.
    assert_eq!(frame_chunks([&b"data: \xe2\x9c\n\n"[..]]), error(6));
    // After a byte order mark, counted in the offset.
    assert_eq!(frame_chunks([&b"\xef\xbb\xbfdata: \x80\n\n"[..]]), error(9));
    // Anywhere in a line, comments included.
    assert_eq!(frame_chunks([&b": \xc0\xaf\n"[..]]), error(2));
    assert_eq!(
        SseError::InvalidUtf8 { offset: 6 }.to_string(),
        "the event stream is not UTF-8: byte 6 does not begin a valid character"
    );
}

#[test]
fn events_before_invalid_utf8_are_delivered() {
    let mut framer = SseFramer::new();
    let mut events = Vec::new();
    let result = framer.feed(b"data: 1\n\ndata: \xff\n\ndata: 3\n\n", |event| {
        events.push(event.data.to_string());
        Ok::<_, SseError>(())
    });
    assert_eq!(result, Err(SseError::InvalidUtf8 { offset: 15 }));
    assert_eq!(events, vec!["1".to_string()]);
}

#[test]
fn an_error_from_the_callback_stops_the_chunk() {
    #[derive(Debug, PartialEq)]
    enum Stop {
        Here(String),
        Sse(SseError),
    }
    impl From<SseError> for Stop {
        fn from(error: SseError) -> Self {
            Stop::Sse(error)
        }
    }
    let mut framer = SseFramer::new();
    let mut seen = Vec::new();
    let result = framer.feed(b"data: 1\n\ndata: 2\n\ndata: 3\n\n", |event| {
        seen.push(event.data.to_string());
        match event.data {
            "2" => Err(Stop::Here(event.data.to_string())),
            _ => Ok(()),
        }
    });
    assert_eq!(result, Err(Stop::Here("2".to_string())));
    assert_eq!(seen, vec!["1".to_string(), "2".to_string()]);
}

#[test]
fn long_lines_across_many_chunks() {
    let data = "ünïcødé ✓ 🦀 ".repeat(2_000);
    let text = format!("event: big\ndata: {data}\ndata: {data}\n\n");
    let expected = Ok(vec![event("big", &format!("{data}\n{data}"))]);
    for size in [7, 1000, 4096] {
        assert_eq!(
            frame_chunks(text.as_bytes().chunks(size)),
            expected,
            "chunks of {size}"
        );
    }
}
