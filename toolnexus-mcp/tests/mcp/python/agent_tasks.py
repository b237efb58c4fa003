"""The official Python MCP SDK calling a sub-agent tool as a task (the tasks extension):
`payments`, whose own agent refunds an order once the caller approves it. The task waits on
the question relayed through both agents, `tasks/update` answers it, and the task ends.

Usage: agent_tasks.py URL APPROVED_TASK DECLINED_TASK: two tasks of `payments`, for
orders A-7 and C-3, which the Rust test started (the SDK's client reads every `tools/call`
result as a plain one, so it cannot take a task for a call); this client accepts the first
one's question and declines the second's. Prints one JSON object a line, one per step; the
Rust test judges them. The SDK has no helpers for the tasks extension's methods, so they
go through `send_request` with the extension declared on the session.
"""

import json
import sys
from contextlib import asynccontextmanager
from typing import Any

import anyio
from pydantic import TypeAdapter

from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TASKS = "io.modelcontextprotocol/tasks"
RAW = TypeAdapter(dict)


class Raw(types.Request[dict[str, Any], str]):
    """A request sent with its params as they are written here."""


def say(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


@asynccontextmanager
async def tasks(url):
    async with create_mcp_http_client() as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, extensions={TASKS: {}}) as session:
                await session.initialize()
                yield session


async def request(session, method, params):
    return await session.send_request(Raw(method=method, params=params), RAW)


async def until(session, task, statuses):
    with anyio.fail_after(30):
        while True:
            got = await request(session, "tasks/get", {"taskId": task})
            if got["status"] in statuses:
                return got
            await anyio.sleep(0.02)


async def answer(session, step, task, action):
    waiting = await until(session, task, ("input_required", "completed", "failed"))
    requests = waiting.get("inputRequests", {})
    asked = [r["params"]["message"] for r in requests.values()]
    answer = {"action": action, "content": {}} if action == "accept" else {"action": action}
    await request(session, "tasks/update", {"taskId": task, "inputResponses": {k: answer for k in requests}})
    ended = await until(session, task, ("completed", "failed", "cancelled"))
    content = ended.get("result", {}).get("content", [])
    text = " ".join(b["text"] for b in content if b.get("type") == "text")
    say(step, waited=waiting["status"], keys=list(requests), asked=asked, status=ended["status"], text=text)


async def main(url, approved, declined):
    async with tasks(url) as session:
        await answer(session, "approved", approved, "accept")
        await answer(session, "declined", declined, "decline")


anyio.run(main, *sys.argv[1:4])
