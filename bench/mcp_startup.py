#!/usr/bin/env python3
"""Time from `cairn -p` starting to its first model request, with 0, 5 and 20 configured MCP
servers (stdio), some of them slow to start (8 s before they answer `initialize`) or not
there at all (a command that does not exist): on a first run (no manifest cached), and on a
later run, once `cairn mcp list` has seen every server connect (each server's tools cached
from its last good connection, which a run that lasts longer than a slow server's start
leaves too).

Runs the debug builds of `cairn` and `cairn-test-mcp-server` against the stand-in model
server of bench/tool_search.py. The clock starts when the process is spawned and stops when
the model server receives the first request; "offered" is how many MCP tools that request
carries. Each figure is the median of RUNS runs.

    cargo build -p cairn-cli -p cairn-test-support --bins
    bench/mcp_startup.py [runs]
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tool_search import CAIRN, MCP_SERVER, Model, name, requests  # noqa: E402

arrived = threading.Event()


class TimedModel(Model):
    def do_POST(self):
        arrived.set()
        super().do_POST()


def servers(fast, slow=0, missing=0):
    config = {}
    for n in range(fast):
        config[f"fast{n}"] = {"command": MCP_SERVER}
    for n in range(slow):
        config[f"slow{n}"] = {"command": MCP_SERVER, "args": ["--sleep-before-initialize", "8"]}
    for n in range(missing):
        config[f"missing{n}"] = {"command": "/nonexistent/mcp-server"}
    return {"mcpServers": config}


def first_request(url, home, config):
    """Milliseconds to the first request, and the MCP tools it offered."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "MCP_"))}
    env.update(HOME=home, CAIRN_HOME=os.path.join(home, ".cairn"),
               ANTHROPIC_API_KEY="bench", ANTHROPIC_BASE_URL=url)
    args = [CAIRN, "-p", "go"]
    if config["mcpServers"]:
        args.append(f"--mcp-config={json.dumps(config)}")
    arrived.clear()
    before = len(requests)
    started = time.monotonic()
    process = subprocess.Popen(args, env=env, cwd=home, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not arrived.wait(60):
        process.kill()
        sys.exit("no request within 60 s")
    elapsed = (time.monotonic() - started) * 1000
    process.wait()
    tools = requests[before]["tools"]
    return elapsed, sum(1 for tool in tools if name(tool).startswith("mcp__"))


def fill_cache(home, config):
    """Runs `cairn mcp list`, which waits for every server to connect or fail."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MCP_"))}
    env.update(HOME=home, CAIRN_HOME=os.path.join(home, ".cairn"))
    subprocess.run([CAIRN, f"--mcp-config={json.dumps(config)}", "mcp", "list"], env=env,
                   cwd=home, check=False, capture_output=True)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for binary in (CAIRN, MCP_SERVER):
        if not os.path.exists(binary):
            sys.exit(f"{binary} is missing: cargo build -p cairn-cli -p cairn-test-support --bins")
    server = ThreadingHTTPServer(("127.0.0.1", 0), TimedModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"

    scenarios = [
        ("no servers", servers(0)),
        ("5 servers", servers(5)),
        ("20 servers", servers(20)),
        ("5 servers: 1 slow (8 s), 1 missing", servers(3, slow=1, missing=1)),
        ("20 servers: 2 slow (8 s), 1 missing", servers(17, slow=2, missing=1)),
    ]
    print(f"== time to the first request, median of {runs} runs (debug build)")
    print(f"{'configured':38} {'first run':>10} {'offered':>8} {'cached':>11} {'offered':>8}")
    baseline = None
    for label, config in scenarios:
        first, second = [], []
        offered = (0, 0)
        for _ in range(runs):
            home = tempfile.mkdtemp()
            try:
                ms, first_offered = first_request(url, home, config)
                first.append(ms)
                # The same home again, once every server has connected: the manifest cache
                # holds each one's tools.
                fill_cache(home, config)
                ms, second_offered = first_request(url, home, config)
                second.append(ms)
                offered = (first_offered, second_offered)
            finally:
                shutil.rmtree(home, ignore_errors=True)
        first_ms, second_ms = statistics.median(first), statistics.median(second)
        baseline = baseline if baseline is not None else first_ms
        print(f"{label:38} {first_ms:8.0f}ms {offered[0]:8} {second_ms:9.0f}ms {offered[1]:8}"
              f"   (+{first_ms - baseline:.0f} / +{second_ms - baseline:.0f} ms over none)")
    server.shutdown()


if __name__ == "__main__":
    main()
