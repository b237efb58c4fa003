"""The official Python MCP SDK as a hostile caller of a server whose payments only finance
approves: a partner's token tries every way a caller could settle the approval itself.

Usage: hostile.py URL GATE_ID OWN_TASK ADAS_TASK. GATE_ID is the id the server derives from
the call of `pay_invoice` with `{"invoice": 2}`, which the partner sends its acceptance under
with the first call; OWN_TASK is a kept task the partner started (invoice 4) and ADAS_TASK
one ada started (invoice 5), both waiting for their approval (the SDK's client reads every
`tools/call` result as a plain one, so the Rust test starts them). Prints one JSON object a
line, one per step; the Rust test judges them. The SDK has no helpers for the tasks
extension's methods, so they go through `send_request` with the extension declared on the
session.
"""

import json
import sys
from contextlib import asynccontextmanager
from typing import Any

import anyio
from pydantic import TypeAdapter

from mcp import Client, ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TASKS = "io.modelcontextprotocol/tasks"
RAW = TypeAdapter(dict)
ACCEPT = {"action": "accept", "content": {}}


class Raw(types.Request[dict[str, Any], str]):
    """A request sent with its params as they are written here."""


def say(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


def text(result):
    return " ".join(block.text for block in result.content if block.type == "text")


@asynccontextmanager
async def http(token):
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as client:
        yield client


@asynccontextmanager
async def caller(url, token, mode, asked):
    """The SDK's high-level client, accepting every elicitation and counting them."""

    async def accept(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={})

    async with http(token) as client:
        transport = streamable_http_client(url, http_client=client)
        async with Client(transport, mode=mode, elicitation_callback=accept) as session:
            yield session


@asynccontextmanager
async def tasks(url, token):
    """A session declaring the tasks extension, for the task methods sent raw."""
    async with http(token) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write, extensions={TASKS: {}}) as session:
                await session.initialize()
                yield session


async def request(session, method, params):
    return await session.send_request(Raw(method=method, params=params), RAW)


async def attempt(session, method, params):
    """The reply, or the JSON-RPC error's code and message."""
    try:
        return {"ok": await request(session, method, params)}
    except Exception as e:  # noqa: BLE001 - the SDK raises its MCPError for a JSON-RPC error
        error = getattr(e, "error", None)
        return {"code": getattr(error, "code", None), "message": getattr(error, "message", str(e))}


async def asked_of(session, task):
    """Waits for the task to ask; its input requests."""
    with anyio.fail_after(30):
        while True:
            got = await request(session, "tasks/get", {"taskId": task})
            if got["status"] == "input_required":
                return got["inputRequests"]
            await anyio.sleep(0.02)


async def main(url, gate, own, adas):
    # (a) 2025-11-25: the partner accepts the approval's elicitation mid-call.
    asked = []
    async with caller(url, "tok-mallory", "legacy", asked) as mallory:
        result = await mallory.call_tool("pay_invoice", {"invoice": 1})
        say("a", error=result.is_error, text=text(result), elicited=len(asked))

    # (b) 2026-07-28: acceptance sent with the first call, under the id the server derives
    # from the call; then the same through an `input_required` round.
    asked = []
    async with caller(url, "tok-mallory", "2026-07-28", asked) as mallory:
        seeded = {gate: ACCEPT}
        result = await mallory.call_tool("pay_invoice", {"invoice": 2}, input_responses=seeded)
        say("b_first", error=result.is_error, text=text(result), elicited=len(asked))
        result = await mallory.call_tool("pay_invoice", {"invoice": 3})
        say("b_round", error=result.is_error, text=text(result), elicited=len(asked))

    # (c) a kept task of the partner's own, answered by the partner through `tasks/update`.
    async with tasks(url, "tok-mallory") as mallory:
        task = own
        key = next(iter(await asked_of(mallory, task)))
        update = {"taskId": task, "inputResponses": {key: ACCEPT}}
        refused = await attempt(mallory, "tasks/update", update)
        after = await request(mallory, "tasks/get", {"taskId": task})
        say("c", refused=refused, after=after["status"])

    # (d) a task of someone else's: the partner reads it and cancels it; finance reads the
    # question and approves it; the starter reads the result.
    async with tasks(url, "tok-ada") as ada, tasks(url, "tok-mallory") as mallory, tasks(url, "tok-alice") as alice:
        task = adas
        questions = await asked_of(ada, task)
        key = next(iter(questions))
        peek = await attempt(mallory, "tasks/get", {"taskId": task})
        cancel = await attempt(mallory, "tasks/cancel", {"taskId": task})
        unknown = await attempt(mallory, "tasks/get", {"taskId": "no-such-task"})
        seen = await attempt(alice, "tasks/get", {"taskId": task})
        say("d_others", task=task, peek=peek, cancel=cancel, unknown=unknown)
        say("d_approver", seen=seen, starter_sees=questions[key]["params"]["message"])
        await request(alice, "tasks/update", {"taskId": task, "inputResponses": {key: ACCEPT}})
        with anyio.fail_after(30):
            while (got := await request(ada, "tasks/get", {"taskId": task}))["status"] in ("working", "input_required"):
                await anyio.sleep(0.02)
        texts = [b["text"] for b in got.get("result", {}).get("content", []) if b.get("type") == "text"]
        after = await attempt(alice, "tasks/get", {"taskId": task})
        say("d_done", status=got["status"], text=" ".join(texts), approver_after=after)

    # The allowed path: finance accepts the elicitation, and the payment runs.
    asked = []
    async with caller(url, "tok-alice", "legacy", asked) as alice:
        result = await alice.call_tool("pay_invoice", {"invoice": 6})
        say("allowed", error=result.is_error, text=text(result), elicited=len(asked))
    # And on 2026-07-28, through an `input_required` round.
    asked = []
    async with caller(url, "tok-alice", "2026-07-28", asked) as alice:
        result = await alice.call_tool("pay_invoice", {"invoice": 7})
        say("allowed_round", error=result.is_error, text=text(result), elicited=len(asked))


anyio.run(main, *sys.argv[1:5])
