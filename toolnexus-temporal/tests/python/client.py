"""The client of the `temporal` suite's temporal_agent tests: Temporal's official Python SDK
driving `AgentRun`.

    client.py ADDRESS start ID TASK_QUEUE PROMPT
    client.py ADDRESS pending ID
    client.py ADDRESS answer ID ANSWER_JSON
    client.py ADDRESS race ID ANSWER_JSON ANSWER_JSON
    client.py ADDRESS result ID SECONDS

Prints one JSON line: {"ok": VALUE} when the call succeeded, {"error": MESSAGE} when the
server or the workflow refused it (the message carries every cause, so a test can check
what the refusal names). `race` sends both answers at once and prints one such object per
answer, in the order given. A failure to reach the server exits non-zero.
"""

import asyncio
import json
import os
import sys

from temporalio.client import Client, WorkflowUpdateFailedError, WorkflowFailureError
from temporalio.service import RPCError


def chain(error):
    """The message of `error` and of each cause under it."""
    parts = []
    while error is not None:
        parts.append(f"{type(error).__name__}: {error}")
        error = error.__cause__ or getattr(error, "cause", None)
    return " <- ".join(parts)


async def outcome(call):
    try:
        return {"ok": await call}
    except (WorkflowUpdateFailedError, WorkflowFailureError, RPCError) as e:
        return {"error": chain(e)}


async def main(argv):
    address, command, workflow_id, *rest = argv
    client = await Client.connect(address, namespace="default")
    handle = client.get_workflow_handle(workflow_id)
    if command == "start":
        queue, prompt = rest
        started = await client.start_workflow(
            "AgentRun", {"prompt": prompt}, id=workflow_id, task_queue=queue
        )
        return {"ok": started.result_run_id}
    if command == "pending":
        return await outcome(handle.query("pending"))
    if command == "answer":
        return await outcome(handle.execute_update("answer", json.loads(rest[0])))
    if command == "race":
        both = [handle.execute_update("answer", json.loads(a)) for a in rest]
        return {"ok": list(await asyncio.gather(*(outcome(c) for c in both)))}
    if command == "result":
        return await outcome(asyncio.wait_for(handle.result(), float(rest[0])))
    raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    code = 0
    try:
        print(json.dumps(asyncio.run(main(sys.argv[1:]))))
    except BaseException as e:  # noqa: BLE001 - reported, then the process ends at once
        print(f"client.py: {chain(e)}", file=sys.stderr)
        code = 1
    # The SDK's runtime can crash while the interpreter tears down; end before that.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
