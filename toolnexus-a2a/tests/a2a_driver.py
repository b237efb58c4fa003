"""Drives a toolnexus A2A server with the official `a2a-sdk` client.

Usage: python a2a_driver.py URL [BINDING] < steps.json

BINDING is the protocol binding the client is to use (JSONRPC, the default, or HTTP+JSON).

The steps are a JSON list of objects, each one call: {"card": {}}, {"send": {...}},
{"stream": {...}}, {"get": {...}}, {"cancel": {...}}, {"subscribe": {...}},
{"list": {...}} (a ListTasksRequest's fields, camelCase), {"pages": {...}} (the same,
every page in turn until nextPageToken is empty), {"createPush": {...}},
{"getPush": {...}}, {"listPush": {...}}, {"deletePush": {...}} (a task's push
notification configurations: "task", and "id", "url", "pushToken", "auth" ({"scheme",
"credentials"}) as each call takes them), {"verifyCard": {"publicKey": base64url}} (the card's signatures checked by the SDK
with that Ed25519 key), {"parse": <JSON>} (a push notification's body
read as a StreamResponse, strictly: an unknown field is an error), or
{"race": [step, step, ...]} to make several calls at once. A send may take "push" (a push notification configuration, as for
"createPush" without "task"). A send takes "text" and/or
"data" (JSON), or "answers" (a list, one data part each), and/or "file" (a file part:
{"raw": text sent as its bytes} or {"url": ...}, with an optional "mediaType"), and
"task" and "context" to continue a task; a subscribe may take "then", a step made
once its stream is open, whose result comes back beside the events; "$task" and "$context"
stand for the task and context of the first task a step returned, "$task1" and
"$context1" for the second's, and so on. Any call may take "token": the bearer token it
sends (`Authorization: Bearer <token>`), through an httpx client of its own. It prints a JSON list
with one result per step: {"task": ...}, {"events": [...]}, {"card": ...},
{"list": ...} (the response with its empty fields too), {"pages": [...]}, or
{"error": <the SDK's exception class>, "message": ...} when the call raised.
"""

import asyncio
import base64
import json
import sys
import uuid

import httpx
from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.helpers.proto_helpers import new_data_part, new_raw_part, new_text_part, new_url_part
from a2a.types import (
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)


class Session:
    def __init__(self, url, http, binding):
        self.url = url
        self.binding = binding
        self.http = http
        self.tasks = []
        self.clients = {}
        self.https = {}

    def http_for(self, token):
        if token is None:
            return self.http
        if token not in self.https:
            headers = {"Authorization": f"Bearer {token}"}
            self.https[token] = httpx.AsyncClient(timeout=60, headers=headers)
        return self.https[token]

    async def close(self):
        for http in self.https.values():
            await http.aclose()

    async def client(self, streaming, token=None):
        key = (streaming, token)
        if key not in self.clients:
            config = ClientConfig(
                streaming=streaming,
                httpx_client=self.http_for(token),
                supported_protocol_bindings=[self.binding] if self.binding else [],
            )
            self.clients[key] = await create_client(self.url, client_config=config)
        return self.clients[key]

    def fill(self, value):
        for key, index in (("id", "$task"), ("contextId", "$context")):
            if isinstance(value, str) and value.startswith(index):
                n = int(value[len(index):] or 0)
                return self.tasks[n][key]
        return value

    def remember(self, task):
        if task.get("id") and all(t["id"] != task["id"] for t in self.tasks):
            self.tasks.append(task)

    async def step(self, step):
        (kind, args), = step.items()
        try:
            if kind == "race":
                return {"race": await asyncio.gather(*(self.step(s) for s in args))}
            if kind == "parse":
                return {"parsed": MessageToDict(ParseDict(args, StreamResponse()))}
            if kind == "verifyCard":
                # The SDK's own check of a signed card, with the Ed25519 key given as
                # base64url of its 32 bytes.
                from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
                from a2a.utils.signing import create_signature_verifier

                card = await A2ACardResolver(self.http, self.url).get_agent_card()
                raw = base64.urlsafe_b64decode(args["publicKey"] + "=" * (-len(args["publicKey"]) % 4))
                key = Ed25519PublicKey.from_public_bytes(raw)
                create_signature_verifier(lambda kid, jku: key, ["EdDSA"])(card)
                return {"verified": True}
            if kind == "card":
                card = await A2ACardResolver(self.http, self.url).get_agent_card()
                return {"card": MessageToDict(card)}
            if kind in ("send", "stream"):
                return await self.send(args, streaming=kind == "stream")
            client = await self.client(kind == "subscribe", args.get("token"))
            if kind in ("list", "pages"):
                return await self.list(client, args, every=kind == "pages")
            task_id = self.fill(args.get("task"))
            if kind == "get":
                request = GetTaskRequest(id=task_id)
                if "history" in args:
                    request.history_length = args["history"]
                task = MessageToDict(await client.get_task(request))
                return {"task": task}
            if kind == "cancel":
                task = MessageToDict(await client.cancel_task(CancelTaskRequest(id=task_id)))
                return {"task": task}
            if kind == "createPush":
                config = self.push_config(args)
                config.task_id = task_id
                created = await client.create_task_push_notification_config(config)
                return {"config": MessageToDict(created)}
            if kind == "getPush":
                request = GetTaskPushNotificationConfigRequest(task_id=task_id, id=args["id"])
                return {"config": MessageToDict(await client.get_task_push_notification_config(request))}
            if kind == "listPush":
                request = ListTaskPushNotificationConfigsRequest(task_id=task_id)
                listed = await client.list_task_push_notification_configs(request)
                return {"configs": MessageToDict(listed).get("configs", [])}
            if kind == "deletePush":
                request = DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=args["id"])
                await client.delete_task_push_notification_config(request)
                return {"deleted": args["id"]}
            if kind == "subscribe":
                request = SubscribeToTaskRequest(id=task_id)
                events, then = [], None
                async for event in client.subscribe(request):
                    events.append(MessageToDict(event))
                    # "then": a step made once the stream is open (its first event came).
                    if "then" in args and then is None:
                        then = await self.step(args["then"])
                result = {"events": events}
                if then is not None:
                    result["then"] = then
                return result
            raise ValueError(f"unknown step {kind}")
        except Exception as e:  # the SDK's error classes are what the test checks
            return {"error": type(e).__name__, "message": str(e)}

    @staticmethod
    def push_config(args):
        config = TaskPushNotificationConfig(url=args["url"])
        if "id" in args:
            config.id = args["id"]
        if "pushToken" in args:
            config.token = args["pushToken"]
        if "auth" in args:
            config.authentication.CopyFrom(AuthenticationInfo(**args["auth"]))
        return config

    async def list(self, client, args, every):
        fields = {k: self.fill(v) for k, v in args.items() if k != "token"}
        pages = []
        # A bound on the pages walked, so a token that never ends fails the test.
        for _ in range(50):
            request = ParseDict(fields, ListTasksRequest())
            response = MessageToDict(
                await client.list_tasks(request), always_print_fields_with_no_presence=True
            )
            if not every:
                return {"list": response}
            pages.append(response)
            if not response["nextPageToken"]:
                return {"pages": pages}
            fields["pageToken"] = response["nextPageToken"]
        raise ValueError("more than 50 pages")

    async def send(self, args, streaming):
        parts = []
        if "text" in args:
            parts.append(new_text_part(args["text"]))
        if "data" in args:
            parts.append(new_data_part(args["data"], media_type="application/json"))
        for answer in args.get("answers", []):
            parts.append(new_data_part(answer, media_type="application/json"))
        if "file" in args:
            file = args["file"]
            if "url" in file:
                parts.append(new_url_part(file["url"], media_type=file.get("mediaType")))
            else:
                parts.append(new_raw_part(file["raw"].encode(), media_type=file.get("mediaType")))
        message = Message(role=Role.ROLE_USER, parts=parts, message_id=args.get("messageId") or str(uuid.uuid4()))
        if "task" in args:
            message.task_id = self.fill(args["task"])
        if "context" in args:
            message.context_id = self.fill(args["context"])
        client = await self.client(streaming, args.get("token"))
        request = SendMessageRequest(message=message)
        if "push" in args:
            request.configuration.CopyFrom(
                SendMessageConfiguration(task_push_notification_config=self.push_config(args["push"]))
            )
        events = [MessageToDict(e) async for e in client.send_message(request)]
        for event in events:
            if "task" in event:
                self.remember(event["task"])
        if streaming:
            return {"events": events}
        return {"task": events[0]["task"]} if events and "task" in events[0] else {"events": events}


async def main():
    url = sys.argv[1]
    binding = sys.argv[2] if len(sys.argv) > 2 else None
    steps = json.load(sys.stdin)
    async with httpx.AsyncClient(timeout=60) as http:
        session = Session(url, http, binding)
        try:
            results = [await session.step(step) for step in steps]
        finally:
            await session.close()
    json.dump(results, sys.stdout)


asyncio.run(main())
