//! SSE decoding throughput: a large, realistic Messages API stream held in memory, fed in
//! 16 KiB chunks through the same framing, decoding and assembling path as the HTTP client.

use std::hint::black_box;

use cairn_llm::anthropic::stream::decode_stream_with;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

const TARGET_BYTES: usize = 8 * 1024 * 1024;
const CHUNK_BYTES: usize = 16 * 1024;

const WORDS: &[&str] = &[
    "the",
    "function",
    "returns",
    "a",
    "Result",
    "so",
    "callers",
    "can",
    "handle",
    "errors",
    "without",
    "panicking;",
    "`fn main()`",
    "reads",
    "config.toml",
    "and",
    "then",
    "spawns",
    "tasks",
    "über",
    "naïve",
    "—",
    "✓",
    "🦀",
    "\"quoted\"",
    "path\\to\\file",
    "line\nbreak",
    "\ttab",
    "{braces}",
    "[brackets]",
    "HashMap<String, Vec<u8>>",
    "0.25",
    "42",
    "ok.",
];

/// Writes one SSE event the way the API does.
fn push_event(out: &mut String, data: &Value) {
    let name = data["type"].as_str().unwrap_or("message");
    out.push_str("event: ");
    out.push_str(name);
    out.push_str("\ndata: ");
    write_api_json(out, data);
    out.push_str("\n\n");
}

/// Compact JSON with `type` first in every object, the way the API writes it.
fn write_api_json(out: &mut String, value: &Value) {
    match value {
        Value::Object(map) => {
            out.push('{');
            let typed = map.get_key_value("type").into_iter();
            let fields = typed.chain(map.iter().filter(|(key, _)| *key != "type"));
            for (position, (key, value)) in fields.enumerate() {
                if position > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                write_api_json(out, value);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A few words, as a model streams them (deltas of a handful of tokens).
fn words(rng: &mut fastrand::Rng, max: usize) -> String {
    let count = rng.usize(1..=max);
    let mut text = String::new();
    for _ in 0..count {
        text.push_str(WORDS[rng.usize(..WORDS.len())]);
        text.push(' ');
    }
    text
}

/// A stream of about `TARGET_BYTES`: mostly text deltas, with thinking blocks and tool calls
/// whose input arrives in JSON pieces.
fn generate_stream() -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(0xca1e);
    let mut out = String::with_capacity(TARGET_BYTES + 64 * 1024);
    push_event(
        &mut out,
        &json!({"type": "message_start", "message": {
            "id": "msg_bench", "type": "message", "role": "assistant", "content": [],
            "model": "claude-sonnet-4-5-20250929", "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 2048, "output_tokens": 1, "cache_read_input_tokens": 1024}
        }}),
    );
    let mut index = 0;
    while out.len() < TARGET_BYTES {
        match index % 5 {
            // Thinking, with its signature.
            0 => {
                push_event(
                    &mut out,
                    &json!({"type": "content_block_start", "index": index,
                            "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
                );
                for _ in 0..rng.usize(20..80) {
                    push_event(
                        &mut out,
                        &json!({"type": "content_block_delta", "index": index,
                                "delta": {"type": "thinking_delta", "thinking": words(&mut rng, 6)}}),
                    );
                }
                push_event(
                    &mut out,
                    &json!({"type": "content_block_delta", "index": index,
                            "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM".repeat(20)}}),
                );
            }
            // A tool call whose input streams in small pieces.
            3 => {
                push_event(
                    &mut out,
                    &json!({"type": "content_block_start", "index": index, "content_block":
                            {"type": "tool_use", "id": format!("toolu_{index}"), "name": "Edit", "input": {}}}),
                );
                let input = json!({
                    "file_path": format!("/work/src/module_{index}.rs"),
                    "old_string": words(&mut rng, 40),
                    "new_string": words(&mut rng, 60),
                })
                .to_string();
                let mut rest = input.as_str();
                while !rest.is_empty() {
                    let mut end = rest.len().min(rng.usize(8..40));
                    while !rest.is_char_boundary(end) {
                        end += 1;
                    }
                    let (piece, tail) = rest.split_at(end);
                    push_event(
                        &mut out,
                        &json!({"type": "content_block_delta", "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": piece}}),
                    );
                    rest = tail;
                }
            }
            // Text, the bulk of a real stream.
            _ => {
                push_event(
                    &mut out,
                    &json!({"type": "content_block_start", "index": index,
                            "content_block": {"type": "text", "text": ""}}),
                );
                for _ in 0..rng.usize(100..400) {
                    push_event(
                        &mut out,
                        &json!({"type": "content_block_delta", "index": index,
                                "delta": {"type": "text_delta", "text": words(&mut rng, 8)}}),
                    );
                    if rng.usize(..50) == 0 {
                        push_event(&mut out, &json!({"type": "ping"}));
                    }
                }
            }
        }
        push_event(
            &mut out,
            &json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }
    push_event(
        &mut out,
        &json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                "usage": {"output_tokens": 250_000}}),
    );
    push_event(&mut out, &json!({"type": "message_stop"}));
    out.into_bytes()
}

fn bench_decode(c: &mut Criterion) {
    let stream = generate_stream();
    // Check once that the stream decodes completely before timing it.
    let mut events = 0usize;
    match decode_stream_with(stream.chunks(CHUNK_BYTES), &mut |_| events += 1) {
        Ok(response) => assert!(!response.content.is_empty() && events > 10_000),
        Err(error) => panic!("the benchmark stream does not decode: {error}"),
    }

    let mut group = c.benchmark_group("sse_decode");
    group.throughput(Throughput::Bytes(stream.len() as u64));
    group.sample_size(20);
    group.bench_function("16KiB_chunks", |b| {
        b.iter(|| {
            let mut events = 0usize;
            let response =
                decode_stream_with(black_box(&stream).chunks(CHUNK_BYTES), &mut |event| {
                    events += 1;
                    black_box(event);
                });
            black_box((response.is_ok(), events))
        });
    });
    group.finish();
}

/// The two stages measured apart, to see which one limits the whole: framing alone (with
/// the crate's `SseFramer`, on 16 KiB chunks) and JSON decoding alone (on already framed
/// data).
mod stages {
    use cairn_llm::sse::{SseError, SseFramer};

    use super::*;

    /// Frames `stream` cut into `chunk`-byte pieces, passing each event's data to `on_data`.
    fn frame(stream: &[u8], chunk: usize, mut on_data: impl FnMut(&str)) {
        let mut framer = SseFramer::new();
        for piece in stream.chunks(chunk) {
            let framed = framer.feed(piece, |event| {
                on_data(event.data);
                Ok::<_, SseError>(())
            });
            if let Err(error) = framed {
                panic!("the benchmark stream does not frame: {error}");
            }
        }
    }

    pub fn bench(c: &mut Criterion) {
        let stream = generate_stream();
        let mut data = Vec::new();
        frame(&stream, CHUNK_BYTES, |event| data.push(event.to_string()));
        let mut group = c.benchmark_group("sse_stages");
        group.throughput(Throughput::Bytes(stream.len() as u64));
        group.sample_size(10);
        group.bench_function(format!("framing_{CHUNK_BYTES}B_chunks"), |b| {
            b.iter(|| {
                let mut bytes = 0usize;
                frame(black_box(&stream), CHUNK_BYTES, |data| bytes += data.len());
                black_box(bytes)
            })
        });
        group.bench_function("json_decoding", |b| {
            b.iter(|| {
                let decoded = data
                    .iter()
                    .filter(|data| cairn_llm::anthropic::stream::parse_event(data).is_ok())
                    .count();
                black_box(decoded)
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench_decode, stages::bench);
criterion_main!(benches);
