"""`GeminiModel` through the official `google-genai` SDK against the emulator: multi-turn
Gemini 3 tool loops with parallel calls, streamed and not, Gemini 2.5 budgets, persistence,
cross-scope continuation and faults. The emulator verifying every replayed signature (and
refusing a missing one with the real message) is the proof."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from google.genai import types

from thinkagent import (
    Agent,
    Message,
    ModelResponse,
    ProviderError,
    StreamInterrupted,
    TextDelta,
    TextPart,
    ThinkingBlock,
    ThinkingDelta,
    Tool,
    ToolCall,
    ToolResult,
    dump_messages,
    load_messages,
    validate_history,
)
from thinkagent.emulator import Emulator, Fault, Reply
from thinkagent.providers.base import ModelRequest
from thinkagent.providers.gemini import GeminiModel, GeminiThinking

QUESTION = "What's the weather, the local time and the population in Paris and London?"
KEY = "emulator-key"


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def get_time(city: str) -> str:
    """Local time in a city."""
    return f"14:05 in {city}"


def get_population(city: str) -> str:
    """Population of a city."""
    return f"about two million in {city}"


TOOLS = [get_weather, get_time, get_population]


def agent(client: Any, model: str = "gemini-3-pro-preview", **kwargs: Any) -> Agent:
    return Agent(GeminiModel(model, client=client, **kwargs), tools=TOOLS)


def clear_ids(messages: list[Message]) -> list[Message]:
    return [m.model_copy(update={"id": None}) for m in messages]


def decode(value: str) -> bytes:
    return base64.urlsafe_b64decode(value.replace("+", "-").replace("/", "_") + "==")


def signed_parts(message: Message) -> list[tuple[str, bytes | None]]:
    """What must go back for an assistant message: every part that is replayed, in order,
    with its signature bytes (unsigned thought summaries are not replayed)."""
    out: list[tuple[str, bytes | None]] = []
    for part in message.parts:
        signature = decode(part.signature) if part.signature else None
        if isinstance(part, ThinkingBlock):
            if signature is not None:
                out.append(("thought:" + part.text, signature))
        elif isinstance(part, TextPart):
            if part.text or signature is not None:
                out.append(("text:" + part.text, signature))
        elif isinstance(part, ToolCall):
            out.append(("call:" + part.name, signature))
    return out


def wire_parts(content: dict[str, Any]) -> list[tuple[str, bytes | None]]:
    out: list[tuple[str, bytes | None]] = []
    for part in content["parts"]:
        signature = decode(part["thoughtSignature"]) if "thoughtSignature" in part else None
        if "functionCall" in part:
            out.append(("call:" + part["functionCall"]["name"], signature))
        elif part.get("thought"):
            out.append(("thought:" + part.get("text", ""), signature))
        else:
            out.append(("text:" + part.get("text", ""), signature))
    return out


def assert_replayed_exactly(messages: list[Message], bodies: list[dict[str, Any]]) -> None:
    """Every assistant message goes back on every later request, part for part, each
    signature on the same part and byte for byte."""
    replies = [m for m in messages if m.role == "assistant"]
    for n, body in enumerate(bodies):
        models = [c for c in body["contents"] if c["role"] == "model"]
        assert len(models) == n
        for reply, content in zip(replies[:n], models, strict=True):
            assert wire_parts(content) == signed_parts(reply)


# --- loops --------------------------------------------------------------------------------


async def test_a_gemini_3_loop_with_parallel_calls_replays_every_signature(
    emu: Emulator, gemini_client: Any
) -> None:
    result = await agent(gemini_client).run(QUESTION)
    replies = [m for m in result.messages if m.role == "assistant"]
    assert len(replies) == 4  # weather, time, population (two cities each), then the answer
    for reply in replies[:3]:
        calls = reply.tool_calls
        assert len(calls) == 2
        assert calls[0].signature is not None and calls[1].signature is None  # only the first
        assert reply.thinking and not reply.thinking[0].is_signed  # a thought summary
        assert reply.finish_reason == "tool_call"
        assert reply.scope == "gemini"
    answer = replies[3]
    assert answer.finish_reason == "stop"
    assert isinstance(answer.parts[-1], TextPart) and answer.parts[-1].signature is not None
    assert "London" in result.output and "about two million" in result.output
    assert result.usage.thinking_tokens > 0
    bodies = [r.body for r in emu.requests]
    assert len(bodies) == 4
    assert_replayed_exactly(result.messages, bodies)
    assert bodies[0]["generationConfig"]["thinkingConfig"] == {"include_thoughts": True}


async def test_streamed_and_non_streamed_loops_give_equal_messages(
    emu: Emulator, gemini_client: Any
) -> None:
    loop = agent(gemini_client)
    plain = await loop.run(QUESTION)
    kinds: list[str] = []
    async with loop.run_stream(QUESTION) as stream:
        async for event in stream:
            if isinstance(event, ThinkingDelta):
                kinds.append("thinking")
            elif isinstance(event, TextDelta):
                kinds.append("text" if event.signature is None else "signature")
            elif isinstance(event, ModelResponse):
                kinds.append("response")
    streamed = stream.result
    assert clear_ids(streamed.messages) == clear_ids(plain.messages)
    assert streamed.output == plain.output
    # thinking comes before the text it precedes; the answer's signature closes its text part
    first = kinds.index("response")
    assert kinds.index("thinking") < kinds.index("text") < first
    assert kinds[-2:] == ["signature", "response"]
    assert_replayed_exactly(streamed.messages, [r.body for r in emu.requests[4:]])


async def test_a_signature_on_an_empty_text_part_is_kept_and_replayed(
    emu: Emulator, gemini_client: Any
) -> None:
    emu.script("gemini", [Reply(thinking="Nothing to add.", text="")] * 2)
    model = GeminiModel("gemini-3-pro-preview", client=gemini_client)
    first = await Agent(model).run("Say nothing.")
    empty = first.messages[-1].parts[-1]
    assert empty == TextPart(text="", signature=empty.signature)
    assert empty.signature
    streamed_parts: list[Any] = []
    async with Agent(model).run_stream("Say nothing.") as stream:
        async for event in stream:
            if isinstance(event, ModelResponse):
                streamed_parts = list(event.message.parts)
    assert streamed_parts == list(first.messages[-1].parts)
    second = await Agent(model).run("Now say hello.", history=first.messages)
    sent = emu.requests[-1].body["contents"][1]["parts"]
    assert sent == [{"text": "", "thoughtSignature": sent[-1]["thoughtSignature"]}]
    assert decode(sent[-1]["thoughtSignature"]) == decode(empty.signature)
    assert second.output


@pytest.mark.parametrize(
    ("model", "budget", "config"),
    [
        ("gemini-2.5-flash", 1024, {"include_thoughts": True, "thinking_budget": 1024}),
        ("gemini-2.5-pro", -1, {"include_thoughts": True, "thinking_budget": -1}),
        ("gemini-2.5-flash", 0, {"thinking_budget": 0}),
    ],
)
async def test_gemini_2_5_budgets(
    emu: Emulator, gemini_client: Any, model: str, budget: int, config: dict[str, Any]
) -> None:
    result = await agent(gemini_client, model, thinking=GeminiThinking(budget=budget)).run(QUESTION)
    assert emu.requests[0].body["generationConfig"]["thinkingConfig"] == config
    replies = [m for m in result.messages if m.role == "assistant"]
    assert len(replies) == 4
    thoughts = [b for m in replies for b in m.thinking]
    if budget == 0:
        assert not thoughts
        assert all(c.signature is None for m in replies for c in m.tool_calls)
    else:
        assert thoughts
        assert all(m.tool_calls[0].signature for m in replies[:3])
        assert result.usage.thinking_tokens > 0
    assert_replayed_exactly(result.messages, [r.body for r in emu.requests])


async def test_the_service_refuses_a_budget_out_of_range(gemini_client: Any) -> None:
    with pytest.raises(ProviderError) as caught:
        await agent(gemini_client, "gemini-2.5-pro", thinking=GeminiThinking(budget=50)).run(
            QUESTION
        )
    assert caught.value.status == 400
    assert caught.value.message == "The thinking budget (50) is invalid."


# --- replay is verified -------------------------------------------------------------------


def first_step(messages: list[Message]) -> list[Message]:
    """The history up to the first tool results (a mid-loop point to resume from)."""
    k = next(i for i, m in enumerate(messages) if m.role == "assistant" and m.tool_calls)
    return list(messages[: k + 2])


async def test_a_dropped_function_call_signature_is_refused_with_the_real_message(
    emu: Emulator, gemini_client: Any
) -> None:
    loop = agent(gemini_client)
    head = first_step((await loop.run(QUESTION)).messages)
    turn = head[1]
    parts = [
        p.model_copy(update={"signature": None}) if isinstance(p, ToolCall) else p
        for p in turn.parts
    ]
    broken = [*head[:1], turn.model_copy(update={"parts": tuple(parts)}), *head[2:]]
    emu.clear()
    with pytest.raises(ProviderError) as caught:
        await loop.run(None, history=load_messages(dump_messages(broken)))
    exc = caught.value
    assert (exc.status, exc.error_type, exc.retryable) == (400, "INVALID_ARGUMENT", False)
    assert exc.message.startswith(
        "Function call is missing a thought_signature in functionCall parts."
    )
    assert "function call `default_api:get_weather` , position 2" in exc.message
    assert exc.messages == broken  # the evidence is still the (valid) history given
    assert len(emu.requests) == 1


async def test_a_tampered_signature_is_refused(gemini_client: Any) -> None:
    loop = agent(gemini_client)
    head = first_step((await loop.run(QUESTION)).messages)
    call = head[1].tool_calls[0]
    assert call.signature is not None
    flipped = (
        call.signature[:20] + ("A" if call.signature[20] != "A" else "B") + call.signature[21:]
    )
    parts = tuple(
        p.model_copy(update={"signature": flipped}) if p is call else p for p in head[1].parts
    )
    broken = [head[0], head[1].model_copy(update={"parts": parts}), *head[2:]]
    with pytest.raises(ProviderError, match=r"Corrupted thought signature\."):
        await loop.run(None, history=broken)


async def test_a_run_persisted_mid_loop_resumes_from_json(
    emu: Emulator, gemini_client: Any
) -> None:
    loop = agent(gemini_client)
    full = await loop.run(QUESTION)
    head = first_step(full.messages)
    text = dump_messages(head)
    assert KEY not in text
    restored = load_messages(text)
    assert restored == head
    emu.clear()
    resumed = await loop.run(None, history=restored)
    assert clear_ids(resumed.messages) == clear_ids(full.messages)
    bodies = [r.body for r in emu.requests]
    assert len(bodies) == 3
    first_reply = next(c for c in bodies[0]["contents"] if c["role"] == "model")
    assert wire_parts(first_reply) == signed_parts(head[1])


# --- across scopes ------------------------------------------------------------------------


async def test_a_gemini_api_history_continues_on_vertex_without_its_signatures(
    emu: Emulator, gemini_client: Any, vertex_client: Any
) -> None:
    head = first_step((await agent(gemini_client).run(QUESTION)).messages)
    gemini_signatures = {
        decode(p.signature)
        for m in head
        for p in m.parts
        if isinstance(p, (TextPart, ThinkingBlock, ToolCall)) and p.signature
    }
    assert gemini_signatures
    emu.clear()
    vertex = agent(vertex_client)
    assert vertex.model.scope == "vertex"
    result = await vertex.run(None, history=head)
    assert result.output
    first = emu.requests[0]
    assert first.api == "vertex"
    model_turn = next(c for c in first.body["contents"] if c["role"] == "model")
    sent = [decode(p["thoughtSignature"]) for p in model_turn["parts"] if "thoughtSignature" in p]
    assert sent == [b"skip_thought_signature_validator"]
    assert "thoughtSignature" in model_turn["parts"][-2]  # on the first of the two calls
    assert not gemini_signatures & {
        decode(p["thoughtSignature"])
        for r in emu.requests
        for c in r.body["contents"]
        for p in c["parts"]
        if "thoughtSignature" in p
    }
    assert all(m.scope == "vertex" for m in result.new_messages if m.role == "assistant")


async def test_without_the_dummy_signature_vertex_refuses_the_foreign_call(
    gemini_client: Any, vertex_client: Any
) -> None:
    head = first_step((await agent(gemini_client).run(QUESTION)).messages)
    with pytest.raises(ProviderError) as caught:
        await agent(vertex_client, missing_signature="send").run(None, history=head)
    assert caught.value.scope == "vertex"
    assert caught.value.message.startswith(
        "Unable to submit request because function call `default_api:get_weather` in the 2. "
        "content block is missing a `thought_signature`."
    )


async def test_an_anthropic_history_continues_on_gemini(emu: Emulator, gemini_client: Any) -> None:
    claude = Message(
        role="assistant",
        parts=(
            ThinkingBlock.signed("The user wants the weather.", "EqQBCkYIBxgCKkDanthropic"),
            TextPart(text="Let me check."),
            ToolCall(id="toolu_01", name="get_weather", arguments={"city": "Paris"}),
            ToolCall(id="toolu_02", name="get_weather", arguments={"city": "London"}),
        ),
        scope="anthropic",
        model="claude-sonnet-4-5",
    )
    history = [
        Message.user(QUESTION),
        claude,
        Message.user_results(
            [
                ToolResult(call_id="toolu_01", name="get_weather", content="sunny, 21 C"),
                ToolResult(call_id="toolu_02", name="get_weather", content="rain, 12 C"),
            ]
        ),
    ]
    result = await agent(gemini_client).run(None, history=history)
    assert result.output
    body = emu.requests[0].body
    assert "anthropic" not in str(body) and "The user wants" not in str(body)
    parts = body["contents"][1]["parts"]
    assert parts[0] == {"text": "Let me check."}
    assert decode(parts[1]["thoughtSignature"]) == b"skip_thought_signature_validator"
    assert parts[1]["functionCall"]["id"] == "toolu_01"
    assert "thoughtSignature" not in parts[2]
    assert body["contents"][2]["parts"][0]["functionResponse"] == {
        "id": "toolu_01",
        "name": "get_weather",
        "response": {"output": "sunny, 21 C"},
    }


# --- faults -------------------------------------------------------------------------------


async def test_a_429_is_retried_by_the_sdk_retry_options(emu: Emulator) -> None:
    client = emu.gemini_client(
        http_options=types.HttpOptions(
            retry_options=types.HttpRetryOptions(attempts=3, initial_delay=0.01, max_delay=0.02)
        )
    )
    try:
        emu.inject(Fault.rate_limited(api="gemini"))
        result = await agent(client).run(QUESTION)
    finally:
        await client.aio.aclose()
    assert result.output
    assert len(emu.requests) == 5  # the refused attempt and the four turns


async def test_a_429_without_retry_options_is_a_retryable_provider_error(
    emu: Emulator, gemini_client: Any
) -> None:
    emu.inject(Fault.rate_limited(api="gemini"))
    with pytest.raises(ProviderError) as caught:
        await agent(gemini_client).run(QUESTION)
    assert (caught.value.status, caught.value.retryable) == (429, True)
    assert caught.value.error_type == "RESOURCE_EXHAUSTED"


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_500_is_a_retryable_provider_error(
    emu: Emulator, gemini_client: Any, streamed: bool
) -> None:
    emu.inject(Fault.http(500, api="gemini"))
    loop = agent(gemini_client)
    with pytest.raises(ProviderError) as caught:
        if streamed:
            async with loop.run_stream(QUESTION) as stream:
                async for _ in stream:
                    pass
        else:
            await loop.run(QUESTION)
    exc = caught.value
    assert (exc.status, exc.retryable, exc.error_type) == (500, True, "INTERNAL")
    assert exc.message.startswith("An internal error has occurred.")
    assert not isinstance(exc, StreamInterrupted)


async def test_a_cut_stream_is_interrupted_with_an_unsigned_partial(
    emu: Emulator, gemini_client: Any
) -> None:
    emu.inject(Fault.cut(api="gemini"))
    loop = agent(gemini_client)
    with pytest.raises(StreamInterrupted) as caught:
        async with loop.run_stream(QUESTION) as stream:
            async for _ in stream:
                pass
    exc = caught.value
    assert exc.retryable
    assert exc.partial is not None
    assert exc.partial.parts and all(
        getattr(p, "signature", None) is None for p in exc.partial.parts
    )
    assert isinstance(exc.partial.parts[0], ThinkingBlock)
    validate_history(exc.messages)
    assert exc.messages == [Message.user(QUESTION)]
    retried = await loop.run(None, history=exc.messages)  # the run can go on from there
    assert retried.output


async def test_a_cut_after_the_signed_call_drops_that_signature(
    emu: Emulator, gemini_client: Any
) -> None:
    emu.inject(Fault.cut(after=4, api="gemini"))
    with pytest.raises(StreamInterrupted) as caught:
        async for _ in GeminiModel("gemini-3-pro-preview", client=gemini_client).stream(
            _request(QUESTION)
        ):
            pass
    partial = caught.value.partial
    assert partial is not None
    assert partial.parts[-1].signature is None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("fault", "kind", "status"),
    [
        (Fault.stream_error(503, after=2, api="gemini"), ProviderError, 503),
        (Fault.malformed(after=2, api="gemini"), StreamInterrupted, None),
    ],
)
async def test_errors_inside_a_stream(
    gemini_client: Any, emu: Emulator, fault: Fault, kind: type[ProviderError], status: int | None
) -> None:
    emu.inject(fault)
    with pytest.raises(kind) as caught:
        async for _ in GeminiModel("gemini-3-pro-preview", client=gemini_client).stream(
            _request(QUESTION)
        ):
            pass
    assert caught.value.status == status
    assert caught.value.retryable


def _request(prompt: str) -> ModelRequest:
    return ModelRequest(messages=[Message.user(prompt)], tools=[Tool(f).definition for f in TOOLS])


@pytest.mark.parametrize(
    ("fault", "error_type"),
    [
        (Fault.cut(api="gemini"), "connection_error"),
        (Fault.malformed(api="gemini"), "malformed_response"),
    ],
)
async def test_a_broken_json_body_is_a_retryable_provider_error(
    gemini_client: Any, emu: Emulator, fault: Fault, error_type: str
) -> None:
    emu.inject(fault)
    with pytest.raises(ProviderError) as caught:
        await GeminiModel("gemini-3-pro-preview", client=gemini_client).request(_request(QUESTION))
    assert caught.value.retryable
    assert caught.value.error_type == error_type
    assert caught.value.__cause__ is not None


async def test_another_gemini_generation_is_treated_as_foreign(
    emu: Emulator, gemini_client: Any
) -> None:
    """A Gemini 2.5 history continued on Gemini 3: its signatures are not valid there."""
    head = first_step((await agent(gemini_client, "gemini-2.5-flash").run(QUESTION)).messages)
    assert head[1].tool_calls[0].signature is not None
    emu.clear()
    result = await agent(gemini_client).run(None, history=head)
    assert result.output
    parts = emu.requests[0].body["contents"][1]["parts"]
    sent = [decode(p["thoughtSignature"]) for p in parts if "thoughtSignature" in p]
    assert sent == [b"skip_thought_signature_validator"]


async def test_the_same_generation_keeps_its_signatures(emu: Emulator, gemini_client: Any) -> None:
    head = first_step((await agent(gemini_client, "gemini-3-flash-preview").run(QUESTION)).messages)
    emu.clear()
    result = await agent(gemini_client, "gemini-3-pro-preview").run(None, history=head)
    assert result.output
    model_turn = emu.requests[0].body["contents"][1]
    assert wire_parts(model_turn) == signed_parts(head[1])


async def test_leaving_a_stream_early_releases_it(emu: Emulator, gemini_client: Any) -> None:
    model = GeminiModel("gemini-3-pro-preview", client=gemini_client)
    stream = model.stream(_request(QUESTION))
    first = await anext(stream)
    assert isinstance(first, ThinkingDelta)
    await stream.aclose()  # type: ignore[attr-defined]
    again = await Agent(model, tools=TOOLS).run(QUESTION)
    assert again.output


async def test_a_vertex_loop_streamed_and_not(emu: Emulator, vertex_client: Any) -> None:
    loop = agent(vertex_client)
    plain = await loop.run(QUESTION)
    async with loop.run_stream(QUESTION) as stream:
        async for _ in stream:
            pass
    assert clear_ids(stream.result.messages) == clear_ids(plain.messages)
    assert {m.scope for m in plain.messages if m.role == "assistant"} == {"vertex"}
    assert {r.api for r in emu.requests} == {"vertex"}
    assert_replayed_exactly(plain.messages, [r.body for r in emu.requests[:4]])


async def test_signatures_come_without_thought_summaries_too(
    emu: Emulator, gemini_client: Any
) -> None:
    result = await agent(gemini_client, thinking=GeminiThinking(include_thoughts=False)).run(
        QUESTION
    )
    replies = [m for m in result.messages if m.role == "assistant"]
    assert not any(m.thinking for m in replies)
    assert all(m.tool_calls[0].signature for m in replies[:3])
    assert "thinkingConfig" not in emu.requests[0].body.get("generationConfig", {})
    assert_replayed_exactly(result.messages, [r.body for r in emu.requests])
