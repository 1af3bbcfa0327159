"""Azure OpenAI's Chat Completions stream, as Azure sends it, through the official SDK: a
prompt-filter chunk first (empty `id` and `model`, no choices), content-filter chunks whose
choice has no `delta`, the model only on the content chunks. The emulator does not produce
these chunks, so a small local server replays them (and the equivalent JSON body)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest

from thinkagent import Message, ModelRequest, ModelResponse, TextDelta, ToolDefinition
from thinkagent.providers.openai import OpenAIChatModel

ID = "chatcmpl-AzureStream01"
MODEL = "o4-mini-2025-04-16"
DEPLOYMENT = "my-o4-mini"
FILTERS = {
    name: {"filtered": False, "severity": "safe"}
    for name in ("hate", "self_harm", "sexual", "violence")
}
USAGE = {
    "prompt_tokens": 40,
    "completion_tokens": 90,
    "total_tokens": 130,
    "completion_tokens_details": {"reasoning_tokens": 64},
}
ARGUMENTS = '{"city": "Paris"}'
WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "choices": choices,
        "created": 1754000000,
        "id": ID,
        "model": MODEL,
        "object": "chat.completion.chunk",
        "system_fingerprint": "fp_azure",
        **extra,
    }


def delta_choice(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "content_filter_results": FILTERS if delta.get("content") else {},
        "delta": delta,
        "finish_reason": finish,
        "index": 0,
        "logprobs": None,
    }


STREAM: list[dict[str, Any]] = [
    # the prompt-filter chunk: no id, no model, no choices
    {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": FILTERS}],
    },
    chunk([delta_choice({"content": "", "refusal": None, "role": "assistant"})]),
    chunk([delta_choice({"content": "Checking the weather."})]),
    chunk(
        [
            delta_choice(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_az1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": ""},
                        }
                    ]
                }
            )
        ]
    ),
    chunk([delta_choice({"tool_calls": [{"index": 0, "function": {"arguments": ARGUMENTS}}]})]),
    chunk([delta_choice({}, "tool_calls")]),
    # an asynchronous content-filter chunk: a choice without a delta, no id, no model
    {
        "choices": [
            {
                "content_filter_offsets": {
                    "check_offset": 0,
                    "start_offset": 0,
                    "end_offset": 21,
                },
                "content_filter_results": FILTERS,
                "finish_reason": None,
                "index": 0,
            }
        ],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
    },
    chunk([], usage=USAGE),
]

BODY: dict[str, Any] = {
    "choices": [
        {
            "content_filter_results": FILTERS,
            "finish_reason": "tool_calls",
            "index": 0,
            "logprobs": None,
            "message": {
                "content": "Checking the weather.",
                "refusal": None,
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "call_az1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": ARGUMENTS},
                    }
                ],
            },
        }
    ],
    "created": 1754000000,
    "id": ID,
    "model": MODEL,
    "object": "chat.completion",
    "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": FILTERS}],
    "system_fingerprint": "fp_azure",
    "usage": USAGE,
}


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """One request per connection: the JSON body, or the stream when the request asks."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.decode("latin-1").split("\r\n"):
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    request = json.loads(await reader.readexactly(length))
    if request.get("stream"):
        payload = (
            b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in STREAM) + b"data: [DONE]\n\n"
        )
        kind = b"text/event-stream"
    else:
        payload = json.dumps(BODY).encode()
        kind = b"application/json"
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: "
        + kind
        + b"\r\ncontent-length: "
        + str(len(payload)).encode()
        + b"\r\nconnection: close\r\n\r\n"
        + payload
    )
    await writer.drain()
    writer.close()


@pytest.fixture
async def azure() -> AsyncIterator[openai.AsyncAzureOpenAI]:
    server = await asyncio.start_server(_serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = openai.AsyncAzureOpenAI(
        api_key="azure-test-key",
        api_version="2025-04-01-preview",
        azure_endpoint=f"http://127.0.0.1:{port}",
        max_retries=0,
    )
    yield client
    await client.close()
    server.close()
    await server.wait_closed()


async def test_an_azure_stream_equals_the_non_streamed_response(
    azure: openai.AsyncAzureOpenAI,
) -> None:
    model = OpenAIChatModel(DEPLOYMENT, client=azure)
    assert model.scope == "azure"
    request = ModelRequest([Message.user("What's the weather in Paris?")], tools=[WEATHER])
    expected = (await model.request(request)).message
    assert (expected.id, expected.model) == (ID, MODEL)

    events = [event async for event in model.stream(request)]
    final = events[-1]
    assert isinstance(final, ModelResponse)
    assert final.message == expected
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Checking the weather."]
    assert final.message.tool_calls[0].arguments == ARGUMENTS
    assert final.message.usage is not None and final.message.usage.thinking_tokens == 64
