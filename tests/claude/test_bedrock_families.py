"""The other model families on Bedrock's Converse API, through `BedrockModel` against the
emulator: each family's reasoning kept as thinking, sent back only in the shape it accepts, a
conversation moving between families (and to Claude) without sending one family's reasoning to
another, and what a family refuses said before anything is sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.claude import run
from thinkagent import Agent, ConfigurationError, ModelSettings, TextPart, ThinkingBlock
from thinkagent.emulator import Emulator
from thinkagent.providers.claude import BedrockModel

DEEPSEEK = "us.deepseek.r1-v1:0"
GPT_OSS = "openai.gpt-oss-120b-1:0"
GPT = "openai.gpt-5-6-v1:0"
KIMI = "moonshot.kimi-k2-thinking"
KIMI_K3 = "global.moonshotai.kimi-k3"
CLAUDE = "anthropic.claude-opus-5-5-v1:0"

streamed_or_not = pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def model(client: Any, name: str) -> BedrockModel:
    return BedrockModel(name, client=client)


def bodies(emu: Emulator) -> list[Any]:
    return [r.body for r in emu.requests if r.api == "bedrock"]


@streamed_or_not
async def test_kimis_inline_reasoning_becomes_a_thinking_block(
    emu: Emulator, bedrock_client: Any, streamed: bool
) -> None:
    agent = Agent(model(bedrock_client, KIMI), tools=[get_weather])
    result = await run(agent, "What's the weather in Paris?", streamed=streamed)
    answers = [m for m in result.messages if m.role == "assistant"]
    assert all("<think>" not in m.text and "</think>" not in m.text for m in answers)
    assert all(
        m.thinking and m.thinking[0].text and m.thinking[0].signature is None for m in answers
    )
    assert "sunny in Paris" in result.output
    # its own reasoning goes back inline, in its place
    second = bodies(emu)[1]["messages"][1]["content"]
    assert second[0]["text"].startswith("<think>\n") and second[0]["text"].endswith("</think>")


async def test_kimi_streamed_equals_non_streamed(bedrock_client: Any) -> None:
    agent = Agent(model(bedrock_client, KIMI), tools=[get_weather])
    plain = await run(agent, "What's the weather in Paris?", streamed=False)
    streamed = await run(agent, "What's the weather in Paris?", streamed=True)
    assert streamed.messages == plain.messages


@pytest.mark.parametrize("first", [DEEPSEEK, GPT_OSS, GPT, KIMI])
async def test_a_conversation_moves_to_claude_without_another_familys_reasoning(
    emu: Emulator, bedrock_client: Any, first: str
) -> None:
    tools = [] if first == DEEPSEEK else [get_weather]  # DeepSeek-R1 takes no tools on Converse
    earlier = await Agent(model(bedrock_client, first), tools=tools).run(
        "What's the weather in Paris?"
    )
    assert any(m.thinking for m in earlier.messages)
    emu.clear()
    later = await Agent(model(bedrock_client, CLAUDE), tools=[get_weather]).run(
        "And in Rome?", history=earlier.messages
    )
    assert later.output
    sent = json.dumps(bodies(emu)[0]["messages"][:-1])
    assert "reasoningContent" not in sent and "<think>" not in sent
    scopes = {m.scope for m in earlier.new_messages if m.role == "assistant"}
    assert scopes.isdisjoint({m.scope for m in later.new_messages if m.role == "assistant"})


async def test_claudes_thinking_never_goes_to_another_family(
    emu: Emulator, bedrock_client: Any
) -> None:
    claude = await Agent(model(bedrock_client, CLAUDE), tools=[get_weather]).run(
        "What's the weather in Paris?"
    )
    emu.clear()
    for other in (GPT_OSS, GPT, KIMI):
        result = await Agent(model(bedrock_client, other), tools=[get_weather]).run(
            "And in Rome?", history=claude.messages
        )
        assert result.output
    assert "reasoningContent" not in json.dumps([b["messages"][:3] for b in bodies(emu)])


async def test_deepseek_reasoning_never_goes_back(emu: Emulator, bedrock_client: Any) -> None:
    """DeepSeek refuses reasoning in a request ("User messages cannot contain reasoning
    content"): its own is kept in the history, never sent."""
    deepseek = Agent(model(bedrock_client, DEEPSEEK))
    first = await deepseek.run("Why is the sky blue?")
    assert first.messages[1].thinking[0].text
    second = await deepseek.run("And at sunset?", history=first.messages)
    assert second.output
    assert "reasoningContent" not in json.dumps(bodies(emu)[-1])


async def test_openai_models_get_their_opaque_reasoning_back_byte_exact(
    emu: Emulator, bedrock_client: Any
) -> None:
    result = await Agent(model(bedrock_client, GPT), tools=[get_weather]).run(
        "What's the weather in Paris?"
    )
    (block,) = result.messages[1].thinking
    assert block.redacted and not block.text
    sent = bodies(emu)[1]["messages"][1]["content"][0]
    assert sent == {"reasoningContent": {"redactedContent": block.redacted}}


async def test_kimi_k3s_reasoning_stays_in_its_region(emu: Emulator) -> None:
    east = emu.bedrock_client(region_name="us-east-1")
    west = emu.bedrock_client(region_name="us-west-2")
    earlier = await Agent(model(east, KIMI_K3), tools=[get_weather]).run("Weather in Paris?")
    assert earlier.messages[1].thinking[0].redacted
    emu.clear()
    moved = await Agent(model(west, KIMI_K3), tools=[get_weather]).run(
        "And in Rome?", history=earlier.messages
    )
    assert moved.output
    assert "redactedContent" not in json.dumps(bodies(emu)[0]["messages"][:-1])


async def test_what_a_family_refuses_is_said_before_sending(
    emu: Emulator, bedrock_client: Any
) -> None:
    with pytest.raises(ConfigurationError, match=r"This model doesn't support tool use\."):
        await Agent(model(bedrock_client, DEEPSEEK), tools=[get_weather]).run("Weather in Paris?")
    assert emu.requests == []


async def test_the_thinking_knob_sets_a_familys_reasoning_effort(
    emu: Emulator, bedrock_client: Any
) -> None:
    agent = Agent(model(bedrock_client, GPT_OSS), model_settings=ModelSettings(thinking="max"))
    result = await agent.run("Why is the sky blue?")
    assert bodies(emu)[0]["additionalModelRequestFields"] == {"reasoning_effort": "high"}
    assert [w.code for w in result.warnings] == ["thinking_clamped"]
    kimi = await Agent(
        model(bedrock_client, KIMI), model_settings=ModelSettings(thinking=False)
    ).run("Hi")
    assert [w.code for w in kimi.warnings] == ["thinking_not_disabled"]


def test_a_think_tag_split_keeps_the_text() -> None:
    from thinkagent.providers.claude.bedrock import _split  # pyright: ignore[reportPrivateUsage]

    assert _split("<think>\nWhy?\n</think>\n\nBecause.") == [
        ThinkingBlock.plain("Why?"),
        TextPart(text="Because."),
    ]


NOVA = "us.amazon.nova-2-lite-v1:0"
QWEN = "qwen.qwen3-32b-v1:0"


@streamed_or_not
async def test_nova_2_reasons_when_asked_and_its_redacted_text_stays_a_redacted_block(
    emu: Emulator, bedrock_client: Any, streamed: bool
) -> None:
    """Nova 2 reasons only with `reasoningConfig`; its reasoning comes back as the text
    `[REDACTED]`, kept as a redacted block with no payload, and never goes back as text."""
    agent = Agent(
        model(bedrock_client, NOVA), tools=[get_weather], model_settings={"thinking": "low"}
    )
    result = await run(agent, "What's the weather in Paris?", streamed=streamed)
    sent = bodies(emu)
    assert sent[0]["additionalModelRequestFields"] == {
        "reasoningConfig": {"type": "enabled", "maxReasoningEffort": "low"}
    }
    replies = [m for m in result.messages if m.role == "assistant"]
    assert all(m.scope == "bedrock-nova@us-east-1" for m in replies)
    blocks = [b for m in replies for b in m.thinking]
    assert blocks and all(b == ThinkingBlock.redacted_payload("") for b in blocks)
    assert "[REDACTED]" not in json.dumps(sent[-1]["messages"])
    assert "reasoningContent" not in json.dumps(sent[-1]["messages"])
    assert "sunny in Paris" in result.output


async def test_nova_2_does_not_reason_unless_asked(emu: Emulator, bedrock_client: Any) -> None:
    result = await Agent(model(bedrock_client, NOVA)).run("Why is the sky blue?")
    assert "additionalModelRequestFields" not in bodies(emu)[0]
    assert result.messages[1].thinking == []
    on = await Agent(model(bedrock_client, NOVA), model_settings={"thinking": True}).run("Hi")
    assert bodies(emu)[-1]["additionalModelRequestFields"] == {
        "reasoningConfig": {"type": "enabled"}
    }
    assert on.messages[1].thinking and on.warnings == []
    off = await Agent(model(bedrock_client, NOVA), model_settings={"thinking": False}).run("Hi")
    assert off.warnings == [] and "additionalModelRequestFields" not in bodies(emu)[-1]


async def test_each_family_sets_its_level_in_its_own_field(
    emu: Emulator, bedrock_client: Any
) -> None:
    """gpt-oss: flat `reasoning_effort`; OpenAI's GPT-5 models: nested `reasoning.effort`;
    Qwen: `reasoning_config` low or high (medium is clamped, with a warning)."""
    settings = ModelSettings(thinking="medium")
    await Agent(model(bedrock_client, GPT_OSS), model_settings=settings).run("Hi")
    await Agent(model(bedrock_client, GPT), model_settings=settings).run("Hi")
    qwen = await Agent(model(bedrock_client, QWEN), model_settings=settings).run("Hi")
    fields = [b["additionalModelRequestFields"] for b in bodies(emu)]
    assert fields == [
        {"reasoning_effort": "medium"},
        {"reasoning": {"effort": "medium"}},
        {"reasoning_config": "high"},
    ]
    assert [w.code for w in qwen.warnings] == ["thinking_clamped"]
    assert qwen.messages[1].thinking[0].text


async def test_the_lowest_level_is_sent_where_reasoning_cannot_be_turned_off(
    emu: Emulator, bedrock_client: Any
) -> None:
    """Converse refuses the effort `none`: thinking=False on GPT-5 sends `low`, with a
    warning."""
    result = await Agent(model(bedrock_client, GPT), model_settings={"thinking": False}).run("Hi")
    assert bodies(emu)[0]["additionalModelRequestFields"] == {"reasoning": {"effort": "low"}}
    assert [w.code for w in result.warnings] == ["thinking_not_disabled"]
