"""Tools that start while the model still streams (opt-in per tool and per agent), results in
call order in one user turn, started calls cancelled with a failed or cancelled stream; and
sync tools run inline, without the hop to a thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

import pytest

from thinkagent import (
    Agent,
    Message,
    ModelRequest,
    ModelResponse,
    PartEnd,
    StreamInterrupted,
    TextPart,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolError,
    ToolResultEvent,
    UsageLimitExceeded,
    UsageLimits,
)
from thinkagent.providers.base import ModelStreamEvent
from thinkagent.stream import MessageAssembler
from thinkagent.testing import ScriptedModel, deltas_for

CALLS = Message(
    role="assistant",
    parts=(
        ThinkingBlock.signed("Two lookups.", "sig-early"),
        ToolCall(id="c1", name="slow", arguments={"city": "Paris"}),
        ToolCall(id="c2", name="fast", arguments={"city": "Rome"}),
    ),
)
ANSWER = Message(role="assistant", parts=(TextPart(text="Done."),))


class GatedModel:
    """Streams `CALLS`, then holds the stream open after the first call's `PartEnd` until
    `release` is set (or `fail` raises instead): what happens meanwhile is early."""

    model_name = "gated"
    scope = "gated"

    def __init__(self, *, fail: bool = False) -> None:
        self.release = asyncio.Event()
        self.fail = fail
        self.requests = 0

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.requests += 1
        return ModelResponse(CALLS if self.requests == 1 else ANSWER)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        self.requests += 1
        message = CALLS if self.requests == 1 else ANSWER
        message = message.model_copy(update={"scope": self.scope, "model": self.model_name})
        assembler = MessageAssembler()
        gated = self.requests > 1
        for delta in deltas_for(message):
            if delta.index == 2 and not gated:
                gated = True
                end = assembler.finish_part(1)
                assert end is not None
                yield end  # the first call's arguments are complete
                await asyncio.wait_for(self.release.wait(), timeout=5)
                if self.fail:
                    partial = assembler.partial(scope=self.scope, model=self.model_name)
                    raise StreamInterrupted("cut", scope=self.scope, partial=partial)
            assembler.add(delta)
            yield delta
        yield ModelResponse(assembler.message(scope=self.scope, model=self.model_name))


async def drain(agent: Agent[None, str], prompt: str = "Go") -> list[object]:
    events: list[object] = []
    async with agent.run_stream(prompt) as stream:
        async for event in stream:
            events.append(event)
    return events


async def test_a_call_starts_when_its_arguments_end_and_results_keep_call_order() -> None:
    model = GatedModel()
    order: list[str] = []

    async def slow(city: str) -> str:
        order.append("slow started")
        model.release.set()  # the model's stream is still open: it waits for this
        await asyncio.sleep(0.05)
        order.append("slow done")
        return f"slow {city}"

    async def fast(city: str) -> str:
        order.append("fast started")
        return f"fast {city}"

    agent = Agent(model, tools=[Tool(slow, early_start=True), fast])
    events = await drain(agent)
    assert order == ["slow started", "fast started", "slow done"]
    results = [e.result for e in events if isinstance(e, ToolResultEvent)]
    assert [r.call_id for r in results] == ["c1", "c2"]  # call order, not finishing order
    [turn] = [m for m in agent_messages(events) if m.role == "user" and m.tool_results]
    assert [r.content for r in turn.tool_results] == ["slow Paris", "fast Rome"]


def agent_messages(events: list[object]) -> list[Message]:
    return [e.message for e in events if isinstance(e, ModelResponse)] + [
        Message(
            role="user", parts=tuple(e.result for e in events if isinstance(e, ToolResultEvent))
        )
    ]


async def test_the_agent_switch_starts_every_tool_early_unless_one_opts_out() -> None:
    started: list[str] = []
    model = GatedModel()

    async def slow(city: str) -> str:
        started.append("slow")
        model.release.set()
        return "s"

    async def fast(city: str) -> str:
        started.append("fast")
        return "f"

    await drain(Agent(model, tools=[slow, fast], early_tool_start=True))
    assert started == ["slow", "fast"]

    # opted out: the stream waits for a tool that only starts after it (here: never)
    held = GatedModel()
    agent = Agent(held, tools=[Tool(slow, early_start=False), fast], early_tool_start=True)
    with pytest.raises(asyncio.TimeoutError):
        await drain(agent)


async def test_tools_awaiting_approval_and_non_streamed_runs_never_start_early() -> None:
    async def slow(city: str) -> str:
        raise AssertionError("must not run before approval")

    agent = Agent(
        GatedModel(),
        tools=[
            Tool(slow, early_start=True, requires_approval=True),
            Tool(lambda city: "f", name="fast"),
        ],
    )
    with pytest.raises(asyncio.TimeoutError):  # nothing released the stream: slow never started
        await drain(agent)

    ran: list[str] = []

    async def tracked(city: str) -> str:
        ran.append(city)
        return "ok"

    model = GatedModel()
    model.release.set()
    result = await Agent(
        model, tools=[Tool(tracked, name="slow", early_start=True), Tool(tracked, name="fast")]
    ).run("Go")
    assert ran == ["Paris", "Rome"] and result.output == "Done."


@pytest.mark.parametrize("how", ["stream fails", "run cancelled"])
async def test_a_failed_or_cancelled_stream_cancels_the_calls_it_started(how: str) -> None:
    model = GatedModel(fail=how == "stream fails")
    cancelled = asyncio.Event()

    async def slow(city: str) -> str:
        model.release.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    agent = Agent(model, tools=[Tool(slow, early_start=True), Tool(lambda city: "f", name="fast")])
    if how == "stream fails":
        with pytest.raises(StreamInterrupted) as caught:
            await drain(agent)
        assert caught.value.messages == [Message.user("Go")]  # nothing half-done is kept
    else:
        task = asyncio.ensure_future(drain(agent))
        await asyncio.wait_for(model.release.wait(), timeout=5)
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert cancelled.is_set()
    assert {t.get_name() for t in asyncio.all_tasks()} == {asyncio.current_task().get_name()}  # type: ignore[union-attr]


async def test_a_tool_call_limit_is_kept_with_early_start() -> None:
    model = GatedModel()
    ran: list[str] = []

    async def slow(city: str) -> str:
        ran.append("slow")
        model.release.set()
        return "s"

    agent = Agent(
        model,
        tools=[slow, Tool(lambda city: "f", name="fast")],
        early_tool_start=True,
        usage_limits=UsageLimits(tool_calls=1),
    )
    with pytest.raises(UsageLimitExceeded, match="tool_calls limit of 1"):
        await drain(agent)
    assert ran == ["slow"]  # the one the limit allowed; the step then stopped


async def test_scripted_streams_end_each_part_after_its_last_delta() -> None:
    model = ScriptedModel([CALLS, ANSWER], chunk_size=4)
    events = await drain(
        Agent(
            model,
            tools=[Tool(lambda city: city, name="slow"), Tool(lambda city: city, name="fast")],
        )
    )
    first_step = events[: next(i for i, e in enumerate(events) if isinstance(e, ModelResponse)) + 1]
    ends = [e for e in first_step if isinstance(e, PartEnd)]
    assert [(e.index, e.part) for e in ends] == [
        (0, CALLS.parts[0]),
        (1, CALLS.parts[1]),
        (2, CALLS.parts[2]),
    ]
    for end in ends:  # nothing of a part after its end
        later = first_step[first_step.index(end) + 1 :]
        assert not [
            e
            for e in later
            if getattr(e, "index", None) == end.index and not isinstance(e, PartEnd)
        ]


async def test_an_inline_tool_runs_on_the_event_loop_and_a_plain_one_on_a_tool_thread() -> None:
    threads: dict[str, str] = {}

    def inline(city: str) -> str:
        threads["inline"] = threading.current_thread().name
        return city

    def threaded(city: str) -> str:
        threads["threaded"] = threading.current_thread().name
        return city

    calls = Message(
        role="assistant",
        parts=(
            ToolCall(id="a", name="inline", arguments={"city": "x"}),
            ToolCall(id="b", name="threaded", arguments={"city": "y"}),
        ),
    )
    agent = Agent(ScriptedModel([calls, ANSWER]), tools=[Tool(inline, inline=True), threaded])
    assert (await agent.run("Go")).output == "Done."
    assert threads["inline"] == threading.current_thread().name
    assert threads["threaded"].startswith("thinkagent-tool")


def test_inline_takes_plain_functions_without_a_timeout() -> None:
    async def asynchronous(city: str) -> str:
        return city

    def plain(city: str) -> str:
        return city

    with pytest.raises(ToolError, match="cannot take an async function"):
        Tool(asynchronous, inline=True)
    with pytest.raises(ToolError, match="cannot take a timeout"):
        Tool(plain, inline=True, timeout=1)
    assert Tool(plain, inline=True).inline
