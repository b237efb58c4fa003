"""The official Python MCP SDK calling a sub-agent tool: `payments`, an agent whose own
agent (`approvals`) refunds an order once the caller approves it. The question reaches
the caller relayed through both agents, and its answer must reach the very run that asked.

Usage: agents.py URL. Prints one JSON object a line, one per step; the Rust test judges
them.
"""

import base64
import json
import sys
from contextlib import asynccontextmanager

import anyio

from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

ACCEPT = {"action": "accept", "content": {}}


def say(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


def text(result):
    return " ".join(block.text for block in result.content if block.type == "text")


@asynccontextmanager
async def caller(url, mode, action, asked):
    """The SDK's high-level client, answering every elicitation with `action`."""

    async def answer(context, params):
        asked.append(params.message)
        return types.ElicitResult(action=action, content={} if action == "accept" else None)

    async with create_mcp_http_client() as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, elicitation_callback=answer) as session:
            yield session


async def call(url, step, mode, action, order):
    asked = []
    async with caller(url, mode, action, asked) as client:
        result = await client.call_tool("payments", {"task": f"Refund order {order}"})
    say(step, error=result.is_error, text=text(result), asked=asked)


def readable(state):
    """Everything a client can read of a sealed state: each dot-separated part, decoded
    from base64url where it decodes."""
    parts = []
    for part in state.split("."):
        try:
            parts.append(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode("utf-8", "replace"))
        except ValueError:
            parts.append(part)
    return " ".join(parts)


def flipped(state, at):
    """`state` with the character at `at` (from the end when negative) changed."""
    at = at % len(state)
    swap = "A" if state[at] != "A" else "B"
    return state[:at] + swap + state[at + 1 :]


async def tampered(url, order):
    """Drives the rounds by hand: reads what the sealed state shows, then sends it back
    altered, and finally as it was."""
    async with caller(url, "2026-07-28", "accept", []) as client:
        session = client.session
        args = {"task": f"Refund order {order}"}
        first = await session.call_tool("payments", args, allow_input_required=True)
        if not isinstance(first, types.InputRequiredResult):
            say("tampered", error="no input_required", got=first.model_dump(mode="json"))
            return
        state = first.request_state
        keys = list(first.input_requests or {})
        responses = {key: types.ElicitResult(action="accept", content={}) for key in keys}
        say("sealed", readable=readable(state), length=len(state))
        refused = []
        # The MAC's last character, and one in the middle of the sealed payload.
        for at in (-2, len(state) // 2):
            try:
                got = await session.call_tool(
                    "payments", args, input_responses=responses, request_state=flipped(state, at), allow_input_required=True
                )
                refused.append({"ok": got.model_dump(mode="json")})
            except Exception as e:  # noqa: BLE001 - the SDK raises its MCPError for a JSON-RPC error
                error = getattr(e, "error", None)
                refused.append({"code": getattr(error, "code", None), "message": getattr(error, "message", str(e))})
        say("tampered", refused=refused)
        honest = await session.call_tool(
            "payments", args, input_responses=responses, request_state=state, allow_input_required=True
        )
        say("honest", error=honest.is_error, text=text(honest))


async def main(url):
    await call(url, "round", "2026-07-28", "accept", "A-7")
    await call(url, "elicited", "legacy", "accept", "B-2")
    await call(url, "declined", "2026-07-28", "decline", "C-3")
    await tampered(url, "D-4")


anyio.run(main, *sys.argv[1:2])
