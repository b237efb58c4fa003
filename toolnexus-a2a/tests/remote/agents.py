"""A2A 1.0 agents written with the official Python SDK (a2a-sdk), for the client suite.

One process serves these agents, each under its own path with its own card:
  /shop    "buy <item>" asks for approval (TASK_STATE_INPUT_REQUIRED), "ship <item>" asks
           for a form (a data part with a JSON Schema); the continuation completes the task.
  /signin  "log me in" asks for a sign-in (TASK_STATE_AUTH_REQUIRED) with a url part; any
           continuation completes it.
  /broken  every task fails.
  /slow... "buy <item>" works a while (working status updates), asks for approval, then
           works again and sends its receipt as one artifact in chunks. /slow answers
           SendMessage at once with the working task (so a client polls it); the others
           declare streaming: /slow-stream and /slow-stream-rest (HTTP+JSON) as the SDK
           serves it, /slow-cut ends each SendStreamingMessage stream after its first
           event (the task goes on), /slow-nosub does too and refuses SubscribeToTask.

Usage: python agents.py. The script binds a free loopback port and prints
{"event": "serving", "port": N} once it serves, then each continuation it receives, and
each method each agent is called with ({"event": "method", "agent": path, ...}), as one
JSON line (so a test sees what the remote agent was sent, and how many times). It exits
when its standard input closes: the test process that started it is gone.
"""

import asyncio
import contextlib
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
    from a2a.types import UnsupportedOperationError
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


class Slow(Base):
    """A long task: a person's approval between two stretches of work."""

    STEPS = 10
    PAUSE = 0.1

    async def step(self, context, task, updater, first):
        words = self.asked(task).split(maxsplit=1)
        item = (words[1] if len(words) > 1 else "nothing").removeprefix("a ").strip()
        if first:
            for n in range(1, self.STEPS + 1):
                await updater.start_work(
                    self.say(updater, new_text_part(f"checking stock {n}/{self.STEPS}"))
                )
                await asyncio.sleep(self.PAUSE)
            await updater.requires_input(
                self.say(updater, new_text_part(f"Approve purchase of {item}?"))
            )
            return
        answer = answer_of(context.message) or {}
        if answer.get("ok") is not True:
            await updater.complete(
                self.say(updater, new_text_part(f"purchase of {item} declined"))
            )
            return
        await updater.start_work(self.say(updater, new_text_part("paying")))
        await asyncio.sleep(self.PAUSE)
        receipt = f"{task.id}-receipt"
        chunks = [f"bought {item}", "paid", "shipped"]
        for n, chunk in enumerate(chunks):
            await updater.add_artifact(
                [new_text_part(chunk)],
                artifact_id=receipt,
                name="receipt",
                append=n > 0,
                last_chunk=n == len(chunks) - 1,
            )
            await asyncio.sleep(self.PAUSE)
        await updater.add_artifact([new_text_part("thank you")], name="note")
        await updater.complete()


class Broken(Base):
    async def step(self, context, task, updater, first):
        await updater.failed(self.say(updater, new_text_part("the warehouse is closed")))


class Logged(DefaultRequestHandler):
    """The SDK's handler, logging each method it is called with.

    at_once: SendMessage returns the task as soon as it exists, working.
    cut: each SendStreamingMessage stream ends after its first event; the task goes on.
    no_subscribe: SubscribeToTask is refused.
    """

    def __init__(self, path, at_once=False, cut=False, no_subscribe=False, **kwargs):
        super().__init__(**kwargs)
        self.path = path
        self.at_once = at_once
        self.cut = cut
        self.no_subscribe = no_subscribe

    def called(self, method, task):
        log("method", agent=self.path, method=method, task=task)

    async def on_message_send(self, params, context):
        self.called("SendMessage", params.message.task_id)
        if self.at_once:
            params.configuration.return_immediately = True
        return await super().on_message_send(params, context)

    async def on_message_send_stream(self, params, context):
        self.called("SendStreamingMessage", params.message.task_id)
        stream = super().on_message_send_stream(params, context)
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                yield event
                if self.cut:
                    return

    async def on_subscribe_to_task(self, params, context):
        self.called("SubscribeToTask", params.id)
        if self.no_subscribe:
            raise UnsupportedOperationError(message="no subscriptions here")
        stream = super().on_subscribe_to_task(params, context)
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                yield event

    async def on_get_task(self, params, context):
        self.called("GetTask", params.id)
        return await super().on_get_task(params, context)


def card(port, path, name, description, binding, streaming=False):
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
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(id=path, name=name, description=description, tags=[path])
        ],
    )


def agent(
    port,
    path,
    executor,
    name,
    description,
    binding="JSONRPC",
    streaming=False,
    **handling,
):
    agent_card = card(port, path, name, description, binding, streaming)
    handler = Logged(
        path,
        agent_executor=executor,
        task_store=InMemoryTaskStore(),
        agent_card=agent_card,
        **handling,
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
            agent(port, "slow", Slow(), "slow", "Buys slowly", at_once=True),
            agent(port, "slow-stream", Slow(), "slow", "Buys slowly", streaming=True),
            agent(
                port,
                "slow-stream-rest",
                Slow(),
                "slow",
                "Buys slowly",
                binding="HTTP+JSON",
                streaming=True,
            ),
            agent(port, "slow-cut", Slow(), "slow", "Buys slowly", streaming=True, cut=True),
            agent(
                port,
                "slow-nosub",
                Slow(),
                "slow",
                "Buys slowly",
                streaming=True,
                cut=True,
                no_subscribe=True,
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
