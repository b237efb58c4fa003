"""A client of the AgentRun workflow on the official Temporal Python SDK, with its own
AES-256-GCM payload codec: the format toolnexus-temporal's Codec writes, implemented here
from its description alone, so each side checks the other.

usage: history_client.py ADDRESS [--codec-key FILE] [--task-queue Q] COMMAND ARGS...

  start ID PROMPT       start a run
  pending ID            what the run waits on (JSON list)
  answer ID ANSWER      give ANSWER (JSON) to the `answer` update:
                        {"waiting": [...]} or {"refused": "why"}
  result ID             the run's result, following its continued executions
  runs ID               the executions under workflow id ID, oldest first:
                        [{"runId": ..., "status": ...}]

Prints one JSON document on standard output.
"""

import asyncio
import dataclasses
import hashlib
import json
import os
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.converter import DataConverter, PayloadCodec

ENCRYPTED = b"binary/encrypted"
KEY_ID = "encryption-key-id"
NONCE_LEN = 12


class AesGcmCodec(PayloadCodec):
    """Each payload's protobuf encoding sealed whole; the key named by the first 8 bytes
    of its SHA-256, in hex; data = nonce || ciphertext and tag; no associated data."""

    def __init__(self, key: bytes):
        if len(key) != 32:
            raise ValueError(f"the key is {len(key)} bytes, not 32")
        self.aead = AESGCM(key)
        self.key_id = hashlib.sha256(key).digest()[:8].hex().encode()

    async def encode(self, payloads):
        sealed = []
        for payload in payloads:
            nonce = os.urandom(NONCE_LEN)
            data = nonce + self.aead.encrypt(nonce, payload.SerializeToString(), None)
            sealed.append(
                Payload(metadata={"encoding": ENCRYPTED, KEY_ID: self.key_id}, data=data)
            )
        return sealed

    async def decode(self, payloads):
        opened = []
        for payload in payloads:
            if payload.metadata.get("encoding") != ENCRYPTED:
                opened.append(payload)
                continue
            key_id = payload.metadata.get(KEY_ID)
            if key_id is not None and key_id != self.key_id:
                raise ValueError(f"encrypted with key {key_id!r}, not {self.key_id!r}")
            nonce, sealed = payload.data[:NONCE_LEN], payload.data[NONCE_LEN:]
            opened.append(Payload.FromString(self.aead.decrypt(nonce, sealed, None)))
        return opened


async def main(argv):
    address, rest = argv[0], argv[1:]
    codec = None
    task_queue = "toolnexus"
    args = []
    while rest:
        arg = rest.pop(0)
        if arg == "--codec-key":
            with open(rest.pop(0)) as f:
                codec = AesGcmCodec(bytes.fromhex(f.read().strip()))
        elif arg == "--task-queue":
            task_queue = rest.pop(0)
        else:
            args.append(arg)
    converter = DataConverter.default
    if codec is not None:
        converter = dataclasses.replace(converter, payload_codec=codec)
    client = await Client.connect(address, data_converter=converter)
    command, workflow_id = args[0], args[1]
    handle = client.get_workflow_handle(workflow_id)
    if command == "start":
        await client.start_workflow(
            "AgentRun", {"prompt": args[2]}, id=workflow_id, task_queue=task_queue
        )
        return {"started": workflow_id}
    if command == "pending":
        return await handle.query("pending")
    if command == "answer":
        try:
            waiting = await handle.execute_update("answer", json.loads(args[2]))
        except WorkflowUpdateFailedError as e:
            cause = e.cause
            return {"refused": getattr(cause, "message", None) or str(cause)}
        return {"waiting": waiting}
    if command == "result":
        return await handle.result()
    if command == "runs":
        runs = [
            {"runId": w.run_id, "status": w.status.name if w.status else None,
             "start": w.start_time.isoformat()}
            async for w in client.list_workflows(f"WorkflowId = '{workflow_id}'")
        ]
        runs.sort(key=lambda r: r["start"])
        return runs
    raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    code = 0
    try:
        print(json.dumps(asyncio.run(main(sys.argv[1:]))))
    except Exception as e:  # the caller reads why on standard error
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # The SDK's runtime can crash at interpreter exit; nothing is left to do by then.
    os._exit(code)
