"""Prompt caching on Claude, once for both wires against the emulator (which caches as the
services do): cache breakpoints by default at the end of the tools and system and of the last
two user turns, never on thinking, so each request of a tool loop reads the one before it from
the cache; `prompt_cache` turns them off or picks their lifetime; the preserved-thinking prefix
digests do not depend on them; Bedrock sends none where it does not cache."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from tests.support.claude import ANTHROPIC, BEDROCK, QUESTION, TOOLS, Wire, run
from thinkagent import Agent, ConfigurationError, Message, ModelRequest, TextPart
from thinkagent.emulator import Emulator
from thinkagent.providers.base import ToolDefinition
from thinkagent.providers.claude import BedrockModel, ClaudeThinking
from thinkagent.providers.claude._binding import DIGESTS

from .test_replay import CALL, RESULT, SIGNED, WEATHER, turn

TIME = ToolDefinition("get_time", "Local time in a city.", {"type": "object", "properties": {}})

#: About 2,300 tokens: over the 1,024 Claude Sonnet 4.6 caches from.
INSTRUCTIONS = "You are a careful weather assistant; name the station you quote. " * 140


def breakpoints(wire: Wire, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """Where a request's breakpoints sit, in reading order: `("tools", i)`, `("system", i)` or
    `(kind, (message, block))`, the block each ends; and each one's `ttl` (None: none)."""
    found: list[tuple[str, Any]] = []
    if wire is ANTHROPIC:
        system = body.get("system")
        places: list[tuple[str, Any, dict[str, Any]]] = [
            ("tools", i, t) for i, t in enumerate(body.get("tools", []))
        ]
        if isinstance(system, list):
            places += [("system", i, b) for i, b in enumerate(system)]
        for i, message in enumerate(body["messages"]):
            places += [(b["type"], (i, j), b) for j, b in enumerate(message["content"])]
        for kind, where, block in places:
            if "cache_control" in block:
                found.append((kind, where))
        return found
    lists = [
        ("tools", body.get("toolConfig", {}).get("tools", [])),
        ("system", body.get("system", [])),
    ]
    lists += [("message", m["content"]) for m in body["messages"]]
    for index, (name, blocks) in enumerate(lists):
        for j, block in enumerate(blocks):
            if "cachePoint" in block:
                before = wire.kind(blocks[j - 1]) if j else "nothing"
                where = j - 1 if name != "message" else (index - 2, j - 1)
                found.append((before if name == "message" else name, where))
    return found


def ttls(wire: Wire, body: dict[str, Any]) -> set[Any]:
    """The lifetimes of a request's breakpoints (None for the default)."""
    text = json.dumps(body)
    key = "cache_control" if wire is ANTHROPIC else "cachePoint"
    found: set[Any] = set()
    for chunk in text.split(f'"{key}": ')[1:]:
        found.add(json.JSONDecoder().raw_decode(chunk)[0].get("ttl"))
    return found


def agent(wire: Wire, client: Any, **settings: Any) -> Agent:
    model = wire.model(client, settings=settings or None)
    return Agent(model, tools=TOOLS, instructions=INSTRUCTIONS)


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "streamed"])
async def test_each_request_of_a_tool_loop_reads_the_one_before_it(
    wire: Wire, wire_client: Any, emu: Emulator, streamed: bool
) -> None:
    result = await run(agent(wire, wire_client), QUESTION, streamed=streamed)
    usages = [m.usage for m in result.messages if m.role == "assistant" and m.usage]
    assert len(usages) == 3  # two tool steps, then the answer
    assert usages[0].cache_read_tokens == 0
    assert usages[0].cache_write_tokens == usages[0].input_tokens  # all of it, to the end
    for before, after in itertools.pairwise(usages):
        assert after.cache_read_tokens == before.input_tokens  # the whole previous request
        assert after.cache_write_tokens == after.input_tokens - after.cache_read_tokens
    assert result.usage.cache_read_tokens == sum(u.cache_read_tokens for u in usages)
    assert result.usage.cache_write_tokens == sum(u.cache_write_tokens for u in usages)
    for request in wire.model_requests(emu):
        found = breakpoints(wire, request.body)
        assert found[0] == ("system", 0)
        assert all(kind in ("system", "text", "tool_result") for kind, _ in found)
        assert len(found) <= 3


async def test_a_later_run_reads_the_earlier_one_from_the_cache(
    wire: Wire, wire_client: Any
) -> None:
    first = await agent(wire, wire_client).run(QUESTION)
    second = await agent(wire, wire_client).run("And in Rome?", history=first.messages)
    last, opening = first.messages[-1].usage, second.new_messages[1].usage
    assert last is not None and opening is not None
    assert opening.cache_read_tokens == last.input_tokens


def test_breakpoints_end_the_tools_and_system_and_the_last_two_user_turns(wire: Wire) -> None:
    history = [
        Message.user("Weather in Paris?"),
        turn(wire, SIGNED, TextPart(text="Checking."), CALL),
        Message.user_results([RESULT]),
        turn(wire, TextPart(text="Sunny.")),
        Message.user("And in Rome?"),
    ]
    tools = [WEATHER, TIME]
    model = wire.model()
    params = model.build_request(ModelRequest(history, tools=tools, instructions="Be brief."))
    assert breakpoints(wire, params) == [("system", 0), ("tool_result", (2, 0)), ("text", (4, 0))]
    # without instructions the first one ends the tools; with neither, only the messages
    params = model.build_request(ModelRequest(history, tools=tools))
    assert breakpoints(wire, params)[0] == ("tools", 1)
    params = model.build_request(ModelRequest(history[:1]))
    assert breakpoints(wire, params) == [("text", (0, 0))]
    # a conversation that ends with the model's turn: the user turns before it
    params = model.build_request(ModelRequest(history[:4], instructions="Be brief."))
    assert breakpoints(wire, params) == [("system", 0), ("text", (0, 0)), ("tool_result", (2, 0))]


async def test_prompt_cache_false_sends_no_breakpoints(
    wire: Wire, wire_client: Any, emu: Emulator
) -> None:
    result = await agent(wire, wire_client, prompt_cache=False).run(QUESTION)
    assert result.usage.cache_read_tokens == result.usage.cache_write_tokens == 0
    for request in wire.model_requests(emu):
        assert breakpoints(wire, request.body) == []
        assert "cache_control" not in json.dumps(request.body)
        if wire is ANTHROPIC:
            assert request.body["system"] == INSTRUCTIONS  # the plain string, as before


@pytest.mark.parametrize("ttl", ["5m", "1h"])
async def test_a_lifetime_goes_on_every_breakpoint(
    wire: Wire, wire_client: Any, emu: Emulator, ttl: str
) -> None:
    result = await agent(wire, wire_client, prompt_cache=ttl).run(QUESTION)
    assert result.usage.cache_read_tokens > 0
    requests = wire.model_requests(emu)
    assert len(requests) == 3
    assert all(ttls(wire, r.body) == {ttl} for r in requests)


async def test_a_bad_prompt_cache_setting_is_refused_before_sending(
    wire: Wire, wire_client: Any, emu: Emulator
) -> None:
    with pytest.raises(ConfigurationError, match="prompt_cache must be True, False, '5m' or '1h'"):
        await agent(wire, wire_client, prompt_cache="2h").run(QUESTION)
    assert wire.model_requests(emu) == []


async def test_the_prefix_digests_do_not_depend_on_the_breakpoints(
    wire: Wire, wire_client: Any, emu: Emulator
) -> None:
    """Preserved thinking: the digests recorded with each thinking block are the same with and
    without breakpoints, and a history made without them verifies with them (and back)."""
    name = "claude-opus-5-5" if wire is ANTHROPIC else "anthropic.claude-opus-5-5-v1:0"

    def opus(**settings: Any) -> Agent:
        model = wire.model(wire_client, name=name, thinking=None, settings=settings or None)
        return Agent(model, tools=TOOLS, instructions=INSTRUCTIONS)

    cached = await opus().run(QUESTION)
    plain = await opus(prompt_cache=False).run(QUESTION)

    def digests(messages: list[Message]) -> list[Any]:
        return [(m.provider_details or {}).get(DIGESTS) for m in messages if m.role == "assistant"]

    assert digests(cached.messages) == digests(plain.messages)
    assert all(digests(cached.messages))
    for history, settings in ((plain.messages, {}), (cached.messages, {"prompt_cache": False})):
        emu.clear()
        resumed = await opus(**settings).run("And in Rome?", history=history)
        assert not resumed.warnings  # no thinking stripped: every block verified
        sent = [r.body for r in wire.model_requests(emu)]
        kept = sum(len(m.thinking) for m in history)
        assert sum(wire.kinds(m["content"]).count("thinking") for m in sent[0]["messages"]) == kept


async def test_bedrock_sends_no_cache_points_where_it_does_not_cache(
    emu: Emulator, bedrock_client: Any
) -> None:
    """Bedrock refuses a `cachePoint` for models it does not cache for ("You invoked an
    unsupported model or your request did not allow prompt caching."): the other families it
    serves, and Claude before 3.5 Haiku and 3.7 Sonnet. They get none, even when asked."""
    for name in ("deepseek.r1-v1:0", "anthropic.claude-3-haiku-20240307-v1:0"):
        model = BedrockModel(name, client=bedrock_client, settings={"prompt_cache": True})
        await Agent(model, instructions=INSTRUCTIONS).run("Hello?")
    assert emu.requests and "cachePoint" not in json.dumps([r.body for r in emu.requests])
    model = BedrockModel(BEDROCK.sonnet, client=bedrock_client, thinking=ClaudeThinking.adaptive())
    await Agent(model, instructions=INSTRUCTIONS).run("Hello?")
    assert "cachePoint" in json.dumps(emu.requests[-1].body)
