"""The official Python MCP SDK calling one tool as a signed-in person who accepts every
elicitation.

Usage: ask.py URL TOKEN TOOL ARGS_JSON. Prints one JSON object: whether the result is an
error, its text, and how many elicitations the caller was asked; or the error that refused
the session.
"""

import json
import sys

import anyio

from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main(url, token, tool, args):
    asked = []

    async def accept(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={})

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        async with create_mcp_http_client(headers=headers) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode="legacy", elicitation_callback=accept) as session:
                result = await session.call_tool(tool, json.loads(args))
    except Exception as e:  # noqa: BLE001 - a refused session is what some callers expect
        print(json.dumps({"refused": type(e).__name__}))
        return
    text = " ".join(block.text for block in result.content if block.type == "text")
    print(json.dumps({"error": result.is_error, "text": text, "elicited": len(asked)}))


anyio.run(main, *sys.argv[1:5])
