"""`OpenAIChatModel`'s pure mappings: dialects, requests, replay rules, responses, usage,
finish reasons, streams and errors (no network)."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from tests.support.openai import FakeClient, FakeStream
from thinkagent import (
    ConfigurationError,
    Message,
    ModelRequest,
    ModelResponse,
    PartEnd,
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
)
from thinkagent.providers.openai import (
    DIALECTS,
    ChatDialect,
    OpenAIChatModel,
    OpenAIThinking,
    resolve_dialect,
)
from thinkagent.providers.openai._wire import redact

WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def model(dialect: str | ChatDialect = "deepseek", name: str = "deepseek-reasoner", **kw: Any):
    return OpenAIChatModel(name, client=FakeClient(), dialect=dialect, **kw)  # type: ignore[arg-type]


def assistant(*parts: Any, scope: str = "deepseek") -> Message:
    return Message(role="assistant", parts=tuple(parts), scope=scope, model="m")


def results(*call_ids: str) -> Message:
    return Message.user_results(
        ToolResult(call_id=c, name="get_weather", content="sunny") for c in call_ids
    )


def call(i: int, arguments: Any = '{"city": "Paris"}') -> ToolCall:
    return ToolCall(id=f"call_{i}", name="get_weather", arguments=arguments)


# --- dialects --------------------------------------------------------------------------------


def test_dialects_by_name_alias_and_object() -> None:
    assert resolve_dialect("deepseek") is DIALECTS["deepseek"]
    assert resolve_dialect("DeepSeek").name == "deepseek"
    assert resolve_dialect("kimi").name == "moonshot"
    custom = ChatDialect("my-vllm", reasoning="reasoning", replay="tool_loop")
    assert resolve_dialect(custom) is custom
    assert model(custom).scope == "my-vllm"


def test_unknown_dialect_lists_the_known_ones() -> None:
    with pytest.raises(ConfigurationError) as info:
        resolve_dialect("deepsick")
    text = str(info.value)
    for name in ("deepseek", "qwen", "vllm", "moonshot", "kimi", "openrouter", "ollama", "groq"):
        assert name in text
    assert "think_tags" in text and "ChatDialect" in text


def test_dialect_from_the_client() -> None:
    assert resolve_dialect(None, openai.AsyncOpenAI(api_key="k")).name == "openai"
    azure = openai.AsyncAzureOpenAI(
        api_key="k", api_version="2025-04-01-preview", azure_endpoint="https://x.openai.azure.com"
    )
    assert resolve_dialect(None, azure).name == "azure"
    deepseek = openai.AsyncOpenAI(api_key="k", base_url="https://api.deepseek.com")
    assert resolve_dialect(None, deepseek).name == "deepseek"
    router = openai.AsyncOpenAI(api_key="k", base_url="https://openrouter.ai/api/v1")
    assert resolve_dialect(None, router).name == "openrouter"
    local = openai.AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:8000/v1")
    assert resolve_dialect(None, local).name == "compatible"
    assert OpenAIChatModel("m", client=local).scope == "compatible"


def test_invalid_dialects_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="reasoning must be one of"):
        ChatDialect("x", reasoning="thoughts")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="replay must be one of"):
        ChatDialect("x", replay="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="names no shape"):
        ChatDialect("x", reasoning="auto", replay="always")
    with pytest.raises(ConfigurationError, match="name"):
        ChatDialect("")
    with pytest.raises(ConfigurationError, match="dialect must be a name"):
        resolve_dialect(3)  # type: ignore[arg-type]


def test_settings_are_validated_when_the_model_is_built() -> None:
    with pytest.raises(ConfigurationError, match="effort must be one of") as info:
        model(thinking=OpenAIThinking(effort="extreme"))  # type: ignore[arg-type]
    assert "'minimal'" in str(info.value) and "'xhigh'" in str(info.value)
    with pytest.raises(ConfigurationError, match="foreign_reasoning"):
        model(foreign_reasoning="keep")  # type: ignore[arg-type]


def test_clients_built_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-test-000")
    monkeypatch.delenv("DEEPSEEK_BASE_URL", raising=False)
    built = OpenAIChatModel("deepseek-reasoner", dialect="deepseek")
    assert str(built.client.base_url).startswith("https://api.deepseek.com")
    assert built.scope == "deepseek"
    monkeypatch.setenv("DEEPSEEK_BASE_URL", "http://127.0.0.1:9/v1")
    assert str(OpenAIChatModel("deepseek-reasoner", dialect="deepseek").client.base_url).startswith(
        "http://127.0.0.1:9"
    )
    monkeypatch.delenv("DEEPSEEK_API_KEY")
    with pytest.raises(ConfigurationError, match="DEEPSEEK_API_KEY"):
        OpenAIChatModel("deepseek-reasoner", dialect="deepseek")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="environment"):
        OpenAIChatModel("gpt-5")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test-000")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert OpenAIChatModel("gpt-5").scope == "openai"


def test_repr_shows_model_and_scope_only() -> None:
    chat = model()
    assert repr(chat) == "OpenAIChatModel(model_name='deepseek-reasoner', scope='deepseek')"
    assert "sk-" not in repr(chat)


# --- requests --------------------------------------------------------------------------------


def test_request_parameters() -> None:
    chat = model(
        "openai",
        "gpt-5",
        thinking=OpenAIThinking(effort="high"),
        settings={"temperature": 0.5, "extra_body": {"a": 1}, "extra_headers": {"x-a": "1"}},
        extra_body={"b": 2},
    )
    params = chat.build_request(
        ModelRequest(
            messages=[Message.user("hi")],
            tools=[WEATHER],
            instructions="Be brief.",
            settings={
                "max_tokens": 512,
                "top_p": 0.9,
                "stop_sequences": ["END"],
                "tool_choice": "get_weather",
                "parallel_tool_calls": False,
                "timeout": 12.0,
                "extra_body": {"c": 3},
                "extra_headers": {"x-b": "2"},
            },
        )
    )
    assert params == {
        "model": "gpt-5",
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": "hi"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "parameters": WEATHER.parameters,
                    "description": "Current weather for a city.",
                },
            }
        ],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "parallel_tool_calls": False,
        "reasoning_effort": "high",
        "max_completion_tokens": 512,
        "temperature": 0.5,
        "top_p": 0.9,
        "stop": ["END"],
        "timeout": 12.0,
        "extra_body": {"b": 2, "a": 1, "c": 3},
        "extra_headers": {"x-a": "1", "x-b": "2"},
    }


def test_compatible_endpoints_get_system_and_max_tokens() -> None:
    params = model().build_request(
        ModelRequest(
            messages=[Message.user("hi")], instructions="Be brief.", settings={"max_tokens": 9}
        )
    )
    assert params["messages"][0] == {"role": "system", "content": "Be brief."}
    assert params["max_tokens"] == 9 and "max_completion_tokens" not in params
    assert "reasoning_effort" not in params and "tools" not in params


def test_tool_choice_and_parallel_only_with_tools() -> None:
    chat = model()
    bare = chat.build_request(
        ModelRequest(
            messages=[Message.user("hi")],
            settings={"tool_choice": "required", "parallel_tool_calls": True},
        )
    )
    assert "tool_choice" not in bare and "parallel_tool_calls" not in bare
    forced = chat.build_request(
        ModelRequest(
            messages=[Message.user("hi")], tools=[WEATHER], settings={"tool_choice": "required"}
        )
    )
    assert forced["tool_choice"] == "required"
    with pytest.raises(ConfigurationError, match="names no tool"):
        chat.build_request(
            ModelRequest(
                messages=[Message.user("hi")], tools=[WEATHER], settings={"tool_choice": "nope"}
            )
        )


def test_user_turns_send_results_then_text_and_arguments_go_back_exactly() -> None:
    history = [
        Message.user("q"),
        assistant(call(1, '{"city":  "Paris" }'), call(2, {"city": "Lyon"}), scope="other"),
        Message(
            role="user",
            parts=(
                ToolResult(call_id="call_1", name="get_weather", content={"t": 21}),
                TextPart(text="and"),
                ToolResult(call_id="call_2", name="get_weather", content="rain", is_error=True),
                TextPart(text="more"),
            ),
        ),
    ]
    sent = model().build_messages(history)
    assert sent == [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "",  # DeepSeek's placeholder for a turn it did not make
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":  "Paris" }'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Lyon"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"t": 21}'},
        {"role": "tool", "tool_call_id": "call_2", "content": "rain"},
        # text only: one string (DeepSeek refuses a content array)
        {"role": "user", "content": "and\n\nmore"},
    ]


# --- replay rules ----------------------------------------------------------------------------


def two_turns(scope: str = "deepseek") -> list[Message]:
    """Turn 1: a tool call then an answer; turn 2: an answer without tools; turn 3: a call."""
    return [
        Message.user("weather?"),
        assistant(ThinkingBlock.plain("t1"), TextPart(text="Checking."), call(1), scope=scope),
        results("call_1"),
        assistant(ThinkingBlock.plain("t2"), TextPart(text="Sunny."), scope=scope),
        Message.user("thanks"),
        assistant(ThinkingBlock.plain("t3"), TextPart(text="Welcome."), scope=scope),
        Message.user("and Lyon?"),
        assistant(ThinkingBlock.plain("t4"), call(2), scope=scope),
        results("call_2"),
    ]


def reasoning_sent(
    sent: list[dict[str, Any]], field: str = "reasoning_content"
) -> list[str | None]:
    return [m.get(field) for m in sent if m["role"] == "assistant"]


def test_deepseek_replays_every_assistant_turn_of_a_tool_turn() -> None:
    sent = model().build_messages(two_turns())
    # turn 1 used a tool (both its messages), turn 2 did not, turn 3 is the loop in progress
    assert reasoning_sent(sent) == ["t1", "t2", None, "t4"]
    assert "reasoning_content" not in sent[4]  # the answer of the turn without tools


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("never", [None, None, None, None]),
        ("tool_loop", [None, None, None, "t4"]),
        ("tool_turns", ["t1", "t2", None, "t4"]),
        ("always", ["t1", "t2", "t3", "t4"]),
    ],
)
def test_replay_rules(rule: str, expected: list[str | None]) -> None:
    dialect = ChatDialect("mine", reasoning="reasoning", replay=rule)  # type: ignore[arg-type]
    sent = model(dialect).build_messages(two_turns("mine"))
    assert reasoning_sent(sent, "reasoning") == expected
    assert all("reasoning_content" not in m for m in sent)


def test_only_the_placeholder_is_sent_for_another_providers_tool_turn() -> None:
    """DeepSeek and Kimi refuse a tool-call message without reasoning_content while thinking:
    their dialects send the documented empty placeholder on another provider's turn; nothing
    else is ever invented, not on their own turns that lost their reasoning (the service's
    refusal says so), not with a dialect that omits it."""
    foreign = [
        Message.user("q"),
        assistant(TextPart(text="Checking."), call(1), scope="anthropic"),
        results("call_1"),
    ]
    for name in ("deepseek", "moonshot"):
        (_, sent_assistant, _) = model(name).build_messages(foreign)
        assert sent_assistant["reasoning_content"] == ""
    own = [Message.user("q"), assistant(TextPart(text="Checking."), call(1)), results("call_1")]
    (_, sent_assistant, _) = model().build_messages(own)
    assert "reasoning_content" not in sent_assistant
    omit = ChatDialect("mine", reasoning="reasoning_content", replay="tool_turns")
    (_, sent_assistant, _) = model(omit).build_messages(foreign)
    assert "reasoning_content" not in sent_assistant
    text_only = [Message.user("q"), assistant(TextPart(text="Hi."), scope="x"), Message.user("m")]
    assert "reasoning_content" not in model().build_messages(text_only)[1]


def test_openai_gets_no_reasoning_back() -> None:
    sent = model("openai", "gpt-5").build_messages(two_turns("openai"))
    assert all(set(m) <= {"role", "content", "tool_calls", "tool_call_id"} for m in sent)


def test_other_scopes_reasoning_is_dropped_or_sent_as_text() -> None:
    history = [
        Message.user("q"),
        assistant(
            ThinkingBlock.signed("secret plan", "SIG-anthropic"),
            TextPart(text="Hi."),
            call(1),
            scope="anthropic",
        ),
        results("call_1"),
    ]
    dropped = model().build_messages(history)
    assert dropped[1]["reasoning_content"] == "" and "SIG" not in str(dropped)  # placeholder
    assert dropped[1]["content"] == "Hi."
    as_text = model(foreign_reasoning="text").build_messages(history)
    assert as_text[1]["content"] == "<thinking>\nsecret plan\n</thinking>Hi."
    assert "SIG" not in str(as_text) and as_text[1]["reasoning_content"] == ""


def test_think_tags_go_back_inline() -> None:
    chat = model("minimax", "minimax-m2")
    history = [
        Message.user("q"),
        assistant(ThinkingBlock.plain("why"), TextPart(text="Checking."), call(1), scope="minimax"),
        results("call_1"),
    ]
    sent = chat.build_messages(history)
    assert sent[1]["content"] == "<think>\nwhy\n</think>\n\nChecking."
    assert "reasoning_content" not in sent[1]


def test_empty_assistant_turns_are_left_out() -> None:
    history = [
        Message.user("q"),
        assistant(ThinkingBlock.signed("x", "sig"), scope="anthropic"),
        Message.user("again"),
    ]
    assert model().build_messages(history) == [
        {"role": "user", "content": "q"},
        {"role": "user", "content": "again"},
    ]


# --- responses -------------------------------------------------------------------------------


def completion(message: dict[str, Any], finish: str = "stop", **usage: Any) -> ChatCompletion:
    return ChatCompletion.model_validate(
        {
            "id": "cmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "deepseek-v4-flash",
            "choices": [
                {"index": 0, "finish_reason": finish, "message": {"role": "assistant", **message}}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 7, "total_tokens": 17, **usage},
        }
    )


def test_reasoning_first_then_text_then_calls() -> None:
    response = model().parse_response(
        completion(
            {
                "content": "Checking.",
                "reasoning_content": "I need the tool.",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                    }
                ],
            },
            "tool_calls",
            completion_tokens_details={"reasoning_tokens": 4},
            prompt_tokens_details={"cached_tokens": 6},
        )
    )
    message = response.message
    assert message.parts == (
        ThinkingBlock.plain("I need the tool."),
        TextPart(text="Checking."),
        ToolCall(id="c1", name="get_weather", arguments='{"city":"Paris"}'),
    )
    assert message.scope == "deepseek" and message.model == "deepseek-v4-flash"
    assert message.id == "cmpl-1"
    assert message.finish_reason == "tool_call"
    assert message.provider_details == {"finish_reason": "tool_calls"}
    assert message.usage == Usage(
        input_tokens=10, output_tokens=7, thinking_tokens=4, cache_read_tokens=6
    )
    assert message.thinking[0].signature is None


def test_the_dialect_picks_the_reasoning_field() -> None:
    body = {"content": "Hi.", "reasoning": "via reasoning", "reasoning_content": "via content"}
    assert model().parse_response(completion(body)).message.thinking[0].text == "via content"
    assert (
        model("openrouter").parse_response(completion(body)).message.thinking[0].text
        == "via reasoning"
    )
    assert model("openai", "gpt-5").parse_response(completion(body)).message.thinking == []
    auto = model("vllm").parse_response(completion({"content": "Hi.", "reasoning": "r"}))
    assert auto.message.thinking[0].text == "r"
    empty = model().parse_response(completion({"content": "Hi.", "reasoning_content": ""}))
    assert empty.message.thinking == []


def test_think_tags_are_split_out_of_the_content() -> None:
    response = model("minimax", "minimax-m2").parse_response(
        completion({"content": "<think>\nwhy\n</think>\n\nBecause."})
    )
    assert response.message.parts == (ThinkingBlock.plain("why"), TextPart(text="Because."))


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("stop", "stop"),
        ("tool_calls", "tool_call"),
        ("length", "length"),
        ("content_filter", "content_filter"),
        ("function_call", "tool_call"),
        ("other", None),
        (None, None),
    ],
)
def test_finish_reasons(raw: str | None, normalised: str | None) -> None:
    assert OpenAIChatModel.map_finish_reason(raw) == normalised


def test_refusal_and_missing_usage() -> None:
    parsed = ChatCompletion.model_validate(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-5",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": None, "refusal": "No."},
                }
            ],
        }
    )
    message = model("openai", "gpt-5").parse_response(parsed).message
    assert message.parts == () and message.usage == Usage()
    assert message.provider_details == {"finish_reason": "stop", "refusal": "No."}


def test_no_choices_is_a_provider_error() -> None:
    empty = ChatCompletion.model_validate(
        {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}
    )
    with pytest.raises(ProviderError, match="no choices"):
        model().parse_response(empty)


# --- streams ---------------------------------------------------------------------------------


def chunk(
    delta: dict[str, Any] | None, finish: str | None = None, usage: dict[str, Any] | None = None
) -> ChatCompletionChunk:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    body: dict[str, Any] = {
        "id": "cmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "deepseek-v4-flash",
        "choices": choices,
    }
    if usage is not None:
        body["usage"] = usage
    return ChatCompletionChunk.model_validate(body)


TOOL_STREAM = [
    chunk({"role": "assistant", "content": None, "reasoning_content": "I need "}),
    chunk({"reasoning_content": "the tool."}),
    chunk({"content": "Check"}),
    chunk({"content": "ing."}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":'}}]}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": "{}"},
                }
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}),
    chunk({}, "tool_calls"),
    chunk(
        None,
        usage={
            "prompt_tokens": 10,
            "completion_tokens": 7,
            "total_tokens": 17,
            "completion_tokens_details": {"reasoning_tokens": 4},
        },
    ),
]


async def collect(
    chat: OpenAIChatModel, events: list[Any], error: BaseException | None = None
) -> list[Any]:
    chat.client.replies.append(FakeStream(events, error))  # type: ignore[attr-defined]
    return [
        event
        async for event in chat.stream(ModelRequest(messages=[Message.user("q")], tools=[WEATHER]))
    ]


async def test_stream_deltas_and_the_assembled_message() -> None:
    chat = model()
    out = await collect(chat, TOOL_STREAM)
    assert out[:-1] == [
        ThinkingDelta(0, "I need "),
        ThinkingDelta(0, "the tool."),
        PartEnd(0, ThinkingBlock.plain("I need the tool.")),  # the content begins
        TextDelta(1, "Check"),
        TextDelta(1, "ing."),
        ToolCallDelta(2, id="c1", name="get_weather"),
        ToolCallDelta(2, args_fragment='{"city":'),
        ToolCallDelta(3, id="c2", name="get_time", args_fragment="{}"),
        ToolCallDelta(2, args_fragment='"Paris"}'),  # a call may go on after the next began
        # with the choice: the open part, then every call, whole
        PartEnd(1, TextPart(text="Checking.")),
        PartEnd(2, ToolCall(id="c1", name="get_weather", arguments='{"city":"Paris"}')),
        PartEnd(3, ToolCall(id="c2", name="get_time", arguments="{}")),
    ]
    final = out[-1]
    assert isinstance(final, ModelResponse)
    assert final.message.parts == (
        ThinkingBlock.plain("I need the tool."),
        TextPart(text="Checking."),
        ToolCall(id="c1", name="get_weather", arguments='{"city":"Paris"}'),
        ToolCall(id="c2", name="get_time", arguments="{}"),
    )
    assert final.message.usage == Usage(input_tokens=10, output_tokens=7, thinking_tokens=4)
    assert final.message.finish_reason == "tool_call" and final.message.id == "cmpl-1"
    request = chat.client.calls[0]  # type: ignore[attr-defined]
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}


async def test_streamed_equals_non_streamed_with_think_tags() -> None:
    chat = model("minimax", "minimax-m2")
    content = "<think>\nI need the tool.\n</think>\n\nChecking."
    pieces = [content[i : i + 3] for i in range(0, len(content), 3)]
    events = [chunk({"content": p}) for p in pieces]
    events += [
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": "{}"},
                    }
                ]
            }
        ),
        chunk({}, "tool_calls"),
    ]
    final = (await collect(chat, events))[-1].message
    whole = chat.parse_response(
        completion(
            {
                "content": content,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": "{}"},
                    }
                ],
            },
            "tool_calls",
        )
    ).message
    assert (
        final.parts
        == whole.parts
        == (
            ThinkingBlock.plain("I need the tool."),
            TextPart(text="Checking."),
            ToolCall(id="c1", name="get_weather", arguments="{}"),
        )
    )


async def test_a_stream_without_finish_reason_is_interrupted() -> None:
    chat = model()
    with pytest.raises(StreamInterrupted) as info:
        await collect(chat, TOOL_STREAM[:6])
    partial = info.value.partial
    assert partial is not None
    assert partial.parts[0] == ThinkingBlock.plain("I need the tool.")
    assert partial.parts[-1] == ToolCall(id="c1", name="get_weather", arguments='{"city":')
    assert info.value.retryable and info.value.scope == "deepseek"


def request_of() -> httpx2.Request:
    return httpx2.Request("POST", "https://api.example.com/v1/chat/completions")


async def test_a_dropped_connection_mid_stream_is_interrupted() -> None:
    chat = model()
    with pytest.raises(StreamInterrupted) as info:
        await collect(chat, TOOL_STREAM[:2], openai.APIConnectionError(request=request_of()))
    assert info.value.partial is not None
    assert info.value.partial.thinking[0].text == "I need the tool."
    assert isinstance(info.value.__cause__, openai.APIConnectionError)


async def test_an_error_inside_the_stream_is_a_provider_error() -> None:
    chat = model()
    error = openai.APIError(
        "Service overloaded",
        request_of(),
        body={"message": "Service overloaded", "type": "server_error", "code": None},
    )
    with pytest.raises(ProviderError) as info:
        await collect(chat, TOOL_STREAM[:2], error)
    assert not isinstance(info.value, StreamInterrupted)
    assert info.value.message == "Service overloaded"
    assert info.value.retryable and info.value.status is None and info.value.__cause__ is error


# --- errors ----------------------------------------------------------------------------------


def status_error(status: int, body: dict[str, Any]) -> openai.APIStatusError:
    response = httpx2.Response(status, request=request_of(), json=body)
    classes = {
        400: openai.BadRequestError,
        401: openai.AuthenticationError,
        429: openai.RateLimitError,
        500: openai.InternalServerError,
    }
    return classes[status](f"Error code: {status}", response=response, body=body["error"])


@pytest.mark.parametrize(
    ("status", "retryable"), [(400, False), (401, False), (429, True), (500, True)]
)
async def test_status_errors(status: int, retryable: bool) -> None:
    chat = model()
    exc = status_error(
        status, {"error": {"message": f"failed {status}", "type": "some_error", "code": "x"}}
    )
    chat.client.replies.append(exc)  # type: ignore[attr-defined]
    with pytest.raises(ProviderError) as info:
        await chat.request(ModelRequest(messages=[Message.user("q")]))
    error = info.value
    assert (error.status, error.retryable, error.message, error.error_type) == (
        status,
        retryable,
        f"failed {status}",
        "some_error",
    )
    assert error.scope == "deepseek" and error.__cause__ is exc


async def test_tools_with_reasoning_effort_rejected_says_so() -> None:
    chat = model("openai", "gpt-5.4", thinking=OpenAIThinking(effort="high"))
    message = "Function tools with reasoning_effort are not supported for gpt-5.4 in /v1/chat/completions. Please use /v1/responses instead."
    chat.client.replies.append(
        status_error(
            400,
            {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": "reasoning_effort",
                    "code": None,
                }
            },
        )
    )  # type: ignore[attr-defined]
    with pytest.raises(ProviderError) as info:
        await chat.request(ModelRequest(messages=[Message.user("q")], tools=[WEATHER]))
    assert info.value.message == message
    text = str(info.value)
    assert text.startswith(f"openai error 400: {message}")
    assert "tools together with reasoning_effort" in text and "OpenAIResponsesModel" in text


async def test_credentials_never_reach_an_error() -> None:
    chat = model()
    key = chat.client.api_key  # type: ignore[attr-defined]
    chat.client.replies.append(
        status_error(
            401,
            {
                "error": {
                    "message": f"Incorrect API key provided: {key}. Or sk-proj-abc***xyz.",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
        )
    )  # type: ignore[attr-defined]
    with pytest.raises(ProviderError) as info:
        await chat.request(ModelRequest(messages=[Message.user("q")]))
    assert key not in str(info.value) and key not in info.value.message
    assert "sk-proj" not in str(info.value) and "[redacted]" in str(info.value)


def test_redact() -> None:
    assert (
        redact("key sk-abc123def456 and Bearer tok.en-1", ["nothing"])
        == "key [redacted] and Bearer [redacted]"
    )
    assert redact("my-secret-value here", ["my-secret-value"]) == "[redacted] here"
