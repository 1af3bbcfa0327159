"""Conformance with real recorded exchanges (`recorded/`): DeepSeek Chat Completions with
`reasoning_content` and a Responses exchange with an encrypted reasoning item. Each recorded
response, parsed by the SDK's own types, becomes a message with its reasoning exact; the next
request we build from it replays it the way the real service accepted it; and the same
response streamed gives the same message."""

from __future__ import annotations

from typing import Any

import pytest
from openai._models import construct_type
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response

from tests.support.openai import FakeClient, FakeStream, response_events, stream_events
from tests.support.recorded import interactions
from thinkagent import (
    Message,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolDefinition,
    ToolResult,
    Usage,
    dump_messages,
    load_messages,
)
from thinkagent.providers.openai import OpenAIChatModel, OpenAIResponsesModel, OpenAIThinking

DEEPSEEK = interactions("test_deepseek_deferred_capability_with_thinking.yaml")
RESPONSES = interactions("test_openai_responses_thinking_with_tool_calls.yaml")


def roundtrip(messages: list[Message]) -> list[Message]:
    """Through JSON and back, as a persisted run would be."""
    loaded = load_messages(dump_messages(messages))
    assert loaded == messages
    return loaded


# --- DeepSeek --------------------------------------------------------------------------------


def deepseek_model() -> OpenAIChatModel:
    return OpenAIChatModel("deepseek-reasoner", client=FakeClient(), dialect="deepseek")  # type: ignore[arg-type]


def deepseek_message(n: int) -> Message:
    body = DEEPSEEK[n]["response"]["parsed_body"]
    return deepseek_model().parse_response(ChatCompletion.model_validate(body)).message


def test_deepseek_responses_parse_exactly() -> None:
    for n, interaction in enumerate(DEEPSEEK):
        recorded = interaction["response"]["parsed_body"]["choices"][0]["message"]
        message = deepseek_message(n)
        assert message.scope == "deepseek"
        (block,) = message.thinking
        assert block == ThinkingBlock.plain(recorded["reasoning_content"])
        assert message.text == recorded["content"]
        assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
            (c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in recorded.get("tool_calls") or []
        ]
        assert isinstance(message.parts[0], ThinkingBlock)  # reasoning first
    first = deepseek_message(0)
    assert first.usage == Usage(
        input_tokens=563, output_tokens=116, thinking_tokens=60, cache_read_tokens=512
    )
    assert first.finish_reason == "tool_call" and first.model == "deepseek-v4-flash"
    assert first.id == "0841b0a3-0321-47fa-a8a5-f08e5a4b3cb3"
    assert deepseek_message(2).finish_reason == "stop"


def test_deepseek_next_requests_replay_reasoning_as_accepted() -> None:
    """Requests 2 and 3 carried the assistant turns of responses 1 and 2, with their
    `reasoning_content`, and the tool results; ours are the same, key for key."""
    first, second = roundtrip([deepseek_message(0), deepseek_message(1)])
    request_2 = DEEPSEEK[1]["request"]["parsed_body"]["messages"]
    request_3 = DEEPSEEK[2]["request"]["parsed_body"]["messages"]
    history = [
        Message.user("My guess is 4"),
        first,
        Message.user_results(
            [ToolResult(call_id=first.tool_calls[0].id, name="load_capability", content="{}")]
        ),
    ]
    sent = deepseek_model().build_messages(history)
    assert sent == [request_2[2], request_2[3], request_2[4]]
    # Between the two the recorded client inserted a turn of its own making (a call it
    # synthesised, with an empty `reasoning_content`): the model's own turns are compared.
    outputs = [m["content"] for m in request_3[8:10]]  # what the recorded tools returned
    history += [
        second,
        Message.user_results(
            ToolResult(call_id=call.id, name=call.name, content=output)
            for call, output in zip(second.tool_calls, outputs, strict=True)
        ),
    ]
    sent = deepseek_model().build_messages(history)
    assert sent[1:3] == request_3[3:5]
    assert sent[3:] == request_3[7:]


@pytest.mark.parametrize("n", range(len(DEEPSEEK)))
async def test_deepseek_streamed_equals_non_streamed(n: int) -> None:
    body = DEEPSEEK[n]["response"]["parsed_body"]
    message = body["choices"][0]["message"]
    base = {
        "id": body["id"],
        "object": "chat.completion.chunk",
        "created": body["created"],
        "model": body["model"],
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> ChatCompletionChunk:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return ChatCompletionChunk.model_validate({**base, "choices": [choice]})

    def pieces(text: str, size: int) -> list[str]:
        return [text[i : i + size] for i in range(0, len(text), size)]

    events = [chunk({"role": "assistant", "content": None, "reasoning_content": ""})]
    events += [chunk({"reasoning_content": p}) for p in pieces(message["reasoning_content"], 9)]
    events += [chunk({"content": p}) for p in pieces(message["content"], 5)]
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        opening = {"name": function["name"], "arguments": ""}
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {"index": index, "id": call["id"], "type": "function", "function": opening}
                    ]
                }
            )
        )
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
            for p in pieces(function["arguments"], 4)
        ]
    events.append(chunk({}, body["choices"][0]["finish_reason"]))
    events.append(
        ChatCompletionChunk.model_validate({**base, "choices": [], "usage": body["usage"]})
    )
    chat = deepseek_model()
    chat.client.replies.append(FakeStream(events))  # type: ignore[attr-defined]
    out = [e async for e in chat.stream(ModelRequest(messages=[Message.user("q")]))]
    assert isinstance(out[-1], ModelResponse)
    assert out[-1].message == deepseek_message(n)


# --- Responses -------------------------------------------------------------------------------


def parse_response(body: dict[str, Any]) -> Response:
    """The body as the SDK's client reads it (leniently: the recording predates the
    `cache_write_tokens` usage field the installed SDK's model declares required)."""
    return construct_type(type_=Response, value=body)  # type: ignore[no-any-return]


def responses_model() -> OpenAIResponsesModel:
    client = FakeClient()
    client.base_url = "https://api.openai.com/v1"  # where the recording was made
    return OpenAIResponsesModel(
        "gpt-5", client=client, thinking=OpenAIThinking(effort="low", summary="detailed")
    )  # type: ignore[arg-type]


def responses_message(n: int) -> Message:
    return (
        responses_model()
        .parse_response(parse_response(RESPONSES[n]["response"]["parsed_body"]))
        .message
    )


def test_responses_output_parses_exactly() -> None:
    recorded = RESPONSES[0]["response"]["parsed_body"]["output"]
    message = responses_message(0)
    block, call = message.parts
    assert isinstance(block, ThinkingBlock) and isinstance(call, ToolCall)
    assert block.id == recorded[0]["id"]
    assert block.signature == recorded[0]["encrypted_content"]
    assert block.text == "\n\n".join(s["text"] for s in recorded[0]["summary"])
    assert block.provider_details == {"summary": recorded[0]["summary"]}
    assert (call.id, call.name, call.arguments) == (
        recorded[1]["call_id"],
        recorded[1]["name"],
        recorded[1]["arguments"],
    )
    assert call.provider_details == {"item_id": recorded[1]["id"], "reasoning_id": block.id}
    assert message.usage == Usage(input_tokens=124, output_tokens=1926, thinking_tokens=1792)
    answer = responses_message(1)
    (text,) = answer.parts
    final = RESPONSES[1]["response"]["parsed_body"]["output"][0]
    assert text == TextPart(
        text=final["content"][0]["text"], provider_details={"item_id": final["id"]}
    )
    assert (
        answer.finish_reason == "stop"
        and answer.usage is not None
        and answer.usage.cache_read_tokens == 2048
    )


def test_responses_next_request_replays_the_reasoning_item_as_accepted() -> None:
    first = RESPONSES[0]["request"]["parsed_body"]
    second = RESPONSES[1]["request"]["parsed_body"]
    (turn,) = roundtrip([responses_message(0)])
    call = turn.tool_calls[0]
    history = [
        Message.user(first["input"][0]["content"]),
        turn,
        Message.user_results([ToolResult(call_id=call.id, name=call.name, content="plan updated")]),
    ]
    tools = [
        ToolDefinition(name=t["name"], description="", parameters=t["parameters"])
        for t in first["tools"]
    ]
    params = responses_model().build_request(
        ModelRequest(messages=history, tools=tools, instructions=first["instructions"])
    )
    assert params["input"] == second["input"]
    for key in ("model", "include", "instructions", "reasoning"):
        assert params[key] == second[key], key


@pytest.mark.parametrize("n", range(len(RESPONSES)))
async def test_responses_streamed_equals_non_streamed(n: int) -> None:
    body = RESPONSES[n]["response"]["parsed_body"]
    chosen = responses_model()
    chosen.client.replies.append(FakeStream(stream_events(response_events(body, chunk=11))))  # type: ignore[attr-defined]
    out = [e async for e in chosen.stream(ModelRequest(messages=[Message.user("q")]))]
    assert isinstance(out[-1], ModelResponse)
    assert out[-1].message == responses_message(n)
