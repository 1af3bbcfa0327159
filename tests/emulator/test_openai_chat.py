"""The Chat Completions wire API (OpenAI, Azure and the compatible reasoning dialects)
through the unmodified official SDK (AsyncOpenAI, AsyncAzureOpenAI)."""

from __future__ import annotations

import copy
import json
from typing import Any

import openai
import pytest

from thinkagent.emulator import Emulator, Reply, ToolCallSpec

from .tools import CHAT_TOOLS, QUESTION, TOOL_OUTPUT

USER = {"role": "user", "content": QUESTION}


async def collect(stream: openai.AsyncStream[Any]) -> dict[str, Any]:
    """Accumulate a chunk stream into the message it describes (plus finish and usage)."""
    message: dict[str, Any] = {"role": "assistant", "content": None}
    calls: dict[int, dict[str, Any]] = {}
    out: dict[str, Any] = {"message": message, "finish_reason": None, "usage": None, "deltas": []}
    async for chunk in stream:
        if chunk.usage is not None:
            out["usage"] = chunk.usage
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        delta = choice.delta
        out["deltas"].append(delta)
        if delta.content is not None:
            message["content"] = (message["content"] or "") + delta.content
        for key, value in (delta.model_extra or {}).items():
            if isinstance(value, str):
                message[key] = message.get(key, "") + value
        for call in delta.tool_calls or []:
            entry = calls.setdefault(
                call.index,
                {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
            )
            if call.id:
                entry["id"] = call.id
            if call.function is not None:
                entry["function"]["name"] += call.function.name or ""
                entry["function"]["arguments"] += call.function.arguments or ""
        if choice.finish_reason is not None:
            out["finish_reason"] = choice.finish_reason
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return out


async def ask(
    client: openai.AsyncOpenAI, model: str, messages: list[Any], *, stream: bool, **kw: Any
) -> dict[str, Any]:
    """One turn; returns {"message": replayable dict, "finish_reason", "usage"}."""
    if stream:
        chunks = await client.chat.completions.create(
            model=model,
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
            **kw,
        )
        return await collect(chunks)
    reply = await client.chat.completions.create(model=model, messages=messages, **kw)
    choice = reply.choices[0]
    message = choice.message.model_dump(exclude_none=True)
    message.pop("annotations", None)
    return {"message": message, "finish_reason": choice.finish_reason, "usage": reply.usage}


def results(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "role": "tool",
            "tool_call_id": call["id"],
            "content": TOOL_OUTPUT[call["function"]["name"]],
        }
        for call in message["tool_calls"]
    ]


async def three_turns(
    client: openai.AsyncOpenAI, model: str, *, stream: bool, **kw: Any
) -> list[dict[str, Any]]:
    """The weather loop: get_weather, then get_time, then the answer, replaying every
    assistant message exactly as received."""
    messages: list[Any] = [{"role": "developer", "content": "Be brief."}, USER]
    turns: list[dict[str, Any]] = []
    for _ in range(3):
        turn = await ask(client, model, messages, stream=stream, tools=CHAT_TOOLS, **kw)
        turns.append(turn)
        if turn["finish_reason"] != "tool_calls":
            break
        messages += [turn["message"], *results(turn["message"])]
    return turns


def call_of(turn: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    call = turn["message"]["tool_calls"][0]
    return call["function"]["name"], json.loads(call["function"]["arguments"])


def bad_request(exc: pytest.ExceptionInfo[openai.BadRequestError]) -> dict[str, Any]:
    assert exc.value.status_code == 400
    body = exc.value.body
    assert isinstance(body, dict)
    return body


# --- OpenAI and Azure: hidden reasoning -----------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_openai_three_turn_tool_loop(
    emu: Emulator, openai_client: openai.AsyncOpenAI, stream: bool
) -> None:
    turns = await three_turns(openai_client, "o4-mini", stream=stream, reasoning_effort="high")
    assert [t["finish_reason"] for t in turns] == ["tool_calls", "tool_calls", "stop"]
    assert call_of(turns[0]) == ("get_weather", {"city": "Paris"})
    assert call_of(turns[1]) == ("get_time", {"city": "Paris", "format": "24h"})
    assert turns[0]["message"]["tool_calls"][0]["id"].startswith("call_")
    for turn in turns:
        message = turn["message"]
        assert set(message) <= {"role", "content", "tool_calls", "refusal"}  # no reasoning text
        details = turn["usage"].completion_tokens_details
        assert details.reasoning_tokens > 0
        assert turn["usage"].completion_tokens > details.reasoning_tokens
        assert turn["usage"].total_tokens == (
            turn["usage"].prompt_tokens + turn["usage"].completion_tokens
        )
    assert not turns[0]["message"].get("content")
    assert "sunny, 21 C" in turns[2]["message"]["content"]
    assert "14:05" in turns[2]["message"]["content"]
    sent = [r for r in emu.requests if r.api == "openai"]
    assert [r.path for r in sent] == ["/v1/chat/completions"] * 3
    assert all(r.auth == "Bearer" for r in sent)
    assert sent[2].body["messages"][2]["tool_calls"] == turns[0]["message"]["tool_calls"]


async def test_openai_ignores_replayed_reasoning_fields(openai_client: openai.AsyncOpenAI) -> None:
    first = await ask(openai_client, "gpt-5", [USER], stream=False, tools=CHAT_TOOLS)
    replay = {**first["message"], "reasoning_content": "made up", "reasoning": "also made up"}
    second = await ask(
        openai_client,
        "gpt-5",
        [USER, replay, *results(first["message"])],
        stream=False,
        tools=CHAT_TOOLS,
    )
    assert call_of(second)[0] == "get_time"


async def test_stream_and_json_agree(openai_client: openai.AsyncOpenAI) -> None:
    plain = await openai_client.chat.completions.create(
        model="o3", messages=[USER], tools=CHAT_TOOLS
    )
    chunks = await openai_client.chat.completions.create(
        model="o3",
        messages=[USER],
        tools=CHAT_TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    streamed = [chunk async for chunk in chunks]
    assert {c.id for c in streamed} == {plain.id}
    assert streamed[0].choices[0].delta.role == "assistant"
    # A turn of tool calls only has no content: null in the reply, and in the stream.
    assert plain.choices[0].message.content is None
    assert streamed[0].choices[0].delta.content is None
    assert all(c.choices[0].delta.content is None for c in streamed if c.choices)
    async with openai_client.chat.completions.stream(
        model="o3", messages=[USER], tools=CHAT_TOOLS
    ) as helper:
        final = await helper.get_final_completion()
    assert final.choices[0].message.content is None
    first_call = next(c for c in streamed if c.choices and c.choices[0].delta.tool_calls)
    call = first_call.choices[0].delta.tool_calls[0]  # type: ignore[index]
    assert (call.index, call.type, call.function.arguments) == (0, "function", "")  # type: ignore[union-attr]
    assert call.id == plain.choices[0].message.tool_calls[0].id  # type: ignore[index]
    assert streamed[-1].choices == []
    assert streamed[-1].usage == plain.usage
    assert streamed[-2].choices[0].finish_reason == "tool_calls"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_azure_three_turn_tool_loop(
    emu: Emulator, azure_client: openai.AsyncAzureOpenAI, stream: bool
) -> None:
    turns = await three_turns(azure_client, "my-o4-mini", stream=stream, reasoning_effort="medium")  # type: ignore[arg-type]
    assert [t["finish_reason"] for t in turns] == ["tool_calls", "tool_calls", "stop"]
    assert turns[-1]["usage"].completion_tokens_details.reasoning_tokens > 0
    sent = [r for r in emu.requests if r.api == "openai"]
    assert {r.path for r in sent} == {"/openai/deployments/my-o4-mini/chat/completions"}
    assert {r.query["api-version"] for r in sent} == {"2025-04-01-preview"}
    assert all(r.auth == "api-key" for r in sent)
    assert all("api-key" not in r.headers for r in sent)


async def test_azure_deployment_and_ad_token(emu: Emulator) -> None:
    client = emu.azure_client(
        max_retries=0, azure_deployment="prod-o4-mini", azure_ad_token="entra-token"
    )
    reply = await client.chat.completions.create(model="o4-mini", messages=[USER], tools=CHAT_TOOLS)
    await client.close()
    assert reply.choices[0].finish_reason == "tool_calls"
    assert emu.requests[-1].path == "/openai/deployments/prod-o4-mini/chat/completions"
    assert emu.requests[-1].auth == "Bearer"


async def test_azure_v1_route(emu: Emulator) -> None:
    client = openai.AsyncOpenAI(api_key="k", base_url=emu.url + "/openai/v1", max_retries=0)
    reply = await client.chat.completions.create(model="gpt-5-mini", messages=[USER])
    await client.close()
    assert reply.choices[0].finish_reason == "stop"
    assert emu.requests[-1].path == "/openai/v1/chat/completions"


# --- DeepSeek: reasoning_content and its replay rule ----------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_deepseek_three_turn_loop_with_reasoning_content(
    emu: Emulator, openai_client: openai.AsyncOpenAI, stream: bool
) -> None:
    turns = await three_turns(openai_client, "deepseek-reasoner", stream=stream)
    assert [t["finish_reason"] for t in turns] == ["tool_calls", "tool_calls", "stop"]
    first = turns[0]["message"]
    assert QUESTION in first["reasoning_content"]
    assert first["content"]  # DeepSeek says something beside its calls
    assert first["tool_calls"][0]["id"].startswith("call_00_")
    assert "sunny, 21 C" in turns[1]["message"]["reasoning_content"]
    assert turns[2]["usage"].completion_tokens_details.reasoning_tokens > 0
    sent = emu.requests[-1].body["messages"]
    assert sent[2]["reasoning_content"] == first["reasoning_content"]


async def test_deepseek_reasoning_arrives_before_content(openai_client: openai.AsyncOpenAI) -> None:
    chunks = await openai_client.chat.completions.create(
        model="deepseek-reasoner", messages=[USER], tools=CHAT_TOOLS, stream=True
    )
    turn = await collect(chunks)
    kinds = [
        "reasoning" if (d.model_extra or {}).get("reasoning_content") else "content"
        for d in turn["deltas"]
        if (d.model_extra or {}).get("reasoning_content") or d.content
    ]
    assert kinds[0] == "reasoning"
    assert kinds.index("content") == kinds.count("reasoning")


async def test_deepseek_rejects_a_tool_turn_without_reasoning_content(
    openai_client: openai.AsyncOpenAI,
) -> None:
    first = await ask(openai_client, "deepseek-reasoner", [USER], stream=False, tools=CHAT_TOOLS)
    bare = {k: v for k, v in first["message"].items() if k != "reasoning_content"}
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.chat.completions.create(
            model="deepseek-reasoner",
            messages=[{"role": "system", "content": "Be brief."}, USER, bare, *results(bare)],
            tools=CHAT_TOOLS,
        )
    body = bad_request(exc)
    assert body == {
        "message": "Missing `reasoning_content` field in the assistant message at message index 2. "
        "For more information, please refer to "
        "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_request_error",
    }


async def test_deepseek_checks_every_earlier_tool_turn(openai_client: openai.AsyncOpenAI) -> None:
    """DeepSeek's guide: tool-call turns must pass their reasoning_content back in all
    subsequent requests, also after a new user question. An empty string is accepted
    (the real service accepted one in the recording)."""
    first = await ask(openai_client, "deepseek-v4-flash", [USER], stream=False, tools=CHAT_TOOLS)
    done = [USER, first["message"], *results(first["message"])]
    followup = [
        *done,
        {"role": "assistant", "content": "Sunny."},
        {"role": "user", "content": "Thanks!"},
    ]
    empty = copy.deepcopy(followup)
    empty[1]["reasoning_content"] = ""
    reply = await ask(openai_client, "deepseek-v4-flash", empty, stream=False, tools=CHAT_TOOLS)
    assert reply["finish_reason"] in ("stop", "tool_calls")
    del empty[1]["reasoning_content"]
    with pytest.raises(openai.BadRequestError) as exc:
        await ask(openai_client, "deepseek-v4-flash", empty, stream=False, tools=CHAT_TOOLS)
    assert exc.value.body == {
        "message": "The `reasoning_content` in the thinking mode must be passed back to the API.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_request_error",
    }


async def test_deepseek_without_thinking_has_no_rule(openai_client: openai.AsyncOpenAI) -> None:
    for model, extra in (
        ("deepseek-chat", {}),
        ("deepseek-reasoner", {"thinking": {"type": "disabled"}}),
    ):
        first = await ask(
            openai_client, model, [USER], stream=False, tools=CHAT_TOOLS, extra_body=extra
        )
        assert "reasoning_content" not in first["message"]
        assert first["usage"].completion_tokens_details.reasoning_tokens == 0
        second = await ask(
            openai_client,
            model,
            [USER, first["message"], *results(first["message"])],
            stream=False,
            tools=CHAT_TOOLS,
            extra_body=extra,
        )
        assert call_of(second)[0] == "get_time"


@pytest.mark.parametrize("model", ["qwen3-max", "qwq-32b", "glm-4.6", "grok-3-mini"])
async def test_reasoning_content_is_capture_only(
    openai_client: openai.AsyncOpenAI, model: str
) -> None:
    first = await ask(openai_client, model, [USER], stream=False, tools=CHAT_TOOLS)
    assert QUESTION in first["message"]["reasoning_content"]
    bare = {k: v for k, v in first["message"].items() if k != "reasoning_content"}
    second = await ask(
        openai_client, model, [USER, bare, *results(bare)], stream=False, tools=CHAT_TOOLS
    )
    assert call_of(second)[0] == "get_time"


# --- the `reasoning` field and inline <think> tags ------------------------------------------


@pytest.mark.parametrize("model", ["deepseek/deepseek-r1", "qwen3:8b", "gpt-oss:20b"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_reasoning_field_dialect(
    openai_client: openai.AsyncOpenAI, model: str, stream: bool
) -> None:
    turns = await three_turns(openai_client, model, stream=stream)
    assert [t["finish_reason"] for t in turns] == ["tool_calls", "tool_calls", "stop"]
    for turn in turns:
        assert "reasoning_content" not in turn["message"]
        assert QUESTION in turn["message"]["reasoning"]
    assert "sunny, 21 C" in turns[1]["message"]["reasoning"]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_think_tags_dialect(openai_client: openai.AsyncOpenAI, stream: bool) -> None:
    turns = await three_turns(openai_client, "MiniMax-M2", stream=stream)
    assert [t["finish_reason"] for t in turns] == ["tool_calls", "tool_calls", "stop"]
    for turn in turns:
        content = turn["message"]["content"]
        assert content.startswith("<think>\n")
        thinking, _, answer = content[len("<think>") :].partition("</think>")
        assert QUESTION in thinking
        assert answer.strip()
        assert set(turn["message"]) <= {"role", "content", "tool_calls"}
    assert "sunny, 21 C" in turns[2]["message"]["content"].partition("</think>")[2]


async def test_think_tags_are_split_across_chunks(openai_client: openai.AsyncOpenAI) -> None:
    chunks = await openai_client.chat.completions.create(
        model="minimax-m2", messages=[USER], tools=CHAT_TOOLS, stream=True
    )
    pieces = [d.content for d in (await collect(chunks))["deltas"] if d.content]
    assert "<think>" not in pieces
    assert not any("<think>" in p or "</think>" in p for p in pieces)
    joined = "".join(pieces)
    assert joined.startswith("<think>\n")
    assert "</think>" in joined


# --- request validation -----------------------------------------------------------------------


async def test_unknown_model_is_not_found(openai_client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as exc:
        await openai_client.chat.completions.create(model="llama-unknown", messages=[USER])
    assert exc.value.body == {
        "message": "The model `llama-unknown` does not exist or you do not have access to it.",
        "type": "invalid_request_error",
        "param": None,
        "code": "model_not_found",
    }


@pytest.mark.parametrize(
    ("model", "effort", "message", "code"),
    [
        (
            "gpt-5",
            "extreme",
            "Invalid value: 'extreme'. Supported values are: 'none', 'minimal', 'low', "
            "'medium', 'high', 'xhigh', and 'max'.",
            "invalid_value",
        ),
        (
            "gpt-5",
            "none",
            "Unsupported value: 'reasoning_effort' does not support 'none' with this model. "
            "Supported values are: 'minimal', 'low', 'medium', and 'high'.",
            "unsupported_value",
        ),
        (
            "o3",
            "minimal",
            "Unsupported value: 'reasoning_effort' does not support 'minimal' with this model. "
            "Supported values are: 'low', 'medium', and 'high'.",
            "unsupported_value",
        ),
        (
            "gpt-4o",
            "low",
            "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
            "unsupported_parameter",
        ),
    ],
)
async def test_reasoning_effort_validation(
    openai_client: openai.AsyncOpenAI, model: str, effort: str, message: str, code: str
) -> None:
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.chat.completions.create(
            model=model,
            messages=[USER],
            reasoning_effort=effort,  # type: ignore[arg-type]
        )
    assert bad_request(exc) == {
        "message": message,
        "type": "invalid_request_error",
        "param": "reasoning_effort",
        "code": code,
    }


async def test_effort_none_and_default_efforts(openai_client: openai.AsyncOpenAI) -> None:
    default_on = await openai_client.chat.completions.create(model="gpt-5", messages=[USER])
    assert default_on.usage.completion_tokens_details.reasoning_tokens > 0  # type: ignore[union-attr]
    default_off = await openai_client.chat.completions.create(model="gpt-5.2", messages=[USER])
    assert default_off.usage.completion_tokens_details.reasoning_tokens == 0  # type: ignore[union-attr]
    asked = await openai_client.chat.completions.create(
        model="gpt-5.2", messages=[USER], reasoning_effort="xhigh"
    )
    assert asked.usage.completion_tokens_details.reasoning_tokens > 0  # type: ignore[union-attr]
    plain = await openai_client.chat.completions.create(model="gpt-4.1", messages=[USER])
    assert plain.usage.completion_tokens_details.reasoning_tokens == 0  # type: ignore[union-attr]


async def test_tools_with_reasoning_effort_on_gpt_5_4(openai_client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.chat.completions.create(
            model="gpt-5.4", messages=[USER], tools=CHAT_TOOLS, reasoning_effort="low"
        )
    assert bad_request(exc) == {
        "message": "Function tools with reasoning_effort are not supported for gpt-5.4 in "
        "/v1/chat/completions. Please use /v1/responses instead.",
        "type": "invalid_request_error",
        "param": "reasoning_effort",
        "code": None,
    }
    allowed = await openai_client.chat.completions.create(
        model="gpt-5.4", messages=[USER], tools=CHAT_TOOLS, reasoning_effort="none"
    )
    assert allowed.choices[0].finish_reason == "tool_calls"


async def test_max_tokens_on_a_reasoning_model(openai_client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match=r"Use 'max_completion_tokens' instead\."):
        await openai_client.chat.completions.create(
            model="o4-mini", messages=[USER], max_tokens=100
        )
    cut = await openai_client.chat.completions.create(
        model="o4-mini", messages=[USER], max_completion_tokens=20
    )
    assert cut.choices[0].finish_reason == "length"
    assert cut.usage.completion_tokens == 20  # type: ignore[union-attr]


async def test_tool_messages_must_answer_tool_calls(openai_client: openai.AsyncOpenAI) -> None:
    first = await ask(openai_client, "gpt-5", [USER], stream=False, tools=CHAT_TOOLS)
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.chat.completions.create(
            model="gpt-5", messages=[USER, first["message"], USER], tools=CHAT_TOOLS
        )
    call_id = first["message"]["tool_calls"][0]["id"]
    assert bad_request(exc)["message"] == (
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + call_id
    )
    assert bad_request(exc)["param"] == "messages.[1].role"
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.chat.completions.create(
            model="gpt-5", messages=[USER, *results(first["message"])], tools=CHAT_TOOLS
        )
    assert bad_request(exc)["message"] == (
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
        "message with 'tool_calls'."
    )


async def test_tool_call_ids_must_be_strings(openai_client: openai.AsyncOpenAI) -> None:
    first = await ask(openai_client, "gpt-5", [USER], stream=False, tools=CHAT_TOOLS)
    answers = results(first["message"])
    answers[0]["tool_call_id"] = ["not", "a", "string"]
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.chat.completions.create(
            model="gpt-5", messages=[USER, first["message"], *answers], tools=CHAT_TOOLS
        )
    assert bad_request(exc) == {
        "message": "Invalid type for 'messages[2].tool_call_id': expected a string, but got an "
        "array instead.",
        "type": "invalid_request_error",
        "param": "messages[2].tool_call_id",
        "code": "invalid_type",
    }
    del answers[0]["tool_call_id"]
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.chat.completions.create(
            model="gpt-5", messages=[USER, first["message"], *answers], tools=CHAT_TOOLS
        )
    assert bad_request(exc)["message"] == "Missing required parameter: 'messages[2].tool_call_id'."
    calls = copy.deepcopy(first["message"])
    calls["tool_calls"][0]["id"] = {"id": 1}
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.chat.completions.create(
            model="gpt-5", messages=[USER, calls, *results(first["message"])], tools=CHAT_TOOLS
        )
    assert bad_request(exc)["param"] == "messages[1].tool_calls[0].id"


async def test_responses_style_tools_are_refused(openai_client: openai.AsyncOpenAI) -> None:
    flat = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.chat.completions.create(model="gpt-5", messages=[USER], tools=flat)  # type: ignore[list-item]
    assert bad_request(exc)["message"] == "Missing required parameter: 'tools[0].function'."


async def test_parallel_calls_and_tool_choice(openai_client: openai.AsyncOpenAI) -> None:
    question = {"role": "user", "content": "What's the weather in Paris and London?"}
    both = await openai_client.chat.completions.create(
        model="o4-mini", messages=[question], tools=CHAT_TOOLS
    )
    calls = both.choices[0].message.tool_calls or []
    assert [json.loads(c.function.arguments) for c in calls] == [
        {"city": "Paris"},
        {"city": "London"},
    ]  # type: ignore[union-attr]
    one = await openai_client.chat.completions.create(
        model="o4-mini", messages=[question], tools=CHAT_TOOLS, parallel_tool_calls=False
    )
    assert len(one.choices[0].message.tool_calls or []) == 1
    none = await openai_client.chat.completions.create(
        model="o4-mini", messages=[question], tools=CHAT_TOOLS, tool_choice="none"
    )
    assert none.choices[0].finish_reason == "stop"
    forced = await openai_client.chat.completions.create(
        model="o4-mini",
        messages=[question],
        tools=CHAT_TOOLS,
        tool_choice={"type": "function", "function": {"name": "get_time"}},
    )
    assert forced.choices[0].message.tool_calls[0].function.name == "get_time"  # type: ignore[index,union-attr]


# --- authentication -------------------------------------------------------------------------


async def test_missing_credentials(emu: Emulator) -> None:
    import httpx2

    async with httpx2.AsyncClient(base_url=emu.url) as http:
        response = await http.post(
            "/v1/chat/completions", json={"model": "gpt-5", "messages": [USER]}
        )
        assert response.status_code == 401
        assert response.json()["error"]["message"].startswith("You didn't provide an API key.")
        assert response.json()["error"]["type"] == "invalid_request_error"
        response = await http.post(
            "/openai/deployments/d/chat/completions?api-version=2025-04-01-preview",
            json={"messages": [USER]},
        )
        assert response.status_code == 401
        assert response.json() == {
            "error": {
                "code": "401",
                "message": "Access denied due to invalid subscription key or wrong API endpoint. "
                "Make sure to provide a valid key for an active subscription and use a correct "
                "regional API endpoint for your resource.",
            }
        }
        response = await http.post(
            "/openai/deployments/d/chat/completions",
            json={"messages": [USER]},
            headers={"api-key": "k"},
        )
        assert response.status_code == 404
        assert response.json() == {"error": {"code": "404", "message": "Resource not found"}}


async def test_scripted_reply_is_rendered_in_the_dialect(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    emu.script(
        "openai",
        [
            Reply(
                thinking="Rome, not Paris.",
                text="Checking.",
                tool_calls=[ToolCallSpec("get_weather", {"city": "Rome"}, id="call_scripted")],
            )
        ],
    )
    first = await ask(openai_client, "kimi-k2-thinking", [USER], stream=False, tools=CHAT_TOOLS)
    assert first["message"]["reasoning_content"] == "Rome, not Paris."
    assert first["message"]["tool_calls"][0]["id"] == "call_scripted"
    assert call_of(first) == ("get_weather", {"city": "Rome"})
    again = await ask(openai_client, "kimi-k2-thinking", [USER], stream=False, tools=CHAT_TOOLS)
    assert call_of(again) == ("get_weather", {"city": "Paris"})
