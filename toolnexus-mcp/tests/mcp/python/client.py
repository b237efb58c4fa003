"""The official Python MCP SDK as a client of toolnexus's `mcp_server` example.

Usage: client.py SERVER_EXE. Prints one line per step; the Rust test checks them.
"""

import sys

import anyio

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

# What the human answers, in order, one per elicitation.
ANSWERS = [
    ("accept", {}),
    ("decline", None),
    ("accept", {"city": "Paris", "zip": "75001", "express": True}),
]
asked = []


async def human(context, params):
    asked.append(params)
    print("elicited:", params.mode, "|", params.message, "|", sorted((params.requested_schema or {}).get("properties", {})))
    action, content = ANSWERS[len(asked) - 1]
    return types.ElicitResult(action=action, content=content)


def text(result):
    return " ".join(block.text for block in result.content if block.type == "text")


async def main(exe):
    params = StdioServerParameters(command=exe, args=[])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=human) as session:
            init = await session.initialize()
            print("server:", init.server_info.name, init.protocol_version)
            tools = await session.list_tools()
            for tool in tools.tools:
                print("tool:", tool.name, "|", sorted(tool.input_schema.get("required", [])))
            for item in ["gpu", "yacht"]:
                result = await session.call_tool("approve_purchase", {"item": item})
                print("result:", result.is_error, "|", text(result))
            result = await session.call_tool("ship_order", {"order": 7})
            print("result:", result.is_error, "|", text(result))
            result = await session.call_tool("ship_order", {"order": "seven"})
            print("result:", result.is_error, "|", text(result))


anyio.run(main, sys.argv[1])
