"""An MCP server written with the official Python SDK, consumed by toolnexus's McpTools.

`deliver` asks for an address through a resolver: on protocol 2026-07-28 the SDK turns
that into an `input_required` round, on older protocols into `elicitation/create`.
"""

import os
from typing import Annotated

import anyio
from pydantic import BaseModel

from mcp.server.mcpserver import AcceptedElicitation, Elicit, ElicitationResult, MCPServer, Resolve

app = MCPServer("py shop")


class Address(BaseModel):
    city: str
    zip: str


def ask_address(item: str) -> Elicit[Address]:
    return Elicit(f"Where should the {item} go?", Address)


@app.tool(description="Adds two integers")
def add(a: int, b: int) -> str:
    return str(a + b)


@app.tool(description="Delivers an item; asks where to")
def deliver(item: str, address: Annotated[ElicitationResult[Address], Resolve(ask_address)]) -> str:
    if isinstance(address, AcceptedElicitation):
        return f"{item} goes to {address.data.zip} {address.data.city}"
    return f"no address for {item}"


@app.tool(name="echo.v2", description="Echoes its text")
def echo(text: str) -> str:
    return text


@app.tool(description="Ends the server process")
def crash() -> str:
    os._exit(3)


@app.tool(description="Never answers")
async def sleepy() -> str:
    await anyio.sleep(3600)
    return "woke"


if __name__ == "__main__":
    app.run()
