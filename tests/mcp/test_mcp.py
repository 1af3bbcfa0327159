"""MCP tools over both transports, against a real MCP server the tests start (`server.py`)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterator

import pytest
from mcp import MCPError

from thinkagent import (
    Agent,
    ConfigurationError,
    Image,
    Message,
    TextPart,
    ToolCall,
    dump_messages,
    load_messages,
)
from thinkagent.mcp import MCPTools
from thinkagent.testing import ScriptedModel

from .processes import SERVER, HttpServer
from .server import PIXEL


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with HttpServer() as server:
        yield server.url


MakeServer = Callable[..., MCPTools]


@pytest.fixture(params=["stdio", "http"])
def make_server(request: pytest.FixtureRequest) -> MakeServer:
    """`MCPTools` for the test server over each transport, with the options given."""
    if request.param == "stdio":
        return lambda **options: MCPTools.stdio(sys.executable, [SERVER, "stdio"], **options)
    url: str = request.getfixturevalue("http_url")
    return lambda **options: MCPTools.http(url, **options)


@pytest.fixture
def server(make_server: MakeServer) -> MCPTools:
    return make_server()


def call(call_id: str, name: str, **arguments: object) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=dict(arguments))


async def test_the_servers_tools_become_agent_tools(server: MCPTools) -> None:
    async with server:
        tools = {tool.name: tool for tool in server.tools}
    assert sorted(tools) == ["add", "broken", "forecast", "pid", "pixel", "shout", "sleep"]
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


async def test_allowed_tools_keeps_only_the_tools_it_names(make_server: MakeServer) -> None:
    async with make_server(allowed_tools=["add", "shout"]) as filtered:
        assert sorted(tool.name for tool in filtered.tools) == ["add", "shout"]


async def test_allowed_tools_naming_a_tool_the_server_lacks_is_a_configuration_error() -> None:
    server = MCPTools.stdio(sys.executable, [SERVER, "stdio"], allowed_tools=["add", "nope"])
    with pytest.raises(ConfigurationError, match=r"does not have: nope \(it has: add, broken"):
        async with server:
            pass
    with pytest.raises(ConfigurationError, match="not one name"):
        MCPTools.stdio(sys.executable, [SERVER, "stdio"], allowed_tools="add")


async def test_resources_are_listed_and_read_as_text_and_media(server: MCPTools) -> None:
    async with server:
        resources = {str(r.uri): r for r in await server.list_resources()}
        assert sorted(resources) == ["config://greeting", "image://pixel"]
        assert resources["config://greeting"].mime_type == "text/plain"
        assert await server.read_resource("config://greeting") == ["Hello from the server."]
        assert await server.read_resource("image://pixel") == [
            Image(data=PIXEL, media_type="image/png")
        ]
        with pytest.raises(MCPError):  # the server's own refusal, as it is
            await server.read_resource("config://nothing")


async def test_prompts_are_listed_and_filled_as_messages(server: MCPTools) -> None:
    async with server:
        (prompt,) = await server.list_prompts()
        assert prompt.name == "review"
        assert [a.name for a in prompt.arguments or []] == ["code"]
        messages = await server.get_prompt("review", {"code": "x = 1"})
    assert messages == [
        Message(role="user", parts=(TextPart(text="Review this code:\nx = 1"),)),
        Message(role="assistant", parts=(TextPart(text="I will look at it."),)),
    ]


def _pid_model() -> ScriptedModel:
    return ScriptedModel(
        [
            Message(role="assistant", parts=(call("c1", "pid"),)),
            Message(role="assistant", parts=(TextPart(text="done"),)),
        ]
    )


async def _pid(agent: Agent) -> int:
    result = await agent.run("Which process?")
    (answer,) = result.messages[2].tool_results
    assert not answer.is_error, answer.content
    return int(
        str(answer.content if not isinstance(answer.content, dict) else answer.content["result"])
    )


async def test_a_connection_per_run_when_the_user_asks() -> None:
    server = MCPTools.stdio(sys.executable, [SERVER, "stdio"])
    async with server.connection():  # never entered: the first connection lists the tools
        tools = server.tools
        first = await _pid(Agent(_pid_model(), tools=tools))

    async def one_run() -> int:
        async with server.connection():
            return await _pid(Agent(_pid_model(), tools=tools))

    second, third = await asyncio.gather(one_run(), one_run())
    assert len({first, second, third}) == 3  # a stdio server per connection: one per run
    # outside any run's connection (and never entered) the tools have no session
    result = await Agent(_pid_model(), tools=tools).run("Which process?")
    error = result.messages[2].tool_results[0]
    assert error.is_error and "session is closed" in str(error.content)
