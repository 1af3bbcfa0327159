"""`OpenAIResponsesModel`'s pure mappings: output items to parts, the input items a history
replays (reasoning never orphaned, trimmed histories included), streams and errors."""

from __future__ import annotations

import copy
from typing import Any

import httpx2
import openai
import pytest
from openai.types.responses import Response

from tests.support.openai import FakeClient, FakeStream, response_events, stream_events
from thinkagent import (
    Citation,
    ConfigurationError,
    Message,
    ModelRequest,
    ModelResponse,
    ProviderError,
    StreamInterrupted,
    TextDelta,
    TextPart,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
    ToolResult,
    Usage,
    trim_history,
    validate_history,
)
from thinkagent.providers.openai import (
    AZURE_RESPONSES_SCOPE,
    RESPONSES_SCOPE,
    OpenAIResponsesModel,
    OpenAIThinking,
    responses_scope,
)

WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
SUMMARY = [
    {"type": "summary_text", "text": "**Plan**\n\nCall the tool."},
    {"type": "summary_text", "text": "**Check**\n\nParis."},
]


def reasoning_item(n: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"rs_{n}",
        "type": "reasoning",
        "summary": SUMMARY,
        "encrypted_content": f"gAAAAA-{n}",
        **extra,
    }


def call_item(n: int = 1) -> dict[str, Any]:
    return {
        "id": f"fc_{n}",
        "type": "function_call",
        "call_id": f"call_{n}",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
        "status": "completed",
    }


def message_item(text: str = "Sunny.", n: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
        **extra,
    }


def response(*output: dict[str, Any], status: str = "completed", **extra: Any) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-5",
        "status": status,
        "output": list(output),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 50,
            "input_tokens_details": {"cached_tokens": 8, "cache_write_tokens": 0},
            "output_tokens": 40,
            "output_tokens_details": {"reasoning_tokens": 25},
            "total_tokens": 90,
        },
        **extra,
    }


def openai_client() -> FakeClient:
    """A fake client whose base URL is OpenAI's own."""
    client = FakeClient()
    client.base_url = "https://api.openai.com/v1"
    return client


def model(**kw: Any) -> OpenAIResponsesModel:
    return OpenAIResponsesModel("gpt-5", client=openai_client(), **kw)  # type: ignore[arg-type]


def parse(body: dict[str, Any], **kw: Any) -> Message:
    return model(**kw).parse_response(Response.model_validate(body)).message


def sent(messages: list[Message], **kw: Any) -> list[dict[str, Any]]:
    """The `input` items a model of the `openai-responses` scope sends for a history."""
    return model(**kw).build_messages(messages)


def results(*call_ids: str) -> Message:
    return Message.user_results(
        ToolResult(call_id=c, name="get_weather", content="sunny") for c in call_ids
    )


# --- output ----------------------------------------------------------------------------------


def test_output_items_become_parts_in_order() -> None:
    message = parse(response(reasoning_item(), call_item()))
    block, call = message.parts
    assert isinstance(block, ThinkingBlock) and isinstance(call, ToolCall)
    assert block.id == "rs_1" and block.signature == "gAAAAA-1"
    assert block.text == "**Plan**\n\nCall the tool.\n\n**Check**\n\nParis."
    assert block.provider_details == {"summary": SUMMARY}
    assert call == ToolCall(
        id="call_1",
        name="get_weather",
        arguments='{"city": "Paris"}',
        provider_details={"item_id": "fc_1", "reasoning_id": "rs_1"},
    )
    assert message.scope == RESPONSES_SCOPE and message.model == "gpt-5" and message.id == "resp_1"
    assert message.finish_reason == "tool_call" and message.provider_details == {
        "finish_reason": "completed"
    }
    assert message.usage == Usage(
        input_tokens=50, output_tokens=40, thinking_tokens=25, cache_read_tokens=8
    )


def test_reasoning_text_content_and_empty_items_are_kept() -> None:
    content = [{"type": "reasoning_text", "text": "raw thoughts"}]
    open_item = {"id": "rs_2", "type": "reasoning", "summary": [], "content": content}
    bare = {"id": "rs_3", "type": "reasoning", "summary": []}
    first, second, _ = parse(response(open_item, bare, message_item())).parts
    assert first == ThinkingBlock(
        text="raw thoughts", id="rs_2", provider_details={"summary": [], "content": content}
    )
    assert second == ThinkingBlock(id="rs_3", provider_details={"summary": []})


def test_message_parts_keep_their_item_phase_annotations_and_refusals() -> None:
    item = message_item(phase="final_answer")
    item["content"] = [
        {
            "type": "output_text",
            "text": "See ",
            "annotations": [
                {
                    "type": "url_citation",
                    "url": "https://example.com",
                    "title": "t",
                    "start_index": 0,
                    "end_index": 3,
                }
            ],
        },
        {"type": "refusal", "refusal": "Not that."},
    ]
    message = parse(response(item))
    annotation: dict[str, Any] = {
        "type": "url_citation",
        "url": "https://example.com",
        "title": "t",
        "start_index": 0,
        "end_index": 3,
    }
    assert message.parts == (
        TextPart(
            text="See ",
            provider_details={"item_id": "msg_1", "phase": "final_answer"},
            citations=(
                Citation(
                    type="url_citation",
                    url="https://example.com",
                    title="t",
                    start=0,
                    end=3,
                    data=annotation,
                ),
            ),
        ),
        TextPart(
            text="Not that.",
            provider_details={"item_id": "msg_1", "phase": "final_answer", "refusal": True},
        ),
    )
    assert message.finish_reason == "stop"
    assert sent([Message.user("q"), message])[1] == {
        **item,
        "content": item["content"],
    }


def test_incomplete_and_failed_responses() -> None:
    incomplete = parse(
        response(
            reasoning_item(),
            status="incomplete",
            incomplete_details={"reason": "max_output_tokens"},
        )
    )
    assert incomplete.finish_reason == "length" and incomplete.provider_details == {
        "finish_reason": "max_output_tokens"
    }
    with pytest.raises(ProviderError) as info:
        parse(
            response(
                status="failed", error={"code": "server_error", "message": "The model failed."}
            )
        )
    assert info.value.message == "The model failed." and info.value.retryable
    assert info.value.error_type == "server_error"


# --- input -----------------------------------------------------------------------------------


def turn(*items: dict[str, Any]) -> Message:
    return Message(
        role="assistant",
        parts=parse(response(*items)).parts,
        scope=RESPONSES_SCOPE,
        model="gpt-5",
    )


def test_reasoning_goes_back_byte_for_byte_before_its_item() -> None:
    history = [Message.user("q"), turn(reasoning_item(), call_item()), results("call_1")]
    assert sent(history) == [
        {"role": "user", "content": "q"},
        {"type": "reasoning", "id": "rs_1", "summary": SUMMARY, "encrypted_content": "gAAAAA-1"},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
            "id": "fc_1",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
    ]


def test_reasoning_content_goes_back_too() -> None:
    content = [{"type": "reasoning_text", "text": "raw"}]
    history = [Message.user("q"), turn(reasoning_item(content=content), message_item())]
    assert sent(history)[1] == {**reasoning_item(), "content": content}


def test_a_reasoning_item_without_its_following_item_is_not_sent() -> None:
    alone = turn(reasoning_item(1))  # e.g. an incomplete response: reasoning only
    history = [Message.user("q"), alone, Message.user("again")]
    assert sent(history) == [
        {"role": "user", "content": "q"},
        {"role": "user", "content": "again"},
    ]
    # and when a processor removed the item that followed it
    full = turn(reasoning_item(1), message_item("Hi."), reasoning_item(2))
    cut = full.model_copy(update={"parts": full.parts[:1] + full.parts[2:]})
    assert [i.get("type") for i in sent([Message.user("q"), cut])] == [None]


def test_consecutive_reasoning_items_go_back_together() -> None:
    items = sent([Message.user("q"), turn(reasoning_item(1), reasoning_item(2), message_item())])
    assert [i.get("type") for i in items] == [None, "reasoning", "reasoning", "message"]


def test_an_item_whose_reasoning_cannot_go_back_loses_its_id() -> None:
    parsed = turn(reasoning_item(1), call_item(1))
    block = parsed.parts[0]
    assert isinstance(block, ThinkingBlock)
    unsigned = parsed.model_copy(
        update={"parts": (block.model_copy(update={"signature": None}), parsed.parts[1])}
    )
    history = [Message.user("q"), unsigned, results("call_1")]
    items = sent(history)
    assert items[1] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    }
    # with store=True the service finds the item by id
    stored = sent(history, store=True)
    assert stored[1] == {"type": "reasoning", "id": "rs_1", "summary": SUMMARY}
    assert stored[2]["id"] == "fc_1"
    text_turn = turn(reasoning_item(1), message_item("Hi.", phase="commentary"))
    text_block = text_turn.parts[0]
    assert isinstance(text_block, ThinkingBlock)
    stripped = text_turn.model_copy(
        update={"parts": (text_block.model_copy(update={"signature": None}), text_turn.parts[1])}
    )
    assert sent([Message.user("q"), stripped])[1] == {
        "role": "assistant",
        "content": "Hi.",
        "phase": "commentary",
    }


def test_an_item_whose_reasoning_was_removed_goes_back_without_its_id() -> None:
    """A processor that strips reasoning blocks must not leave items pointing at them."""
    calls = turn(reasoning_item(1), call_item(1))
    answer = turn(reasoning_item(2), message_item("Sunny.", 2, phase="final_answer"))
    assert calls.parts[1].provider_details == {"item_id": "fc_1", "reasoning_id": "rs_1"}
    history = [
        Message.user("q"),
        calls.model_copy(update={"parts": calls.parts[1:]}),
        results("call_1"),
        answer.model_copy(update={"parts": answer.parts[1:]}),
    ]
    assert sent(history)[1:] == [
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {"role": "assistant", "content": "Sunny.", "phase": "final_answer"},
    ]


def test_text_parts_of_one_message_item_go_back_as_one_item() -> None:
    item = message_item()
    item["content"] = [
        {"type": "output_text", "text": "One.", "annotations": []},
        {"type": "output_text", "text": "Two.", "annotations": []},
    ]
    history = [Message.user("q"), turn(reasoning_item(), item, message_item("Three.", 2))]
    assert sent(history)[1:] == [reasoning_item(), item, message_item("Three.", 2)]


def test_other_scopes_send_text_and_calls_without_proofs_or_ids() -> None:
    foreign = Message(
        role="assistant",
        parts=(
            ThinkingBlock.signed("plan", "SIG-anthropic"),
            TextPart(text="Checking."),
            ToolCall(
                id="toolu_1",
                name="get_weather",
                arguments={"city": "Paris"},
                provider_details={"item_id": "x"},
            ),
        ),
        scope="anthropic",
    )
    azure_turn = turn(reasoning_item(), call_item()).model_copy(
        update={"scope": AZURE_RESPONSES_SCOPE}
    )
    history = [
        Message.user("q"),
        foreign,
        results("toolu_1"),
        Message.user("more"),
        azure_turn,
        results("call_1"),
    ]
    items = sent(history)
    assert items[1:3] == [
        {"role": "assistant", "content": "Checking."},
        {
            "type": "function_call",
            "call_id": "toolu_1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
    ]
    assert items[5] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    }
    assert "SIG" not in str(items) and "gAAAAA" not in str(items) and "reasoning" not in str(items)
    as_text = sent(history, foreign_reasoning="text")
    assert as_text[1] == {"role": "assistant", "content": "<thinking>\nplan\n</thinking>"}


def test_trimmed_histories_never_orphan_reasoning() -> None:
    history: list[Message] = []
    for n in range(1, 6):
        history += [
            Message.user(f"question {n}"),
            turn(reasoning_item(10 * n), call_item(10 * n)),
            results(f"call_{10 * n}"),
            turn(reasoning_item(10 * n + 1), message_item("Done.", 10 * n + 1)),
        ]
    for keep in range(1, len(history) + 1):
        trimmed = trim_history(keep)(history)
        validate_history(trimmed)
        items = sent(trimmed)
        for i, item in enumerate(items):
            if item.get("type") == "reasoning":
                follower = items[i + 1]
                assert follower.get("type") in ("function_call", "message", "reasoning")
        assert items[-1].get("type") != "reasoning"


# --- request ---------------------------------------------------------------------------------


def test_request_parameters() -> None:
    chosen = model(
        thinking=OpenAIThinking(effort="high", summary="detailed"),
        settings={"max_tokens": 99},
        extra_headers={"x-a": "1"},
    )
    params = chosen.build_request(
        ModelRequest(
            messages=[Message.user("q")],
            tools=[WEATHER],
            instructions="Be brief.",
            settings={
                "tool_choice": "get_weather",
                "parallel_tool_calls": False,
                "temperature": 1.0,
                "timeout": 5.0,
            },
        )
    )
    assert params == {
        "model": "gpt-5",
        "input": [{"role": "user", "content": "q"}],
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "instructions": "Be brief.",
        "reasoning": {"effort": "high", "summary": "detailed"},
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "description": "Current weather for a city.",
                "parameters": WEATHER.parameters,
                "strict": False,
            }
        ],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "parallel_tool_calls": False,
        "max_output_tokens": 99,
        "temperature": 1.0,
        "timeout": 5.0,
        "extra_headers": {"x-a": "1"},
    }
    assert "reasoning" not in model(thinking=OpenAIThinking()).build_request(
        ModelRequest(messages=[Message.user("q")])
    )


def test_invalid_settings() -> None:
    with pytest.raises(ConfigurationError, match="summary"):
        model(thinking=OpenAIThinking(summary="short"))  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="effort"):
        model(thinking=OpenAIThinking(effort="huge"))  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="stop sequences"):
        model().build_request(
            ModelRequest(messages=[Message.user("q")], settings={"stop_sequences": ["x"]})
        )
    with pytest.raises(ConfigurationError, match="names no tool"):
        model().build_request(
            ModelRequest(
                messages=[Message.user("q")], tools=[WEATHER], settings={"tool_choice": "x"}
            )
        )


def test_scopes() -> None:
    assert model().scope == RESPONSES_SCOPE == "openai-responses"
    azure = openai.AsyncAzureOpenAI(
        api_key="k", api_version="2025-04-01-preview", azure_endpoint="https://x.openai.azure.com"
    )
    assert (
        OpenAIResponsesModel("dep", client=azure).scope
        == AZURE_RESPONSES_SCOPE
        == "azure-responses"
    )
    assert model(scope="my-vllm").scope == "my-vllm"
    assert repr(model()) == "OpenAIResponsesModel(model_name='gpt-5', scope='openai-responses')"


@pytest.mark.parametrize(
    ("base_url", "scope"),
    [
        ("https://api.openai.com/v1", "openai-responses"),
        ("https://api.openai.com:443/v1/", "openai-responses"),
        ("https://my-resource.openai.azure.com/openai/v1/", "azure-responses"),
        ("https://My-Resource.cognitiveservices.azure.com/openai/v1", "azure-responses"),
        ("https://openrouter.ai/api/v1", "openai-responses@openrouter.ai"),
        # a server on this machine is one scope whatever its port: the emulator's port
        # changes from run to run, and a history recorded on one must replay on the next
        ("http://localhost:8000/v1", "openai-responses@localhost"),
        ("http://127.0.0.1:11434/v1", "openai-responses@localhost"),
        ("http://[::1]:8000/v1", "openai-responses@localhost"),
        ("https://gateway.example.com/openai/v1", "openai-responses@gateway.example.com"),
        ("https://api.openai.com.evil.example/v1", "openai-responses@api.openai.com.evil.example"),
    ],
)
def test_the_scope_comes_from_the_base_url_host(base_url: str, scope: str) -> None:
    client = openai.AsyncOpenAI(api_key="k", base_url=base_url)
    assert OpenAIResponsesModel("gpt-5", client=client).scope == scope
    assert responses_scope(client) == scope
    assert OpenAIResponsesModel("gpt-5", client=client, scope="mine").scope == "mine"


def test_a_plain_client_elsewhere_does_not_get_openais_reasoning() -> None:
    """Encrypted reasoning from api.openai.com is foreign to a local server (and the reverse)."""
    openai_turn = parse(response(reasoning_item(), call_item()))
    assert openai_turn.scope == "openai-responses"
    local = OpenAIResponsesModel(
        "gpt-5",
        client=openai.AsyncOpenAI(api_key="k", base_url="http://localhost:8000/v1"),
    )
    items = local.build_messages([Message.user("q"), openai_turn, results("call_1")])
    assert not any(item.get("type") == "reasoning" for item in items)
    assert "gAAAA" not in str(items)


# --- streams ---------------------------------------------------------------------------------


async def collect(
    chosen: OpenAIResponsesModel, events: list[Any], error: BaseException | None = None
) -> list[Any]:
    chosen.client.replies.append(FakeStream(stream_events(events), error))  # type: ignore[attr-defined]
    return [
        e async for e in chosen.stream(ModelRequest(messages=[Message.user("q")], tools=[WEATHER]))
    ]


BODY = response(
    reasoning_item(content=[{"type": "reasoning_text", "text": "raw"}]),
    call_item(),
    message_item("It is sunny."),
)


async def test_streamed_equals_non_streamed() -> None:
    chosen = model()
    out = await collect(chosen, response_events(BODY))
    final = out[-1]
    assert isinstance(final, ModelResponse)
    assert final.message == parse(BODY)
    deltas = out[:-1]
    thinking_text = "".join(d.text for d in deltas if isinstance(d, ThinkingDelta))
    assert thinking_text.startswith(parse(BODY).thinking[0].text)
    assert ThinkingDelta(0, signature="gAAAAA-1") in deltas
    assert (
        ToolCallDelta(1, id="call_1", name="get_weather", provider_details={"item_id": "fc_1"})
        in deltas
    )
    assert (
        "".join(d.args_fragment for d in deltas if isinstance(d, ToolCallDelta))
        == '{"city": "Paris"}'
    )
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "It is sunny."
    assert {d.index for d in deltas if isinstance(d, TextDelta)} == {2}
    assert chosen.client.calls[0]["stream"] is True  # type: ignore[attr-defined]


async def test_summary_parts_are_joined_by_a_blank_line_in_the_stream() -> None:
    body = response(reasoning_item(), message_item())
    out = await collect(model(), response_events(body, chunk=5))
    streamed = "".join(d.text for d in out if isinstance(d, ThinkingDelta))
    assert streamed == parse(body).thinking[0].text


async def test_reasoning_text_without_a_summary_streams_as_the_block_text() -> None:
    content = [
        {"type": "reasoning_text", "text": "first thought"},
        {"type": "reasoning_text", "text": "second thought"},
    ]
    body = response({"id": "rs_9", "type": "reasoning", "summary": [], "content": content})
    out = await collect(model(), response_events(body, chunk=4))
    assert out[-1].message == parse(body)
    streamed = "".join(d.text for d in out if isinstance(d, ThinkingDelta))
    assert streamed == "first thought\n\nsecond thought" == parse(body).thinking[0].text


async def test_what_only_the_done_items_carry_reaches_the_streamed_message() -> None:
    item = message_item(phase="final_answer")
    item["content"] = [
        {
            "type": "output_text",
            "text": "See the source.",
            "annotations": [
                {
                    "type": "url_citation",
                    "url": "https://example.com",
                    "title": "t",
                    "start_index": 0,
                    "end_index": 3,
                }
            ],
        },
        {"type": "refusal", "refusal": "Not that."},
    ]
    body = response(reasoning_item(), item)
    out = await collect(model(), response_events(body))
    final = out[-1].message
    assert final == parse(body)
    assert final.parts[1].provider_details["reasoning_id"] == "rs_1"  # type: ignore[index]
    assert [d.text for d in out if isinstance(d, TextDelta) and d.index == 2] == ["Not tha", "t."]


async def test_a_stream_without_completed_is_interrupted_and_unsigned() -> None:
    events = response_events(BODY)
    cut = (
        next(
            i for i, e in enumerate(events) if e["type"] == "response.reasoning_summary_text.delta"
        )
        + 2
    )
    with pytest.raises(StreamInterrupted) as info:
        await collect(model(), events[:cut])
    partial = info.value.partial
    assert partial is not None and partial.thinking[0].signature is None
    assert partial.thinking[0].id == "rs_1"
    with pytest.raises(StreamInterrupted):
        await collect(model(), events[:-1])


async def test_error_events_and_failed_responses() -> None:
    events = response_events(BODY)[:4]
    error = {
        "type": "error",
        "code": "server_error",
        "message": "The server had an error.",
        "param": None,
        "sequence_number": 4,
    }
    with pytest.raises(ProviderError) as info:
        await collect(model(), [*events, error])
    assert info.value.message == "The server had an error." and info.value.retryable
    failed = {
        "type": "response.failed",
        "sequence_number": 4,
        "response": response(
            status="failed", error={"code": "rate_limit_exceeded", "message": "Slow down."}
        ),
    }
    with pytest.raises(ProviderError, match="Slow down") as info:
        await collect(model(), [*events, failed])
    assert not isinstance(info.value, StreamInterrupted)


async def test_a_dropped_connection_is_interrupted() -> None:
    request = httpx2.Request("POST", "https://api.example.com/v1/responses")
    with pytest.raises(StreamInterrupted) as info:
        await collect(model(), response_events(BODY)[:6], openai.APITimeoutError(request))
    assert isinstance(info.value.__cause__, openai.APITimeoutError)


def test_parsing_does_not_share_state_with_the_response() -> None:
    body = copy.deepcopy(BODY)
    message = parse(body)
    body["output"][0]["summary"][0]["text"] = "changed"
    assert message.thinking[0].provider_details == {
        "summary": SUMMARY,
        "content": [{"type": "reasoning_text", "text": "raw"}],
    }
