"""Automatic prompt caching on the emulator's OpenAI wires, through the official SDK: OpenAI's
from 1,024 tokens, reported in 128-token steps as `cached_tokens` in both usage shapes (JSON
and streamed), per credential, model and `prompt_cache_key`, with `prompt_cache_retention`;
DeepSeek's in 64-token units as `prompt_cache_hit_tokens`."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from thinkagent.emulator import Emulator

#: About 2,000 tokens.
SYSTEM = "Answer about the weather; name the observing station. " * 150
QUESTION = "What's the weather in Paris?"


async def chat(client: openai.AsyncOpenAI, stream: bool = False, **kw: Any) -> Any:
    kw.setdefault("model", "gpt-5")
    kw.setdefault(
        "messages",
        [{"role": "developer", "content": SYSTEM}, {"role": "user", "content": QUESTION}],
    )
    if not stream:
        return (await client.chat.completions.create(**kw)).usage
    chunks = await client.chat.completions.create(
        **kw, stream=True, stream_options={"include_usage": True}
    )
    return [c.usage async for c in chunks if c.usage][-1]


async def respond(client: openai.AsyncOpenAI, stream: bool = False, **kw: Any) -> Any:
    kw.setdefault("model", "gpt-5")
    kw.setdefault("instructions", SYSTEM)
    kw.setdefault("input", QUESTION)
    if not stream:
        return (await client.responses.create(**kw)).usage
    events = await client.responses.create(**kw, stream=True)
    (usage,) = [e.response.usage async for e in events if e.type == "response.completed"]
    return usage


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_chat_reads_a_repeated_prefix_in_128_token_steps(
    openai_client: openai.AsyncOpenAI, stream: bool
) -> None:
    first = await chat(openai_client, stream)
    assert first.prompt_tokens_details.cached_tokens == 0
    second = await chat(openai_client, stream)
    cached = second.prompt_tokens_details.cached_tokens
    assert second.prompt_tokens - 128 < cached <= second.prompt_tokens and cached % 128 == 0
    longer = [
        {"role": "developer", "content": SYSTEM},
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": "Sunny, 21 C at Paris-Montsouris."},
        {"role": "user", "content": "And tomorrow?"},
    ]
    third = await chat(openai_client, stream, messages=longer)
    assert third.prompt_tokens_details.cached_tokens == cached  # the prefix it shares


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_responses_reads_a_repeated_prefix(
    openai_client: openai.AsyncOpenAI, stream: bool
) -> None:
    assert (await respond(openai_client, stream)).input_tokens_details.cached_tokens == 0
    usage = await respond(openai_client, stream)
    cached = usage.input_tokens_details.cached_tokens
    assert usage.input_tokens - 128 < cached <= usage.input_tokens and cached % 128 == 0


async def test_nothing_under_1024_tokens_is_cached(openai_client: openai.AsyncOpenAI) -> None:
    short = [
        {"role": "developer", "content": "Be brief. " * 300},
        {"role": "user", "content": QUESTION},
    ]
    for _ in range(2):
        usage = await chat(openai_client, messages=short)
    assert usage.prompt_tokens < 1024 and usage.prompt_tokens_details.cached_tokens == 0


async def test_each_account_model_and_cache_key_has_its_own_cache(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    await chat(openai_client, prompt_cache_key="a")
    assert (await chat(openai_client, prompt_cache_key="a")).prompt_tokens_details.cached_tokens
    assert not (await chat(openai_client, prompt_cache_key="b")).prompt_tokens_details.cached_tokens
    assert not (await chat(openai_client, model="gpt-5-mini")).prompt_tokens_details.cached_tokens
    other = emu.openai_client(api_key="sk-another-account")
    await chat(openai_client)
    assert not (await chat(other)).prompt_tokens_details.cached_tokens
    emu.reset()
    assert not (await chat(openai_client)).prompt_tokens_details.cached_tokens


async def test_the_retention_is_checked_and_echoed(openai_client: openai.AsyncOpenAI) -> None:
    response = await openai_client.responses.create(
        model="gpt-5", input=QUESTION, prompt_cache_key="k", prompt_cache_retention="24h"
    )
    assert (response.prompt_cache_key, response.prompt_cache_retention) == ("k", "24h")
    with pytest.raises(openai.BadRequestError) as caught:
        await chat(openai_client, prompt_cache_retention="1h")
    assert caught.value.body == {  # type: ignore[comparison-overlap]
        "message": "Invalid value: '1h'. Supported values are: 'in_memory' and '24h'.",
        "type": "invalid_request_error",
        "param": "prompt_cache_retention",
        "code": "invalid_value",
    }


async def test_deepseek_reports_hits_and_misses_in_64_token_units(
    openai_client: openai.AsyncOpenAI,
) -> None:
    await chat(openai_client, model="deepseek-reasoner")
    usage = await chat(openai_client, model="deepseek-reasoner")
    hits = usage.model_extra["prompt_cache_hit_tokens"]
    assert hits > 0 and hits % 64 == 0 and usage.prompt_tokens_details.cached_tokens == hits
    assert usage.model_extra["prompt_cache_miss_tokens"] == usage.prompt_tokens - hits
