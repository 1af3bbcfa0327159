"""The agent's features through both OpenAI adapters, on the emulator: images and documents
(in prompts and tool results), native structured output, instructions-only runs, the thinking
knob, warnings and part ends in streams, histories replayed on a fresh emulator, and response
shapes the adapter does not expect."""

from __future__ import annotations

import base64
import json
from typing import Any

import openai
import pytest
from pydantic import BaseModel

from thinkagent import (
    Agent,
    ConfigurationError,
    Document,
    Image,
    Message,
    ModelRequest,
    PartEnd,
    ProviderError,
    ThinkingBlock,
    ToolCall,
    WarningEvent,
    dump_messages,
    load_messages,
)
from thinkagent.emulator import Emulator
from thinkagent.providers.base import OutputSpec
from thinkagent.providers.openai import OpenAIChatModel, OpenAIResponsesModel

from ..support.openai import FakeClient, get_weather

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n% thinkagent\n%%EOF\n"


def chat(client: Any, name: str = "gpt-5", dialect: str | None = "openai") -> OpenAIChatModel:
    return OpenAIChatModel(name, client=client, dialect=dialect)


def on_wire(wire: str, client: Any, name: str = "gpt-5") -> OpenAIChatModel | OpenAIResponsesModel:
    """`name` behind Chat Completions (OpenAI's dialect) or the Responses API."""
    return chat(client, name) if wire == "chat" else OpenAIResponsesModel(name, client=client)


# --- media -----------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", ["chat", "responses"])
async def test_images_and_documents_reach_the_model_intact(
    emu: Emulator, openai_client: openai.AsyncOpenAI, wire: str
) -> None:
    model = on_wire(wire, openai_client)
    prompt = [
        "What is in these?",
        Image(data=PNG, media_type="image/png"),
        Document(data=PDF, media_type="application/pdf", name="a.pdf"),
    ]
    result = await Agent(model).run(prompt)
    assert f"image/png, {len(PNG)} bytes" in result.output
    assert f"application/pdf, {len(PDF)} bytes" in result.output
    (body,) = [r.body for r in emu.requests]
    sent = json.dumps(body)
    assert base64.b64encode(PNG).decode() in sent and base64.b64encode(PDF).decode() in sent
    if wire == "chat":
        parts = body["messages"][0]["content"]
        assert [p["type"] for p in parts] == ["text", "image_url", "file"]
        assert parts[2]["file"]["filename"] == "a.pdf"
    else:
        parts = body["input"][0]["content"]
        assert [p["type"] for p in parts] == ["input_text", "input_image", "input_file"]
    text = dump_messages(result.messages)
    assert dump_messages(load_messages(text)) == text


async def test_a_tool_returns_an_image_to_the_responses_api(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    def screenshot(city: str) -> Image:
        """Current weather for a city, as a picture."""
        return Image(data=PNG, media_type="image/png")

    model = OpenAIResponsesModel("gpt-5", client=openai_client)
    result = await Agent(model, tools=[screenshot]).run("What's the weather in Paris?")
    assert f"image/png, {len(PNG)} bytes" in result.output
    output = next(
        i for i in emu.requests[-1].body["input"] if i.get("type") == "function_call_output"
    )
    assert [p["type"] for p in output["output"]] == ["input_text", "input_image"]


def test_what_chat_completions_cannot_take_is_refused_before_sending() -> None:
    client = FakeClient()
    model = chat(client)
    pdf_url = Message.user(
        ["Read this", Document(url="https://example.com/a.pdf", media_type="application/pdf")]
    )
    with pytest.raises(ConfigurationError, match="documents as bytes only"):
        model.build_request(ModelRequest(messages=[pdf_url]))
    bmp = Message.user(["What is it?", Image(data=b"BM..", media_type="image/bmp")])
    with pytest.raises(ConfigurationError, match=r"messages\[0\].parts\[1\]: .*image/bmp"):
        model.build_request(ModelRequest(messages=[bmp]))
    assert client.calls == []
    assert not model.profile.media.in_tool_results  # tool messages are text only
    assert chat(client, "deepseek-reasoner", "deepseek").profile.media.types == frozenset()


# --- structured output -----------------------------------------------------------------------


class Weather(BaseModel):
    city: str
    temperature_c: float


@pytest.mark.parametrize("wire", ["chat", "responses"])
async def test_native_structured_output_with_tools_and_reasoning(
    emu: Emulator, openai_client: openai.AsyncOpenAI, wire: str
) -> None:
    model = on_wire(wire, openai_client)
    assert model.profile.native_output
    agent = Agent(model, output_type=Weather, output_mode="native", tools=[get_weather])
    result = await agent.run("What's the weather in Paris?")
    assert isinstance(result.output, Weather) and result.output.city == "Paris"
    body = emu.requests[-1].body
    if wire == "chat":
        response_format = body["response_format"]
        assert response_format["type"] == "json_schema"
        assert (
            response_format["json_schema"]["name"]
            and response_format["json_schema"]["strict"] is False
        )
    else:
        assert body["text"]["format"]["type"] == "json_schema"
    assert body["tools"]  # together with the tools


def test_strict_mode_only_for_schemas_that_meet_it() -> None:
    model = chat(FakeClient())
    closed = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    spec = OutputSpec(name="out", description="", schema=closed, mode="native")
    params = model.build_request(ModelRequest(messages=[Message.user("q")], output=spec))
    assert params["response_format"]["json_schema"]["strict"] is True


# --- instructions only, the knob, stream events ---------------------------------------------------


@pytest.mark.parametrize("wire", ["chat", "responses"])
async def test_a_run_from_instructions_alone(
    emu: Emulator, openai_client: openai.AsyncOpenAI, wire: str
) -> None:
    model = on_wire(wire, openai_client)
    result = await Agent(model, instructions="Say hello.").run()
    assert result.output
    (body,) = [r.body for r in emu.requests]
    if wire == "chat":
        assert body["messages"] == [{"role": "developer", "content": "Say hello."}]
    else:
        assert body["input"] == [] and body["instructions"] == "Say hello."


@pytest.mark.parametrize("wire", ["chat", "responses"])
async def test_warnings_come_first_and_parts_end(
    emu: Emulator, openai_client: openai.AsyncOpenAI, wire: str
) -> None:
    model = on_wire(wire, openai_client, "o3")
    request = ModelRequest(
        messages=[Message.user("What's the weather in Paris?")],
        tools=[],
        settings={"thinking": "max"},
    )
    events = [e async for e in model.stream(request)]
    assert isinstance(events[0], WarningEvent) and events[0].code == "thinking_clamped"
    final = events[-1]
    ends = [e for e in events if isinstance(e, PartEnd)]
    assert [e.part for e in ends] == list(final.message.parts)  # type: ignore[union-attr]
    assert final.warnings == (events[0],)  # type: ignore[union-attr]
    assert (
        emu.requests[-1].body.get(
            "reasoning_effort", emu.requests[-1].body.get("reasoning", {}).get("effort")
        )
        == "high"
    )
    response = await model.request(request)
    assert response.warnings == (events[0],)


async def test_responses_part_ends_carry_the_signed_reasoning(
    openai_client: openai.AsyncOpenAI,
) -> None:
    from thinkagent.tools import Tool

    from ..support.openai import TOOLS

    model = OpenAIResponsesModel("gpt-5", client=openai_client)
    tools = [Tool(t).definition for t in TOOLS]
    request = ModelRequest(messages=[Message.user("What's the weather in Paris?")], tools=tools)
    events = [e async for e in model.stream(request)]
    ends = [e.part for e in events if isinstance(e, PartEnd)]
    assert isinstance(ends[0], ThinkingBlock) and ends[0].signature
    assert isinstance(ends[-1], ToolCall) and ends[-1].arguments


# --- a fresh emulator ----------------------------------------------------------------------------


async def test_a_history_recorded_on_one_emulator_replays_on_a_fresh_one() -> None:
    """The Responses scope of a local server leaves out its port, so a fixture recorded once
    keeps its reasoning on the next emulator (which reads it: same default secret)."""
    with Emulator() as first:
        model = OpenAIResponsesModel("gpt-5", client=first.openai_client())
        recorded = dump_messages(
            (await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")).messages
        )
    with Emulator() as fresh:
        model = OpenAIResponsesModel("gpt-5", client=fresh.openai_client())
        history = load_messages(recorded)
        await Agent(model, tools=[get_weather]).run("And in Rome?", history=history)
        sent = fresh.requests[-1].body["input"]
        reasoning = [i for i in sent if i.get("type") == "reasoning"]
        assert reasoning and reasoning[0]["encrypted_content"] == history[1].thinking[0].signature


# --- shapes the adapter does not expect ------------------------------------------------------------


def completion(message: dict[str, Any], model: str = "x/y") -> Any:
    """A completion built as the SDK builds a response body: without validation, so shapes its
    types do not allow come through as they are."""
    from openai.types.chat import ChatCompletion

    return ChatCompletion.construct(
        id="c",
        object="chat.completion",
        created=1,
        model=model,
        choices=[
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", **message}}
        ],
    )


def test_unknown_parts_are_kept_reported_and_sent_back_in_place() -> None:
    model = chat(FakeClient(), "x/y", "openrouter")
    response = model.parse_response(
        completion(
            {
                "content": "Hi.",
                "reasoning_details": [
                    {"type": "reasoning.text", "text": "t", "format": "unknown", "index": 0},
                    {"type": "reasoning.hologram", "beam": "42", "index": 1},
                ],
            }
        )
    )
    message = response.message
    assert [p.kind for p in message.parts] == ["thinking", "text"]
    assert message.provider_details is not None
    assert message.provider_details["unknown_reasoning_details"] == [
        {"position": 1, "item": {"type": "reasoning.hologram", "beam": "42", "index": 1}}
    ]
    assert [w.code for w in response.warnings] == ["unknown_response_part"]
    history = [Message.user("q"), message, Message.user("more")]
    sent = model.build_messages(history)[1]
    assert sent["reasoning_details"] == [
        {"type": "reasoning.text", "text": "t", "format": "unknown", "index": 0},
        {"type": "reasoning.hologram", "beam": "42", "index": 1},
    ]


def test_content_as_a_list_where_a_string_was_expected() -> None:
    model = chat(FakeClient(), "deepseek-reasoner", "deepseek")
    response = model.parse_response(
        completion(
            {
                "content": [
                    {"type": "text", "text": "Hel"},
                    {"type": "text", "text": "lo."},
                    {"type": "audio", "id": "a1"},
                ]
            }
        )
    )
    assert response.message.text == "Hello."
    assert response.message.provider_details["unknown_content"] == [  # type: ignore[index]
        {"position": 2, "chunk": {"type": "audio", "id": "a1"}}
    ]
    odd = model.parse_response(completion({"content": 42}))
    assert odd.message.parts == () and [w.code for w in odd.warnings] == ["unknown_response_part"]


async def test_a_response_that_cannot_be_understood_is_a_provider_error() -> None:
    model = chat(
        FakeClient(completion({"content": "x", "tool_calls": [{"id": "c", "type": "function"}]}))
    )
    with pytest.raises(ProviderError) as info:
        await Agent(model).run("q")
    assert info.value.error_type == "malformed_response" and info.value.messages
