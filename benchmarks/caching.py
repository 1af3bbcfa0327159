"""Prompt caching with default settings: a 10-turn thinking + tool loop on each wire API.

    python benchmarks/caching.py [--turns 10] [--only anthropic bedrock]

Each wire runs the same conversation on the emulator (which caches as each service reports
it): a system prompt and two tools of about 3,000 tokens, then ten questions, each answered
after a tool call (two requests per turn), every run continuing the history of the one before.
Nothing is configured for caching: the adapters' defaults (cache breakpoints on the Claude
API and Bedrock, a byte-stable prefix everywhere). Gemini runs on Gemini 2.5 Pro, which caches
from 2,048 tokens (Gemini 3 caches from 4,096: this prompt is shorter).

For turns 2 to 10 the table gives the share of the input tokens read from the cache (goal: at
least 90% on the Claude API and Bedrock) and on how many requests the cache was read (goal on
the wires that cache by themselves: every one). It also checks that every request was
accepted, that every proof sent back (signatures, redacted payloads, thought signatures,
encrypted reasoning) is byte for byte one the service returned, that no request carried a
breakpoint on a thinking block, and that the run's usage adds up its requests' cache counts.
Exit status 0 when every goal holds.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import itertools
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from thinkagent import Agent, Message, Model, TextPart, ThinkingBlock, ToolCall, Usage
from thinkagent.emulator import Emulator
from thinkagent.providers.anthropic import AnthropicModel
from thinkagent.providers.bedrock import BedrockModel
from thinkagent.providers.claude import ClaudeThinking
from thinkagent.providers.gemini import GeminiModel
from thinkagent.providers.openai import OpenAIChatModel
from thinkagent.providers.openai_responses import OpenAIResponsesModel

SYSTEM = "You are a weather desk assistant. Follow the house rules below exactly.\n" + "".join(
    f"Rule {i:03d}: keep answers short, name the observing station, give temperatures in "
    f"Celsius and say when the observation was taken; never invent numbers (rule set {i % 7}).\n"
    for i in range(1, 56)
)
DETAIL = " ".join(
    f"Detail {i}: the report lists temperature, humidity, wind speed and direction, cloud "
    "cover and visibility."
    for i in range(14)
)
CITIES = [
    "Paris",
    "Rome",
    "Oslo",
    "Bern",
    "Madrid",
    "Lisbon",
    "Vienna",
    "Prague",
    "Athens",
    "Dublin",
]


def get_weather(city: str) -> str:
    return f"sunny in {city}, 21 C"


def station_info(code: str) -> str:
    return f"station {code}: sea level, automatic"


get_weather.__doc__ = f"Current weather for a city.\n\n{DETAIL}\n\nArgs:\n    city: the city."
station_info.__doc__ = f"An observing station.\n\n{DETAIL}\n\nArgs:\n    code: its code."

#: (api name in the emulator, goal: "share" for 90% read, "every" for reads on every request)
WIRES: dict[str, tuple[str, str, Callable[[Emulator], Model]]] = {
    "anthropic": (
        "anthropic",
        "share",
        lambda emu: AnthropicModel(
            "claude-sonnet-4-6", client=emu.anthropic_client(), thinking=ClaudeThinking.adaptive()
        ),
    ),
    "bedrock": (
        "bedrock",
        "share",
        lambda emu: BedrockModel(
            "us.anthropic.claude-sonnet-4-6-v1:0",
            client=emu.bedrock_client(),
            thinking=ClaudeThinking.adaptive(),
        ),
    ),
    "gemini": (
        "gemini",
        "every",
        lambda emu: GeminiModel("gemini-2.5-pro", client=emu.gemini_client()),
    ),
    "openai-chat": (
        "openai",
        "every",
        lambda emu: OpenAIChatModel("gpt-5", client=emu.openai_client(), dialect="openai"),
    ),
    "responses": (
        "openai-responses",
        "every",
        lambda emu: OpenAIResponsesModel("gpt-5", client=emu.openai_client()),
    ),
    "deepseek": (
        "openai",
        "every",
        lambda emu: OpenAIChatModel(
            "deepseek-reasoner", client=emu.openai_client(), dialect="deepseek"
        ),
    ),
}

_PROOF_KEYS = ("signature", "thoughtSignature", "encrypted_content", "redactedContent")


@dataclass
class Row:
    wire: str
    goal: str
    requests: int = 0
    usages: list[Usage] = field(default_factory=list[Usage])  # turns 2 to last
    proofs_sent: int = 0
    proofs_changed: int = 0
    on_thinking: int = 0
    totals_add_up: bool = True
    error: str | None = None

    @property
    def read(self) -> int:
        return sum(u.cache_read_tokens for u in self.usages)

    @property
    def share(self) -> float:
        total = sum(u.input_tokens for u in self.usages)
        return self.read / total if total else 0.0

    @property
    def reads(self) -> int:
        return sum(1 for u in self.usages if u.cache_read_tokens)

    @property
    def ok(self) -> bool:
        met = self.share >= 0.90 if self.goal == "share" else self.reads == len(self.usages)
        clean = not self.proofs_changed and not self.on_thinking and self.totals_add_up
        return self.error is None and bool(self.usages) and met and clean


def proof_bytes(proof: str) -> bytes:
    """A proof's bytes: the SDKs send the same bytes as standard or URL-safe base64."""
    try:
        return base64.b64decode(proof.replace("-", "+").replace("_", "/"), validate=True)
    except ValueError:
        return proof.encode()


def proofs(messages: list[Message]) -> set[bytes]:
    """Every proof the service returned in `messages`."""
    found: set[str] = set()
    for message in messages:
        for part in message.parts:
            if isinstance(part, ThinkingBlock):
                found.update(p for p in (part.signature, part.redacted) if p)
            elif isinstance(part, TextPart | ToolCall) and part.signature:
                found.add(part.signature)
    return {proof_bytes(p) for p in found}


def walk(value: Any) -> Iterator[tuple[str, Any, Any]]:
    """(key, value, the object holding it) for every key of a JSON value, depth first."""
    if isinstance(value, dict):
        for key, item in value.items():  # pyright: ignore[reportUnknownVariableType]
            yield str(key), item, value  # pyright: ignore[reportUnknownArgumentType]
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:  # pyright: ignore[reportUnknownVariableType]
            yield from walk(item)


def breakpoints_on_thinking(body: Any) -> int:
    """Claude: a `cache_control` on a thinking block, or a `cachePoint` right after one."""
    count = 0
    for key, value, holder in walk(body):
        if key == "cache_control" and holder.get("type") in ("thinking", "redacted_thinking"):
            count += 1
        if key == "content" and isinstance(value, list):
            for before, block in itertools.pairwise(value):  # pyright: ignore[reportUnknownArgumentType]
                if isinstance(block, dict) and "cachePoint" in block:
                    count += isinstance(before, dict) and "reasoningContent" in before
    return count


async def measure(emu: Emulator, wire: str, turns: int) -> Row:
    api, goal, make = WIRES[wire]
    row = Row(wire, goal)
    emu.reset()
    agent = Agent(make(emu), tools=[get_weather, station_info], instructions=SYSTEM)
    history: list[Message] = []
    turn = 0
    try:
        for turn, city in enumerate(CITIES[:turns]):
            prompt = f"What's the weather in {city}?" if turn == 0 else f"And in {city}?"
            result = await agent.run(prompt, history=history)
            history = result.messages
            usages = [m.usage for m in result.new_messages if m.usage is not None]
            if turn:
                row.usages += usages
            reads = sum(u.cache_read_tokens for u in usages)
            row.totals_add_up &= result.usage.cache_read_tokens == reads
    except Exception as exc:  # a refused request: the row says which
        row.error = f"turn {turn + 1}: {type(exc).__name__}: {str(exc)[:100]}"
    bodies = [r.body for r in emu.requests if r.api == api]
    row.requests = len(bodies)
    returned = proofs(history)
    for body in bodies:
        row.on_thinking += breakpoints_on_thinking(body)
        for key, value, holder in walk(body):
            redacted = key == "data" and holder.get("type") == "redacted_thinking"
            if (key in _PROOF_KEYS or redacted) and isinstance(value, str) and value:
                row.proofs_sent += 1
                row.proofs_changed += proof_bytes(value) not in returned
    return row


async def main(args: argparse.Namespace) -> int:
    wires = args.only or list(WIRES)
    with Emulator() as emu:
        rows = [await measure(emu, wire, args.turns) for wire in wires]
    print(
        f"prompt caching, default settings: a {args.turns}-turn thinking + tool loop with "
        "about 3,000 tokens of system prompt and tools (turns 2 to "
        f"{args.turns})"
    )
    print(
        f"{'wire':<12} {'requests':>8} {'cache share':>11} {'reads':>7} {'proofs':>7} "
        f"{'changed':>7} {'on thinking':>11}  verdict"
    )
    for row in rows:
        goal = "share >= 90%" if row.goal == "share" else "a read on every request"
        verdict = ("ok: " if row.ok else "SHORT: ") + goal
        if row.error:
            verdict = f"FAILED {row.error}"
        elif not row.totals_add_up:
            verdict += " (run totals do not add up)"
        print(
            f"{row.wire:<12} {row.requests:>8} {row.share:>10.1%} "
            f"{row.reads:>3}/{len(row.usages):<3} {row.proofs_sent:>7} {row.proofs_changed:>7} "
            f"{row.on_thinking:>11}  {verdict}"
        )
    short = [r.wire for r in rows if not r.ok]
    print("every goal met" if not short else f"short of the goal: {', '.join(short)}")
    return 0 if not short else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10, help="questions in the conversation")
    parser.add_argument("--only", nargs="*", choices=list(WIRES), help="wires to run")
    warnings.simplefilter("ignore", DeprecationWarning)
    sys.exit(asyncio.run(main(parser.parse_args())))
