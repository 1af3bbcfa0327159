"""Injected faults surface in google-genai (Gemini API and Vertex AI) as its own exceptions,
or as the transport error it lets through."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import errors, types

from tests.support.gemini import api_fixture, client_fixture  # noqa: F401 (fixtures)
from thinkagent.emulator import Emulator, Fault

MODEL = "gemini-3-pro-preview"
CONFIG = types.GenerateContentConfig(
    thinking_config=types.ThinkingConfig(include_thoughts=True),
)
PROMPT = "Tell me about the weather in Paris and London, and why it changes so often."


async def generate(client: genai.Client) -> types.GenerateContentResponse:
    return await client.aio.models.generate_content(model=MODEL, contents=PROMPT, config=CONFIG)


async def collect(client: genai.Client, seen: list[types.GenerateContentResponse]) -> None:
    async for chunk in await client.aio.models.generate_content_stream(
        model=MODEL, contents=PROMPT, config=CONFIG
    ):
        seen.append(chunk)


def parts_of(chunks: list[types.GenerateContentResponse]) -> list[types.Part]:
    out: list[types.Part] = []
    for chunk in chunks:
        assert chunk.candidates
        content = chunk.candidates[0].content
        assert content is not None
        out.extend(content.parts or [])
    return out


@pytest.mark.parametrize(
    ("status", "error_class", "code", "name"),
    [
        (429, errors.ClientError, 429, "RESOURCE_EXHAUSTED"),
        (500, errors.ServerError, 500, "INTERNAL"),
        (503, errors.ServerError, 503, "UNAVAILABLE"),
        (529, errors.ServerError, 503, "UNAVAILABLE"),
    ],
)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_http_errors(
    emu: Emulator,
    client: genai.Client,
    stream: bool,
    status: int,
    error_class: type[errors.APIError],
    code: int,
    name: str,
) -> None:
    emu.inject(Fault.http(status))
    with pytest.raises(error_class) as exc:
        if stream:
            await collect(client, [])
        else:
            await generate(client)
    assert exc.value.code == code
    assert exc.value.status == name
    assert exc.value.message
    assert emu.pending_faults == []


async def test_rate_limit_body_and_retry(emu: Emulator, gemini_client: genai.Client) -> None:
    emu.inject(Fault.rate_limited(retry_after=2, api="gemini"))
    with pytest.raises(errors.ClientError) as exc:  # retries are off by default
        await generate(gemini_client)
    details: Any = exc.value.details
    assert details["error"]["details"] == [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}
    ]
    assert exc.value.message is not None
    assert exc.value.message.startswith("You exceeded your current quota")
    emu.inject(Fault.rate_limited(api="gemini"))
    retrying = emu.gemini_client(
        http_options=types.HttpOptions(
            retry_options=types.HttpRetryOptions(attempts=2, initial_delay=0.01, max_delay=0.01)
        )
    )
    started = time.monotonic()
    response = await generate(retrying)
    await retrying.aio.aclose()
    assert response.candidates
    assert len(emu.requests) == 3
    assert time.monotonic() - started < 1.0


async def test_vertex_rate_limit_message(emu: Emulator, vertex_client: genai.Client) -> None:
    emu.inject(Fault.rate_limited(api="vertex"))
    with pytest.raises(errors.ClientError) as exc:
        await generate(vertex_client)
    assert exc.value.message is not None
    assert exc.value.message.startswith("Resource exhausted. Please try again later.")


async def test_error_event_mid_stream(emu: Emulator, client: genai.Client) -> None:
    emu.inject(Fault.stream_error(503))
    seen: list[types.GenerateContentResponse] = []
    with pytest.raises(errors.ServerError) as exc:
        await collect(client, seen)
    assert exc.value.code == 503
    assert exc.value.status == "UNAVAILABLE"
    parts = parts_of(seen)
    assert parts
    assert all(p.thought for p in parts)
    emu.inject(Fault.stream_error(429, "slow down", after=1))
    seen = []
    with pytest.raises(errors.ClientError) as client_exc:
        await collect(client, seen)
    assert client_exc.value.code == 429
    assert client_exc.value.message == "slow down"
    assert len(seen) == 1
    emu.inject(Fault.stream_error())  # on a JSON response: an HTTP error
    with pytest.raises(errors.ServerError):
        await generate(client)


async def test_connection_cut(emu: Emulator, client: genai.Client) -> None:
    emu.inject(Fault.cut())
    seen: list[types.GenerateContentResponse] = []
    with pytest.raises(httpx2.RemoteProtocolError):  # the transport error the SDK lets through
        await collect(client, seen)
    parts = parts_of(seen)
    assert parts  # cut in the middle of the thought summary, before any signature
    assert all(p.thought and not p.thought_signature for p in parts)
    emu.inject(Fault.cut())
    with pytest.raises(httpx2.RemoteProtocolError):
        await generate(client)


async def test_malformed_bodies(emu: Emulator, client: genai.Client) -> None:
    emu.inject(Fault.malformed())
    with pytest.raises(errors.UnknownApiResponseError):
        await collect(client, [])
    emu.inject(Fault.malformed())
    with pytest.raises(json.JSONDecodeError):  # a non-streamed body: the decoder's own error
        await generate(client)


async def test_delay_per_chunk(emu: Emulator, client: genai.Client) -> None:
    emu.inject(Fault.slow(0.01))
    stamps: list[float] = []
    async for _ in await client.aio.models.generate_content_stream(
        model=MODEL, contents=PROMPT, config=CONFIG
    ):
        stamps.append(time.monotonic())
    assert len(stamps) > 3
    assert stamps[-1] - stamps[0] >= 0.008 * (len(stamps) - 1)
    emu.inject(Fault.slow(0.05))
    started = time.monotonic()
    await generate(client)
    assert time.monotonic() - started >= 0.05


async def test_faults_are_queued_per_api(
    emu: Emulator, gemini_client: genai.Client, vertex_client: genai.Client
) -> None:
    emu.inject(Fault.http(500, api="vertex"))
    emu.inject(Fault.http(400, "bad luck", api="gemini"))
    with pytest.raises(errors.ClientError) as exc:
        await generate(gemini_client)
    assert exc.value.details == {
        "error": {"code": 400, "message": "bad luck", "status": "INVALID_ARGUMENT"}
    }
    assert emu.pending_faults == [Fault.http(500, api="vertex")]
    assert (await generate(gemini_client)).candidates
    with pytest.raises(errors.ServerError):
        await generate(vertex_client)
