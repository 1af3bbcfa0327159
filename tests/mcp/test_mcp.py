"""MCP tools over both transports, against a real MCP server the tests start (`server.py`)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from thinkagent import Agent, Image, Message, TextPart, ToolCall, dump_messages, load_messages
from thinkagent.mcp import MCPTools
from thinkagent.testing import ScriptedModel

from .server import PIXEL

SERVER = str(Path(__file__).with_name("server.py"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, SERVER, "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the MCP test server did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture(params=["stdio", "http"])
def server(request: pytest.FixtureRequest) -> MCPTools:
    if request.param == "stdio":
        return MCPTools.stdio(sys.executable, [SERVER, "stdio"])
    return MCPTools.http(request.getfixturevalue("http_url"))


def call(call_id: str, name: str, **arguments: object) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=dict(arguments))


async def test_the_servers_tools_become_agent_tools(server: MCPTools) -> None:
    async with server:
        tools = {tool.name: tool for tool in server.tools}
    assert sorted(tools) == ["add", "broken", "forecast", "pixel", "shout"]
    add = tools["add"].definition
    assert add.description == "Add two integers."
    assert add.parameters["required"] == ["a", "b"]
    assert add.parameters["properties"]["a"]["type"] == "integer"
    assert tools["forecast"].definition.parameters["properties"]["city"]["type"] == "string"


async def test_structured_text_media_and_error_results_reach_the_history(server: MCPTools) -> None:
    model = ScriptedModel(
        [
            Message(
                role="assistant",
                parts=(
                    call("c1", "add", a=2, b=3),
                    call("c2", "forecast", city="Oslo"),
                    call("c3", "shout", text="hi"),
                    call("c4", "pixel"),
                    call("c5", "broken"),
                ),
            ),
            Message(role="assistant", parts=(TextPart(text="Done."),)),
        ]
    )
    async with server:
        result = await Agent(model, tools=server.tools).run("Use every tool.")
    add, forecast, shout, pixel, broken = result.messages[2].tool_results
    assert add.content == {"result": 5} and not add.is_error
    assert forecast.content == {"city": "Oslo", "celsius": 21}
    assert shout.content == "HI"
    assert pixel.content is None
    assert pixel.media == (Image(data=PIXEL, media_type="image/png"),)
    assert broken.is_error and "MCPToolError" in str(broken.content)
    assert result.output == "Done."
    saved = dump_messages(result.messages)
    assert dump_messages(load_messages(saved)) == saved
    assert load_messages(saved)[2].tool_results[3].media[0].data == PIXEL  # byte for byte


async def test_a_prefix_names_the_tools_and_the_server_gets_its_own_names() -> None:
    model = ScriptedModel(
        [
            Message(role="assistant", parts=(call("c1", "calc_add", a=1, b=1),)),
            Message(role="assistant", parts=(TextPart(text="2"),)),
        ]
    )
    async with MCPTools.stdio(sys.executable, [SERVER, "stdio"], prefix="calc") as server:
        assert "calc_add" in [tool.name for tool in server.tools]
        result = await Agent(model, tools=server.tools).run("1 + 1?")
    assert result.messages[2].tool_results[0].content == {"result": 2}


async def test_a_call_after_the_session_closed_is_an_error_result() -> None:
    async with MCPTools.stdio(sys.executable, [SERVER, "stdio"]) as server:
        tools = server.tools
    model = ScriptedModel(
        [
            Message(role="assistant", parts=(call("c1", "add", a=1, b=1),)),
            Message(role="assistant", parts=(TextPart(text="?"),)),
        ]
    )
    result = await Agent(model, tools=tools).run("1 + 1?")
    error = result.messages[2].tool_results[0]
    assert error.is_error and "session is closed" in str(error.content)
