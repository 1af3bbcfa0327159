"""`GeminiModel` with the agent's features, through `google-genai` against the emulator: its
profile, images and documents (in prompts and in function responses), native structured
output, the shared thinking knob, instructions-only runs, part ends while streaming, and the
client it builds itself retrying. The emulator checks each request as the service does."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from pydantic import BaseModel

from tests.support import recorded
from tests.support.gemini import api_fixture, client_fixture, run  # noqa: F401 (fixtures)
from thinkagent import (
    Agent,
    ConfigurationError,
    Document,
    Image,
    Message,
    ModelSettings,
    ProviderError,
    Tool,
    ToolCall,
    dump_messages,
    load_messages,
)
from thinkagent.emulator import Emulator, Fault
from thinkagent.providers.base import ModelRequest, ModelResponse, OutputSpec
from thinkagent.providers.gemini import GeminiModel, GeminiThinking
from thinkagent.stream import PartEnd, TextDelta, ThinkingDelta, ToolCallDelta, WarningEvent

G3 = "gemini-3-pro-preview"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 3
PDF = b"%PDF-1.4\n" + b"thinkagent " * 50 + b"\n%%EOF\n"


class Weather(BaseModel):
    city: str
    temperature_c: float
    conditions: str


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def screenshot(city: str) -> Image:
    """A screenshot of the weather map of a city."""
    return Image(data=PNG, media_type="image/png")


def bodies(emu: Emulator) -> list[dict[str, Any]]:
    return [r.body for r in emu.requests if r.api in ("gemini", "vertex")]


def b64(data: bytes) -> set[str]:
    """Both base64 spellings of `data` (the SDK sends URL-safe)."""
    return {base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode()}


def inline(part: dict[str, Any]) -> dict[str, Any]:
    return part.get("inlineData") or part["inline_data"]


# --- the profile ---------------------------------------------------------------------------


def test_the_profile_says_what_each_model_takes(gemini_client: Any, vertex_client: Any) -> None:
    g3 = GeminiModel(G3, client=gemini_client).profile
    flash = GeminiModel("gemini-2.5-flash", client=gemini_client).profile
    vertex = GeminiModel(G3, client=vertex_client).profile
    alias = GeminiModel("gemini-flash-latest", client=gemini_client).profile
    assert (g3.native_output, g3.media.in_tool_results) == (True, True)
    assert (flash.native_output, flash.media.in_tool_results) == (False, False)
    assert (alias.native_output, alias.media.in_tool_results) == (False, False)
    for profile in (g3, flash, vertex):
        assert profile.media.urls
        assert all(profile.media.accepts(t) for t in ("image/png", "image/webp", "application/pdf"))
        assert not profile.media.accepts("image/gif")
    assert g3.media.accepts("text/markdown") and not vertex.media.accepts("text/markdown")


# --- images and documents --------------------------------------------------------------------


async def test_images_and_documents_reach_the_model_intact(emu: Emulator, client: Any) -> None:
    agent = Agent(GeminiModel(G3, client=client))
    url = "gs://weather/forecast.pdf"
    prompt = [
        "What is in these files?",
        Image(data=PNG, media_type="image/png"),
        Document(data=PDF, media_type="application/pdf", name="report.pdf"),
        Document(url=url),
    ]
    result = await agent.run(prompt)
    assert f"an image (image/png, {len(PNG)} bytes)" in result.output
    assert f"a document (application/pdf, {len(PDF)} bytes)" in result.output
    assert f"a document (application/pdf, at {url})" in result.output
    parts = bodies(emu)[0]["contents"][0]["parts"]
    assert parts[0] == {"text": "What is in these files?"}
    assert inline(parts[1])["data"] in b64(PNG)
    assert inline(parts[2])["data"] in b64(PDF)
    file = parts[3].get("fileData") or parts[3]["file_data"]
    assert (file.get("fileUri") or file["file_uri"]) == url  # its type guessed from the name
    text = dump_messages(result.messages)
    assert dump_messages(load_messages(text)) == text
    assert load_messages(text)[0].parts[1] == prompt[1]


async def test_a_tool_returns_an_image_to_gemini_3(emu: Emulator, client: Any) -> None:
    agent = Agent(GeminiModel(G3, client=client), tools=[screenshot])
    result = await agent.run("Show me the weather map screenshot of Paris.")
    assert f"an image (image/png, {len(PNG)} bytes)" in result.output
    response = bodies(emu)[-1]["contents"][-1]["parts"][0]["functionResponse"]
    assert inline(response["parts"][0])["data"] in b64(PNG)
    results = [m for m in result.messages if m.tool_results]
    assert results[0].tool_results[0].media == (Image(data=PNG, media_type="image/png"),)


async def test_gemini_2_5_takes_no_media_in_a_tool_result(
    emu: Emulator, gemini_client: Any
) -> None:
    model = GeminiModel("gemini-2.5-flash", client=gemini_client)
    result = await Agent(model, tools=[screenshot]).run(
        "Show me the weather map screenshot of Paris."
    )
    # The agent sends the image in a user part after the function response (issue 25).
    assert [w.code for w in result.warnings] == ["media_moved"]
    parts = bodies(emu)[-1]["contents"][-1]["parts"]
    assert "functionResponse" in parts[0] and "inlineData" in parts[1]
    # The adapter alone still refuses a function response that carries media.
    with pytest.raises(ConfigurationError, match="takes no media in tool results"):
        await model.request(ModelRequest(messages=result.messages[:3]))


@pytest.mark.parametrize(
    ("api", "part", "problem"),
    [
        ("vertex", Image(data=b"\0" * (7 * 1024 * 1024 + 1), media_type="image/png"), "over"),
        ("gemini", Image(data=PNG, media_type="image/gif"), "takes no image of type"),
        ("vertex", Document(data=b"# notes", media_type="text/markdown"), "of type"),
        ("gemini", Image(url="https://example.com/map.gif"), "of type 'image/gif'"),
    ],
)
async def test_media_a_model_cannot_take_is_refused_before_sending(
    emu: Emulator, client: Any, part: Image | Document, problem: str
) -> None:
    model = GeminiModel(G3, client=client)
    ask = ModelRequest(messages=[Message.user(["Look.", part])])
    with pytest.raises(ConfigurationError, match=rf"messages\[0\]\.parts\[1\]: .*{problem}"):
        await model.request(ask)
    assert not bodies(emu)


async def test_the_gemini_api_takes_no_url_in_a_function_response(gemini_client: Any) -> None:
    def chart(city: str) -> Image:
        """The weather chart of a city."""
        return Image(url="https://example.com/chart.png")

    agent = Agent(GeminiModel(G3, client=gemini_client), tools=[chart])
    with pytest.raises(ConfigurationError, match="takes no image by URL in a function response"):
        await agent.run("Show me the weather chart of Paris.")


# --- structured output -----------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["run", "run_stream"])
async def test_gemini_3_answers_in_json_with_thinking_and_tools(
    emu: Emulator, client: Any, stream: bool
) -> None:
    agent = Agent(GeminiModel(G3, client=client), output_type=Weather, tools=[get_weather])
    result = await run(agent, "What's the weather in Paris?", stream=stream)
    assert isinstance(result.output, Weather)
    for body in bodies(emu):
        config = body["generationConfig"]
        assert config["responseMimeType"] == "application/json"
        assert set(config["responseJsonSchema"]["properties"]) == set(Weather.model_fields)
    replies = [m for m in result.messages if m.role == "assistant"]
    assert all(any(getattr(p, "signature", None) for p in m.parts) for m in replies)
    follow_up = await agent.run("And in Rome?", history=result.messages)  # replay accepted
    assert isinstance(follow_up.output, Weather)


async def test_gemini_2_5_uses_an_output_tool(emu: Emulator, gemini_client: Any) -> None:
    model = GeminiModel("gemini-2.5-flash", client=gemini_client)
    result = await Agent(model, output_type=Weather, tools=[get_weather]).run(
        "What's the weather in Paris?"
    )
    assert isinstance(result.output, Weather)
    for body in bodies(emu):
        assert "responseMimeType" not in body.get("generationConfig", {})
        names = [d["name"] for d in body["tools"][0]["functionDeclarations"]]
        assert "final_result" in names
        assert "toolConfig" not in body  # offered, never forced


async def test_gemini_2_5_takes_json_without_tools_only(gemini_client: Any) -> None:
    """Why its profile says no native output: a JSON response type with function
    declarations is refused by the service."""
    model = GeminiModel("gemini-2.5-flash", client=gemini_client)
    output = OutputSpec("final_result", "", Weather.model_json_schema(), "native")
    response = await model.request(ModelRequest([Message.user("Paris?")], output=output))
    Weather.model_validate_json(response.message.text)
    tools = [Tool(get_weather).definition]
    with pytest.raises(ProviderError, match="Function calling with a response mime type"):
        await model.request(ModelRequest([Message.user("Paris?")], tools=tools, output=output))


# --- the thinking knob -------------------------------------------------------------------------


KNOB: list[tuple[str, Any, dict[str, Any], list[str]]] = [
    (G3, "high", {"thinking_level": "HIGH", "include_thoughts": True}, []),
    (G3, "low", {"thinking_level": "LOW", "include_thoughts": True}, []),
    (G3, "medium", {"thinking_level": "HIGH", "include_thoughts": True}, ["thinking_clamped"]),
    (G3, "max", {"thinking_level": "HIGH", "include_thoughts": True}, ["thinking_clamped"]),
    (G3, True, {"include_thoughts": True}, []),
    (G3, False, {"thinking_level": "LOW"}, ["thinking_not_disabled"]),
    ("gemini-3-flash-preview", False, {"thinking_level": "MINIMAL"}, ["thinking_not_disabled"]),
    (
        "gemini-3-flash-preview",
        "medium",
        {"thinking_level": "MEDIUM", "include_thoughts": True},
        [],
    ),
    (
        "gemini-3.1-pro-preview",
        "medium",
        {"thinking_level": "MEDIUM", "include_thoughts": True},
        [],
    ),
    ("gemini-2.5-flash", "low", {"thinking_budget": 1024, "include_thoughts": True}, []),
    ("gemini-2.5-flash", "max", {"thinking_budget": 24576, "include_thoughts": True}, []),
    ("gemini-2.5-flash", True, {"thinking_budget": -1, "include_thoughts": True}, []),
    ("gemini-2.5-flash", False, {"thinking_budget": 0}, []),
    ("gemini-2.5-pro", "max", {"thinking_budget": 32768, "include_thoughts": True}, []),
    ("gemini-2.5-pro", False, {"thinking_budget": 128}, ["thinking_not_disabled"]),
]


def thinking_config(body: dict[str, Any]) -> dict[str, Any]:
    config = body["generationConfig"]["thinkingConfig"]
    return {k: v for k, v in config.items() if v is not None and v is not False}


@pytest.mark.parametrize(("model_name", "value", "wire", "codes"), KNOB)
async def test_the_thinking_knob_on_the_wire(
    emu: Emulator,
    gemini_client: Any,
    model_name: str,
    value: Any,
    wire: dict[str, Any],
    codes: list[str],
) -> None:
    model = GeminiModel(model_name, client=gemini_client)
    ask = ModelRequest([Message.user("Why is the sky blue?")], settings={"thinking": value})
    response = await model.request(ask)  # the service accepts it
    assert thinking_config(bodies(emu)[-1]) == wire
    assert [w.code for w in response.warnings] == codes
    assert all(w.scope == "gemini" for w in response.warnings)


async def test_a_stream_yields_its_warnings_first(vertex_client: Any) -> None:
    model = GeminiModel(G3, client=vertex_client)
    ask = ModelRequest([Message.user("Why is the sky blue?")], settings={"thinking": "max"})
    events = [event async for event in model.stream(ask)]
    assert isinstance(events[0], WarningEvent)
    assert (events[0].code, events[0].scope) == ("thinking_clamped", "vertex")
    final = events[-1]
    assert isinstance(final, ModelResponse) and final.warnings == (events[0],)


async def test_the_knob_wins_over_the_models_level_but_keeps_its_summaries_choice(
    emu: Emulator, gemini_client: Any
) -> None:
    thinking = GeminiThinking(level="low", include_thoughts=False)
    model = GeminiModel(G3, client=gemini_client, thinking=thinking)
    await model.request(ModelRequest([Message.user("Hi")], settings={"thinking": "high"}))
    assert thinking_config(bodies(emu)[-1]) == {"thinking_level": "HIGH"}
    await model.request(ModelRequest([Message.user("Hi")]))
    assert thinking_config(bodies(emu)[-1]) == {"thinking_level": "LOW"}


async def test_an_agent_collects_the_warnings(gemini_client: Any) -> None:
    agent = Agent(
        GeminiModel(G3, client=gemini_client), model_settings=ModelSettings(thinking="max")
    )
    result = await agent.run("Why is the sky blue?")
    assert [w.code for w in result.warnings] == ["thinking_clamped"]


# --- instructions only ---------------------------------------------------------------------


def generate_topic() -> str:
    """Generate a topic for a joke."""
    return "penguins"


async def test_an_instructions_only_run_opens_with_an_empty_user_turn(
    emu: Emulator, client: Any
) -> None:
    instructions = "Tell three jokes. Generate topics with the generate_topic tool."
    agent = Agent(GeminiModel(G3, client=client), instructions=instructions, tools=[generate_topic])
    result = await agent.run()
    recording = recorded.interactions("test_google_instructions_only_with_tool_calls.yaml")
    opening = recording[0]["request"]["parsed_body"]["contents"][0]
    for body in bodies(emu):
        assert body["contents"][0] == opening  # what the service accepted
    assert result.messages[0].role == "assistant"  # nothing claims the user spoke
    again = await agent.run(None, history=result.messages[:1])  # a history opening with the model
    assert again.output


# --- part ends ------------------------------------------------------------------------------


@pytest.mark.parametrize("tools", [True, False], ids=["calls", "answer"])
async def test_a_stream_ends_each_part_once_as_it_closes(client: Any, tools: bool) -> None:
    model = GeminiModel(G3, client=client)
    ask = ModelRequest(
        [Message.user("What's the weather in Paris and London?")],
        tools=[Tool(get_weather).definition] if tools else [],
    )
    events = [event async for event in model.stream(ask)]
    final = events[-1]
    assert isinstance(final, ModelResponse)
    ends = [e for e in events if isinstance(e, PartEnd)]
    assert [e.index for e in ends] == list(range(len(final.message.parts)))
    assert [e.part for e in ends] == list(final.message.parts)
    seen: set[int] = set()
    for event in events[:-1]:
        if isinstance(event, PartEnd):
            seen.add(event.index)
        elif isinstance(event, ThinkingDelta | TextDelta | ToolCallDelta):
            assert event.index not in seen  # no delta after its part ended
            assert all(i < event.index for i in seen)
    calls = [i for i, e in enumerate(events) if isinstance(e, ToolCallDelta)]
    assert all(isinstance(events[i + 1], PartEnd) for i in calls)  # a call arrives whole
    last = final.message.parts[-1]
    assert isinstance(last, ToolCall) if tools else last.signature is not None  # type: ignore[union-attr]


# --- retries of the client the model builds --------------------------------------------------


async def test_a_client_built_from_the_environment_retries(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "emulator-key")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", emu.url)
    model = GeminiModel(G3)
    emu.inject(Fault.http(503))
    response = await model.request(ModelRequest([Message.user("Hi")]))
    assert response.message.text
    assert len(bodies(emu)) == 2  # the 503, then the SDK's own retry
    await model.client.aio.aclose()
