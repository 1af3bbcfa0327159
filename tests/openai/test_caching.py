"""Automatic prompt caching with the OpenAI family's adapters, through the official SDK against
the emulator (which caches as OpenAI and DeepSeek do): every request of a tool loop, and of the
next run, starts with the exact bytes of the one before it (tools, instructions, messages or
input items, replayed reasoning), so the service reads that prefix from its cache, and
`Usage.cache_read_tokens` reports it, streamed too, in the run's totals as well;
`prompt_cache_key` is passed where the API has one; the counts are read from each host's own
usage fields."""

from __future__ import annotations

import itertools
import json
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletion

from tests.support.claude import run
from tests.support.openai import QUESTION, TOOLS, bodies
from thinkagent import Agent, ConfigurationError, ModelSettings, Usage
from thinkagent.emulator import Emulator
from thinkagent.providers.openai import OpenAIChatModel
from thinkagent.providers.openai_responses import OpenAIResponsesModel

#: About 2,300 tokens: over the 1,024 OpenAI caches from.
INSTRUCTIONS = "You are a careful weather assistant; name the station you quote. " * 140

WIRES = {
    "chat": ("openai", lambda c, **kw: OpenAIChatModel("gpt-5", client=c, dialect="openai", **kw)),
    "deepseek": (
        "openai",
        lambda c, **kw: OpenAIChatModel("deepseek-reasoner", client=c, dialect="deepseek", **kw),
    ),
    "responses": (
        "openai-responses",
        lambda c, **kw: OpenAIResponsesModel("gpt-5", client=c, **kw),
    ),
}


def prompt_of(body: dict[str, Any]) -> tuple[str, list[str]]:
    """What a request's prompt starts with (its tools and instructions, as JSON text), and
    each of its messages or input items (as JSON text): the bytes prompt caching compares."""
    head = json.dumps([body.get("tools"), body.get("instructions"), body.get("response_format")])
    items = body["messages"] if "messages" in body else body["input"]
    return head, [json.dumps(item) for item in items]


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "streamed"])
@pytest.mark.parametrize("wire", list(WIRES))
async def test_each_request_starts_with_the_bytes_of_the_one_before_it(
    emu: Emulator, openai_client: openai.AsyncOpenAI, wire: str, streamed: bool
) -> None:
    api, make = WIRES[wire]
    agent = Agent(make(openai_client), tools=TOOLS, instructions=INSTRUCTIONS)
    first = await run(agent, QUESTION, streamed=streamed)
    second = await run(agent, "And in Rome?", streamed=streamed, history=first.messages)
    sent = [prompt_of(body) for body in bodies(emu, api)]
    assert len(sent) == 5  # a 3-step loop, then a 2-step one (the tools are not called again)
    for (head, items), (next_head, next_items) in itertools.pairwise(sent):
        assert next_head == head
        assert next_items[: len(items)] == items  # byte for byte, reasoning included
    usages = [m.usage for r in (first, second) for m in r.new_messages if m.usage is not None]
    assert usages[0].cache_read_tokens == 0
    step = 64 if wire == "deepseek" else 128
    for before, after in itertools.pairwise(usages):
        assert before.input_tokens - step < after.cache_read_tokens <= before.input_tokens
        assert after.cache_read_tokens % step == 0
    assert first.usage.cache_read_tokens == sum(u.cache_read_tokens for u in usages[:3])


@pytest.mark.parametrize("wire", ["chat", "responses"])
async def test_the_cache_key_is_sent_and_keeps_its_own_cache(
    emu: Emulator, openai_client: openai.AsyncOpenAI, wire: str
) -> None:
    api, make = WIRES[wire]

    def agent(key: str) -> Agent:
        model = make(openai_client, settings=ModelSettings(prompt_cache_key=key))
        return Agent(model, instructions=INSTRUCTIONS)

    await agent("tenant-1").run("Hello?")
    again = await agent("tenant-1").run("Hello?")
    other = await agent("tenant-2").run("Hello?")
    assert [b["prompt_cache_key"] for b in bodies(emu, api)] == ["tenant-1"] * 2 + ["tenant-2"]
    assert again.usage.cache_read_tokens > 0 and other.usage.cache_read_tokens == 0


async def test_deepseek_has_no_cache_key(emu: Emulator, openai_client: openai.AsyncOpenAI) -> None:
    settings = ModelSettings(prompt_cache_key="tenant-1")
    await Agent(WIRES["deepseek"][1](openai_client, settings=settings)).run("Hello?")
    assert "prompt_cache_key" not in bodies(emu)[0]


async def test_caching_cannot_be_turned_off_and_a_bad_setting_is_refused(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    """OpenAI caches by itself: `prompt_cache=False` sends nothing (and is no error)."""
    for _ in range(2):
        model = WIRES["chat"][1](openai_client, settings=ModelSettings(prompt_cache=False))
        result = await Agent(model, instructions=INSTRUCTIONS).run("Hello?")
    assert result.usage.cache_read_tokens > 0
    assert "prompt_cache" not in json.dumps(bodies(emu))
    for _, make in WIRES.values():
        model = make(openai_client, settings={"prompt_cache": "forever"})
        with pytest.raises(ConfigurationError, match="prompt_cache must be"):
            await Agent(model).run("Hello?")
    assert len(bodies(emu)) == 2


def completion(**usage: Any) -> ChatCompletion:
    return ChatCompletion.model_validate(
        {
            "id": "cmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Hi"},
                }
            ],
            "usage": {"prompt_tokens": 2000, "completion_tokens": 7, "total_tokens": 2007, **usage},
        }
    )


def test_each_hosts_cache_counts_are_read() -> None:
    model = OpenAIChatModel("deepseek-reasoner", client=object(), dialect="deepseek")  # type: ignore[arg-type]
    cases = [
        ({"prompt_tokens_details": {"cached_tokens": 1024, "cache_write_tokens": 512}}, 1024, 512),
        ({"prompt_cache_hit_tokens": 1920, "prompt_cache_miss_tokens": 80}, 1920, 0),  # DeepSeek
        ({}, 0, 0),
    ]
    for usage, read, written in cases:
        found = model.parse_response(completion(**usage)).message.usage
        assert found == Usage(
            input_tokens=2000, output_tokens=7, cache_read_tokens=read, cache_write_tokens=written
        )
