//! `cairn-scripted-server`: serves one scripted text reply to every request, for benchmarks.
//!
//! Prints its URL as the first line of stdout, then serves until killed.

use std::io::Write;
use std::process::ExitCode;

use cairn_test_support::{Reply, ScriptedServer};

const USAGE: &str = "\
usage: cairn-scripted-server [--text TEXT] [--chunk-size BYTES]

Serves an Anthropic-style streamed text reply to every request on 127.0.0.1 (random port),
prints its URL as the first line of stdout, and runs until killed.

  --text TEXT         the reply text (default: \"hello\")
  --chunk-size BYTES  send the body in HTTP chunks of BYTES bytes (default: one per SSE event)";

#[derive(Debug, PartialEq)]
struct Options {
    text: String,
    chunk_size: Option<usize>,
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
    let server = ScriptedServer::start();
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
            }))
        );
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
