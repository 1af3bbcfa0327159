"""Injected faults surface in each official SDK as that SDK's own exception."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
import pytest
import urllib3.exceptions
from botocore.eventstream import ChecksumMismatch
from botocore.exceptions import ClientError, ConnectionClosedError, EventStreamError

from thinkagent.emulator import Emulator, Fault, Reply

from .tools import ANTHROPIC_TOOLS, BEDROCK_TOOLS, QUESTION

_CUT = (httpx2.RemoteProtocolError, anthropic.APIConnectionError)
"""What a cut stream raises from the anthropic SDK: the transport error itself, or (from 2.17)
that error wrapped as a connection error."""

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

REQUEST: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 4096,
    "thinking": {"type": "enabled", "budget_tokens": 2048},
    "tools": ANTHROPIC_TOOLS,
    "messages": [{"role": "user", "content": QUESTION}],
}
CONVERSE: dict[str, Any] = {
    "modelId": "anthropic.claude-sonnet-4-5-20250929-v1:0",
    "messages": [{"role": "user", "content": [{"text": QUESTION}]}],
    "toolConfig": BEDROCK_TOOLS,
    "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 2048}},
}


async def collect(client: anthropic.AsyncAnthropic, seen: list[Any]) -> None:
    stream = await client.messages.create(stream=True, **REQUEST)
    async for event in stream:
        seen.append(event)


# --- Anthropic -------------------------------------------------------------------------------


async def test_429_is_retried_by_the_client_then_succeeds(
    emu: Emulator, retrying_anthropic_client: anthropic.AsyncAnthropic
) -> None:
    emu.inject(Fault.rate_limited())
    started = time.monotonic()
    reply = await retrying_anthropic_client.messages.create(**REQUEST)
    assert reply.stop_reason == "tool_use"
    assert len(emu.requests) == 2
    assert time.monotonic() - started < 1.0  # retry-after-ms keeps the retry fast
    assert emu.pending_faults == []


async def test_429_without_retries_is_a_rate_limit_error(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    emu.inject(Fault.rate_limited(retry_after=2))
    with pytest.raises(anthropic.RateLimitError) as exc:
        await anthropic_client.messages.create(**REQUEST)
    assert exc.value.type == "rate_limit_error"
    assert exc.value.response.headers["retry-after"] == "2"
    assert exc.value.response.headers["retry-after-ms"] == "2000"


@pytest.mark.parametrize(
    ("status", "error_class", "error_type"),
    [
        (529, anthropic.OverloadedError, "overloaded_error"),
        (500, anthropic.InternalServerError, "api_error"),
        (503, anthropic.ServiceUnavailableError, "api_error"),
    ],
)
async def test_server_errors(
    emu: Emulator,
    anthropic_client: anthropic.AsyncAnthropic,
    status: int,
    error_class: type[Exception],
    error_type: str,
) -> None:
    emu.inject(Fault.http(status))
    with pytest.raises(error_class) as exc:
        await anthropic_client.messages.create(**REQUEST)
    assert isinstance(exc.value, anthropic.APIStatusError)
    assert exc.value.status_code == status
    assert exc.value.type == error_type


async def test_error_event_mid_stream(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    emu.inject(Fault.stream_error())
    seen: list[Any] = []
    with pytest.raises(anthropic.APIStatusError) as exc:
        await collect(anthropic_client, seen)
    assert exc.value.status_code == 200
    assert exc.value.type == "overloaded_error"
    assert any(
        getattr(e, "delta", None) is not None and e.delta.type == "thinking_delta" for e in seen
    )


async def test_connection_cut_mid_thinking(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    emu.inject(Fault.cut())
    seen: list[Any] = []
    with pytest.raises(_CUT):
        await collect(anthropic_client, seen)
    deltas = [e.delta.type for e in seen if e.type == "content_block_delta"]
    assert deltas
    assert set(deltas) == {"thinking_delta"}
    emu.inject(Fault.cut(after=5))
    async with anthropic_client.messages.stream(**REQUEST) as stream:
        with pytest.raises(_CUT):
            await stream.get_final_message()
        snapshot = stream.current_message_snapshot
    assert snapshot.content[0].type == "thinking"
    assert snapshot.content[0].signature == ""


async def test_connection_cut_on_a_json_body(
    emu: Emulator,
    anthropic_client: anthropic.AsyncAnthropic,
    retrying_anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    emu.inject(Fault.cut())
    with pytest.raises(anthropic.APIConnectionError):
        await anthropic_client.messages.create(**REQUEST)
    emu.inject(Fault.cut())  # with the default retries, the cut is retried
    assert (await retrying_anthropic_client.messages.create(**REQUEST)).stop_reason == "tool_use"


async def test_malformed_bodies(emu: Emulator, anthropic_client: anthropic.AsyncAnthropic) -> None:
    emu.inject(Fault.malformed())
    with pytest.raises(json.JSONDecodeError):  # the SDK lets the JSON decoder's error through
        await anthropic_client.messages.create(**REQUEST)
    emu.inject(Fault.malformed())
    with pytest.raises(json.JSONDecodeError):
        await collect(anthropic_client, [])


async def test_delay_per_chunk(emu: Emulator, anthropic_client: anthropic.AsyncAnthropic) -> None:
    emu.inject(Fault.slow(0.01))
    stamps: list[float] = []
    stream = await anthropic_client.messages.create(stream=True, **REQUEST)
    async for _ in stream:
        stamps.append(time.monotonic())
    assert len(stamps) > 10
    assert stamps[-1] - stamps[0] >= 0.008 * (len(stamps) - 1)
    emu.inject(Fault.slow(0.05))
    started = time.monotonic()
    await anthropic_client.messages.create(**REQUEST)
    assert time.monotonic() - started >= 0.05


def _leave_anthropic_stream(emulator: Emulator) -> None:
    client = anthropic.Anthropic(base_url=emulator.url, api_key="key", max_retries=0)
    with client.messages.stream(**REQUEST) as stream:
        next(iter(stream))
    client.close()


def _time_out_on_anthropic_json(emulator: Emulator) -> None:
    client = anthropic.Anthropic(base_url=emulator.url, api_key="key", max_retries=0, timeout=0.1)
    with pytest.raises(anthropic.APITimeoutError):
        client.messages.create(**REQUEST)
    client.close()


def _leave_bedrock_stream(emulator: Emulator) -> None:
    stream = emulator.bedrock_client().converse_stream(**CONVERSE)["stream"]
    next(iter(stream))
    stream.close()


@pytest.mark.parametrize("fault", [Fault.slow(0.5), Fault.cut(delay=0.5)], ids=["slow", "cut"])
@pytest.mark.parametrize(
    "leave",
    [_leave_anthropic_stream, _time_out_on_anthropic_json, _leave_bedrock_stream],
    ids=["anthropic-sse", "anthropic-json", "bedrock-eventstream"],
)
def test_a_slowed_response_stops_when_the_client_leaves(
    fault: Fault, leave: Callable[[Emulator], None], caplog: pytest.LogCaptureFixture
) -> None:
    with Emulator() as emulator:
        emulator.inject(fault)
        leave(emulator)
        leaving = time.monotonic()
    # Not even one more delay: the response stopped with the client, not at its end (or
    # at the 2 s graceful-shutdown timeout, cancelled with a logged CancelledError).
    assert time.monotonic() - leaving < 0.4
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_faults_are_queued_per_api_and_consumed_once(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic, bedrock_client: Any
) -> None:
    emu.inject(Fault.http(500, api="bedrock"))
    emu.inject(Fault.http(529, api="anthropic"), times=2)
    for _ in range(2):
        with pytest.raises(anthropic.OverloadedError):
            await anthropic_client.messages.create(**REQUEST)
    assert (await anthropic_client.messages.create(**REQUEST)).stop_reason == "tool_use"
    assert emu.pending_faults == [Fault.http(500, api="bedrock")]
    with pytest.raises(ClientError) as exc:
        bedrock_client.converse(**CONVERSE)
    assert exc.value.response["Error"]["Code"] == "InternalServerException"
    assert emu.pending_faults == []


async def test_custom_error_message(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    emu.inject(Fault.http(400, "bad luck"))
    with pytest.raises(anthropic.BadRequestError) as exc:
        await anthropic_client.messages.create(**REQUEST)
    assert exc.value.body["error"] == {"type": "invalid_request_error", "message": "bad luck"}  # type: ignore[index]


# --- Bedrock ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code", "http_status"),
    [
        (429, "ThrottlingException", 429),
        (500, "InternalServerException", 500),
        (503, "ServiceUnavailableException", 503),
        (529, "ServiceUnavailableException", 503),
    ],
)
def test_bedrock_http_errors(
    emu: Emulator, bedrock_client: Any, status: int, code: str, http_status: int
) -> None:
    emu.inject(Fault.http(status))
    with pytest.raises(ClientError) as exc:
        bedrock_client.converse(**CONVERSE)
    assert exc.value.response["Error"]["Code"] == code
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == http_status
    assert isinstance(exc.value, getattr(bedrock_client.exceptions, code))


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (429, "throttlingException"),
        (529, "modelStreamErrorException"),
        (500, "internalServerException"),
    ],
)
def test_bedrock_exception_event_mid_stream(
    emu: Emulator, bedrock_client: Any, status: int, code: str
) -> None:
    emu.inject(Fault.stream_error(status))
    events: list[Any] = []
    with pytest.raises(EventStreamError) as exc:
        events.extend(bedrock_client.converse_stream(**CONVERSE)["stream"])
    assert exc.value.response["Error"]["Code"] == code
    assert events
    assert "messageStart" in events[0]


def test_bedrock_connection_cut(emu: Emulator, bedrock_client: Any) -> None:
    emu.inject(Fault.cut())
    events: list[Any] = []
    with pytest.raises(urllib3.exceptions.ProtocolError):  # botocore's transport error, mid-stream
        events.extend(bedrock_client.converse_stream(**CONVERSE)["stream"])
    reasoning = [
        e["contentBlockDelta"]["delta"]["reasoningContent"]
        for e in events
        if "contentBlockDelta" in e
    ]
    assert reasoning
    assert all("text" in r for r in reasoning)
    emu.inject(Fault.cut())
    with pytest.raises(ConnectionClosedError):
        bedrock_client.converse(**CONVERSE)


def test_bedrock_malformed(emu: Emulator, bedrock_client: Any) -> None:
    emu.inject(Fault.malformed())
    with pytest.raises(ChecksumMismatch):
        list(bedrock_client.converse_stream(**CONVERSE)["stream"])
    emu.inject(Fault.malformed())
    # botocore swallows an unparseable JSON body: the response has no members at all.
    assert set(bedrock_client.converse(**CONVERSE)) == {"ResponseMetadata"}


def test_bedrock_delay_per_event(emu: Emulator, bedrock_client: Any) -> None:
    emu.inject(Fault.slow(0.01))
    started = time.monotonic()
    events = list(bedrock_client.converse_stream(**CONVERSE)["stream"])
    assert time.monotonic() - started >= 0.01 * len(events)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("kind", ["stream_error", "cut", "malformed"])
async def test_a_broken_response_leaves_its_scripted_reply_for_the_next_request(
    emu: Emulator, retrying_anthropic_client: anthropic.AsyncAnthropic, kind: str, stream: bool
) -> None:
    """One scripted reply per *successful* request: the SDK's retry (or the caller's next
    request) after a fault gets the reply the broken response carried."""
    emu.script("anthropic", [Reply(text="FIRST"), Reply(text="SECOND")])
    emu.inject(
        {"stream_error": Fault.stream_error(), "cut": Fault.cut(), "malformed": Fault.malformed()}[
            kind
        ]
    )
    client = retrying_anthropic_client
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": "Hi"}],
    }
    texts: list[str] = []
    for _ in range(3):
        try:
            if stream:
                async with client.messages.stream(**request) as events:
                    message = await events.get_final_message()
            else:
                message = await client.messages.create(**request)
        except (anthropic.APIError, httpx2.HTTPError, json.JSONDecodeError):
            texts.append("(broken)")
            continue
        texts.append(message.content[0].text)  # type: ignore[union-attr]
    assert [t for t in texts if t != "(broken)"][:2] == ["FIRST", "SECOND"]
    assert texts.count("(broken)") == (1 if stream or kind == "malformed" else 0)
    assert emu.pending_faults == []
