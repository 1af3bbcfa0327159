"""The Gemini API and Vertex AI wire APIs through the unmodified official SDK
(``google.genai.Client``, async), plus a few raw requests for what the SDK never sends."""

from __future__ import annotations

import base64
import http.client
import itertools
import json
from typing import Any

import pytest
from google import genai
from google.genai import errors, types

from tests.support.gemini import api_fixture, client_fixture  # noqa: F401 (fixtures)
from thinkagent.emulator import Emulator, Reply, ToolCallSpec

from .tools import TIME_SCHEMA, WEATHER_SCHEMA

G3 = "gemini-3-pro-preview"
SKIP = b"skip_thought_signature_validator"
AIR_SCHEMA: dict[str, Any] = WEATHER_SCHEMA
TOOLS = [
    types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name="get_weather",
                description="Current weather for a city.",
                parameters_json_schema=WEATHER_SCHEMA,
            ),
            types.FunctionDeclaration(
                name="get_time",
                description="Local time in a city.",
                parameters_json_schema=TIME_SCHEMA,
            ),
            types.FunctionDeclaration(
                name="get_air_quality",
                description="Air quality index in a city.",
                parameters_json_schema=AIR_SCHEMA,
            ),
        ]
    )
]
#: Three tools, two subjects: three steps of two parallel calls each, then the answer.
QUESTION = "What's the weather, the time and the air quality in Paris and London?"
WEATHER_QUESTION = "What's the weather in Paris?"


def config(**thinking: Any) -> types.GenerateContentConfig:
    return types.GenerateContentConfig(
        tools=TOOLS,
        thinking_config=types.ThinkingConfig(**thinking) if thinking else None,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def ask(
    client: genai.Client,
    contents: list[types.Content],
    *,
    model: str = G3,
    stream: bool = False,
    cfg: types.GenerateContentConfig | None = None,
) -> types.Content:
    """The model turn; streamed, its parts are the chunks' parts in order (not merged)."""
    cfg = cfg or config(include_thoughts=True)
    if not stream:
        response = await client.aio.models.generate_content(
            model=model, contents=contents, config=cfg
        )
        assert response.candidates
        content = response.candidates[0].content
        assert content is not None
        return content
    parts: list[types.Part] = []
    async for chunk in await client.aio.models.generate_content_stream(
        model=model, contents=contents, config=cfg
    ):
        assert chunk.candidates
        content = chunk.candidates[0].content
        assert content is not None
        parts.extend(content.parts or [])
    return types.Content(role="model", parts=parts)


def calls_of(content: types.Content) -> list[types.Part]:
    return [p for p in content.parts or [] if p.function_call is not None]


def results_for(content: types.Content) -> types.Content:
    parts: list[types.Part] = []
    for part in calls_of(content):
        call = part.function_call
        assert call is not None and call.name
        city = (call.args or {}).get("city")
        result = {"get_weather": "sunny, 21 C", "get_time": "14:05", "get_air_quality": "AQI 42"}
        parts.append(
            types.Part(
                function_response=types.FunctionResponse(
                    name=call.name, response={"result": f"{result[call.name]} in {city}"}
                )
            )
        )
    return types.Content(role="user", parts=parts)


def client_error(exc: pytest.ExceptionInfo[errors.ClientError], code: int = 400) -> str:
    assert exc.value.code == code
    details = exc.value.details
    assert isinstance(details, dict)
    assert set(details["error"]) >= {"code", "message", "status"}
    assert details["error"]["code"] == code
    return str(exc.value.message)


def missing(name: str, position: int, *, vertex: bool = False) -> str:
    if vertex:
        return (
            f"Unable to submit request because function call `default_api:{name}` in the "
            f"{position}. content block is missing a `thought_signature`. Learn more: "
            "https://docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures"
        )
    return (
        "Function call is missing a thought_signature in functionCall parts. This is required "
        "for tools to work correctly, and missing thought_signature may lead to degraded model "
        f"performance. Additional data, function call `default_api:{name}` , position "
        f"{position}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures "
        "for more details."
    )


CORRUPTED = {
    "gemini": "Corrupted thought signature.",
    "vertex": "Unable to submit request because Thought signature is not valid.",
}


async def tool_turn(client: genai.Client) -> tuple[list[types.Content], types.Content]:
    contents = [user(WEATHER_QUESTION)]
    first = await ask(client, contents)
    return contents, first


def post(emu: Emulator, path: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
    connection.request(
        "POST", path, body=json.dumps(body), headers={"content-type": "application/json", **headers}
    )
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    return response.status, json.loads(payload) if payload else None


GEMINI_PATH = "/v1beta/models/{model}:generateContent"
VERTEX_PATH = (
    "/v1beta1/projects/p/locations/us-central1/publishers/google/models/{model}:generateContent"
)


def raw_post(emu: Emulator, api: str, body: Any, model: str = G3) -> tuple[int, Any]:
    if api == "gemini":
        return post(emu, GEMINI_PATH.format(model=model), body, {"x-goog-api-key": "k"})
    return post(emu, VERTEX_PATH.format(model=model), body, {"authorization": "Bearer t"})


# --- the tool loop ----------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_four_turn_loop_with_parallel_calls(
    emu: Emulator, client: genai.Client, api: str, stream: bool
) -> None:
    contents = [user(QUESTION)]
    expected = ["get_weather", "get_time", "get_air_quality"]
    for step, name in enumerate(expected):
        turn = await ask(client, contents, stream=stream)
        parts = turn.parts or []
        assert parts[0].thought is True
        assert parts[0].thought_signature is None
        calls = calls_of(turn)
        assert [c.function_call.name for c in calls if c.function_call] == [name, name]
        assert [(c.function_call.args or {}).get("city") for c in calls if c.function_call] == [
            "Paris",
            "London",
        ]
        assert all(c.function_call and c.function_call.id is None for c in calls)  # as recorded
        # Only the first of the parallel calls is signed, and nothing else is.
        assert [bool(p.thought_signature) for p in parts] == [p is calls[0] for p in parts]
        if stream:  # the thought summary arrived in several chunks
            assert sum(1 for p in parts if p.thought) > 1
        contents += [turn, results_for(turn)]  # replayed exactly, as the SDK returned it
        assert len(emu.requests) == step + 1
    answer = await ask(client, contents, stream=stream)
    parts = answer.parts or []
    assert not calls_of(answer)
    text = "".join(p.text or "" for p in parts if not p.thought)
    assert "sunny, 21 C in Paris" in text
    assert "AQI 42 in London" in text
    signed = [p for p in parts if p.thought_signature]
    assert len(signed) == 1
    assert signed[0] is parts[-1]
    if stream:  # the signature comes on a trailing empty text part
        assert parts[-1].text == ""
    else:
        assert parts[-1].text == text
    # What went over the wire: every model turn with its signature on the first call.
    sent = emu.requests[-1]
    assert sent.api == api
    model_turns = [c for c in sent.body["contents"] if c["role"] == "model"]
    assert len(model_turns) == 3
    for content in model_turns:
        signed_parts = [p for p in content["parts"] if "thoughtSignature" in p]
        assert len(signed_parts) == 1
        assert "functionCall" in signed_parts[0]
    # The final answer replays too (a new question after it).
    await ask(client, [*contents, answer, user("Thanks! And in Rome?")], stream=stream)


async def test_streamed_chunks_end_with_the_signature_and_usage(
    gemini_client: genai.Client,
) -> None:
    chunks = [
        chunk
        async for chunk in await gemini_client.aio.models.generate_content_stream(
            model=G3,
            contents="Tell me about the emulator.",
            config=types.GenerateContentConfig(thinking_config=types.ThinkingConfig()),
        )
    ]
    assert len(chunks) > 2
    for chunk in chunks[:-1]:
        assert chunk.candidates
        assert chunk.candidates[0].finish_reason is None
        assert chunk.usage_metadata is None
        parts = chunk.candidates[0].content.parts  # type: ignore[union-attr]
        assert parts
        assert all(p.thought_signature is None and not p.thought for p in parts)
        assert chunk.model_version == G3
    last = chunks[-1]
    assert last.candidates
    assert last.candidates[0].finish_reason == types.FinishReason.STOP
    parts = last.candidates[0].content.parts  # type: ignore[union-attr]
    assert parts
    assert len(parts) == 1
    assert parts[0].text == ""
    assert parts[0].thought_signature
    usage = last.usage_metadata
    assert usage is not None
    assert usage.thoughts_token_count and usage.thoughts_token_count > 0
    assert usage.total_token_count == (
        (usage.prompt_token_count or 0)
        + (usage.candidates_token_count or 0)
        + usage.thoughts_token_count
    )
    assert len({c.response_id for c in chunks}) == 1


async def test_include_thoughts_false_still_signs(gemini_client: genai.Client) -> None:
    response = await gemini_client.aio.models.generate_content(
        model=G3, contents=WEATHER_QUESTION, config=config()
    )
    assert response.candidates
    parts = response.candidates[0].content.parts  # type: ignore[union-attr]
    assert parts
    assert not any(p.thought for p in parts)
    assert calls_of(response.candidates[0].content)[0].thought_signature  # type: ignore[arg-type]
    assert response.usage_metadata
    assert (response.usage_metadata.thoughts_token_count or 0) > 0
    assert response.candidates[0].finish_reason == types.FinishReason.STOP
    answer = await gemini_client.aio.models.generate_content(
        model=G3, contents="Hello there.", config=types.GenerateContentConfig()
    )
    assert answer.candidates
    parts = answer.candidates[0].content.parts  # type: ignore[union-attr]
    assert parts
    assert [bool(p.thought) for p in parts] == [False]
    assert parts[0].thought_signature
    assert answer.text and "Hello there." in answer.text


async def test_thinking_level_effort_and_thoughts(gemini_client: genai.Client) -> None:
    low = await ask(
        gemini_client,
        [user(WEATHER_QUESTION)],
        cfg=config(include_thoughts=True, thinking_level="LOW"),
    )
    high = await ask(
        gemini_client,
        [user(WEATHER_QUESTION)],
        cfg=config(include_thoughts=True, thinking_level="HIGH"),
    )
    low_thought = (low.parts or [])[0].text or ""
    high_thought = (high.parts or [])[0].text or ""
    assert "double-check" in high_thought
    assert "double-check" not in low_thought


# --- the missing-signature rule ---------------------------------------------------------------


async def test_dropping_a_function_call_signature_is_rejected(
    client: genai.Client, api: str
) -> None:
    contents, first = await tool_turn(client)
    bare = first.model_copy(deep=True)
    calls_of(bare)[0].thought_signature = None
    with pytest.raises(errors.ClientError) as exc:
        await ask(client, [*contents, bare, results_for(first)])
    assert exc.value.status == "INVALID_ARGUMENT"
    assert client_error(exc) == missing("get_weather", 2, vertex=api == "vertex")
    with pytest.raises(errors.ClientError) as exc:  # streamed: the same 400 before any chunk
        await ask(client, [*contents, bare, results_for(first)], stream=True)
    assert client_error(exc) == missing("get_weather", 2, vertex=api == "vertex")


async def test_position_counts_contents_and_only_the_current_turn_is_checked(
    gemini_client: genai.Client,
) -> None:
    contents = [user(QUESTION)]
    first = await ask(gemini_client, contents)
    contents += [first, results_for(first)]
    second = await ask(gemini_client, contents)
    bare_second = second.model_copy(deep=True)
    calls_of(bare_second)[0].thought_signature = None
    with pytest.raises(errors.ClientError) as exc:
        await ask(gemini_client, [*contents, bare_second, results_for(second)])
    assert client_error(exc) == missing("get_time", 4)
    # Parallel calls after the first need no signature, and the first call of an earlier
    # turn (before the last user text) need not carry one either.
    bare_first = first.model_copy(deep=True)
    calls_of(bare_first)[0].thought_signature = None
    answered = [user(QUESTION), bare_first, results_for(first), user("Just Paris, please.")]
    turn = await ask(gemini_client, answered)
    assert calls_of(turn)[0].thought_signature


async def test_skip_sentinel_is_accepted(client: genai.Client, api: str, emu: Emulator) -> None:
    contents, first = await tool_turn(client)
    dummy = first.model_copy(deep=True)
    calls_of(dummy)[0].thought_signature = SKIP  # the SDK sends it URL-safe base64
    await ask(client, [*contents, dummy, results_for(first)])
    sent = emu.requests[-1].body["contents"][1]["parts"]
    assert any(p.get("thoughtSignature") == base64.urlsafe_b64encode(SKIP).decode() for p in sent)
    # Sent verbatim (not base64-encoded), as some clients do, it is accepted too.
    body = emu.requests[-1].body
    for part in body["contents"][1]["parts"]:
        if "thoughtSignature" in part:
            part["thoughtSignature"] = SKIP.decode()
    status, _ = raw_post(emu, api, body)
    assert status == 200
    # The Gemini API's second documented dummy is not valid on Vertex.
    calls_of(dummy)[0].thought_signature = b"context_engineering_is_the_way_to_go"
    if api == "gemini":
        await ask(client, [*contents, dummy, results_for(first)])
    else:
        with pytest.raises(errors.ClientError) as exc:
            await ask(client, [*contents, dummy, results_for(first)])
        assert client_error(exc) == CORRUPTED["vertex"]


# --- corrupted and foreign signatures -------------------------------------------------------


@pytest.mark.parametrize(("issuer", "receiver"), [("gemini", "vertex"), ("vertex", "gemini")])
async def test_a_signature_from_the_other_scope_is_rejected(
    gemini_client: genai.Client, vertex_client: genai.Client, issuer: str, receiver: str
) -> None:
    source, target = (
        (gemini_client, vertex_client) if issuer == "gemini" else (vertex_client, gemini_client)
    )
    contents, first = await tool_turn(source)
    await ask(source, [*contents, first, results_for(first)])  # valid where it was issued
    with pytest.raises(errors.ClientError) as exc:
        await ask(target, [*contents, first, results_for(first)])
    assert client_error(exc) == CORRUPTED[receiver]


def flip(signature: bytes) -> bytes:
    middle = len(signature) // 2
    return signature[:middle] + bytes([signature[middle] ^ 1]) + signature[middle + 1 :]


async def test_tampered_or_moved_signatures_are_rejected(client: genai.Client, api: str) -> None:
    contents = [user("What's the weather in Paris and London?")]
    first = await ask(client, contents)
    signed, other = calls_of(first)
    assert signed.thought_signature

    async def rejected(turn: types.Content) -> None:
        with pytest.raises(errors.ClientError) as exc:
            await ask(client, [*contents, turn, results_for(first)])
        assert client_error(exc) == CORRUPTED[api]

    tampered = first.model_copy(deep=True)
    calls_of(tampered)[0].thought_signature = flip(signed.thought_signature)
    await rejected(tampered)
    changed = first.model_copy(deep=True)
    call = calls_of(changed)[0].function_call
    assert call is not None
    call.args = {"city": "Lyon"}
    await rejected(changed)
    moved = first.model_copy(deep=True)  # onto the second call (same name)
    a, b = calls_of(moved)
    a.thought_signature, b.thought_signature = None, signed.thought_signature
    await rejected(moved)
    onto_text = first.model_copy(deep=True)  # onto the text preamble
    text_part = next(p for p in onto_text.parts or [] if p.text and not p.thought)
    text_part.thought_signature = signed.thought_signature
    await rejected(onto_text)
    assert other.thought_signature is None


async def test_answer_signature_binds_the_answer_text(client: genai.Client, api: str) -> None:
    contents = [user("Hello there.")]
    cfg = types.GenerateContentConfig(thinking_config=types.ThinkingConfig(include_thoughts=True))
    answer = await ask(client, contents, cfg=cfg)
    assert not calls_of(answer)
    changed = answer.model_copy(deep=True)
    last = (changed.parts or [])[-1]
    last.text = (last.text or "") + " (edited)"
    with pytest.raises(errors.ClientError) as exc:
        await ask(client, [*contents, changed, user("And then?")], cfg=cfg)
    assert client_error(exc) == CORRUPTED[api]
    await ask(client, [*contents, answer, user("And then?")], cfg=cfg)


async def test_signatures_of_another_model_family_are_rejected(gemini_client: genai.Client) -> None:
    contents = [user(WEATHER_QUESTION)]
    first = await ask(
        gemini_client, contents, model="gemini-2.5-flash", cfg=config(thinking_budget=1024)
    )
    assert calls_of(first)[0].thought_signature
    with pytest.raises(errors.ClientError) as exc:
        await ask(gemini_client, [*contents, first, results_for(first)])
    assert client_error(exc) == CORRUPTED["gemini"]


async def test_corrupted_signatures_in_earlier_turns_are_rejected(
    gemini_client: genai.Client,
) -> None:
    contents, first = await tool_turn(gemini_client)
    tampered = first.model_copy(deep=True)
    part = calls_of(tampered)[0]
    assert part.thought_signature
    part.thought_signature = flip(part.thought_signature)
    history = [*contents, tampered, results_for(first), user("Thanks. And London?")]
    with pytest.raises(errors.ClientError) as exc:
        await ask(gemini_client, history)
    assert client_error(exc) == CORRUPTED["gemini"]


@pytest.mark.parametrize("alphabet", ["standard", "urlsafe", "urlsafe-unpadded"])
async def test_both_base64_alphabets_are_accepted(
    emu: Emulator, gemini_client: genai.Client, alphabet: str
) -> None:
    contents, first = await tool_turn(gemini_client)
    await ask(gemini_client, [*contents, first, results_for(first)])
    body = emu.requests[-1].body
    signature = calls_of(first)[0].thought_signature
    assert signature
    encoded = {
        "standard": base64.b64encode(signature).decode(),
        "urlsafe": base64.urlsafe_b64encode(signature).decode(),
        "urlsafe-unpadded": base64.urlsafe_b64encode(signature).decode().rstrip("="),
    }[alphabet]
    for part in body["contents"][1]["parts"]:
        if "thoughtSignature" in part:
            part["thoughtSignature"] = encoded
    status, payload = raw_post(emu, "gemini", body)
    assert status == 200, payload
    # The responses carry standard base64, as the service sends it.
    status, payload = raw_post(
        emu, "gemini", {"contents": body["contents"][:1], "tools": body["tools"]}
    )
    signed = [p for p in payload["candidates"][0]["content"]["parts"] if "thoughtSignature" in p]
    assert (
        base64.b64encode(base64.b64decode(signed[0]["thoughtSignature"])).decode()
        == (signed[0]["thoughtSignature"])
    )
    for part in body["contents"][1]["parts"]:
        if "thoughtSignature" in part:
            part["thoughtSignature"] = "not base64!"
    status, payload = raw_post(emu, "gemini", body)
    assert status == 400
    assert payload["error"]["message"].startswith(
        "Invalid value at 'contents[1].parts[2].thought_signature' (TYPE_BYTES), Base64 decoding failed"
    )


# --- Gemini 2.5 --------------------------------------------------------------------------------


async def test_gemini_25_budgets(gemini_client: genai.Client) -> None:
    contents = [user(WEATHER_QUESTION)]
    off = await ask(
        gemini_client, contents, model="gemini-2.5-flash", cfg=config(thinking_budget=0)
    )
    assert not any(p.thought or p.thought_signature for p in off.parts or [])
    response = await gemini_client.aio.models.generate_content(
        model="gemini-2.5-flash", contents=contents, config=config(thinking_budget=0)
    )
    assert response.usage_metadata
    assert response.usage_metadata.thoughts_token_count is None
    on = await ask(
        gemini_client,
        contents,
        model="gemini-2.5-flash",
        cfg=config(thinking_budget=1024, include_thoughts=True),
    )
    assert (on.parts or [])[0].thought
    assert calls_of(on)[0].thought_signature
    dynamic = await ask(
        gemini_client, contents, model="gemini-2.5-pro", cfg=config(thinking_budget=-1)
    )
    assert calls_of(dynamic)[0].thought_signature
    # 2.5 does not require the signatures back.
    bare = on.model_copy(deep=True)
    calls_of(bare)[0].thought_signature = None
    answer = await ask(
        gemini_client,
        [*contents, bare, results_for(on)],
        model="gemini-2.5-flash",
        cfg=config(thinking_budget=1024),
    )
    assert not calls_of(answer)
    assert not any(p.thought_signature for p in answer.parts or [])  # 2.5 signs calls only
    lite = await ask(gemini_client, contents, model="gemini-2.5-flash-lite", cfg=config())
    assert not any(p.thought_signature for p in lite.parts or [])  # does not think by default


@pytest.mark.parametrize(
    ("model", "thinking", "gemini_message", "vertex_message"),
    [
        (
            "gemini-2.5-pro",
            {"thinking_budget": 0},
            "The model does not support setting thinking_budget to 0.",
            "Unable to submit request because The model does not support setting thinking_budget to 0.",
        ),
        (
            "gemini-2.5-flash",
            {"thinking_level": "HIGH"},
            "Thinking level is not supported for this model.",
            "Unable to submit request because thinking_level is not supported by this model. "
            "Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini",
        ),
        (
            G3,
            {"thinking_level": "LOW", "thinking_budget": 1024},
            "You can only set only one of thinking budget and thinking level.",
            "Unable to submit request because You can only set only one of thinking budget and thinking level.",
        ),
        (
            "gemini-2.5-flash",
            {"thinking_budget": 99999},
            "The thinking budget (99999) is invalid.",
            "Unable to submit request because The thinking budget (99999) is invalid.",
        ),
    ],
    ids=["pro-budget-0", "level-on-2.5", "budget-and-level", "budget-range"],
)
async def test_thinking_config_errors(
    client: genai.Client,
    api: str,
    model: str,
    thinking: dict[str, Any],
    gemini_message: str,
    vertex_message: str,
) -> None:
    with pytest.raises(errors.ClientError) as exc:
        await ask(client, [user("hi")], model=model, cfg=config(**thinking))
    assert client_error(exc) == (gemini_message if api == "gemini" else vertex_message)


# --- requests and errors ---------------------------------------------------------------------


async def test_unknown_model_is_not_found(client: genai.Client, api: str) -> None:
    with pytest.raises(errors.ClientError) as exc:
        await ask(client, [user("hi")], model="gemini-1.0-pro")
    assert exc.value.status == "NOT_FOUND"
    message = client_error(exc, 404)
    if api == "gemini":
        assert message == (
            "models/gemini-1.0-pro is not found for API version v1beta, or is not supported for "
            "generateContent. Call ListModels to see the list of available models and their "
            "supported methods."
        )
    else:
        assert message.startswith(
            "Publisher Model `projects/emulator-project/locations/us-central1/publishers/google/"
            "models/gemini-1.0-pro` was not found or your project does not have access to it."
        )


def test_credentials_are_required(emu: Emulator) -> None:
    status, body = post(emu, GEMINI_PATH.format(model=G3), {"contents": []}, {})
    assert status == 403
    assert body["error"]["status"] == "PERMISSION_DENIED"
    assert body["error"]["message"].startswith("Method doesn't allow unregistered callers")
    status, body = post(
        emu, VERTEX_PATH.format(model=G3), {"contents": []}, {"x-goog-api-key": "k"}
    )
    assert status == 401
    assert body["error"]["status"] == "UNAUTHENTICATED"
    status, _ = post(
        emu,
        GEMINI_PATH.format(model=G3) + "?key=k",
        {"contents": [{"parts": [{"text": "hi"}]}]},
        {},
    )
    assert status == 200
    assert emu.requests[-1].query == {}  # the key is not recorded


#: A model turn calling get_weather, signed with the dummy that skips validation.
SIGNED_CALL = {
    "role": "model",
    "parts": [
        {
            "functionCall": {"name": "get_weather", "args": {}},
            "thoughtSignature": "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I=",
        }
    ],
}


@pytest.mark.parametrize(
    ("contents", "message"),
    [
        (
            [
                {
                    "role": "user",
                    "parts": [{"functionResponse": {"name": "get_weather", "response": {}}}],
                }
            ],
            "Please ensure that function response turn comes immediately after a function call turn.",
        ),
        (
            [
                {"role": "user", "parts": [{"text": "hi"}]},
                SIGNED_CALL,
                {
                    "role": "user",
                    "parts": [
                        {"functionResponse": {"name": "get_weather", "response": {}}},
                        {"functionResponse": {"name": "get_weather", "response": {}}},
                    ],
                },
            ],
            "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
        ),
        (
            [
                SIGNED_CALL,
                {
                    "role": "user",
                    "parts": [{"functionResponse": {"name": "get_weather", "response": {}}}],
                },
            ],
            "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
        ),
        (
            [
                {"role": "user", "parts": [{"text": "hi"}]},
                SIGNED_CALL,
                {
                    "role": "user",
                    "parts": [{"functionResponse": {"name": "get_time", "response": {}}}],
                },
            ],
            "Function response `get_time` in contents[2].parts[0] does not answer any function call of the function call turn.",
        ),
        ([], "* GenerateContentRequest.contents: contents is not specified"),
        (
            [{"role": "user", "parts": []}],
            "* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.",
        ),
        (
            [{"role": "assistant", "parts": [{"text": "hi"}]}],
            "Please use a valid role: user, model.",
        ),
    ],
    ids=["response-first", "count", "call-first", "name", "no-contents", "no-parts", "role"],
)
def test_turn_rules(emu: Emulator, api: str, contents: list[Any], message: str) -> None:
    status, body = raw_post(emu, api, {"contents": contents})
    assert status == 400
    assert body == {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}


def test_consecutive_contents_of_one_role_form_one_turn(emu: Emulator, api: str) -> None:
    """google-genai's streamed chat keeps each chunk as a content of its own: the turn
    is checked as a whole (order, signatures, positions of the original contents)."""
    answer = {"functionResponse": {"name": "get_weather", "response": {"output": "sunny"}}}
    split = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "user", "parts": [{"text": WEATHER_QUESTION}]},
        {"role": "model", "parts": [{"text": "Let me check."}]},
        SIGNED_CALL,
        {"role": "user", "parts": [answer]},
    ]
    status, body = raw_post(emu, api, {"contents": split})
    assert status == 200, body
    unsigned = {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {}}}]}
    status, body = raw_post(emu, api, {"contents": [*split[:3], unsigned, split[4]]})
    assert status == 400
    assert body["error"]["message"] == missing("get_weather", 4, vertex=api == "vertex")
    # The split turn still needs a function response for each of its calls.
    status, body = raw_post(emu, api, {"contents": [*split[:4], SIGNED_CALL, split[4]]})
    assert status == 400
    assert body["error"]["message"] == (
        "Please ensure that the number of function response parts is equal to the number of "
        "function call parts of the function call turn."
    )


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny, 21 C in {city}"


@pytest.mark.parametrize("model", [G3, "gemini-2.5-flash"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_sdk_chat_with_automatic_function_calling(
    emu: Emulator, client: genai.Client, model: str, stream: bool
) -> None:
    """The SDK's own chat history (streamed: one model content per chunk) replays as the
    service accepts it, over two turns of automatic function calling."""
    chat = client.aio.chats.create(
        model=model,
        config=types.GenerateContentConfig(
            tools=[get_weather], thinking_config=types.ThinkingConfig(include_thoughts=True)
        ),
    )
    for city in ("Paris", "Rome"):
        question = f"What's the weather in {city}?"
        if stream:
            chunks = [c async for c in await chat.send_message_stream(question)]
            text = "".join(p.text or "" for c in chunks for p in _answer_parts(c))
        else:
            text = "".join(p.text or "" for p in _answer_parts(await chat.send_message(question)))
        assert f"sunny, 21 C in {city}" in text
    roles = [c["role"] for c in emu.requests[-1].body["contents"]]
    assert roles.count("user") == 4  # two questions, two function responses
    consecutive = any(a == b == "model" for a, b in itertools.pairwise(roles))
    assert consecutive == stream  # streamed, the SDK keeps a model content per chunk


def _answer_parts(response: types.GenerateContentResponse) -> list[types.Part]:
    assert response.candidates
    content = response.candidates[0].content
    return [p for p in (content.parts if content else None) or [] if not p.thought]


async def test_sdk_streamed_chat_without_tools(client: genai.Client) -> None:
    """The answer's signature arrives on a trailing empty part in its own chunk: the SDK
    keeps it as a model content of its own, and it still verifies on the next turn."""
    chat = client.aio.chats.create(model=G3)
    for question in ("Tell me about Paris.", "And Rome?"):
        chunks = [c async for c in await chat.send_message_stream(question)]
        assert chunks[-1].candidates
        last = chunks[-1].candidates[0].content
        assert last is not None and last.parts
        assert last.parts[-1].text == "" and last.parts[-1].thought_signature
    history = chat.get_history()
    assert [c.role for c in history[:2]] == ["user", "model"]
    assert history[2].role == "model"


async def test_integral_float_arguments_replay(emu: Emulator, client: genai.Client) -> None:
    """A call's signature covers its arguments by value: ``3.0`` replays a ``3``."""
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city", "days"],
    }
    cfg = types.GenerateContentConfig(
        tools=[
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(
                        name="get_forecast",
                        description="Weather forecast for a city for N days.",
                        parameters_json_schema=schema,
                    )
                ]
            )
        ],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents = [user("Weather forecast in Paris for 3 days?")]
    first = await ask(client, contents, cfg=cfg)
    call = calls_of(first)[0].function_call
    assert call is not None and call.args == {"city": "Paris", "days": 3}
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    name="get_forecast", response={"result": "sunny"}
                )
            )
        ],
    )
    call.args = {"city": "Paris", "days": 3.5}
    with pytest.raises(errors.ClientError):  # another value is another call
        await ask(client, [*contents, first, answer], cfg=cfg)
    call.args = {"city": "Paris", "days": 3.0}
    reply = await ask(client, [*contents, first, answer], cfg=cfg)
    assert not calls_of(reply)
    sent = [p for p in emu.requests[-1].body["contents"][1]["parts"] if "functionCall" in p]
    assert repr(sent[0]["functionCall"]["args"]["days"]) == "3.0"  # as sent: a float


def test_snake_case_keys_and_function_response_ids(emu: Emulator) -> None:
    tool = {
        "function_declarations": [
            {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "parameters": {
                    "type": "OBJECT",
                    "properties": {"city": {"type": "STRING"}},
                    "required": ["city"],
                },
            }
        ]
    }
    body: dict[str, Any] = {
        "contents": [{"role": "user", "parts": [{"text": WEATHER_QUESTION}]}],
        "system_instruction": {"parts": [{"text": "Be terse."}]},
        "tools": [tool],
        "tool_config": {"function_calling_config": {"mode": "ANY"}},
        "generation_config": {
            "max_output_tokens": 2048,
            "thinking_config": {"include_thoughts": True, "thinking_level": "low"},
        },
    }
    status, first = raw_post(emu, "gemini", body)
    assert status == 200
    parts = first["candidates"][0]["content"]["parts"]
    assert parts[0]["thought"] is True
    assert "Be terse." in parts[0]["text"]
    call = next(p for p in parts if "functionCall" in p)
    assert call["functionCall"] == {"name": "get_weather", "args": {"city": "Paris"}}
    replayed = {**call, "function_call": {**call["functionCall"], "id": "call-1"}}
    del replayed["functionCall"]
    replayed["thought_signature"] = replayed.pop("thoughtSignature")
    body["contents"] += [
        {"role": "model", "parts": [*parts[:-1], replayed]},
        {
            "role": "user",
            "parts": [
                {
                    "function_response": {
                        "id": "call-1",
                        "name": "get_weather",
                        "response": {"output": "rainy"},
                    }
                }
            ],
        },
    ]
    body["tool_config"] = {"function_calling_config": {"mode": "AUTO"}}
    status, second = raw_post(emu, "gemini", body)
    assert status == 200, second
    assert "rainy" in second["candidates"][0]["content"]["parts"][-1]["text"]
    body["tool_config"] = {"function_calling_config": {"mode": "NONE"}}
    status, none = raw_post(emu, "gemini", {**body, "contents": body["contents"][:1]})
    assert status == 200
    assert not any("functionCall" in p for p in none["candidates"][0]["content"]["parts"])


def test_stream_without_alt_sse_is_a_json_array(emu: Emulator) -> None:
    status, chunks = post(
        emu,
        "/v1beta/models/gemini-3-flash-preview:streamGenerateContent",
        {"contents": [{"parts": [{"text": "Hello there."}]}]},
        {"x-goog-api-key": "k"},
    )
    assert status == 200
    assert isinstance(chunks, list)
    assert len(chunks) > 1
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert chunks[-1]["candidates"][0]["content"]["parts"][0]["text"] == ""
    assert "usageMetadata" in chunks[-1]
    assert "usageMetadata" not in chunks[0]


async def test_versions_and_recording(emu: Emulator) -> None:
    for version in ("v1", "v1alpha"):
        client = emu.gemini_client(http_options=types.HttpOptions(api_version=version))
        await client.aio.models.generate_content(model="gemini-2.5-flash", contents="hi")
        await client.aio.aclose()
        assert emu.requests[-1].path == f"/{version}/models/gemini-2.5-flash:generateContent"
        assert emu.requests[-1].api == "gemini"
        assert emu.requests[-1].auth == "x-goog-api-key"
    status, body = post(
        emu, "/v9/models/gemini-2.5-flash:generateContent", {}, {"x-goog-api-key": "k"}
    )
    assert status == 404
    assert body["error"]["status"] == "NOT_FOUND"


async def test_scripted_reply_is_rendered_and_signed(
    emu: Emulator, client: genai.Client, api: str
) -> None:
    emu.script(
        api,
        [
            Reply(
                thinking="Rome, not Paris.",
                text="Checking.",
                tool_calls=[ToolCallSpec("get_weather", {"city": "Rome"}, id="call-rome")],
            )
        ],
    )
    contents = [user(WEATHER_QUESTION)]
    first = await ask(client, contents)
    assert [(p.thought, p.text) for p in first.parts or []][:2] == [
        (True, "Rome, not Paris."),
        (None, "Checking."),
    ]
    call = calls_of(first)[0]
    assert call.function_call and call.function_call.id == "call-rome"
    assert call.thought_signature
    response = results_for(first)
    (response.parts or [])[0].function_response.id = "call-rome"  # type: ignore[union-attr]
    answer = await ask(client, [*contents, first, response])
    assert "sunny, 21 C in Rome" in "".join(p.text or "" for p in answer.parts or [])


async def test_max_output_tokens_truncates(gemini_client: genai.Client) -> None:
    response = await gemini_client.aio.models.generate_content(
        model="gemini-2.5-flash",
        contents="Tell me a long story about the emulator and its many tests.",
        config=types.GenerateContentConfig(
            max_output_tokens=5, thinking_config=types.ThinkingConfig(thinking_budget=0)
        ),
    )
    assert response.candidates
    assert response.candidates[0].finish_reason == types.FinishReason.MAX_TOKENS
    assert response.usage_metadata
    assert response.usage_metadata.candidates_token_count == 5
