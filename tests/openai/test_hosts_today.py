"""The compatible hosts as of December, through `OpenAIChatModel` and the official SDK against the
emulator: reasoning read from a field but written back into the content (GLM on Cerebras), one
host serving families with different rules, Kimi's placeholder on its own tool turns, Z.AI's
thinking object and GLM-5.3, Fireworks' `reasoning_history`, Together's two field names, the
xAI, Mistral and Groq effort tables, and Gemini's OpenAI-compatible endpoint with its thought
signatures on tool calls."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from tests.support.openai import bodies, get_weather, without_ids
from thinkagent import (
    Agent,
    ConfigurationError,
    Message,
    ModelSettings,
    ProviderError,
    RunResult,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    dump_messages,
    load_messages,
)
from thinkagent.emulator import Emulator
from thinkagent.providers.openai import ChatDialect, OpenAIChatModel, OpenAIThinking

API = "openai"
PROMPTS = ["What's the weather in Paris?", "And in Rome?", "And in Oslo?", "And in Bern?"]


async def loop(agent: Agent, prompts: list[str] = PROMPTS) -> list[Message]:
    """A thinking + tool loop, every other turn streamed, persisted between turns."""
    saved = "[]"
    for i, prompt in enumerate(prompts):
        history = load_messages(saved)
        result: RunResult
        if i % 2:
            async with agent.run_stream(prompt, history=history) as stream:
                async for _ in stream:
                    pass
            result = stream.result
        else:
            result = await agent.run(prompt, history=history)
        saved = dump_messages(result.messages)
    return load_messages(saved)


def knob(emu: Emulator, name: str) -> openai.AsyncOpenAI:
    return emu.openai_client(base_url=f"{emu.url}/{name}/v1", max_retries=0)


def assistants(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


# --- read from a field, written back into the content ---------------------------------------


async def test_glm_on_cerebras_gets_its_reasoning_back_inside_the_content(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    """GLM on Cerebras returns reasoning in the `reasoning` field but reads earlier reasoning
    only from the content, as <think>...</think>: every earlier turn's goes back there."""
    model = OpenAIChatModel("zai-glm-4.7", client=openai_client, dialect="cerebras")
    assert model.dialect.replay_as == "think_tags" and model.scope == "cerebras"
    history = await loop(Agent(model, tools=[get_weather]))
    replies = [m for m in history if m.role == "assistant"]
    assert all(m.thinking and "<think>" not in m.text for m in replies)
    last = bodies(emu, API)[-1]
    sent = assistants(last)
    assert len(sent) == 7
    for wire, message in zip(sent, replies, strict=False):
        assert wire["content"].startswith(f"<think>\n{message.thinking[0].text}\n</think>")
        assert "reasoning" not in wire and "reasoning_content" not in wire


async def test_one_host_serves_families_with_their_own_rules(emu: Emulator) -> None:
    """On Cerebras gpt-oss takes its `reasoning` field back within its tool loop, GLM in the
    content, and other models get nothing back."""
    client = knob(emu, "cerebras")
    oss = OpenAIChatModel("gpt-oss-120b", client=client, dialect="cerebras")
    history = await loop(Agent(oss, tools=[get_weather]), PROMPTS[:2])
    last = assistants(bodies(emu, API)[-1])
    assert [("reasoning" in m) for m in last] == [False, False, True]
    assert not any("<think>" in (m["content"] or "") for m in last)
    assert history[-1].thinking
    emu.clear()
    qwen = OpenAIChatModel("qwen-3-32b", client=client, dialect="cerebras")
    await loop(Agent(qwen, tools=[get_weather]), PROMPTS[:2])
    assert not any("reasoning" in m for m in assistants(bodies(emu, API)[-1]))


def test_a_dialect_says_where_reasoning_goes_back_and_a_variant_keeps_its_host() -> None:
    glm = ChatDialect("my-host", reasoning="auto", replay="always", replay_as="think_tags")
    assert glm.replay_as == "think_tags"
    with pytest.raises(ConfigurationError, match="replay_as"):
        ChatDialect("h", reasoning="reasoning", replay_as="inline")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="names no shape"):
        ChatDialect("h", reasoning="auto", replay="always")
    base = ChatDialect("h", reasoning="reasoning")
    host = ChatDialect(
        "h", reasoning="reasoning", variants=(base.variant("*glm*", replay="always"),)
    )
    assert host.for_model("GLM-4.7").replay == "always"
    assert host.for_model("llama") is host
    with pytest.raises(ConfigurationError, match="keeps its host's name"):
        ChatDialect("h", variants=(("*", ChatDialect("other")),))


# --- Kimi ------------------------------------------------------------------------------------


async def test_a_kimi_tool_turn_without_reasoning_goes_with_an_empty_field_and_a_warning(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    """Kimi's check tests only that `reasoning_content` is there: its own tool turn that has
    none (thinking was off, or a processor removed it) goes with it empty, said in a warning."""
    kimi = OpenAIChatModel("kimi-k2-thinking", client=openai_client, dialect="kimi")
    first = await Agent(kimi, tools=[get_weather]).run("What's the weather in Paris?")
    bare = [
        m.model_copy(
            update={"parts": tuple(p for p in m.parts if not isinstance(p, ThinkingBlock))}
        )
        for m in first.messages
    ]
    emu.clear()
    result = await Agent(kimi, tools=[get_weather]).run("And in Rome?", history=bare)
    assert "sunny in Rome" in result.output
    assert "reasoning_placeholder" in [w.code for w in result.warnings]
    sent = assistants(bodies(emu, API)[0])
    assert sent[0]["reasoning_content"] == "" and sent[0]["tool_calls"]
    assert "reasoning_content" not in sent[1]  # no tool call: nothing to fill in
    # without it Kimi refuses the turn
    omit = ChatDialect("moonshot", reasoning="reasoning_content", replay="always", switch="kimi")
    strict = OpenAIChatModel("kimi-k2-thinking", client=openai_client, dialect=omit)
    with pytest.raises(ProviderError, match="reasoning_content is missing"):
        await Agent(strict, tools=[get_weather]).run("And in Rome?", history=bare)


# --- Z.AI, Together, Fireworks -----------------------------------------------------------------


async def test_zai_keeps_clear_thinking_inside_the_thinking_object(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    model = OpenAIChatModel(
        "glm-4.6", client=openai_client, dialect="zai", thinking=OpenAIThinking(preserve=True)
    )
    await Agent(model).run("Hi")
    body = bodies(emu, API)[0]
    assert body["thinking"] == {"type": "enabled", "clear_thinking": False}
    assert "clear_thinking" not in {k for k in body if k != "thinking"}


async def test_glm_5_3_always_thinks_and_takes_its_efforts(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    model = OpenAIChatModel("glm-5.3", client=openai_client, dialect="zai")
    off = await Agent(model, model_settings=ModelSettings(thinking=False)).run("Hi")
    assert [w.code for w in off.warnings] == ["thinking_not_disabled"]
    assert "thinking" not in bodies(emu, API)[0]
    assert off.messages[1].thinking
    medium = await Agent(model, model_settings=ModelSettings(thinking="medium")).run("Hi")
    assert bodies(emu, API)[-1]["reasoning_effort"] == "high"
    assert [w.code for w in medium.warnings] == ["thinking_clamped"]
    top = await Agent(model, model_settings=ModelSettings(thinking="max")).run("Hi")
    assert bodies(emu, API)[-1]["reasoning_effort"] == "max" and top.warnings == []
    # the service refuses to stop GLM-5.3 thinking
    with pytest.raises(openai.BadRequestError):
        await openai_client.chat.completions.create(
            model="glm-5.3",
            messages=[{"role": "user", "content": "Hi"}],
            extra_body={"thinking": {"type": "disabled"}},
        )
    # older GLM models take no effort
    with pytest.raises(ConfigurationError, match=r"no switch for OpenAIThinking\.effort"):
        OpenAIChatModel(
            "glm-4.6", client=openai_client, dialect="zai", thinking=OpenAIThinking(effort="high")
        )


async def test_together_reads_both_reasoning_fields(emu: Emulator) -> None:
    client = knob(emu, "together")
    glm = OpenAIChatModel("zai-org/GLM-5.3", client=client, dialect="together")
    assert glm.dialect.reasoning == "reasoning_content"
    for streamed in (False, True):
        agent = Agent(glm, model_settings=ModelSettings(thinking=False))
        if streamed:
            async with agent.run_stream("Why is the sky blue?") as stream:
                async for _ in stream:
                    pass
            result = stream.result
        else:
            result = await agent.run("Why is the sky blue?")
        assert result.messages[1].thinking[0].text
        assert [w.code for w in result.warnings] == ["thinking_not_disabled"]
    deepseek = OpenAIChatModel("deepseek-ai/DeepSeek-V4", client=client, dialect="together")
    assert deepseek.dialect.reasoning == "reasoning"
    assert (await Agent(deepseek).run("Why is the sky blue?")).messages[1].thinking


async def test_fireworks_sets_reasoning_history_and_gets_its_reasoning_back(
    emu: Emulator,
) -> None:
    client = knob(emu, "fireworks")
    model = OpenAIChatModel(
        "accounts/fireworks/models/glm-5",
        client=client,
        dialect="fireworks",
        thinking=OpenAIThinking(preserve=True, effort="high"),
    )
    history = await loop(Agent(model, tools=[get_weather]), PROMPTS[:2])
    last = bodies(emu, API)[-1]
    assert last["reasoning_history"] == "preserved" and last["reasoning_effort"] == "high"
    sent = assistants(last)
    replies = [m for m in history if m.role == "assistant"][:-1]
    assert [m["reasoning_content"] for m in sent] == [m.thinking[0].text for m in replies]
    interleaved = OpenAIChatModel(
        "m", client=client, dialect="fireworks", thinking=OpenAIThinking(preserve=False)
    )
    await Agent(interleaved).run("Hi")
    assert bodies(emu, API)[-1]["reasoning_history"] == "interleaved"


# --- effort tables -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "setting", "sent", "warnings"),
    [
        ("grok-4.3", False, "none", []),
        ("grok-4.5", False, None, ["thinking_not_disabled"]),
        ("grok-4.5", "max", "high", ["thinking_clamped"]),
        ("grok-3-mini", "medium", "high", ["thinking_clamped"]),
        ("grok-4", "high", None, ["thinking_clamped"]),
    ],
)
async def test_xai_efforts_per_model(
    emu: Emulator,
    openai_client: openai.AsyncOpenAI,
    model: str,
    setting: Any,
    sent: str | None,
    warnings: list[str],
) -> None:
    chat = OpenAIChatModel(model, client=openai_client, dialect="xai")
    result = await Agent(chat, model_settings=ModelSettings(thinking=setting)).run("Hi")
    assert bodies(emu, API)[0].get("reasoning_effort") == sent
    assert [w.code for w in result.warnings] == warnings


async def test_grok_4_refuses_an_effort(openai_client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.chat.completions.create(
            model="grok-4", messages=[{"role": "user", "content": "Hi"}], reasoning_effort="low"
        )
    assert "does not support parameter reasoningEffort" in str(exc.value.body)


async def test_mistral_takes_high_or_none(emu: Emulator, openai_client: openai.AsyncOpenAI) -> None:
    chat = OpenAIChatModel("mistral-medium-3.5", client=openai_client, dialect="mistral")
    low = await Agent(chat, model_settings=ModelSettings(thinking="low")).run("Hi")
    off = await Agent(chat, model_settings=ModelSettings(thinking=False)).run("Hi")
    assert [b.get("reasoning_effort") for b in bodies(emu, API)] == ["high", "none"]
    assert [w.code for w in low.warnings] == ["thinking_clamped"] and off.warnings == []
    assert low.messages[1].thinking and not off.messages[1].thinking


async def test_groq_qwen_takes_none_or_default(emu: Emulator) -> None:
    client = knob(emu, "groq")
    qwen = OpenAIChatModel("qwen/qwen3-32b", client=client, dialect="groq")
    on = await Agent(qwen, model_settings=ModelSettings(thinking=True)).run("Hi")
    off = await Agent(qwen, model_settings=ModelSettings(thinking=False)).run("Hi")
    high = await Agent(qwen, model_settings=ModelSettings(thinking="high")).run("Hi")
    assert [b["reasoning_effort"] for b in bodies(emu, API)] == ["default", "none", "default"]
    assert on.messages[1].thinking and not off.messages[1].thinking
    assert [w.code for w in high.warnings] == ["thinking_clamped"]
    with pytest.raises(openai.BadRequestError) as exc:
        await client.chat.completions.create(
            model="qwen/qwen3-32b",
            messages=[{"role": "user", "content": "Hi"}],
            reasoning_effort="high",
        )
    assert "`reasoning_effort` must be one of `none` or `default`" in str(exc.value.body)
    oss = OpenAIChatModel("openai/gpt-oss-120b", client=client, dialect="groq")
    await Agent(oss, model_settings=ModelSettings(thinking="high")).run("Hi")
    assert bodies(emu, API)[-1]["reasoning_effort"] == "high"


# --- Gemini's OpenAI-compatible endpoint --------------------------------------------------------


def gemini(emu: Emulator, **kw: Any) -> OpenAIChatModel:
    client = emu.openai_client(base_url=emu.url + "/v1beta/openai", max_retries=0)
    return OpenAIChatModel("gemini-3-pro-preview", client=client, dialect="gemini", **kw)


async def test_gemini_signatures_ride_on_the_tool_calls_and_go_back(emu: Emulator) -> None:
    model = gemini(emu)
    assert model.scope == "gemini-openai"
    history = await loop(Agent(model, tools=[get_weather]))
    calls = [c for m in history for c in m.tool_calls]
    assert len(calls) == 4 and all(c.signature for c in calls)
    for body in bodies(emu, API):
        for message in assistants(body):
            for call in message.get("tool_calls") or ():
                sent = call["extra_content"]["google"]["thought_signature"]
                assert sent == next(c.signature for c in calls if c.id == call["id"])
    # a signature that was changed is refused with Gemini's text
    data = json.loads(dump_messages(history[:3]))
    call = data[1]["parts"][-1]
    call["signature"] = call["signature"][:-4] + (
        "AAAA" if call["signature"][-4:] != "AAAA" else "BBBB"
    )
    with pytest.raises(ProviderError, match=r"Corrupted thought signature\."):
        await Agent(model, tools=[get_weather]).run(None, history=load_messages(json.dumps(data)))


async def test_gemini_thoughts_come_as_thinking_when_asked(emu: Emulator) -> None:
    asked = {"extra_body": {"google": {"thinking_config": {"include_thoughts": True}}}}
    model = gemini(emu, extra_body=asked)
    agent = Agent(model, tools=[get_weather])
    plain = await agent.run("What's the weather in Paris?")
    async with agent.run_stream("What's the weather in Paris?") as stream:
        async for _ in stream:
            pass
    assert without_ids(stream.result.messages) == without_ids(plain.messages)
    reply = plain.messages[1]
    assert reply.thinking and "<thought>" not in reply.text
    assert all("<thought>" not in (m["content"] or "") for m in assistants(bodies(emu, API)[1]))


async def test_another_providers_tool_turn_gets_the_documented_dummy_signature(
    emu: Emulator,
) -> None:
    foreign = [
        Message.user("What's the weather in Paris?"),
        Message(
            role="assistant",
            parts=(ToolCall(id="call_1", name="get_weather", arguments='{"city": "Paris"}'),),
            scope="openai",
        ),
        Message.user_results(
            [ToolResult(call_id="call_1", name="get_weather", content="sunny in Paris, 21 C")]
        ),
    ]
    result = await Agent(gemini(emu), tools=[get_weather]).run(None, history=foreign)
    assert "sunny in Paris" in result.output
    (call,) = assistants(bodies(emu, API)[0])[0]["tool_calls"]
    assert call["extra_content"] == {
        "google": {"thought_signature": "skip_thought_signature_validator"}
    }
    # sent with no signature at all, the current turn's call is refused
    with pytest.raises(openai.BadRequestError) as exc:
        await gemini(emu).client.chat.completions.create(
            model="gemini-3-pro-preview",
            messages=[
                {"role": "user", "content": "What's the weather in Paris?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
            ],
        )
    assert "Function call is missing a thought_signature" in str(exc.value.body)
