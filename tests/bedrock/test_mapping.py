"""The pure Converse translation: responses to messages (redacted bytes kept exactly),
histories to request parameters, botocore errors to `ProviderError` (no network)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from botocore.exceptions import (
    ClientError,
    EndpointConnectionError,
    EventStreamError,
    NoCredentialsError,
    ParamValidationError,
)

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
from thinkagent.providers.bedrock import UNAVAILABLE_TOOL, BedrockModel, ClaudeThinking, _translate

MODEL_ID = "us.anthropic.claude-sonnet-4-6-v1:0"
WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
#: Not valid UTF-8: must survive as the exact bytes.
RAW = b"\xff\x00opaque\x80redacted-bytes\x01"


def model(**kw: Any) -> BedrockModel:
    kw.setdefault("thinking", ClaudeThinking.adaptive())
    return BedrockModel(kw.pop("name", MODEL_ID), client=object(), **kw)


def converse_response(content: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 10, "outputTokens": 40, "totalTokens": 50},
        "metrics": {"latencyMs": 100},
        **kw,
    }


def test_response_blocks_become_parts_in_provider_order() -> None:
    response = converse_response(
        [
            {
                "reasoningContent": {
                    "reasoningText": {"text": "Let me see.", "signature": "EqQBsig=="}
                }
            },
            {"reasoningContent": {"redactedContent": RAW}},
            {"text": "Checking."},
            {
                "toolUse": {
                    "toolUseId": "tooluse_1",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                }
            },
            {"reasoningContent": {"reasoningText": {"text": "", "signature": "ErUBomitted=="}}},
            {"reasoningContent": {"reasoningText": {"text": "unsigned (another model)"}}},
        ],
        usage={
            "inputTokens": 10,
            "outputTokens": 40,
            "totalTokens": 170,
            "cacheReadInputTokens": 100,
            "cacheWriteInputTokens": 20,
        },
    )
    message = model().parse_response(response).message
    assert message.parts == (
        ThinkingBlock.signed("Let me see.", "EqQBsig=="),
        ThinkingBlock.redacted_payload(base64.b64encode(RAW).decode()),
        TextPart(text="Checking."),
        ToolCall(id="tooluse_1", name="get_weather", arguments={"city": "Paris"}),
        ThinkingBlock.signed("", "ErUBomitted=="),
        ThinkingBlock.plain("unsigned (another model)"),
    )
    assert base64.b64decode(message.parts[1].redacted or "") == RAW  # type: ignore[union-attr]
    assert message.usage == Usage(
        input_tokens=130, output_tokens=40, cache_read_tokens=100, cache_write_tokens=20
    )
    assert (message.scope, message.model, message.id) == ("bedrock", MODEL_ID, None)
    assert message.finish_reason == "tool_call"
    assert message.provider_details == {"finish_reason": "tool_use"}


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("end_turn", "stop"),
        ("max_tokens", "length"),
        ("guardrail_intervened", "content_filter"),
        ("content_filtered", "content_filter"),
        ("malformed_model_output", "error"),
    ],
)
def test_stop_reasons(raw: str, normalised: str) -> None:
    message = model().parse_response(converse_response([{"text": "x"}], stopReason=raw)).message
    assert message.finish_reason == normalised
    assert message.provider_details == {"finish_reason": raw}


# --- request building --------------------------------------------------------------------------

SIGNED = ThinkingBlock.signed("I should call get_weather.", "EqQBCkYIsig==")
REDACTED = ThinkingBlock.redacted_payload(base64.b64encode(RAW).decode())
CALL = ToolCall(id="tooluse_1", name="get_weather", arguments={"city": "Paris"})
RESULT = ToolResult(call_id="tooluse_1", name="get_weather", content="sunny")


def turn(*parts: Any, scope: str | None = "bedrock") -> Message:
    return Message(role="assistant", parts=parts, scope=scope, model=MODEL_ID)


def history(assistant: Message, *more: Message) -> list[Message]:
    return [Message.user("Weather in Paris?"), assistant, Message.user_results([RESULT]), *more]


def finished(assistant: Message) -> list[Message]:
    """`history(assistant)` with the turn finished (answered, then a new prompt): its tool loop
    may come from anywhere, Claude only verifies the current one."""
    answer = Message(
        role="assistant",
        parts=(TextPart(text="Sunny in Paris."),),
        scope=assistant.scope,
        model=MODEL_ID,
    )
    return history(assistant, answer, Message.user("And in Lyon?"))


def test_same_scope_blocks_go_back_exactly_in_place() -> None:
    params = model().build_request(
        ModelRequest(
            history(turn(SIGNED, REDACTED, TextPart(text="Checking."), CALL)), tools=[WEATHER]
        )
    )
    assert params["messages"][1] == {
        "role": "assistant",
        "content": [
            {
                "reasoningContent": {
                    "reasoningText": {"text": SIGNED.text, "signature": SIGNED.signature}
                }
            },
            {"reasoningContent": {"redactedContent": RAW}},  # the exact bytes
            {"text": "Checking."},
            {
                "toolUse": {
                    "toolUseId": "tooluse_1",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                }
            },
        ],
    }
    assert params["messages"][0] == {"role": "user", "content": [{"text": "Weather in Paris?"}]}
    assert params["messages"][2] == {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": "tooluse_1",
                    "content": [{"text": "sunny"}],
                    "status": "success",
                }
            }
        ],
    }
    assert params["modelId"] == MODEL_ID
    assert params["additionalModelRequestFields"] == {"thinking": {"type": "adaptive"}}
    assert params["inferenceConfig"] == {"maxTokens": 8192}
    assert params["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "get_weather",
                    "inputSchema": {"json": WEATHER.parameters},
                    "description": "Current weather for a city.",
                }
            }
        ]
    }


@pytest.mark.parametrize("scope", ["anthropic", "gemini", None])
def test_reasoning_from_another_scope_is_never_sent_as_reasoning(scope: str | None) -> None:
    anthropic_redacted = ThinkingBlock.redacted_payload("EmwKAhgBEgy3va3p")
    foreign = turn(SIGNED, anthropic_redacted, TextPart(text="Checking."), CALL, scope=scope)
    dropped = model().build_request(ModelRequest(finished(foreign)))
    assert dropped["messages"][1]["content"] == [
        {"text": "Checking."},
        {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}},
    ]
    as_text = model(foreign_reasoning="text").build_request(ModelRequest(finished(foreign)))
    assert as_text["messages"][1]["content"][0] == {
        "text": "<thinking>\nI should call get_weather.\n</thinking>"
    }


def test_unsigned_thinking_of_this_scope_is_never_sent_as_reasoning() -> None:
    cut = ThinkingBlock.plain("I should call get_w")
    params = model().build_request(ModelRequest(finished(turn(cut, CALL))))
    assert [next(iter(b)) for b in params["messages"][1]["content"]] == ["toolUse"]


def test_empty_parts_and_messages_are_left_out_and_roles_alternate() -> None:
    messages = [
        Message.user("First question"),
        turn(ThinkingBlock.plain("only unsigned thoughts"), scope="anthropic"),
        Message(role="user", parts=(TextPart(text=""), TextPart(text="Second question"))),
        turn(SIGNED, TextPart(text=""), CALL),
        Message.user_results([RESULT]),
        Message.user("And in Lyon?"),
    ]
    params = model().build_request(ModelRequest(messages))
    assert [m["role"] for m in params["messages"]] == ["user", "assistant", "user"]
    assert params["messages"][0]["content"] == [
        {"text": "First question"},
        {"text": "Second question"},
    ]
    assert [next(iter(b)) for b in params["messages"][2]["content"]] == ["toolResult", "text"]


def test_tool_results_carry_status_and_json() -> None:
    failed = ToolResult(call_id="tooluse_1", name="get_weather", content="boom", is_error=True)
    data = ToolResult(call_id="tooluse_1", name="get_weather", content={"temp_c": 18})
    for result, expected in (
        (failed, {"content": [{"text": "boom"}], "status": "error"}),
        (data, {"content": [{"json": {"temp_c": 18}}], "status": "success"}),
    ):
        params = model().build_request(
            ModelRequest(
                [Message.user("Weather?"), turn(SIGNED, CALL), Message.user_results([result])]
            )
        )
        assert params["messages"][2]["content"] == [
            {"toolResult": {"toolUseId": "tooluse_1", **expected}}
        ]


def test_thinking_off_replays_no_reasoning() -> None:
    messages = history(turn(SIGNED, REDACTED, CALL))
    params = model(thinking=ClaudeThinking.disabled()).build_request(ModelRequest(messages))
    assert [next(iter(b)) for b in params["messages"][1]["content"]] == ["toolUse"]
    default = model(thinking=None).build_request(ModelRequest(messages))
    assert "additionalModelRequestFields" not in default


PROFILE_ARN = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3"
"""An application inference profile: the name says nothing of the model behind it."""


def test_with_no_thinking_configured_this_scopes_reasoning_goes_back_as_it_is() -> None:
    """The model's default decides, and a name the rules cannot read must not strip the
    current loop's signed thinking (the model that produced it was thinking)."""
    messages = history(turn(SIGNED, REDACTED, CALL))
    for name in (PROFILE_ARN, MODEL_ID, "global.anthropic.claude-opus-4-7-v1:0"):
        params = model(thinking=None, name=name).build_request(ModelRequest(messages))
        assert params["messages"][1]["content"] == [
            {
                "reasoningContent": {
                    "reasoningText": {"text": SIGNED.text, "signature": SIGNED.signature}
                }
            },
            {"reasoningContent": {"redactedContent": RAW}},
            {
                "toolUse": {
                    "toolUseId": "tooluse_1",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                }
            },
        ]
        assert "additionalModelRequestFields" not in params


def test_a_tool_loop_without_replayable_thinking_is_refused_before_sending() -> None:
    for assistant in (
        turn(SIGNED, TextPart(text="Checking."), CALL, scope="anthropic"),
        turn(ThinkingBlock.plain("I should call get_w"), CALL),
    ):
        for thinking, name in (
            (ClaudeThinking.adaptive(), MODEL_ID),
            (None, "us.anthropic.claude-opus-4-7-v1:0"),
        ):
            with pytest.raises(HistoryError) as caught:
                model(thinking=thinking, name=name).build_request(
                    ModelRequest(history(assistant), tools=[WEATHER])
                )
            assert caught.value.message_index == 1
            assert "provider that started it" in str(caught.value)
        # thinking off, or a model whose default the name does not tell: sent as it is
        for thinking, name in ((ClaudeThinking.disabled(), MODEL_ID), (None, PROFILE_ARN)):
            params = model(thinking=thinking, name=name).build_request(
                ModelRequest(history(assistant), tools=[WEATHER])
            )
            assert "toolUse" in params["messages"][1]["content"][-1]


def test_whitespace_only_text_is_not_sent() -> None:
    messages = [
        Message(role="user", parts=(TextPart(text="Weather in Paris?"), TextPart(text="\n"))),
        turn(SIGNED, TextPart(text=" \n "), CALL),
        Message.user_results([RESULT]),
        turn(TextPart(text="\t")),
        Message.user("And in Lyon?"),
    ]
    params = model().build_request(ModelRequest(messages, tools=[WEATHER]))
    texts = [b["text"] for m in params["messages"] for b in m["content"] if "text" in b]
    assert texts == ["Weather in Paris?", "And in Lyon?"]
    assert [next(iter(b)) for b in params["messages"][1]["content"]] == [
        "reasoningContent",
        "toolUse",
    ]


def test_a_history_with_tools_and_no_tools_on_offer_declares_them() -> None:
    """Converse: "The toolConfig field must be defined when using toolUse and toolResult
    content blocks." The tools the history used are declared, as unavailable."""
    time_call = ToolCall(id="tooluse_2", name="get_time", arguments={})
    messages = [
        *history(turn(SIGNED, CALL, time_call)),
        turn(TextPart(text="Sunny.")),
        Message.user("Thanks. Anything else?"),
    ]
    messages[2] = Message.user_results(
        [RESULT, ToolResult(call_id="tooluse_2", name="get_time", content="14:05")]
    )
    params = model().build_request(ModelRequest(messages))
    empty = {"type": "object", "properties": {}}
    assert params["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": name,
                    "description": UNAVAILABLE_TOOL,
                    "inputSchema": {"json": empty},
                }
            }
            for name in ("get_weather", "get_time")
        ]
    }
    assert "toolConfig" not in model().build_request(ModelRequest([Message.user("Hi")]))


def test_an_empty_tool_result_sends_no_blank_text() -> None:
    for content in ("", " \n"):
        result = ToolResult(call_id="tooluse_1", name="get_weather", content=content)
        params = model().build_request(
            ModelRequest(
                [Message.user("Weather?"), turn(SIGNED, CALL), Message.user_results([result])],
                tools=[WEATHER],
            )
        )
        assert params["messages"][2]["content"] == [
            {"toolResult": {"toolUseId": "tooluse_1", "content": [], "status": "success"}}
        ]


def test_settings_map_to_the_request() -> None:
    m = model(
        effort="max",
        additional_model_request_fields={"anthropic_beta": ["interleaved-thinking-2025-05-14"]},
        settings={"max_tokens": 5000},
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
                "tool_choice": "auto",
                "extra_body": {
                    "performanceConfig": {"latency": "standard"},
                    "additionalModelRequestFields": {"top_k": 5},
                },
            },
        )
    )
    assert params["system"] == [{"text": "Be terse."}]
    assert params["inferenceConfig"] == {
        "maxTokens": 5000,
        "temperature": 1.0,
        "topP": 0.9,
        "stopSequences": ["END"],
    }
    assert params["outputConfig"] == {"effort": "max"}
    assert params["additionalModelRequestFields"] == {
        "anthropic_beta": ["interleaved-thinking-2025-05-14"],
        "thinking": {"type": "adaptive"},
        "top_k": 5,
    }
    assert params["performanceConfig"] == {"latency": "standard"}
    assert "toolChoice" not in params["toolConfig"]


@pytest.mark.parametrize(
    ("choice", "expected"),
    [("required", {"any": {}}), ("get_weather", {"tool": {"name": "get_weather"}})],
)
def test_tool_choice_without_thinking(choice: str, expected: dict[str, Any]) -> None:
    params = model(thinking=ClaudeThinking.disabled()).build_request(
        ModelRequest([Message.user("Hi")], tools=[WEATHER], settings={"tool_choice": choice})
    )
    assert params["toolConfig"]["toolChoice"] == expected


def test_tool_choice_none() -> None:
    m = model(thinking=ClaudeThinking.disabled())
    fresh = m.build_request(
        ModelRequest([Message.user("Hi")], tools=[WEATHER], settings={"tool_choice": "none"})
    )
    assert "toolConfig" not in fresh  # Converse has no "none": the tools are not offered
    with pytest.raises(ConfigurationError, match="no tool_choice 'none'"):
        m.build_request(
            ModelRequest(history(turn(CALL)), tools=[WEATHER], settings={"tool_choice": "none"})
        )


@pytest.mark.parametrize("choice", ["required", "get_weather"])
@pytest.mark.parametrize(
    ("thinking", "name"),
    [(ClaudeThinking.budget(2048), MODEL_ID), (None, "global.anthropic.claude-opus-4-7-v1:0")],
)
def test_forced_tool_choice_with_thinking_is_refused(
    choice: str, thinking: ClaudeThinking | None, name: str
) -> None:
    with pytest.raises(ConfigurationError, match="forces tool use"):
        model(thinking=thinking, name=name).build_request(
            ModelRequest([Message.user("Hi")], tools=[WEATHER], settings={"tool_choice": choice})
        )


def test_parallel_tool_calls_cannot_be_disabled() -> None:
    with pytest.raises(ConfigurationError, match="cannot disable parallel tool calls"):
        model().build_request(
            ModelRequest(
                [Message.user("Hi")], tools=[WEATHER], settings={"parallel_tool_calls": False}
            )
        )


def test_a_redacted_payload_that_is_not_base64_names_its_place() -> None:
    broken = ThinkingBlock.redacted_payload("not base64!")
    with pytest.raises(HistoryError, match=r"messages\[1\]\.parts\[0\]: .*not valid base64"):
        model().build_request(ModelRequest(history(turn(broken, CALL))))


# --- errors ------------------------------------------------------------------------------------


def client_error(code: str, message: str, status: int) -> ClientError:
    return ClientError(
        {
            "Error": {"Code": code, "Message": message},
            "ResponseMetadata": {"HTTPStatusCode": status},
        },
        "Converse",
    )


@pytest.mark.parametrize(
    ("code", "status", "retryable"),
    [
        ("ValidationException", 400, False),
        ("AccessDeniedException", 403, False),
        ("ModelTimeoutException", 408, True),
        ("ThrottlingException", 429, True),
        ("ModelNotReadyException", 429, True),
        ("InternalServerException", 500, True),
        ("ServiceUnavailableException", 503, True),
    ],
)
def test_client_errors(code: str, status: int, retryable: bool) -> None:
    error = _translate(client_error(code, "the provider's words", status))
    assert isinstance(error, ProviderError)
    assert (error.message, error.status, error.retryable, error.error_type) == (
        "the provider's words",
        status,
        retryable,
        code,
    )


@pytest.mark.parametrize(
    ("code", "retryable"),
    [
        ("throttlingException", True),
        ("serviceUnavailableException", True),
        ("internalServerException", True),
        ("modelStreamErrorException", True),
        ("validationException", False),
    ],
)
def test_stream_exception_events(code: str, retryable: bool) -> None:
    exc = EventStreamError({"Error": {"Code": code, "Message": "mid-stream"}}, "ConverseStream")
    error = _translate(exc)
    assert isinstance(error, ProviderError)
    assert (error.status, error.retryable, error.error_type) == (None, retryable, code)


def test_other_botocore_errors() -> None:
    connection = _translate(EndpointConnectionError(endpoint_url="https://bedrock-runtime.example"))
    assert isinstance(connection, ProviderError) and connection.retryable
    invalid = _translate(ParamValidationError(report="Unknown parameter in input: 'bogus'"))
    assert isinstance(invalid, ConfigurationError) and "bogus" in str(invalid)
    no_credentials = _translate(NoCredentialsError())
    assert isinstance(no_credentials, ConfigurationError) and "AWS credentials" in str(
        no_credentials
    )
    other = ValueError("not a vendor error")
    assert _translate(other) is other
