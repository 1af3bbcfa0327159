"""Prompt caching in the emulator: the shared prefix cache (`emulator/caching.py`) on its own,
and Gemini's implicit caching on the Gemini API and Vertex AI wires through the official SDK
(`cachedContentTokenCount` from the second request with the same prefix, JSON and streamed,
from the model's minimum length on)."""

from __future__ import annotations

import pytest
from google import genai
from google.genai import types

from tests.support.gemini import api_fixture, client_fixture  # noqa: F401 (fixtures)
from thinkagent.emulator import Emulator
from thinkagent.emulator.caching import CacheRules, PrefixCache, Segment, segment

from .test_gemini import G3, user

# --- the shared cache -----------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def pieces(*tokens: int, tag: str = "") -> list[Segment]:
    """Segments of these sizes; one of another size has other bytes too."""
    return [segment([tag, i, n], n) for i, n in enumerate(tokens)]


RULES = CacheRules(minimum_tokens=100, ttl=60)


def test_automatic_caching_reads_the_longest_stored_prefix() -> None:
    cache = PrefixCache()
    assert cache.use("m", pieces(80, 40), RULES).read_tokens == 0  # nothing stored yet
    # the first request left both of its prefixes long enough (120 tokens): the next reads it
    use = cache.use("m", pieces(80, 40, 30), RULES)
    assert (use.read_tokens, use.write_tokens) == (120, 30)
    assert cache.use("m", pieces(80, 40, 30, 5), RULES).read_tokens == 150
    assert cache.use("m", pieces(80, 41), RULES).read_tokens == 0  # changed bytes, no match
    assert cache.use("other", pieces(80, 40), RULES).read_tokens == 0  # another namespace


def test_a_prefix_under_the_minimum_is_never_cached() -> None:
    cache = PrefixCache()
    cache.use("m", pieces(60, 30), RULES)
    assert cache.use("m", pieces(60, 30), RULES).read_tokens == 0
    assert len(cache) == 0


def test_entries_live_their_ttl_after_their_last_use() -> None:
    clock = Clock()
    cache = PrefixCache(clock=clock)
    cache.use("m", pieces(150), RULES)
    clock.now = 59
    assert cache.use("m", pieces(150), RULES).read_tokens == 150  # read: lives 60 s more
    clock.now = 118
    assert cache.use("m", pieces(150), RULES).read_tokens == 150
    clock.now = 200
    assert cache.use("m", pieces(150, 10), RULES).read_tokens == 0  # expired


def test_breakpoints_write_only_where_they_sit_with_their_own_ttl() -> None:
    clock = Clock()
    cache = PrefixCache(clock=clock)
    use = cache.use("m", pieces(100, 50, 50), RULES, breakpoints={1: 3600.0})
    assert (use.read_tokens, use.write_tokens) == (0, 150)
    use = cache.use("m", pieces(100, 50, 50, 20), RULES, breakpoints={3: None})
    assert (use.read_tokens, use.write_tokens) == (150, 70)  # read to the breakpoint, wrote on
    clock.now = 120  # the 60 s entry is gone, the 1 h one stays
    assert cache.use("m", pieces(100, 50, 50, 20), RULES, breakpoints={}).read_tokens == 150


def test_the_cache_is_bounded_and_clears() -> None:
    cache = PrefixCache(max_entries=3)
    for tag in "abcd":
        cache.use("m", pieces(200, tag=tag), RULES)
    assert len(cache) == 3
    assert cache.use("m", pieces(200, tag="a"), RULES).read_tokens == 0  # the oldest went
    cache.clear()
    assert len(cache) == 0


# --- Gemini's implicit caching ----------------------------------------------------------------


def instructions(tokens: int) -> str:
    return "x" * (tokens * 4)


async def usage(
    client: genai.Client, system: str, *turns: str, model: str = G3, stream: bool = False
) -> types.GenerateContentResponseUsageMetadata:
    """The usage of a request: the system instruction, then `turns`, the user's and the
    model's in turn."""
    contents = [
        user(t) if i % 2 == 0 else types.Content(role="model", parts=[types.Part(text=t)])
        for i, t in enumerate(turns)
    ]
    config = types.GenerateContentConfig(system_instruction=system)
    if stream:
        chunks = await client.aio.models.generate_content_stream(
            model=model, contents=contents, config=config
        )
        found = [c.usage_metadata async for c in chunks if c.usage_metadata]
        return found[-1]
    reply = await client.aio.models.generate_content(model=model, contents=contents, config=config)
    assert reply.usage_metadata is not None
    return reply.usage_metadata


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_the_second_request_with_a_prefix_reads_it_from_the_cache(
    emu: Emulator, client: genai.Client, stream: bool
) -> None:
    system = instructions(5000)
    first = await usage(client, system, "Hello", stream=stream)
    assert first.cached_content_token_count is None
    second = await usage(client, system, "Hello", stream=stream)
    assert second.cached_content_token_count == second.prompt_token_count
    third = await usage(client, system, "Hello", "Hi there.", "And then?", stream=stream)
    assert third.cached_content_token_count == first.prompt_token_count
    assert third.cache_tokens_details is not None
    assert third.cache_tokens_details[0].token_count == first.prompt_token_count
    emu.reset()
    assert (await usage(client, system, "Hello")).cached_content_token_count is None


async def test_each_model_has_its_minimum_and_its_own_cache(client: genai.Client) -> None:
    """4,096 tokens on Gemini 3, 2,048 on Gemini 2.5 (ai.google.dev/gemini-api/docs/caching)."""
    system = instructions(3000)
    for model in (G3, "gemini-2.5-flash"):
        await usage(client, system, "Hello", model=model)
    again = {
        model: (await usage(client, system, "Hello", model=model)).cached_content_token_count
        for model in (G3, "gemini-2.5-flash", "gemini-2.5-pro")
    }
    assert again[G3] is None  # under Gemini 3's minimum
    assert again["gemini-2.5-flash"] is not None and again["gemini-2.5-flash"] > 3000
    assert again["gemini-2.5-pro"] is None  # a model of its own: nothing cached for it yet


async def test_another_system_instruction_misses(client: genai.Client) -> None:
    await usage(client, instructions(5000), "Hello")
    missed = await usage(client, instructions(5000) + "!", "Hello")
    assert missed.cached_content_token_count is None


async def test_the_platforms_do_not_share_a_cache(
    gemini_client: genai.Client, vertex_client: genai.Client
) -> None:
    system = instructions(5000)
    await usage(gemini_client, system, "Hello")
    assert (await usage(vertex_client, system, "Hello")).cached_content_token_count is None
