"""Gemini's built-in tools through `google-genai` against the emulator: Google Search and code
execution inside a Gemini 3 tool loop (their signed `toolCall`/`toolResponse` parts in place
and back byte for byte, a forged signature refused), grounding read as citations, Vertex AI's
metadata-only view, what is refused before sending and by the service; and function call
arguments streamed as `partialArgs`, folded into the same deltas (a stream equals the
response)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from google import genai
from google.genai import types

from thinkagent import (
    Agent,
    CodeExecution,
    ConfigurationError,
    FileSearch,
    MCPServer,
    Message,
    ProviderError,
    ServerToolCall,
    ServerToolResult,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolCallDelta,
    URLContext,
    WebFetch,
    WebSearch,
    dump_messages,
    load_messages,
)
from thinkagent.emulator import Emulator
from thinkagent.providers.gemini import GeminiModel
from thinkagent.providers.gemini._partial_args import PartialArguments, parse_path

SEARCH_THEN_WEATHER = "Search the web for today's news in Paris, then tell me the weather there."


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def cook(recipe: dict[str, Any], servings: int, vegetarian: bool) -> str:
    """Cook a recipe."""
    return "cooked"


def bodies(emu: Emulator) -> list[dict[str, Any]]:
    return [r.body for r in emu.requests if isinstance(r.body, dict)]


def raw(signature: object) -> bytes:
    """A signature's bytes, whichever base64 alphabet carries it (the SDK sends URL-safe)."""
    text = str(signature)
    return base64.urlsafe_b64decode(text.replace("+", "-").replace("/", "_"))


def model_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for c in body["contents"] if c["role"] == "model" for p in c["parts"]]


async def test_search_in_a_gemini_3_tool_loop_goes_back_signed_and_in_place(
    emu: Emulator, gemini_client: genai.Client
) -> None:
    agent = Agent(
        GeminiModel("gemini-3-pro-preview", client=gemini_client), tools=[get_weather, WebSearch()]
    )
    result = await agent.run(SEARCH_THEN_WEATHER)
    first, second = bodies(emu)
    assert {"googleSearch": {}} in first["tools"]
    assert first["toolConfig"] == {"includeServerSideToolInvocations": True}
    turn = result.messages[1]
    assert [type(p) for p in turn.parts] == [
        ThinkingBlock,
        ServerToolCall,
        ServerToolResult,
        TextPart,
        ToolCall,
    ]
    call, found = turn.server_tool_calls[0], turn.server_tool_results[0]
    assert (call.name, call.builtin, call.type) == ("google_search", "web_search", "toolCall")
    assert call.arguments == {"queries": [SEARCH_THEN_WEATHER]}
    assert found.call_id == call.id and "search_suggestions" in found.content  # type: ignore[operator]
    assert "thoughtSignature" in call.data and "thoughtSignature" in (found.data or {})
    sent = model_parts(second)
    assert raw(sent[0]["thoughtSignature"]) == raw(call.data["thoughtSignature"])
    assert sent[0]["toolCall"]["args"] == call.data["toolCall"]["args"]  # type: ignore[index]
    assert sent[0]["toolCall"]["id"] == call.id
    assert raw(sent[1]["thoughtSignature"]) == raw(found.data["thoughtSignature"])  # type: ignore[index]
    assert turn.usage is not None and turn.usage.server_tool_uses == {"web_search": 1}


async def test_a_forged_signature_on_a_search_call_is_refused(
    emu: Emulator, gemini_client: genai.Client
) -> None:
    agent = Agent(
        GeminiModel("gemini-3-pro-preview", client=gemini_client), tools=[get_weather, WebSearch()]
    )
    first = await agent.run(SEARCH_THEN_WEATHER)
    turn = first.messages[1]
    call = turn.server_tool_calls[0]
    data = dict(call.data)
    signature = str(data["thoughtSignature"])
    data["thoughtSignature"] = ("B" if signature[0] == "A" else "A") + signature[1:]
    forged = call.model_copy(update={"data": data})
    parts = tuple(forged if p is call else p for p in turn.parts)
    history = [first.messages[0], turn.model_copy(update={"parts": parts}), *first.messages[2:]]
    with pytest.raises(ProviderError, match="Corrupted thought signature"):
        await agent.run("And tomorrow?", history=history)


async def test_the_stream_equals_the_response_and_a_persisted_history_replays(
    emu: Emulator, gemini_client: genai.Client
) -> None:
    agent = Agent(
        GeminiModel("gemini-3-pro-preview", client=gemini_client),
        tools=[get_weather, WebSearch(), CodeExecution()],
    )
    expected = await agent.run(SEARCH_THEN_WEATHER)
    async with agent.run_stream(SEARCH_THEN_WEATHER) as stream:
        async for _ in stream:
            pass
    assert stream.result.messages == expected.messages
    history = load_messages(dump_messages(expected.messages))
    await agent.run("And tomorrow?", history=history)
    again = model_parts(bodies(emu)[-1])
    signature = expected.messages[1].server_tool_calls[0].data["thoughtSignature"]
    assert raw(again[0]["thoughtSignature"]) == raw(signature)


async def test_grounding_supports_become_citations_on_the_answer(
    emu: Emulator, gemini_client: genai.Client
) -> None:
    agent = Agent(GeminiModel("gemini-3-pro-preview", client=gemini_client), tools=[WebSearch()])
    result = await agent.run("Search the web for the latest news about Lyon")
    answer = result.messages[1]
    citations = answer.citations
    assert citations and citations[0].type == "grounding_support"
    text = next(p for p in answer.parts if isinstance(p, TextPart) and p.citations)
    first = citations[0]
    assert first.start is not None and first.end is not None
    assert text.text[first.start : first.end] == first.cited_text == first.url
    details = answer.provider_details or {}
    assert "grounding_metadata" in details
    async with agent.run_stream("Search the web for the latest news about Lyon") as stream:
        async for _ in stream:
            pass
    assert stream.result.messages == result.messages


async def test_code_execution_parts_come_back_as_a_call_and_its_result(
    emu: Emulator, gemini_client: genai.Client
) -> None:
    agent = Agent(
        GeminiModel("gemini-3-pro-preview", client=gemini_client), tools=[CodeExecution()]
    )
    result = await agent.run("Calculate 2 + 3 with code")
    call, output = (
        result.messages[1].server_tool_calls[0],
        result.messages[1].server_tool_results[0],
    )
    assert (call.type, call.builtin) == ("executableCode", "code_execution")
    assert call.arguments == {"code": "print(2 + 3)", "language": "PYTHON"}
    assert output.content == {"outcome": "OUTCOME_OK", "output": "5\n"} and not output.is_error
    assert output.call_id == call.id


async def test_vertex_shows_searches_through_metadata_only(
    emu: Emulator, vertex_client: genai.Client
) -> None:
    agent = Agent(GeminiModel("gemini-3-pro-preview", client=vertex_client), tools=[WebSearch()])
    result = await agent.run("Search the web for the latest news about Lyon")
    body = bodies(emu)[0]
    assert "toolConfig" not in body  # Vertex AI has no includeServerSideToolInvocations
    answer = result.messages[1]
    assert answer.server_tool_calls == [] and answer.citations
    assert answer.usage is not None and answer.usage.server_tool_uses == {"web_search": 1}


# --- refusals --------------------------------------------------------------------------------------


def test_what_gemini_lacks_is_refused_before_sending(emu: Emulator) -> None:
    gemini = emu.gemini_client()
    vertex = emu.vertex_client()
    for client, tool, match in (
        (gemini, WebFetch(), "WebFetch is not available on Gemini"),
        (gemini, WebSearch(max_uses=2), "no 'max_uses'"),
        (gemini, WebSearch(blocked_domains=["a.com"]), "no 'blocked_domains'"),
        (vertex, FileSearch(vector_store_ids=["s"]), "not available on Vertex AI"),
        (vertex, MCPServer(url="https://a", name="a"), "not available on Vertex AI"),
    ):
        with pytest.raises(ConfigurationError, match=match):
            Agent(GeminiModel("gemini-3-pro-preview", client=client), tools=[tool])
    with pytest.raises(ConfigurationError, match=r"not available on gemini-2\.5-flash-image"):
        Agent(GeminiModel("gemini-2.5-flash-image", client=gemini), tools=[WebSearch()])
    Agent(
        GeminiModel("gemini-3-pro-preview", client=vertex),
        tools=[WebSearch(blocked_domains=["a.com"])],
    )
    assert emu.requests == []


async def test_gemini_2_5_cannot_combine_built_in_and_function_tools(
    emu: Emulator, gemini_client: genai.Client
) -> None:
    agent = Agent(
        GeminiModel("gemini-2.5-flash", client=gemini_client), tools=[get_weather, WebSearch()]
    )
    with pytest.raises(ConfigurationError, match="Gemini 3 can"):
        await agent.run("Search the news")
    assert emu.requests == []
    with pytest.raises(
        genai.errors.ClientError, match="Tool use with function calling is unsupported"
    ):
        await gemini_client.aio.models.generate_content(
            model="gemini-2.5-flash",
            contents="hi",
            config=types.GenerateContentConfig(
                tools=[
                    types.Tool(google_search=types.GoogleSearch()),
                    types.Tool(function_declarations=[types.FunctionDeclaration(name="f")]),
                ]
            ),
        )


async def test_an_image_model_refuses_search_at_the_service(gemini_client: genai.Client) -> None:
    with pytest.raises(genai.errors.ClientError, match="Search Grounding is not supported"):
        await gemini_client.aio.models.generate_content(
            model="gemini-2.5-flash-image",
            contents="hi",
            config=types.GenerateContentConfig(
                tools=[types.Tool(google_search=types.GoogleSearch())]
            ),
        )


async def test_url_context_on_gemini(emu: Emulator, gemini_client: genai.Client) -> None:
    agent = Agent(GeminiModel("gemini-3-pro-preview", client=gemini_client), tools=[URLContext()])
    result = await agent.run("Summarise https://docs.example.com/page please")
    assert {"urlContext": {}} in bodies(emu)[0]["tools"]
    call = result.messages[1].server_tool_calls[0]
    assert (call.name, call.arguments) == (
        "url_context",
        {"urls": ["https://docs.example.com/page"]},
    )
    metadata = (result.messages[1].provider_details or {})["url_context_metadata"]
    assert metadata == {
        "urlMetadata": [
            {
                "retrievedUrl": "https://docs.example.com/page",
                "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS",
            }
        ]
    }


# --- streamed function call arguments --------------------------------------------------------------


async def test_streamed_partial_args_equal_the_non_streamed_response(
    emu: Emulator, vertex_client: genai.Client
) -> None:
    model = GeminiModel("gemini-3-pro-preview", client=vertex_client, stream_arguments=True)
    agent = Agent(model, tools=[get_weather])
    question = "What's the weather in Paris and London?"
    expected = await agent.run(question)
    assert "toolConfig" not in bodies(emu)[0]  # only streamed requests ask for pieces
    deltas: list[ToolCallDelta] = []
    async with agent.run_stream(question) as stream:
        async for event in stream:
            if isinstance(event, ToolCallDelta):
                deltas.append(event)
    assert stream.result.messages == expected.messages
    streamed = [b for b in bodies(emu)[2:] if "toolConfig" in b]
    assert streamed and all(
        b["toolConfig"]["functionCallingConfig"] == {"stream_function_call_arguments": True}
        for b in streamed
    )
    first_call = [d for d in deltas if d.index == deltas[0].index]
    assert len(first_call) > 2  # the head, then the arguments in pieces
    text = "".join(d.args_fragment for d in first_call)
    assert json.loads(text) == expected.messages[1].tool_calls[0].arguments


async def test_the_service_streams_partial_args_only_when_asked(
    vertex_client: genai.Client,
) -> None:
    config = types.GenerateContentConfig(
        tools=[
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(
                        name="get_weather",
                        description="Current weather for a city.",
                        parameters_json_schema={
                            "type": "object",
                            "properties": {"city": {"type": "string"}},
                            "required": ["city"],
                        },
                    )
                ]
            )
        ],
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(stream_function_call_arguments=True)
        ),
    )
    chunks = [
        chunk
        async for chunk in await vertex_client.aio.models.generate_content_stream(
            model="gemini-3-pro-preview", contents="Weather in Paris?", config=config
        )
    ]
    calls = [
        p.function_call
        for c in chunks
        for p in (
            c.candidates[0].content.parts or [] if c.candidates and c.candidates[0].content else []
        )
        if p.function_call is not None
    ]
    assert calls[0].name == "get_weather" and calls[0].will_continue
    pieces = [a for call in calls for a in call.partial_args or []]
    assert pieces[0].json_path == "$.city"
    assert calls[-1].name is None and not calls[-1].will_continue and not calls[-1].partial_args


def test_stream_arguments_is_refused_where_the_model_does_not_take_it(emu: Emulator) -> None:
    with pytest.raises(ConfigurationError, match="only available on Vertex AI with Gemini 3"):
        GeminiModel("gemini-3-pro-preview", client=emu.gemini_client(), stream_arguments=True)
    with pytest.raises(ConfigurationError, match=r"gemini-2\.5-flash"):
        GeminiModel("gemini-2.5-flash", client=emu.vertex_client(), stream_arguments=True)


def _arg(path: str, **value: Any) -> types.PartialArg:
    return types.PartialArg(json_path=path, **value)


def test_partial_arguments_write_nested_objects_arrays_and_every_value_kind() -> None:
    writer = PartialArguments()
    pieces = [
        _arg("$.recipe.ingredients[0].amount", string_value="16 ", will_continue=True),
        _arg("$.recipe.ingredients[0].amount", string_value='oz "fine"', will_continue=True),
        _arg("$.recipe.ingredients[0].amount", string_value=""),
        _arg("$.recipe.ingredients[1].name", string_value="beef"),
        _arg("$.servings", number_value=4.0),
        _arg("$.ratio", number_value=0.5),
        _arg("$.vegetarian", bool_value=False),
        _arg("$['odd key']", null_value="NULL_VALUE"),
    ]
    text = "".join(writer.add(p) for p in pieces) + writer.close()[0]
    assert json.loads(text) == {
        "recipe": {"ingredients": [{"amount": '16 oz "fine"'}, {"name": "beef"}]},
        "servings": 4,
        "ratio": 0.5,
        "vegetarian": False,
        "odd key": None,
    }
    assert PartialArguments().close() == ("{}", None)


def test_partial_arguments_out_of_order_fall_back_to_the_rebuilt_object() -> None:
    writer = PartialArguments()
    for piece in (
        _arg("$.a.x", number_value=1),
        _arg("$.b", number_value=2),
        _arg("$.a.y", number_value=3),
    ):
        writer.add(piece)
    assert writer.close() == ("", {"a": {"x": 1, "y": 3}, "b": 2})


def test_json_paths_parse_names_indexes_and_quoted_keys() -> None:
    assert parse_path("$.a[0]['b c'][\"d\"]") == ["a", 0, "b c", "d"]
    with pytest.raises(ValueError, match="not a JSON path"):
        parse_path("a.b")


LIVE_TWO_ROUNDS = {
    "candidates": [
        {
            "index": 0,
            "finishReason": "STOP",
            "content": {
                "role": "model",
                "parts": [
                    {
                        "thoughtSignature": "c2lnMQ==",
                        "toolCall": {
                            "toolType": "GOOGLE_SEARCH_WEB",
                            "args": {"queries": ["FIFA World Cup winner 2026"]},
                        },
                    },
                    {
                        "toolResponse": {
                            "toolType": "GOOGLE_SEARCH_WEB",
                            "response": {"search_suggestions": "<div>a</div>"},
                        },
                        "thoughtSignature": "c2lnMg==",
                    },
                    {
                        "thoughtSignature": "c2lnMw==",
                        "toolCall": {
                            "toolType": "GOOGLE_SEARCH_WEB",
                            "args": {"queries": ["2026 final score"]},
                            "id": "Fbe8aaSI",
                        },
                    },
                    {
                        "toolResponse": {
                            "id": "Fbe8aaSI",
                            "toolType": "GOOGLE_SEARCH_WEB",
                            "response": {"search_suggestions": "<div>b</div>"},
                        },
                        "thoughtSignature": "c2lnNA==",
                    },
                    {"text": "Spain won.", "thoughtSignature": "c2lnNQ=="},
                ],
            },
        }
    ],
    "modelVersion": "gemini-3.6-flash",
    "responseId": "two-rounds",
}
"""The shape of a live Gemini 3.6 response with two search rounds, ids omitted on the first
(as published in maximhq/bifrost's fixtures; signatures shortened)."""


def test_a_live_shaped_response_with_two_search_rounds_parses_and_replays_in_order(
    emu: Emulator,
) -> None:
    model = GeminiModel("gemini-3.6-flash", client=emu.gemini_client())
    response = types.GenerateContentResponse.model_validate(LIVE_TWO_ROUNDS)
    message = model.parse_response(response).message
    kinds = [p.kind for p in message.parts]
    assert kinds == [
        "server_tool_call",
        "server_tool_result",
        "server_tool_call",
        "server_tool_result",
        "text",
    ]
    first, second = message.server_tool_calls
    assert first.id == message.server_tool_results[0].call_id  # a generated id pairs them
    assert second.id == "Fbe8aaSI" == message.server_tool_results[1].call_id
    assert message.usage is not None and message.usage.server_tool_uses == {"web_search": 2}
    contents = model.build_messages([Message.user("Who won?"), message])
    replayed = [
        p.model_dump(mode="json", by_alias=True, exclude_none=True) for p in contents[1].parts or []
    ]
    original = LIVE_TWO_ROUNDS["candidates"][0]["content"]["parts"]  # type: ignore[index]
    for sent, came in zip(replayed, original, strict=True):  # type: ignore[arg-type]
        assert raw(sent.pop("thoughtSignature")) == raw(came["thoughtSignature"])
        assert sent == {k: v for k, v in came.items() if k != "thoughtSignature"}
