"""What a durable run adds per step: a run on DBOS (SQLite) vs the same run in memory.

    python benchmarks/durable_overhead.py [--runs 30] [--turns 4]

A model that answers at once (signed thinking and a tool call for `--turns` turns, then an
answer) keeps the provider out of the figure: what remains is what durability costs, per
checkpointed step (a model request or a tool call), on the SQLite system database in a
temporary directory. Reported: the median wall time of a run, in memory and durable (with
and without publishing events to the run's stream), and the overhead per step.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from dbos import DBOS

from thinkagent import (
    Agent,
    Message,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingBlock,
    ToolCall,
    Usage,
)
from thinkagent.durable import DurableAgent


class InstantModel:
    """Thinks (signed), calls `lookup` for `turns` turns, then answers: no I/O at all."""

    def __init__(self, turns: int) -> None:
        self.turns = turns

    @property
    def model_name(self) -> str:
        return "instant"

    @property
    def scope(self) -> str:
        return "anthropic"

    async def request(self, request: ModelRequest) -> ModelResponse:
        turn = sum(1 for m in request.messages if m.role == "assistant")
        thinking = ThinkingBlock.signed(
            f"Turn {turn}: thinking it over. " * 20, "c2lnbmF0dXJl" * 40
        )
        if turn < self.turns:
            call = ToolCall(id=f"call_{turn}", name="lookup", arguments={"key": f"k{turn}"})
            parts: tuple[object, ...] = (thinking, call)
        else:
            parts = (thinking, TextPart(text="Done: " + "x" * 200))
        usage = Usage(input_tokens=100, output_tokens=50, thinking_tokens=30)
        return ModelResponse(
            Message(role="assistant", parts=parts, scope="anthropic", model="instant", usage=usage)
        )  # type: ignore[arg-type]

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelResponse]:
        yield await self.request(request)


def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


async def measure(runs: int, turns: int, directory: Path) -> dict[str, float]:
    agent = Agent(InstantModel(turns), tools=[lookup])
    DBOS(
        config={
            "name": "durable-overhead",
            "system_database_url": f"sqlite:///{directory / 'bench.sqlite'}",
        }
    )
    with_events = DurableAgent(agent, name="bench_events")
    without_events = DurableAgent(agent, name="bench_plain", events=False)
    DBOS.launch()
    timings: dict[str, list[float]] = {"memory": [], "durable": [], "durable, no events": []}
    try:
        for i in range(runs + 3):  # the first three warm up
            for label, run in (
                ("memory", lambda _: agent.run("go")),
                ("durable", lambda i: with_events.run("go", workflow_id=f"e{i}")),
                ("durable, no events", lambda i: without_events.run("go", workflow_id=f"p{i}")),
            ):
                started = time.perf_counter()
                await run(i)
                if i >= 3:
                    timings[label].append(time.perf_counter() - started)
    finally:
        DBOS.destroy()
    return {label: statistics.median(values) for label, values in timings.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--dir", help="where the SQLite file goes (default: a temporary directory)")
    args = parser.parse_args()
    steps = 2 * args.turns + 1  # model requests and tool calls
    with tempfile.TemporaryDirectory(dir=args.dir) as directory:
        medians = asyncio.run(measure(args.runs, args.turns, Path(directory)))
    memory = medians["memory"]
    print(
        f"run of {steps} steps ({args.turns + 1} model requests, {args.turns} tool calls), median of {args.runs}:"
    )
    for label, value in medians.items():
        extra = (
            "" if label == "memory" else f"   +{(value - memory) / steps * 1000:.2f} ms per step"
        )
        print(f"  {label:<20} {value * 1000:8.2f} ms{extra}")
    print(
        f"durable overhead per step on SQLite: {(medians['durable'] - memory) / steps * 1000:.2f} ms"
    )


if __name__ == "__main__":
    main()
