"""The official Python MCP SDK answering a kept task as people signed in by bearer token.

Usage: identity.py URL TASK, the task waiting on an approval. Prints one line per step; the Rust test checks them. The SDK has
no helpers for the tasks extension's methods, so they go through `send_request` with the
extension declared on the session.
"""

import sys
from typing import Any
from contextlib import asynccontextmanager

import anyio
import httpx2
from pydantic import TypeAdapter

from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TASKS = "io.modelcontextprotocol/tasks"
RAW = TypeAdapter(dict)


class Raw(types.Request[dict[str, Any], str]):
    """A request sent with its params as they are written here."""


async def request(session, method, params):
    return await session.send_request(Raw(method=method, params=params), RAW)


@asynccontextmanager
async def signed(url, token):
    """A session of the SDK's client sending `Authorization: Bearer TOKEN`."""
    headers = {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write, extensions={TASKS: {}}) as session:
                await session.initialize()
                yield session


async def status(session, task):
    got = await request(session, "tasks/get", {"taskId": task})
    return got


async def main(url, task):
    # No token: the transport's 401, with the challenge MCP's authorization spec names.
    async with httpx2.AsyncClient() as plain:
        refused = await plain.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
            headers={"Accept": "application/json, text/event-stream"},
        )
        print("no token:", refused.status_code, "|", refused.headers.get("www-authenticate"))
    try:
        async with signed(url, "tok-nobody"):
            print("unknown token: served")
    except Exception:  # noqa: BLE001 - the SDK's error type for a refused handshake varies
        print("unknown token: refused")

    async with signed(url, "tok-alice") as alice:
        got = await status(alice, task)
        key = next(iter(got["inputRequests"]))
        print("asked:", got["inputRequests"][key]["params"]["message"])
        accept = {"inputResponses": {key: {"action": "accept", "content": {}}}, "taskId": task}

        async with signed(url, "tok-mallory") as mallory:
            try:
                await request(mallory, "tasks/update", accept)
                print("mallory: accepted")
            except Exception as e:  # noqa: BLE001
                print("mallory: refused", getattr(e, "code", type(e).__name__))
            # Neither the task's starter nor one who may answer it: told it does not exist.
            try:
                print("mallory reads:", (await status(mallory, task))["status"])
            except Exception as e:  # noqa: BLE001
                print("mallory reads: refused", getattr(e, "code", type(e).__name__))
        print("after mallory:", (await status(alice, task))["status"])

        await request(alice, "tasks/update", accept)
        # Once answered, the task is its starter's alone: the approver is told no more of
        # it, as of a task that does not exist.
        try:
            got = await status(alice, task)
            print("alice after:", got["status"])
        except Exception as e:  # noqa: BLE001
            print("alice after: refused", getattr(e, "code", type(e).__name__))
        # A second approval answers nothing: the task is no longer hers to answer.
        try:
            await request(alice, "tasks/update", accept)
            print("again: accepted")
        except Exception as e:  # noqa: BLE001
            print("again: refused", getattr(e, "code", type(e).__name__))


anyio.run(main, sys.argv[1], sys.argv[2])
