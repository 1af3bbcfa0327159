"""The agent's features on both Claude wires against the emulator: images and documents (in
prompts and tool results) in each API's native shape with its limits, native structured output
with thinking and tools, runs from instructions alone, the end of each streamed part, and
Claude's compaction blocks kept whole and sent back to their own scope only."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from pydantic import BaseModel

from tests.support.claude import ANTHROPIC, BEDROCK, Wire, run, without_ids
from thinkagent import (
    Agent,
    ConfigurationError,
    Document,
    Image,
    Message,
    ModelResponse,
    OpaqueBlock,
    PartEnd,
    TextPart,
    dump_messages,
    load_messages,
)
from thinkagent.emulator import Emulator
from thinkagent.providers.claude import AnthropicModel, ClaudeThinking

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 3
PDF = b"%PDF-1.4\n" + b"1 0 obj << >> endobj\n" * 20 + b"%%EOF\n"

streamed_or_not = pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])


class Weather(BaseModel):
    city: str
    temperature_c: float


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def chart(city: str) -> Image:
    """A weather chart for a city."""
    return Image(data=PNG, media_type="image/png")


def bodies(emu: Emulator, wire: Wire) -> str:
    return json.dumps([r.body for r in wire.model_requests(emu)])


async def test_images_and_documents_go_in_the_native_shape(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    agent = Agent(wire.model(wire_client))
    prompt = [
        "What is in these?",
        Image(data=PNG, media_type="image/png"),
        Document(data=PDF, media_type="application/pdf", name="report.pdf"),
    ]
    result = await agent.run(prompt)
    assert str(len(PNG)) in result.output and str(len(PDF)) in result.output
    content = wire.model_requests(emu)[0].body["messages"][0]["content"]
    data = base64.b64encode(PNG).decode()
    if wire is ANTHROPIC:
        assert content[1] == {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": data},
        }
        assert content[2]["title"] == "report.pdf"
    else:
        assert content[1] == {"image": {"format": "png", "source": {"bytes": data}}}
        assert content[2]["document"]["name"] == "report-pdf"  # the characters Converse takes
    assert load_messages(dump_messages(result.messages)) == result.messages


async def test_a_tools_image_goes_back_in_its_result(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    result = await Agent(wire.model(wire_client), tools=[chart]).run("Show me the chart for Paris")
    assert str(len(PNG)) in result.output
    results = wire.model_requests(emu)[1].body["messages"][2]["content"][0]
    data = base64.b64encode(PNG).decode()
    if wire is ANTHROPIC:
        assert results["content"][-1]["source"]["data"] == data
    else:
        assert results["toolResult"]["content"][-1] == {
            "image": {"format": "png", "source": {"bytes": data}}
        }


async def test_media_a_wire_refuses_is_refused_before_sending(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    big = Image(data=b"\x89PNG" + b"\x00" * 5_300_000, media_type="image/png")
    with pytest.raises(ConfigurationError, match="image"):
        await Agent(wire.model(wire_client)).run(["Look", big])
    url = Image(url="https://example.com/a.png")
    if wire is BEDROCK:
        with pytest.raises(ConfigurationError, match="by URL"):
            await Agent(wire.model(wire_client)).run(["Look", url])
    else:
        await Agent(wire.model(wire_client)).run(["Look", url])
        source = wire.model_requests(emu)[-1].body["messages"][0]["content"][1]["source"]
        assert source == {"type": "url", "url": "https://example.com/a.png"}
    with pytest.raises(ConfigurationError, match="image/bmp"):
        await Agent(wire.model(wire_client)).run(
            ["Look", Image(data=b"BM", media_type="image/bmp")]
        )
    assert len(wire.model_requests(emu)) == (1 if wire is ANTHROPIC else 0)


@streamed_or_not
async def test_native_structured_output_with_thinking_and_tools(
    wire: Wire, emu: Emulator, wire_client: Any, streamed: bool
) -> None:
    model = wire.model(wire_client, thinking=ClaudeThinking.adaptive())
    assert model.profile.native_output
    agent = Agent(model, output_type=Weather, tools=[get_weather])
    result = await run(agent, "What's the weather in Paris?", streamed=streamed)
    assert isinstance(result.output, Weather) and result.output.city == "Paris"
    assert all(m.thinking for m in result.messages if m.role == "assistant")
    last = wire.model_requests(emu)[-1].body
    if wire is ANTHROPIC:
        assert last["output_config"]["format"]["type"] == "json_schema"
    else:
        assert json.loads(last["outputConfig"]["textFormat"]["structure"]["jsonSchema"]["schema"])
    tools = [
        json.dumps(r.body.get("tools" if wire is ANTHROPIC else "toolConfig"))
        for r in wire.model_requests(emu)
    ]
    assert not any("final_result" in t for t in tools)  # no output tool, never a forced one


def test_older_models_use_the_output_tool(wire: Wire) -> None:
    model = wire.model(
        name="claude-sonnet-4" if wire is ANTHROPIC else "anthropic.claude-sonnet-4-v1:0",
        thinking=None,
    )
    assert not model.profile.native_output


@streamed_or_not
async def test_a_run_from_instructions_alone(
    wire: Wire, emu: Emulator, wire_client: Any, streamed: bool
) -> None:
    agent = Agent(
        wire.model(wire_client), instructions="Report the weather in Paris.", tools=[get_weather]
    )
    result = await run(agent, None, streamed=streamed)
    assert "sunny in Paris" in result.output
    assert result.messages[0].role == "assistant"  # nothing the user did not say is kept
    first = wire.model_requests(emu)[0].body["messages"]
    assert wire.texts(first[0]["content"]) == ["Please go ahead."]


async def test_each_streamed_part_ends_with_its_part(wire: Wire, wire_client: Any) -> None:
    events: list[Any] = []
    async with Agent(wire.model(wire_client), tools=[get_weather]).run_stream(
        "What's the weather in Paris?"
    ) as stream:
        events = [e async for e in stream]
    response = next(e for e in events if isinstance(e, ModelResponse))
    ends = [e for e in events[: events.index(response)] if isinstance(e, PartEnd)]
    assert [e.index for e in ends] == list(range(len(response.message.parts)))
    assert [e.part for e in ends] == list(response.message.parts)


COMPACTION = {
    "extra_body": {
        "context_management": {
            "edits": [
                {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50000}}
            ]
        }
    },
    "extra_headers": {"anthropic-beta": "compact-2026-01-12"},
}


BACKGROUND = [
    Message.user("Here is some background you may need later. " * 5000),  # over 50,000 tokens
    Message(role="assistant", parts=(TextPart(text="Noted."),), scope="anthropic"),
]


@streamed_or_not
async def test_a_compaction_block_is_kept_whole_and_sent_back(
    emu: Emulator, anthropic_client: Any, streamed: bool
) -> None:
    model = AnthropicModel(
        "claude-opus-5-5", client=anthropic_client, scope="anthropic", **COMPACTION
    )
    agent = Agent(model, tools=[get_weather])
    result = await run(agent, "What's the weather in Paris?", history=BACKGROUND, streamed=streamed)
    first = result.messages[3]
    block = first.parts[0]
    assert isinstance(block, OpaqueBlock) and block.type == "compaction"
    assert block.data == {
        "type": "compaction",
        "content": block.data["content"],
        "encrypted_content": block.data["encrypted_content"],
    }
    assert isinstance(block.data["encrypted_content"], str)
    assert load_messages(dump_messages(result.messages)) == result.messages
    # sent back byte for byte, in its place; the thinking after it still verifies
    replayed = anthropic_client_requests(emu)[1]["messages"][3]["content"][0]
    assert replayed == block.data
    assert "sunny in Paris" in result.output
    # never to another scope
    elsewhere = AnthropicModel("claude-opus-5-5", client=anthropic_client, scope="elsewhere")
    emu.clear()
    await Agent(elsewhere, tools=[get_weather]).run("And in Rome?", history=result.messages)
    assert "compaction" not in json.dumps(anthropic_client_requests(emu)[0]["messages"])


async def test_compaction_streamed_equals_non_streamed(anthropic_client: Any) -> None:
    model = AnthropicModel(
        "claude-opus-5-5", client=anthropic_client, scope="anthropic", **COMPACTION
    )
    agent = Agent(model, tools=[get_weather])
    prompt = "What's the weather in Paris?"
    plain = await run(agent, prompt, history=BACKGROUND, streamed=False)
    streamed = await run(agent, prompt, history=BACKGROUND, streamed=True)
    assert without_ids(streamed.messages) == without_ids(plain.messages)


def anthropic_client_requests(emu: Emulator) -> list[Any]:
    return [r.body for r in emu.requests if r.api == "anthropic"]


def test_opaque_blocks_only_on_assistant_messages() -> None:
    from thinkagent import HistoryError, validate_history

    block = OpaqueBlock.of({"type": "compaction", "content": "x"})
    with pytest.raises(HistoryError, match="only assistant messages carry them"):
        validate_history([Message(role="user", parts=(block,))])


def test_a_cut_stream_keeps_only_whole_provider_blocks() -> None:
    from thinkagent import StreamBuilder

    builder = StreamBuilder(json_arguments=True)
    builder.opaque(0, {"type": "compaction", "content": "The user"})
    assert builder.partial(scope="anthropic", model="m").parts == ()  # not whole: left out
    builder.opaque(0, {"type": "compaction", "content": "The user asked."})
    end = builder.end(0)
    assert end is not None and end.part == OpaqueBlock.of(
        {"type": "compaction", "content": "The user asked."}
    )
    builder.text(1, "Hi")
    assert builder.partial(scope="anthropic", model="m").parts[0] == end.part
