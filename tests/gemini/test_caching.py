"""Implicit caching with `GeminiModel`, through `google-genai` against the emulator: each
request of a tool loop starts with the bytes of the one before it, so the service's implicit
cache serves that prefix, and `Usage.cache_read_tokens` reports it (`cachedContentTokenCount`,
streamed too), for the run's totals as well."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from tests.support.gemini import api_fixture, client_fixture, run  # noqa: F401 (fixtures)
from thinkagent import Agent, ModelSettings
from thinkagent.emulator import Emulator
from thinkagent.providers.gemini import GeminiModel

G3 = "gemini-3-pro-preview"
#: About 5,000 tokens: over Gemini 3's minimum of 4,096 for implicit caching.
INSTRUCTIONS = "You are a careful weather assistant. " * 550


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def get_time(city: str) -> str:
    """Local time in a city."""
    return f"14:05 in {city}"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_each_request_reads_the_one_before_it_from_the_cache(
    emu: Emulator, client: Any, stream: bool
) -> None:
    agent = Agent(
        GeminiModel(G3, client=client), instructions=INSTRUCTIONS, tools=[get_weather, get_time]
    )
    result = await run(agent, "What's the weather and the local time in Paris?", stream=stream)
    usages = [m.usage for m in result.messages if m.role == "assistant" and m.usage]
    assert len(usages) == 3  # two tool steps, then the answer
    assert usages[0].cache_read_tokens == 0
    for before, after in itertools.pairwise(usages):
        assert after.cache_read_tokens == before.input_tokens  # the whole previous request
        assert after.cache_read_tokens < after.input_tokens
    assert result.usage.cache_read_tokens == sum(u.cache_read_tokens for u in usages)


async def test_the_prefix_is_byte_stable_across_the_requests_of_a_run(
    emu: Emulator, gemini_client: Any
) -> None:
    agent = Agent(
        GeminiModel(G3, client=gemini_client),
        instructions=INSTRUCTIONS,
        tools=[get_weather, get_time],
    )
    first = await agent.run("What's the weather and the local time in Paris?")
    await agent.run("And in London?", history=first.messages)
    bodies = [r.body for r in emu.requests]
    assert len(bodies) >= 4  # two runs, each a tool loop
    for before, after in itertools.pairwise(bodies):
        for key in ("systemInstruction", "tools"):
            assert json.dumps(after[key]) == json.dumps(before[key])
        prefix = after["contents"][: len(before["contents"])]
        assert json.dumps(prefix) == json.dumps(before["contents"])  # signatures included


async def test_a_cache_key_has_no_gemini_setting_and_caching_stays_on(
    emu: Emulator, gemini_client: Any
) -> None:
    settings = ModelSettings(prompt_cache_key="tenant-42", prompt_cache=False)
    agent = Agent(
        GeminiModel(G3, client=gemini_client, settings=settings),
        instructions=INSTRUCTIONS,
        tools=[get_weather],
    )
    result = await agent.run("What's the weather in Paris?")
    assert result.usage.cache_read_tokens > 0  # implicit caching is the service's own
    sent = json.dumps([r.body for r in emu.requests])
    assert "tenant-42" not in sent
