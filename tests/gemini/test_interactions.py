"""`GeminiInteractionsModel` through the official `google-genai` SDK against the emulator's
Interactions wire: thinking + tool loops, streamed and not, persisted and resumed, stateless
and stateful, across scopes, the thinking knob, errors and faults. The emulator verifying
every replayed signature (and refusing a missing or changed one with the service's text) is
the proof."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from google import genai

from thinkagent import (
    Agent,
    Image,
    Message,
    ModelResponse,
    ModelSettings,
    PartEnd,
    ProviderError,
    StreamInterrupted,
    TextPart,
    ThinkingBlock,
    ThinkingDelta,
    Tool,
    ToolCall,
    ToolCallDelta,
    dump_messages,
    load_messages,
)
from thinkagent.emulator import Emulator, Fault, Reply, ToolCallSpec
from thinkagent.errors import ConfigurationError
from thinkagent.providers.base import ModelRequest
from thinkagent.providers.gemini import GeminiInteractionsModel, GeminiModel, GeminiThinking

G3 = "gemini-3-pro-preview"
API = "gemini-interactions"
PROMPTS = ["What's the weather in Paris?", "And in Rome?", "And in Oslo?", "And in Bern?"]
QUESTION = "What's the weather and the local time in Paris?"


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def get_time(city: str) -> str:
    """Local time in a city."""
    return f"14:05 in {city}"


TOOLS = [get_weather, get_time]


@pytest.fixture
async def client(emu: Emulator) -> AsyncIterator[genai.Client]:
    """The emulator's Gemini API client without the SDK's retries (a fault arrives as is)."""
    made = emu.gemini_client(http_options={"retry_options": {"attempts": 1}})
    yield made
    await made.aio.aclose()


def agent(client: genai.Client, model: str = G3, **kwargs: Any) -> Agent:
    return Agent(GeminiInteractionsModel(model, client=client, **kwargs), tools=TOOLS)


async def run(loop: Agent, prompt: str | None, history: list[Message], *, stream: bool) -> Any:
    kw: dict[str, Any] = {"history": history} if history else {}
    if not stream:
        return await loop.run(prompt, **kw)
    async with loop.run_stream(prompt, **kw) as events:
        async for _ in events:
            pass
    return events.result


def bodies(emu: Emulator) -> list[dict[str, Any]]:
    return [r.body for r in emu.requests if r.api == API and r.method == "POST"]


def signatures(messages: list[Message]) -> list[str]:
    return [
        p.signature
        for m in messages
        for p in m.parts
        if isinstance(p, ThinkingBlock) and p.signature is not None
    ]


def sent_signatures(body: dict[str, Any]) -> list[str]:
    return [s["signature"] for s in body["input"] if s["type"] == "thought"]


def request(prompt: str) -> ModelRequest:
    return ModelRequest(messages=[Message.user(prompt)], tools=[Tool(f).definition for f in TOOLS])


# --- the loop -----------------------------------------------------------------------------------


async def test_a_four_turn_loop_streamed_and_not_persisted_and_resumed(
    client: genai.Client, emu: Emulator
) -> None:
    """The acceptance loop: every request accepted, every signature back in place."""
    loop = agent(client)
    saved = ""
    for i, prompt in enumerate(PROMPTS):
        history = load_messages(saved) if saved else []
        result = await run(loop, prompt, history, stream=bool(i % 2))
        assert "sunny in" in result.output
        saved = dump_messages(result.messages)
    history = load_messages(saved)
    sent = bodies(emu)
    assert len(sent) == 8
    assert all(b["store"] is False and "previous_interaction_id" not in b for b in sent)
    last = sent[-1]
    kept = signatures(history)
    assert len(kept) == 8
    assert sent_signatures(last) == kept[:-1]  # all but the answer's, which came after it
    assert [s["type"] for s in last["input"][:5]] == [
        "user_input",
        "thought",
        "model_output",
        "function_call",
        "function_result",
    ]
    assert all(m.scope == API and m.model == G3 for m in history if m.role == "assistant")
    for message in history:
        if message.role == "assistant":
            assert message.usage is not None and message.usage.thinking_tokens > 0
            assert message.usage.output_tokens > message.usage.thinking_tokens


async def test_streamed_and_non_streamed_give_equal_messages(
    client: genai.Client, emu: Emulator
) -> None:
    reply = Reply(
        thinking="I should look it up and then tell the time as well.",
        text="Let me check.",
        tool_calls=[
            ToolCallSpec("get_weather", {"city": "Paris", "units": [1, 2.5, None]}),
            ToolCallSpec("get_time", {"city": "Paris"}),
        ],
    )
    emu.script(API, [reply, reply])
    model = GeminiInteractionsModel(G3, client=client)
    plain = await model.request(request(QUESTION))
    events = [e async for e in model.stream(request(QUESTION))]
    streamed = events[-1]
    assert isinstance(streamed, ModelResponse)
    assert streamed.message == plain.message
    kinds = [type(p).__name__ for p in plain.message.parts]
    assert kinds == ["ThinkingBlock", "TextPart", "ToolCall", "ToolCall"]
    ends = [e.index for e in events if isinstance(e, PartEnd)]
    assert ends == [0, 1, 2, 3]
    assert isinstance(events[0], ThinkingDelta)
    assert any(isinstance(e, ToolCallDelta) and e.args_fragment for e in events)
    assert plain.message.finish_reason == "tool_call"
    assert plain.message.provider_details == {"status": "requires_action"}
    assert plain.message.id is None  # stateless: nothing stored, no id


async def test_thought_summaries_follow_include_thoughts(
    client: genai.Client, emu: Emulator
) -> None:
    quiet = GeminiInteractionsModel(
        G3, client=client, thinking=GeminiThinking(include_thoughts=False)
    )
    message = (await quiet.request(request(QUESTION))).message
    thought = message.parts[0]
    assert isinstance(thought, ThinkingBlock) and thought.text == "" and thought.signature
    assert bodies(emu)[-1]["generation_config"] == {"thinking_summaries": "none"}
    high = GeminiInteractionsModel(G3, client=client, thinking=GeminiThinking(level="high"))
    message = (await high.request(request(QUESTION))).message
    assert isinstance(message.parts[0], ThinkingBlock) and message.parts[0].text
    assert bodies(emu)[-1]["generation_config"] == {
        "thinking_level": "high",
        "thinking_summaries": "auto",
    }


# --- stateful ------------------------------------------------------------------------------------


async def test_a_stateful_loop_sends_only_what_is_new(client: genai.Client, emu: Emulator) -> None:
    loop = agent(client, stateful=True)
    saved = ""
    for i, prompt in enumerate(PROMPTS):
        history = load_messages(saved) if saved else []
        result = await run(loop, prompt, history, stream=bool(i % 2))
        saved = dump_messages(result.messages)
    history = load_messages(saved)
    sent = bodies(emu)
    assert sent[0]["store"] is True and "previous_interaction_id" not in sent[0]
    ids = [m.id for m in history if m.role == "assistant"]
    assert all(ids) and len(set(ids)) == len(ids)
    assert [b["previous_interaction_id"] for b in sent[1:]] == ids[:-1]
    for body in sent[1:]:
        assert [s["type"] for s in body["input"]] in (["function_result"], ["user_input"])
    assert signatures(history)  # kept, though never sent again


async def test_stateful_after_a_stateless_history_sends_it_whole(
    client: genai.Client, emu: Emulator
) -> None:
    head = (await agent(client).run(PROMPTS[0])).messages
    emu.clear()
    result = await agent(client, stateful=True).run(PROMPTS[1], history=head)
    sent = bodies(emu)
    assert "previous_interaction_id" not in sent[0]
    assert sent_signatures(sent[0]) == signatures(head)
    assert sent[1]["previous_interaction_id"] == result.messages[-3].id


async def test_an_expired_interaction_is_a_not_found_provider_error(
    client: genai.Client, emu: Emulator
) -> None:
    head = (await agent(client, stateful=True).run(PROMPTS[0])).messages
    emu.reset()  # the stored interactions are gone
    with pytest.raises(ProviderError) as caught:
        await agent(client, stateful=True).run(PROMPTS[1], history=head)
    assert (caught.value.status, caught.value.error_type) == (404, "NOT_FOUND")
    assert caught.value.messages == [*head, Message.user(PROMPTS[1])]


# --- across scopes --------------------------------------------------------------------------


async def test_a_generate_content_history_continues_on_interactions(
    client: genai.Client, emu: Emulator
) -> None:
    """Another scope: its signatures are never sent; the current turn's calls get a thought
    with the documented dummy signature, which the service accepts."""
    generate = Agent(GeminiModel(G3, client=client), tools=TOOLS)
    full = (await generate.run(QUESTION)).messages
    head = full[:3]  # the prompt, the first call, its result: a loop in the middle
    emu.clear()
    result = await agent(client).run(None, history=head)
    assert "14:05" in result.output
    first = bodies(emu)[0]
    assert sent_signatures(first) == [
        base64.b64encode(b"skip_thought_signature_validator").decode()
    ]
    generate_signatures = {
        p.signature for m in head for p in m.parts if getattr(p, "signature", None)
    }
    assert generate_signatures and not generate_signatures & set(sent_signatures(first))
    assert [s["type"] for s in first["input"]] == [
        "user_input",
        "model_output",
        "thought",  # the dummy, right before the call
        "function_call",
        "function_result",
    ]


async def test_without_the_dummy_the_foreign_call_is_refused(
    client: genai.Client, emu: Emulator
) -> None:
    full = (await Agent(GeminiModel(G3, client=client), tools=TOOLS).run(QUESTION)).messages
    with pytest.raises(ProviderError) as caught:
        await agent(client, missing_signature="send").run(None, history=full[:3])
    assert caught.value.message.startswith("Function call is missing a thought_signature")


async def test_an_interactions_history_continues_on_generate_content(
    client: genai.Client, emu: Emulator
) -> None:
    head = (await agent(client).run(PROMPTS[0])).messages
    kept = set(signatures(head))
    emu.clear()
    result = await Agent(GeminiModel(G3, client=client), tools=TOOLS).run(PROMPTS[1], history=head)
    assert "Rome" in result.output
    sent = json.dumps([r.body for r in emu.requests])
    assert kept and not any(s in sent for s in kept)


# --- the thinking knob -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "value", "config", "codes"),
    [
        (G3, "low", {"thinking_level": "low", "thinking_summaries": "auto"}, []),
        (
            G3,
            "medium",
            {"thinking_level": "high", "thinking_summaries": "auto"},
            ["thinking_clamped"],
        ),
        (
            G3,
            False,
            {"thinking_level": "low", "thinking_summaries": "none"},
            ["thinking_not_disabled"],
        ),
        (
            "gemini-3-flash-preview",
            False,
            {"thinking_level": "minimal", "thinking_summaries": "none"},
            ["thinking_not_disabled"],
        ),
        ("gemini-2.5-flash", "high", {"thinking_summaries": "auto"}, ["thinking_clamped"]),
        ("gemini-2.5-flash", False, {"thinking_summaries": "none"}, ["thinking_not_disabled"]),
        ("gemini-2.5-flash", True, {"thinking_summaries": "auto"}, []),
    ],
)
async def test_the_thinking_knob(
    client: genai.Client,
    emu: Emulator,
    model: str,
    value: Any,
    config: dict[str, Any],
    codes: list[str],
) -> None:
    adapter = GeminiInteractionsModel(model, client=client)
    ask = ModelRequest(messages=[Message.user("Hello")], settings=ModelSettings(thinking=value))
    response = await adapter.request(ask)
    assert bodies(emu)[-1]["generation_config"] == config  # and the emulator accepted it
    assert [w.code for w in response.warnings] == codes
    streamed = [e async for e in adapter.stream(ask)]
    assert [getattr(e, "code", None) for e in streamed[: len(codes)]] == codes


def test_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="no thinking budget"):
        GeminiInteractionsModel(
            G3, client=genai.Client(api_key="k"), thinking=GeminiThinking(budget=1024)
        )
    with pytest.raises(ConfigurationError, match="MINIMAL"):
        GeminiInteractionsModel(
            G3, client=genai.Client(api_key="k"), thinking=GeminiThinking(level="minimal")
        )
    with pytest.raises(ConfigurationError, match="thinking_level"):
        GeminiInteractionsModel(
            G3, client=genai.Client(api_key="k"), generation_config={"thinking_level": "low"}
        )
    with pytest.raises(ConfigurationError, match="stateful"):
        GeminiInteractionsModel(G3, client=genai.Client(api_key="k"), stateful="yes")  # type: ignore[arg-type]
    model = GeminiInteractionsModel(G3, client=genai.Client(api_key="k"))
    assert (model.scope, model.stateful, repr(model)) == (
        API,
        False,
        "GeminiInteractionsModel(model_name='gemini-3-pro-preview', scope='gemini-interactions')",
    )


# --- errors and faults -------------------------------------------------------------------------


async def test_a_tampered_signature_is_an_invalid_thought_signature(
    client: genai.Client, emu: Emulator
) -> None:
    head = (await agent(client).run(PROMPTS[0])).messages
    thought = head[1].parts[0]
    assert isinstance(thought, ThinkingBlock) and thought.signature
    k = len(thought.signature) // 2
    flipped = (
        thought.signature[:k]
        + ("A" if thought.signature[k] != "A" else "B")
        + thought.signature[k + 1 :]
    )
    parts = (thought.model_copy(update={"signature": flipped}), *head[1].parts[1:])
    broken = [head[0], head[1].model_copy(update={"parts": parts}), *head[2:]]
    with pytest.raises(ProviderError) as caught:
        await agent(client).run(PROMPTS[1], history=broken)
    exc = caught.value
    assert (exc.status, exc.error_type, exc.retryable, exc.message) == (
        400,
        "invalid_thought_signature",
        False,
        "Corrupted thought signature.",
    )


async def test_gemini_37_refuses_with_the_third_text(client: genai.Client) -> None:
    """generateContent too: gemini-3.7-flash words a refused signature `Invalid thought
    signature.`, mapped to the same error type."""
    loop = Agent(GeminiModel("gemini-3.7-flash", client=client), tools=TOOLS)
    head = (await loop.run(PROMPTS[0])).messages
    call = head[1].tool_calls[0]
    assert call.signature
    k = len(call.signature) // 2
    flipped = (
        call.signature[:k] + ("A" if call.signature[k] != "A" else "B") + call.signature[k + 1 :]
    )
    parts = tuple(
        p.model_copy(update={"signature": flipped}) if p is call else p for p in head[1].parts
    )
    broken = [head[0], head[1].model_copy(update={"parts": parts}), *head[2:]]
    with pytest.raises(ProviderError) as caught:
        await loop.run(PROMPTS[1], history=broken)
    assert (caught.value.message, caught.value.error_type) == (
        "Invalid thought signature.",
        "invalid_thought_signature",
    )


@pytest.mark.parametrize(("status", "retryable"), [(429, True), (503, True), (400, False)])
async def test_service_errors_are_provider_errors(
    client: genai.Client, emu: Emulator, status: int, retryable: bool
) -> None:
    emu.inject(Fault.http(status, api=API))
    with pytest.raises(ProviderError) as caught:
        await GeminiInteractionsModel(G3, client=client).request(request(QUESTION))
    assert (caught.value.status, caught.value.retryable, caught.value.scope) == (
        status,
        retryable,
        API,
    )
    assert caught.value.error_type in ("RESOURCE_EXHAUSTED", "UNAVAILABLE", "INVALID_ARGUMENT")
    assert caught.value.__cause__ is not None


async def test_the_sdk_retries_are_the_clients(emu: Emulator) -> None:
    made = emu.gemini_client(
        http_options={"retry_options": {"attempts": 2, "initial_delay": 0.01, "max_delay": 0.02}}
    )
    emu.inject(Fault.http(503, api=API))
    response = await GeminiInteractionsModel(G3, client=made).request(request(QUESTION))
    assert response.message.parts
    assert len(bodies(emu)) == 2
    await made.aio.aclose()


async def test_a_cut_stream_is_interrupted_with_an_unsigned_partial(
    client: genai.Client, emu: Emulator
) -> None:
    emu.inject(Fault.cut(api=API))
    model = GeminiInteractionsModel(G3, client=client)
    seen: list[Any] = []
    with pytest.raises(StreamInterrupted) as caught:
        async for event in model.stream(request(QUESTION)):
            seen.append(event)
    partial = caught.value.partial
    assert partial is not None and partial.scope == API
    assert seen and all(isinstance(e, ThinkingDelta) and e.signature is None for e in seen)
    thought = partial.parts[0]
    assert isinstance(thought, ThinkingBlock) and thought.text and thought.signature is None


async def test_a_cut_json_body_and_a_malformed_event(client: genai.Client, emu: Emulator) -> None:
    model = GeminiInteractionsModel(G3, client=client)
    emu.inject(Fault.cut(api=API))
    with pytest.raises(ProviderError) as cut:
        await model.request(request(QUESTION))
    assert cut.value.retryable and cut.value.error_type in (
        "connection_error",
        "malformed_response",
    )
    emu.inject(Fault.malformed(api=API, after=4))
    with pytest.raises(StreamInterrupted) as broken:
        async for _ in model.stream(request(QUESTION)):
            pass
    assert "could not be read" in broken.value.message


async def test_an_error_event_in_the_stream(client: genai.Client, emu: Emulator) -> None:
    emu.inject(Fault.stream_error(429, "Quota exceeded.", api=API, after=3))
    with pytest.raises(ProviderError) as caught:
        async for _ in GeminiInteractionsModel(G3, client=client).stream(request(QUESTION)):
            pass
    assert (caught.value.message, caught.value.error_type, caught.value.retryable) == (
        "Quota exceeded.",
        "resource_exhausted",
        True,
    )


async def test_leaving_a_stream_early_releases_it(client: genai.Client) -> None:
    model = GeminiInteractionsModel(G3, client=client)
    stream = model.stream(request(QUESTION))
    async for _ in stream:
        break
    await stream.aclose()  # type: ignore[attr-defined]
    assert (await model.request(request(QUESTION))).message.parts


# --- what the request carries ----------------------------------------------------------------


async def test_settings_tool_choice_and_native_output(client: genai.Client, emu: Emulator) -> None:
    class Weather(dict[str, Any]):
        pass

    model = GeminiInteractionsModel(
        G3,
        client=client,
        settings=ModelSettings(max_tokens=500, temperature=0.5),
        generation_config={"seed": 7},
    )
    await model.request(
        ModelRequest(
            messages=[Message.user(QUESTION)],
            tools=[Tool(f).definition for f in TOOLS],
            instructions="Be brief.",
            settings=ModelSettings(
                tool_choice="get_time", top_p=0.9, extra_headers={"x-test": "1"}
            ),
        )
    )
    sent = emu.requests[-1]
    body = sent.body
    assert body["system_instruction"] == "Be brief."
    assert body["generation_config"] == {
        "seed": 7,
        "thinking_summaries": "auto",
        "max_output_tokens": 500,
        "temperature": 0.5,
        "top_p": 0.9,
        "tool_choice": {"allowed_tools": {"mode": "any", "tools": ["get_time"]}},
    }
    assert body["tools"][0] == {
        "type": "function",
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": Tool(get_weather).definition.parameters,
    }
    assert sent.headers["x-test"] == "1"
    with pytest.raises(ConfigurationError, match="names no tool"):
        model.build_request(
            ModelRequest(messages=[Message.user("x")], settings={"tool_choice": "nope"})
        )


async def test_structured_output_on_gemini_3(client: genai.Client, emu: Emulator) -> None:
    from pydantic import BaseModel

    class City(BaseModel):
        name: str
        country: str

    loop = Agent(GeminiInteractionsModel(G3, client=client), output_type=City)
    result = await loop.run("Name a city in France.")
    assert isinstance(result.output, City)
    fmt = emu.requests[-1].body["response_format"]
    assert (fmt["type"], fmt["mime_type"]) == ("text", "application/json")
    assert fmt["schema"]["properties"].keys() == {"name", "country"}


async def test_images_in_prompts_and_tool_results(client: genai.Client, emu: Emulator) -> None:
    png = b"\x89PNG\r\n\x1a\n fake"

    def snapshot(city: str) -> Image:
        """A snapshot of a city's weather map."""
        return Image(data=png, media_type="image/png")

    loop = Agent(GeminiInteractionsModel(G3, client=client), tools=[snapshot])
    result = await loop.run(
        ["Show me the weather map of Paris.", Image(data=png, media_type="image/png")]
    )
    assert "image/png" in result.output
    body = bodies(emu)[-1]
    prompt = body["input"][0]["content"]
    assert prompt[1] == {
        "type": "image",
        "data": base64.b64encode(png).decode(),
        "mime_type": "image/png",
    }
    outcome = next(s for s in body["input"] if s["type"] == "function_result")
    assert outcome["result"][1]["type"] == "image"


async def test_finish_reasons(client: genai.Client, emu: Emulator) -> None:
    model = GeminiInteractionsModel(G3, client=client)
    emu.script(API, [Reply(text="Done.")])
    assert (await model.request(request("Hi"))).message.finish_reason == "stop"
    emu.script(API, [Reply(text="cut", stop_reason="max_tokens")])
    cut = await model.request(request("Hi"))
    assert (cut.message.finish_reason, cut.message.provider_details) == (
        "length",
        {"status": "incomplete"},
    )


async def test_a_same_scope_thought_of_another_generation_is_not_replayed(
    client: genai.Client, emu: Emulator
) -> None:
    head = (await agent(client, "gemini-2.5-flash").run(PROMPTS[0])).messages
    assert signatures(head)
    emu.clear()
    await agent(client).run(PROMPTS[1], history=head)
    assert sent_signatures(bodies(emu)[0]) == []


def test_text_parts_of_a_model_turn_share_one_step() -> None:
    model = GeminiInteractionsModel(G3, client=genai.Client(api_key="k"))
    message = Message(
        role="assistant",
        parts=(
            TextPart(text="one"),
            TextPart(text="two"),
            ToolCall(id="c", name="get_time", arguments={}),
        ),
        scope=API,
        model=G3,
    )
    steps = model.build_messages([Message.user("hi"), message])
    assert steps[1:] == [
        {
            "type": "model_output",
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        },
        {"type": "function_call", "id": "c", "name": "get_time", "arguments": {}},
    ]
