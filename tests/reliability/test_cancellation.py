"""A run cancelled at a random point (mid-request, mid-stream, mid async tool, mid sync tool),
on every wire API, by `asyncio.timeout` (Python 3.11+; a task cancel on 3.10): the timeout
raises `TimeoutError`, the task is left as it was, the evidence is reachable and valid, and
once the client is closed no task, thread, file descriptor or warning is left behind."""

from __future__ import annotations

import asyncio
import gc
import os
import random
import sys
import threading
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from thinkagent import Agent, RunCancelled, Tool, validate_history
from thinkagent import tools as tools_module
from thinkagent.emulator import Emulator, Fault

from .wires import EMULATOR_API, QUESTION, WIRES, Wire, get_weather, run, wire_model

POINTS = ("mid-request", "mid-stream", "mid-async-tool", "mid-sync-tool")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0


def our_threads() -> set[threading.Thread]:
    """The live threads, but for the sync tools' pool (its idle threads are kept for reuse:
    a busy one shows in `TOOL_THREADS.abandoned`)."""
    return {
        t for t in threading.enumerate() if not t.name.startswith(("thinkagent-tool", "asyncio_"))
    }


async def settled(threads: set[threading.Thread], fds: int) -> str:
    """Wait (at most 5 s) until nothing is left beyond `threads` and `fds`; what is left."""
    loop = asyncio.get_running_loop()
    current = asyncio.current_task()
    deadline = loop.time() + 5
    while True:
        gc.collect()
        tasks = asyncio.all_tasks() - {current}
        extra = our_threads() - threads
        busy = tools_module.TOOL_THREADS.abandoned
        if not tasks and not extra and not busy and open_fds() <= fds:
            return ""
        if loop.time() > deadline:
            names = [t.name for t in extra]
            return (
                f"tasks {tasks}, threads {names}, busy tool threads {busy}, fds +{open_fds() - fds}"
            )
        await asyncio.sleep(0.05)


async def earlier_garbage_collected() -> None:
    """Collect what earlier tests left to the garbage collector, and let the close tasks their
    SDK clients' finalizers schedule finish, so that only this run's leftovers are measured
    (an earlier loop's transport collected later warns "unclosed transport")."""
    gc.collect()
    for _ in range(5):
        await asyncio.sleep(0)


class Cancel:
    """Cancels the current run `delay` seconds after `at()` is called: through
    `asyncio.timeout` on Python 3.11+ (a `TimeoutError`), a task cancel on 3.10."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.reached = False
        self._loop = asyncio.get_running_loop()
        self._at: Callable[[float], object] = lambda when: None

    def at(self) -> None:
        """The point is reached (callable from any thread)."""
        if not self.reached:
            self.reached = True
            self._loop.call_soon_threadsafe(self._arm)

    def _arm(self) -> None:
        self._at(self._loop.time() + self.delay)

    async def around(self, work: Callable[[], Awaitable[Any]]) -> BaseException:
        """Run `work()` until the cancel; the error that came out of it."""
        if sys.version_info >= (3, 11):
            try:
                async with asyncio.timeout(None) as timeout:  # pyright: ignore[reportAttributeAccessIssue]
                    self._at = timeout.reschedule
                    await work()
            except TimeoutError as error:
                return error
            raise AssertionError("the run ended before its timeout")
        task = asyncio.ensure_future(work())
        self._at = lambda when: self._loop.call_at(when, task.cancel)
        try:
            await task
        except asyncio.CancelledError as error:
            return error
        raise AssertionError("the run ended before it was cancelled")


async def cancel_at_random(emu: Emulator, wire: Wire, point: str, delay: float) -> None:
    """Run the question on `wire`, cancel it `delay` seconds after `point`, check the error and
    the evidence, close the client."""
    release = threading.Event()
    cancel = Cancel(delay)

    async def weather_slowly(city: str) -> str:
        """Current weather for a city."""
        cancel.at()
        await asyncio.sleep(30)
        return "sunny"

    def weather_blocking(city: str) -> str:
        """Current weather for a city."""
        cancel.at()
        release.wait(30)
        return "sunny"

    api = EMULATOR_API[wire]
    tools: list[Any] = [get_weather]
    if point == "mid-request":
        emu.inject(Fault.slow(0.5, api=api))
    elif point == "mid-stream":
        emu.inject(Fault.slow(0.15, api=api))  # the cancel falls before the next event
    else:
        function = weather_blocking if point == "mid-sync-tool" else weather_slowly
        tools = [Tool(function, name="get_weather")]
    async with wire_model(emu, wire) as model:
        agent = Agent(model, tools=tools)

        async def work() -> None:
            if point == "mid-request":
                cancel.at()
            if point != "mid-stream":
                await run(agent, QUESTION, streamed=False)
                return
            async with agent.run_stream(QUESTION) as stream:
                async for _ in stream:
                    cancel.at()

        try:
            error = await cancel.around(work)
        finally:
            release.set()
    assert cancel.reached
    if sys.version_info >= (3, 11):
        task = asyncio.current_task()
        assert task is not None and task.cancelling() == 0  # pyright: ignore[reportAttributeAccessIssue]
        assert isinstance(error, TimeoutError)
    evidence = RunCancelled.find(error)
    assert evidence is not None
    validate_history(evidence.messages)
    assert evidence.messages[0].text == QUESTION
    if point.endswith("tool"):
        assert evidence.messages[-1].tool_calls  # the turn that asked for the tool


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("wire", WIRES)
async def test_a_run_cancelled_at_a_random_point_leaves_nothing_behind(
    emu: Emulator, wire: Wire, point: str
) -> None:
    delay = random.Random(f"{wire}/{point}").uniform(0.0, 0.1)
    await earlier_garbage_collected()
    threads, fds = our_threads(), open_fds()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await cancel_at_random(emu, wire, point, delay)
        left = await settled(threads, fds)
    assert left == "", f"cancelled {delay:.3f} s after the point: {left}"
    assert [str(w.message) for w in caught] == []
