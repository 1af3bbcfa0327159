"""Client CPU per 2-turn thinking + tool loop: the bare vendor SDK vs the same loop through
thinkagent, streamed and not, with an async tool and with a fast sync one.

    python benchmarks/overhead.py [--iterations 10] [--rounds 40] [--only anthropic bedrock]

The emulator runs in a separate process (`python -m thinkagent.emulator`, pinned to one core
where the OS allows), so only the client's work is measured: `time.process_time` of this
process (all its threads) over many iterations of each loop, after a warm-up. Raw and
thinkagent blocks alternate in rounds and medians are reported (the ratio is the median of
the rounds' ratios), which keeps drift (CPU frequency, other load) out of the ratio. Each provider's loops live in
`benchmarks/loops/` (see its `__init__.py` for the interface); this runner adds a row for
every module there.

Each provider has four rows: `json` and `streamed`, each with the `async` tool (an `async def`)
and with the `sync` one (a plain `def`, run inline by thinkagent: `Tool(..., inline=True)`;
called directly by the raw loop). Targets: thinkagent / raw at most 1.05 with the async tool,
at most 1.10 with the sync one.

Under each json async row, two shares of the raw loop are printed for information: the raw loop
followed by thinkagent's agent loop on a model that answers at once (`loops.InstantModel`: the
agent loop without any adapter), and followed by `loops.minimal_loop` (the least an agent loop
over validated messages does). Every piece of code costs several times its isolated time among
the SDK's work; these rows show what the agent loop, and any loop, costs there (ADR 102).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import re
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from loops import InstantModel, agent_tools, discover, minimal_loop

from thinkagent import Agent

TARGETS = {"async": 1.05, "sync": 1.10}


def start_emulator() -> tuple[subprocess.Popen[str], str]:
    prefix: list[str] = []
    if (os.cpu_count() or 1) > 1 and sys.platform.startswith("linux"):
        prefix = ["taskset", "-c", "0"] if _has("taskset") else []
    process = subprocess.Popen(
        [*prefix, sys.executable, "-m", "thinkagent.emulator", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    match = re.search(r"(http://[\d.]+:\d+)", first)
    if match is None:
        process.kill()
        raise SystemExit(f"the emulator did not start: {first!r}")
    return process, match.group(1)


def stop_emulator(process: subprocess.Popen[str]) -> None:
    """Stop the emulator process: asked to end, then killed if it has not within ten seconds
    (one that served long conversations may take longer to free what it kept)."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _has(program: str) -> bool:
    return any(
        os.access(os.path.join(p, program), os.X_OK)
        for p in os.environ.get("PATH", "").split(os.pathsep)
    )


def pin_client() -> None:
    cpus = os.cpu_count() or 1
    if hasattr(os, "sched_setaffinity") and cpus > 1:
        os.sched_setaffinity(0, {1})


async def cpu_per_loop(loop: Callable[[], Awaitable[None]], iterations: int) -> float:
    """CPU seconds per loop over `iterations` loops."""
    started = time.process_time()
    for _ in range(iterations):
        await loop()
    return (time.process_time() - started) / iterations


async def measure(
    loops: Any, streamed: bool, sync: bool, iterations: int, rounds: int
) -> dict[str, tuple[float, float]]:
    """CPU per loop and ratio to thinkagent, by loop name ("raw", "thinkagent" and, when the
    module has one, "reference"): medians over `rounds` rounds.

    Each round times a block of each loop back to back (the order rotates), so all see the
    same conditions; a ratio is the median of the rounds' ratios.
    """
    names = ["raw", "thinkagent"] + (["reference"] if hasattr(loops, "reference") else [])
    functions: dict[str, Callable[[], Awaitable[None]]] = {
        name: functools.partial(getattr(loops, name), streamed, sync) for name in names
    }
    if not streamed and not sync:  # the agent loop's own share, and the least any loop costs
        agent = Agent(InstantModel(), tools=agent_tools(False))
        names += list(SHARES)
        functions["agent loop"] = functools.partial(_raw_then_agent_loop, loops, agent)
        functions["minimal loop"] = functools.partial(_raw_then_minimal_loop, loops, agent)
    for _ in range(max(20, iterations)):  # warm up (connections, caches, imports)
        for function in functions.values():
            await function()
    cpu: dict[str, list[float]] = {name: [] for name in names}
    ratios: dict[str, list[float]] = {name: [] for name in names}
    for index in range(rounds):
        shift = index % len(names)
        measured: dict[str, float] = {}
        for name in names[shift:] + names[:shift]:
            measured[name] = await cpu_per_loop(functions[name], iterations)
        for name in names:
            cpu[name].append(measured[name])
            if name in SHARES:  # raw followed by another loop: a share of raw
                ratios[name].append(measured[name] / measured["raw"])
            else:  # what thinkagent costs beside it
                ratios[name].append(measured["thinkagent"] / measured[name])
    return {name: (statistics.median(cpu[name]), statistics.median(ratios[name])) for name in names}


SHARES = {
    "agent loop": "raw + the agent loop alone, on a model that answers at once",
    "minimal loop": "raw + the least an agent loop over validated messages does",
}
"""The rows measured as the raw loop followed by another loop (for information): their ratio
is to raw, so they show that loop's cost among the SDK's work."""

_QUESTION = "What's the weather in Paris?"


async def _raw_then_agent_loop(loops: Any, agent: Agent) -> None:
    """The raw loop, then `agent` (on a model that answers at once): what the agent loop
    costs among the SDK's work, without any adapter."""
    await loops.raw(False, False)
    result = await agent.run(_QUESTION)
    if len(result.messages) != 4:
        raise RuntimeError("the agent loop did not make one tool call")


async def _raw_then_minimal_loop(loops: Any, agent: Agent) -> None:
    """The raw loop, then `minimal_loop` on the agent's model and tool."""
    await loops.raw(False, False)
    await minimal_loop(agent.model, agent.tools["get_weather"], _QUESTION)


async def run(args: argparse.Namespace, base_url: str) -> int:
    modules, skipped = discover(args.only)
    print(
        f"client CPU per 2-turn thinking + tool loop (medians of {args.rounds} rounds "
        f"of {args.iterations} loops each)"
    )
    print(f"{'provider':<12} {'mode':<16} {'raw':>10} {'thinkagent':>12} {'ratio':>7}")
    over: list[str] = []
    worst = 0.0
    failed: list[str] = []
    for module in modules:
        try:
            loops = await module.setup(base_url)
        except Exception as exc:  # one provider's loops failing must not hide the others
            failed.append(f"{module.NAME}: setup failed: {exc!r}")
            continue
        try:
            for streamed in (False, True):
                for tool in ("async", "sync"):
                    figures = await measure(
                        loops, streamed, tool == "sync", args.iterations, args.rounds
                    )
                    raw, ratio = figures["raw"]
                    agent = figures["thinkagent"][0]
                    worst = max(worst, ratio)
                    mode = f"{'streamed' if streamed else 'json'} {tool}"
                    if ratio > TARGETS[tool]:
                        over.append(f"{module.NAME} {mode}")
                    print(
                        f"{module.NAME:<12} {mode:<16} {raw * 1e3:>8.2f}ms "
                        f"{agent * 1e3:>10.2f}ms {ratio:>6.2f}x",
                        flush=True,
                    )
                    for name, label in SHARES.items():
                        if name in figures:
                            print(
                                f"{'':<12} {'':<16} {'':>10} {'':>12} {figures[name][1]:>6.2f}x  "
                                f"({label}; for information)",
                                flush=True,
                            )
                    if "reference" in figures:
                        reference, reference_ratio = figures["reference"]
                        label = getattr(module, "REFERENCE", "reference")
                        print(
                            f"{'':<12} {'':<16} {reference * 1e3:>8.2f}ms {'':>12} "
                            f"{reference_ratio:>6.2f}x  (raw = {label}; for information)",
                            flush=True,
                        )
        except Exception as exc:
            failed.append(f"{module.NAME}: a loop failed: {exc!r}")
        finally:
            await loops.aclose()
    for note in skipped:
        print(f"skipped {note}")
    for note in failed:
        print(f"FAILED {note}")
    targets = ", ".join(f"{limit:.2f}x {tool}" for tool, limit in TARGETS.items())
    verdict = f"over the targets ({targets}): {', '.join(over)}" if over else f"within {targets}"
    print(f"worst ratio {worst:.2f}; {verdict}")
    return 0 if not over and not failed else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10, help="loops per block")
    parser.add_argument("--rounds", type=int, default=40, help="rounds per measurement")
    parser.add_argument("--only", nargs="*", help="provider modules to run (default: all)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)  # the SDKs' model deprecation notices
    process, base_url = start_emulator()
    pin_client()
    try:
        return asyncio.run(run(args, base_url))
    finally:
        stop_emulator(process)


if __name__ == "__main__":
    sys.exit(main())
