"""The pure translation: SDK responses to messages, histories to request parameters, SDK
errors to `ProviderError` (no network)."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import pytest
from anthropic import types as wire

from thinkagent import (
    ConfigurationError,
    HistoryError,
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
from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking, provider_error

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
    assert refusal.finish_reason == "content_filter"
    assert refusal.usage == Usage(input_tokens=10, output_tokens=40)


# --- request building --------------------------------------------------------------------------

SIGNED = ThinkingBlock.signed("I should call get_weather.", "EqQBCkYIsig==")
REDACTED = ThinkingBlock.redacted_payload("EmwKAhgBEgy3va3p")
CALL = ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"})
RESULT = ToolResult(call_id="toolu_1", name="get_weather", content="sunny")


def history(assistant: Message, *more: Message) -> list[Message]:
    return [Message.user("Weather in Paris?"), assistant, Message.user_results([RESULT]), *more]


def finished(assistant: Message) -> list[Message]:
    """`history(assistant)` with the turn finished (answered, then a new prompt): its tool loop
    may come from anywhere, Claude only verifies the current one."""
    answer = Message(
        role="assistant",
        parts=(TextPart(text="Sunny in Paris."),),
        scope=assistant.scope,
        model="claude-sonnet-4-6",
    )
    return history(assistant, answer, Message.user("And in Lyon?"))


def turn(*parts: Any, scope: str | None = "anthropic") -> Message:
    return Message(role="assistant", parts=parts, scope=scope, model="claude-sonnet-4-6")


def assistant_content(params: dict[str, Any], index: int = 1) -> list[dict[str, Any]]:
    return params["messages"][index]["content"]


def test_same_scope_blocks_go_back_exactly_in_place() -> None:
    omitted = ThinkingBlock.signed("", "ErUBomitted==")
    params = model().build_request(
        ModelRequest(
            history(turn(SIGNED, REDACTED, TextPart(text="Checking."), CALL, omitted)),
            tools=[WEATHER],
        )
    )
    assert assistant_content(params) == [
        {"type": "thinking", "thinking": SIGNED.text, "signature": SIGNED.signature},
        {"type": "redacted_thinking", "data": REDACTED.redacted},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "thinking", "thinking": "", "signature": "ErUBomitted=="},
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


@pytest.mark.parametrize("scope", ["bedrock", "gemini", None])
def test_reasoning_from_another_scope_is_never_sent_as_thinking(scope: str | None) -> None:
    foreign = turn(SIGNED, REDACTED, TextPart(text="Checking."), CALL, scope=scope)
    dropped = model().build_request(ModelRequest(finished(foreign)))
    assert assistant_content(dropped) == [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
    ]
    as_text = model(foreign_reasoning="text").build_request(ModelRequest(finished(foreign)))
    assert assistant_content(as_text)[0] == {
        "type": "text",
        "text": "<thinking>\nI should call get_weather.\n</thinking>",
    }
    assert "signature" not in str(as_text["messages"]) and "redacted" not in str(
        as_text["messages"]
    )


def test_unsigned_thinking_of_this_scope_is_never_sent_as_thinking() -> None:
    cut = ThinkingBlock.plain("I should call get_w")  # a stream cut before its signature
    empty_signature = ThinkingBlock.signed("Half a thought", "")
    history_ = finished(turn(cut, empty_signature, CALL))
    assert assistant_content(model().build_request(ModelRequest(history_))) == [
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
    ]
    as_text = model(foreign_reasoning="text").build_request(ModelRequest(history_))
    assert [b["text"] for b in assistant_content(as_text) if b["type"] == "text"] == [
        "<thinking>\nI should call get_w\n</thinking>",
        "<thinking>\nHalf a thought\n</thinking>",
    ]


def test_empty_parts_and_messages_are_left_out_and_roles_alternate() -> None:
    messages = [
        Message.user("First question"),
        turn(ThinkingBlock.plain("only unsigned thoughts"), scope="gemini"),
        Message(role="user", parts=(TextPart(text=""), TextPart(text="Second question"))),
        turn(SIGNED, TextPart(text=""), CALL),
        Message.user_results([RESULT]),
        Message.user("And in Lyon?"),
    ]
    params = model().build_request(ModelRequest(messages))
    assert [m["role"] for m in params["messages"]] == ["user", "assistant", "user"]
    assert params["messages"][0]["content"] == [
        {"type": "text", "text": "First question"},
        {"type": "text", "text": "Second question"},
    ]
    assert params["messages"][1]["content"][1]["type"] == "tool_use"
    assert [b["type"] for b in params["messages"][2]["content"]] == ["tool_result", "text"]


def test_tool_results_go_first_with_their_error_flag() -> None:
    failed = ToolResult(call_id="toolu_1", name="get_weather", content={"error": 1}, is_error=True)
    messages = [
        Message.user("Weather?"),
        turn(SIGNED, CALL),
        Message(role="user", parts=(TextPart(text="Hurry."), failed)),
    ]
    content = model().build_request(ModelRequest(messages))["messages"][2]["content"]
    assert content == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": '{"error": 1}',
            "is_error": True,
        },
        {"type": "text", "text": "Hurry."},
    ]


PROFILE_ARN = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3"
"""A model id the name rules cannot read (an application inference profile)."""


def loop_begun_by(scope: str | None) -> Message:
    return turn(SIGNED, REDACTED, TextPart(text="Checking."), CALL, scope=scope)


@pytest.mark.parametrize(
    ("assistant", "found"),
    [
        (loop_begun_by("bedrock"), "text"),
        (loop_begun_by("gemini"), "text"),
        (loop_begun_by(None), "text"),
        (turn(ThinkingBlock.plain("I should call get_w"), CALL), "tool_use"),  # a cut stream
        (turn(ThinkingBlock.signed("Half a thought", ""), CALL), "tool_use"),
    ],
)
def test_a_tool_loop_without_replayable_thinking_is_refused_before_sending(
    assistant: Message, found: str
) -> None:
    """Claude's rule ("Expected `thinking` or `redacted_thinking`, but found `tool_use`")
    checked while the request is built, with the remedy."""
    for thinking, name in (
        (ClaudeThinking.adaptive(), "claude-sonnet-4-6"),
        (ClaudeThinking.budget(2048), "claude-sonnet-4-6"),
        (None, "claude-opus-4-7"),  # thinks by default
    ):
        chosen = model(thinking=thinking, name=name)
        with pytest.raises(HistoryError) as caught:
            chosen.build_request(ModelRequest(history(assistant)))
        error = caught.value
        assert error.message_index == 1
        assert f"starts with {found}" in str(error)
        assert "provider that started it" in str(error) and "thinking disabled" in str(error)
        assert "ClaudeThinking.disabled()" in str(error)
    # also with foreign reasoning sent as text: it is text, not thinking
    with pytest.raises(HistoryError):
        model(foreign_reasoning="text").build_request(ModelRequest(history(assistant)))


def test_the_rule_names_the_message_that_starts_the_current_turn() -> None:
    """Several steps: the turn's first assistant message is the one that must start with
    thinking (its index in the request's messages, after skipped messages)."""
    unsigned_only = turn(ThinkingBlock.plain("thoughts"), scope="gemini")  # sends nothing
    second = ToolCall(id="toolu_2", name="get_time", arguments={"city": "Paris"})
    messages = [
        Message.user("Weather and time in Paris?"),
        unsigned_only,
        turn(CALL, scope="gemini"),
        Message.user_results([RESULT]),
        turn(SIGNED, second),  # this scope's own, signed: not enough, the turn began elsewhere
        Message.user_results([ToolResult(call_id="toolu_2", name="get_time", content="14:05")]),
    ]
    with pytest.raises(HistoryError) as caught:
        model().build_request(ModelRequest(messages))
    assert caught.value.message_index == 2
    # a user message with tool results and text still continues the loop
    mixed = [*messages[:3], Message(role="user", parts=(RESULT, TextPart(text="Hurry.")))]
    with pytest.raises(HistoryError):
        model().build_request(ModelRequest(mixed))


def test_a_tool_loop_that_starts_with_thinking_passes() -> None:
    # this scope's loop, with a later step that did not think (a budget without interleaving)
    second = ToolCall(id="toolu_2", name="get_time", arguments={"city": "Paris"})
    messages = [
        *history(turn(SIGNED, CALL)),
        turn(second),
        Message.user_results([ToolResult(call_id="toolu_2", name="get_time", content="14:05")]),
    ]
    params = model().build_request(ModelRequest(messages))
    assert [b["type"] for b in assistant_content(params)] == ["thinking", "tool_use"]
    redacted_first = model().build_request(ModelRequest(history(turn(REDACTED, CALL))))
    assert assistant_content(redacted_first)[0]["type"] == "redacted_thinking"


def test_without_thinking_the_rule_does_not_apply() -> None:
    foreign = history(loop_begun_by("gemini"))
    tool_use_only = [{"type": "text", "text": "Checking."}, assistant_content_of_call()]
    disabled = model(thinking=ClaudeThinking.disabled()).build_request(ModelRequest(foreign))
    assert assistant_content(disabled) == tool_use_only
    # no thinking field on a model that does not think by default, or whose name the rules
    # cannot read: the provider decides
    for name in ("claude-sonnet-4-6", PROFILE_ARN):
        default = model(thinking=None, name=name).build_request(ModelRequest(foreign))
        assert assistant_content(default) == tool_use_only


def assistant_content_of_call() -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}


def test_whitespace_only_text_is_not_sent() -> None:
    messages = [
        Message(role="user", parts=(TextPart(text="Weather in Paris?"), TextPart(text=" \n"))),
        turn(SIGNED, TextPart(text="\n\n"), TextPart(text=" "), CALL, TextPart(text="\t")),
        Message.user_results([RESULT]),
        turn(TextPart(text="  ")),  # left with nothing: skipped
        Message.user("And in Lyon?"),
    ]
    params = model().build_request(ModelRequest(messages))
    blocks = [b for m in params["messages"] for b in m["content"]]
    assert all(b["text"].strip() for b in blocks if b["type"] == "text")
    assert [m["role"] for m in params["messages"]] == ["user", "assistant", "user"]
    assert [b["type"] for b in assistant_content(params)] == ["thinking", "tool_use"]


def test_thinking_off_replays_no_thinking() -> None:
    messages = history(turn(SIGNED, REDACTED, CALL))
    disabled = model(thinking=ClaudeThinking.disabled()).build_request(ModelRequest(messages))
    assert [b["type"] for b in assistant_content(disabled)] == ["tool_use"]
    assert disabled["thinking"] == {"type": "disabled"}
    # no thinking field: the model's default decides, which the name may not tell; this
    # scope's thinking goes back as it is (the model that produced it was thinking)
    for name in (
        "claude-sonnet-4-6",
        "claude-opus-4-7",  # thinks by default
        "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3",
    ):
        default = model(thinking=None, name=name).build_request(ModelRequest(messages))
        assert "thinking" not in default
        assert [b["type"] for b in assistant_content(default)] == [
            "thinking",
            "redacted_thinking",
            "tool_use",
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


@pytest.mark.parametrize("choice", ["required", "get_weather"])
@pytest.mark.parametrize(
    ("thinking", "name"),
    [
        (ClaudeThinking.adaptive(), "claude-sonnet-4-6"),
        (ClaudeThinking.budget(2048), "claude-sonnet-4-6"),
        (None, "claude-opus-4-7"),  # thinks by default
    ],
)
def test_forced_tool_choice_with_thinking_is_refused(
    choice: str, thinking: ClaudeThinking | None, name: str
) -> None:
    m = model(thinking=thinking, name=name)
    with pytest.raises(
        ConfigurationError, match="forces tool use, which Claude refuses while thinking"
    ):
        m.build_request(
            ModelRequest([Message.user("Hi")], tools=[WEATHER], settings={"tool_choice": choice})
        )


def test_tool_choice_must_name_an_offered_tool() -> None:
    m = model(thinking=ClaudeThinking.disabled())
    with pytest.raises(ConfigurationError, match="names no tool on offer"):
        m.build_request(
            ModelRequest([Message.user("Hi")], tools=[WEATHER], settings={"tool_choice": "nope"})
        )
    with pytest.raises(ConfigurationError, match="needs at least one tool"):
        m.build_request(ModelRequest([Message.user("Hi")], settings={"tool_choice": "required"}))


def test_a_request_max_tokens_below_the_budget_is_refused() -> None:
    m = model(thinking=ClaudeThinking.budget(4096))
    with pytest.raises(ConfigurationError, match="must be below max_tokens"):
        m.build_request(ModelRequest([Message.user("Hi")], settings={"max_tokens": 3000}))


def test_unparsable_tool_arguments_replay_as_an_empty_object() -> None:
    broken = ToolCall(id="toolu_1", name="get_weather", arguments='{"city": "Par')
    params = model().build_request(ModelRequest(history(turn(SIGNED, broken))))
    assert assistant_content(params)[1]["input"] == {}


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
    error = provider_error(status_error(status, error_type, "the provider's words"))
    assert isinstance(error, ProviderError)
    assert error.message == "the provider's words"
    assert error.status == (None if status == 200 else status)
    assert error.retryable is retryable
    assert error.error_type == error_type
    assert error.scope == "anthropic"


def test_connection_errors_are_retryable() -> None:
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    timeout = provider_error(anthropic.APITimeoutError(request=request))
    assert (timeout.retryable, timeout.status, timeout.error_type) == (True, None, "timeout")
    connection = provider_error(anthropic.APIConnectionError(request=request))
    assert (connection.retryable, connection.error_type) == (True, "connection_error")
