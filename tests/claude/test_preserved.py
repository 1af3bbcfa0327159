"""Preserved thinking on Claude Opus 5.5, once for both wires against the emulator (which runs
the prefix check): append-only requests, a conversation persisted and resumed in a new process,
and every way a history can change under its thinking: new instructions or tools (appended as
a system message, which keeps the thinking: `tests/claude/test_chain.py`), a tool rewritten,
a trimmed or rewritten history, a block left out. Each change nothing can append is repaired
before sending (the thinking the change invalidated is left out, with a `thinking_stripped`
warning), refused with `HistoryError` (`prefix_mismatch_behavior="error"`), or sent for the
service to drop (`"drop_block"`), never a 400. The history keeps everything."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from tests.support.claude import ANTHROPIC, BEDROCK, Wire, run
from thinkagent import (
    Agent,
    HistoryError,
    Message,
    ModelResponse,
    RunResult,
    TextDelta,
    ThinkingDelta,
    WarningEvent,
    dump_messages,
    load_messages,
    trim_history,
)
from thinkagent.emulator import Emulator
from thinkagent.providers.claude import ClaudeThinking

INSTRUCTIONS = "Be brief. Answer in one sentence."
PROMPTS = [
    "What's the weather and time in Paris and London?",
    "And the weather in Rome and Madrid?",
    "And the weather in Oslo and Bern?",
    "And the weather in Lisbon and Dublin?",
    "And the weather in Vienna and Prague?",
    "And the weather in Athens and Warsaw?",
]


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def get_time(city: str) -> str:
    """Current local time in a city."""
    return f"12:00 in {city}"


TOOLS = [get_weather, get_time]


def get_weather_rewritten(city: str) -> str:
    """Current weather for a city, in metric units."""
    return f"sunny in {city}, 21 C"


get_weather_rewritten.__name__ = "get_weather"
REWRITTEN = [get_weather_rewritten, get_time]
"""The same tools, one of them described anew: a change no system message can say (a tool is
added or removed by reference), so the thinking before it is invalid."""


def opus(wire: Wire) -> str:
    return "claude-opus-5-5" if wire is ANTHROPIC else "anthropic.claude-opus-5-5-v1:0"


def agent(wire: Wire, client: Any, instructions: str = INSTRUCTIONS, **kw: Any) -> Agent:
    thinking = kw.pop("thinking", None)
    model = wire.model(client, name=opus(wire), thinking=thinking)
    return Agent(model, tools=kw.pop("tools", TOOLS), instructions=instructions, **kw)


async def conversation(wire: Wire, client: Any, emu: Emulator, turns: int = 2) -> list[Message]:
    history: list[Message] = []
    for prompt in PROMPTS[:turns]:
        history = (await agent(wire, client).run(prompt, history=history)).messages
    emu.clear()
    return history


def signed(messages: list[Message]) -> int:
    return sum(1 for m in messages for b in m.thinking if b.signature or b.redacted)


def codes(result: RunResult) -> list[str]:
    return [w.code for w in result.warnings]


def sent_proofs(emu: Emulator, wire: Wire) -> str:
    return json.dumps([r.body for r in wire.model_requests(emu)])


CHILD = """
import asyncio, json, sys
from tests.claude.test_preserved import TOOLS, INSTRUCTIONS, PROMPTS
from thinkagent import Agent, dump_messages, load_messages
from thinkagent.providers.claude import AnthropicModel, BedrockModel
wire, url, path = sys.argv[1:4]
if wire == "anthropic":
    import anthropic
    client = anthropic.AsyncAnthropic(base_url=url, api_key="another-process-key")
    model = AnthropicModel("claude-opus-5-5", client=client, scope="anthropic")
else:
    import boto3
    client = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url,
                          aws_access_key_id="AKIDOTHERPROCESS", aws_secret_access_key="x")
    model = BedrockModel("anthropic.claude-opus-5-5-v1:0", client=client)
async def main():
    history = load_messages(open(path).read())
    agent = Agent(model, tools=TOOLS, instructions=INSTRUCTIONS)
    for prompt in PROMPTS[3:]:
        history = (await agent.run(prompt, history=history)).messages
    open(path, "w").write(dump_messages(history))
asyncio.run(main())
"""


async def test_six_turns_resumed_in_a_new_process_send_the_same_prefix(
    wire: Wire, emu: Emulator, wire_client: Any, tmp_path: Any
) -> None:
    """A 6-turn thinking + parallel tool loop, persisted after turn 3 and resumed in another
    process: every request is accepted, with byte-identical `system` and `tools`."""
    history: list[Message] = []
    for prompt in PROMPTS[:3]:
        history = (await agent(wire, wire_client).run(prompt, history=history)).messages
    path = tmp_path / "conversation.json"
    path.write_text(dump_messages(history))
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHILD, wire.scope, emu.url, str(path)
    )
    assert await asyncio.wait_for(child.wait(), 120) == 0
    final = load_messages(path.read_text())
    assert final[: len(history)] == history
    requests = wire.model_requests(emu)
    key = "tools" if wire is ANTHROPIC else "toolConfig"
    assert len({json.dumps(r.body["system"]) for r in requests}) == 1
    assert len({json.dumps(r.body[key]) for r in requests}) == 1
    assert len(requests) >= 12
    assert any(len(m.tool_calls) == 2 for m in final)  # parallel calls
    assert signed(final) >= 12
    # every earlier block went back, in every request
    proofs = [b.signature for m in final[:-1] for b in m.thinking]
    assert all(p and p in json.dumps(requests[-1].body) for p in proofs)


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_a_rewritten_tool_leaves_the_old_thinking_out_with_a_warning(
    wire: Wire, emu: Emulator, wire_client: Any, streamed: bool
) -> None:
    history = await conversation(wire, wire_client, emu)
    changed = agent(wire, wire_client, tools=REWRITTEN)
    result = await run(changed, "And in Berlin and Paris?", history=history, streamed=streamed)
    assert result.messages[: len(history)] == history  # the evidence keeps every block
    assert "thinking_stripped" in codes(result)
    old = [b.signature for m in history for b in m.thinking]
    assert not any(p and p in sent_proofs(emu, wire) for p in old)
    # the blocks made under the new instructions do go back on the next requests
    new = [b.signature for m in result.new_messages[:-1] for b in m.thinking]
    assert new and all(p in json.dumps(wire.model_requests(emu)[-1].body) for p in new)


async def test_with_error_the_change_is_a_history_error_before_sending(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    history = await conversation(wire, wire_client, emu)
    strict = agent(
        wire,
        wire_client,
        tools=REWRITTEN,
        thinking=ClaudeThinking.adaptive(prefix_mismatch_behavior="error"),
    )
    with pytest.raises(HistoryError) as caught:
        await strict.run("And in Berlin?", history=history)
    assert caught.value.message_index == 1 and caught.value.part_index == 0
    assert "bound to a different conversation" in str(caught.value)
    assert "append-only" in str(caught.value)
    assert emu.requests == []
    # unchanged, the same setting sends and is accepted
    same = agent(
        wire, wire_client, thinking=ClaudeThinking.adaptive(prefix_mismatch_behavior="error")
    )
    assert (await same.run("And in Berlin?", history=history)).output


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_with_drop_block_the_service_drops_and_says_so(
    wire: Wire, emu: Emulator, wire_client: Any, streamed: bool
) -> None:
    history = await conversation(wire, wire_client, emu)
    dropping = agent(
        wire,
        wire_client,
        tools=REWRITTEN,
        thinking=ClaudeThinking.adaptive(prefix_mismatch_behavior="drop_block"),
    )
    events: list[Any] = []
    if streamed:
        async with dropping.run_stream("And in Berlin?", history=history) as stream:
            events = [e async for e in stream]
        result = stream.result
    else:
        result = await dropping.run("And in Berlin?", history=history)
    first = wire.model_requests(emu)[0].body
    assert "drop_block" in json.dumps(first)
    old = [b.signature for m in history for b in m.thinking]
    assert all(p and p in json.dumps(first) for p in old)  # sent: the service decides
    warning = next(w for w in result.warnings if w.code == "thinking_dropped")
    assert (
        "prefix_binding_mismatch" in warning.message and "messages.1.content.0" in warning.message
    )
    reply = result.new_messages[1]
    dropped = (reply.provider_details or {})["input_transformations"]
    assert {
        "type": "thinking_dropped",
        "path": "messages.1.content.0",
        "reason": "prefix_binding_mismatch",
    } in dropped  # type: ignore[operator]
    assert warning in events if streamed else True
    if streamed and wire is ANTHROPIC:  # on message_start: before the response's deltas
        position = events.index(warning)
        before = events[:position]
        start = max((i for i, e in enumerate(before) if isinstance(e, ModelResponse)), default=-1)
        assert not [e for e in before[start + 1 :] if isinstance(e, ThinkingDelta | TextDelta)]
    # stored with the conversation: a later request sends drop_block again, unasked
    emu.clear()
    later = agent(wire, wire_client, tools=REWRITTEN)
    assert (await later.run("And in Oslo?", history=result.messages)).output
    assert all("drop_block" in json.dumps(r.body) for r in wire.model_requests(emu))


async def test_trim_history_is_accepted(wire: Wire, emu: Emulator, wire_client: Any) -> None:
    history = await conversation(wire, wire_client, emu, turns=3)
    trimmed = agent(wire, wire_client, history_processors=[trim_history(8)])
    result = await trimmed.run("And in Berlin and Paris?", history=history)
    assert result.output
    assert "thinking_stripped" in codes(result)
    assert result.messages[: len(history)] == history


async def test_a_processor_that_rewrites_an_earlier_message_is_repaired(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    def redact_cities(messages: list[Message]) -> list[Message]:
        first = messages[0]
        return [Message.user(first.text.replace("Paris", "P.")), *messages[1:]]

    history = await conversation(wire, wire_client, emu)
    result = await agent(wire, wire_client, history_processors=[redact_cities]).run(
        "And in Berlin?", history=history
    )
    assert result.output and "thinking_stripped" in codes(result)


async def test_a_thinking_block_left_out_between_others_is_repaired(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    history = await conversation(wire, wire_client, emu)
    first = history[1]
    history[1] = first.model_copy(
        update={"parts": tuple(p for p in first.parts if p.kind != "thinking")}
    )
    result = await agent(wire, wire_client).run("And in Berlin?", history=history)
    assert result.output and "thinking_stripped" in codes(result)


async def test_a_new_tool_converse_cannot_declare_hidden_leaves_the_old_thinking_out(
    emu: Emulator, bedrock_client: Any
) -> None:
    """Converse has no `defer_loading`: a tool the conversation did not begin with cannot be
    added by a system message there, so the tools change and the old thinking is left out."""

    def get_news(city: str) -> str:
        """Headlines for a city."""
        return f"nothing new in {city}"

    wire = BEDROCK
    history = await conversation(wire, bedrock_client, emu)
    result = await agent(wire, bedrock_client, tools=[*TOOLS, get_news]).run(
        "And the weather in Berlin?", history=history
    )
    assert result.output and "thinking_stripped" in codes(result)
    assert not [p for m in result.new_messages for p in m.parts if p.kind == "system_note"]


async def test_an_unchanged_conversation_warns_nothing(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    history = await conversation(wire, wire_client, emu)
    result = await agent(wire, wire_client).run("And in Berlin?", history=history)
    assert result.warnings == []
    assert all(isinstance(w, WarningEvent) for w in result.warnings)
    digests = [
        (m.provider_details or {}).get("prefix_digests")
        for m in result.new_messages
        if m.role == "assistant"
    ]
    assert all(isinstance(d, list) and d for d in digests)
