"""The adapter's translation, through the official SDK over an in-process transport (no
network): response parts -> the shared schema, streams -> the same message, histories -> the
request the SDK puts on the wire, vendor errors -> `ProviderError`."""

from __future__ import annotations

import base64
import logging
from typing import Any

import httpx2
import pytest

from tests.support.gemini import API_KEY, MockGemini, error, response
from thinkagent import (
    ConfigurationError,
    HistoryError,
    Message,
    ProviderError,
    StreamInterrupted,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
    dump_messages,
)
from thinkagent.providers.base import ModelRequest, ModelResponse, ToolDefinition
from thinkagent.providers.gemini import SKIP_SIGNATURE, GeminiModel, GeminiThinking
from thinkagent.stream import PartEnd, TextDelta, ThinkingDelta, ToolCallDelta

TRICKY = b"\xfb\xff\xfe-sig-\xfa\xfb\xff\x00\x01"  # standard and URL-safe base64 differ
STD = base64.b64encode(TRICKY).decode()
URLSAFE = base64.urlsafe_b64encode(TRICKY).decode()
OTHER = b"\x00\x10\x83\x10Q\x87 \x92\x8b0\xd3\x8f"
WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
USAGE = {
    "promptTokenCount": 100,
    "candidatesTokenCount": 20,
    "thoughtsTokenCount": 30,
    "cachedContentTokenCount": 40,
    "toolUsePromptTokenCount": 5,
    "totalTokenCount": 155,
}


def wire_signature(part: dict[str, Any]) -> bytes | None:
    value = part.get("thoughtSignature")
    return None if value is None else base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


def model_for(mock: MockGemini, name: str = "gemini-3-pro-preview", **kwargs: Any) -> GeminiModel:
    return GeminiModel(name, client=mock.client, **kwargs)


async def collect(model: GeminiModel, request: ModelRequest) -> tuple[list[Any], Message]:
    """The stream's events but its part ends (`test_stream_parts.py` has those), and its
    message."""
    deltas: list[Any] = []
    final: Message | None = None
    async for event in model.stream(request):
        if isinstance(event, ModelResponse):
            final = event.message
        elif not isinstance(event, PartEnd):
            deltas.append(event)
    assert final is not None
    return deltas, final


ASK = ModelRequest(messages=[Message.user("What's the weather in Paris?")], tools=[WEATHER])

# --- configuration ------------------------------------------------------------------------


def test_scope_comes_from_the_client_and_repr_shows_no_credential() -> None:
    gemini = model_for(MockGemini())
    vertex = model_for(MockGemini(vertex=True))
    assert (gemini.scope, vertex.scope) == ("gemini", "vertex")
    assert repr(gemini) == "GeminiModel(model_name='gemini-3-pro-preview', scope='gemini')"
    assert API_KEY not in repr(gemini) + repr(vertex)


def test_a_client_is_built_from_the_environment_with_sdk_retries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", API_KEY)
    model = GeminiModel("gemini-2.5-flash", max_retries=4)
    assert model.scope == "gemini"
    options = model.client._api_client._http_options  # pyright: ignore[reportPrivateUsage]
    assert options.retry_options is not None
    assert options.retry_options.attempts == 5
    assert API_KEY not in repr(model)


def test_no_credentials_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigurationError, match="GEMINI_API_KEY"):
        GeminiModel("gemini-2.5-flash")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"thinking": {"level": "high", "budget": 10}}, "either budget or level"),
        ({"thinking": {"budget": 0}}, "cannot turn thinking off"),
        ({"thinking": "high"}, "thinking must be a GeminiThinking"),
        ({"foreign_reasoning": "keep"}, "foreign_reasoning"),
        ({"missing_signature": "dummy"}, "missing_signature"),
        ({"replay_thoughts": "some"}, "replay_thoughts"),
        ({"max_retries": -1}, "max_retries"),
        ({"generation_config": {"thinking_config": {}}}, "may not set thinking_config"),
        ({"generation_config": {"tools": []}}, "may not set tools"),
        ({"generation_config": {"top_k": "many"}}, "invalid generation_config"),
    ],
)
def test_invalid_configuration(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        thinking = kwargs.get("thinking")
        if isinstance(thinking, dict):  # the config refuses what conflicts whatever the model
            kwargs = {**kwargs, "thinking": GeminiThinking(**thinking)}
        model_for(MockGemini(), **kwargs)


# --- responses ----------------------------------------------------------------------------


async def test_parts_map_in_order_with_each_signature_on_its_part() -> None:
    mock = MockGemini(
        response(
            {"text": "Weighing the tools.", "thought": True},
            {"text": "", "thought": True, "thoughtSignature": URLSAFE},
            {"text": "Let me check."},
            {"functionCall": {"id": "fc_1", "name": "get_weather", "args": {"city": "Paris"}}},
            {
                "functionCall": {"name": "get_weather", "args": {"city": "Lyon"}},
                "thoughtSignature": STD,
            },
            {"text": ""},
            {"text": "", "thoughtSignature": URLSAFE},
            finish="STOP",
            usage=USAGE,
        )
    )
    message = (await model_for(mock).request(ASK)).message
    generated = message.parts[4]
    assert isinstance(generated, ToolCall)
    assert message.parts == (
        ThinkingBlock.plain("Weighing the tools."),
        ThinkingBlock.signed("", STD),
        TextPart(text="Let me check."),
        ToolCall(id="fc_1", name="get_weather", arguments={"city": "Paris"}),
        ToolCall(
            id=generated.id,
            name="get_weather",
            arguments={"city": "Lyon"},
            signature=STD,
            provider_details={"generated_id": True},
        ),
        TextPart(text="", signature=STD),
    )
    assert generated.id.startswith("gemini_call_")
    assert message.scope == "gemini"
    assert message.model == "gemini-3-pro-preview"
    assert message.id == "resp-1"
    assert message.finish_reason == "tool_call"
    assert message.provider_details == {"finish_reason": "STOP"}
    assert message.usage == Usage(
        input_tokens=105, output_tokens=50, thinking_tokens=30, cache_read_tokens=40
    )


@pytest.mark.parametrize("encoded", [STD, URLSAFE, URLSAFE.rstrip("=")])
async def test_either_alphabet_on_the_wire_is_stored_as_standard_base64(encoded: str) -> None:
    mock = MockGemini(response({"text": "Sunny.", "thoughtSignature": encoded}))
    message = (await model_for(mock).request(ASK)).message
    assert message.parts == (TextPart(text="Sunny.", signature=STD),)
    assert message.finish_reason == "stop"


@pytest.mark.parametrize(
    ("finish", "expected"),
    [("MAX_TOKENS", "length"), ("SAFETY", "content_filter"), ("MALFORMED_FUNCTION_CALL", "error")],
)
async def test_finish_reasons_keep_the_raw_value(finish: str, expected: str) -> None:
    mock = MockGemini(response({"text": "Partial"}, finish=finish))
    message = (await model_for(mock).request(ASK)).message
    assert message.finish_reason == expected
    assert message.provider_details == {"finish_reason": finish}


async def test_a_blocked_prompt_is_an_empty_content_filtered_message() -> None:
    mock = MockGemini({"promptFeedback": {"blockReason": "SAFETY"}, "responseId": "r"})
    message = (await model_for(mock).request(ASK)).message
    assert message.parts == ()
    assert message.finish_reason == "content_filter"
    assert message.provider_details == {"block_reason": "SAFETY"}


# --- streams ------------------------------------------------------------------------------


def chunk(*parts: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("finish", None)
    return response(*parts, **kwargs)


STREAM = [
    chunk({"text": "Weighing ", "thought": True}),
    chunk({"text": "the tools.", "thought": True}),
    chunk({"text": "Let me "}),
    chunk({"text": "check."}),
    chunk(
        {
            "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
            "thoughtSignature": URLSAFE,
        },
        {"functionCall": {"name": "get_weather", "args": {"city": "Lyon"}}},
    ),
    chunk({"text": ""}, finish="STOP", usage=USAGE),
]
STREAMED_AS_ONE = response(
    {"text": "Weighing the tools.", "thought": True},
    {"text": "Let me check."},
    {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": STD},
    {"functionCall": {"name": "get_weather", "args": {"city": "Lyon"}}},
    usage=USAGE,
)


async def test_a_stream_assembles_into_the_non_streamed_message() -> None:
    mock = MockGemini(STREAM, STREAMED_AS_ONE)
    model = model_for(mock)
    deltas, streamed = await collect(model, ASK)
    plain = (await model.request(ASK)).message
    assert streamed == plain
    assert [type(d) for d in deltas] == [
        ThinkingDelta,
        ThinkingDelta,
        TextDelta,
        TextDelta,
        ToolCallDelta,
        ToolCallDelta,
    ]
    assert [d.index for d in deltas] == [0, 0, 1, 1, 2, 3]
    call = deltas[4]
    assert (call.name, call.args_fragment, call.signature) == (
        "get_weather",
        '{"city": "Paris"}',
        STD,
    )
    assert call.id == plain.parts[2].id  # type: ignore[union-attr]
    assert mock.paths[0].endswith(":streamGenerateContent")


async def test_a_trailing_signature_chunk_closes_the_text_part_it_follows() -> None:
    mock = MockGemini(
        [
            chunk({"text": "Sunny ", "thought": False}),
            chunk({"text": "in Paris."}),
            chunk({"text": "", "thoughtSignature": URLSAFE}),
            chunk({"text": "P.S."}),
            chunk({"thoughtSignature": STD}, finish="STOP"),
        ],
        response(
            {"text": "Sunny in Paris.", "thoughtSignature": STD},
            {"text": "P.S.", "thoughtSignature": STD},
        ),
    )
    model = model_for(mock)
    _, streamed = await collect(model, ASK)
    plain = (await model.request(ASK)).message
    assert streamed.parts == (
        TextPart(text="Sunny in Paris.", signature=STD),
        TextPart(text="P.S.", signature=STD),
    )
    assert streamed == plain


async def test_a_signature_only_chunk_after_a_call_is_an_empty_signed_text_part() -> None:
    mock = MockGemini(
        [
            chunk({"functionCall": {"id": "c1", "name": "get_weather", "args": {}}}),
            chunk({"text": "", "thoughtSignature": STD}, finish="STOP"),
        ],
        response(
            {"functionCall": {"id": "c1", "name": "get_weather", "args": {}}},
            {"text": "", "thoughtSignature": STD},
        ),
    )
    model = model_for(mock)
    _, streamed = await collect(model, ASK)
    assert streamed.parts[1] == TextPart(text="", signature=STD)
    assert streamed == (await model.request(ASK)).message


async def test_a_stream_without_a_finish_reason_is_interrupted_with_an_unsigned_partial() -> None:
    mock = MockGemini(
        [chunk({"text": "Sunny", "thoughtSignature": STD}), chunk({"text": " and"})],
    )
    deltas: list[Any] = []
    with pytest.raises(StreamInterrupted) as caught:
        async for event in model_for(mock).stream(ASK):
            deltas.append(event)
    partial = caught.value.partial
    assert partial is not None
    assert partial.parts == (TextPart(text="Sunny", signature=STD), TextPart(text=" and"))
    assert caught.value.retryable


async def test_a_broken_connection_mid_stream_is_interrupted() -> None:
    class Broken(httpx2.AsyncByteStream):
        async def __aiter__(self):  # type: ignore[override]
            yield b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Thinking","thought":true}]}}]}\r\n\r\n'
            raise httpx2.RemoteProtocolError("peer closed connection")

    mock = MockGemini(
        httpx2.Response(200, stream=Broken(), headers={"content-type": "text/event-stream"})
    )
    with pytest.raises(StreamInterrupted) as caught:
        async for _ in model_for(mock).stream(ASK):
            pass
    assert caught.value.partial is not None
    assert caught.value.partial.parts == (ThinkingBlock.plain("Thinking"),)
    assert isinstance(caught.value.__cause__, httpx2.RemoteProtocolError)


# --- requests -----------------------------------------------------------------------------


def history(*assistant_turns: Message, results: bool = True) -> list[Message]:
    messages: list[Message] = [Message.user("What's the weather in Paris?")]
    for turn in assistant_turns:
        messages.append(turn)
        if results and turn.tool_calls:
            messages.append(
                Message.user_results(
                    ToolResult(call_id=c.id, name=c.name, content=f"sunny in {c.id}")
                    for c in turn.tool_calls
                )
            )
    return messages


def assistant(*parts: Any, scope: str = "gemini") -> Message:
    return Message(role="assistant", parts=parts, scope=scope, model="m")


SAME_SCOPE = assistant(
    ThinkingBlock.plain("Summary nobody needs back."),
    ThinkingBlock.signed("Signed thought.", STD),
    TextPart(text="Checking.", signature=base64.b64encode(OTHER).decode()),
    TextPart(text=""),
    ToolCall(id="fc_1", name="get_weather", arguments={"city": "Paris"}, signature=STD),
    ToolCall(
        id="gemini_call_x",
        name="get_weather",
        arguments={"city": "Lyon"},
        provider_details={"generated_id": True},
    ),
    TextPart(text="", signature=STD),
)


async def test_same_scope_parts_go_back_in_order_with_exact_signature_bytes() -> None:
    mock = MockGemini(response({"text": "Done."}))
    await model_for(mock).request(ModelRequest(messages=history(SAME_SCOPE), tools=[WEATHER]))
    contents = mock.requests[0]["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    model_parts = contents[1]["parts"]
    assert model_parts == [
        {"text": "Signed thought.", "thought": True, "thoughtSignature": URLSAFE},
        {"text": "Checking.", "thoughtSignature": base64.urlsafe_b64encode(OTHER).decode()},
        {
            "functionCall": {"id": "fc_1", "args": {"city": "Paris"}, "name": "get_weather"},
            "thoughtSignature": URLSAFE,
        },
        {"functionCall": {"args": {"city": "Lyon"}, "name": "get_weather"}},
        {"text": "", "thoughtSignature": URLSAFE},
    ]
    assert [wire_signature(p) for p in model_parts] == [TRICKY, OTHER, TRICKY, None, TRICKY]
    assert contents[2]["parts"] == [
        {
            "functionResponse": {
                "id": "fc_1",
                "name": "get_weather",
                "response": {"output": "sunny in fc_1"},
            }
        },
        {
            "functionResponse": {
                "name": "get_weather",
                "response": {"output": "sunny in gemini_call_x"},
            }
        },
    ]


async def test_replay_thoughts_all_sends_unsigned_summaries_too() -> None:
    mock = MockGemini(response({"text": "Done."}))
    model = model_for(mock, replay_thoughts="all")
    await model.request(ModelRequest(messages=history(SAME_SCOPE)))
    parts = mock.requests[0]["contents"][1]["parts"]
    assert parts[0] == {"text": "Summary nobody needs back.", "thought": True}
    assert len(parts) == 6


async def test_errors_and_results_follow_the_documented_convention() -> None:
    mock = MockGemini(response({"text": "Done."}))
    call = ToolCall(id="fc_1", name="get_weather", arguments={"city": "Paris"}, signature=STD)
    messages = [
        Message.user("Weather?"),
        assistant(call),
        Message.user_results(
            [ToolResult(call_id="fc_1", name="get_weather", content="boom", is_error=True)]
        ),
    ]
    await model_for(mock).request(ModelRequest(messages=messages))
    response_part = mock.requests[0]["contents"][2]["parts"][0]["functionResponse"]
    assert response_part["response"] == {"error": "boom"}


ANTHROPIC_TURN = assistant(
    ThinkingBlock.signed("Claude's reasoning.", "EqQBCkYIBxgCKkDclaude"),
    ThinkingBlock.redacted_payload("EmwKAhgBEgyredacted"),
    TextPart(text="I'll look it up."),
    ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"}),
    ToolCall(id="toolu_2", name="get_weather", arguments={"city": "Lyon"}),
    scope="anthropic",
)


async def test_foreign_history_drops_reasoning_and_signs_the_first_current_call() -> None:
    mock = MockGemini(response({"text": "Done."}))
    await model_for(mock).request(ModelRequest(messages=history(ANTHROPIC_TURN)))
    body = mock.requests[0]
    assert "claude" not in str(body).lower()
    assert "redacted" not in str(body)
    assert body["contents"][1]["parts"] == [
        {"text": "I'll look it up."},
        {
            "functionCall": {"id": "toolu_1", "args": {"city": "Paris"}, "name": "get_weather"},
            "thoughtSignature": base64.urlsafe_b64encode(SKIP_SIGNATURE).decode(),
        },
        {"functionCall": {"id": "toolu_2", "args": {"city": "Lyon"}, "name": "get_weather"}},
    ]
    assert wire_signature(body["contents"][1]["parts"][1]) == b"skip_thought_signature_validator"


async def test_foreign_reasoning_as_text_and_the_sentinel_turned_off() -> None:
    mock = MockGemini(response({"text": "Done."}))
    model = model_for(mock, foreign_reasoning="text", missing_signature="send")
    await model.request(ModelRequest(messages=history(ANTHROPIC_TURN)))
    parts = mock.requests[0]["contents"][1]["parts"]
    assert parts[0] == {"text": "<thinking>\nClaude's reasoning.\n</thinking>"}
    assert all("thoughtSignature" not in p for p in parts)


async def test_the_sentinel_only_goes_on_current_turn_calls() -> None:
    mock = MockGemini(response({"text": "Done."}))
    messages = [
        *history(ANTHROPIC_TURN),
        assistant(TextPart(text="Sunny in both."), scope="anthropic"),
        Message.user("And tomorrow?"),
        assistant(
            ToolCall(id="toolu_3", name="get_weather", arguments={"city": "Paris"}),
            scope="anthropic",
        ),
        Message.user_results([ToolResult(call_id="toolu_3", name="get_weather", content="rain")]),
    ]
    await model_for(mock).request(ModelRequest(messages=messages))
    contents = mock.requests[0]["contents"]
    signed = [
        (i, p["functionCall"]["id"])
        for i, c in enumerate(contents)
        for p in c["parts"]
        if "thoughtSignature" in p
    ]
    assert signed == [(5, "toolu_3")]


async def test_a_same_scope_call_without_its_signature_is_sent_as_it_is() -> None:
    """A missing signature on this scope's own call is a damaged history: it is not papered
    over with the dummy signature (the service says what is wrong)."""
    mock = MockGemini(response({"text": "Done."}))
    turn = assistant(ToolCall(id="fc_1", name="get_weather", arguments={"city": "Paris"}))
    await model_for(mock).request(ModelRequest(messages=history(turn)))
    assert "thoughtSignature" not in mock.requests[0]["contents"][1]["parts"][0]


async def test_the_other_google_scope_is_foreign_too() -> None:
    mock = MockGemini(response({"text": "Done."}), vertex=True)
    turn = assistant(
        ThinkingBlock.signed("Gemini API thought.", STD),
        ToolCall(id="fc_1", name="get_weather", arguments={"city": "Paris"}, signature=STD),
        scope="gemini",
    )
    await model_for(mock).request(ModelRequest(messages=history(turn)))
    parts = mock.requests[0]["contents"][1]["parts"]
    assert parts == [
        {
            "functionCall": {"id": "fc_1", "args": {"city": "Paris"}, "name": "get_weather"},
            "thoughtSignature": base64.urlsafe_b64encode(SKIP_SIGNATURE).decode(),
        }
    ]
    assert "/projects/test-project/locations/us-central1/" in mock.paths[0]


async def test_a_signature_that_is_not_base64_is_a_history_error() -> None:
    mock = MockGemini(response({"text": "Done."}))
    turn = assistant(TextPart(text="Hi.", signature="not base64!"))
    with pytest.raises(HistoryError, match=r"messages\[1\]\.parts\[0\]"):
        await model_for(mock).request(
            ModelRequest(messages=[*history(turn), Message.user("again")])
        )
    assert mock.requests == []


async def test_empty_turns_are_left_out_and_user_turns_merged() -> None:
    mock = MockGemini(response({"text": "Done."}))
    messages = [
        Message.user("First."),
        assistant(ThinkingBlock.signed("Claude only thought.", "sig"), scope="anthropic"),
        Message.user("Second."),
    ]
    await model_for(mock).request(ModelRequest(messages=messages))
    assert mock.requests[0]["contents"] == [
        {"role": "user", "parts": [{"text": "First."}, {"text": "Second."}]}
    ]


async def test_instructions_tools_tool_choice_and_settings() -> None:
    mock = MockGemini(*(response({"text": "Done."}) for _ in range(4)))
    model = model_for(
        mock,
        thinking=GeminiThinking(level="low"),
        settings={"temperature": 0.5, "extra_headers": {"x-team": "a"}},
        generation_config={"top_k": 4, "seed": 7},
    )
    request = ModelRequest(
        messages=[Message.user("Weather?")],
        tools=[WEATHER],
        instructions="Be terse.",
        settings={
            "tool_choice": "get_weather",
            "max_tokens": 900,
            "top_p": 0.9,
            "stop_sequences": ["END"],
            "timeout": 12.5,
            "extra_body": {"labels": {"team": "a"}},
        },
    )
    params = model.build_request(request)
    assert params["config"].http_options.timeout == 12500
    assert params["config"].http_options.headers == {"x-team": "a"}
    await model.request(request)
    body = mock.requests[0]
    assert body["systemInstruction"] == {"parts": [{"text": "Be terse."}], "role": "user"}
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "description": "Current weather for a city.",
                    "name": "get_weather",
                    "parameters_json_schema": WEATHER.parameters,
                }
            ]
        }
    ]
    assert body["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}
    }
    assert body["generationConfig"] == {
        "temperature": 0.5,
        "topP": 0.9,
        "topK": 4.0,
        "maxOutputTokens": 900,
        "stopSequences": ["END"],
        "seed": 7,
        "thinkingConfig": {"include_thoughts": True, "thinking_level": "LOW"},
    }
    assert body["labels"] == {"team": "a"}
    for choice, mode in (("auto", "AUTO"), ("none", "NONE"), ("required", "ANY")):
        await model.request(
            ModelRequest(
                messages=request.messages, tools=[WEATHER], settings={"tool_choice": choice}
            )
        )
        assert mock.requests[-1]["toolConfig"] == {"functionCallingConfig": {"mode": mode}}
    with pytest.raises(ConfigurationError, match="names no tool"):
        model.build_request(
            ModelRequest(messages=request.messages, tools=[WEATHER], settings={"tool_choice": "x"})
        )


async def test_tool_declarations_are_derived_from_each_requests_tools() -> None:
    """No cache on the model (ADR 29): the same tools give equal declarations each time."""
    model = model_for(MockGemini())
    request = ModelRequest(messages=[Message.user("Weather?")], tools=[WEATHER])
    first = model.build_request(request)["config"].tools
    assert model.build_request(request)["config"].tools == first
    other = ToolDefinition(name="get_time", description="", parameters={"type": "object"})
    assert (
        model.build_request(ModelRequest(messages=request.messages, tools=[other]))["config"]
        .tools[0]
        .function_declarations[0]
        .name
        == "get_time"
    )


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "name", "retryable"),
    [
        (400, "INVALID_ARGUMENT", False),
        (403, "PERMISSION_DENIED", False),
        (408, "DEADLINE_EXCEEDED", True),
        (429, "RESOURCE_EXHAUSTED", True),
        (500, "INTERNAL", True),
        (503, "UNAVAILABLE", True),
    ],
)
async def test_service_errors_become_provider_errors(
    status: int, name: str, retryable: bool
) -> None:
    from google.genai import errors as genai_errors

    mock = MockGemini(error(status, f"The service says {status}.", name))
    with pytest.raises(ProviderError) as caught:
        await model_for(mock).request(ASK)
    exc = caught.value
    assert (exc.status, exc.error_type, exc.retryable) == (status, name, retryable)
    assert exc.message == f"The service says {status}."
    assert exc.scope == "gemini"
    assert isinstance(exc.__cause__, genai_errors.APIError)
    assert API_KEY not in str(exc)


async def test_stream_request_errors_and_in_stream_errors() -> None:
    mock = MockGemini(
        error(400, "Bad request.", "INVALID_ARGUMENT"),
        [
            chunk({"text": "Hi"}),
            {"error": {"code": 503, "message": "Overloaded.", "status": "UNAVAILABLE"}},
        ],
    )
    model = model_for(mock)
    with pytest.raises(ProviderError, match="Bad request") as first:
        await collect(model, ASK)
    assert first.value.status == 400
    with pytest.raises(ProviderError, match="Overloaded") as second:
        await collect(model, ASK)
    assert (second.value.status, second.value.retryable) == (503, True)


@pytest.mark.parametrize("streamed", [False, True])
async def test_transport_errors_are_retryable_provider_errors(streamed: bool) -> None:
    mock = MockGemini(httpx2.ConnectError("connection refused"))
    model = model_for(mock)
    with pytest.raises(ProviderError) as caught:
        if streamed:
            await collect(model, ASK)
        else:
            await model.request(ASK)
    assert caught.value.retryable
    assert caught.value.error_type == "connection_error"
    assert isinstance(caught.value.__cause__, httpx2.ConnectError)


async def test_no_credential_in_messages_json_errors_or_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    mock = MockGemini(
        response({"text": "Sunny.", "thoughtSignature": STD}, usage=USAGE),
        error(400, "Nope.", "INVALID_ARGUMENT"),
    )
    model = model_for(mock)
    message = (await model.request(ASK)).message
    with pytest.raises(ProviderError) as caught:
        await model.request(ASK)
    seen = dump_messages([message]) + repr(message) + repr(model) + str(caught.value)
    seen += caplog.text
    assert API_KEY not in seen


def test_the_sdk_thinking_level_enum_is_accepted() -> None:
    from google.genai import types

    model = model_for(MockGemini(), thinking=GeminiThinking(level=types.ThinkingLevel.XHIGH))
    assert model.thinking is not None
    assert model.thinking.level == "XHIGH"
    config = model.build_request(ASK)["config"]
    assert config.thinking_config == types.ThinkingConfig(
        include_thoughts=True, thinking_level=types.ThinkingLevel.XHIGH
    )
    assert config.automatic_function_calling.disable is True


# --- the adapter skeleton (ADR 29) ----------------------------------------------------------


def test_options_are_read_only() -> None:
    model = model_for(
        MockGemini(),
        thinking=GeminiThinking(level="high"),
        missing_signature="send",
        replay_thoughts="all",
        generation_config={"seed": 7},
    )
    assert model.thinking == GeminiThinking(level="high")
    assert (model.missing_signature, model.replay_thoughts) == ("send", "all")
    assert model.generation_config == {"seed": 7}
    for name, value in (("thinking", None), ("missing_signature", "skip_validator")):
        with pytest.raises(AttributeError):
            setattr(model, name, value)
    with pytest.raises(TypeError):
        model.generation_config["seed"] = 8  # type: ignore[index]
    assert model_for(MockGemini()).thinking is None  # the model's default thinking


async def test_a_same_scope_turn_of_another_generation_is_replayed_as_foreign() -> None:
    """Gemini 2.5 signatures are not valid on Gemini 3: the turn keeps its scope but loses its
    proofs, and its current-turn call gets the dummy signature."""
    mock = MockGemini(response({"text": "Done."}), response({"text": "Done."}))
    turn = assistant(
        ThinkingBlock.signed("A 2.5 thought.", STD),
        ToolCall(id="fc_1", name="get_weather", arguments={"city": "Paris"}, signature=STD),
    ).model_copy(update={"model": "gemini-2.5-flash"})
    await model_for(mock).request(ModelRequest(messages=history(turn)))
    assert mock.requests[0]["contents"][1]["parts"] == [
        {
            "functionCall": {"id": "fc_1", "args": {"city": "Paris"}, "name": "get_weather"},
            "thoughtSignature": base64.urlsafe_b64encode(SKIP_SIGNATURE).decode(),
        }
    ]
    await model_for(mock, "gemini-2.5-pro").request(ModelRequest(messages=history(turn)))
    assert [wire_signature(p) for p in mock.requests[1]["contents"][1]["parts"]] == [
        TRICKY,
        TRICKY,
    ]


async def test_chunks_without_parts_carry_usage_and_the_finish_reason() -> None:
    finish_only = chunk(finish="STOP")
    del finish_only["candidates"][0]["content"]
    usage_only = {"usageMetadata": USAGE, "responseId": "resp-1"}
    mock = MockGemini([chunk({"text": "Sunny."}), usage_only, finish_only])
    deltas, message = await collect(model_for(mock), ASK)
    assert deltas == [TextDelta(0, "Sunny.")]
    assert message.parts == (TextPart(text="Sunny."),)
    assert (message.finish_reason, message.id) == ("stop", "resp-1")
    assert message.usage is not None
    assert message.usage.thinking_tokens == 30


def test_map_error_returns_what_it_does_not_know_as_it_is() -> None:
    model = model_for(MockGemini())
    unknown = RuntimeError("not the SDK's")
    assert model.map_error(unknown) is unknown
    mapped = model.map_error(httpx2.ReadTimeout("slow"))
    assert isinstance(mapped, ProviderError)
    assert (mapped.error_type, mapped.retryable, mapped.scope) == ("timeout", True, "gemini")
    assert GeminiModel.map_finish_reason("STOP", tool_calls=True) == "tool_call"
    assert GeminiModel.map_finish_reason("MAX_TOKENS") == "length"
