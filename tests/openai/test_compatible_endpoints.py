"""The reasoning endpoints people use behind OpenAI-shaped APIs, end to end through the official
SDK against the emulator: for each, a 4-turn thinking + tool loop (turns 2 and 4 streamed) is
accepted on every request with its reasoning captured on every tool turn, and the same history
with the reasoning removed gets that endpoint's own refusal where it makes one; histories from
another provider continue there; OpenRouter's proofs survive persistence byte for byte."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import openai
import pytest

from thinkagent import Agent, Message, dump_messages, load_messages
from thinkagent.emulator import Emulator
from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking
from thinkagent.providers.openai import (
    ChatDialect,
    OpenAIChatModel,
    OpenAIResponsesModel,
    OpenAIThinking,
)

from ..support.openai import get_weather

PROMPTS = [
    "What's the weather in Paris?",
    "And the weather in Rome?",
    "And the weather in Oslo?",
    "And the weather in Bern?",
]


@dataclass(frozen=True)
class Endpoint:
    id: str
    wire: str  # "chat" or "responses"
    model: str
    dialect: str | None = None
    route: str | None = None  # the emulator's dialect knob
    refusal: str | None = None  # the endpoint's own error for a history without reasoning


ENDPOINTS = [
    Endpoint(
        "kimi",
        "chat",
        "kimi-k2-thinking",
        "moonshot",
        refusal="thinking is enabled but reasoning_content is missing in assistant tool call "
        "message at index",
    ),
    Endpoint("zai", "chat", "glm-4.6", "zai"),
    Endpoint(
        "openrouter-gemini",
        "chat",
        "google/gemini-3-pro-preview",
        "openrouter",
        refusal="Function call is missing a thought_signature in functionCall parts.",
    ),
    Endpoint(
        "openrouter-claude",
        "chat",
        "anthropic/claude-sonnet-4.5",
        "openrouter",
        refusal="Expected `thinking` or `redacted_thinking`, but found `tool_use`.",
    ),
    Endpoint(
        "deepseek-chat",
        "chat",
        "deepseek-reasoner",
        "deepseek",
        refusal="Missing `reasoning_content` field in the assistant message at message index",
    ),
    Endpoint(
        "deepseek-responses",
        "responses",
        "deepseek-v4-pro",
        refusal="The `reasoning_text` in the thinking mode must be passed back to the API.",
    ),
    Endpoint("vllm", "chat", "Qwen/Qwen3-8B", "vllm", route="vllm"),
    Endpoint("magistral", "chat", "magistral-medium-latest", "mistral"),
]


def client_for(emu: Emulator, endpoint: Endpoint) -> openai.AsyncOpenAI:
    base_url = f"{emu.url}/{endpoint.route}/v1" if endpoint.route else None
    return emu.openai_client(max_retries=0, **({"base_url": base_url} if base_url else {}))


def model_for(endpoint: Endpoint, client: openai.AsyncOpenAI) -> Any:
    if endpoint.wire == "responses":
        return OpenAIResponsesModel(endpoint.model, client=client)
    return OpenAIChatModel(endpoint.model, client=client, dialect=endpoint.dialect)


def strip_reasoning(wire: str, body: dict[str, Any]) -> dict[str, Any]:
    """A request body without any reasoning, in whichever shape it went."""
    body = copy.deepcopy(body)
    if wire == "responses":
        body["input"] = [i for i in body["input"] if i.get("type") != "reasoning"]
        return body
    for message in body["messages"]:
        if message["role"] != "assistant":
            continue
        for key in ("reasoning_content", "reasoning", "reasoning_details"):
            message.pop(key, None)
        if isinstance(message.get("content"), list):
            message["content"] = [c for c in message["content"] if c.get("type") != "thinking"]
    return body


async def send(client: openai.AsyncOpenAI, wire: str, body: dict[str, Any]) -> None:
    body = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
    model = body.pop("model")
    if wire == "responses":
        await client.responses.create(model=model, input=body.pop("input"), extra_body=body)
    else:
        await client.chat.completions.create(
            model=model, messages=body.pop("messages"), extra_body=body
        )


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.id for e in ENDPOINTS])
async def test_a_four_turn_thinking_tool_loop_and_its_refusal_without_reasoning(
    emu: Emulator, endpoint: Endpoint
) -> None:
    client = client_for(emu, endpoint)
    agent = Agent(model_for(endpoint, client), tools=[get_weather])
    history: list[Message] = []
    for turn, prompt in enumerate(PROMPTS):
        if turn % 2 == 0:
            history = (await agent.run(prompt, history=history)).messages
        else:
            async with agent.run_stream(prompt, history=history) as stream:
                async for _ in stream:
                    pass
            history = stream.result.messages
    calls = [m for m in history if m.role == "assistant" and m.tool_calls]
    assert len(calls) == 4 and all(m.thinking for m in calls)
    assert len({m.scope for m in history if m.role == "assistant"}) == 1
    last = [r.body for r in emu.requests if isinstance(r.body, dict)][-1]
    await send(client, endpoint.wire, last)  # accepted again as it went
    if endpoint.refusal is None:  # no refusal documented: the endpoint takes it
        await send(client, endpoint.wire, strip_reasoning(endpoint.wire, last))
    else:
        with pytest.raises(openai.BadRequestError) as exc:
            await send(client, endpoint.wire, strip_reasoning(endpoint.wire, last))
        assert endpoint.refusal in str(exc.value.body)
    await client.close()


async def test_a_kimi_tool_loop_started_on_claude_continues_on_kimi(
    emu: Emulator, anthropic_client: Any, openai_client: openai.AsyncOpenAI
) -> None:
    """Claude's turn carries no reasoning Kimi can read: the dialect sends the documented empty
    placeholder on it (never Claude's signed text), and Kimi answers."""
    claude = AnthropicModel(
        "claude-sonnet-4-5", client=anthropic_client, thinking=ClaudeThinking.budget(2048)
    )
    first = await Agent(claude, tools=[get_weather]).run("What's the weather in Paris?")
    head = list(first.messages[:3])  # the prompt, Claude's signed call, its result
    assert head[1].thinking and head[1].thinking[0].signature
    emu.clear()
    kimi = OpenAIChatModel("kimi-k2-thinking", client=openai_client, dialect="kimi")
    result = await Agent(kimi, tools=[get_weather]).run(None, history=head)
    assert "sunny in Paris" in result.output
    (body,) = [r.body for r in emu.requests]
    sent = body["messages"][1]
    assert sent["reasoning_content"] == "" and "signature" not in json.dumps(body)


async def test_without_the_placeholder_kimi_refuses_the_foreign_turn(
    emu: Emulator, anthropic_client: Any, openai_client: openai.AsyncOpenAI
) -> None:
    claude = AnthropicModel(
        "claude-sonnet-4-5", client=anthropic_client, thinking=ClaudeThinking.budget(2048)
    )
    first = await Agent(claude, tools=[get_weather]).run("What's the weather in Paris?")
    omit = ChatDialect("moonshot", reasoning="reasoning_content", replay="always", switch="kimi")
    kimi = OpenAIChatModel("kimi-k2-thinking", client=openai_client, dialect=omit)
    with pytest.raises(Exception, match="reasoning_content is missing"):
        await Agent(kimi, tools=[get_weather]).run(None, history=list(first.messages[:3]))


@pytest.mark.parametrize("vendor", ["anthropic/claude-sonnet-4.5", "google/gemini-3-pro-preview"])
async def test_openrouter_proofs_survive_persistence_and_go_back_unmodified(
    emu: Emulator, openai_client: openai.AsyncOpenAI, vendor: str
) -> None:
    model = OpenAIChatModel(vendor, client=openai_client, dialect="openrouter")
    agent = Agent(model, tools=[get_weather])
    first = await agent.run("What's the weather in Paris?")
    reply = first.messages[1]
    blocks = reply.thinking
    assert blocks and all(b.provider_details and b.provider_details["type"] for b in blocks)
    assert any(b.signature or b.redacted for b in blocks)
    # the items exactly as the router returned them (the emulator answers the same request
    # the same way)
    body = {k: v for k, v in emu.requests[0].body.items() if k not in ("model", "messages")}
    raw = await openai_client.chat.completions.create(
        model=vendor, messages=emu.requests[0].body["messages"], extra_body=body
    )
    returned = (raw.choices[0].message.model_extra or {})["reasoning_details"]
    loaded = load_messages(dump_messages(first.messages))
    assert loaded == first.messages
    emu.clear()
    await agent.run("And in Rome?", history=loaded)
    assert emu.requests[0].body["messages"][1]["reasoning_details"] == returned


async def test_openrouter_proofs_never_cross_vendors_behind_the_router(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    claude = OpenAIChatModel(
        "anthropic/claude-sonnet-4.5", client=openai_client, dialect="openrouter"
    )
    first = await Agent(claude, tools=[get_weather]).run("What's the weather in Paris?")
    emu.clear()
    gemini = OpenAIChatModel(
        "google/gemini-3-pro-preview", client=openai_client, dialect="openrouter"
    )
    await Agent(gemini, tools=[get_weather]).run("And in Rome?", history=first.messages)
    assert "reasoning_details" not in emu.requests[0].body["messages"][1]


async def test_magistral_thinking_chunks_become_blocks_in_position_and_go_back(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    model = OpenAIChatModel("magistral-medium-latest", client=openai_client, dialect="mistral")
    result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
    reply = result.messages[1]
    assert [p.kind for p in reply.parts] == ["thinking", "text", "tool_call"]
    sent = emu.requests[-1].body["messages"][1]
    assert sent["content"] == [
        {"type": "thinking", "thinking": [{"type": "text", "text": reply.parts[0].text}]},  # type: ignore[union-attr]
        {"type": "text", "text": reply.text},
    ]


async def test_deepseek_responses_items_go_back_in_position_with_their_text(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    model = OpenAIResponsesModel("deepseek-v4-pro", client=openai_client)
    result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
    block = result.messages[1].thinking[0]
    assert block.signature is None and block.id and block.text
    assert block.provider_details is not None
    assert block.provider_details["encrypted_content"] is None
    items = emu.requests[-1].body["input"]
    assert [i.get("type") for i in items[1:4]] == [
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert items[1] == {
        "type": "reasoning",
        "id": block.id,
        "summary": [],
        "encrypted_content": None,
        "content": [{"type": "reasoning_text", "text": block.text}],
    }


async def test_xai_responses_items_without_id_go_back_before_their_call(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    model = OpenAIResponsesModel("grok-4", client=openai_client)
    agent = Agent(model, tools=[get_weather])
    result = await agent.run("What's the weather in Paris?")
    block = result.messages[1].thinking[0]
    assert block.id is None and block.signature
    async with agent.run_stream("What's the weather in Paris?") as stream:
        async for _ in stream:
            pass
    streamed_history = stream.result.messages
    assert [m.model_copy(update={"id": None}) for m in streamed_history] == [
        m.model_copy(update={"id": None}) for m in result.messages
    ]
    items = emu.requests[-1].body["input"]
    reasoning = next(i for i in items if i.get("type") == "reasoning")
    assert "id" not in reasoning and reasoning["encrypted_content"] == block.signature
    assert items[items.index(reasoning) + 1]["type"] == "function_call"


async def test_a_user_declared_dialect_runs_a_loop(emu: Emulator) -> None:
    client = emu.openai_client(max_retries=0, base_url=f"{emu.url}/vllm/v1")
    mine = ChatDialect("my-gateway", reasoning="reasoning", replay="tool_turns", switch="vllm")
    model = OpenAIChatModel("Qwen/Qwen3-8B", client=client, dialect=mine)
    result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
    assert result.messages[1].scope == "my-gateway" and result.messages[1].thinking
    assert emu.requests[-1].body["messages"][1]["reasoning"] == result.messages[1].thinking[0].text
    await client.close()


async def test_minimax_split_reasoning_comes_and_goes_as_items(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    model = OpenAIChatModel(
        "MiniMax-M2", client=openai_client, dialect="minimax", thinking=OpenAIThinking(split=True)
    )
    result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
    block = result.messages[1].thinking[0]
    assert block.provider_details == {
        "type": "reasoning.text",
        "id": "reasoning-text-1",
        "format": "MiniMax-response-v1",
        "index": 0,
    }
    body = emu.requests[-1].body
    assert body["reasoning_split"] is True
    sent = body["messages"][1]
    assert sent["reasoning_details"] == [{**block.provider_details, "text": block.text}]
    assert "<think>" not in (sent["content"] or "")


async def test_groq_raw_reasoning_is_split_out_of_the_content(emu: Emulator) -> None:
    client = emu.openai_client(max_retries=0, base_url=f"{emu.url}/groq/v1")
    raw = OpenAIChatModel(
        "qwen/qwen3-32b", client=client, dialect="groq", thinking=OpenAIThinking(format="raw")
    )
    result = await Agent(raw).run("Why is the sky blue?")
    reply = result.messages[1]
    assert [p.kind for p in reply.parts] == ["thinking", "text"]
    assert "<think>" not in reply.text and emu.requests[-1].body["reasoning_format"] == "raw"
    await client.close()
