"""`GeminiInteractionsModel`'s mapping on the wire shapes the service sends (as recorded by
vercel/ai's `packages/google/src/interactions` fixtures and typed by the SDK), through the
official SDK over an in-process transport; and the rules it shares with `GeminiModel`."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from tests.support.gemini import API_KEY, Answer, MockGemini
from thinkagent import (
    Message,
    ModelResponse,
    OpaqueBlock,
    ProviderError,
    StreamInterrupted,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
    dump_messages,
    load_messages,
)
from thinkagent.errors import ConfigurationError
from thinkagent.providers.base import ModelRequest
from thinkagent.providers.gemini import GeminiInteractionsModel, GeminiModel, GeminiThinking
from thinkagent.providers.gemini._rules import (
    error_type,
    interaction_finish_reason,
    interactions_fields,
    thinking_for_model,
)

MODEL = "gemini-3-flash-preview"
SCOPE = "gemini-interactions"
SIGNATURE = "CiQBDDnWx+Xp0gYVp4DFf7zufCwAFeCgpkY+faWGOsR4MtgcquUK"  # base64, as sent
USAGE = {
    "total_tokens": 133,
    "total_input_tokens": 53,
    "input_tokens_by_modality": [{"modality": "text", "tokens": 53}],
    "total_cached_tokens": 12,
    "total_output_tokens": 15,
    "total_tool_use_tokens": 2,
    "total_thought_tokens": 65,
}
EXPECTED_USAGE = Usage(input_tokens=55, output_tokens=80, thinking_tokens=65, cache_read_tokens=12)


class Mock(MockGemini):
    """`MockGemini` whose client does not retry (the Interactions SDK retries by default)."""

    def __init__(self, *answers: Answer) -> None:
        super().__init__(*answers)
        options = types.HttpOptions(
            base_url="https://gemini.test",
            api_version="v1beta",
            retry_options=types.HttpRetryOptions(attempts=1),
            httpx_async_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self._handle)),  # pyright: ignore[reportPrivateUsage]
        )
        self.client = genai.Client(api_key=API_KEY, http_options=options)


def interaction(
    *steps: dict[str, Any], status: str = "requires_action", **extra: Any
) -> dict[str, Any]:
    return {
        "id": "v1_abc",
        "status": status,
        "steps": list(steps),
        "usage": USAGE,
        "role": "model",
        "object": "interaction",
        "model": MODEL,
        **extra,
    }


THOUGHT = {
    "type": "thought",
    "signature": SIGNATURE,
    "summary": [{"type": "text", "text": "Plan."}],
}
CALL = {
    "type": "function_call",
    "id": "61nzpsv4",
    "name": "getWeather",
    "arguments": {"location": "San Francisco"},
}


def events(*items: dict[str, Any]) -> list[dict[str, Any]]:
    return list(items)


def tool_call_stream(
    interaction_id: str = "v1_abc", status: str = "requires_action"
) -> list[dict[str, Any]]:
    """A function-calling stream in the shape the service sends (the recorded event order: a
    thought with its signature as one delta, a call whose arguments come as a delta)."""
    return [
        {
            "interaction": {
                "id": interaction_id,
                "status": "in_progress",
                "object": "interaction",
                "model": MODEL,
            },
            "event_type": "interaction.created",
        },
        {
            "interaction_id": interaction_id,
            "status": "in_progress",
            "event_type": "interaction.status_update",
        },
        {"index": 0, "step": {"type": "thought"}, "event_type": "step.start"},
        {
            "index": 0,
            "delta": {"type": "thought_summary", "content": {"type": "text", "text": "Pl"}},
            "event_type": "step.delta",
        },
        {
            "index": 0,
            "delta": {"type": "thought_summary", "content": {"type": "text", "text": "an."}},
            "event_type": "step.delta",
        },
        {
            "index": 0,
            "delta": {"signature": SIGNATURE, "type": "thought_signature"},
            "event_type": "step.delta",
        },
        {"index": 0, "event_type": "step.stop"},
        {
            "index": 1,
            "step": {
                "id": "61nzpsv4",
                "signature": "",
                "type": "function_call",
                "name": "getWeather",
                "arguments": {},
            },
            "event_type": "step.start",
        },
        {
            "index": 1,
            "delta": {"arguments": '{"location":', "type": "arguments_delta"},
            "event_type": "step.delta",
        },
        {
            "index": 1,
            "delta": {"arguments": '"San Francisco"}', "type": "arguments_delta"},
            "event_type": "step.delta",
        },
        {"index": 1, "event_type": "step.stop"},
        {
            "interaction": {
                "id": interaction_id,
                "status": status,
                "usage": USAGE,
                "object": "interaction",
                "model": MODEL,
            },
            "event_type": "interaction.completed",
        },
    ]


def ask(prompt: str = "What's the weather in San Francisco?") -> ModelRequest:
    return ModelRequest(messages=[Message.user(prompt)])


async def collect(model: GeminiInteractionsModel, request: ModelRequest) -> ModelResponse:
    out = [e async for e in model.stream(request)]
    last = out[-1]
    assert isinstance(last, ModelResponse)
    return last


# --- parsing --------------------------------------------------------------------------------


async def test_steps_map_in_order_with_each_signature_as_received() -> None:
    echoed = {"type": "user_input", "content": [{"type": "text", "text": "What's the weather?"}]}
    mock = Mock(interaction(echoed, THOUGHT, CALL))
    response = await GeminiInteractionsModel(MODEL, client=mock.client).request(ask())
    message = response.message
    assert message.parts == (
        ThinkingBlock(text="Plan.", signature=SIGNATURE),
        ToolCall(id="61nzpsv4", name="getWeather", arguments={"location": "San Francisco"}),
    )
    assert (message.id, message.scope, message.model, message.finish_reason) == (
        "v1_abc",
        SCOPE,
        MODEL,
        "tool_call",
    )
    assert message.usage == EXPECTED_USAGE
    assert mock.paths == ["/v1beta/interactions"]


async def test_a_stream_assembles_into_the_parsed_message() -> None:
    mock = Mock(tool_call_stream(), interaction(THOUGHT, CALL))
    model = GeminiInteractionsModel(MODEL, client=mock.client)
    streamed = await collect(model, ask())
    parsed = await model.request(ask())
    assert streamed.message == parsed.message
    assert mock.requests[0]["stream"] is True and "stream" not in mock.requests[1]


async def test_an_answer_and_its_thought_without_a_summary() -> None:
    answer = {
        "type": "model_output",
        "content": [{"type": "text", "text": "Sunny, "}, {"type": "text", "text": "16 C."}],
    }
    mock = Mock(
        interaction({"type": "thought", "signature": SIGNATURE}, answer, status="completed")
    )
    message = (await GeminiInteractionsModel(MODEL, client=mock.client).request(ask())).message
    assert message.parts == (
        ThinkingBlock(text="", signature=SIGNATURE),
        TextPart(text="Sunny, 16 C."),
    )
    assert (message.finish_reason, message.provider_details) == ("stop", {"status": "completed"})


async def test_a_server_tool_step_is_kept_whole_and_replayed_only_here() -> None:
    search = {
        "type": "google_search_call",
        "id": "gs1",
        "arguments": {"queries": ["weather sf"]},
        "signature": "c2VhcmNo",
    }
    unknown = {"type": "future_step", "payload": {"x": [1, 2]}}
    answer = {"type": "model_output", "content": [{"type": "text", "text": "Sunny."}]}
    mock = Mock(interaction(THOUGHT, search, unknown, answer, status="completed"))
    model = GeminiInteractionsModel(MODEL, client=mock.client)
    message = (await model.request(ask())).message
    assert message.parts[1] == OpaqueBlock(type="google_search_call", data=search)
    assert message.parts[2] == OpaqueBlock(type="future_step", data=unknown)
    history = load_messages(dump_messages([Message.user("q"), message, Message.user("again")]))
    steps = model.build_messages(history)
    assert steps[1:5] == [
        {"type": "thought", "signature": SIGNATURE, "summary": [{"type": "text", "text": "Plan."}]},
        search,
        unknown,
        answer,
    ]
    generate = GeminiModel("gemini-3-flash-preview", client=mock.client)
    contents = generate.build_messages(history)
    assert "google_search_call" not in json.dumps([c.model_dump(mode="json") for c in contents])


async def test_a_function_call_signature_is_kept_and_an_empty_one_is_none() -> None:
    signed = {**CALL, "signature": "ZnVuYw=="}
    second = {**CALL, "id": "other", "signature": ""}
    mock = Mock(interaction(THOUGHT, signed, second))
    message = (await GeminiInteractionsModel(MODEL, client=mock.client).request(ask())).message
    calls = message.tool_calls
    assert [c.signature for c in calls] == ["ZnVuYw==", None]
    steps = GeminiInteractionsModel(MODEL, client=mock.client).build_messages(
        [Message.user("q"), message]
    )
    assert steps[2]["signature"] == "ZnVuYw==" and "signature" not in steps[3]


async def test_continuation_hops_fold_into_one_message() -> None:
    hop1 = [
        {"interaction": {"id": "h1", "status": "in_progress"}, "event_type": "interaction.created"},
        {"index": 0, "step": {"type": "model_output"}, "event_type": "step.start"},
        {"index": 0, "delta": {"type": "text", "text": "Part 1 "}, "event_type": "step.delta"},
        {"index": 0, "event_type": "step.stop"},
        {
            "interaction": {
                "id": "h1",
                "status": "requires_continuation",
                "continuation_token": "tok",
                "usage": {"total_input_tokens": 10, "total_output_tokens": 3},
            },
            "event_type": "interaction.completed",
        },
    ]
    hop2 = [
        {"interaction": {"id": "h2", "status": "in_progress"}, "event_type": "interaction.created"},
        {"index": 0, "step": {"type": "model_output"}, "event_type": "step.start"},
        {"index": 0, "delta": {"type": "text", "text": "Part 2"}, "event_type": "step.delta"},
        {"index": 0, "event_type": "step.stop"},
        {
            "interaction": {
                "id": "h2",
                "status": "completed",
                "usage": {"total_input_tokens": 12, "total_output_tokens": 2},
            },
            "event_type": "interaction.completed",
        },
    ]
    mock = Mock(hop1, hop2)
    message = (await collect(GeminiInteractionsModel(MODEL, client=mock.client), ask())).message
    assert message.parts == (TextPart(text="Part 1 "), TextPart(text="Part 2"))
    assert (message.id, message.usage) == ("h2", Usage(input_tokens=22, output_tokens=5))
    assert mock.requests[1]["continuation_token"] == "tok"


async def test_a_failed_interaction_is_a_provider_error() -> None:
    failed = interaction(
        status="failed", errors=[{"code": "internal", "message": "Model crashed."}]
    )
    mock = Mock(failed)
    with pytest.raises(ProviderError) as caught:
        await GeminiInteractionsModel(MODEL, client=mock.client).request(ask())
    assert (caught.value.message, caught.value.error_type) == ("Model crashed.", "failed")


async def test_a_body_the_sdk_cannot_validate_is_still_read() -> None:
    """The SDK builds an unvalidated object for a body off its schema: read as data."""
    odd = {
        "status": "completed",
        "steps": [{"type": "model_output", "content": [{"type": "text", "text": "Hi."}]}],
        "usage": {"total_input_tokens": "lots"},
    }
    mock = Mock(odd)
    message = (await GeminiInteractionsModel(MODEL, client=mock.client).request(ask())).message
    assert message.parts == (TextPart(text="Hi."),)
    assert message.usage is not None and message.usage.input_tokens == 0


# --- streams that go wrong ------------------------------------------------------------------


async def test_a_stream_without_its_completion_is_interrupted_unsigned() -> None:
    cut = tool_call_stream()[:5]  # the signature never came
    mock = Mock(cut)
    with pytest.raises(StreamInterrupted) as caught:
        await collect(GeminiInteractionsModel(MODEL, client=mock.client), ask())
    partial = caught.value.partial
    assert partial is not None
    assert partial.parts == (ThinkingBlock(text="Plan."),)


async def test_a_broken_connection_mid_stream_is_interrupted() -> None:
    body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in tool_call_stream()[:9])

    class Broken(httpx2.AsyncByteStream):
        async def __aiter__(self) -> Any:
            yield body
            raise httpx2.ReadError("connection reset")

    mock = Mock(
        lambda: httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=Broken())
    )
    with pytest.raises(StreamInterrupted) as caught:
        await collect(GeminiInteractionsModel(MODEL, client=mock.client), ask())
    partial = caught.value.partial
    assert partial is not None and isinstance(partial.parts[0], ThinkingBlock)
    assert partial.parts[0].signature == SIGNATURE  # complete before the cut
    assert partial.parts[1] == ToolCall(id="61nzpsv4", name="getWeather", arguments='{"location":')


async def test_an_error_event_and_an_error_before_the_stream() -> None:
    error = {
        "event_type": "error",
        "error": {"code": "invalid_argument", "message": "Invalid thought signature."},
    }
    mock = Mock(
        [*tool_call_stream()[:3], error],
        httpx2.Response(
            429,
            json={"error": {"code": 429, "message": "Slow down.", "status": "RESOURCE_EXHAUSTED"}},
        ),
    )
    model = GeminiInteractionsModel(MODEL, client=mock.client)
    with pytest.raises(ProviderError) as event_error:
        await collect(model, ask())
    assert (event_error.value.error_type, event_error.value.retryable) == (
        "invalid_thought_signature",
        False,
    )
    with pytest.raises(ProviderError) as status_error:
        await collect(model, ask())
    assert (
        status_error.value.status,
        status_error.value.error_type,
        status_error.value.retryable,
    ) == (429, "RESOURCE_EXHAUSTED", True)


# --- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "message", "kind", "retryable"),
    [
        (
            400,
            {
                "error": {
                    "code": 400,
                    "message": "Corrupted thought signature.",
                    "status": "INVALID_ARGUMENT",
                }
            },
            "Corrupted thought signature.",
            "invalid_thought_signature",
            False,
        ),
        (
            409,
            {"error": {"code": 409, "message": "Aborted.", "status": "ABORTED"}},
            "Aborted.",
            "ABORTED",
            True,
        ),
        (500, "not json at all", "not json at all", None, True),
    ],
)
async def test_service_errors(
    status: int, body: Any, message: str, kind: str | None, retryable: bool
) -> None:
    answer = (
        httpx2.Response(status, json=body)
        if isinstance(body, dict)
        else httpx2.Response(status, text=body)
    )
    mock = Mock(answer)
    model = GeminiInteractionsModel(MODEL, client=mock.client)
    with pytest.raises(ProviderError) as caught:
        await model.request(ask())
    assert (
        caught.value.status,
        caught.value.message,
        caught.value.error_type,
        caught.value.retryable,
    ) == (
        status,
        message,
        kind,
        retryable,
    )


async def test_transport_errors_and_what_map_error_does_not_know() -> None:
    mock = Mock(httpx2.ConnectError("refused"))
    model = GeminiInteractionsModel(MODEL, client=mock.client)
    with pytest.raises(ProviderError) as caught:
        await model.request(ask())
    assert (caught.value.error_type, caught.value.retryable) == ("connection_error", True)
    odd = RuntimeError("odd")
    assert model.map_error(odd) is odd
    cut = genai_errors.ContinuationInterruptedError(
        "hop 2 failed",
        continuation_token="t",
        interaction_id="i",
        continuation_ids=["i"],
        partial_interaction=None,
    )
    mapped = model.map_error(cut)
    assert (
        isinstance(mapped, ProviderError)
        and mapped.error_type == "continuation_interrupted"
        and mapped.retryable
    )


# --- replay ---------------------------------------------------------------------------------


def test_user_turns_results_and_the_opening_input() -> None:
    model = GeminiInteractionsModel(MODEL, client=Mock().client)
    assistant = Message(
        role="assistant",
        parts=(
            ThinkingBlock(text="t", signature=SIGNATURE),
            ToolCall(id="a", name="f", arguments={"x": 1}),
            ToolCall(id="b", name="g", arguments='{"y": 2}'),
        ),
        scope=SCOPE,
        model=MODEL,
    )
    results = Message(
        role="user",
        parts=(
            ToolResult(call_id="a", name="f", content={"ok": True}),
            ToolResult(call_id="b", name="g", content=[1, 2], is_error=True),
            TextPart(text="and?"),
        ),
    )
    steps = model.build_messages([Message.user("q"), assistant, results])
    assert steps[3:] == [
        {"type": "function_call", "id": "b", "name": "g", "arguments": {"y": 2}},
        {"type": "function_result", "call_id": "a", "name": "f", "result": {"ok": True}},
        {
            "type": "function_result",
            "call_id": "b",
            "name": "g",
            "result": "[1, 2]",
            "is_error": True,
        },
        {"type": "user_input", "content": [{"type": "text", "text": "and?"}]},
    ]
    only_model = model.build_messages(
        [assistant.model_copy(update={"parts": (TextPart(text="Hello."),)})]
    )
    assert only_model[0] == {"type": "user_input", "content": [{"type": "text", "text": ""}]}


def test_a_signature_that_is_not_base64_is_a_history_error() -> None:
    from thinkagent import HistoryError

    model = GeminiInteractionsModel(MODEL, client=Mock().client)
    bad = Message(
        role="assistant", parts=(ThinkingBlock(signature="not base64!"),), scope=SCOPE, model=MODEL
    )
    with pytest.raises(HistoryError) as caught:
        model.build_messages([Message.user("q"), bad, Message.user("again")])
    assert (caught.value.message_index, caught.value.part_index) == (1, 0)


def test_vertex_clients_are_their_own_scope() -> None:
    from thinkagent.otel import provider_name

    assert provider_name("gemini-interactions") == "gcp.gemini"
    assert provider_name("vertex-interactions") == "gcp.vertex_ai"
    assert (
        GeminiInteractionsModel(MODEL, client=MockGemini(vertex=True).client).scope
        == "vertex-interactions"
    )


def test_a_client_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigurationError, match="no Gemini credentials"):
        GeminiInteractionsModel(MODEL)
    monkeypatch.setenv("GEMINI_API_KEY", "secret-key")
    model = GeminiInteractionsModel(MODEL, max_retries=3)
    options = model.client._api_client._http_options.retry_options  # pyright: ignore[reportPrivateUsage]
    assert options is not None and options.attempts == 4
    assert "secret-key" not in repr(model)


# --- the rules ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "takes_minimal"),
    [
        ("gemini-3-flash-preview", True),
        ("gemini-3.5-flash-lite", True),
        ("gemini-3.6-flash", True),
        ("gemini-3-pro-preview", False),
        ("gemini-3.1-pro-preview", False),
        ("gemini-3.7-flash", False),
        ("gemini-3.8-flash", False),
        ("gemini-flash-latest", True),  # a name that does not tell: the service decides
    ],
)
def test_minimal_is_refused_where_the_model_refuses_it(model: str, takes_minimal: bool) -> None:
    minimal = GeminiThinking(level="minimal")
    if takes_minimal:
        assert thinking_for_model(model, minimal).level == "MINIMAL"
        return
    with pytest.raises(ConfigurationError) as caught:
        thinking_for_model(model, minimal)
    assert "Thinking level MINIMAL is not supported for this model." in str(caught.value)
    assert "LOW" in str(caught.value)
    with pytest.raises(ConfigurationError):
        GeminiModel(model, client=Mock().client, thinking=minimal)


def test_interactions_fields_and_finish_reasons() -> None:
    assert interactions_fields(GeminiThinking()) == {}
    assert interactions_fields(GeminiThinking(level="HIGH", include_thoughts=False)) == {
        "thinking_level": "high",
        "thinking_summaries": "none",
    }
    assert interactions_fields(thinking_for_model(MODEL, None)) == {"thinking_summaries": "auto"}
    assert [
        interaction_finish_reason(s, tool_calls=False)
        for s in (
            "completed",
            "requires_action",
            "incomplete",
            "budget_exceeded",
            "failed",
            "cancelled",
            "in_progress",
            "requires_continuation",
            None,
        )
    ] == ["stop", "tool_call", "length", "length", "error", "error", None, None, None]
    assert interaction_finish_reason("completed", tool_calls=True) == "tool_call"


@pytest.mark.parametrize(
    "message",
    [
        "Corrupted thought signature.",
        "Invalid thought signature.",
        "Unable to submit request because Thought signature is not valid.. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini",
    ],
)
def test_the_three_signature_refusals_have_one_error_type(message: str) -> None:
    assert error_type(message, "INVALID_ARGUMENT") == "invalid_thought_signature"
    assert error_type("Something else.", "INVALID_ARGUMENT") == "INVALID_ARGUMENT"


# --- the schema before May 2026 -------------------------------------------------------------


LEGACY_CALL = {
    "id": "v1_old",
    "status": "requires_action",
    "outputs": [
        {"signature": SIGNATURE, "type": "thought"},
        {"text": "Let me look.", "type": "text"},
        {
            "id": "r7b1dyif",
            "type": "function_call",
            "name": "getWeather",
            "arguments": {"location": "Paris"},
        },
    ],
    "usage": USAGE,
    "role": "model",
    "object": "interaction",
    "model": "gemini-2.5-flash",
}


def legacy_stream() -> list[dict[str, Any]]:
    """The same response in the earlier schema's events: `content.*`, the call whole."""
    return [
        {
            "interaction": {"id": "v1_old", "status": "in_progress"},
            "event_type": "interaction.start",
        },
        {
            "interaction_id": "v1_old",
            "status": "in_progress",
            "event_type": "interaction.status_update",
        },
        {"index": 0, "content": {"type": "thought"}, "event_type": "content.start"},
        {
            "index": 0,
            "delta": {"signature": SIGNATURE, "type": "thought_signature"},
            "event_type": "content.delta",
        },
        {"index": 0, "event_type": "content.stop"},
        {"index": 1, "content": {"type": "text"}, "event_type": "content.start"},
        {"index": 1, "delta": {"text": "Let me ", "type": "text"}, "event_type": "content.delta"},
        {"index": 1, "delta": {"text": "look.", "type": "text"}, "event_type": "content.delta"},
        {"index": 1, "event_type": "content.stop"},
        {
            "index": 2,
            "content": {"type": "function_call", "id": "r7b1dyif", "name": "getWeather"},
            "event_type": "content.start",
        },
        {
            "index": 2,
            "delta": {
                "type": "function_call",
                "id": "r7b1dyif",
                "name": "getWeather",
                "arguments": {"location": "Paris"},
            },
            "event_type": "content.delta",
        },
        {"index": 2, "event_type": "content.stop"},
        {
            "interaction": {"id": "v1_old", "status": "requires_action", "usage": USAGE},
            "event_type": "interaction.complete",
        },
    ]


async def test_the_earlier_schema_parses_and_streams_alike() -> None:
    """Responses recorded before the steps schema (`outputs`, `content.*` events) read as
    the same message; it goes back as steps."""
    mock = Mock(LEGACY_CALL, legacy_stream())
    model = GeminiInteractionsModel("gemini-2.5-flash", client=mock.client)
    parsed = (await model.request(ask())).message
    streamed = (await collect(model, ask())).message
    assert parsed == streamed
    assert parsed.parts == (
        ThinkingBlock(text="", signature=SIGNATURE),
        TextPart(text="Let me look."),
        ToolCall(id="r7b1dyif", name="getWeather", arguments={"location": "Paris"}),
    )
    assert (parsed.id, parsed.finish_reason, parsed.usage) == (
        "v1_old",
        "tool_call",
        EXPECTED_USAGE,
    )
    result = ToolResult(call_id="r7b1dyif", name="getWeather", content="sunny")
    steps = model.build_messages([Message.user("q"), parsed, Message(role="user", parts=(result,))])
    assert [s["type"] for s in steps] == [
        "user_input",
        "thought",
        "model_output",
        "function_call",
        "function_result",
    ]
    assert steps[1] == {"type": "thought", "signature": SIGNATURE}
