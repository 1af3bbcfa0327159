"""The Anthropic translation (no network): SDK responses to messages, the request parameters
besides the replayed history (`test_replay.py` has that, for both wires), SDK errors to
`ProviderError`."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import pytest
from anthropic import types as wire

from tests.support.claude import without_cache
from thinkagent import (
    Message,
    ModelRequest,
    ProviderError,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolDefinition,
    ToolResult,
    Usage,
)
from thinkagent.providers.claude import AnthropicModel, ClaudeThinking

WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def model(**kw: Any) -> AnthropicModel:
    kw.setdefault("thinking", ClaudeThinking.adaptive())
    return AnthropicModel(kw.pop("name", "claude-sonnet-4-6"), client=object(), **kw)  # type: ignore[arg-type]


def sdk_message(content: list[dict[str, Any]], **kw: Any) -> wire.Message:
    body = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6-20260101",
        "content": content,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 40},
        **kw,
    }
    return wire.Message.model_validate(body)


def test_response_blocks_become_parts_in_provider_order() -> None:
    message = sdk_message(
        [
            {"type": "thinking", "thinking": "Let me see.", "signature": "EqQBsig=="},
            {"type": "redacted_thinking", "data": "EmwKAhgBredacted=="},
            {"type": "text", "text": "Checking."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
            {"type": "thinking", "thinking": "", "signature": "ErUBomitted=="},
        ],
        usage={
            "input_tokens": 10,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 20,
            "output_tokens": 40,
            "output_tokens_details": {"thinking_tokens": 25},
        },
    )
    result = model().parse_response(message).message
    assert result.parts == (
        ThinkingBlock.signed("Let me see.", "EqQBsig=="),
        ThinkingBlock.redacted_payload("EmwKAhgBredacted=="),
        TextPart(text="Checking."),
        ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"}),
        ThinkingBlock.signed("", "ErUBomitted=="),
    )
    assert result.usage == Usage(
        input_tokens=130,
        output_tokens=40,
        thinking_tokens=25,
        cache_read_tokens=100,
        cache_write_tokens=20,
    )
    assert (result.scope, result.model, result.id) == (
        "anthropic",
        "claude-sonnet-4-6-20260101",
        "msg_01",
    )
    assert result.finish_reason == "tool_call"
    assert result.provider_details == {"finish_reason": "tool_use"}


def test_finish_reason_keeps_the_raw_value_and_stop_sequence() -> None:
    message = sdk_message(
        [{"type": "text", "text": "one, two"}], stop_reason="stop_sequence", stop_sequence="three"
    )
    result = model().parse_response(message).message
    assert result.finish_reason == "stop"
    assert result.provider_details == {"finish_reason": "stop_sequence", "stop_sequence": "three"}
    refusal = model().parse_response(sdk_message([], stop_reason="refusal")).message
    assert refusal.finish_reason == "refusal"
    assert refusal.usage == Usage(input_tokens=10, output_tokens=40)


# --- request building --------------------------------------------------------------------------

SIGNED = ThinkingBlock.signed("I should call get_weather.", "EqQBCkYIsig==")
CALL = ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"})
RESULT = ToolResult(call_id="toolu_1", name="get_weather", content="sunny")


def history(assistant: Message, *more: Message) -> list[Message]:
    return [Message.user("Weather in Paris?"), assistant, Message.user_results([RESULT]), *more]


def turn(*parts: Any, scope: str | None = "anthropic") -> Message:
    return Message(role="assistant", parts=parts, scope=scope, model="claude-sonnet-4-6")


def test_a_request_with_history_and_tools() -> None:
    """What goes around the replayed history (`test_replay.py`): the user turns, the thinking
    configuration, the tools."""
    params = without_cache(
        model().build_request(
            ModelRequest(history(turn(SIGNED, TextPart(text="Checking."), CALL)), tools=[WEATHER])
        )
    )
    assert params["messages"][1]["content"][:1] == [
        {"type": "thinking", "thinking": SIGNED.text, "signature": SIGNED.signature}
    ]
    assert params["messages"][0] == {
        "role": "user",
        "content": [{"type": "text", "text": "Weather in Paris?"}],
    }
    assert params["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny", "is_error": False}
        ],
    }
    assert params["thinking"] == {"type": "adaptive"}
    assert params["tools"] == [
        {
            "name": "get_weather",
            "input_schema": WEATHER.parameters,
            "description": "Current weather for a city.",
        }
    ]
    assert "tool_choice" not in params


def test_tool_results_go_first_with_their_error_flag() -> None:
    failed = ToolResult(call_id="toolu_1", name="get_weather", content={"error": 1}, is_error=True)
    messages = [
        Message.user("Weather?"),
        turn(SIGNED, CALL),
        Message(role="user", parts=(TextPart(text="Hurry."), failed)),
    ]
    content = without_cache(model().build_request(ModelRequest(messages)))["messages"][2]["content"]
    assert content == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": '{"error": 1}',
            "is_error": True,
        },
        {"type": "text", "text": "Hurry."},
    ]


def test_settings_map_to_the_request() -> None:
    m = model(
        effort="high",
        extra_body={"metadata": {"user_id": "u1"}},
        extra_headers={"anthropic-beta": "interleaved-thinking-2025-05-14"},
        settings={"max_tokens": 5000, "extra_headers": {"x-a": "1"}},
    )
    params = m.build_request(
        ModelRequest(
            [Message.user("Hi")],
            tools=[WEATHER],
            instructions="Be terse.",
            settings={
                "temperature": 1.0,
                "top_p": 0.9,
                "stop_sequences": ["END"],
                "tool_choice": "none",
                "parallel_tool_calls": False,
                "timeout": 12.5,
                "extra_headers": {"x-b": "2"},
                "extra_body": {"service_tier": "auto"},
                "prompt_cache": False,
            },
        )
    )
    assert params["max_tokens"] == 5000
    assert params["system"] == "Be terse."
    assert params["output_config"] == {"effort": "high"}
    assert params["stop_sequences"] == ["END"]
    assert params["tool_choice"] == {"type": "none"}
    assert params["timeout"] == 12.5
    assert params["extra_body"] == {
        "metadata": {"user_id": "u1"},
        "service_tier": "auto",
        "temperature": 1.0,
        "top_p": 0.9,
    }
    assert params["extra_headers"] == {
        "anthropic-beta": "interleaved-thinking-2025-05-14",
        "x-a": "1",
        "x-b": "2",
    }


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        ("auto", None, {"type": "auto"}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
        ("get_weather", None, {"type": "tool", "name": "get_weather"}),
    ],
)
def test_tool_choice_without_thinking(
    choice: str | None, parallel: bool | None, expected: dict[str, Any]
) -> None:
    settings: dict[str, Any] = {}
    if choice is not None:
        settings["tool_choice"] = choice
    if parallel is not None:
        settings["parallel_tool_calls"] = parallel
    params = model(thinking=ClaudeThinking.disabled()).build_request(
        ModelRequest([Message.user("Hi")], tools=[WEATHER], settings=settings)  # type: ignore[arg-type]
    )
    assert params["tool_choice"] == expected


# --- errors ------------------------------------------------------------------------------------


def status_error(status: int, error_type: str, message: str) -> anthropic.APIStatusError:
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    response = httpx2.Response(
        status, json=body, request=httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    )
    return anthropic.AsyncAnthropic(api_key="x")._make_status_error(  # pyright: ignore[reportPrivateUsage]
        f"Error code: {status}", body=body, response=response
    )


@pytest.mark.parametrize(
    ("status", "error_type", "retryable"),
    [
        (400, "invalid_request_error", False),
        (401, "authentication_error", False),
        (408, "timeout_error", True),
        (409, "invalid_request_error", True),
        (429, "rate_limit_error", True),
        (500, "api_error", True),
        (529, "overloaded_error", True),
        (200, "overloaded_error", True),  # an error event in a 200 stream
        (200, "invalid_request_error", False),
    ],
)
def test_status_errors(status: int, error_type: str, retryable: bool) -> None:
    error = model().map_error(status_error(status, error_type, "the provider's words"))
    assert isinstance(error, ProviderError)
    assert error.message == "the provider's words"
    assert error.status == (None if status == 200 else status)
    assert error.retryable is retryable
    assert error.error_type == error_type
    assert error.scope == "anthropic"


def test_connection_errors_are_retryable() -> None:
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    timeout = model().map_error(anthropic.APITimeoutError(request=request))
    assert isinstance(timeout, ProviderError)
    assert (timeout.retryable, timeout.status, timeout.error_type) == (True, None, "timeout")
    connection = model().map_error(anthropic.APIConnectionError(request=request))
    assert isinstance(connection, ProviderError)
    assert (connection.retryable, connection.error_type) == (True, "connection_error")
