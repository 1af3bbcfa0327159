"""A small MCP server for the tests, written with the official `mcp` package.

Run as `python server.py stdio` (standard streams) or `python server.py http PORT` (streamable
HTTP on 127.0.0.1:PORT, path `/mcp`).
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import Image, MCPServer
from pydantic import BaseModel

PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a5d6c6ce0000000049454e44ae426082"
)
"""A 1x1 PNG, byte for byte what the `pixel` tool returns."""

server = MCPServer("thinkagent-test", log_level="WARNING")


class Forecast(BaseModel):
    city: str
    celsius: int


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def forecast(city: str) -> Forecast:
    """The forecast for a city."""
    return Forecast(city=city, celsius=21)


@server.tool(structured_output=False)
def shout(text: str) -> str:
    """Repeat the text in capitals."""
    return text.upper()


@server.tool()
def pixel() -> Image:
    """A one-pixel image."""
    return Image(data=PIXEL, format="png")


@server.tool()
def broken() -> str:
    """Always fails."""
    raise ValueError("the database is down")


@server.tool()
def pid() -> int:
    """The server's process id (so a test can kill it)."""
    return os.getpid()


@server.tool()
async def sleep(seconds: float) -> str:
    """Wait, then answer (a call still under way when a test kills the server)."""
    await asyncio.sleep(seconds)
    return "slept"


@server.resource("config://greeting", mime_type="text/plain")
def greeting() -> str:
    """A text resource."""
    return "Hello from the server."


@server.resource("image://pixel", mime_type="image/png")
def pixel_resource() -> bytes:
    """A binary resource: the same pixel."""
    return PIXEL


@server.prompt()
def review(code: str) -> list[dict[str, str]]:
    """Ask for a code review."""
    return [
        {"role": "user", "content": f"Review this code:\n{code}"},
        {"role": "assistant", "content": "I will look at it."},
    ]


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
