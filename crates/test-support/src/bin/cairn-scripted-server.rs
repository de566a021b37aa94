//! `cairn-scripted-server`: serves scripted replies, for benchmarks and for trying the
//! interactive UI by hand: a script of replies in order (text, thinking, tool calls), then one
//! text reply to every request after them.
//!
//! Prints its URL as the first line of stdout, then serves until killed.

use std::io::Write;
use std::process::ExitCode;

use cairn_test_support::{Reply, ScriptedBlock, ScriptedServer};

const USAGE: &str = "\
usage: cairn-scripted-server [--script FILE] [--text TEXT] [--chunk-size BYTES]

Serves Anthropic-style streamed replies on 127.0.0.1 (random port), prints its URL as the
first line of stdout, and runs until killed.

  --script FILE       replies for the first requests, in order: a JSON array whose items are
                      arrays of blocks, each {\"text\": T}, {\"thinking\": T} or
                      {\"tool_use\": {\"name\": N, \"input\": {...}}}
  --text TEXT         the reply to every later request (default: \"hello\")
  --chunk-size BYTES  send the body in HTTP chunks of BYTES bytes (default: one per SSE event)";

#[derive(Debug, PartialEq)]
struct Options {
    text: String,
    chunk_size: Option<usize>,
    script: Option<std::path::PathBuf>,
}

#[derive(Debug, PartialEq)]
enum Command {
    Serve(Options),
    Help,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Command, String> {
    let mut options = Options {
        text: "hello".to_owned(),
        chunk_size: None,
        script: None,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--text" => {
                options.text = args.next().ok_or("--text needs a value")?;
            }
            "--chunk-size" => {
                let value = args.next().ok_or("--chunk-size needs a value")?;
                let bytes = value
                    .parse::<usize>()
                    .ok()
                    .filter(|bytes| *bytes > 0)
                    .ok_or_else(|| {
                        format!("--chunk-size wants a positive number, not {value:?}")
                    })?;
                options.chunk_size = Some(bytes);
            }
            "--script" => {
                options.script = Some(args.next().ok_or("--script needs a file")?.into());
            }
            "-h" | "--help" => return Ok(Command::Help),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Command::Serve(options))
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(Command::Serve(options)) => options,
        Ok(Command::Help) => {
            let _ = writeln!(std::io::stdout(), "{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            let _ = writeln!(
                std::io::stderr(),
                "cairn-scripted-server: {message}\n\n{USAGE}"
            );
            return ExitCode::from(2);
        }
    };
    let script = match &options.script {
        Some(path) => match read_script(path) {
            Ok(replies) => replies,
            Err(message) => {
                let _ = writeln!(std::io::stderr(), "cairn-scripted-server: {message}");
                return ExitCode::from(2);
            }
        },
        None => Vec::new(),
    };
    let server = ScriptedServer::start();
    for reply in script {
        server.push(reply);
    }
    let mut reply = Reply::text(options.text);
    if let Some(bytes) = options.chunk_size {
        reply = reply.with_chunk_size(bytes);
    }
    server.set_default_reply(reply);

    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "{}", server.url())
        .and_then(|()| stdout.flush())
        .is_err()
    {
        // Whoever started us can no longer learn where we listen.
        return ExitCode::FAILURE;
    }
    drop(stdout);
    loop {
        std::thread::park();
    }
}

/// The replies a `--script` file lists; the error names the file and the reply at fault.
fn read_script(path: &std::path::Path) -> Result<Vec<Reply>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    parse_script(&text).map_err(|err| format!("{}: {err}", path.display()))
}

fn parse_script(text: &str) -> Result<Vec<Reply>, String> {
    let replies: Vec<Vec<serde_json::Value>> =
        serde_json::from_str(text).map_err(|err| format!("not a JSON array of replies: {err}"))?;
    let mut calls = 0;
    replies
        .into_iter()
        .enumerate()
        .map(|(index, blocks)| {
            let blocks = blocks
                .into_iter()
                .map(|block| {
                    if let Some(text) = block.get("text").and_then(|v| v.as_str()) {
                        return Ok(ScriptedBlock::Text(text.to_owned()));
                    }
                    if let Some(text) = block.get("thinking").and_then(|v| v.as_str()) {
                        return Ok(ScriptedBlock::Thinking {
                            thinking: text.to_owned(),
                            signature: "scripted".to_owned(),
                        });
                    }
                    let call = block.get("tool_use").ok_or_else(|| {
                        format!("reply {index}: a block is not text, thinking or tool_use: {block}")
                    })?;
                    let name = call
                        .get("name")
                        .and_then(|v| v.as_str())
                        .ok_or_else(|| format!("reply {index}: a tool_use has no \"name\""))?;
                    calls += 1;
                    Ok(ScriptedBlock::ToolUse {
                        id: format!("toolu_scripted_{calls}"),
                        name: name.to_owned(),
                        input: call
                            .get("input")
                            .cloned()
                            .unwrap_or_else(|| serde_json::json!({})),
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok(Reply::blocks(blocks))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Command, String> {
        parse_args(args.iter().map(|arg| arg.to_string()))
    }

    #[test]
    fn parses_text_and_chunk_size() {
        assert_eq!(
            parse(&["--text", "hi there", "--chunk-size", "7"]),
            Ok(Command::Serve(Options {
                text: "hi there".to_owned(),
                chunk_size: Some(7),
                script: None,
            }))
        );
    }

    #[test]
    fn a_script_lists_replies_of_text_thinking_and_tool_calls() {
        let replies = parse_script(
            r#"[[{"thinking": "hm"}, {"text": "Let me look."},
                 {"tool_use": {"name": "Read", "input": {"file_path": "a.txt"}}}],
                [{"text": "Done."}]]"#,
        )
        .unwrap();
        assert_eq!(replies.len(), 2);
        let body = String::from_utf8(replies[0].body_bytes("m")).unwrap();
        assert!(body.contains("toolu_scripted_1"), "{body}");
        assert!(body.contains("tool_use"), "{body}");
        let error = parse_script(r#"[[{"image": 1}]]"#).err().unwrap();
        assert!(error.contains("reply 0"), "{error}");
        assert!(parse_script("{}").is_err());
    }

    #[test]
    fn rejects_bad_arguments() {
        assert_eq!(
            parse(&["--chunk-size", "0"]),
            Err("--chunk-size wants a positive number, not \"0\"".to_owned())
        );
        assert_eq!(parse(&["--text"]), Err("--text needs a value".to_owned()));
        assert_eq!(
            parse(&["--port"]),
            Err("unknown argument \"--port\"".to_owned())
        );
    }
}
