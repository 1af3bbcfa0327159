"""Injected faults on the OpenAI wires surface in the openai SDK as its own exceptions."""

from __future__ import annotations

import json
import time
from typing import Any

import openai
import pytest

from thinkagent.emulator import Emulator, Fault

from .tools import CHAT_TOOLS, QUESTION, RESPONSES_TOOLS

CHAT: dict[str, Any] = {
    "model": "deepseek-reasoner",
    "messages": [{"role": "user", "content": QUESTION}],
    "tools": CHAT_TOOLS,
}
RESPONSES: dict[str, Any] = {
    "model": "gpt-5",
    "input": QUESTION,
    "tools": RESPONSES_TOOLS,
    "reasoning": {"effort": "medium", "summary": "auto"},
    "include": ["reasoning.encrypted_content"],
    "store": False,
}


async def chat_stream(client: openai.AsyncOpenAI, seen: list[Any]) -> None:
    async for chunk in await client.chat.completions.create(stream=True, **CHAT):
        seen.append(chunk)


async def responses_stream(client: openai.AsyncOpenAI, seen: list[Any]) -> None:
    async for event in await client.responses.create(stream=True, **RESPONSES):
        seen.append(event)


async def call(client: openai.AsyncOpenAI, api: str) -> Any:
    if api == "openai":
        return await client.chat.completions.create(**CHAT)
    return await client.responses.create(**RESPONSES)


APIS = ["openai", "openai-responses"]


@pytest.mark.parametrize("api", APIS)
async def test_429_is_retried_by_the_client_then_succeeds(emu: Emulator, api: str) -> None:
    emu.inject(Fault.rate_limited(api=api))
    client = emu.openai_client()  # default retries
    started = time.monotonic()
    reply = await call(client, api)
    await client.close()
    assert reply.id
    assert len(emu.requests) == 2
    assert time.monotonic() - started < 1.0  # retry-after-ms keeps the retry fast
    assert emu.pending_faults == []


@pytest.mark.parametrize("api", APIS)
async def test_429_without_retries_is_a_rate_limit_error(
    emu: Emulator, openai_client: openai.AsyncOpenAI, api: str
) -> None:
    emu.inject(Fault.rate_limited(retry_after=2))
    with pytest.raises(openai.RateLimitError) as exc:
        await call(openai_client, api)
    assert exc.value.code == "rate_limit_exceeded"
    assert exc.value.type == "requests"
    assert exc.value.response.headers["retry-after"] == "2"
    assert exc.value.response.headers["retry-after-ms"] == "2000"
    assert exc.value.request_id is not None
    assert exc.value.request_id.startswith("req_")


async def test_azure_429_has_the_azure_body(
    emu: Emulator, azure_client: openai.AsyncAzureOpenAI
) -> None:
    emu.inject(Fault.rate_limited(retry_after=3))
    with pytest.raises(openai.RateLimitError) as exc:
        await azure_client.chat.completions.create(**CHAT)
    assert exc.value.code == "429"
    assert exc.value.message.startswith(
        "Error code: 429 - Requests to the ChatCompletions_Create Operation under Azure OpenAI API version "
        "2025-04-01-preview have exceeded token rate limit"
    )
    assert "Please retry after 3 seconds." in exc.value.message


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("status", "seen_status", "message"),
    [
        (500, 500, "The server had an error while processing your request. Sorry about that!"),
        (503, 503, "The server is overloaded or not ready yet."),
        (529, 503, "The server is overloaded or not ready yet."),
    ],
)
async def test_server_errors(
    emu: Emulator,
    openai_client: openai.AsyncOpenAI,
    api: str,
    status: int,
    seen_status: int,
    message: str,
) -> None:
    emu.inject(Fault.http(status))
    with pytest.raises(openai.InternalServerError) as exc:
        await call(openai_client, api)
    assert exc.value.status_code == seen_status
    assert exc.value.type == "server_error"
    assert exc.value.message == f"Error code: {seen_status} - {message}"


async def test_custom_error_message(emu: Emulator, openai_client: openai.AsyncOpenAI) -> None:
    emu.inject(Fault.http(400, "bad luck"))
    with pytest.raises(openai.BadRequestError) as exc:
        await call(openai_client, "openai")
    assert exc.value.body == {
        "message": "bad luck",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }


async def test_chat_error_chunk_mid_stream(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    emu.inject(Fault.stream_error(429))
    seen: list[Any] = []
    with pytest.raises(openai.APIError) as exc:
        await chat_stream(openai_client, seen)
    assert not isinstance(exc.value, openai.APIStatusError)  # the HTTP status was 200
    assert exc.value.code == "rate_limit_exceeded"
    assert exc.value.message.startswith("Rate limit reached")
    assert seen
    assert all((c.choices[0].delta.model_extra or {}).get("reasoning_content") for c in seen)


async def test_responses_error_event_mid_stream(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    emu.inject(Fault.stream_error(500))
    seen: list[Any] = []
    with pytest.raises(openai.APIError) as exc:
        await responses_stream(openai_client, seen)
    assert not isinstance(exc.value, openai.APIStatusError)
    assert exc.value.type == "server_error"
    assert [e.type for e in seen][:2] == ["response.created", "response.in_progress"]
    emu.inject(Fault.stream_error(500))
    with pytest.raises(openai.APIError):
        async with openai_client.responses.stream(**RESPONSES) as stream:
            await stream.get_final_response()


@pytest.mark.parametrize("after", [0, 3, 5])
async def test_responses_error_event_has_its_own_sequence_number(
    emu: Emulator, openai_client: openai.AsyncOpenAI, after: int
) -> None:
    """The in-stream ``error`` event is numbered by its position, like every other."""
    emu.inject(Fault.stream_error(500, after=after))
    numbers: list[tuple[str, int]] = []
    async with openai_client.responses.with_streaming_response.create(
        stream=True, **RESPONSES
    ) as response:
        async for line in response.iter_lines():
            if line.startswith("data: "):
                data = json.loads(line[len("data: ") :])
                numbers.append((data["type"], data["sequence_number"]))
    assert [n for _, n in numbers] == list(range(after + 1))
    assert numbers[-1] == ("error", after)


@pytest.mark.parametrize("api", APIS)
async def test_stream_error_on_a_json_body_is_an_http_error(
    emu: Emulator, openai_client: openai.AsyncOpenAI, api: str
) -> None:
    emu.inject(Fault.stream_error(500))
    with pytest.raises(openai.InternalServerError):
        await call(openai_client, api)


async def test_chat_cut_mid_reasoning(emu: Emulator, openai_client: openai.AsyncOpenAI) -> None:
    emu.inject(Fault.cut())
    seen: list[Any] = []
    with pytest.raises(openai.APIConnectionError):  # the SDK wraps the transport error
        await chat_stream(openai_client, seen)
    assert seen
    deltas = [c.choices[0].delta for c in seen]
    assert all((d.model_extra or {}).get("reasoning_content") for d in deltas)
    assert not any(d.tool_calls for d in deltas)


async def test_responses_cut_before_the_encrypted_content(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    emu.inject(Fault.cut())
    seen: list[Any] = []
    with pytest.raises(openai.APIConnectionError):
        await responses_stream(openai_client, seen)
    kinds = [e.type for e in seen]
    assert "response.reasoning_summary_text.delta" in kinds
    assert "response.output_item.done" not in kinds
    emu.inject(Fault.cut())
    with pytest.raises(openai.APIConnectionError):
        async with openai_client.responses.stream(**RESPONSES) as stream:
            await stream.get_final_response()


@pytest.mark.parametrize("api", APIS)
async def test_cut_json_body(emu: Emulator, openai_client: openai.AsyncOpenAI, api: str) -> None:
    emu.inject(Fault.cut())
    with pytest.raises(openai.APIConnectionError):
        await call(openai_client, api)
    emu.inject(Fault.cut())
    retrying = emu.openai_client()  # default retries: the cut is retried
    assert (await call(retrying, api)).id
    await retrying.close()


@pytest.mark.parametrize("api", APIS)
async def test_malformed_bodies(emu: Emulator, openai_client: openai.AsyncOpenAI, api: str) -> None:
    emu.inject(Fault.malformed())
    with pytest.raises(json.JSONDecodeError):  # the SDK lets the JSON decoder's error through
        await call(openai_client, api)
    emu.inject(Fault.malformed(after=3))
    with pytest.raises(json.JSONDecodeError):
        await (chat_stream if api == "openai" else responses_stream)(openai_client, [])


@pytest.mark.parametrize("api", APIS)
async def test_delay_per_chunk(emu: Emulator, openai_client: openai.AsyncOpenAI, api: str) -> None:
    emu.inject(Fault.slow(0.01))
    stamps: list[float] = []
    stream = (
        await openai_client.chat.completions.create(stream=True, **CHAT)
        if api == "openai"
        else await openai_client.responses.create(stream=True, **RESPONSES)
    )
    async for _ in stream:
        stamps.append(time.monotonic())
    assert len(stamps) > 10
    assert stamps[-1] - stamps[0] >= 0.008 * (len(stamps) - 1)
    emu.inject(Fault.slow(0.05))
    started = time.monotonic()
    await call(openai_client, api)
    assert time.monotonic() - started >= 0.05


async def test_faults_are_queued_per_api(emu: Emulator, openai_client: openai.AsyncOpenAI) -> None:
    emu.inject(Fault.http(500, api="openai-responses"))
    assert (await call(openai_client, "openai")).id
    with pytest.raises(openai.InternalServerError):
        await call(openai_client, "openai-responses")
    assert emu.pending_faults == []
