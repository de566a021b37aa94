"""The real Python Agent SDK (`claude-agent-sdk`) driving cairn through `cli_path`.

Run by crates/cli/tests/sdk_interop.rs as `python scenarios.py CLI_PATH SCENARIO WORKDIR`,
with the scripted model server's address in the environment. Prints one JSON object: what
the scenario saw, for the Rust test to check.
"""

import asyncio
import json
import os
import sys

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    ResultMessage,
    StreamEvent,
    TextBlock,
    create_sdk_mcp_server,
    query,
    tool,
)

CLI, SCENARIO, WORK = sys.argv[1], sys.argv[2], sys.argv[3]


def options(**more):
    return ClaudeAgentOptions(cli_path=CLI, cwd=WORK, **more)


async def one_prompt(text):
    yield {"type": "user", "message": {"role": "user", "content": text},
           "parent_tool_use_id": None, "session_id": "default"}


def summary(message):
    return {"subtype": message.subtype, "is_error": message.is_error, "result": message.result}


async def query_with_can_use_tool():
    asked = []

    async def can_use_tool(name, tool_input, context):
        asked.append({"tool": name, "content": tool_input.get("content")})
        return PermissionResultAllow(updated_input={**tool_input, "content": "from python\n"})

    results = []
    async for message in query(prompt=one_prompt("write the note"),
                               options=options(can_use_tool=can_use_tool)):
        if isinstance(message, ResultMessage):
            results.append(summary(message))
    return {"asked": asked, "results": results}


async def client_with_interrupt():
    results = []
    async with ClaudeSDKClient(options=options(include_partial_messages=True)) as client:
        await client.query("go on forever")
        async for message in client.receive_response():
            if isinstance(message, StreamEvent):
                await client.interrupt()
                break
        async for message in client.receive_response():
            if isinstance(message, ResultMessage):
                results.append(summary(message))
        await client.query("and now?")
        async for message in client.receive_response():
            if isinstance(message, ResultMessage):
                results.append(summary(message))
    return {"results": results}


async def hook_callback():
    seen = []

    async def no_shell(hook_input, tool_use_id, context):
        seen.append({"event": hook_input["hook_event_name"], "tool": hook_input["tool_name"],
                     "tool_use_id": tool_use_id})
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": "deny",
                                       "permissionDecisionReason": "no shell from python"}}

    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[no_shell])]}
    results = []
    async with ClaudeSDKClient(options=options(hooks=hooks, allowed_tools=["Bash"])) as client:
        await client.query("run it")
        async for message in client.receive_response():
            if isinstance(message, ResultMessage):
                results.append(summary(message))
    return {"seen": seen, "results": results}


async def sdk_mcp_tool():
    calls = []

    @tool("add", "Adds two numbers", {"a": float, "b": float})
    async def add(args):
        calls.append(args)
        return {"content": [{"type": "text", "text": f"sum is {args['a'] + args['b']}"}]}

    server = create_sdk_mcp_server("calc", tools=[add])
    results = []
    texts = []
    async with ClaudeSDKClient(options=options(mcp_servers={"calc": server},
                                               allowed_tools=["mcp__calc__add"])) as client:
        await client.query("add them")
        async for message in client.receive_response():
            if isinstance(message, AssistantMessage):
                texts += [block.text for block in message.content if isinstance(block, TextBlock)]
            if isinstance(message, ResultMessage):
                results.append(summary(message))
    return {"calls": calls, "texts": texts, "results": results}


SCENARIOS = {
    "query_with_can_use_tool": query_with_can_use_tool,
    "client_with_interrupt": client_with_interrupt,
    "hook_callback": hook_callback,
    "sdk_mcp_tool": sdk_mcp_tool,
}

print(json.dumps(asyncio.run(asyncio.wait_for(SCENARIOS[SCENARIO](), 60))))
