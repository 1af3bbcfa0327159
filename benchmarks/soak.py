"""The soak: 1,000 concurrent thinking + tool runs per wire API against a standalone emulator
process, then one conversation grown to 250 turns per wire API.

    python benchmarks/soak.py [--runs 1000] [--turns 250] [--only anthropic bedrock]

(`--turns 0` skips the long conversation; the test suite runs a small soak that way.)

For each wire API, `--runs` runs start at once (`asyncio.gather`, one client per wire API) and
each must end with a valid history (`validate_history`) that dumps and loads back to itself and
equals the same question's run made alone, cache counts aside (a run reads the prompt cache the
runs before it wrote, as on the services): the table reports the runs that raised (`errors`),
the histories that fail any of those (`invalid`), the wall time and this process's peak RSS
while they ran. Then one conversation per wire API grows to `--turns` turns (a question and a
tool call each), and the client CPU of each turn (`time.process_time`, this process only: the
emulator is another process) is fitted to a line: each turn sends the whole history, so a
turn's CPU grows linearly with its number; the fit's slope on the second half of the turns
over the first half is about 1 for a linear growth (it would be about 3 for a quadratic one).
Exits non-zero on any error or invalid history, or a growth that is clearly superlinear (a
second-half slope 2.5 times the first half's or more). About two minutes on two cores.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from overhead import start_emulator, stop_emulator

from thinkagent import (
    Agent,
    Message,
    Model,
    dump_messages,
    load_messages,
    validate_history,
)

WIRES = ("anthropic", "bedrock", "gemini", "openai-chat", "responses")
CITIES = ("Paris", "Lyon", "Nice", "Lille", "Rome")
KEY = "soak-key"


async def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


@asynccontextmanager
async def wire_model(wire: str, url: str) -> AsyncIterator[Model]:
    """A thinking model of `wire` on the emulator at `url`, with the SDK's default retries."""
    if wire == "anthropic":
        import anthropic

        from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking

        client = anthropic.AsyncAnthropic(api_key=KEY, base_url=url)
        yield AnthropicModel(
            "claude-sonnet-4-5", client=client, thinking=ClaudeThinking.budget(2048)
        )
        await client.close()
    elif wire == "bedrock":
        import boto3

        from thinkagent.providers.bedrock import BedrockModel, ClaudeThinking

        client = boto3.client(
            "bedrock-runtime",
            endpoint_url=url,
            region_name="us-east-1",
            aws_access_key_id="AKIASOAK",
            aws_secret_access_key=KEY,
        )
        yield BedrockModel(
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            client=client,
            thinking=ClaudeThinking.budget(2048),
        )
        client.close()
    elif wire == "gemini":
        from google import genai
        from google.genai import types

        from thinkagent.providers.gemini import GeminiModel

        client = genai.Client(
            api_key=KEY, http_options=types.HttpOptions(base_url=url, api_version="v1beta")
        )
        yield GeminiModel("gemini-3-pro-preview", client=client)
        await client.aio.aclose()
    else:
        import openai

        from thinkagent.providers.openai import OpenAIChatModel
        from thinkagent.providers.openai_responses import OpenAIResponsesModel

        client = openai.AsyncOpenAI(api_key=KEY, base_url=url + "/v1")
        if wire == "openai-chat":
            yield OpenAIChatModel("deepseek-reasoner", client=client, dialect="deepseek")
        else:
            yield OpenAIResponsesModel("gpt-5", client=client)
        await client.close()


def memory_mb(field: str = "VmRSS", pid: int | str = "self") -> float:
    """A process's memory figure from /proc (`VmRSS` resident now, `VmHWM` its peak), in MB
    (Linux; 0 elsewhere)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class PeakRSS:
    """This process's peak RSS while the block runs, sampled every 10 ms by a thread."""

    def __init__(self) -> None:
        self.peak = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while True:
            self.peak = max(self.peak, memory_mb())
            if self._done.wait(0.01):
                return

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()


def cold(messages: list[Message]) -> str:
    """The messages' JSON with their cache counts zeroed: what a request reads from the
    prompt cache depends on the runs made before it, nothing else may differ."""
    return dump_messages(
        [
            m.model_copy(
                update={
                    "usage": m.usage.model_copy(
                        update={"cache_read_tokens": 0, "cache_write_tokens": 0}
                    )
                }
            )
            if m.usage is not None
            else m
            for m in messages
        ]
    )


def question(index: int) -> str:
    return f"What's the weather in {CITIES[index % len(CITIES)]}?"


async def concurrent_runs(wire: str, url: str, runs: int) -> dict[str, Any]:
    async with wire_model(wire, url) as model:
        agent = Agent(model, tools=[get_weather])
        # Each question's run made alone: what every concurrent run must equal.
        alone = {q: cold((await agent.run(q)).messages) for q in map(question, range(5))}

        async def one(index: int) -> str:
            """ "" when the run's history is valid and as expected, else what is wrong."""
            result = await agent.run(question(index))
            try:
                validate_history(result.messages)
            except Exception as exc:
                return f"invalid: {exc}"
            dumped = dump_messages(result.messages)
            if load_messages(dumped) != result.messages:
                return "does not load back to itself"
            if cold(result.messages) != alone[question(index)]:
                return "differs from the same question's run made alone"
            return ""

        with PeakRSS() as rss:
            started = time.perf_counter()
            outcomes = await asyncio.gather(*map(one, range(runs)), return_exceptions=True)
            wall = time.perf_counter() - started
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    invalid = [o for o in outcomes if isinstance(o, str) and o]
    return {
        "errors": len(errors),
        "invalid": len(invalid),
        "wall": wall,
        "rss": rss.peak,
        "examples": [repr(e)[:200] for e in errors[:3]] + invalid[:3],
    }


async def long_conversation(wire: str, url: str, turns: int) -> list[float]:
    """Client CPU seconds of each turn of one conversation grown to `turns` turns."""
    async with wire_model(wire, url) as model:
        agent = Agent(model, tools=[get_weather])
        history: list[Message] = []
        cpu: list[float] = []
        for turn in range(turns):
            started = time.process_time()
            result = await agent.run(question(turn), history=history)
            cpu.append(time.process_time() - started)
            history = result.messages
        validate_history(history)
        return cpu


def fit(cpu: list[float]) -> tuple[list[float], float, float, float, float]:
    """The per-turn CPU smoothed (the median of each block of turns: a garbage collection or a
    thread start lands in one turn) and fitted to a line: (the block medians, intercept a,
    slope b, r² of the line, the slope on the second half of the turns over the slope on the
    first half: about 1 for a linear growth, about 3 for a quadratic one)."""
    size = max(1, len(cpu) // 25)
    blocks = [cpu[i : i + size] for i in range(0, len(cpu) - size + 1, size)]
    x = [i * size + (size + 1) / 2 for i in range(len(blocks))]
    y = [statistics.median(block) for block in blocks]
    slope, intercept = statistics.linear_regression(x, y)
    r = statistics.correlation(x, y)
    half = len(x) // 2
    first = statistics.linear_regression(x[:half], y[:half]).slope
    second = statistics.linear_regression(x[half:], y[half:]).slope
    return y, intercept, slope, r * r, second / first if first > 0 else float("inf")


async def main(args: argparse.Namespace, url: str, emulator_pid: int) -> int:
    wires = [w for w in WIRES if not args.only or w in args.only]
    failed = False
    print(f"{args.runs:,} concurrent thinking + tool runs per wire API, emulator at {url}")
    print("| wire API    | runs  | errors | invalid | wall s | runs/s | peak RSS MB |")
    print("|-------------|-------|--------|---------|--------|--------|-------------|")
    for wire in wires:
        figures = await concurrent_runs(wire, url, args.runs)
        failed |= bool(figures["errors"] or figures["invalid"])
        print(
            f"| {wire:<11} | {args.runs:>5} | {figures['errors']:>6} | {figures['invalid']:>7} "
            f"| {figures['wall']:>6.1f} | {args.runs / figures['wall']:>6.0f} "
            f"| {figures['rss']:>11.0f} |",
            flush=True,
        )
        for example in figures["examples"]:
            print(f"    {wire}: {example}")
    print(f"emulator process peak RSS: {memory_mb('VmHWM', emulator_pid):.0f} MB")
    if not args.turns:
        return 1 if failed else 0
    print()
    print(
        f"one conversation grown to {args.turns} turns per wire API: client CPU per turn (ms) "
        "(medians of blocks of turns) and its fit, cpu = a + b * turn"
    )
    print(
        "| wire API | first turns | middle turns | last turns | a ms | b us/turn | r2 | 2nd/1st half slope "
        "| verdict |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for wire in wires:
        cpu = await long_conversation(wire, url, args.turns)
        medians, intercept, slope, r2, halves = fit(cpu)
        # Linear: the growth does not speed up (a quadratic one triples; or there is none to
        # speak of: under 5 ms over the whole conversation, where noise decides the ratio).
        linear = halves < 2.5 or slope * len(cpu) < 5e-3
        failed |= not linear
        print(
            f"| {wire} | {medians[0] * 1e3:.2f} | {medians[len(medians) // 2] * 1e3:.2f} "
            f"| {medians[-1] * 1e3:.2f} | {intercept * 1e3:.2f} | {slope * 1e6:.1f} | {r2:.3f} "
            f"| {halves:.2f} | {'linear' if linear else 'SUPERLINEAR'} |",
            flush=True,
        )
    return 1 if failed else 0


def cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=250)
    parser.add_argument("--only", nargs="*", choices=WIRES)
    args = parser.parse_args()
    process, url = start_emulator()
    try:
        return asyncio.run(main(args, url, process.pid))
    finally:
        stop_emulator(process)


if __name__ == "__main__":
    sys.exit(cli())
