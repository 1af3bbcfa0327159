"""The ConverseStream reader thread: closing or cancelling a stream shuts the connection, joins
the thread and leaves no task behind."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from thinkagent import Agent, Message, ModelRequest, RunCancelled, ThinkingDelta
from thinkagent.emulator import Emulator, Fault
from thinkagent.providers.bedrock import BedrockModel, ClaudeThinking

from ..anthropic.support import QUESTION, TOOLS

MODEL_ID = "us.anthropic.claude-sonnet-4-6-v1:0"
#: Each event of a slow stream waits this long: a reader left blocked would outlive the test.
SLOW = 0.25


def slow_stream() -> Fault:
    """A stream whose events come SLOW seconds apart, and which ends (with an error event)
    soon after the test has stopped reading it."""
    return Fault.stream_error(500, after=3, delay=SLOW, api="bedrock")


def model(client: Any) -> BedrockModel:
    return BedrockModel(MODEL_ID, client=client, thinking=ClaudeThinking.adaptive())


def other_tasks() -> set[asyncio.Task[Any]]:
    return asyncio.all_tasks() - {asyncio.current_task()}  # type: ignore[operator]


async def test_cancelling_a_run_closes_the_stream_and_joins_its_thread(
    emu: Emulator, client: Any
) -> None:
    emu.inject(slow_stream())
    baseline = threading.active_count()
    first_delta = asyncio.Event()
    agent = Agent(model(client), tools=TOOLS)

    caught: list[RunCancelled] = []

    async def consume() -> None:
        try:
            async with agent.run_stream(QUESTION) as stream:
                async for event in stream:
                    if isinstance(event, ThinkingDelta):
                        first_delta.set()
        except RunCancelled as cancelled:  # caught inside the task: Python 3.10 hands the
            caught.append(cancelled)  # awaiting side a plain CancelledError
            raise

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_delta.wait(), 10)
    assert threading.active_count() == baseline + 1  # the reader
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < SLOW  # not waiting for the next event
    assert threading.active_count() == baseline
    assert other_tasks() == set()
    assert caught[0].messages == [Message.user(QUESTION)]


async def test_closing_the_stream_early_joins_its_thread(emu: Emulator, client: Any) -> None:
    emu.inject(slow_stream())
    baseline = threading.active_count()
    stream = model(client).stream(ModelRequest([Message.user(QUESTION)]))
    first = await stream.__anext__()
    assert isinstance(first, ThinkingDelta)
    started = time.monotonic()
    await stream.aclose()  # type: ignore[attr-defined]
    assert time.monotonic() - started < SLOW
    assert threading.active_count() == baseline
    assert other_tasks() == set()


async def test_cancelling_before_the_response_starts(emu: Emulator, client: Any) -> None:
    emu.inject(slow_stream())
    baseline = threading.active_count()
    stream = model(client).stream(ModelRequest([Message.user(QUESTION)]))
    task = asyncio.create_task(stream.__anext__())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await stream.aclose()  # type: ignore[attr-defined]
    assert threading.active_count() == baseline
    assert other_tasks() == set()


async def test_a_finished_stream_leaves_no_thread(client: Any) -> None:
    baseline = threading.active_count()
    result = await Agent(model(client), tools=TOOLS).run_stream(QUESTION).__aenter__()
    async for _ in result:
        pass
    assert result.result.output
    assert threading.active_count() == baseline
    assert other_tasks() == set()


async def test_concurrent_streams_each_get_a_reader(client: Any) -> None:
    baseline = threading.active_count()
    agent = Agent(model(client), tools=TOOLS)

    async def one(city: str) -> str:
        async with agent.run_stream(f"What's the weather in {city}?") as stream:
            async for _ in stream:
                pass
        return stream.result.output

    outputs = await asyncio.gather(*(one(c) for c in ("Paris", "Lyon", "Nice", "Lille")))
    assert all(
        city in out for city, out in zip(("Paris", "Lyon", "Nice", "Lille"), outputs, strict=True)
    )
    assert threading.active_count() == baseline
