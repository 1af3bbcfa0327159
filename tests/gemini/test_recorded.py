"""Conformance with a real five-turn Gemini 3 exchange (`recorded/`): each recorded response,
parsed by the SDK, becomes a message with every signature on its part; each request we build
from those messages replays the model turns exactly as the real service accepted them."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.support import recorded
from tests.support.gemini import MockGemini
from thinkagent import Message, ToolCall, ToolResult, dump_messages, load_messages
from thinkagent.providers.base import ModelRequest, ModelResponse, ToolDefinition
from thinkagent.providers.gemini import GeminiModel

MODEL = "gemini-3-flash-preview"


def interactions() -> list[dict[str, Any]]:
    return recorded.interactions("test_google_instructions_only_with_tool_calls.yaml")


INTERACTIONS = interactions()
FIRST = INTERACTIONS[0]["request"]["parsed_body"]
INSTRUCTIONS = FIRST["systemInstruction"]["parts"][0]["text"]
TOOLS = [
    ToolDefinition(
        name=d["name"], description=d["description"], parameters=d["parameters_json_schema"]
    )
    for d in FIRST["tools"][0]["functionDeclarations"]
]


def signature_bytes(value: str | None) -> bytes | None:
    """A signature in either base64 alphabet, as bytes (the only normalisation allowed)."""
    if value is None:
        return None
    return base64.b64decode(value.replace("-", "+").replace("_", "/") + "=" * (-len(value) % 4))


def wire_parts(content: dict[str, Any]) -> list[tuple[str, Any, bytes | None]]:
    """A model turn part for part: (kind, what it says, signature bytes). Function call ids are
    left out: the recorded client generated its own (`pyd_ai_...`), we send none for calls
    the service sent without one."""
    out: list[tuple[str, Any, bytes | None]] = []
    for part in content["parts"]:
        signature = signature_bytes(part.get("thoughtSignature"))
        if "functionCall" in part:
            call = part["functionCall"]
            out.append(("call", (call["name"], call.get("args") or {}), signature))
        elif part.get("thought"):
            out.append(("thought", part.get("text", ""), signature))
        else:
            out.append(("text", part.get("text", ""), signature))
    return out


def results_for(turn: int) -> list[str]:
    """The tool results the recorded client sent after model turn `turn`, in order."""
    request = INTERACTIONS[turn + 1]["request"]["parsed_body"]
    return [
        p["functionResponse"]["response"]["return_value"] for p in request["contents"][-1]["parts"]
    ]


async def replay_all() -> tuple[MockGemini, list[Message]]:
    """Drive the adapter through the recording: each request answered with the recorded
    response, each model turn answered with the recorded tool results."""
    mock = MockGemini(*(i["response"]["parsed_body"] for i in INTERACTIONS))
    model = GeminiModel(MODEL, client=mock.client)
    messages: list[Message] = [Message.user("")]
    for turn in range(len(INTERACTIONS)):
        reply = await model.request(
            ModelRequest(messages=messages, tools=TOOLS, instructions=INSTRUCTIONS)
        )
        messages.append(reply.message)
        if turn + 1 < len(INTERACTIONS):
            values = results_for(turn)
            calls = reply.message.tool_calls
            assert len(calls) == len(values)
            messages.append(
                Message.user_results(
                    ToolResult(call_id=c.id, name=c.name, content=v)
                    for c, v in zip(calls, values, strict=True)
                )
            )
    return mock, messages


async def test_every_recorded_response_parses_with_each_signature_on_its_part() -> None:
    _, messages = await replay_all()
    replies = [m for m in messages if m.role == "assistant"]
    assert len(replies) == len(INTERACTIONS) == 5
    for reply, interaction in zip(replies, INTERACTIONS, strict=True):
        body = interaction["response"]["parsed_body"]
        content = body["candidates"][0]["content"]
        assert len(reply.parts) == len(content["parts"])
        for part, raw in zip(reply.parts, content["parts"], strict=True):
            assert isinstance(part, ToolCall)
            assert part.name == raw["functionCall"]["name"]
            assert part.arguments == raw["functionCall"].get("args", {})
            recorded = raw.get("thoughtSignature")
            assert part.signature == recorded  # the recording is standard base64 already
        assert reply.id == body["responseId"]
        usage = body["usageMetadata"]
        assert reply.usage is not None
        assert reply.usage.thinking_tokens == usage["thoughtsTokenCount"]
        assert (
            reply.usage.output_tokens == usage["candidatesTokenCount"] + usage["thoughtsTokenCount"]
        )
        assert reply.usage.input_tokens == usage["promptTokenCount"]
        assert reply.finish_reason == "tool_call"
        assert reply.scope == "gemini"
    first = replies[0]
    assert [c.signature is not None for c in first.tool_calls] == [True, False, False]


@pytest.mark.parametrize("turn", range(1, 5))
async def test_each_request_replays_the_model_turns_as_the_service_accepted_them(
    turn: int,
) -> None:
    mock, _ = await replay_all()
    ours = mock.requests[turn]["contents"]
    recorded = INTERACTIONS[turn]["request"]["parsed_body"]["contents"]
    assert [c["role"] for c in ours] == [c["role"] for c in recorded]
    for mine, theirs in zip(ours, recorded, strict=True):
        if theirs["role"] == "model":
            assert wire_parts(mine) == wire_parts(theirs)
            assert all("id" not in p["functionCall"] for p in mine["parts"])
        else:
            names = [p.get("functionResponse", {}).get("name") for p in theirs["parts"]]
            assert [p.get("functionResponse", {}).get("name") for p in mine["parts"]] == names


async def test_the_whole_request_matches_apart_from_client_conventions() -> None:
    """Instructions, tools and the replayed turns are what the service accepted; the only
    differences are the recorded client's own ids, result key and forced tool mode."""
    mock, _ = await replay_all()
    ours = mock.requests[-1]
    theirs = INTERACTIONS[-1]["request"]["parsed_body"]
    assert ours["systemInstruction"] == theirs["systemInstruction"]
    assert ours["tools"] == theirs["tools"]
    assert (
        ours["contents"][0] == theirs["contents"][0]
    )  # the empty prompt of an instructions-only run
    size_ours = len(json.dumps(ours["contents"]))
    size_theirs = len(json.dumps(theirs["contents"]))
    assert size_ours < size_theirs  # no client-made ids, nothing added


async def test_the_parsed_history_survives_json_and_replays_byte_for_byte() -> None:
    mock, messages = await replay_all()
    again = load_messages(dump_messages(messages))
    assert again == messages
    replay = MockGemini(
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
            ]
        }
    )
    model = GeminiModel(MODEL, client=replay.client)
    await model.request(ModelRequest(messages=again, tools=TOOLS, instructions=INSTRUCTIONS))
    assert replay.requests[0]["contents"][:-1] == mock.requests[-1]["contents"]


async def test_a_recorded_response_streamed_in_one_chunk_reads_the_same() -> None:
    for interaction in INTERACTIONS:
        body = interaction["response"]["parsed_body"]
        mock = MockGemini(body, [body])
        model = GeminiModel(MODEL, client=mock.client)
        request = ModelRequest(messages=[Message.user("")], tools=TOOLS)
        plain = (await model.request(request)).message
        streamed = None
        async for event in model.stream(request):
            if isinstance(event, ModelResponse):
                streamed = event.message
        assert streamed == plain


def test_the_recording_is_function_calls_only() -> None:
    """Guard for the assumptions above (text and thought parts are covered in test_mapping)."""
    for interaction in INTERACTIONS:
        parts = interaction["response"]["parsed_body"]["candidates"][0]["content"]["parts"]
        assert all("functionCall" in p for p in parts)
