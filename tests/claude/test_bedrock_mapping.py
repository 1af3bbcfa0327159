"""The Converse translation (no network): responses to messages (redacted bytes kept exactly),
the request parameters besides the replayed history (`test_replay.py` has that, for both wires),
botocore errors to `ProviderError`."""

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

from tests.support.claude import without_cache
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
from thinkagent.providers.claude import BedrockModel, ClaudeThinking
from thinkagent.providers.claude.bedrock import UNAVAILABLE_TOOL

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


def test_a_request_with_history_and_tools() -> None:
    """What goes around the replayed history (`test_replay.py`): the redacted bytes as they
    are, the user turns, the model, the thinking configuration, the tools."""
    params = without_cache(
        model().build_request(
            ModelRequest(
                history(turn(SIGNED, REDACTED, TextPart(text="Checking."), CALL)), tools=[WEATHER]
            )
        )
    )
    assert params["messages"][1]["content"][1] == {
        "reasoningContent": {"redactedContent": RAW}  # the exact bytes
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


def test_tool_results_carry_status_and_json() -> None:
    failed = ToolResult(call_id="tooluse_1", name="get_weather", content="boom", is_error=True)
    data = ToolResult(call_id="tooluse_1", name="get_weather", content={"temp_c": 18})
    for result, expected in (
        (failed, {"content": [{"text": "boom"}], "status": "error"}),
        (data, {"content": [{"json": {"temp_c": 18}}], "status": "success"}),
    ):
        params = without_cache(
            model().build_request(
                ModelRequest(
                    [Message.user("Weather?"), turn(SIGNED, CALL), Message.user_results([result])]
                )
            )
        )
        assert params["messages"][2]["content"] == [
            {"toolResult": {"toolUseId": "tooluse_1", **expected}}
        ]


PROFILE_ARN = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3"
"""An application inference profile: the name says nothing of the model behind it."""


def test_thinking_goes_in_the_additional_fields() -> None:
    messages = history(turn(SIGNED, REDACTED, CALL))
    params = model(thinking=ClaudeThinking.disabled()).build_request(ModelRequest(messages))
    assert params["additionalModelRequestFields"] == {"thinking": {"type": "disabled"}}
    for name in (MODEL_ID, PROFILE_ARN, "global.anthropic.claude-opus-4-7-v1:0"):
        default = model(thinking=None, name=name).build_request(ModelRequest(messages))
        assert "additionalModelRequestFields" not in default


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
    params = without_cache(model().build_request(ModelRequest(messages)))
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
        params = without_cache(
            model().build_request(
                ModelRequest(
                    [Message.user("Weather?"), turn(SIGNED, CALL), Message.user_results([result])],
                    tools=[WEATHER],
                )
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
                "prompt_cache": False,
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
    error = model().map_error(client_error(code, "the provider's words", status))
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
    error = model().map_error(exc)
    assert isinstance(error, ProviderError)
    assert (error.status, error.retryable, error.error_type) == (None, retryable, code)


def test_other_botocore_errors() -> None:
    connection = model().map_error(
        EndpointConnectionError(endpoint_url="https://bedrock-runtime.example")
    )
    assert isinstance(connection, ProviderError) and connection.retryable
    invalid = model().map_error(ParamValidationError(report="Unknown parameter in input: 'bogus'"))
    assert isinstance(invalid, ConfigurationError) and "bogus" in str(invalid)
    no_credentials = model().map_error(NoCredentialsError())
    assert isinstance(no_credentials, ConfigurationError) and "AWS credentials" in str(
        no_credentials
    )
    other = ValueError("not a vendor error")
    assert model().map_error(other) is other
