"""Drives `cairn mcp serve` with the Python `mcp` package's client, for the interop suite.

Usage: python3 mcp_serve_client.py CAIRN WORKDIR
Prints one JSON object: the listed tool names, and each call's text and isError.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(cairn: str, work: str) -> None:
    params = StdioServerParameters(
        command=cairn, args=["mcp", "serve"], env=dict(os.environ), cwd=work
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            calls = {}
            for name, arguments in [
                ("Read", {"file_path": os.path.join(work, "notes.txt")}),
                ("Write", {"file_path": os.path.join(work, "new.txt"), "content": "x"}),
            ]:
                result = await session.call_tool(name, arguments)
                calls[name] = {
                    "text": "".join(
                        part.text for part in result.content if part.type == "text"
                    ),
                    "isError": bool(getattr(result, "is_error", None) or getattr(result, "isError", False)),
                }
            print(
                json.dumps(
                    {
                        "server": (getattr(init, "server_info", None) or init.serverInfo).name,
                        "tools": [tool.name for tool in tools.tools],
                        "calls": calls,
                    }
                )
            )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
