"""MCP servers that die, restart or were never there: no cancellation or exception group
reaches the caller, a lost connection is made again on the next call (issue 21, defect 3, and
"MCP that recovers")."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from typing import Any, cast

import pytest

from thinkagent import Agent, ConfigurationError, Message, RunResult, TextPart, ToolCall
from thinkagent.mcp import MCPConnectionError, MCPTools
from thinkagent.testing import ScriptedModel

from .processes import SERVER, HttpServer, free_port


def _model(*calls: ToolCall) -> ScriptedModel:
    return ScriptedModel(
        [
            Message(role="assistant", parts=calls),
            Message(role="assistant", parts=(TextPart(text="done"),)),
        ]
    )


def _add() -> ToolCall:
    return ToolCall(id="c1", name="add", arguments={"a": 1, "b": 2})


def _cancelling() -> int:
    """The current task's pending cancellations (Python 3.11+; on 3.10 a leaked one shows as
    the CancelledError itself)."""
    task = asyncio.current_task()
    assert task is not None
    return task.cancelling() if sys.version_info >= (3, 11) else 0


async def _run(tools: MCPTools, *calls: ToolCall) -> RunResult:
    """One run of a scripted model making `calls` (default: add 1 + 2), checking that no
    cancellation was left on the task that ran it."""
    before = _cancelling()
    result = await Agent(_model(*(calls or (_add(),))), tools=tools.tools).run("Go.")
    assert _cancelling() == before
    return result


def _content(result: RunResult) -> Any:
    (answer,) = result.messages[2].tool_results
    return answer.content if not answer.is_error else ("error", str(answer.content))


async def test_defect_3_a_dead_http_server_leaks_no_cancellation_into_later_runs_or_the_exit() -> (
    None
):
    with HttpServer() as http:
        server = MCPTools.http(http.url, reconnect_attempts=2)
        await server.__aenter__()
        assert _content(await _run(server)) == {"result": 3}
        http.kill()
        for _ in range(2):  # before: a raw CancelledError out of agent.run, every time
            kind, text = _content(await _run(server))
            assert kind == "error"
            assert f"cannot connect to the MCP server at {http.url}" in text
            assert "ConnectError" in text and "(2 attempts)" in text
        await server.__aexit__(None, None, None)  # before: a raw ExceptionGroup


async def test_an_http_server_killed_and_restarted_between_two_runs_serves_the_second() -> None:
    with HttpServer() as http:
        async with MCPTools.http(http.url) as server:
            assert _content(await _run(server)) == {"result": 3}
            http.kill()
            http.start()  # a new process: the old session is unknown to it
            assert _content(await _run(server)) == {"result": 3}
            assert _content(await _run(server)) == {"result": 3}


async def test_a_stdio_server_killed_between_two_runs_is_started_again() -> None:
    async with MCPTools.stdio(sys.executable, [SERVER, "stdio"]) as server:
        first = await _run(server, ToolCall(id="c1", name="pid"))
        pid = cast("dict[str, int]", _content(first))["result"]
        os.kill(pid, signal.SIGKILL)
        await _wait_gone(pid)
        second = await _run(server, ToolCall(id="c1", name="pid"))
        assert cast("dict[str, int]", _content(second))["result"] != pid
        assert _content(await _run(server)) == {"result": 3}


async def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_call_under_way_when_the_server_dies_is_an_error_result_not_sent_again(
    transport: str,
) -> None:
    http = HttpServer()
    if transport == "http":
        http.start()
        server = MCPTools.http(http.url)
    else:
        server = MCPTools.stdio(sys.executable, [SERVER, "stdio"])
    try:
        async with server:
            pid = cast("dict[str, int]", _content(await _run(server, ToolCall(id="p", name="pid"))))
            slow = asyncio.ensure_future(
                _run(server, ToolCall(id="c1", name="sleep", arguments={"seconds": 30}))
            )
            await asyncio.sleep(1.0)  # the call is under way
            os.kill(pid["result"], signal.SIGKILL)
            started = time.monotonic()
            kind, text = _content(await slow)
            assert time.monotonic() - started < 10  # told at once, not after 30 s
            assert kind == "error" and "was lost during the request" in text
            if transport == "http":
                http.kill()
                http.start()
            assert _content(await _run(server)) == {"result": 3}  # the next call reconnects
    finally:
        http.kill()


async def test_opening_an_unreachable_http_server_raises_a_configuration_error_naming_it() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with pytest.raises(MCPConnectionError) as caught:
        async with MCPTools.http(url):
            pass
    assert isinstance(caught.value, ConfigurationError)
    assert str(caught.value).startswith(f"cannot connect to the MCP server at {url}: ConnectError")
    assert _cancelling() == 0


async def test_a_stdio_command_that_cannot_start_raises_a_configuration_error_naming_it() -> None:
    with pytest.raises(MCPConnectionError, match="cannot connect to the MCP server `no-such-mcp"):
        async with MCPTools.stdio("no-such-mcp-server-command", ["--flag"]):
            pass
    with pytest.raises(
        MCPConnectionError, match=r"server `.*python.* -c import sys; sys.exit\(3\)`"
    ):
        async with MCPTools.stdio(sys.executable, ["-c", "import sys; sys.exit(3)"]):
            pass


async def test_a_run_timed_out_by_its_caller_raises_timeout_and_the_tools_still_work() -> None:
    async with MCPTools.stdio(sys.executable, [SERVER, "stdio"]) as server:
        model = _model(ToolCall(id="c1", name="sleep", arguments={"seconds": 30}))
        with pytest.raises(asyncio.TimeoutError):  # asked for: the caller's own timeout
            await asyncio.wait_for(Agent(model, tools=server.tools).run("Go."), 1.0)
        assert _cancelling() == 0
        assert _content(await _run(server)) == {"result": 3}


async def test_concurrent_calls_after_a_restart_reconnect_once_and_all_succeed() -> None:
    with HttpServer() as http:
        async with MCPTools.http(http.url) as server:
            assert _content(await _run(server)) == {"result": 3}
            http.kill()
            http.start()
            calls = [ToolCall(id=f"c{i}", name="add", arguments={"a": i, "b": 1}) for i in range(5)]
            result = await _run(server, *calls)
            answers = [r.content for r in result.messages[2].tool_results]
            assert answers == [{"result": i + 1} for i in range(5)]
