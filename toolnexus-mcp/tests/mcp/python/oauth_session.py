"""What the two OAuth clients (`oauth.py`, `oauth_code.py`) share: token storage in
memory, and one tool call through the official SDK's client with an auth provider,
accepting every elicitation, told as the JSON object both print."""

import json

from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


class Memory:
    """Token storage in memory, starting with a token held and a client registered
    beforehand, if any."""

    def __init__(self, tokens=None, client=None):
        self.tokens = tokens
        self.client = client

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


async def call(url, auth, storage, tool, args, on_response=None):
    """Calls `tool` with the JSON `args` at the MCP server `url`, authorised by `auth`:
    the result (whether it is an error, its text, how many elicitations were asked) or
    the error that stopped the flow, and the scope of the token the SDK ended with.
    `on_response` sees every HTTP response, in order."""
    asked = []

    async def accept(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={})

    try:
        async with create_mcp_http_client(auth=auth) as http:
            if on_response is not None:
                http.event_hooks = {"request": [], "response": [on_response]}
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode="legacy", elicitation_callback=accept) as session:
                result = await session.call_tool(tool, json.loads(args))
        text = " ".join(block.text for block in result.content if block.type == "text")
        outcome = {"error": result.is_error, "text": text, "elicited": len(asked)}
    except Exception as e:  # noqa: BLE001 - a refused flow is what some callers expect
        outcome = {"refused": f"{type(e).__name__}: {e}"}
    outcome["scope"] = storage.tokens.scope if storage.tokens else None
    return outcome
