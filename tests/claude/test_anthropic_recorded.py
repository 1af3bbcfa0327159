"""Conformance on real recorded exchanges with the Anthropic API (see recorded/README.md):
the real response parses into the blocks with their exact proofs, and the next request we build
from it carries the same messages the real service accepted."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic import types as wire

from tests.support.claude import without_cache
from tests.support.recorded import interactions
from thinkagent import (
    Message,
    ModelRequest,
    ThinkingBlock,
    ToolDefinition,
    ToolResult,
    dump_messages,
    load_messages,
)
from thinkagent.providers.claude import AnthropicModel, ClaudeThinking


def model_for(request: dict[str, Any]) -> AnthropicModel:
    thinking = request["thinking"]
    return AnthropicModel(
        request["model"],
        client=object(),  # type: ignore[arg-type]
        thinking=ClaudeThinking.budget(thinking["budget_tokens"]),
        max_tokens=request["max_tokens"],
    )


def tools_of(request: dict[str, Any]) -> list[ToolDefinition]:
    return [
        ToolDefinition(t["name"], t.get("description", ""), t["input_schema"])
        for t in request.get("tools", [])
    ]


def test_tool_with_thinking() -> None:
    first, second = interactions("test_anthropic_tool_with_thinking.yaml")
    request = first["request"]["parsed_body"]
    response = first["response"]["parsed_body"]
    model = model_for(request)

    message = model.parse_response(wire.Message.model_validate(response)).message
    real = response["content"]
    assert message.parts[0] == ThinkingBlock.signed(real[0]["thinking"], real[0]["signature"])
    assert len(real[0]["signature"]) > 200
    assert [p.kind for p in message.parts] == ["thinking", "text", "tool_call"]
    call = message.tool_calls[0]
    assert (call.id, call.name, call.arguments) == (real[2]["id"], "get_user_country", {})
    assert message.id == response["id"] and message.model == "claude-sonnet-4-20250514"
    assert message.finish_reason == "tool_call"
    assert message.usage is not None and message.usage.input_tokens == 398

    # persisted and loaded back, then replayed with the tool result the recording sent
    message = load_messages(dump_messages([message]))[0]
    accepted = second["request"]["parsed_body"]
    result = accepted["messages"][2]["content"][0]
    history = [
        Message.user(request["messages"][0]["content"][0]["text"]),
        message,
        Message.user_results(
            [ToolResult(call_id=result["tool_use_id"], name=call.name, content=result["content"])]
        ),
    ]
    sent = model.build_request(ModelRequest(history, tools=tools_of(request)))
    # the accepted request, with cache breakpoints at the end of each user turn
    assert [m["content"][-1].get("cache_control") for m in sent["messages"]] == [
        {"type": "ephemeral"},
        None,
        {"type": "ephemeral"},
    ]
    params = without_cache(sent)
    assert params["messages"][1] == accepted["messages"][1]  # the assistant turn, exactly
    assert params["messages"] == accepted["messages"]
    assert params["thinking"] == accepted["thinking"]
    # (an empty description is left out rather than sent as "")
    assert [(t["name"], t["input_schema"]) for t in params["tools"]] == [
        (t["name"], t["input_schema"]) for t in accepted["tools"]
    ]


def test_redacted_thinking() -> None:
    first, second = interactions("test_anthropic_model_thinking_part_redacted.yaml")
    request = first["request"]["parsed_body"]
    response = first["response"]["parsed_body"]
    model = model_for(request)

    message = model.parse_response(wire.Message.model_validate(response)).message
    data = response["content"][0]["data"]
    assert message.parts[0] == ThinkingBlock.redacted_payload(data)
    assert message.parts[0].text == "" and message.parts[0].signature is None
    assert message.text == response["content"][1]["text"]

    accepted = second["request"]["parsed_body"]
    history = [
        Message.user(request["messages"][0]["content"][0]["text"]),
        load_messages(dump_messages([message]))[0],
        Message.user(accepted["messages"][2]["content"][0]["text"]),
    ]
    params = without_cache(model.build_request(ModelRequest(history)))
    assert params["messages"] == accepted["messages"]
    assert params["thinking"] == accepted["thinking"]
    assert params["max_tokens"] == accepted["max_tokens"]


@pytest.mark.parametrize(
    "name",
    ["test_anthropic_tool_with_thinking.yaml", "test_anthropic_model_thinking_part_redacted.yaml"],
)
def test_every_recorded_response_parses(name: str) -> None:
    for interaction in interactions(name):
        response = interaction["response"]["parsed_body"]
        message = (
            AnthropicModel("claude-sonnet-4-5", client=object())
            .parse_response(  # type: ignore[arg-type]
                wire.Message.model_validate(response)
            )
            .message
        )
        assert len(message.parts) == len(response["content"])
        assert message.usage is not None
        assert message.usage.input_tokens == response["usage"]["input_tokens"]
