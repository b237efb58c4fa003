"""A2A 1.0 agents written with the official Python SDK (a2a-sdk), for the client suite.

One process serves three agents, each under its own path with its own card:
  /shop    "buy <item>" asks for approval (TASK_STATE_INPUT_REQUIRED), "ship <item>" asks
           for a form (a data part with a JSON Schema); the continuation completes the task.
  /signin  "log me in" asks for a sign-in (TASK_STATE_AUTH_REQUIRED) with a url part; any
           continuation completes it.
  /broken  every task fails.

Usage: python agents.py. The script binds a free loopback port and prints
{"event": "serving", "port": N} once it serves, then each continuation it receives as one
JSON line (so a test sees what the remote agent was sent, and how many times). It exits
when its standard input closes: the test process that started it is gone.
"""

import asyncio
import itertools
import json
import socket
import sys
import threading
import os

try:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from a2a.helpers.proto_helpers import (
        get_data_parts,
        get_text_parts,
        new_data_part,
        new_task_from_user_message,
        new_text_artifact,
        new_text_part,
        new_url_part,
    )
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import (
        create_agent_card_routes,
        create_jsonrpc_routes,
        create_rest_routes,
    )
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
    )
except ImportError as missing:
    sys.exit(
        f"cannot import {missing.name}: this script needs `pip install "
        f"'a2a-sdk[http-server]==1.3.0' uvicorn` (scripts/test.sh installs both)"
    )

ORDERS = itertools.count(1)


def log(event, **fields):
    print(json.dumps({"event": event, **fields}), flush=True)


def answer_of(message):
    """The toolnexus Answer in a continuation's data parts, or None."""
    for data in get_data_parts(message.parts):
        if isinstance(data, dict) and "ok" in data:
            return data
    return None


class Base(AgentExecutor):
    async def cancel(self, context, event_queue):
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()

    async def execute(self, context, event_queue):
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        first = context.current_task is None
        if not first:
            log(
                "continuation",
                agent=type(self).__name__,
                task=task.id,
                context=task.context_id,
                text=get_text_parts(context.message.parts),
                answer=answer_of(context.message),
            )
        await self.step(context, task, updater, first)

    def say(self, updater, *parts):
        return updater.new_agent_message(list(parts))

    def asked(self, task):
        """The user's first message of the task: what it was asked to do."""
        return " ".join(get_text_parts(task.history[0].parts)) if task.history else ""


class Shop(Base):
    async def step(self, context, task, updater, first):
        words = self.asked(task).split(maxsplit=1)
        verb, item = (words + ["", ""])[:2] if words else ("", "")
        item = item.removeprefix("a ").removeprefix("an ").strip() or "nothing"
        if first:
            if verb == "ship":
                schema = {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string"},
                        "zip": {"type": "string"},
                    },
                    "required": ["city", "zip"],
                }
                await updater.requires_input(
                    self.say(
                        updater,
                        new_text_part(f"Where should the {item} go?"),
                        new_data_part({"schema": schema}, "application/json"),
                    )
                )
            else:
                await updater.requires_input(
                    self.say(updater, new_text_part(f"Approve purchase of {item}?"))
                )
            return
        answer = answer_of(context.message) or {}
        text = " ".join(get_text_parts(context.message.parts)).strip().lower()
        approved = answer.get("ok") is True or text in ("approve", "yes", "ok")
        if not approved:
            await updater.complete(
                self.say(updater, new_text_part(f"purchase of {item} declined"))
            )
            return
        if verb == "ship":
            where = answer.get("data") or {}
            result = f"shipping {item} to {where.get('zip')} {where.get('city')}"
        else:
            result = f"bought {item}: ORDER-{next(ORDERS)}"
        await updater.add_artifact([new_text_part(result)], name="result")
        await updater.complete()


class Signin(Base):
    def __init__(self, port):
        self.port = port

    async def step(self, context, task, updater, first):
        if first:
            await updater.requires_auth(
                self.say(
                    updater,
                    new_text_part("Sign in to the warehouse"),
                    new_url_part(f"http://127.0.0.1:{self.port}/login?task={task.id}"),
                )
            )
            return
        await updater.complete(self.say(updater, new_text_part("signed in")))


class Broken(Base):
    async def step(self, context, task, updater, first):
        await updater.failed(self.say(updater, new_text_part("the warehouse is closed")))


def card(port, path, name, description, binding):
    return AgentCard(
        name=name,
        description=description,
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"http://127.0.0.1:{port}/{path}/",
                protocol_binding=binding,
                protocol_version="1.0",
            )
        ],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(id=path, name=name, description=description, tags=[path])
        ],
    )


def agent(port, path, executor, name, description, binding="JSONRPC"):
    agent_card = card(port, path, name, description, binding)
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=agent_card
    )
    if binding == "HTTP+JSON":
        served = create_rest_routes(handler)
    else:
        served = create_jsonrpc_routes(handler, "/")
    routes = create_agent_card_routes(agent_card) + served
    return Mount(f"/{path}", routes=routes)


def exit_with_parent():
    sys.stdin.read()
    os._exit(0)


async def main():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = Starlette(
        routes=[
            agent(port, "shop", Shop(), "shop", "Buys and ships items, asking first"),
            agent(port, "signin", Signin(port), "warehouse", "Signs in to the warehouse"),
            agent(port, "broken", Broken(), "broken", "Fails every task"),
            # The same shop, offering only the HTTP+JSON binding.
            agent(
                port,
                "shop-rest",
                Shop(),
                "shop",
                "Buys and ships items, asking first",
                binding="HTTP+JSON",
            ),
        ]
    )
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.02)
    log("serving", port=port)
    await serving


if __name__ == "__main__":
    threading.Thread(target=exit_with_parent, daemon=True).start()
    asyncio.run(main())
