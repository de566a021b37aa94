#!/usr/bin/env python3
"""Tokens of the tool definitions in cairn's first request, with MCP servers of many tools,
deferred behind ToolSearch or not, and where ENABLE_TOOL_SEARCH's threshold falls.

Runs the debug builds of `cairn` and `cairn-test-mcp-server` (the MCP test server, whose
`--tools N` adds N small tools beside its own six) against a stand-in model server written
here, which records each request's `tools` and answers "done". Tokens are characters / 4 of
the `tools` array as sent (compact JSON), the estimate cairn uses everywhere.

    cargo build -p cairn-cli -p cairn-test-support --bins
    bench/tool_search.py
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAIRN = os.path.join(ROOT, "target", "debug", "cairn")
MCP_SERVER = os.path.join(ROOT, "target", "debug", "cairn-test-mcp-server")

requests = []


def sse(event, data):
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


ANTHROPIC_REPLY = "".join([
    sse("message_start", {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    sse("content_block_start", {"type": "content_block_start", "index": 0,
                                "content_block": {"type": "text", "text": ""}}),
    sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                "delta": {"type": "text_delta", "text": "done"}}),
    sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
    sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                          "usage": {"output_tokens": 1}}),
    sse("message_stop", {"type": "message_stop"}),
]).encode()

OPENAI_REPLY = "".join(
    f"data: {json.dumps(chunk)}\n\n" for chunk in [
        {"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4o",
         "choices": [{"index": 0, "delta": {"role": "assistant", "content": "done"}}]},
        {"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4o",
         "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4o", "choices": [],
         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
    ]).encode() + b"data: [DONE]\n\n"


class Model(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        requests.append(body)
        reply = OPENAI_REPLY if self.path.endswith("/chat/completions") else ANTHROPIC_REPLY
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


def first_request_tools(url, home, dialect, extra_tools, setting):
    """The `tools` of the first request of `cairn -p` with one server of `extra_tools`."""
    config = json.dumps({"mcpServers": {"big": {
        "command": MCP_SERVER, "args": ["--tools", str(extra_tools)]}}})
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_")) and k != "ENABLE_TOOL_SEARCH"}
    env.update(HOME=home, CAIRN_HOME=os.path.join(home, ".cairn"))
    model = []
    if dialect == "openai":
        env.update(OPENAI_API_KEY="bench", OPENAI_BASE_URL=url + "/v1")
        model = ["--model", "openai/gpt-4o"]
    else:
        env.update(ANTHROPIC_API_KEY="bench", ANTHROPIC_BASE_URL=url)
    if setting is not None:
        env["ENABLE_TOOL_SEARCH"] = setting
    # Fill the manifest cache first, so the first request offers every tool without a wait.
    subprocess.run([CAIRN, f"--mcp-config={config}", "mcp", "list"], env=env, cwd=home,
                   check=True, capture_output=True)
    before = len(requests)
    subprocess.run([CAIRN, *model, "-p", "go", f"--mcp-config={config}"], env=env, cwd=home,
                   check=True, capture_output=True, stdin=subprocess.DEVNULL)
    return requests[before]["tools"]


def tokens(value):
    return -(-len(json.dumps(value, separators=(",", ":"))) // 4)


def name(tool):
    return tool.get("name") or tool["function"]["name"]


def main():
    for binary in (CAIRN, MCP_SERVER):
        if not os.path.exists(binary):
            sys.exit(f"{binary} is missing: cargo build -p cairn-cli -p cairn-test-support --bins")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    windows = {"anthropic": 200_000, "openai": 128_000}

    print("== first request, one MCP server with 200 extra tools (206 in all)")
    print(f"{'dialect':10} {'ENABLE_TOOL_SEARCH':19} {'tools':>6} {'MCP':>4} "
          f"{'all defs':>9} {'MCP defs':>9} {'ToolSearch':>10} {'% window':>8}")
    for dialect in ("anthropic", "openai"):
        for setting in ("false", None, "auto:3", "true"):
            with tempfile.TemporaryDirectory() as home:
                tools = first_request_tools(url, home, dialect, 200, setting)
            mcp = [t for t in tools if name(t).startswith("mcp__")]
            search = [t for t in tools if name(t) == "ToolSearch"]
            total = tokens(tools)
            print(f"{dialect:10} {str(setting or 'unset (auto)'):19} {len(tools):6} "
                  f"{len(mcp):4} {total:9} {(tokens(mcp) if mcp else 0):9} "
                  f"{(tokens(search) if search else 0):10} "
                  f"{100 * total / windows[dialect]:7.1f}%")

    print("\n== where `auto` (10%) starts deferring, Anthropic dialect (200K window)")
    print(f"{'extra tools':>11} {'deferred':>8} {'all defs':>9} {'% window':>8}")
    for extra in (200, 400, 500, 600, 1000, 2000):
        with tempfile.TemporaryDirectory() as home:
            tools = first_request_tools(url, home, "anthropic", extra, "auto")
        deferred = any(name(t) == "ToolSearch" for t in tools)
        total = tokens(tools)
        print(f"{extra:11} {'yes' if deferred else 'no':>8} {total:9} "
              f"{100 * total / 200_000:7.1f}%")
    server.shutdown()


if __name__ == "__main__":
    main()
