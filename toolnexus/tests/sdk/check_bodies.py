"""Validates request bodies against the official Python SDKs' own request types.

Reads one JSON object per line on standard input, {"style": ..., "body": ...}, and checks
each body with the types of the SDK for its style: `openai` (Responses create params),
`google-genai` (Content, Tool, ToolConfig, GenerationConfig), `anthropic` (Messages create
params, thinking blocks included). Unknown keys are refused wherever the SDK's type is a
closed shape. Prints one line per body ("ok <style> <n>" or "FAIL <style> <n>: <why>") and
exits 1 when any body fails.
"""

import collections.abc
import json
import sys
import typing

from pydantic import BaseModel, ConfigDict, TypeAdapter
from typing_extensions import NotRequired, Required, TypedDict, is_typeddict

# Refuse keys the SDK's TypedDicts do not declare (pydantic ignores them by default).
FORBID = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


_eager = {}


def eager(tp):
    """`tp` with every `Iterable[X]` read as `list[X]`, through unions and TypedDicts.

    The SDKs type many lists as `Iterable`, which pydantic validates lazily, that is not at
    all until someone iterates; a body would then pass with anything in its tools or content
    blocks. Lists are validated on the spot.
    """
    if is_typeddict(tp):
        if tp not in _eager:
            hints = typing.get_type_hints(tp, include_extras=True)
            fields = {}
            for key, hint in hints.items():
                # The hints say it when they wrap the type: the SDKs' modules postpone
                # annotations, so the class's own key sets miss `Required[…]` (they still
                # hold each defining class's totality for the rest).
                required = {Required: True, NotRequired: False}.get(
                    typing.get_origin(hint), key in tp.__required_keys__
                )
                wrap = Required if required else NotRequired
                fields[key] = wrap[eager(strip_required(hint))]
            _eager[tp] = TypedDict(tp.__name__, fields)
        return _eager[tp]
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (collections.abc.Iterable, collections.abc.Sequence, list):
        return list[eager(args[0])] if args else list
    if origin is typing.Union:
        # Some unions also admit the SDK's response models (pydantic models that accept
        # what they are given): a request is checked against the request types alone.
        params = [a for a in args if not is_response_model(a)] or list(args)
        return typing.Union[tuple(eager(a) for a in params)]
    if origin is typing.Annotated:
        return typing.Annotated[(eager(args[0]),) + tuple(tp.__metadata__)]
    if origin in (dict, collections.abc.Mapping) and args:
        return dict[args[0], eager(args[1])]
    return tp


def is_response_model(tp):
    if typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) is typing.Union:
        return all(is_response_model(a) for a in typing.get_args(tp))
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def strip_required(hint):
    while typing.get_origin(hint) in (Required, NotRequired):
        hint = typing.get_args(hint)[0]
    return hint


def closed(typed_dict):
    # pydantic takes a config for a TypedDict only through a container around it; the
    # config then holds for every TypedDict inside that declares none of its own.
    adapter = TypeAdapter(list[eager(typed_dict)], config=FORBID)
    return lambda body: adapter.validate_python([body])


def responses_adapter():
    from openai.types.responses import response_create_params as p

    return closed(p.ResponseCreateParamsNonStreaming), closed(p.ResponseCreateParamsStreaming)


def anthropic_adapter():
    from anthropic.types import message_create_params as p

    return closed(p.MessageCreateParamsNonStreaming), closed(p.MessageCreateParamsStreaming)


def check_create_params(body, adapters):
    whole, streamed = adapters
    (streamed if body.get("stream") else whole)(body)


def check_gemini(body, _):
    from google.genai import types

    # The REST body of generateContent: each field is one of the SDK's models, which forbid
    # unknown keys; JSON mode so that `thoughtSignature` is read as base64, as the API does.
    fields = {
        "contents": lambda v: [types.Content.model_validate_json(json.dumps(c)) for c in v],
        "systemInstruction": lambda v: types.Content.model_validate_json(json.dumps(v)),
        "tools": lambda v: [types.Tool.model_validate_json(json.dumps(t)) for t in v],
        "toolConfig": lambda v: types.ToolConfig.model_validate_json(json.dumps(v)),
        "generationConfig": lambda v: types.GenerationConfig.model_validate_json(json.dumps(v)),
    }
    unknown = sorted(set(body) - set(fields))
    if unknown:
        raise ValueError(f"unknown generateContent fields: {unknown}")
    if not body.get("contents"):
        raise ValueError("contents is required")
    for key, check in fields.items():
        if key in body:
            check(body[key])


CHECKS = {
    "responses": (check_create_params, responses_adapter),
    "anthropic": (check_create_params, anthropic_adapter),
    "gemini": (check_gemini, lambda: None),
}


def main():
    adapters = {}
    failed = 0
    for n, line in enumerate(sys.stdin):
        if not line.strip():
            continue
        item = json.loads(line)
        style, body = item["style"], item["body"]
        check, make = CHECKS[style]
        if style not in adapters:
            adapters[style] = make()
        try:
            check(body, adapters[style])
            print(f"ok {style} {n}")
        except Exception as e:  # the SDK's validation error, whatever its type
            failed += 1
            print(f"FAIL {style} {n}: {e}".replace("\n", " | "))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
