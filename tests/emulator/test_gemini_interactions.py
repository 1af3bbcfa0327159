"""The Interactions API wire through the unmodified official SDK (`client.aio.interactions`,
`google.genai.interactions` types), plus raw requests for what the SDK never sends: steps,
thought signatures verified on replay, stored interactions, streaming events, the rules'
refusals with their texts."""

from __future__ import annotations

import base64
import http.client
import json
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest
from google import genai
from google.genai import interactions as ix
from google.genai._interactions import APIConnectionError, APIStatusError, BadRequestError

from thinkagent.emulator import Emulator, Fault, Reply, ToolCallSpec

from .tools import TIME_SCHEMA, WEATHER_SCHEMA

G3 = "gemini-3-pro-preview"
API = "gemini-interactions"
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": WEATHER_SCHEMA,
    },
    {
        "type": "function",
        "name": "get_time",
        "description": "Local time in a city.",
        "parameters": TIME_SCHEMA,
    },
]
#: Two tools: a thought and a call, another thought and call, then the answer.
QUESTION = "What's the weather and the time in Paris?"
SKIP_B64 = base64.b64encode(b"skip_thought_signature_validator").decode()
THEN = {"type": "user_input", "content": [{"type": "text", "text": "And in Rome?"}]}


@pytest.fixture
async def client(emu: Emulator) -> AsyncIterator[genai.Client]:
    """The emulator's Gemini API client without the SDK's retries (a fault arrives as is)."""
    made = emu.gemini_client(http_options={"retry_options": {"attempts": 1}})
    yield made
    await made.aio.aclose()


def user(text: str) -> dict[str, Any]:
    return {"type": "user_input", "content": [{"type": "text", "text": text}]}


def plain(step: Any) -> dict[str, Any]:
    return cast("dict[str, Any]", step.model_dump(mode="json", by_alias=True, exclude_none=True))


async def create(client: genai.Client, steps: list[dict[str, Any]], **kw: Any) -> ix.Interaction:
    kw.setdefault("model", G3)
    kw.setdefault("tools", TOOLS)
    kw.setdefault("store", False)
    result = await client.aio.interactions.create(input=steps, **kw)  # pyright: ignore[reportUnknownMemberType]
    return cast("ix.Interaction", result)


def results(interaction: ix.Interaction, value: str = "sunny") -> list[dict[str, Any]]:
    return [
        {"type": "function_result", "call_id": s["id"], "name": s["name"], "result": value}
        for s in map(plain, interaction.steps or [])
        if s["type"] == "function_call"
    ]


async def loop(client: genai.Client, **kw: Any) -> list[dict[str, Any]]:
    """The whole stateless tool loop: the history of steps as replayed, ending with the answer."""
    steps = [user(QUESTION)]
    while True:
        interaction = await create(client, steps, **kw)
        steps += [plain(s) for s in interaction.steps or []]
        if interaction.status == "completed":
            return steps
        assert interaction.status == "requires_action"
        steps += results(interaction)


def raw(emu: Emulator, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
    headers = {"content-type": "application/json", "x-goog-api-key": "k"}
    connection.request(
        method, path, body=None if body is None else json.dumps(body), headers=headers
    )
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    return response.status, json.loads(payload) if payload else None


def refused(emu: Emulator, body: dict[str, Any]) -> str:
    status, payload = raw(emu, "POST", "/v1beta/interactions", {"model": G3, **body})
    assert status == 400, payload
    assert payload["error"]["status"] == "INVALID_ARGUMENT"
    return cast("str", payload["error"]["message"])


def flip(signature: str) -> str:
    """The same signature with one character of its payload changed."""
    k = len(signature) // 2
    return signature[:k] + ("A" if signature[k] != "A" else "B") + signature[k + 1 :]


# --- the loop ---------------------------------------------------------------------------------


async def test_a_stateless_loop_replays_every_signature(
    client: genai.Client, emu: Emulator
) -> None:
    steps = await loop(client, generation_config={"thinking_summaries": "auto"})
    kinds = [s["type"] for s in steps]
    assert kinds == [
        "user_input",
        "thought",
        "model_output",
        "function_call",
        "function_result",
        "thought",
        "model_output",
        "function_call",
        "function_result",
        "thought",
        "model_output",
    ]
    thoughts = [s for s in steps if s["type"] == "thought"]
    assert all(base64.b64decode(t["signature"]) and t["summary"][0]["text"] for t in thoughts)
    calls = [s for s in steps if s["type"] == "function_call"]
    assert [c["name"] for c in calls] == ["get_weather", "get_time"]
    assert all(len(c["id"]) == 8 and c["id"].isalnum() for c in calls)
    assert "Paris" in steps[-1]["content"][0]["text"]
    assert [r.path for r in emu.requests] == ["/v1beta/interactions"] * 3


async def test_the_response_shape(client: genai.Client) -> None:
    first = await create(client, [user(QUESTION)])
    assert (first.id, first.status, first.model) == ("", "requires_action", G3)
    assert first.model_extra is not None and first.model_extra["object"] == "interaction"
    usage = first.usage
    assert usage is not None and usage.total_input_tokens and usage.total_output_tokens
    assert usage.total_thought_tokens and usage.total_tokens == (
        usage.total_input_tokens + usage.total_output_tokens + usage.total_thought_tokens
    )
    thought = plain((first.steps or [])[0])
    assert set(thought) == {"type", "signature"}  # no summary unless thinking_summaries: auto
    stored = await create(client, [user(QUESTION)], store=True)
    assert stored.id and stored.id.startswith("v1_")


async def test_thinking_summaries_none_and_gemini_25(client: genai.Client) -> None:
    none = await create(client, [user(QUESTION)], generation_config={"thinking_summaries": "none"})
    assert "summary" not in plain((none.steps or [])[0])
    flash25 = await create(
        client,
        [user(QUESTION)],
        model="gemini-2.5-flash",
        generation_config={"thinking_summaries": "auto"},
    )
    assert plain((flash25.steps or [])[0])["type"] == "thought"
    lite = await create(client, [user(QUESTION)], model="gemini-2.5-flash-lite")
    assert "thought" not in [plain(s)["type"] for s in lite.steps or []]


async def test_input_as_text_or_content(client: genai.Client) -> None:
    text = await client.aio.interactions.create(model=G3, input="Hello there", store=False)  # pyright: ignore[reportUnknownMemberType]
    content = await client.aio.interactions.create(  # pyright: ignore[reportUnknownMemberType]
        model=G3, input=[{"type": "text", "text": "Hello there"}], store=False
    )
    assert cast("ix.Interaction", text).status == "completed"
    assert cast("ix.Interaction", content).output_text == cast("ix.Interaction", text).output_text


# --- streaming ----------------------------------------------------------------------------------


async def test_streamed_events_as_the_sdk_parses_them(client: genai.Client) -> None:
    stream = await client.aio.interactions.create(  # pyright: ignore[reportUnknownMemberType]
        model=G3,
        input=[user(QUESTION)],
        tools=TOOLS,
        store=True,
        stream=True,
        generation_config={"thinking_summaries": "auto"},
    )
    events = [e async for e in cast("AsyncIterator[Any]", stream)]
    names = [type(e).__name__ for e in events]
    assert names[:3] == ["InteractionCreatedEvent", "InteractionStatusUpdate", "StepStart"]
    assert names[-1] == "InteractionCompletedEvent"
    completed = events[-1].interaction
    assert completed.status == "requires_action" and completed.id and completed.usage
    deltas = [e.delta for e in events if isinstance(e, ix.StepDelta)]
    assert isinstance(deltas[0], ix.ThoughtSummaryDelta)
    signatures = [d for d in deltas if isinstance(d, ix.ThoughtSignatureDelta)]
    assert len(signatures) == 1 and signatures[0].signature
    pieces = [d.arguments for d in deltas if isinstance(d, ix.ArgumentsDelta)]
    assert len(pieces) > 1 and json.loads("".join(p or "" for p in pieces)) == {"city": "Paris"}
    starts = [e for e in events if isinstance(e, ix.StepStart)]
    stops = [e for e in events if isinstance(e, ix.StepStop)]
    assert [s.index for s in starts] == [s.index for s in stops] == [0, 1, 2]
    call = starts[2].step
    assert isinstance(call, ix.FunctionCallStep) and call.name == "get_weather"
    assert call.arguments == {}  # the arguments come as deltas


async def test_a_streamed_signature_verifies_like_a_json_one(client: genai.Client) -> None:
    """The streamed steps, put together, are a history the next request accepts."""
    stream = await client.aio.interactions.create(  # pyright: ignore[reportUnknownMemberType]
        model=G3, input=[user(QUESTION)], tools=TOOLS, store=False, stream=True
    )
    signature, call = "", {}
    async for event in cast("AsyncIterator[Any]", stream):
        if isinstance(event, ix.StepDelta) and isinstance(event.delta, ix.ThoughtSignatureDelta):
            signature = event.delta.signature or ""
        if isinstance(event, ix.StepStart) and isinstance(event.step, ix.FunctionCallStep):
            call = {"type": "function_call", "id": event.step.id, "name": event.step.name}
    history = [
        user(QUESTION),
        {"type": "thought", "signature": signature},
        {
            "type": "model_output",
            "content": [{"type": "text", "text": "I'll use get_weather to look that up."}],
        },
        {**call, "arguments": {"city": "Paris"}},
        {
            "type": "function_result",
            "call_id": call["id"],
            "name": "get_weather",
            "result": "sunny",
        },
    ]
    assert (await create(client, history)).status == "requires_action"


# --- signatures -------------------------------------------------------------------------------


async def test_a_tampered_signature_is_refused(client: genai.Client, emu: Emulator) -> None:
    steps = await loop(client)
    broken = [dict(s) for s in steps] + [THEN]
    broken[1]["signature"] = flip(broken[1]["signature"])
    assert refused(emu, {"input": broken, "tools": TOOLS}) == "Corrupted thought signature."
    assert (await create(client, [*steps, THEN])).status == "requires_action"


async def test_a_signature_binds_the_steps_it_led_to(client: genai.Client, emu: Emulator) -> None:
    steps = await loop(client)
    edited = [dict(s) for s in steps] + [THEN]
    edited[3] = {**edited[3], "arguments": {"city": "Lyon"}}
    assert refused(emu, {"input": edited, "tools": TOOLS}) == "Corrupted thought signature."
    swapped = [dict(s) for s in steps] + [THEN]
    swapped[1], swapped[5] = swapped[5], swapped[1]
    assert refused(emu, {"input": swapped, "tools": TOOLS}) == "Corrupted thought signature."


async def test_gemini_37_words_it_invalid(client: genai.Client, emu: Emulator) -> None:
    model = "gemini-3.7-flash"
    steps = [user(QUESTION)]
    first = await create(client, steps, model=model)
    history = [*steps, *map(plain, first.steps or []), *results(first)]
    history[1] = {**history[1], "signature": flip(history[1]["signature"])}
    message = refused(emu, {"model": model, "input": history, "tools": TOOLS})
    assert message == "Invalid thought signature."


async def test_generate_content_signatures_are_another_scope(
    client: genai.Client, emu: Emulator
) -> None:
    """A thought signature the generateContent wire issued does not open here."""
    from google.genai import types

    response = await client.aio.models.generate_content(
        model=G3,
        contents=QUESTION,
        config=types.GenerateContentConfig(
            tools=[
                types.Tool(
                    function_declarations=[
                        types.FunctionDeclaration(
                            name="get_weather",
                            description="Current weather for a city.",
                            parameters_json_schema=WEATHER_SCHEMA,
                        )
                    ]
                )
            ],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        ),
    )
    assert response.candidates and response.candidates[0].content
    parts = response.candidates[0].content.parts or []
    call = next(p for p in parts if p.function_call is not None)
    assert call.thought_signature is not None and call.function_call is not None
    history = [
        user(QUESTION),
        {"type": "thought", "signature": base64.b64encode(call.thought_signature).decode()},
        {
            "type": "function_call",
            "id": "abcdefgh",
            "name": "get_weather",
            "arguments": call.function_call.args,
        },
        {
            "type": "function_result",
            "call_id": "abcdefgh",
            "name": "get_weather",
            "result": "sunny",
        },
    ]
    assert refused(emu, {"input": history, "tools": TOOLS}) == "Corrupted thought signature."


async def test_a_current_call_without_a_signed_thought_is_refused(
    client: genai.Client, emu: Emulator
) -> None:
    first = await create(client, [user(QUESTION)])
    history = [user(QUESTION), *map(plain, first.steps or []), *results(first)]
    unsigned = [s for s in history if s["type"] != "thought"]
    message = refused(emu, {"input": unsigned, "tools": TOOLS})
    assert message.startswith("Function call is missing a thought_signature")
    assert "function call `default_api:get_weather` , position 3." in message
    # An earlier turn is not checked: after a new prompt the same history is accepted.
    assert (await create(client, [*unsigned, user("And in Rome?")])).status


@pytest.mark.parametrize("signature", [SKIP_B64, "skip_thought_signature_validator"])
async def test_the_dummy_signature_passes(client: genai.Client, signature: str) -> None:
    history = [
        user(QUESTION),
        {"type": "thought", "signature": signature},
        {
            "type": "function_call",
            "id": "abcdefgh",
            "name": "get_weather",
            "arguments": {"city": "Paris"},
        },
        {
            "type": "function_result",
            "call_id": "abcdefgh",
            "name": "get_weather",
            "result": "sunny",
        },
    ]
    assert (await create(client, history)).status == "requires_action"


def test_a_signature_that_is_not_base64_is_refused(emu: Emulator) -> None:
    history = [user(QUESTION), {"type": "thought", "signature": "not base64!"}]
    message = refused(emu, {"input": [*history, user("again")]})
    assert message.startswith("Invalid value at 'input[1].signature' (TYPE_BYTES)")


# --- stored interactions --------------------------------------------------------------------------


async def test_previous_interaction_id_continues_a_stored_interaction(
    client: genai.Client, emu: Emulator
) -> None:
    first = await create(client, [user(QUESTION)], store=True)
    second = await create(client, results(first), store=True, previous_interaction_id=first.id)
    third = await create(client, results(second), store=True, previous_interaction_id=second.id)
    assert (first.status, second.status, third.status) == (
        "requires_action",
        "requires_action",
        "completed",
    )
    assert third.model_extra is not None
    assert third.previous_interaction_id == second.id
    timeline = await client.aio.interactions.get(third.id or "")  # pyright: ignore[reportUnknownMemberType]
    kinds = [plain(s)["type"] for s in cast("ix.Interaction", timeline).steps or []]
    assert kinds[0] == "user_input" and kinds.count("function_result") == 2
    assert kinds[-2:] == ["thought", "model_output"]
    status, _ = raw(emu, "DELETE", f"/v1beta/interactions/{third.id}")
    assert status == 200
    assert raw(emu, "GET", f"/v1beta/interactions/{third.id}")[0] == 404


async def test_unknown_or_unstored_interactions_are_not_found(
    client: genai.Client, emu: Emulator
) -> None:
    unstored = await create(client, [user(QUESTION)], store=False)
    assert not unstored.id
    status, payload = raw(
        emu,
        "POST",
        "/v1beta/interactions",
        {"model": G3, "previous_interaction_id": "v1_nothing", "input": "hello"},
    )
    assert (status, payload["error"]["status"]) == (404, "NOT_FOUND")
    assert payload["error"]["message"] == "Interaction v1_nothing not found."


async def test_a_stored_history_is_checked_with_the_new_input(
    client: genai.Client, emu: Emulator
) -> None:
    first = await create(client, [user(QUESTION)], store=True)
    wrong = [
        {"type": "function_result", "call_id": "zzzzzzzz", "name": "get_weather", "result": "x"}
    ]
    status, payload = raw(
        emu,
        "POST",
        "/v1beta/interactions",
        {"model": G3, "previous_interaction_id": first.id, "input": wrong, "tools": TOOLS},
    )
    assert status == 400
    assert "call_id 'zzzzzzzz'" in payload["error"]["message"]


# --- request rules ----------------------------------------------------------------------------


def test_thinking_levels_per_model(emu: Emulator) -> None:
    minimal = {"input": "hi", "generation_config": {"thinking_level": "minimal"}}
    assert refused(emu, minimal) == (
        "Thinking level MINIMAL is not supported for this model. Please retry with other "
        "thinking level."
    )
    status, _ = raw(
        emu, "POST", "/v1beta/interactions", {**minimal, "model": "gemini-3-flash-preview"}
    )
    assert status == 200
    assert refused(emu, {**minimal, "model": "gemini-2.5-flash"}) == (
        "Thinking level is not supported for this model."
    )
    bad = {"input": "hi", "generation_config": {"thinking_level": "extreme"}}
    assert "thinking_level" in refused(emu, bad)
    summaries = {"input": "hi", "generation_config": {"thinking_summaries": "all"}}
    assert "thinking_summaries" in refused(emu, summaries)


@pytest.mark.parametrize(
    ("steps", "needle"),
    [
        ([user("hi"), {"type": "function_result", "call_id": "x", "result": "y"}], "call_id 'x'"),
        (
            [
                user("hi"),
                {"type": "thought", "signature": SKIP_B64},
                {"type": "function_call", "id": "c1", "name": "get_weather", "arguments": {}},
                user("what?"),
            ],
            "function_call 'c1' has no function_result",
        ),
        ([user("hi"), {"type": "function_call", "name": "f", "arguments": {}}], "input[1].id"),
        ([user("hi"), {"type": "mystery"}], "input[1].type"),
        ([user("hi"), {"type": "text", "text": "x"}], "cannot be mixed"),
        (
            [user("hi"), {"type": "model_output", "content": [{"type": "text", "text": "x"}]}],
            "last step",
        ),
        ([{"type": "user_input", "content": [{"type": "function_result"}]}], "content[0].type"),
    ],
    ids=[
        "unknown-result",
        "unanswered-call",
        "call-without-id",
        "unknown-step",
        "mixed",
        "ends-with-model",
        "content-type",
    ],
)
def test_turn_rules(emu: Emulator, steps: list[dict[str, Any]], needle: str) -> None:
    assert needle in refused(emu, {"input": steps})


def test_models_routes_and_credentials(emu: Emulator) -> None:
    status, payload = raw(emu, "POST", "/v1beta/interactions", {"model": "gpt-5", "input": "hi"})
    assert (status, payload["error"]["status"]) == (404, "NOT_FOUND")
    assert raw(emu, "POST", "/v9/interactions", {"model": G3, "input": "hi"})[0] == 404
    connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
    connection.request(
        "POST", "/v1beta/interactions", body=json.dumps({"model": G3, "input": "hi"})
    )
    response = connection.getresponse()
    body = json.loads(response.read())
    connection.close()
    assert (response.status, body["error"]["status"]) == (403, "PERMISSION_DENIED")
    assert [r.api for r in emu.requests][-1] == API


async def test_tool_choice_and_response_format(client: genai.Client) -> None:
    none = await create(client, [user(QUESTION)], generation_config={"tool_choice": "none"})
    assert none.status == "completed"
    forced = await create(
        client,
        [user(QUESTION)],
        generation_config={
            "tool_choice": {"allowed_tools": {"mode": "any", "tools": ["get_time"]}}
        },
    )
    assert [plain(s).get("name") for s in forced.steps or []][-1] == "get_time"
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }
    answer = await create(
        client,
        [user("Say hello")],
        tools=[],
        response_format={"type": "text", "mime_type": "application/json", "schema": schema},
    )
    assert "answer" in json.loads(answer.output_text or "")


async def test_max_output_tokens_makes_it_incomplete(client: genai.Client) -> None:
    cut = await create(
        client, [user("Tell me about Paris")], tools=[], generation_config={"max_output_tokens": 3}
    )
    assert cut.status == "incomplete"


async def test_media_in_the_input_is_seen(client: genai.Client) -> None:
    image = base64.b64encode(b"\x89PNG fake bytes").decode()
    steps = [
        {
            "type": "user_input",
            "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image", "data": image, "mime_type": "image/png"},
            ],
        }
    ]
    seen = await create(client, steps, tools=[])
    assert "image/png" in (seen.output_text or "")


# --- scripts and faults -----------------------------------------------------------------------


async def test_a_scripted_reply_is_rendered_and_signed(client: genai.Client, emu: Emulator) -> None:
    emu.script(
        API,
        [
            Reply(
                thinking="Plan.",
                text="Checking.",
                tool_calls=[ToolCallSpec("get_time", {"city": "Oslo"}, id="t1")],
            )
        ],
    )
    first = await create(
        client, [user("Anything")], generation_config={"thinking_summaries": "auto"}
    )
    steps = [plain(s) for s in first.steps or []]
    assert steps[0]["summary"] == [{"type": "text", "text": "Plan."}]
    assert steps[2] == {
        "type": "function_call",
        "id": "t1",
        "name": "get_time",
        "arguments": {"city": "Oslo"},
    }
    second = await create(client, [user("Anything"), *steps, *results(first, "12:00")])
    assert second.status in ("completed", "requires_action")


async def test_a_cut_stream_never_delivers_the_signature(
    client: genai.Client, emu: Emulator
) -> None:
    emu.inject(Fault.cut(api=API))
    stream = await client.aio.interactions.create(  # pyright: ignore[reportUnknownMemberType]
        model=G3,
        input=[user(QUESTION)],
        tools=TOOLS,
        store=False,
        stream=True,
        generation_config={"thinking_summaries": "auto"},
    )
    seen: list[Any] = []
    with pytest.raises(APIConnectionError):
        async for event in cast("AsyncIterator[Any]", stream):
            seen.append(event)
    assert any(isinstance(e, ix.StepDelta) for e in seen)
    assert not any(
        isinstance(e, ix.StepDelta) and isinstance(e.delta, ix.ThoughtSignatureDelta) for e in seen
    )


async def test_faults_speak_the_wire(client: genai.Client, emu: Emulator) -> None:
    emu.inject(Fault.stream_error(429, api=API))
    stream = await client.aio.interactions.create(  # pyright: ignore[reportUnknownMemberType]
        model=G3, input=[user(QUESTION)], tools=TOOLS, store=False, stream=True
    )
    events = [e async for e in cast("AsyncIterator[Any]", stream)]
    assert isinstance(events[-1], ix.ErrorEvent) and events[-1].error
    assert events[-1].error.code == "resource_exhausted"
    emu.inject(Fault.http(503, api=API))
    with pytest.raises(APIStatusError) as caught:
        await create(client, [user(QUESTION)])
    assert caught.value.status_code == 503
    emu.inject(Fault.http(400, "Bad thing.", api=API))
    with pytest.raises(BadRequestError) as bad:
        await create(client, [user(QUESTION)])
    assert bad.value.body == {
        "error": {"code": 400, "message": "Bad thing.", "status": "INVALID_ARGUMENT"}
    }
