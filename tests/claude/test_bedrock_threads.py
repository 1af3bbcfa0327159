"""The ConverseStream reader thread: closing or cancelling a stream shuts the connection, joins
the thread and leaves no task behind; cancelling before the response has begun returns at once.
Non-streamed calls run in threads of their own."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from botocore.config import Config

from tests.support.claude import QUESTION, TOOLS
from thinkagent import Agent, Message, ModelRequest, RunCancelled, ThinkingDelta
from thinkagent.emulator import Emulator, Fault
from thinkagent.providers.claude import BedrockModel, ClaudeThinking

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
    emu: Emulator, bedrock_client: Any
) -> None:
    emu.inject(slow_stream())
    baseline = threading.active_count()
    first_delta = asyncio.Event()
    agent = Agent(model(bedrock_client), tools=TOOLS)

    async def consume() -> None:
        async with agent.run_stream(QUESTION) as stream:
            async for event in stream:
                if isinstance(event, ThinkingDelta):
                    first_delta.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_delta.wait(), 10)
    assert threading.active_count() == baseline + 1  # the reader
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError) as info:
        await task
    assert time.monotonic() - started < SLOW  # not waiting for the next event
    assert threading.active_count() == baseline
    assert other_tasks() == set()
    cancelled = RunCancelled.find(info.value)
    assert cancelled is not None and cancelled.messages == [Message.user(QUESTION)]


async def test_closing_the_stream_early_joins_its_thread(
    emu: Emulator, bedrock_client: Any
) -> None:
    emu.inject(slow_stream())
    baseline = threading.active_count()
    stream = model(bedrock_client).stream(ModelRequest([Message.user(QUESTION)]))
    first = await stream.__anext__()
    assert isinstance(first, ThinkingDelta)
    started = time.monotonic()
    await stream.aclose()  # type: ignore[attr-defined]
    assert time.monotonic() - started < SLOW
    assert threading.active_count() == baseline
    assert other_tasks() == set()


async def test_cancelling_before_the_response_starts(emu: Emulator, bedrock_client: Any) -> None:
    emu.inject(slow_stream())
    baseline = threading.active_count()
    stream = model(bedrock_client).stream(ModelRequest([Message.user(QUESTION)]))
    task = asyncio.create_task(stream.__anext__())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await stream.aclose()  # type: ignore[attr-defined]
    assert threading.active_count() == baseline
    assert other_tasks() == set()


async def test_a_finished_stream_leaves_no_thread(bedrock_client: Any) -> None:
    baseline = threading.active_count()
    result = await Agent(model(bedrock_client), tools=TOOLS).run_stream(QUESTION).__aenter__()
    async for _ in result:
        pass
    assert result.result.output
    assert threading.active_count() == baseline
    assert other_tasks() == set()


async def test_concurrent_streams_each_get_a_reader(bedrock_client: Any) -> None:
    baseline = threading.active_count()
    agent = Agent(model(bedrock_client), tools=TOOLS)

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


# --- a response that does not come ------------------------------------------------------------

#: botocore's read timeout for the silent server: how long a blocked `converse_stream` lasts.
READ_TIMEOUT = 2.0


class SilentServer:
    """Accepts connections and reads the requests, and never answers: a response whose
    headers are late."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.received = threading.Event()
        self._connections: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:  # closed
                return
            self._connections.append(connection)
            if connection.recv(65536):
                self.received.set()

    def close(self) -> None:
        self._listener.close()
        for connection in self._connections:
            connection.close()
        self._thread.join(5)


@contextmanager
def silent_server() -> Iterator[SilentServer]:
    server = SilentServer()
    try:
        yield server
    finally:
        server.close()


def silent_client(server: SilentServer) -> Any:
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=server.url,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="not-a-secret",
        config=Config(
            read_timeout=READ_TIMEOUT, connect_timeout=1, retries={"total_max_attempts": 1}
        ),
    )


async def readers_end() -> None:
    """Wait for the stream readers left running to end (at most the read timeout)."""
    readers = [t for t in threading.enumerate() if t.name == "thinkagent-bedrock-stream"]
    assert readers
    for _ in range(int((READ_TIMEOUT + 5) / 0.05)):
        if not any(reader.is_alive() for reader in readers):
            return
        await asyncio.sleep(0.05)


async def test_cancelling_before_the_headers_returns_at_once() -> None:
    """No connection to shut down yet: the reader is left to end on its own when the call
    gives up, instead of holding the cancellation for the read timeout (times retries)."""
    with silent_server() as server:
        client = silent_client(server)
        baseline = threading.active_count()
        stream = model(client).stream(ModelRequest([Message.user(QUESTION)]))
        task = asyncio.create_task(stream.__anext__())
        for _ in range(500):  # the request has reached the server
            if server.received.is_set():
                break
            await asyncio.sleep(0.01)
        assert server.received.is_set()
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await stream.aclose()  # type: ignore[attr-defined]
        assert time.monotonic() - started < READ_TIMEOUT / 2
        assert other_tasks() == set()
        # the reader ends by itself once botocore gives up
        await readers_end()
        assert threading.active_count() == baseline
        client.close()


async def test_cancelling_a_run_before_the_headers_returns_at_once() -> None:
    with silent_server() as server:
        client = silent_client(server)
        agent = Agent(model(client), tools=TOOLS)

        async def consume() -> None:
            async with agent.run_stream(QUESTION) as stream:
                async for _ in stream:
                    pass

        task = asyncio.create_task(consume())
        for _ in range(500):
            if server.received.is_set():
                break
            await asyncio.sleep(0.01)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - started < READ_TIMEOUT / 2
        assert other_tasks() == set()
        await readers_end()
        client.close()


# --- non-streamed calls -----------------------------------------------------------------------


async def test_a_busy_default_executor_does_not_hold_up_a_request(bedrock_client: Any) -> None:
    """`converse` runs in Bedrock's own threads: sync tools (or anything else) filling the
    loop's default executor cannot starve it."""
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
    release = threading.Event()
    busy = loop.run_in_executor(None, release.wait, 30)
    try:
        response = await asyncio.wait_for(
            model(bedrock_client).request(ModelRequest([Message.user(QUESTION)])), 10
        )
    finally:
        release.set()
        await busy
    assert response.message.text
